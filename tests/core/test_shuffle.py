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


# ---------------------------------------------------------------- two shifts: high vs low


def _mp_two_profile(high: float, low: float, batches: int, epsilon: float, direction: str) -> mp.mpf:
    """delta of the two-shift pair from the definition: the root of l(t) = log(N_high / N_low)(t) = +-eps,
    N_a = e^{a t - a^2/2} Phi(t) + (b-1) Phi(t - a) (f_a = phi(t) Phi(t)^(b-2) N_a), by mp.findroot at 60
    digits on the bracket eps0 = (high - low)(t - (high + low)/2) in [+-eps, +-eps + log b], then
    remove = Q_high(M > t) - e^eps Q_low(M > t), add = Q_low(M < t) - e^eps Q_high(M < t),
    Q_a(M < t) = Phi(t - a) Phi(t)^(b-1), at 60 digits plus those lost to the cancellation (the root's own
    error enters to second order: the derivative of either difference in t vanishes at the root)."""
    with mp.workdps(60):
        h, lo, b, eps = mp.mpf(high), mp.mpf(low), batches, mp.mpf(epsilon)

        def log_n(a, t):
            return mp.log(mp.exp(a * t - a * a / 2) * mp.ncdf(t) + (b - 1) * mp.ncdf(t - a))

        target = eps if direction == "remove" else -eps
        left = target / (h - lo) + (h + lo) / 2
        right = (target + mp.log(b)) / (h - lo) + (h + lo) / 2
        root = mp.findroot(
            lambda t: log_n(h, t) - log_n(lo, t) - target, (left - 1e-9, right + 1e-9), solver="anderson"
        )

    def value(digits: int) -> mp.mpf:
        with mp.workdps(digits):
            t = mp.mpf(root)

            def below(a):
                return mp.ncdf(t - a) * mp.ncdf(t) ** (b - 1)

            if direction == "remove":
                return (1 - below(h)) - mp.exp(eps) * (1 - below(lo))
            return below(lo) - mp.exp(eps) * below(h)

    rough = value(60)
    lost = 0 if rough == 0 else max(0, int(-mp.log10(abs(rough))))
    return value(60 + lost) if rough != 0 else value(400)


