"""The Python API on events: the same labelled answers as the command line, for a training script.

    >>> from gdpcli import account, events
    >>> run = events.dpsgd(noise_multiplier=1.1, sampling_rate=256 / 60000, steps=14063)
    >>> [(round(f.value, 3), str(f.guarantee)) for f in account.epsilon(run, delta=1e-5)]
    [(2.382, 'upper_bound'), (2.381, 'lower_bound')]
    >>> round(account.certified_epsilon(run, delta=1e-5), 3)  # what a budget check relies on
    2.382

An event is what `events` builds (a mechanism, `events.Sampled`, `events.Repeated`, `events.dpsgd`) or
what `events.parse` reads from the spec language; a list of events is their composition. `method` is the
command line's `--method` (auto: exact where a closed form exists, else the rigorous PLD bounds; pld, clt,
berry-esseen, rdp, all), and every figure says what it guarantees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gdpcli import accounting
from gdpcli.defaults import DEFAULT_ACCURACY
from gdpcli.errors import ComputationError
from gdpcli.events import Repeated, Step
from gdpcli.guarantees import Guarantee

Events = Repeated | Step | Sequence[Repeated | Step]


@dataclass(frozen=True)
class Figure:
    """One privacy figure: its value, what it guarantees and the method that produced it."""

    value: float
    guarantee: Guarantee
    method: str


def epsilon(
    events: Events, delta: float, method: str = "auto", accuracy: float = DEFAULT_ACCURACY
) -> list[Figure]:
    """epsilon at delta of the composition, one figure per method and bound."""
    return _figures(events, method, accuracy, "delta", delta)


def delta(
    events: Events, epsilon: float, method: str = "auto", accuracy: float = DEFAULT_ACCURACY
) -> list[Figure]:
    """delta at epsilon of the composition (its privacy profile)."""
    return _figures(events, method, accuracy, "epsilon", epsilon)


def beta(
    events: Events, alpha: float, method: str = "auto", accuracy: float = DEFAULT_ACCURACY
) -> list[Figure]:
    """beta = f(alpha), the composition's trade-off function at a type I error alpha."""
    return _figures(events, method, accuracy, "alpha", alpha)


def mu(events: Events, method: str = "auto") -> list[Figure]:
    """mu when the composition is exactly GDP (or the CLT's approximate mu with method="clt")."""
    figures = accounting.mu_figures(_as_list(events), method)
    return [Figure(float(np.ravel(f.values)[0]), f.guarantee, f.method) for f in figures]


def certified_epsilon(
    events: Events, delta: float, method: str = "auto", accuracy: float = DEFAULT_ACCURACY
) -> float:
    """The smallest rigorous upper bound on epsilon at delta (exact or upper_bound), what a budget check
    uses; ComputationError when the method gives none (approximations and lower bounds never count)."""
    certified = [f.value for f in epsilon(events, delta, method, accuracy) if f.guarantee.certifies_at_most]
    if not certified:
        raise ComputationError(
            f"--method {method} gives no rigorous upper bound on epsilon", "use auto or pld"
        )
    return min(certified)


def _as_list(events: Events) -> list[Repeated]:
    """The events as the accounting layer takes them: a list of repeated steps."""
    items = events if isinstance(events, Sequence) else [events]
    return [item if isinstance(item, Repeated) else Repeated(item) for item in items]


def _figures(events: Events, method: str, accuracy: float, given: str, query: float) -> list[Figure]:
    accountants, _ = accounting.select(_as_list(events), method, accuracy=accuracy)
    queries = {f"{given}s": [query]}
    answers = [a for accountant in accountants for a in accounting.ask(accountant, **queries)]
    return [Figure(float(np.ravel(a.figure.values)[0]), a.figure.guarantee, a.figure.method) for a in answers]
