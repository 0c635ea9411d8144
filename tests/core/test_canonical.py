"""gdpcli.core.canonical against mpmath recipes and the definition of a canonical noise distribution (CND).

Awan and Vadhan 2023 (Def. 3.1): for a symmetric trade-off function f, N is a CND when T(N, N + d) >= f for
0 <= d <= 1 with equality at d = 1, the most powerful test of N against N + 1 rejects for large values, and N
is symmetric. The checks here, none of which uses a value printed by the code under test:
- closed forms against mpmath recipes written from the distributions' definitions (the Tulap as a
  difference of geometrics plus a uniform, truncated; the Gaussian; the Laplace);
- the Tulap's parameters against the definition, in mpmath: the threshold test of N against N + 1 has
  type II error f_{eps,delta}(alpha) at every level alpha;
- the recursive construction: its likelihood ratio is monotone (so threshold tests are most powerful,
  Neyman-Pearson), its threshold test has type II error f(alpha) for f written out in the test, and the
  trade-off of N coarsened into small cells (sorted by likelihood ratio, no threshold assumed) is f;
- samplers: Kolmogorov-Smirnov tests with fixed seeds against the CDF, and the Tulap's CDF against an
  independent sampler built from its definition.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from gdpcli.core import canonical
from gdpcli.errors import ComputationError, InputError
from tests.conftest import at_least_digits

PROBABILITIES = [1e-9, 1e-6, 1e-3, 0.1, 0.3, 0.5, 0.75, 0.9, 0.99, 0.999, 0.999999]


# --- mpmath recipes -----------------------------------------------------------------------------------


@at_least_digits(30)
def mp_eps_delta_tradeoff(alpha: mp.mpf, epsilon: float, delta: float) -> mp.mpf:
    """f_{eps,delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)) (GDP eq. 4)."""
    e, d = mp.mpf(epsilon), mp.mpf(delta)
    return max(mp.mpf(0), 1 - d - mp.exp(e) * alpha, mp.exp(-e) * (1 - d - alpha))


@at_least_digits(30)
def mp_laplace_tradeoff(alpha: mp.mpf, epsilon: float) -> mp.mpf:
    """T(Lap(0, 1), Lap(eps, 1)) by Neyman-Pearson (GDP paper Sec. 2.5): three pieces."""
    e = mp.mpf(epsilon)
    if alpha < mp.exp(-e) / 2:
        return 1 - mp.exp(e) * alpha
    if alpha <= mp.mpf(1) / 2:
        return mp.exp(-e) / (4 * alpha)
    return mp.exp(-e) * (1 - alpha)


@functools.cache
def mp_discrete_laplace(epsilon: float) -> tuple[int, list[mp.mpf], list[mp.mpf]]:
    """P(G1 - G2 = k) = (1 - b) / (1 + b) b^|k| for |k| <= reach (b^reach < 1e-25) and their running sums
    P(G1 - G2 <= k), summed term by term at 30 digits (G_i iid geometric, P(G = k) = (1 - b) b^k)."""
    with mp.workdps(30):
        b = mp.exp(-mp.mpf(epsilon))
        reach = int(58 / epsilon) + 1
        mass = [(1 - b) / (1 + b) * b ** abs(k) for k in range(-reach, reach + 1)]
        running, total = [], mp.mpf(0)
        for term in mass:
            total += term
            running.append(total)
        return reach, mass, running


def mp_tulap_cdf(x: float | mp.mpf, epsilon: float, delta: float) -> mp.mpf:
    """P(N <= x) for Tulap(0, b = e^-eps, q = 2 delta b / (1 - b + 2 delta b)) from its definition (Awan and
    Slavkovic 2018): N0 = G1 - G2 + U with U ~ U(-1/2, 1/2), so P(N0 <= x) = sum_k P(G1 - G2 = k)
    P(U <= x - k), where every k < m = round(x) counts whole and k = m by x - m + 1/2; N is N0 conditioned on
    its CDF value lying in [q/2, 1 - q/2], i.e. (P(N0 <= x) - q/2) / (1 - q) clipped to [0, 1]. Beyond the
    terms kept, P(N0 <= x) is 0 or 1 to within 1e-25."""
    reach, mass, running = mp_discrete_laplace(epsilon)
    with mp.workdps(30):
        x, b = mp.mpf(x), mp.exp(-mp.mpf(epsilon))
        q = 2 * delta * b / (1 - b + 2 * delta * b)
        m = int(mp.floor(x + mp.mpf(1) / 2))
        if not -reach < m < reach:
            untruncated = mp.mpf(0 if m < 0 else 1)
        else:
            untruncated = running[m - 1 + reach] + mass[m + reach] * (x - m + mp.mpf(1) / 2)
        return min(max((untruncated - q / 2) / (1 - q), mp.mpf(0)), mp.mpf(1))


def mp_quantile(cdf: Callable[[mp.mpf], mp.mpf], u: float, width: float) -> mp.mpf:
    """The u-quantile of a continuous CDF by 80 bisections of [-width, width] at 30 digits."""
    with mp.workdps(30):
        low, high, target = mp.mpf(-width), mp.mpf(width), mp.mpf(u)
        for _ in range(80):
            middle = (low + high) / 2
            low, high = (middle, high) if cdf(middle) < target else (low, middle)
        return (low + high) / 2


def mp_recursive_quantile(tradeoff: Callable[[mp.mpf], mp.mpf], u: float) -> mp.mpf:
    """The u-quantile (u >= 1/2) of the recursive CND (Awan and Vadhan 2023, Thm 3.9), at 30 digits: c solves
    f(c) = c (bisection on [0, 1/2]); F is linear on [-1/2, 1/2] from c to 1 - c and 1 - F(x) = f(F(x - 1))
    beyond, so the tail s = 1 - u goes inwards by s -> 1 - f(s) (f = f^-1) until s >= c."""
    with mp.workdps(30):
        low, high = mp.mpf(0), mp.mpf(1) / 2
        for _ in range(100):
            middle = (low + high) / 2
            low, high = (middle, high) if tradeoff(middle) >= middle else (low, middle)
        c, tail, steps = (low + high) / 2, 1 - mp.mpf(u), 0
        while tail < c:
            tail, steps = 1 - tradeoff(tail), steps + 1
        return steps + (mp.mpf(1) / 2 - tail) / (1 - 2 * c)


# --- independent numpy helpers ------------------------------------------------------------------------


def eps_delta_f(epsilon: float, delta: float) -> Callable[[np.ndarray], np.ndarray]:
    """f_{eps,delta} written out (GDP paper eq. 4), independent of gdpcli.core.tradeoff."""
    return lambda a: np.maximum(
        0.0, np.maximum(1 - delta - math.exp(epsilon) * a, (1 - delta - a) / math.exp(epsilon))
    )


def laplace_f(epsilon: float) -> Callable[[np.ndarray], np.ndarray]:
    """T(Lap(0, 1), Lap(eps, 1)) written out (GDP paper Sec. 2.5)."""

    def f(alpha: np.ndarray) -> np.ndarray:
        alpha = np.asarray(alpha, dtype=float)
        with np.errstate(divide="ignore"):
            middle = math.exp(-epsilon) / (4 * alpha)
        steep = 1 - math.exp(epsilon) * alpha
        return np.where(
            alpha < math.exp(-epsilon) / 2,
            steep,
            np.where(alpha <= 0.5, middle, math.exp(-epsilon) * (1 - alpha)),
        )

    return f


def cells(noise: canonical.NoiseDistribution, shift: float, step: float = 1e-3, width: float = 40.0):
    """Masses of N and of N + shift on cells of `step` over [-width, width] plus the two tails, each from the
    side's own tail (F below 0, the survival above) so that small masses keep their digits."""
    edges = np.arange(-width, width + step / 2, step)

    def masses(points: np.ndarray) -> np.ndarray:
        """Cell (a, b] has mass (L(b) - L(a)) + (U(a) - U(b)), L(e) = F(min(e, 0)) and U(e) = S(max(e, 0))."""
        lower = np.concatenate(([0.0], np.asarray(noise.cdf(np.minimum(points, 0.0))), [0.5]))
        upper = np.concatenate(([0.5], np.asarray(noise.survival(np.maximum(points, 0.0))), [0.0]))
        return np.maximum(np.diff(lower) - np.diff(upper), 0.0)

    return masses(edges), masses(edges - shift)