# (direction, high, low, batches, eps, delta) from _mp_two_profile: Chua et al.'s (2, 1) / sigma pair at
# sigma = 0.5, 1, 0.25, then a nearly one-shift, a tiny-shift and a close-shift pair at many batches.
TWO_REFERENCE = [
    ("remove", 4.0, 2.0, 1000, -1.0, 0.6897695310653192),
    ("remove", 4.0, 2.0, 1000, 0.0, 0.51545005468079708),
    ("remove", 4.0, 2.0, 1000, 0.5, 0.44040864504297621),
    ("remove", 4.0, 2.0, 1000, 2.0, 0.24866101068056765),
    ("remove", 4.0, 2.0, 1000, 5.0, 0.029880874433480161),
    ("remove", 4.0, 2.0, 1000, 10.0, 9.9265376035361936e-6),
    ("remove", 4.0, 2.0, 1000, 30.0, 9.6621066828711879e-46),
    ("add", 4.0, 2.0, 1000, -1.0, 0.76876496467438647),
    ("add", 4.0, 2.0, 1000, 0.0, 0.51545005468079708),
    ("add", 4.0, 2.0, 1000, 0.5, 0.33759563881433096),
    ("add", 4.0, 2.0, 1000, 2.0, 0.0015923818757648804),
    ("add", 4.0, 2.0, 1000, 5.0, 3.2156968660763108e-97),
    ("remove", 2.0, 1.0, 100, -0.5, 0.39540963890722588),
    ("remove", 2.0, 1.0, 100, 0.0, 0.14005684942088289),
    ("remove", 2.0, 1.0, 100, 1.0, 0.01670579607857292),
    ("remove", 2.0, 1.0, 100, 3.0, 0.00023642730612133042),
    ("remove", 2.0, 1.0, 100, 8.0, 3.358491175261636e-15),
    ("remove", 2.0, 1.0, 100, 20.0, 2.6647029664171853e-86),
    ("add", 2.0, 1.0, 100, -0.5, 0.42082292206741098),
    ("add", 2.0, 1.0, 100, 0.0, 0.14005684942088289),
    ("add", 2.0, 1.0, 100, 0.5, 0.0031990116060721439),
    ("add", 2.0, 1.0, 100, 1.0, 4.280384984942363e-8),
    ("add", 2.0, 1.0, 100, 3.0, 1.1652605917400871e-97),
    ("remove", 8.0, 4.0, 10, -2.0, 0.98474894264523005),
    ("remove", 8.0, 4.0, 10, 0.0, 0.9544997276283691),
    ("remove", 8.0, 4.0, 10, 3.0, 0.83450008052781293),
    ("remove", 8.0, 4.0, 10, 10.0, 0.23369880786030703),
    ("remove", 8.0, 4.0, 10, 25.0, 4.9859348142796447e-6),
    ("remove", 8.0, 4.0, 10, 50.0, 1.1783736583641462e-26),
    ("add", 8.0, 4.0, 10, -2.0, 0.98474896281232989),
    ("add", 8.0, 4.0, 10, 0.0, 0.9544997276283691),
    ("add", 8.0, 4.0, 10, 3.0, 0.83449951068923702),
    ("add", 8.0, 4.0, 10, 10.0, 0.23321116292524767),
    ("add", 8.0, 4.0, 10, 25.0, 2.2128197792844982e-9),
    ("add", 8.0, 4.0, 10, 40.0, 6.0013561727395427e-56),
    ("remove", 2.5, 0.001, 10, 0.5, 0.45007077609078482),
    ("remove", 2.5, 0.001, 10, 5.0, 0.024978706299203102),
    ("remove", 2.5, 0.001, 10, 30.0, 1.5534614891922252e-32),
    ("add", 2.5, 0.001, 10, 0.5, 0.40659150457137781),
    ("add", 2.5, 0.001, 10, 8.0, 3.2594146506513445e-15),
    ("remove", 0.02, 0.01, 1000, -0.01, 0.0099501662508319466),
    ("remove", 0.02, 0.01, 1000, 0.0, 1.3029616072175592e-5),
    ("remove", 0.02, 0.01, 1000, 0.0001, 1.1714442909232328e-21),
    ("add", 0.02, 0.01, 1000, 0.0, 1.3029616072175592e-5),
    ("add", 0.02, 0.01, 1000, 0.001, 1.9703378894783163e-25),
    ("remove", 3.0, 2.9, 100000, 0.0, 0.0085501832405261845),
    ("remove", 3.0, 2.9, 100000, 0.5, 6.7967041422021294e-9),
    ("remove", 3.0, 2.9, 100000, 1.0, 1.230835963457154e-25),
    ("add", 3.0, 2.9, 100000, 0.0, 0.0085501832405261845),
    ("add", 3.0, 2.9, 100000, 0.1, 3.0171332240224373e-182),
]
TWO_TOLERANCE = 1e-12  # measured: 2e-13 at most over this table (at delta 1e-97 and below)


def _two_profile(direction: str, high: float, low: float, batches: int):
    make = shuffle.max_test_remove_profile if direction == "remove" else shuffle.max_test_add_profile
    return make(high, batches, low)


@pytest.mark.parametrize(("direction", "high", "low", "batches", "epsilon", "expected"), TWO_REFERENCE)
def test_two_shift_profiles_match_mpmath(direction, high, low, batches, epsilon, expected):
    value = _two_profile(direction, high, low, batches)(np.array([epsilon]))[0]
    assert abs(value - expected) <= TWO_TOLERANCE * expected


def test_two_shift_recipe_reproduces_table():
    for direction, high, low, batches, epsilon, expected in TWO_REFERENCE[::4]:
        computed = float(_mp_two_profile(high, low, batches, epsilon, direction))
        assert abs(computed - expected) <= 1e-15 * expected


