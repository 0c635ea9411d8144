"""DP-SGD with balls-in-bins batches (random allocation): each epoch every example lands in exactly one of
b = ceil(N / B) batches, uniformly at random; add/remove neighbours, step shift s = sensitivity / sigma.
gdpcli prints the interval known to contain the truth, and what Poisson accounting would have claimed.

- Upper bound (rigorous): the PLD of core.allocation.upper_pair (a lattice pair that dominates the pair
  (1/b) sum_t N(s e_t, I) vs N(0, I) of Chua et al., AISTATS 2025, and Feldman and Shenfeld 2025),
  composed over the epochs the run touches (a partial last epoch is a prefix of a whole one, a
  post-processing, so it counts whole), and never above the no-amplification bound sqrt(E) s-GDP (each
  epoch's pair is dominated by N(s, 1) vs N(0, 1): joint convexity of the hockey-stick divergence).
- Lower bound (rigorous): the larger of the PLD lower bounds of core.allocation.lower_pair (the laws of
  a post-processing of the same pair) and of Chua et al.'s max-of-batch-sums pair (core.shuffle), another
  post-processing of it, over the complete epochs.
- As if Poisson: the Poisson PLD at rate q = B / N with the same steps, noise and sensitivity (labelled
  approximation, as for shuffling).
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

import numpy as np

from gdpcli.accounting.figures import OPTIMISTIC, PESSIMISTIC, Figures
from gdpcli.accounting.schemes import SchemeBounds
from gdpcli.accounting.shuffled_batches import as_poisson, complete_epochs, epochs_touched
from gdpcli.defaults import DEFAULT_ACCURACY
from gdpcli.errors import ComputationError
from gdpcli.events import Sampling, batches_per_epoch

if TYPE_CHECKING:
    from gdpcli.accounting.figures import Accountant
    from gdpcli.core.pld import DominatingPair
    from gdpcli.events import Run

UPPER_METHOD = "allocation-lattice"
"""The upper bound's method: PLD of the mean-preserving lattice pair over the epochs touched."""
UPPER_FALLBACK_METHOD = "allocation-gdp"
"""The upper bound where the lattice pair gives no better: sqrt(E) s-GDP, no amplification."""
LOWER_METHOD = "allocation-floor-lattice"
"""The lower bound's method: PLD of the floor-lattice post-processing over the complete epochs."""
LOWER_MAX_TEST_METHOD = "allocation-max-test"
"""The lower bound where Chua et al.'s max test is the larger."""
POISSON_METHOD = "as-if-poisson"
"""What a Poisson accountant would claim for the same rate, steps, noise and sensitivity."""


def figures(run: Run, delta: float, accuracy: float) -> list[Figures]:
    """epsilon at delta of the balls-in-bins run: the rigorous upper bound, the rigorous lower bound and,
    for comparison, what Poisson accounting would claim. A lower bound or comparison the PLD cannot
    compute is left out with a note on the upper bound."""
    deltas = np.asarray([delta])
    found, missing = [upper(run, deltas, accuracy)], []
    for name, compute in ((LOWER_METHOD, lower), (POISSON_METHOD, as_poisson)):
        try:
            found.append(compute(run, deltas, accuracy))
        except ComputationError as error:
            missing.append(f"{name} left out: {error.message}")
    if missing:
        found[0] = dataclasses.replace(found[0], note="; ".join(missing))
    return found


def _gdp_epsilon(mu: float, deltas: np.ndarray) -> np.ndarray:
    """epsilon of mu-GDP at each delta (exact)."""
    from gdpcli.accounting.accountants import ExactGDP

    [exact] = ExactGDP(mu).epsilon(deltas)
    return np.asarray(exact.values, dtype=float)


def budget_figure(run: Run, delta: float, accuracy: float) -> Figures:
    """The figure budgets rest on: the rigorous upper bound."""
    return upper(run, np.asarray([delta]), accuracy)