def coarse_tradeoff(noise: canonical.NoiseDistribution, shift: float, alpha: np.ndarray) -> np.ndarray:
    """T(P, Q) of N and N + shift coarsened into cells: Neyman-Pearson on the cells sorted by likelihood
    ratio q/p (randomizing within a cell), no threshold test assumed. Coarsening is post-processing, so this
    is >= T(N, N + shift), and it tends to it as the cells shrink."""
    p, q = cells(noise, shift)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(p > 0, q / p, np.inf)
    order = np.argsort(-ratio, kind="stable")
    size = np.concatenate(([0.0], np.cumsum(p[order])))
    power = np.concatenate(([0.0], np.cumsum(q[order])))
    return 1.0 - np.interp(alpha, size, power)


def assert_monotone_likelihood_ratio(noise: canonical.NoiseDistribution) -> None:
    """The density ratio of N + 1 to N is non-decreasing, so the most powerful test of N against N + 1
    rejects for large values (Neyman-Pearson). On cells where both masses exceed 1e-9: the recursion's
    probabilities are good to about 1e-16 absolute, so smaller masses carry no relative digits."""
    p, q = cells(noise, 1.0, step=1e-2)
    both = (p > 1e-9) & (q > 1e-9)
    ratio = q[both] / p[both]
    assert ratio.size > 300
    assert np.all(np.diff(ratio) >= -1e-5 * ratio[1:])


