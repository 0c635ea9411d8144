"""DP-SGD with truncated Poisson batches: every example joins a step's batch with
probability q = B / N, and a batch of more than B_max examples is cut to a uniformly random B_max of them
(jax_privacy's truncated DP-SGD, dp_accounting's TruncatedSubsampledGaussianDpEvent).

Neighbouring relation: add/remove one example, where the dataset that holds it has N examples (the
training set loses one of its own; dp_accounting's convention). One step's sensitivity is s = 1 (in units
of the clipping norm C) unless set.

- Upper bound (rigorous): the PLD upper bound of the T-fold mixture pair
  (1 - t) Poisson(q, s / sigma) + t Poisson(q', 2 s / sigma) (gdpcli.core.truncated.upper_pair; t the
  chance that the others fill the cap, q' the chance that the example is sampled and kept then). It is the
  pair of arXiv:2508.15089 as dp_accounting 0.6.0 builds it, but with the remove pair (shift 2 s / sigma)
  for the cut branch where dp_accounting takes the looser replace-one pair: below its figure in every
  comparison made (tests/core/test_truncated.py).
- Lower bound (rigorous): the PLD lower bound of T-fold Poisson(q_kept, s / sigma), the exact run on
  datasets where every other gradient is 0 (gdpcli.core.truncated.lower_pair).

With B_max >= N no batch is ever cut and both are the plain Poisson figures.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from gdpcli.accounting.figures import OPTIMISTIC, PESSIMISTIC, Figures
from gdpcli.accounting.schemes import SchemeBounds
from gdpcli.errors import ComputationError
from gdpcli.events import Sampling

if TYPE_CHECKING:
    from gdpcli.accounting.figures import Accountant
    from gdpcli.events import Run

UPPER_METHOD = "truncated-poisson-pld"
"""The upper bound's method: the PLD of the mixture dominating pair."""
LOWER_METHOD = "truncated-poisson-kept-rate"
"""The lower bound's method: the PLD of Poisson sampling at the rate at which an example is kept."""


def figures(run: Run, delta: float, accuracy: float) -> list[Figures]:
    """epsilon at delta of the truncated-Poisson run (run.dataset_size examples, batches cut at
    run.max_batch_size): the rigorous upper bound and the rigorous lower bound (module docstring).
    InputError for a bad dataset size, cap or rate; a lower bound the PLD cannot compute is left out with a
    note on the upper bound."""
    deltas = np.asarray([delta])
    found = [_bound(run, deltas, accuracy, upper=True)]
    try:
        found.append(_bound(run, deltas, accuracy, upper=False))
    except ComputationError as error:
        found[0] = dataclasses.replace(found[0], note=f"{LOWER_METHOD} left out: {error.message}")
    return found


def budget_figure(run: Run, delta: float, accuracy: float) -> Figures:
    """The figure budgets rest on: the rigorous upper bound."""
    return _bound(run, np.asarray([delta]), accuracy, upper=True)


def _bound(run: Run, deltas: np.ndarray, accuracy: float, *, upper: bool) -> Figures:
    """The PLD upper bound of the upper pair, or the PLD lower bound of the lower pair, over the T steps,
    with the cap, t, q' and q_kept as extra columns."""
    from gdpcli.core import pld, truncated

    assert run.dataset_size is not None and run.max_batch_size is not None  # required by the scheme, checked
    cut = truncated.truncation(run.dataset_size, run.sampling_rate, run.max_batch_size)
    pair = (truncated.upper_pair if upper else truncated.lower_pair)(cut, run.step_mu)
    bounds = pld.epsilon_bounds([(pair, run.steps)], deltas, accuracy=accuracy)
    details = (
        {
            "max_batch_size": cut.max_batch_size,
            "truncation_probability": cut.probability,
            "truncated_rate": cut.truncated_rate,
            "kept_rate": cut.kept_rate,
        },
    )
    if upper:
        return Figures(np.atleast_1d(bounds.upper), PESSIMISTIC, UPPER_METHOD, "epsilon", details=details)
    return Figures(np.atleast_1d(bounds.lower), OPTIMISTIC, LOWER_METHOD, "epsilon", details=details)


def accountant(run: Run, accuracy: float) -> Accountant:
    """The run for every question: the mixture pair (its dominating pair) and Poisson sampling at the kept
    rate (the pair it dominates), each over the T steps."""
    from gdpcli.accounting.accountants import PairsPLD
    from gdpcli.core import truncated

    assert run.dataset_size is not None and run.max_batch_size is not None  # required by the scheme, checked
    cut = truncated.truncation(run.dataset_size, run.sampling_rate, run.max_batch_size)
    upper, lower = truncated.upper_pair(cut, run.step_mu), truncated.lower_pair(cut, run.step_mu)
    return PairsPLD([(upper, run.steps)], [(lower, run.steps)], accuracy, (UPPER_METHOD, LOWER_METHOD))


BOUNDS = SchemeBounds(Sampling.TRUNCATED_POISSON, figures, budget_figure, accountant)
