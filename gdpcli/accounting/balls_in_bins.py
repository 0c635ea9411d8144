"""DP-SGD with balls-in-bins batches (random allocation): each epoch every example lands in exactly one of
b = ceil(N / B) batches, uniformly at random; add/remove neighbours, step shift s = sensitivity / sigma.
gdpcli prints the interval known to contain the truth, and what Poisson accounting would have claimed.

With k participations (Run.participations) every example lands in k distinct batches of each round of
t = ceil(k N / B) steps (k-out-of-t allocation; an epoch is the round of k = 1): below, read "round" for
"epoch". The upper bound composes, per round, the parts of core.allocation.parts (t mod k
one-participation pairs of ceil(t / k) batches and the others of floor(t / k); a part of one batch is
the Gaussian's own pair) and is never above sqrt(k R) s-GDP, R the rounds touched; the lower bound is the
floor-lattice pair of the k-out-of-t round (core.allocation.lower_pair; Chua et al.'s max test belongs
to k = 1 and is left out), or the Gaussian's own pair k times where t = k (every example in every step).

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
from gdpcli.accounting.shuffled_batches import as_poisson
from gdpcli.defaults import DEFAULT_ACCURACY
from gdpcli.errors import ComputationError
from gdpcli.events import Sampling

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
LOWER_EVERY_STEP_METHOD = "allocation-every-step"
"""The lower bound where each example is in every step (participations = round steps): the Gaussian's PLD."""
POISSON_METHOD = "as-if-poisson"
"""What a Poisson accountant would claim for the same rate, steps, noise and sensitivity."""


def figures(run: Run, delta: float, accuracy: float) -> list[Figures]:
    """epsilon at delta of the balls-in-bins run: the rigorous upper bound, the rigorous lower bound and,
    for comparison, what Poisson accounting would claim. A lower bound or comparison the PLD cannot
    compute is left out with a note on the upper bound."""
    deltas = np.asarray([delta])
    found, missing = [upper(run, deltas, accuracy)], []
    for name, compute in ((LOWER_METHOD, lower), (POISSON_METHOD, _as_poisson)):
        try:
            found.append(compute(run, deltas, accuracy))
        except ComputationError as error:
            missing.append(f"{name} left out: {error.message}")
    if missing:
        found[0] = dataclasses.replace(found[0], note="; ".join(missing))
    return found


def _as_poisson(run: Run, deltas: np.ndarray, accuracy: float) -> Figures:
    """What Poisson accounting would claim at the rate q = B / N with the same steps and noise (each
    example's rate per step is k / t, about q, whatever its participations)."""
    return as_poisson(dataclasses.replace(run, participations=1), deltas, accuracy)