def threshold_tradeoff(noise: canonical.NoiseDistribution, alpha: np.ndarray) -> np.ndarray:
    """Type II error of the test of N against N + 1 rejecting above t = F^-1(1 - alpha): F(t - 1)."""
    return np.asarray(noise.cdf(np.asarray(noise.quantile(1.0 - alpha)) - 1.0))


ALPHAS = np.array([1e-6, 1e-3, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.99, 0.999])


# --- closed forms ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("mu", [0.1, 0.5, 1.0, 3.0])
def test_gaussian_against_mpmath(mu: float) -> None:
    noise = canonical.Gaussian(mu)
    for u in PROBABILITIES:
        with mp.workdps(30):
            expected = mp.sqrt(2) * mp.erfinv(2 * mp.mpf(u) - 1) / mu  # N(0, 1/mu^2)
        assert noise.quantile(u) == pytest.approx(float(expected), rel=1e-12, abs=1e-300)
    with mp.workdps(30):
        assert noise.cdf(-3.0) == pytest.approx(float(mp.ncdf(-3 * mp.mpf(mu))), rel=1e-13)
        assert noise.fixed_point == pytest.approx(float(mp.ncdf(-mp.mpf(mu) / 2)), rel=1e-14)  # G_mu(c) = c
        assert noise.parameters(3.0) == {"sigma": pytest.approx(3.0 / mu, rel=1e-15)}


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
def test_laplace_against_mpmath(epsilon: float) -> None:
    noise = canonical.Laplace(epsilon)
    with mp.workdps(30):
        for u in PROBABILITIES:
            u_mp = mp.mpf(u)
            expected = mp.log(2 * u_mp) / epsilon if u < 0.5 else -mp.log(2 * (1 - u_mp)) / epsilon
            assert noise.quantile(u) == pytest.approx(float(expected), rel=1e-12, abs=1e-15)
        # Lap(0, 1/eps) is a CND of its own trade-off function: threshold tests are optimal and give f exactly
        f = [mp_laplace_tradeoff(mp.mpf(a), epsilon) for a in ALPHAS]
        np.testing.assert_allclose(threshold_tradeoff(noise, ALPHAS), np.array(f, dtype=float), rtol=1e-11)
        assert noise.fixed_point == pytest.approx(float(mp.exp(-mp.mpf(epsilon) / 2) / 2), rel=1e-15)


TULAP_CASES = [(1.0, 0.0), (1.0, 1e-5), (0.3, 0.1), (3.0, 1e-3), (0.05, 1e-6), (8.0, 0.2)]


