"""The bounds of a batch scheme whose runs are no composition of independently sampled steps: shuffled
batches, balls-in-bins batches, truncated Poisson batches. Each is one module of this package that declares
its bounds here as `SchemeBounds`; gdpcli.accounting.dpsgd collects them (dpsgd.BOUNDS) and asks a run's
scheme for them, with no other branch on the scheme. What the scheme is (its word, neighbouring relation,
epochs) is its `events.Sampling` entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gdpcli.accounting.figures import Accountant, Figures
    from gdpcli.events import Run, Sampling


@dataclass(frozen=True)
class SchemeBounds:
    """What dpsgd needs of a batch scheme.

    sampling: the scheme (its events.Sampling member).
    figures(run, delta, accuracy): epsilon at delta, every figure labelled (rigorous upper and lower bounds
        and comparisons).
    budget_figure(run, delta, accuracy): the rigorous upper bound a budget or calibration rests on.
    accountant(run, accuracy): the run's pairs as a PLD accountant (accountants.PairsPLD: a dominating pair
        for the pessimistic figures, a dominated one for the optimistic), for every question (risk, audit).
    """

    sampling: Sampling
    figures: Callable[[Run, float, float], list[Figures]]
    budget_figure: Callable[[Run, float, float], Figures]
    accountant: Callable[[Run, float], Accountant]
