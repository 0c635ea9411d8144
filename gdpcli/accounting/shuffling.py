"""DP-SGD with shuffled batches: each epoch a uniformly random permutation of the data cut into b batches
(the last one possibly smaller), replace-one neighbours (issue 14). No tight accountant is known; gdpcli
prints the interval that is known to contain the truth, and what Poisson accounting would have claimed.

- Upper bound (rigorous, no amplification): both datasets share the permutation, so the differing example
  lands in exactly one batch per epoch. Given the past, that step is a Gaussian mechanism of sensitivity
  s (2C for replace-one, C for zero-out: `--sensitivity 1`) and every other step is the same function of
  the same data; by adaptive composition (GDP paper Cor. 2) E epochs are (sqrt(E) s / sigma)-GDP, E the
  epochs the run touches (a partial last epoch counts whole).
- Lower bound (rigorous): Chua et al., "How Private are DP-SGD Implementations?" (ICML 2024) and
  "Scalable DP-SGD: Shuffling vs. Poisson Subsampling" (NeurIPS 2024). Every other example has gradient -C
  and the differing one +C (or 0 against +C for zero-out): the batch sums are pure noise but for a shift
  s / sigma (in noise units) in the one step holding the differing example. An observer of each epoch's
  largest batch sum, M = max_j X_j, tells the datasets apart as well as the pair (P, Q) of
  gdpcli.core.shuffle.max_test_pair; M is a post-processing of the run, so the E_full-fold composition of
  that pair (complete epochs only: dropping the rest is post-processing too) is dominated by the run, and
  the PLD accountant's rigorous lower bound on its epsilon is one on the run's.
- As if Poisson: the PLD upper bound of Poisson sampling at rate q = B / N with the same steps, noise
  and sensitivity, what accountants report for shuffled training in practice. It is not a guarantee for
  shuffled batches (labelled approximation); where it lies below the shuffling lower bound it understates
  the privacy loss of this run, and a note says so.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from gdpcli.accounting.figures import APPROXIMATION, LOWER, UPPER, Figures
from gdpcli.accounting.schemes import BatchScheme
from gdpcli.errors import ComputationError
from gdpcli.events import Neighbouring

if TYPE_CHECKING:
    from gdpcli.accounting.dpsgd import Run

UPPER_METHOD = "shuffle-gdp"
"""The upper bound's method: GDP composition over the epochs the run touches, without amplification."""
LOWER_METHOD = "shuffle-max-test"
"""The lower bound's method: the PLD of Chua et al.'s max-of-batch-sums pair over the complete epochs."""
POISSON_METHOD = "as-if-poisson"
"""What a Poisson accountant would claim for the same rate, steps, noise and sensitivity."""


def batches_per_epoch(sampling_rate: float) -> int:
    """b = ceil(N / B) steps per epoch, from q = B / N as the user gave it (0.01 is exactly 1/100)."""
    inverse = 1 / Fraction(repr(float(sampling_rate)))
    nearest = round(inverse)
    return int(nearest) if abs(inverse - nearest) <= Fraction(1, 10**9) else math.ceil(inverse)


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
        lower, poisson = found[1:]
        claimed, known = float(poisson.values[0]), float(lower.values[0])
        if claimed < known:
            note = (
                f"Poisson accounting would claim epsilon {claimed:.4g} at delta {delta:g}, below the "
                f"rigorous lower bound {known:.4g} for shuffled batches: for this run it understates the "
                "privacy loss"
            )
            found[2] = dataclasses.replace(poisson, note=note)
    if missing:
        found[0] = dataclasses.replace(found[0], note="; ".join(missing))
    return found


def budget_figure(run: Run, delta: float, accuracy: float) -> Figures:
    """The figure budgets rest on: the rigorous upper bound (accuracy plays no part in it)."""
    return upper(run, np.asarray([delta]))


def upper(run: Run, deltas: np.ndarray) -> Figures:
    """The rigorous upper bound: epsilon of upper_mu(run)-GDP at each delta."""
    from gdpcli.accounting.accountants import ExactGDP

    mu = upper_mu(run)
    [exact] = ExactGDP(mu).epsilon(deltas)
    details = ({"mu": mu, "epochs_counted": epochs_touched(run)},)
    return dataclasses.replace(exact, guarantee=UPPER, method=UPPER_METHOD, details=details)


def _lower(run: Run, deltas: np.ndarray, accuracy: float) -> Figures:
    from gdpcli.core import pld, shuffle

    epochs = complete_epochs(run)
    details = ({"epochs_counted": epochs},)
    if epochs == 0:
        return Figures(np.zeros(1), LOWER, LOWER_METHOD, details=details)
    pair = shuffle.max_test_pair(run.step_mu, batches_per_epoch(run.sampling_rate))
    bounds = pld.epsilon_bounds([(pair, epochs)], deltas, accuracy=accuracy)
    return Figures(np.atleast_1d(bounds.lower), LOWER, LOWER_METHOD, details=details)


def as_poisson(run: Run, deltas: np.ndarray, accuracy: float) -> Figures:
    from gdpcli.accounting.accountants import NumericalPLD

    poisson = dataclasses.replace(run, sampling="poisson", sensitivity=run.step_sensitivity)
    [upper, _] = NumericalPLD([poisson.spec()], accuracy).epsilon(deltas)
    return dataclasses.replace(upper, guarantee=APPROXIMATION, method=POISSON_METHOD)


SCHEME = BatchScheme("shuffle", Neighbouring.REPLACE_ONE, True, figures, budget_figure)