@pytest.mark.parametrize(("epsilon", "delta"), TULAP_CASES)
def test_tulap_cdf_against_its_definition(epsilon: float, delta: float) -> None:
    noise = canonical.Tulap(epsilon, delta)
    for x in [-30.3, -7.0, -2.6, -1.5, -0.5, -0.2, 0.0, 0.4, 1.2, 2.5, 6.7, 40.1]:
        assert noise.cdf(x) == pytest.approx(float(mp_tulap_cdf(x, epsilon, delta)), rel=1e-12, abs=1e-16)


@pytest.mark.parametrize(("epsilon", "delta"), TULAP_CASES)
def test_tulap_quantile_against_mpmath(epsilon: float, delta: float) -> None:
    noise = canonical.Tulap(epsilon, delta)
    for u in [1e-6, 0.1, 0.5, 0.75, 0.99, 0.999999]:
        expected = mp_quantile(lambda x: mp_tulap_cdf(x, epsilon, delta), u, width=30 / epsilon + 5)
        assert noise.quantile(u) == pytest.approx(float(expected), rel=1e-10, abs=1e-12)


@pytest.mark.parametrize(("epsilon", "delta"), TULAP_CASES[:4])
def test_tulap_parameters_make_f_eps_delta(epsilon: float, delta: float) -> None:
    """In mpmath alone: with b = e^-eps and q = 2 delta b / (1 - b + 2 delta b), the test of N against N + 1
    rejecting above the (1 - alpha)-quantile has type II error f_{eps,delta}(alpha), and F(-1/2) = c."""
    cdf = lambda x: mp_tulap_cdf(x, epsilon, delta)  # noqa: E731
    with mp.workdps(30):
        for alpha in [1e-4, 0.05, 0.2, 0.4, 0.7, 0.95]:
            threshold = mp_quantile(cdf, 1 - mp.mpf(alpha), width=30 / epsilon + 5)
            expected = mp_eps_delta_tradeoff(mp.mpf(alpha), epsilon, delta)
            assert abs(cdf(threshold - 1) - expected) < mp.mpf("1e-20")
        c = (1 - mp.mpf(delta)) / (1 + mp.exp(epsilon))
        assert abs(cdf(mp.mpf(-1) / 2) - c) < mp.mpf("1e-24")
    assert canonical.Tulap(epsilon, delta).fixed_point == pytest.approx(float(c), rel=1e-14)
    assert_monotone_likelihood_ratio(canonical.Tulap(epsilon, delta))


def test_tulap_parameters() -> None:
    noise = canonical.Tulap(1.0, 1e-5)
    with mp.workdps(30):
        b = mp.exp(-1)
        assert noise.b == pytest.approx(float(b), rel=1e-15)
        assert noise.q == pytest.approx(
            float(2 * mp.mpf("1e-5") * b / (1 - b + 2 * mp.mpf("1e-5") * b)), rel=1e-14
        )
        assert noise.parameters(2.0)["scale"] == 2.0


def test_uniform_is_the_cnd_of_f_zero_delta() -> None:
    noise = canonical.eps_delta(0.0, 0.1)
    assert isinstance(noise, canonical.Uniform)
    assert noise.quantile(0.9) == pytest.approx(4.0, rel=1e-14)  # (0.9 - 1/2) / delta
    f = eps_delta_f(0.0, 0.1)
    np.testing.assert_allclose(threshold_tradeoff(noise, ALPHAS), f(ALPHAS), atol=1e-14)
    # and the recursion from f_{0,delta} gives the same uniform
    recursive = canonical.Recursive.of(f)
    np.testing.assert_allclose(
        recursive.cdf(np.linspace(-6, 6, 49)), noise.cdf(np.linspace(-6, 6, 49)), atol=1e-13
    )


# --- the recursive construction -------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 3.0])
def test_recursive_pure_dp_is_tulap_with_q_zero(epsilon: float) -> None:
    """For f_{eps,0} the recursion gives the discrete Laplace plus a uniform (Tulap, q = 0): mpmath recipe."""
    noise = canonical.Recursive.of(eps_delta_f(epsilon, 0.0))
    for x in [-20.2, -4.5, -1.3, -0.5, -0.1, 0.0, 0.3, 0.9, 2.0, 7.7]:
        assert noise.cdf(x) == pytest.approx(float(mp_tulap_cdf(x, epsilon, 0.0)), rel=1e-12, abs=1e-16)
    for u in [1e-6, 0.2, 0.5, 0.9, 0.999999]:
        expected = mp_quantile(lambda x: mp_tulap_cdf(x, epsilon, 0.0), u, width=30 / epsilon + 5)
        assert noise.quantile(u) == pytest.approx(float(expected), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 1e-5), (0.3, 0.1), (3.0, 1e-3)])
