"""The one vocabulary of guarantees (README, Conventions): every privacy figure carries one of them.

Pure Python (no numpy), importable from every layer.

A figure is *rigorous* when its label is exact, upper_bound or lower_bound: the true value equals it, is no
larger, or is no smaller, as a proven fact, up to floating-point rounding that the code takes to the safe
side and checks (gdpcli.core.rounding). An `approximation` has no such direction.

A budget check (--max-epsilon, --max-delta, --max-mu, --target-epsilon, calibrate's round trips) may only
rely on a figure that bounds the privacy loss from above: `certifies_at_most` (exact or upper_bound).

The label of a figure is never chosen by hand: it is `bound(quantity, side)`, from what the figure measures
and the side of the privacy loss its computation errs on (`Side`). A pessimistic computation (an upper
bound on the privacy profile, such as a pessimistic PLD or an RDP conversion) gives an upper bound on every
quantity that grows with the privacy loss (epsilon, delta, mu, an attack's TPR ...) and a lower bound on
every quantity that shrinks with it (beta, the equal-error rate). Transforming a figure into another
quantity (beta into TPR = 1 - beta) keeps its side, so its label follows without a second decision.
"""

from __future__ import annotations

from enum import Enum
from typing import TypeVar

T = TypeVar("T")


class _Word(str, Enum):
    """A word of the output vocabulary: printed as its value."""

    def __str__(self) -> str:
        return self.value


class Guarantee(_Word):
    """How a figure relates to the true value. Its value is the label printed in every output format."""

    EXACT = "exact"
    UPPER_BOUND = "upper_bound"
    LOWER_BOUND = "lower_bound"
    APPROXIMATION = "approximation"

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


class Side(_Word):
    """The side of the true privacy loss on which a computation errs."""

    EXACT = "exact"
    """No error beyond floating-point rounding (taken to the safe side)."""
    PESSIMISTIC = "pessimistic"
    """Never understates the privacy loss: the mechanism is at least as private as the figure says."""
    OPTIMISTIC = "optimistic"
    """Never overstates the privacy loss: the mechanism is at most as private as the figure says."""
    APPROXIMATE = "approximate"
    """No proven direction (the CLT, Edgeworth expansions, quadratures without an error bound)."""


GROWS_WITH_LOSS: frozenset[str] = frozenset(
    (
        "epsilon",  # at a delta
        "delta",  # at an epsilon
        "mu",  # GDP
        "rho",  # zCDP
        "rdp",  # a Renyi divergence at an order
        "kl",
        "tv",
        "hellinger",
        "chi2",
        "tpr",  # an attack's true-positive rate at a false-positive rate
        "advantage",  # max TPR - FPR
        "bayes_success",  # the best attack's success rate at a prior
    )
)
"""Quantities that a less private mechanism makes larger."""

SHRINKS_WITH_LOSS: frozenset[str] = frozenset(
    (
        "beta",  # the trade-off function at an alpha: the least type II error
        "equal_error",  # alpha* = f(alpha*), the best attack's equal error rate
    )
)
"""Quantities that a less private mechanism makes smaller."""


def bound(quantity: str, side: Side) -> Guarantee:
    """The label of a figure of `quantity` computed on `side`: the one place that decides a direction.

    KeyError for a quantity that is in neither list (each quantity must say how it moves with the loss).
    """
    if side is Side.EXACT:
        return Guarantee.EXACT
    if side is Side.APPROXIMATE:
        return Guarantee.APPROXIMATION
    if quantity in GROWS_WITH_LOSS:
        grows = True
    elif quantity in SHRINKS_WITH_LOSS:
        grows = False
    else:
        raise KeyError(f"{quantity!r} has no direction: add it to GROWS_WITH_LOSS or SHRINKS_WITH_LOSS")
    return Guarantee.UPPER_BOUND if grows is (side is Side.PESSIMISTIC) else Guarantee.LOWER_BOUND


def by_side(quantity: str, upper: T, lower: T) -> tuple[T, T]:
    """(pessimistic, optimistic): the two bounds [lower, upper] on `quantity` in the order of their sides."""
    return (upper, lower) if bound(quantity, Side.PESSIMISTIC) is Guarantee.UPPER_BOUND else (lower, upper)


LABELS: tuple[str, ...] = tuple(g.value for g in Guarantee)

__all__ = ["GROWS_WITH_LOSS", "LABELS", "SHRINKS_WITH_LOSS", "Guarantee", "Side", "bound", "by_side"]
