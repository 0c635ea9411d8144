"""Tests of the max-test lower bound for shuffled DP-SGD (gdpcli.core.shuffle).

Expected numbers come from mpmath (the recipe _mp_profile below, written next to the table it produced),
from gdp.delta (batches = 1 is the Gaussian pair) or from Monte Carlo; never from the code under test.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

from gdpcli.core import gdp, pld, shuffle
from gdpcli.errors import InputError


def _mp_profile(shift: float, batches: int, epsilon: float, direction: str) -> mp.mpf:
    """delta by direct numerical integration at 60 digits (40 lose digits to the cancellation of
    q - e^eps p in the far tail): remove = int (q - e^eps p)_+ over t > t_eps, add = int (p - e^eps q)_+
    over t < t'_eps, with p(t) = b phi(t) Phi(t)^(b-1), q(t) = phi(t - s) Phi(t)^(b-1) + (b-1) Phi(t - s)
    phi(t) Phi(t)^(b-2), the root of log(q/p) = +-eps by mp.findroot on the bracket
    eps0 = s t - s^2/2 in [eps, eps + log b], and mp.quad split at root +- (0, 1/8, 1/4, 1/2, 1, 2, 4, 8)."""
    with mp.workdps(60):
        s, b, eps = mp.mpf(shift), batches, mp.mpf(epsilon)

        def p(t):
            return b * mp.npdf(t) * mp.ncdf(t) ** (b - 1)

        def q(t):
            return mp.npdf(t - s) * mp.ncdf(t) ** (b - 1) + (b - 1) * mp.ncdf(t - s) * mp.npdf(t) * mp.ncdf(
                t
            ) ** (b - 2)

        def loss(t):
            return mp.log(
                (mp.exp(s * t - s * s / 2) * mp.ncdf(t) + (b - 1) * mp.ncdf(t - s)) / (b * mp.ncdf(t))
            )

        target = eps if direction == "remove" else -eps
        lo, hi = target / s + s / 2, (target + mp.log(b)) / s + s / 2
        root = mp.findroot(lambda t: loss(t) - target, (lo - 1e-9, hi + 1e-9), solver="anderson")
        steps = [0, mp.mpf(1) / 8, mp.mpf(1) / 4, mp.mpf(1) / 2, 1, 2, 4, 8]
        if direction == "remove":
            return mp.quad(lambda t: q(t) - mp.exp(eps) * p(t), [root + h for h in steps] + [mp.inf])
        return mp.quad(lambda t: p(t) - mp.exp(eps) * q(t), [mp.ninf] + [root - h for h in reversed(steps)])


# (direction, shift, batches, eps, delta) from _mp_profile; each also agrees with the closed form
# Q(M > t) - e^eps P(M > t) (remove) or P(M < t) - e^eps Q(M < t) (add) evaluated at 60 to 700 digits
# (enough for the cancellation) to better than 1e-33 relative.
REFERENCE = [
    ("remove", 2.5, 10, 0.5, 0.45011596586458997),
    ("remove", 2.5, 10, -1.0, 0.73161337570283211),
    ("remove", 2.5, 10, 5.0, 0.024988693584499926),
    ("remove", 2.5, 10, 30.0, 1.564028480660593e-32),
    ("remove", 0.5, 1000, 0.0, 0.001419026409293553),
    ("remove", 0.5, 1000, 0.2, 1.0268396436682538e-27),
    ("remove", 1.0, 2, 5.0, 1.6156263809412943e-8),
    ("remove", 1.0, 2, 12.0, 1.2665440420953898e-35),
    ("remove", 0.05, 1000, 0.0, 6.7254913425715937e-5),
    ("remove", 0.05, 1000, -0.5, 0.39346934028736658),
    ("remove", 4.0, 1000, 8.0, 0.026852765811099806),
    ("remove", 4.0, 1000, 30.0, 8.6320875871942974e-14),
    ("remove", 0.3, 100, 0.2, 7.7848822474046508e-27),
    ("add", 2.5, 10, 0.5, 0.40664906675808792),
    ("add", 2.5, 10, -1.0, 0.76569912488671134),
    ("add", 2.5, 10, 8.0, 3.3298180945036395e-15),
    ("add", 2.5, 10, 12.0, 3.1875964707656517e-36),
    ("add", 0.5, 1000, 0.05, 4.0335824561939957e-15),
    ("add", 0.05, 1000, 0.0, 6.7254913425715937e-5),
    ("add", 1.0, 2, 8.0, 1.5325897368405107e-28),
    ("add", 4.0, 1000, 5.0, 1.2586539287970709e-32),
    ("add", 4.0, 1000, -2.0, 0.90939125582050517),
    ("add", 0.3, 100, 0.2, 7.0614534636646914e-23),
]
TOLERANCE = 1e-12  # measured: 4e-14 at most over this table


def _profile(direction: str, shift: float, batches: int):
    make = shuffle.max_test_remove_profile if direction == "remove" else shuffle.max_test_add_profile
    return make(shift, batches)


@pytest.mark.parametrize(("direction", "shift", "batches", "epsilon", "expected"), REFERENCE)
def test_profiles_match_mpmath(direction, shift, batches, epsilon, expected):
    value = _profile(direction, shift, batches)(np.array([epsilon]))[0]
    assert abs(value - expected) <= TOLERANCE * expected


def test_table_is_vectorized_like_scalars():
    for direction in ("remove", "add"):
        rows = [row for row in REFERENCE if row[0] == direction and row[1:3] == (2.5, 10)]
        eps = np.array([row[3] for row in rows]).reshape(2, -1)
        values = _profile(direction, 2.5, 10)(eps)
        assert values.shape == eps.shape
        np.testing.assert_allclose(values.ravel(), [row[4] for row in rows], rtol=TOLERANCE)


@pytest.mark.slow
@pytest.mark.parametrize(("direction", "shift", "batches", "epsilon", "expected"), REFERENCE[::3])
def test_reference_recipe_reproduces_table(direction, shift, batches, epsilon, expected):
    assert abs(float(_mp_profile(shift, batches, epsilon, direction)) - expected) <= 1e-15 * expected


# ---------------------------------------------------------------- batches = 1: the Gaussian pair

EPSILONS = np.concatenate([np.linspace(-50.0, 50.0, 2001), [0.0, -1e-9, 1e-9]])


@pytest.mark.parametrize("shift", [1e-3, 0.1, 1.0, 2.5, 20.0])
def test_one_batch_is_the_gaussian_pair(shift):
    expected = np.asarray(gdp.delta(EPSILONS, shift))
    for direction in ("remove", "add"):
        np.testing.assert_allclose(_profile(direction, shift, 1)(EPSILONS), expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("shift", [1e-3, 0.1, 1.0, 2.5, 20.0])
def test_general_formulas_reduce_to_the_gaussian_at_one_batch(shift):
    """The b >= 2 formulas (root, loss, h_b, D/G) evaluated at b = 1, where they must give gdp.delta."""
    expected = np.asarray(gdp.delta(EPSILONS, shift))
    normal = expected > 1e-300
    for values in (shuffle._remove_values, shuffle._add_values):
        computed = values(EPSILONS, shift, 1)
        np.testing.assert_allclose(computed[normal], expected[normal], rtol=1e-12, atol=0)
        assert np.all(computed[~normal] <= 1e-300)


# ---------------------------------------------------------------- properties of any privacy profile

shifts = st.floats(-3.0, np.log10(20.0)).map(lambda x: 10.0**x)
batch_counts = st.one_of(st.integers(1, 20), st.integers(0, 6).map(lambda k: 10**k), st.integers(1, 10**6))
epsilon_lists = st.lists(st.floats(-50.0, 50.0), min_size=3, max_size=12)
SLACK = 1e-12  # the profiles' rounding (measured <= 1e-13 relative above delta 1e-100)


@settings(max_examples=60, deadline=None)
@given(
    shift=shifts, batches=batch_counts, epsilons=epsilon_lists, direction=st.sampled_from(["remove", "add"])
)
def test_profile_properties(shift, batches, epsilons, direction):
    eps = np.sort(np.array(epsilons))
    delta = _profile(direction, shift, batches)(eps)
    assert np.all(np.isfinite(delta))
    assert np.all((delta >= 0.0) & (delta <= 1.0))
    # delta(eps) >= max(0, 1 - e^eps): the whole space as the test set
    assert np.all(delta >= -np.expm1(eps) * (1 - SLACK))
    # non-increasing in eps
    assert np.all(delta[1:] <= delta[:-1] * (1 + SLACK) + 1e-300)
    # convex in x = e^eps: delta(x2) <= chord of (x1, delta1), (x3, delta3)
    x = np.exp(eps)
    x1, x2, x3 = x[:-2], x[1:-1], x[2:]
    d1, d2, d3 = delta[:-2], delta[1:-1], delta[2:]
    spread = x3 - x1
    keep = spread > 0
    chord = np.where(keep, ((x3 - x2) * d1 + (x2 - x1) * d3) / np.where(keep, spread, 1.0), d2)
    assert np.all(d2 <= chord + SLACK * np.maximum(d1, d2) + 1e-300)


def test_limits_and_special_values():
    for direction in ("remove", "add"):
        profile = _profile(direction, 2.5, 10)
        values = profile(np.array([np.inf, -np.inf, np.nan]))
        assert values[0] == 0.0 and values[1] == 1.0 and np.isnan(values[2])
        assert profile(np.float64(1.0)).shape == ()


@pytest.mark.parametrize(("shift", "batches"), [(0.0, 10), (-1.0, 10), (np.inf, 10), (1.0, 0), (1.0, 2.5)])
def test_invalid_input(shift, batches):
    with pytest.raises(InputError):
        shuffle.max_test_pair(shift, batches)


@pytest.mark.parametrize(("shift", "batches"), [(2.5, 10), (1e-3, 10**6), (20.0, 1000), (0.3, 1)])
def test_loss_range_leaves_little_mass(shift, batches):
    """H(Q || P)(hi) <= Q(L > hi) and H(P || Q)(-lo) <= P(L < lo) must then be at most 1e-18."""
    lo, hi = shuffle.max_test_loss_range(shift, batches)
    assert lo < 0.0 < hi
    assert shuffle.max_test_remove_profile(shift, batches)(np.array([hi]))[0] <= 1e-18
    assert shuffle.max_test_add_profile(shift, batches)(np.array([-lo]))[0] <= 1e-18


# ---------------------------------------------------------------- the PLD engine and Monte Carlo

SHIFT, BATCHES = 2.0 / 0.8, 10


def _loss(t: np.ndarray) -> np.ndarray:
    """log(q/p)(t) straight from the definition (scipy, not the code under test)."""
    s, b = SHIFT, BATCHES
    numerator = np.logaddexp(s * t - s * s / 2 + special.log_ndtr(t), np.log(b - 1) + special.log_ndtr(t - s))
    return numerator - np.log(b) - special.log_ndtr(t)


def _monte_carlo(epochs: int, epsilons: np.ndarray, samples: int = 10**6) -> tuple[np.ndarray, np.ndarray]:
    """99.9 % confidence intervals of the worst direction's delta(eps) of `epochs` compositions.

    M under P is the max of b standard normals, Phi^-1(U^(1/b)); under Q the max of N(s, 1) and b - 1 of
    them. Remove: E_Q[(1 - e^{eps - L})_+], L the summed loss; add: E_P[(1 - e^{eps + L})_+]. Each
    interval is mean +- 3.29 standard errors; the worst direction's lies in [max lower, max upper].
    """
    rng = np.random.default_rng(20240614)
    shape = (samples, epochs)
    under_p = special.ndtri_exp(np.log(rng.random(shape)) / BATCHES)
    others = special.ndtri_exp(np.log(rng.random(shape)) / (BATCHES - 1))
    under_q = np.maximum(SHIFT + rng.standard_normal(shape), others)
    remove_losses = _loss(under_q).sum(axis=1)
    add_losses = -_loss(under_p).sum(axis=1)
    lower, upper = [], []
    for losses in (remove_losses, add_losses):
        weights = np.maximum(-np.expm1(epsilons[:, None] - losses[None, :]), 0.0)
        mean, error = weights.mean(axis=1), 3.29 * weights.std(axis=1) / np.sqrt(samples)
        lower.append(mean - error)
        upper.append(mean + error)
    return np.max(lower, axis=0), np.max(upper, axis=0)


@pytest.mark.parametrize(("epochs", "epsilons"), [(1, [0.5, 2.0, 5.0]), (3, [1.0, 3.0, 6.0])])
def test_pld_of_the_pair_brackets_monte_carlo(epochs, epsilons):
    epsilons = np.array(epsilons)
    pair = shuffle.max_test_pair(SHIFT, BATCHES)
    bounds = pld.delta_bounds([(pair, epochs)], epsilons)
    mc_lower, mc_upper = _monte_carlo(epochs, epsilons)
    assert np.all(mc_upper - mc_lower < 0.01)  # the check has teeth
    assert np.all(np.asarray(bounds.lower) <= mc_upper)
    assert np.all(np.asarray(bounds.upper) >= mc_lower)


def test_pld_epsilon_bounds_of_the_pair():
    pair = shuffle.max_test_pair(SHIFT, BATCHES)
    for epochs in (1, 3):
        bounds = pld.epsilon_bounds([(pair, epochs)], 1e-3)
        assert 0.0 < bounds.lower <= bounds.upper
        # Monte Carlo delta at the two epsilons straddles 1e-3 (within its confidence intervals)
        mc_lower, mc_upper = _monte_carlo(epochs, np.array([bounds.lower, bounds.upper]), samples=4 * 10**5)
        assert mc_upper[0] >= 1e-3 >= mc_lower[1]
    bounds = pld.epsilon_bounds([(pair, 3)], 1e-5)
    assert bounds.lower <= bounds.upper
