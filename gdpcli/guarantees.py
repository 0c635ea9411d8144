"""The one vocabulary of guarantees (DESIGN.md, principle 1): every privacy figure carries one of them.

Pure Python (no numpy), importable from every layer.

A figure is *rigorous* when its label is exact, upper_bound or lower_bound: the true value equals it, is no
larger, or is no smaller, as a proven fact, up to floating-point rounding that the code takes to the safe
side and checks (gdpcli.core.rounding). An `approximation` has no such direction.

A budget check (--max-epsilon, --max-delta, --max-mu, --target-epsilon, calibrate's round trips) may only
rely on a figure that bounds the privacy loss from above: `certifies_at_most` (exact or upper_bound).
"""

from __future__ import annotations

from enum import Enum


class Guarantee(str, Enum):
    """How a figure relates to the true value. Its value is the label printed in every output format."""

    EXACT = "exact"
    UPPER_BOUND = "upper_bound"
    LOWER_BOUND = "lower_bound"
    APPROXIMATION = "approximation"

    def __str__(self) -> str:
        return self.value

    def __hash__(self) -> int:  # equal to its value as a string, so it must hash like one
        return hash(self.value)

    @property
    def rigorous(self) -> bool:
        """exact, upper_bound or lower_bound: a proven statement about the true value."""
        return self is not Guarantee.APPROXIMATION

    @property
    def certifies_at_most(self) -> bool:
        """exact or upper_bound: the true value is no larger, so a budget check may use it."""
        return self in (Guarantee.EXACT, Guarantee.UPPER_BOUND)

    @property
    def certifies_at_least(self) -> bool:
        """exact or lower_bound: the true value is no smaller."""
        return self in (Guarantee.EXACT, Guarantee.LOWER_BOUND)


LABELS: tuple[str, ...] = tuple(g.value for g in Guarantee)

__all__ = ["LABELS", "Guarantee"]
