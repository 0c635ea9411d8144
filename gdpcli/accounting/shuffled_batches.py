"""DP-SGD with shuffled batches: each epoch a uniformly random permutation of the data cut into b batches
(the last one possibly smaller), replace-one neighbours. No tight accountant is known; gdpcli
prints the interval that is known to contain the truth, and what Poisson accounting would have claimed.

Units: s = step sensitivity / sigma in noise units; replace-one neighbours with clipping norm C give
s = 2C / sigma (a smaller --sensitivity stands for a smaller clipping norm, C = sensitivity / 2).

- Upper bound (rigorous, no amplification): both datasets share the permutation, so the differing example
  lands in exactly one batch per epoch. Given the past, that step is a Gaussian mechanism of sensitivity
  s and every other step is the same function of the same data; by adaptive composition (GDP paper
  Cor. 2) E epochs are (sqrt(E) s)-GDP, E the epochs the run touches (a partial last epoch counts whole).
- Lower bound (rigorous): Chua et al., "How Private are DP-SGD Implementations?" (ICML 2024) and
  "Scalable DP-SGD: Shuffling vs. Poisson Subsampling" (NeurIPS 2024). Every other example has gradient
  -C; the differing one +C against -C (the batch holding it is shifted by s against 0, relative to the
  others) or +C against 0 (shifted by s against s / 2: the pair of the authors' code, valid for zero-out
  neighbours too). An observer of each epoch's largest batch sum, M = max_j X_j, tells the datasets
  apart as well as the pair of gdpcli.core.shuffle.max_test_pair(s, b, low); M is a post-processing of
  the run, so the E_full-fold composition of that pair (complete epochs only: dropping the rest is
  post-processing too) is dominated by the run, and the PLD accountant's rigorous lower bound on its
  epsilon is one on the run's. The lower bound is the larger of the two pairs'.
- As if Poisson: the PLD upper bound of Poisson sampling at rate q = B / N with the same steps and noise
  under add/remove neighbours with sensitivity C, what Opacus, TF Privacy and dp_accounting report for
  shuffled training in practice. It is not a guarantee for shuffled batches (labelled approximation).
  Poisson accounting under zero-out neighbours is the same as under add/remove (dp_accounting's
  REPLACE_SPECIAL), so it is compared with the lower bound of the +C against 0 pair, a zero-out pair:
  where it lies below, it understates the privacy loss of this run under its own relation, and a note
  says so (the row's zero_out_lower_bound column holds that lower bound).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from gdpcli.accounting.figures import APPROXIMATE, OPTIMISTIC, PESSIMISTIC, Figures
from gdpcli.accounting.schemes import SchemeBounds
from gdpcli.errors import ComputationError
from gdpcli.events import Sampling, batches_per_epoch

if TYPE_CHECKING:
    from gdpcli.accounting.figures import Accountant
    from gdpcli.events import Run

UPPER_METHOD = "shuffle-gdp"
"""The upper bound's method: GDP composition over the epochs the run touches, without amplification."""
LOWER_METHOD = "shuffle-max-test"
"""The lower bound's method: the PLD of Chua et al.'s max-of-batch-sums pair over the complete epochs."""
POISSON_METHOD = "as-if-poisson"
"""What a Poisson accountant would claim for the same rate, steps, noise and sensitivity."""