def test_recursive_eps_delta_is_tulap(epsilon: float, delta: float) -> None:
    noise = canonical.Recursive.of(eps_delta_f(epsilon, delta))
    for x in [-9.5, -2.2, -0.5, 0.0, 0.7, 3.4]:
        assert noise.cdf(x) == pytest.approx(float(mp_tulap_cdf(x, epsilon, delta)), rel=1e-11, abs=1e-15)


@pytest.mark.parametrize(
    "f",
    [laplace_f(1.0), laplace_f(0.2), eps_delta_f(1.0, 0.0), eps_delta_f(0.5, 0.05)],
    ids=["laplace-1", "laplace-0.2", "pure-dp-1", "dp-0.5-0.05"],
)
def test_recursive_is_a_cnd(f: Callable[[np.ndarray], np.ndarray]) -> None:
    """T(N, N + 1) = f: monotone likelihood ratio plus the threshold test's errors; the coarsened
    Neyman-Pearson trade-off (no threshold assumed) agrees; T(N, N + d) >= f for d < 1; N symmetric."""
    noise = canonical.Recursive.of(f)
    assert f(np.asarray(noise.fixed_point)) == pytest.approx(noise.fixed_point, rel=1e-14)
    assert noise.cdf(-0.5) == pytest.approx(noise.fixed_point, rel=1e-14)
    assert_monotone_likelihood_ratio(noise)
    np.testing.assert_allclose(threshold_tradeoff(noise, ALPHAS), f(ALPHAS), rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(coarse_tradeoff(noise, 1.0, ALPHAS), f(ALPHAS), atol=1e-4)
    for shift in (0.3, 0.7):
        assert np.all(coarse_tradeoff(noise, shift, ALPHAS) >= f(ALPHAS) - 1e-9)
    x = np.linspace(-12, 12, 97)
    np.testing.assert_allclose(noise.cdf(-x), 1.0 - np.asarray(noise.cdf(x)), atol=1e-15)


@pytest.mark.parametrize("u", [0.6, 0.75, 0.9, 0.99, 0.999, 0.999999])
def test_recursive_quantile_against_mpmath(u: float) -> None:
    noise = canonical.Recursive.of(laplace_f(1.0))
    expected = mp_recursive_quantile(lambda a: mp_laplace_tradeoff(a, 1.0), u)
    assert noise.quantile(u) == pytest.approx(float(expected), rel=1e-10)
    assert noise.quantile(1 - u) == pytest.approx(-float(expected), rel=1e-9)


def test_recursive_gaussian_differs_from_the_gaussian_but_is_a_cnd() -> None:
    """G_mu has more than one CND: the Gaussian and the recursive one (linear CDF on [-1/2, 1/2])."""
    from gdpcli.core.gdp import tradeoff

    recursive = canonical.Recursive.of(lambda a: tradeoff(a, 1.0))
    gaussian = canonical.Gaussian(1.0)
    assert recursive.fixed_point == pytest.approx(gaussian.fixed_point, rel=1e-14)
    assert recursive.quantile(0.9) == pytest.approx(1.2894988, abs=1e-6) != pytest.approx(1.2815516, abs=1e-6)
    with mp.workdps(30):
        g = np.array([float(mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(a)) - 1)) for a in ALPHAS])  # G_1
        np.testing.assert_allclose(threshold_tradeoff(recursive, ALPHAS), g, rtol=1e-10)
        np.testing.assert_allclose(threshold_tradeoff(gaussian, ALPHAS), g, rtol=1e-10)


def test_fixed_point_refuses_perfect_privacy() -> None:
    with pytest.raises(InputError, match="perfect privacy"):
        canonical.fixed_point(lambda a: 1.0 - np.asarray(a))