def rounds_touched(run: Run) -> int:
    """Rounds in which the differing example can be used: ceil(T / t) (a partial last round is a prefix of
    a whole one, a post-processing, so it counts whole)."""
    return -(-run.steps // run.round_steps)


def complete_rounds(run: Run) -> int:
    """Rounds the run completes: floor(T / t)."""
    return run.steps // run.round_steps


def _gdp_epsilon(mu: float, deltas: np.ndarray) -> np.ndarray:
    """epsilon of mu-GDP at each delta (exact)."""
    from gdpcli.accounting.accountants import ExactGDP

    [exact] = ExactGDP(mu).epsilon(deltas)
    return np.asarray(exact.values, dtype=float)


def budget_figure(run: Run, delta: float, accuracy: float) -> Figures:
    """The figure budgets rest on: the rigorous upper bound."""
    return upper(run, np.asarray([delta]), accuracy)


def _counted(run: Run, rounds: int) -> dict:
    """The rows' account of what was composed: epochs (k = 1) or rounds of t steps (k > 1)."""
    if run.participations == 1:
        return {"epochs_counted": rounds}
    return {"rounds_counted": rounds, "round_steps": run.round_steps}


def _no_amplification_mu(run: Run) -> float:
    """sqrt(k R) s: each round is k Gaussian steps of the example, dominated by k-fold N(s, 1) vs N(0, 1)
    (joint convexity of the hockey-stick divergence), R the rounds touched."""
    return math.sqrt(run.participations * rounds_touched(run)) * run.step_mu


def upper(run: Run, deltas: np.ndarray, accuracy: float = DEFAULT_ACCURACY) -> Figures:
    """The rigorous upper bound at each delta: the smaller of the lattice pairs' PLD upper bound (when
    their lattices are resolved) and sqrt(k R) s-GDP, R the rounds touched (module docstring)."""
    from gdpcli.core import pld

    deltas = np.asarray(deltas, dtype=float)
    values, method = _gdp_epsilon(_no_amplification_mu(run), deltas), UPPER_FALLBACK_METHOD
    details: dict = _counted(run, rounds_touched(run))
    if run.participations == 1:
        details["batches_per_epoch"] = run.round_steps
    components, spacing = _lattice_pairs(run, accuracy)
    if spacing is not None:
        details["lattice_spacing"] = spacing
    if components is not None:
        bounds = pld.epsilon_bounds(components, deltas, accuracy=accuracy)
        lattice = np.atleast_1d(np.asarray(bounds.upper, dtype=float))
        if np.all(lattice <= values):
            values, method = np.minimum(lattice, values), UPPER_METHOD
    return Figures(values, PESSIMISTIC, method, "epsilon", details=(details,) * deltas.size)


def _lattice_pairs(run: Run, accuracy: float) -> tuple[list[tuple[DominatingPair, int]] | None, float | None]:
    """The dominating pairs of the rounds touched, (pair, times), from the parts of each round
    (core.allocation.parts: the lattice pair of a part of b > 1 batches, the Gaussian's own pair for a
    part of one) where every lattice is resolved, else None; and the finest lattice spacing (None where
    every part is one batch, with no lattice)."""
    from gdpcli.core import allocation
    from gdpcli.events import GDP

    rounds, shift = rounds_touched(run), run.step_mu
    components, spacings, resolved = [], [], True
    for batches, count in allocation.parts(run.round_steps, run.participations):
        if batches == 1:
            components.append((GDP(shift).dominating_pair(), count * rounds))
            continue
        pair, grid = allocation.upper_pair(shift, batches, accuracy)
        components.append((pair, count * rounds))
        spacings.append(grid.spacing)
        resolved = resolved and grid.resolved
    if not spacings:
        return None, None
    return (components if resolved else None), min(spacings)


def _lower_components(run: Run, accuracy: float) -> tuple[list[tuple[DominatingPair, int]], str]:
    """The complete rounds' dominated pairs, (pair, times), and their method: the k-out-of-t floor-lattice
    pair (core.allocation.lower_pair) once a round; where t = k the example is in every step, the Gaussian
    itself, k times a round (k = 1: the max test's pair of one batch)."""
    from gdpcli.core import allocation, shuffle
    from gdpcli.events import GDP

    t, k, shift, rounds = run.round_steps, run.participations, run.step_mu, complete_rounds(run)
    if t == 1:
        return [(shuffle.max_test_pair(shift, 1), rounds)], LOWER_MAX_TEST_METHOD
    if t == k:
        return [(GDP(shift).dominating_pair(), k * rounds)], LOWER_EVERY_STEP_METHOD
    return [(allocation.lower_pair(shift, t, accuracy, k)[0], rounds)], LOWER_METHOD


def lower(run: Run, deltas: np.ndarray, accuracy: float) -> Figures:
    """The rigorous lower bound at each delta: the PLD lower bound of the floor-lattice pair over the
    complete rounds, for k = 1 the larger of it and the max test's (0 without a complete round)."""
    from gdpcli.core import pld, shuffle

    rounds, shift = complete_rounds(run), run.step_mu
    deltas = np.asarray(deltas, dtype=float)
    details = (_counted(run, rounds),) * deltas.size
    if rounds == 0:
        return Figures(np.zeros(deltas.size), OPTIMISTIC, LOWER_METHOD, "epsilon", details=details)
    components, method = _lower_components(run, accuracy)
    bounds = pld.epsilon_bounds(components, deltas, accuracy=accuracy)
    values = np.atleast_1d(np.asarray(bounds.lower, dtype=float))
    if run.participations == 1 and method == LOWER_METHOD:
        max_test = [(shuffle.max_test_pair(shift, run.round_steps), rounds)]
        tested = pld.epsilon_bounds(max_test, deltas, accuracy=accuracy)
        tested_values = np.atleast_1d(np.asarray(tested.lower, dtype=float))
        if not np.all(values >= tested_values):
            values, method = tested_values, LOWER_MAX_TEST_METHOD
    return Figures(values, OPTIMISTIC, method, "epsilon", details=details)


def accountant(run: Run, accuracy: float) -> Accountant:
    """The run for every question: the lattice pairs over the rounds touched where their lattices are
    resolved (else sqrt(k R) s-GDP) as its dominating pairs, and the floor-lattice pair (_lower_pair) over
    the complete rounds as the pair it dominates (none before a complete round)."""
    from gdpcli.accounting.accountants import PairsPLD
    from gdpcli.events import GDP

    lattice, _ = _lattice_pairs(run, accuracy)
    if lattice is None:
        upper = [(GDP(_no_amplification_mu(run)).dominating_pair(), 1)]
        upper_method = UPPER_FALLBACK_METHOD
    else:
        upper, upper_method = lattice, UPPER_METHOD
    components, lower_method = _lower_components(run, accuracy)
    lower = components if complete_rounds(run) else None
    return PairsPLD(upper, lower, accuracy, (upper_method, lower_method))


BOUNDS = SchemeBounds(Sampling.BALLS_IN_BINS, figures, budget_figure, accountant)
