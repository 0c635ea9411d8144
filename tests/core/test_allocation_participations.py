"""k participations of balls-in-bins (k-out-of-t allocation): core.allocation.parts, lower_pair with
participations, and the accounting's bounds over rounds of t steps.

Expected numbers come from closed forms (the parts of t, sqrt(k) s-GDP where every step uses the
example) or from a Monte Carlo estimate of the exact pair C(t, 2)^-1 sum_{|S| = 2} N(s 1_S, I_t) against
N(0, I_t) written here, with a confidence interval and a fixed seed; never from the code under test.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from gdpcli.accounting import balls_in_bins as accounting
from gdpcli.core import allocation
from gdpcli.events import Run

ACCURACY = 0.02  # coarser lattices than the CLI's default keep the file fast; the bounds stay rigorous


@pytest.mark.parametrize(
    ("steps", "participations", "expected"),
    [
        (10, 1, ((10, 1),)),
        (10, 2, ((5, 2),)),
        (10, 3, ((3, 2), (4, 1))),
        (7, 7, ((1, 7),)),
        (8, 5, ((1, 2), (2, 3))),
    ],
)
def test_parts_cut_t_into_k_floor_and_ceil_parts(steps: int, participations: int, expected: tuple) -> None:
    found = allocation.parts(steps, participations)
    assert found == expected
    assert sum(size * count for size, count in found) == steps
    assert sum(count for _, count in found) == participations


@pytest.mark.parametrize(("steps", "participations"), [(3, 4), (3, 0)])
def test_parts_refuse_participations_outside_one_to_t(steps: int, participations: int) -> None:
    with pytest.raises(ValueError, match="participations"):
        allocation.parts(steps, participations)


def _exact_two_of_t(shift: float, steps: int, epsilons: np.ndarray, samples: int = 400_000) -> np.ndarray:
    """(low, high) confidence limits (5 standard errors, fixed seed) of delta(eps) = max(remove, add) of
    the exact 2-out-of-t pair: L = dP/dQ = e_2(Y) / C(t, 2), Y_j = e^{s x_j - s^2/2}, e_2 the second
    elementary symmetric polynomial ((sum Y)^2 - sum Y^2) / 2. remove = E_Q(L - x)_+ = E_P(1 - x / L)_+
    (by symmetry P's subset is {0, 1}), add = E_Q(1 - x L)_+: both integrands in [0, 1]."""
    rng = np.random.default_rng(20251128)

    def ratio(offset: np.ndarray) -> np.ndarray:
        y = np.exp(shift * (rng.standard_normal((samples, steps)) + offset) - 0.5 * shift * shift)
        total = y.sum(axis=1)
        return (total * total - (y * y).sum(axis=1)) / 2 / math.comb(steps, 2)

    under_p = ratio(shift * (np.arange(steps) < 2))
    under_q = ratio(np.zeros(steps))
    x = np.exp(epsilons)[:, None]
    limits = []
    for terms in (np.maximum(1.0 - x / under_p[None, :], 0.0), np.maximum(1.0 - x * under_q[None, :], 0.0)):
        mean, error = terms.mean(axis=1), 5.0 * terms.std(axis=1) / math.sqrt(samples)
        limits.append((mean - error, mean + error))
    (remove_low, remove_high), (add_low, add_high) = limits
    return np.maximum(remove_low, add_low), np.maximum(remove_high, add_high)


def _mp_gdp_epsilon(mu: float, delta: float) -> float:
    """epsilon of mu-GDP at delta (GDP paper Cor. 1), the root of the decreasing delta(eps) at 30 digits."""
    with mp.workdps(30):
        mu, delta = mp.mpf(mu), mp.mpf(delta)
        gap = lambda eps: mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2) - delta  # noqa: E731
        return float(mp.findroot(gap, (mp.mpf(0), mp.mpf(60)), solver="illinois"))