def epochs_touched(run: Run) -> int:
    """Epochs in which the differing example can be used: ceil(T / b)."""
    return -(-run.steps // batches_per_epoch(run.sampling_rate))


def complete_epochs(run: Run) -> int:
    """Epochs the run completes: floor(T / b)."""
    return run.steps // batches_per_epoch(run.sampling_rate)


def upper_mu(run: Run) -> float:
    """sqrt(E) s / sigma: the run is this mu-GDP (E epochs touched; GDP paper Thm 1 and Cor. 2)."""
    return math.sqrt(epochs_touched(run)) * run.step_mu


def figures(run: Run, delta: float, accuracy: float) -> list[Figures]:
    """epsilon at delta of the shuffled run: the rigorous upper bound, the rigorous lower bound and, for
    comparison, what Poisson accounting would claim (see the module docstring). A lower bound or comparison
    the PLD cannot compute (epsilon beyond its range) is left out with a note on the upper bound."""
    deltas = np.asarray([delta])
    found, missing = [upper(run, deltas)], []
    for name, compute in ((LOWER_METHOD, _lower), (POISSON_METHOD, as_poisson)):
        try:
            found.append(compute(run, deltas, accuracy))
        except ComputationError as error:
            missing.append(f"{name} left out: {error.message}")
    if len(found) == 3:
        found[2] = _compared(found[1], found[2], delta)
    if missing:
        found[0] = dataclasses.replace(found[0], note="; ".join(missing))
    return found


def _compared(lower: Figures, poisson: Figures, delta: float) -> Figures:
    """The Poisson figure with the zero-out lower bound beside it, and a note where it lies below it."""
    assert lower.details is not None  # _lower's
    known = lower.details[0]["zero_out_lower_bound"]
    claimed = float(poisson.values[0])
    note = None
    if claimed < known:
        note = (
            f"Poisson accounting (add/remove, sensitivity C) would claim epsilon {claimed:.4g} at delta "
            f"{delta:g}, while this shuffled run has epsilon >= {known:.4g} even under zero-out neighbours, "
            "the relation under which that Poisson figure holds: for this run it understates the privacy loss"
        )
    return dataclasses.replace(poisson, details=({"zero_out_lower_bound": known},), note=note)


def budget_figure(run: Run, delta: float, accuracy: float) -> Figures:
    """The figure budgets rest on: the rigorous upper bound (accuracy plays no part in it)."""
    return upper(run, np.asarray([delta]))


def upper(run: Run, deltas: np.ndarray) -> Figures:
    """The rigorous upper bound: epsilon of upper_mu(run)-GDP at each delta."""
    from gdpcli.accounting.accountants import ExactGDP

    mu = upper_mu(run)
    [exact] = ExactGDP(mu).epsilon(deltas)
    details = ({"mu": mu, "epochs_counted": epochs_touched(run)},)
    return dataclasses.replace(exact, side=PESSIMISTIC, method=UPPER_METHOD, details=details)


def _lower(run: Run, deltas: np.ndarray, accuracy: float) -> Figures:
    """The larger of the max test's PLD lower bounds for the +C against -C and the +C against 0 pairs
    (module docstring), with the latter, a zero-out lower bound, as a detail."""
    from gdpcli.core import pld, shuffle

    epochs = complete_epochs(run)
    if epochs == 0:
        details = {"epochs_counted": 0, "zero_out_lower_bound": 0.0}
        return Figures(np.zeros(1), OPTIMISTIC, LOWER_METHOD, "epsilon", details=(details,))
    s, b = run.step_mu, batches_per_epoch(run.sampling_rate)
    replaced, zeroed = (
        float(np.atleast_1d(pld.epsilon_bounds([(pair, epochs)], deltas, accuracy=accuracy).lower)[0])
        for pair in (shuffle.max_test_pair(s, b), shuffle.max_test_pair(s, b, low=s / 2))
    )
    pair = "+C vs -C" if replaced >= zeroed else "+C vs 0"
    details = {"epochs_counted": epochs, "pair": pair, "zero_out_lower_bound": zeroed}
    return Figures(
        np.asarray([max(replaced, zeroed)]), OPTIMISTIC, LOWER_METHOD, "epsilon", details=(details,)
    )


def as_poisson(run: Run, deltas: np.ndarray, accuracy: float) -> Figures:
    """What Poisson accounting reports for the same rate, steps and noise: add/remove neighbours with
    sensitivity the clipping norm C (the run's step sensitivity over its relation's, 2 for replace-one)."""
    from gdpcli.accounting.accountants import NumericalPLD

    clip = run.step_sensitivity / run.relation.sensitivity
    poisson = dataclasses.replace(run, sampling=Sampling.POISSON, sensitivity=clip)
    upper = NumericalPLD([poisson.spec()], accuracy).epsilon(deltas)[0]
    return dataclasses.replace(upper, side=APPROXIMATE, method=POISSON_METHOD)


def accountant(run: Run, accuracy: float) -> Accountant:
    """The run for every question: (sqrt(E) s)-GDP as its dominating pair, and the +C against -C max-test
    pair over the complete epochs as the pair it dominates (none before a complete epoch)."""
    from gdpcli.accounting.accountants import PairsPLD
    from gdpcli.core import shuffle
    from gdpcli.events import GDP

    upper = [(GDP(upper_mu(run)).dominating_pair(), 1)]
    epochs = complete_epochs(run)
    pair = shuffle.max_test_pair(run.step_mu, batches_per_epoch(run.sampling_rate))
    return PairsPLD(upper, [(pair, epochs)] if epochs else None, accuracy, (UPPER_METHOD, LOWER_METHOD))


BOUNDS = SchemeBounds(Sampling.SHUFFLE, figures, budget_figure, accountant)