def test_two_shift_table_is_vectorized_like_scalars():
    for direction in ("remove", "add"):
        rows = [row for row in TWO_REFERENCE if row[0] == direction and row[1:4] == (8.0, 4.0, 10)]
        eps = np.array([row[4] for row in rows]).reshape(2, -1)
        values = _two_profile(direction, 8.0, 4.0, 10)(eps)
        assert values.shape == eps.shape
        np.testing.assert_allclose(values.ravel(), [row[5] for row in rows], rtol=TWO_TOLERANCE)


def test_low_zero_is_the_one_shift_pair():
    """max_test_pair(s, b) and max_test_pair(s, b, 0.0) are the same pair, bit for bit."""
    eps = np.linspace(-20.0, 40.0, 61)
    one, zero = shuffle.max_test_pair(2.5, 1000), shuffle.max_test_pair(2.5, 1000, low=0.0)
    assert one.loss_range == zero.loss_range
    for a, b in ((one.remove, zero.remove), (one.add, zero.add)):
        np.testing.assert_array_equal(a(eps), b(eps))


@pytest.mark.parametrize("shift", [1e-3, 0.1, 1.0, 20.0])
@pytest.mark.parametrize("batches", [2, 1000, 10**6])
def test_two_shift_formulas_at_low_zero_agree_with_the_one_shift_ones(shift, batches):
    """The two-shift forms (rho_low = 1, the M(t - low) - M(t) term 0) evaluated at low = 0."""
    eps = np.linspace(-50.0, 50.0, 401)
    pairs = (
        (shuffle._remove_values, shuffle._two_remove_values),
        (shuffle._add_values, shuffle._two_add_values),
    )
    for one, two in pairs:
        expected, computed = one(eps, shift, batches), two(eps, shift, 0.0, batches)
        normal = expected > 1e-100  # below, each is within its conditioning of mpmath, not of the other
        np.testing.assert_allclose(computed[normal], expected[normal], rtol=1e-12, atol=0)


@pytest.mark.parametrize(("high", "low"), [(2.0, 1.0), (0.02, 0.01), (8.0, 4.0)])
def test_two_shift_one_batch_is_the_gaussian_pair(high, low):
    expected = np.asarray(gdp.delta(EPSILONS, high - low))
    for direction in ("remove", "add"):
        computed = _two_profile(direction, high, low, 1)(EPSILONS)
        np.testing.assert_allclose(computed, expected, rtol=1e-12, atol=0)
    for values in (shuffle._two_remove_values, shuffle._two_add_values):  # the b >= 2 forms at b = 1
        computed = values(EPSILONS, high, low, 1)
        normal = expected > 1e-300
        np.testing.assert_allclose(computed[normal], expected[normal], rtol=1e-12, atol=0)


@pytest.mark.parametrize("low", [-0.5, 2.0, 3.0, np.nan, np.inf])
def test_invalid_low(low):
    with pytest.raises(InputError):
        shuffle.max_test_pair(2.0, 10, low)


@pytest.mark.parametrize(
    ("high", "low", "batches"), [(2.0, 1.0, 1000), (4.0, 3.999, 10**6), (20.0, 10.0, 10), (0.02, 0.01, 2)]
)
def test_two_shift_loss_range_leaves_little_mass(high, low, batches):
    lo, hi = shuffle.max_test_loss_range(high, batches, low=low)
    assert lo < 0.0 < hi
    assert shuffle.max_test_remove_profile(high, batches, low)(np.array([hi]))[0] <= 1e-18
    assert shuffle.max_test_add_profile(high, batches, low)(np.array([-lo]))[0] <= 1e-18


def test_two_shift_loss_is_increasing():
    """l' > 0 (module docstring); here on a grid over t in [-40, 60], from the code's own l and l'."""
    t = np.linspace(-40.0, 60.0, 4001)
    for high, low, batches in [(2.0, 1.0, 1000), (0.02, 0.01, 10**6), (20.0, 0.02, 2), (8.0, 7.9, 10)]:
        loss, slope = shuffle._two_loss(t, high, low, batches)
        assert np.all(slope > 0.0)
        assert np.all(np.diff(loss) >= 0.0)


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