def _round(steps: int, participations: int, sigma: float, rounds: int = 1) -> Run:
    """rounds of t = steps balls-in-bins steps, each example in `participations` of each round."""
    return Run(participations / steps, rounds * steps, sigma, "balls-in-bins", participations=participations)


@pytest.mark.parametrize("steps", [4, 6, 8])
def test_two_participations_bracket_the_exact_pair(steps: int) -> None:
    """lower <= exact <= upper at delta 1e-2 and 1e-3: at the upper bound's epsilon the exact delta is at
    most delta, at the lower bound's at least delta (confidence limits of the Monte Carlo)."""
    run, deltas = _round(steps, 2, 1.0), np.array([1e-2, 1e-3])
    assert run.round_steps == steps
    upper = accounting.upper(run, deltas, ACCURACY)
    lower = accounting.lower(run, deltas, ACCURACY)
    assert upper.method == accounting.UPPER_METHOD and lower.method == accounting.LOWER_METHOD
    low_at_upper, _ = _exact_two_of_t(1.0, steps, upper.values)
    _, high_at_lower = _exact_two_of_t(1.0, steps, lower.values)
    assert np.all(low_at_upper <= deltas), (upper.values, low_at_upper)
    assert np.all(high_at_lower >= deltas), (lower.values, high_at_lower)
    assert np.all(lower.values < upper.values)


def test_bounds_grow_with_participations_at_fixed_round() -> None:
    """More participations in the same 8 steps: both bounds grow; every step (k = t = 8) is the plain
    Gaussian 16 times over two rounds, sqrt(16)-GDP exactly."""
    deltas = np.array([1e-3])
    uppers, lowers = [], []
    for k in (1, 2, 3, 4, 8):
        run = _round(8, k, 1.0, rounds=2)
        uppers.append(accounting.upper(run, deltas, ACCURACY).values[0])
        lower = accounting.lower(run, deltas, ACCURACY)
        lowers.append(lower.values[0])
    assert lower.method == accounting.LOWER_EVERY_STEP_METHOD
    assert uppers == sorted(uppers) and lowers == sorted(lowers)
    assert np.all(np.array(lowers) <= np.array(uppers))
    gdp_16 = _mp_gdp_epsilon(4.0, 1e-3)  # 4 = sqrt(16) x s, s = 1
    assert uppers[-1] == pytest.approx(gdp_16, rel=1e-9)
    assert lowers[-1] <= gdp_16 <= lowers[-1] * (1 + ACCURACY)


def test_k_of_k_b_upper_bound_is_k_epochs_of_one_of_b() -> None:
    """The parts of one 2-out-of-10 round are two 1-out-of-5 allocations: the same composition as two
    epochs of 5 batches, so the same figure."""
    deltas = np.array([1e-5, 1e-3])
    two_of_ten = accounting.upper(Run(0.2, 10, 1.0, "balls-in-bins", participations=2), deltas, ACCURACY)
    one_of_five = accounting.upper(Run(0.2, 10, 1.0, "balls-in-bins"), deltas, ACCURACY)
    np.testing.assert_array_equal(two_of_ten.values, one_of_five.values)
    assert two_of_ten.details[0]["rounds_counted"] == 1 and one_of_five.details[0]["epochs_counted"] == 2


def test_partial_round_counts_whole_above_and_not_below() -> None:
    run = _round(10, 2, 1.0, rounds=2).with_steps(21)  # two rounds of 10 and one step
    [upper] = accounting.upper(run, np.array([1e-5]), ACCURACY).details
    [lower] = accounting.lower(run, np.array([1e-5]), ACCURACY).details
    assert (upper["rounds_counted"], lower["rounds_counted"]) == (3, 2)


def test_lower_pair_refuses_participations_of_every_batch() -> None:
    with pytest.raises(ValueError, match="participations"):
        allocation.lower_pair(1.0, 4, ACCURACY, participations=4)