def upper(run: Run, deltas: np.ndarray, accuracy: float = DEFAULT_ACCURACY) -> Figures:
    """The rigorous upper bound at each delta: the smaller of the lattice pair's PLD upper bound (when
    its lattice is resolved) and sqrt(E) s-GDP, E the epochs touched (module docstring)."""
    from gdpcli.core import pld

    epochs, b, shift = epochs_touched(run), batches_per_epoch(run.sampling_rate), run.step_mu
    deltas = np.asarray(deltas, dtype=float)
    values, method = _gdp_epsilon(math.sqrt(epochs) * shift, deltas), UPPER_FALLBACK_METHOD
    details: dict = {"epochs_counted": epochs, "batches_per_epoch": b}
    pair, spacing = _lattice_pair(run, accuracy)
    if spacing is not None:
        details["lattice_spacing"] = spacing
    if pair is not None:
        bounds = pld.epsilon_bounds([(pair, epochs)], deltas, accuracy=accuracy)
        lattice = np.atleast_1d(np.asarray(bounds.upper, dtype=float))
        if np.all(lattice <= values):
            values, method = np.minimum(lattice, values), UPPER_METHOD
    return Figures(values, PESSIMISTIC, method, "epsilon", details=(details,) * deltas.size)


def _lattice_pair(run: Run, accuracy: float) -> tuple[DominatingPair | None, float | None]:
    """The lattice pair of one epoch (core.allocation.upper_pair) where its lattice is resolved, else None,
    and the lattice's spacing (None with one batch an epoch, where there is no lattice)."""
    from gdpcli.core import allocation

    b = batches_per_epoch(run.sampling_rate)
    if b == 1:
        return None, None
    pair, grid = allocation.upper_pair(run.step_mu, b, accuracy)
    return (pair if grid.resolved else None), grid.spacing


def lower(run: Run, deltas: np.ndarray, accuracy: float) -> Figures:
    """The rigorous lower bound at each delta: the larger of the floor-lattice pair's and the max test's PLD
    lower bounds over the complete epochs (0 without one)."""
    from gdpcli.core import allocation, pld, shuffle

    epochs, b, shift = complete_epochs(run), batches_per_epoch(run.sampling_rate), run.step_mu
    deltas = np.asarray(deltas, dtype=float)
    details = ({"epochs_counted": epochs},) * deltas.size
    if epochs == 0:
        return Figures(np.zeros(deltas.size), OPTIMISTIC, LOWER_METHOD, "epsilon", details=details)
    max_test = pld.epsilon_bounds([(shuffle.max_test_pair(shift, b), epochs)], deltas, accuracy=accuracy)
    values, method = np.atleast_1d(np.asarray(max_test.lower, dtype=float)), LOWER_MAX_TEST_METHOD
    if b > 1:
        pair, _ = allocation.lower_pair(shift, b, accuracy)
        bounds = pld.epsilon_bounds([(pair, epochs)], deltas, accuracy=accuracy)
        floor = np.atleast_1d(np.asarray(bounds.lower, dtype=float))
        if np.all(floor >= values):
            values, method = floor, LOWER_METHOD
    return Figures(values, OPTIMISTIC, method, "epsilon", details=details)


def accountant(run: Run, accuracy: float) -> Accountant:
    """The run for every question: the lattice pair over the epochs touched where its lattice is resolved
    (else sqrt(E) s-GDP) as its dominating pair, and the floor-lattice pair (one batch an epoch: the max
    test's) over the complete epochs as the pair it dominates (none before a complete epoch)."""
    from gdpcli.accounting.accountants import PairsPLD
    from gdpcli.core import allocation, shuffle
    from gdpcli.events import GDP

    epochs, b, shift = epochs_touched(run), batches_per_epoch(run.sampling_rate), run.step_mu
    lattice, _ = _lattice_pair(run, accuracy)
    if lattice is None:
        upper, upper_method = [(GDP(math.sqrt(epochs) * shift).dominating_pair(), 1)], UPPER_FALLBACK_METHOD
    else:
        upper, upper_method = [(lattice, epochs)], UPPER_METHOD
    if b > 1:
        pair, lower_method = allocation.lower_pair(shift, b, accuracy)[0], LOWER_METHOD
    else:
        pair, lower_method = shuffle.max_test_pair(shift, b), LOWER_MAX_TEST_METHOD
    complete = complete_epochs(run)
    lower = [(pair, complete)] if complete else None
    return PairsPLD(upper, lower, accuracy, (upper_method, lower_method))


BOUNDS = SchemeBounds(Sampling.BALLS_IN_BINS, figures, budget_figure, accountant)