low_fractions = st.one_of(st.just(0.0), st.floats(0.0, 0.999))
ROUNDING = float(np.finfo(float).eps)


@settings(max_examples=80, deadline=None)
@given(
    shift=shifts,
    batches=batch_counts,
    epsilons=epsilon_lists,
    direction=st.sampled_from(["remove", "add"]),
    low_fraction=low_fractions,
)
def test_profile_properties(shift, batches, epsilons, direction, low_fraction):
    """Any profile's properties, of the one-shift pair (low = 0) and the two-shift pair (low = f shift)."""
    eps = np.sort(np.array(epsilons))
    delta = _two_profile(direction, shift, shift * low_fraction, batches)(eps)
    assert np.all(np.isfinite(delta))
    assert np.all((delta >= 0.0) & (delta <= 1.0))
    # delta(eps) >= max(0, 1 - e^eps): the whole space as the test set
    assert np.all(delta >= -np.expm1(eps) * (1 - SLACK))
    # non-increasing in eps
    assert np.all(delta[1:] <= delta[:-1] * (1 + SLACK) + 1e-300)
    # convex in x = e^eps: delta(x2) <= chord of (x1, delta1), (x3, delta3), up to the profiles' rounding
    # and to that of x itself (a few ulps of x times the chord's slope)
    x = np.exp(eps)
    x1, x2, x3 = x[:-2], x[1:-1], x[2:]
    d1, d2, d3 = delta[:-2], delta[1:-1], delta[2:]
    spread = x3 - x1
    keep = spread > 0
    safe_spread = np.where(keep, spread, 1.0)
    chord = np.where(keep, ((x3 - x2) * d1 + (x2 - x1) * d3) / safe_spread, d2)
    x_rounding = np.where(keep, 4 * ROUNDING * x3 * (d1 - d3) / safe_spread, 0.0)
    assert np.all(d2 <= chord + SLACK * np.maximum(d1, d2) + x_rounding + 1e-300)


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


def _loss(t: np.ndarray, high: float = SHIFT, low: float = 0.0, batches: int = BATCHES) -> np.ndarray:
    """log(f_high / f_low)(t) = log N_high - log N_low straight from the definition (scipy, not the code under
    test), N_a = e^{a t - a^2/2} Phi(t) + (b - 1) Phi(t - a)."""

    def log_n(a: float) -> np.ndarray:
        return np.logaddexp(
            a * t - a * a / 2 + special.log_ndtr(t), np.log(batches - 1) + special.log_ndtr(t - a)
        )

    return log_n(high) - log_n(low)


def _monte_carlo(
    epochs: int,
    epsilons: np.ndarray,
    samples: int = 10**6,
    shifts: tuple[float, float] = (SHIFT, 0.0),
    batches: int = BATCHES,
) -> tuple[np.ndarray, np.ndarray]:
    """99.9 % confidence intervals of the worst direction's delta(eps) of `epochs` compositions.

    shifts = (high, low). M under P is the max of N(low, 1) and b - 1 standard normals (their max
    Phi^-1(U^(1/(b-1)))); under Q the same with N(high, 1). Remove: E_Q[(1 - e^{eps - L})_+], L the summed
    loss; add: E_P[(1 - e^{eps + L})_+]. Each interval is mean +- 3.29 standard errors; the worst
    direction's lies in [max lower, max upper].
    """
    rng = np.random.default_rng(20240614)
    shape = (samples, epochs)

    def epoch_max(shift: float) -> np.ndarray:
        others = special.ndtri_exp(np.log(rng.random(shape)) / (batches - 1))
        return np.maximum(shift + rng.standard_normal(shape), others)

    high, low = shifts
    remove_losses = _loss(epoch_max(high), high, low, batches).sum(axis=1)
    add_losses = -_loss(epoch_max(low), high, low, batches).sum(axis=1)
    lower, upper = [], []
    for losses in (remove_losses, add_losses):
        weights = np.maximum(-np.expm1(epsilons[:, None] - losses[None, :]), 0.0)
        mean, error = weights.mean(axis=1), 3.29 * weights.std(axis=1) / np.sqrt(samples)
        lower.append(mean - error)
        upper.append(mean + error)
    return np.max(lower, axis=0), np.max(upper, axis=0)