def test_quantile_needs_an_open_probability() -> None:
    for u in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(InputError):
            canonical.Gaussian(1.0).quantile(u)


def test_tail_beyond_double_precision_is_refused_not_wrong() -> None:
    noise = canonical.Recursive.of(laplace_f(1.0))
    with pytest.raises(ComputationError, match="double precision"):
        noise.quantile(1e-300)


def test_too_many_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canonical, "MAX_STEPS", 5)
    noise = canonical.Recursive.of(laplace_f(1.0))
    with pytest.raises(ComputationError, match="unit steps"):
        noise.quantile(1e-6)
    with pytest.raises(ComputationError, match="unit steps"):
        noise.cdf(30.0)


@settings(max_examples=25, deadline=None)
@given(
    epsilon=st.floats(0.05, 10.0),
    delta=st.floats(0.0, 0.5),
    u=st.floats(1e-8, 1 - 1e-8),
)
def test_tulap_round_trip_and_recursion(epsilon: float, delta: float, u: float) -> None:
    noise = canonical.Tulap(epsilon, delta)
    x = noise.quantile(u)
    assert noise.cdf(x) == pytest.approx(u, rel=1e-9, abs=1e-15)
    recursive = canonical.Recursive.of(eps_delta_f(epsilon, delta))
    assert recursive.cdf(x) == pytest.approx(u, rel=1e-7, abs=1e-13)


# --- samplers -------------------------------------------------------------------------------------------


def tulap_by_definition(epsilon: float, delta: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Tulap draws from the definition (Awan and Slavkovic 2018): G1 - G2 + U, geometric G_i with
    P(G = k) = (1 - b) b^k, kept when the untruncated CDF value lies in [q/2, 1 - q/2] (the bounds are found
    by bisection on the mpmath recipe with q = 0, independent of the code under test)."""
    b = math.exp(-epsilon)
    q = 2 * delta * b / (1 - b + 2 * delta * b)
    edge = (
        float(mp_quantile(lambda x: mp_tulap_cdf(x, epsilon, 0.0), q / 2, width=30 / epsilon + 5))
        if q
        else -np.inf
    )
    draws = rng.geometric(1 - b, 4 * size) - rng.geometric(1 - b, 4 * size) + rng.uniform(-0.5, 0.5, 4 * size)
    kept = draws[(draws >= edge) & (draws <= -edge)]
    assert kept.size >= size
    return kept[:size]


@pytest.mark.parametrize(("epsilon", "delta"), [(1.0, 0.0), (1.0, 0.05), (0.5, 0.2)])
def test_tulap_sampler_and_cdf(epsilon: float, delta: float) -> None:
    noise = canonical.Tulap(epsilon, delta)
    drawn = noise.sample(20_000, np.random.default_rng(11))
    assert stats.kstest(drawn, noise.cdf).pvalue > 1e-3
    defined = tulap_by_definition(epsilon, delta, 20_000, np.random.default_rng(12))
    assert stats.kstest(defined, noise.cdf).pvalue > 1e-3
    assert stats.ks_2samp(drawn, defined).pvalue > 1e-3


def test_samplers_against_their_cdfs() -> None:
    gaussian = canonical.Gaussian(0.5).sample(20_000, np.random.default_rng(3))
    assert stats.kstest(gaussian, stats.norm(scale=2.0).cdf).pvalue > 1e-3  # scipy's own N(0, 4)
    laplace = canonical.Laplace(2.0).sample(20_000, np.random.default_rng(4))
    assert stats.kstest(laplace, stats.laplace(scale=0.5).cdf).pvalue > 1e-3
    recursive = canonical.Recursive.of(laplace_f(1.0))
    assert stats.kstest(recursive.sample(20_000, np.random.default_rng(5)), recursive.cdf).pvalue > 1e-3


def test_sampler_is_reproducible_and_symmetric() -> None:
    noise = canonical.Tulap(1.0, 1e-3)
    first = noise.sample(1000, np.random.default_rng(9))
    np.testing.assert_array_equal(first, noise.sample(1000, np.random.default_rng(9)))
    assert not np.array_equal(first, noise.sample(1000, np.random.default_rng(10)))
    assert 400 < np.sum(first < 0) < 600
