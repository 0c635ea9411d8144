"""The Python API on events: the same labelled answers as the command line, for a training script.

    >>> from gdpcli import account, events
    >>> run = events.dpsgd(noise_multiplier=1.1, sampling_rate=256 / 60000, steps=14063)
    >>> [(round(f.value, 3), str(f.guarantee)) for f in account.epsilon(run, delta=1e-5)]
    [(2.382, 'upper_bound'), (2.381, 'lower_bound')]
    >>> round(account.certified_epsilon(run, delta=1e-5), 3)  # what a budget check relies on
    2.382

An event is what `events` builds (a mechanism, `events.Sampled`, `events.Repeated`, `events.dpsgd` under
any batch scheme and for groups of records, `account.schedule` from a schedule file) or what
`events.parse` reads from the spec language; a list of events is their composition. A DP-SGD run whose
batch scheme draws the batches of the whole run together (shuffle, balls-in-bins, truncated-poisson) is
accounted by its scheme's bounds, alone. `method` is the command line's `--method` (auto: exact where a
closed form exists, else the rigorous PLD bounds; pld, clt, berry-esseen, rdp, all), and every figure
says what it guarantees and at which query (`at`: the delta, epsilon or alpha asked; a list asks each).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gdpcli import accounting
from gdpcli.defaults import DEFAULT_ACCURACY
from gdpcli.errors import ComputationError
from gdpcli.events import Repeated, Run, Step
from gdpcli.guarantees import Guarantee

Event = Repeated | Step | Run
Events = Event | Sequence[Event]
Queries = float | Sequence[float]


@dataclass(frozen=True)
class Figure:
    """One privacy figure: its value, what it guarantees, the method that produced it and the query it
    answers (the delta of an epsilon, the epsilon of a delta, the alpha of a beta; None for mu)."""

    value: float
    guarantee: Guarantee
    method: str
    at: float | None = None


def epsilon(
    events: Events, delta: Queries, method: str = "auto", accuracy: float = DEFAULT_ACCURACY
) -> list[Figure]:
    """epsilon at delta (or at each of a list of deltas) of the composition, one figure per method, bound
    and delta."""
    return _figures(events, method, accuracy, "delta", delta)


def delta(
    events: Events, epsilon: Queries, method: str = "auto", accuracy: float = DEFAULT_ACCURACY
) -> list[Figure]:
    """delta at epsilon (or at each of a list) of the composition: its privacy profile."""
    return _figures(events, method, accuracy, "epsilon", epsilon)


def beta(
    events: Events, alpha: Queries, method: str = "auto", accuracy: float = DEFAULT_ACCURACY
) -> list[Figure]:
    """beta = f(alpha), the composition's trade-off function at a type I error alpha (or at each)."""
    return _figures(events, method, accuracy, "alpha", alpha)


def mu(events: Events, method: str = "auto") -> list[Figure]:
    """mu when the composition is exactly GDP (or the CLT's approximate mu with method="clt")."""
    figures = accounting.mu_figures(_composition(events), method)
    return [Figure(float(np.ravel(f.values)[0]), f.guarantee, f.method) for f in figures]


def certified_epsilon(
    events: Events, delta: float, method: str = "auto", accuracy: float = DEFAULT_ACCURACY
) -> float:
    """The smallest rigorous upper bound on epsilon at delta (exact or upper_bound), what a budget check
    uses; ComputationError when the method gives none (approximations and lower bounds never count)."""
    certified = [f.value for f in epsilon(events, delta, method, accuracy) if f.guarantee.certifies_at_most]
    if not certified:
        raise ComputationError(f"method {method} gives no rigorous upper bound on epsilon", "use auto or pld")
    return min(certified)


def largest_steps(
    run: Run, target_epsilon: float, delta: float, method: str = "auto", accuracy: float = DEFAULT_ACCURACY
) -> int:
    """The most steps of a DP-SGD run (an `events.Run`; its own step count is ignored) whose certified
    epsilon at delta stays within target_epsilon: `gdpcli sgd --target-epsilon`'s budget (0 when not even
    one step fits)."""
    from gdpcli.accounting import dpsgd

    return dpsgd.largest_steps(run, delta, target_epsilon, dpsgd.Method(method, accuracy)).steps


def attack_risk(
    events: Events, measure: str = "advantage", fpr: float | None = None, accuracy: float = DEFAULT_ACCURACY
) -> float:
    """The certified (smallest rigorous upper bound) risk of a membership-inference attack, as `gdpcli
    risk` reports it: measure "tpr" (its true-positive rate at false-positive rate `fpr`) or "advantage"
    (the most TPR - FPR of any attack)."""
    from gdpcli.accounting import risk

    subject = events if isinstance(events, Run) and not events.sampling.per_step else _composition(events)
    return risk.certified(subject, measure, fpr, accuracy).value


def schedule(text: str, dataset_size: int | None = None) -> list[Run]:
    """The phases of a schedule in any form `gdpcli sgd --schedule` reads (its text: CSV, JSON phases, an
    Opacus accountant history or dp_accounting events), each a DP-SGD run; their list is the composition."""
    from gdpcli.accounting import schedules

    return list(schedules.read(text, dataset_size))


def _composition(events: Events) -> list[Repeated]:
    """The events as the accounting layer composes them: a list of repeated steps (a run of sampled steps
    is its steps' composition); ComputationError for a run that is no such composition inside a list."""
    items = events if isinstance(events, Sequence) else [events]
    composed = []
    for item in items:
        if isinstance(item, Run):
            composed.append(item.spec())  # refuses a scheme that is no composition of sampled steps
        else:
            composed.append(item if isinstance(item, Repeated) else Repeated(item))
    return composed


def _figures(events: Events, method: str, accuracy: float, given: str, queries: Queries) -> list[Figure]:
    values = [float(q) for q in np.atleast_1d(np.asarray(queries, dtype=float))]
    if isinstance(events, Run) and not events.sampling.per_step:
        return _scheme_figures(events, method, accuracy, given, values)
    accountants, _ = accounting.select(_composition(events), method, accuracy=accuracy)
    answers = [a for accountant in accountants for a in accounting.ask(accountant, **{f"{given}s": values})]
    return [_figure(a.figure, index, q) for a in answers for index, q in enumerate(a.queries)]


def _scheme_figures(run: Run, method: str, accuracy: float, given: str, queries: list[float]) -> list[Figure]:
    """A run under a batch scheme that is no composition of sampled steps: epsilon as `gdpcli sgd` gives
    it (the scheme's bounds and comparisons), delta and beta from the scheme's pairs as `gdpcli risk` has
    them."""
    from gdpcli.accounting import planning, risk

    if given == "delta":
        planned = planning.answering(planning.plan(run, method, accuracy=accuracy))
        found = [
            (f, q) for q in queries for accountant in planned for f in accountant.epsilon(np.asarray([q]))
        ]
        return [_figure(figure, 0, q) for figure, q in found]
    accountants, _ = risk.accountants_for(run, method, accuracy)
    answers = [a for accountant in accountants for a in accounting.ask(accountant, **{f"{given}s": queries})]
    return [_figure(a.figure, index, q) for a in answers for index, q in enumerate(a.queries)]


def _figure(figure: accounting.Figures, index: int, query: float) -> Figure:
    return Figure(float(np.ravel(figure.values)[index]), figure.guarantee, figure.method, float(query))
