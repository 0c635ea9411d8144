"""Batch schemes that are no composition of independently sampled steps (issue 14): shuffled batches,
truncated Poisson batches, balls-in-bins batches. Each is one module of this package that knows its own
neighbouring relation and bounds and declares them here as a `BatchScheme`; gdpcli.accounting.dpsgd
looks a run's scheme up in its SCHEMES and asks it, with no other branch on the scheme's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gdpcli.events import Neighbouring

if TYPE_CHECKING:
    from gdpcli.accounting.dpsgd import Run
    from gdpcli.accounting.figures import Accountant, Figures


@dataclass(frozen=True)
class BatchScheme:
    """What dpsgd needs of a batch scheme.

    relation: the neighbouring relation its figures refer to.
    epochs_of_batches: an epoch is b = ceil(N / B) steps (each example used once an epoch: shuffling,
        balls-in-bins), not 1 / q steps in expectation.
    figures(run, delta, accuracy): epsilon at delta, every figure labelled (rigorous upper and lower bounds
        and comparisons).
    budget_figure(run, delta, accuracy): the rigorous upper bound a budget or calibration rests on.
    accountant(run, accuracy): the run's pairs as a PLD accountant (accountants.PairsPLD: a dominating pair
        for the pessimistic figures, a dominated one for the optimistic), for every question (risk, audit).
    requires: Run fields the scheme needs besides the rate (e.g. max_batch_size), each with the option that
        sets it; check_run says which is missing.
    """

    name: str
    relation: Neighbouring
    epochs_of_batches: bool
    figures: Callable[[Run, float, float], list[Figures]]
    budget_figure: Callable[[Run, float, float], Figures]
    accountant: Callable[[Run, float], Accountant]
    requires: tuple[tuple[str, str], ...] = ()