@pytest.mark.parametrize("low", [0.0, 1.0 / 0.8])
@pytest.mark.parametrize(
    ("epochs", "epsilons"), [(1, [0.5, 2.0, 5.0]), pytest.param(3, [1.0, 3.0, 6.0], marks=pytest.mark.slow)]
)
def test_pld_of_the_pair_brackets_monte_carlo(epochs, epsilons, low):
    epsilons = np.array(epsilons)
    pair = shuffle.max_test_pair(SHIFT, BATCHES, low)
    bounds = pld.delta_bounds([(pair, epochs)], epsilons)
    mc_lower, mc_upper = _monte_carlo(epochs, epsilons, shifts=(SHIFT, low))
    assert np.all(mc_upper - mc_lower < 0.01)  # the check has teeth
    assert np.all(np.asarray(bounds.lower) <= mc_upper)
    assert np.all(np.asarray(bounds.upper) >= mc_lower)


@pytest.mark.parametrize("low", [0.0, 1.0 / 0.8])
def test_pld_epsilon_bounds_of_the_pair(low):
    pair = shuffle.max_test_pair(SHIFT, BATCHES, low)
    for epochs in (1, 3):
        bounds = pld.epsilon_bounds([(pair, epochs)], 1e-3)
        assert 0.0 < bounds.lower <= bounds.upper
        # Monte Carlo delta at the two epsilons straddles 1e-3 (within its confidence intervals)
        mc_lower, mc_upper = _monte_carlo(
            epochs, np.array([bounds.lower, bounds.upper]), 4 * 10**5, (SHIFT, low)
        )
        assert mc_upper[0] >= 1e-3 >= mc_lower[1]
    bounds = pld.epsilon_bounds([(pair, 3)], 1e-5)
    assert bounds.lower <= bounds.upper


def test_composed_lower_bound_of_chua_et_al_pair_against_monte_carlo():
    """sigma = 1, b = 1000, 5 epochs of the (2, 1) / sigma pair: the Monte Carlo delta of the composition at
    the PLD's epsilon bounds for delta = 1e-3 straddles 1e-3."""
    pair = shuffle.max_test_pair(2.0, 1000, 1.0)
    bounds = pld.epsilon_bounds([(pair, 5)], 1e-3)
    mc_lower, mc_upper = _monte_carlo(5, np.array([bounds.lower, bounds.upper]), 4 * 10**5, (2.0, 1.0), 1000)
    assert mc_upper[0] >= 1e-3 >= mc_lower[1]
    assert mc_upper[0] - mc_lower[0] < 2.5e-4  # the check has teeth: +-12 % of delta


# (sigma, epochs, epsilon, tolerance) at delta 1e-5, b = 1000, shifts (2, 1) / sigma: a colleague's
# independent computation on a coarser grid (the cube masses of Chua et al.'s ShuffleAccountant composed
# by PLD), whose discretization error grows with the epochs composed: its 5-epoch figure is 2.1e-3 below
# gdpcli's bounds at --accuracy 1e-4, [3.815122, 3.815125].
INDEPENDENT_FIGURES = [
    (0.5, 1, 9.996, 2e-3),
    (0.8, 1, 5.235, 2e-3),
    (1.0, 1, 2.882, 2e-3),
    (1.0, 5, 3.813, 3e-3),
    (1.5, 1, 0.348, 2e-3),
]


@pytest.mark.parametrize(("sigma", "epochs", "expected", "tolerance"), INDEPENDENT_FIGURES)
def test_lower_bounds_match_independent_figures(sigma, epochs, expected, tolerance):
    pair = shuffle.max_test_pair(2.0 / sigma, 1000, 1.0 / sigma)
    bounds = pld.epsilon_bounds([(pair, epochs)], [1e-5])
    assert abs(float(bounds.lower[0]) - expected) < tolerance
    assert bounds.lower[0] <= bounds.upper[0]
