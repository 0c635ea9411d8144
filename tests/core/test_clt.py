"""Tests for gdpcli.core.clt: CLT functionals, Theorems 5-7, the Berry-Esseen band and the NoisySGD formulas.

Expected numbers come from tests/data/values.json or from mpmath recipes written next to them.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from gdpcli.core import clt, gdp
from tests.conftest import REFERENCE

MNIST = REFERENCE["dp_sgd_mnist"]
FIELDS = ("kl", "kappa2", "kappa3", "kappa3bar", "variance")
SETTINGS = settings(max_examples=40, deadline=None)


def mp_functionals(expect) -> dict[str, mp.mpf]:
    """The five functionals from an mpmath expectation expect(g) = E g(L) of the privacy loss L."""
    kl = -expect(lambda x: x)
    return {
        "kl": kl,
        "kappa2": expect(lambda x: x**2),
        "kappa3": expect(lambda x: abs(x) ** 3),
        "kappa3bar": expect(lambda x: abs(x + kl) ** 3),
        "variance": expect(lambda x: (x + kl) ** 2),
    }


def assert_functionals(actual: clt.Functionals, expected: dict[str, mp.mpf], rtol: float) -> None:
    for name in FIELDS:
        assert getattr(actual, name) == pytest.approx(float(expected[name]), rel=rtol), name


@mp.workdps(30)
def mp_gaussian_functionals(mu: float) -> dict[str, mp.mpf]:
    """Recipe: the loss of G_mu under P is N(-mu^2/2, mu^2); integrate with mpmath, split at the kinks."""
    mean, sd = -(mp.mpf(mu) ** 2) / 2, mp.mpf(mu)

    def expect(g):
        return mp.quad(lambda x: g(x) * mp.npdf(x, mean, sd), [-mp.inf, mean, 0, mp.inf])

    return mp_functionals(expect)


@mp.workdps(30)
def mp_subsampled_gaussian_functionals(p: float, mu: float) -> dict[str, mp.mpf]:
    """Recipe: GDP paper Lemma 4 in mpmath, plus the slope -1 segment of C_p(G_mu) (log|f'| = 0) of
    length (1 - p)(Phi(mu/2) - Phi(-mu/2)); the inverse branch has log|f'| = -Z(t) with weight
    (1 - p) phi(t) + p phi(t - mu).
    """
    p, mu = mp.mpf(p), mp.mpf(mu)
    start = mu / 2

    def z(t):
        return mp.log(p * mp.exp(mu * t - mu**2 / 2) + 1 - p)

    segment = (1 - p) * (mp.ncdf(start) - mp.ncdf(-start))

    def expect(g, kink=None):
        nodes = [start, mp.inf] if kink is None else [start, kink, mp.inf]
        weight = lambda t: (1 - p) * mp.npdf(t) + p * mp.npdf(t - mu)  # noqa: E731
        return mp.quad(lambda t: g(z(t)) * mp.npdf(t) + g(-z(t)) * weight(t), nodes) + segment * g(0)

    values = mp_functionals(expect)
    kl = values["kl"]
    kink = (mp.log((mp.exp(kl) - 1 + p) / p) + mu**2 / 2) / mu  # where Z(t) = kl: |kl - Z|^3 has a kink
    values["kappa3bar"] = expect(lambda x: abs(x + kl) ** 3, kink)
    return values


# ---------------------------------------------------------------------------------------------------
# Functionals


@pytest.mark.parametrize("mu", [0.05, 0.5, 1.0, 2.5])
def test_gaussian_functionals_closed_form(mu: float) -> None:
    expected = mp_gaussian_functionals(mu)
    assert_functionals(clt.gaussian_functionals(mu), expected, 1e-12)
    assert clt.gaussian_functionals(mu).kl == pytest.approx(mu**2 / 2, rel=1e-15)


def test_gaussian_functionals_vectorized() -> None:
    mus = np.array([0.0, 0.3, 1.7])
    vector = clt.gaussian_functionals(mus)
    for i, mu in enumerate(mus):
        scalar = clt.gaussian_functionals(float(mu))
        for name in FIELDS:
            assert getattr(vector, name)[i] == pytest.approx(getattr(scalar, name), rel=1e-15, abs=0)


@pytest.mark.parametrize("epsilon", [0.01, 1 / math.sqrt(10), 1.0, 5.0])
def test_pure_dp_functionals_closed_form(epsilon: float) -> None:
    """Recipe: randomized response, loss -eps w.p. e^eps/(1+e^eps) and +eps otherwise (mpmath)."""
    with mp.workdps(30):
        e = mp.mpf(epsilon)
        q = mp.exp(e) / (1 + mp.exp(e))
        expected = mp_functionals(lambda g: q * g(-e) + (1 - q) * g(e))
        assert_functionals(clt.pure_dp_functionals(epsilon), expected, 1e-13)


@pytest.mark.parametrize("epsilon", [1e-6, 1e-3, 0.1, 0.5, 1.0, 3.0, 20.0, 50.0])
def test_laplace_functionals(epsilon: float) -> None:
    """Recipe: x ~ Lap(0, 1), loss |x| - |x - eps|, integrated over x with mpmath at 40 digits, split at
    every kink (0, eps, eps/2 for |L|^3, (eps - kl)/2 for |L + kl|^3); kl = eps - 1 + e^-eps."""
    with mp.workdps(40):
        e = mp.mpf(epsilon)

        def expect(g, *kinks):
            nodes = sorted([-mp.inf, 0, e, mp.inf, *kinks])
            return mp.quad(lambda x: g(abs(x) - abs(x - e)) * mp.exp(-abs(x)) / 2, nodes)

        kl = -expect(lambda x: x)
        expected = {
            "kl": kl,
            "kappa2": expect(lambda x: x**2),
            "kappa3": expect(lambda x: abs(x) ** 3, e / 2),
            "kappa3bar": expect(lambda x: abs(x + kl) ** 3, (e - kl) / 2),
            "variance": expect(lambda x: (x + kl) ** 2),
        }
        assert float(kl) == pytest.approx(float(e - 1 + mp.exp(-e)), rel=1e-30)
        functionals = clt.laplace_functionals(epsilon)
        assert functionals.rigorous and functionals.rel_error <= 1e-13
        for name in FIELDS:  # closed forms: well inside their stated rounding allowance rel_error
            assert (
                abs(getattr(functionals, name) / float(expected[name]) - 1) <= functionals.rel_error / 10
            ), name


@pytest.mark.parametrize(("p", "mu"), [(0.2, 1.5), (0.01, 1 / 1.1), (0.5, 0.3)])
def test_subsampled_gaussian_functionals_lemma_4(p: float, mu: float) -> None:
    assert_functionals(
        clt.subsampled_gaussian_functionals(p, mu), mp_subsampled_gaussian_functionals(p, mu), 1e-9
    )


def test_subsampled_gaussian_edge_cases_are_closed_forms() -> None:
    assert clt.subsampled_gaussian_functionals(1.0, 0.7) == clt.gaussian_functionals(0.7)
    assert clt.subsampled_gaussian_functionals(0.0, 0.7).kl == 0.0


def test_quadrature_functionals_are_not_rigorous() -> None:
    """QUADPACK's error estimate is not a bound: the subsampled Gaussian's functionals say so, and so does a
    Berry-Esseen band built on them; closed forms stay rigorous."""
    assert not clt.subsampled_gaussian_functionals(0.01, 1.0).rigorous
    assert not clt.berry_esseen([clt.subsampled_gaussian_functionals(0.01, 1.0)], [100]).rigorous
    assert clt.berry_esseen([clt.laplace_functionals(1.0), clt.gaussian_functionals(0.5)], [100, 3]).rigorous


# ---------------------------------------------------------------------------------------------------
# Theorems 5, 6, 7 on pure DP: dp:eps=1/sqrt(10) x 10 (GDP paper Fig. 5)


@mp.workdps(30)
def exact_pure_dp_composition(epsilon: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Recipe (Kairouz et al. 2017, GDP paper Sec. 3.3): f_{eps,0}^{(x)n} = T(B(n, p), B(n, 1 - p)) with
    p = 1/(1+e^eps). Vertices (alpha_j, beta_j) = (P(K >= j), 1 - Q(K >= j)) in mpmath; the curve
    interpolates them linearly.
    """
    p = 1 / (1 + mp.exp(mp.mpf(epsilon)))
    q = 1 - p

    def upper_tail(r, j):
        return mp.fsum(mp.binomial(n, k) * r**k * (1 - r) ** (n - k) for k in range(j, n + 1))

    alphas = [float(upper_tail(p, j)) for j in range(n + 1, -1, -1)]
    betas = [float(1 - upper_tail(q, j)) for j in range(n + 1, -1, -1)]
    return np.array(alphas), np.array(betas)


@mp.workdps(30)
def exact_pure_dp_delta(epsilon0: float, n: int, epsilon: float) -> float:
    """Recipe: delta(eps) of f_{eps0,0}^{(x)n} = sum_k (Q(K=k) - e^eps P(K=k))_+ with the binomials above."""
    p = 1 / (1 + mp.exp(mp.mpf(epsilon0)))
    q, growth = 1 - p, mp.exp(mp.mpf(epsilon))
    terms = (
        mp.binomial(n, k) * (q**k * (1 - q) ** (n - k) - growth * p**k * (1 - p) ** (n - k))
        for k in range(n + 1)
    )
    return float(mp.fsum(max(t, 0) for t in terms))


EPS10 = 1 / math.sqrt(10)


def test_theorem_5_mu_pure_dp() -> None:
    """mu = 2 sqrt(10) sinh(1/(2 sqrt 10)): with t = tanh(eps/2), 2 n eps t / sqrt(n eps^2 (1 - t^2))."""
    with mp.workdps(30):
        expected = 2 * mp.sqrt(10) * mp.sinh(1 / (2 * mp.sqrt(10)))
        assert float(expected) == pytest.approx(1.0041718781, abs=1e-10)
        result = clt.berry_esseen([clt.pure_dp_functionals(EPS10)], [10])
        assert result.mu == pytest.approx(float(expected), rel=1e-13)
        assert result.mu >= float(expected)  # rounded up
        # gamma = 0.56 n eps^3 (1 - t^4) / (n eps^2 (1 - t^2))^(3/2)
        e = 1 / mp.sqrt(10)
        t = mp.tanh(e / 2)
        gamma = 0.56 * 10 * e**3 * (1 - t**4) / (10 * e**2 * (1 - t**2)) ** 1.5
        assert result.gamma == pytest.approx(float(gamma), rel=1e-13)
        assert result.valid


def test_theorem_6_limit_mu_pure_dp() -> None:
    """Theorem 6 at finite n: 2K/s with K = n eps tanh(eps/2), s = sqrt(n) eps, i.e. 20 eps tanh(eps/2)."""
    with mp.workdps(30):
        e = 1 / mp.sqrt(10)
        expected = 20 * e * mp.tanh(e / 2)
        assert clt.limit_mu([clt.pure_dp_functionals(EPS10)], [10]) == pytest.approx(
            float(expected), rel=1e-13
        )


def test_exact_ten_fold_composition_is_close_to_g1_and_above_the_band() -> None:
    alphas, betas = exact_pure_dp_composition(EPS10, 10)
    grid = np.concatenate([np.linspace(0.0, 1.0, 200_001), np.geomspace(1e-14, 1e-2, 4000)])
    exact = np.interp(grid, alphas, betas)
    assert np.max(np.abs(exact - norm.cdf(norm.isf(grid) - 1.0))) < 0.013  # GDP paper Sec. 3.3
    # The band is convex and the exact curve is the chord between its vertices: checking the vertices
    # proves band <= exact everywhere (Theorem 5 is rigorous).
    result = clt.berry_esseen([clt.pure_dp_functionals(EPS10)], [10])
    assert np.all(clt.band_tradeoff(alphas, result.mu, result.gamma) <= betas)


def test_theorem_7_dp_composition() -> None:
    """mu = sqrt(sum eps_i^2), delta0 = 1 - prod(1 - delta_i) (eq. 11); mpmath recipe."""
    with mp.workdps(30):
        mu, delta0 = clt.dp_composition([0.1] * 100, [1e-6] * 100)
        assert mu == pytest.approx(1.0, rel=1e-14)
        assert delta0 == pytest.approx(float(1 - (1 - mp.mpf("1e-6")) ** 100), rel=1e-12)
        mixed_mu, mixed_delta0 = clt.dp_composition([0.3, 0.4], [0.0, 0.5])
        assert (mixed_mu, mixed_delta0) == (pytest.approx(0.5), pytest.approx(0.5))


def test_theorem_7_approximation_conversions() -> None:
    """G_mu (x) f_{0,d0}: delta = d0 + (1 - d0) delta_mu(eps) (eq. 12); eps inverts it; inf at delta <= d0."""
    delta0 = 1e-4
    value = REFERENCE["gdp_delta_of_epsilon"][0]  # mu = 1, eps = 1
    expected = delta0 + (1 - delta0) * float(value["delta"])
    assert clt.uniform_delta(1.0, 1.0, delta0) == pytest.approx(expected, rel=1e-14)
    assert clt.uniform_epsilon(expected, 1.0, delta0) == pytest.approx(1.0, rel=1e-10)
    assert clt.uniform_epsilon(delta0 / 2, 1.0, delta0) == math.inf
    # the approximation of the exact (eps, delta) composition in the reference (Fig. 5): 2.89 exact
    reference = REFERENCE["pure_dp_exact_composition"][0]
    mu, d0 = clt.dp_composition([reference["eps0"]] * reference["k"], [0.0] * reference["k"])
    approx = clt.uniform_epsilon(reference["delta"], mu, d0)
    assert approx == pytest.approx(float(reference["epsilon"]), abs=0.3)


@pytest.mark.parametrize("epsilon", [0.0, 0.5, 1.0, 2.0])
def test_band_delta_bounds_the_exact_dp_composition(epsilon: float) -> None:
    """200-fold f_{eps0,1e-7}, eps0 = 1/sqrt(200): the band delta (Thm 5 + eq. 12) bounds the exact one."""
    n, epsilon0, step_delta = 200, 1 / math.sqrt(200), 1e-7
    mu, delta0 = clt.dp_composition([epsilon0] * n, [step_delta] * n)
    result = clt.berry_esseen([clt.pure_dp_functionals(epsilon0)], [n])
    exact = delta0 + (1 - delta0) * exact_pure_dp_delta(epsilon0, n, epsilon)
    assert clt.band_delta(epsilon, result.mu, result.gamma, delta0) >= exact
    assert clt.uniform_delta(epsilon, mu, delta0) == pytest.approx(exact, abs=0.01)  # the CLT is close


# ---------------------------------------------------------------------------------------------------
# The band and its conversions


def interval_sup(epsilon: float, mu: float, gamma: float) -> tuple[float, float]:
    """sup_alpha 1 - e^eps alpha - b(alpha) on a fine grid: the max over grid points is a lower estimate,
    and on [a_i, a_(i+1)] the objective is <= 1 - b(a_(i+1)) - e^eps a_i, an upper estimate."""
    grid = np.concatenate([np.linspace(0.0, 1.0, 100_001), np.geomspace(1e-12, 1e-3, 2000)])
    grid = np.unique(grid)
    band = np.maximum(norm.cdf(norm.isf(np.minimum(grid + gamma, 1.0)) - mu) - gamma, 0.0)
    lower = np.max(1.0 - math.exp(epsilon) * grid - band)
    upper = np.max(1.0 - band[1:] - math.exp(epsilon) * grid[:-1])
    return lower, upper


@SETTINGS
@given(
    mu=st.floats(0.05, 4.0),
    gamma=st.floats(0.0, 0.49),
    epsilon=st.floats(0.0, 6.0),
)
def test_band_delta_is_the_conjugate(mu: float, gamma: float, epsilon: float) -> None:
    lower, upper = interval_sup(epsilon, mu, gamma)
    value = clt.band_delta(epsilon, mu, gamma)
    # the grid estimates compute 1 - b(alpha) with b near 1: absolute rounding errors of ~1e-16
    assert min(lower, 1.0) - 1e-14 <= value <= min(upper, 1.0) + 1e-12


@SETTINGS
@given(mus=st.lists(st.floats(0.01, 1.5), min_size=1, max_size=30))
def test_gaussian_compositions(mus: list[float]) -> None:
    """For Gaussians Theorem 5's mu is exact (Cor. 2) and the band lies below G_mu, non-increasing;
    its delta bounds the exact delta_mu(eps) (Cor. 1, written out with scipy) from above."""
    exact_mu = math.sqrt(math.fsum(m * m for m in mus))
    result = clt.berry_esseen([clt.gaussian_functionals(m) for m in mus])
    assert result.mu == pytest.approx(exact_mu, rel=1e-12)
    alphas = np.linspace(0.0, 1.0, 2001)
    band = clt.band_tradeoff(alphas, result.mu, result.gamma)
    assert np.all(band <= norm.cdf(norm.isf(alphas) - exact_mu) + 1e-15)
    assert np.all(np.diff(band) <= 0.0)
    assert np.all((band >= 0.0) & (band <= 1.0 - alphas + 1e-15))
    epsilons = np.linspace(0.0, 5.0, 26)
    exact_delta = norm.cdf(-epsilons / exact_mu + exact_mu / 2) - np.exp(epsilons) * norm.cdf(
        -epsilons / exact_mu - exact_mu / 2
    )
    assert np.all(clt.band_delta(epsilons, result.mu, result.gamma) >= exact_delta)


@SETTINGS
@given(
    mu=st.floats(0.1, 3.0),
    gamma=st.floats(0.001, 0.3),
    fraction=st.floats(0.02, 0.98),
    delta0=st.sampled_from([0.0, 1e-6, 0.01]),
)
def test_band_epsilon_inverts_band_delta(mu: float, gamma: float, fraction: float, delta0: float) -> None:
    floor = clt.band_delta(np.inf, mu, gamma, delta0)
    top = clt.band_delta(0.0, mu, gamma, delta0)
    delta = floor + fraction * (top - floor)
    if not floor < delta < top:
        return
    epsilon = clt.band_epsilon(delta, mu, gamma, delta0)
    assert 0.0 < epsilon < math.inf
    assert clt.band_delta(epsilon, mu, gamma, delta0) <= delta
    assert clt.band_delta(epsilon * (1 - 1e-7) - 1e-12, mu, gamma, delta0) > delta


def test_band_epsilon_vectorized_and_edges() -> None:
    mu, gamma = 1.0, 0.05
    floor, top = clt.band_delta(np.inf, mu, gamma), clt.band_delta(0.0, mu, gamma)
    deltas = np.array([floor / 2, floor, (floor + top) / 2, top, 0.99])
    vector = clt.band_epsilon(deltas, mu, gamma)
    assert list(vector) == [clt.band_epsilon(float(d), mu, gamma) for d in deltas]
    assert vector[0] == math.inf  # below the floor nothing is certified
    assert vector[1] < math.inf
    assert vector[3] == vector[4] == 0.0
    assert isinstance(clt.band_epsilon(0.5, mu, gamma), float)


def test_band_is_vacuous_for_large_gamma() -> None:
    result = clt.berry_esseen([clt.gaussian_functionals(0.3)] * 3)
    assert not result.valid  # gamma > 1/2 for three Gaussians
    assert clt.band_tradeoff(0.0, result.mu, result.gamma) == 0.0
    assert clt.band_delta(3.0, result.mu, result.gamma) == 1.0
    assert clt.band_epsilon(0.5, result.mu, result.gamma) == math.inf


def test_no_leakage() -> None:
    result = clt.berry_esseen([clt.gaussian_functionals(0.0)], [5])
    assert (result.mu, result.gamma) == (0.0, 0.0)
    assert clt.band_tradeoff(0.25, result.mu, result.gamma) == pytest.approx(0.75)


# ---------------------------------------------------------------------------------------------------
# NoisySGD: MNIST (n 60000, batch 256, sigma 1.1, 60 epochs = 14063 steps, delta 1e-5)

P_MNIST = MNIST["batch"] / MNIST["n"]


def test_corollary_4_fixed_size_mnist() -> None:
    mu = clt.sgd_mu_fixed(P_MNIST, MNIST["steps"], MNIST["sigma"])
    assert mu == pytest.approx(MNIST["mu_clt_fixed"], rel=1e-13)
    assert gdp.epsilon(MNIST["delta"], mu) == pytest.approx(MNIST["eps_clt_fixed"], rel=1e-12)


def test_poisson_mnist() -> None:
    mu = clt.sgd_mu_poisson(P_MNIST, MNIST["steps"], MNIST["sigma"])
    assert mu == pytest.approx(MNIST["mu_clt_poisson"], rel=1e-13)
    assert gdp.epsilon(MNIST["delta"], mu) == pytest.approx(MNIST["eps_clt_poisson"], rel=1e-12)


@SETTINGS
@given(sigma=st.floats(0.3, 300.0), p=st.floats(1e-4, 0.5), steps=st.integers(1, 10**6))
def test_corollary_4_formula(sigma: float, p: float, steps: int) -> None:
    """Recipe: sqrt(2) p sqrt(T (e^{sigma^-2} Phi(1.5/sigma) + 3 Phi(-0.5/sigma) - 2)), mpmath 50 digits."""
    with mp.workdps(50):
        s = 1 / mp.mpf(sigma)
        chi2 = mp.exp(s**2) * mp.ncdf(1.5 * s) + 3 * mp.ncdf(-s / 2) - 2
        expected = mp.sqrt(2) * mp.mpf(p) * mp.sqrt(steps * chi2)
        assert clt.sgd_mu_fixed(p, steps, sigma) == pytest.approx(float(expected), rel=1e-10)
        assert clt.sgd_mu_poisson(p, steps, sigma) == pytest.approx(
            float(p * mp.sqrt(steps * mp.expm1(s**2))), rel=1e-12
        )


def test_sgd_formulas_vectorized() -> None:
    sigmas = np.array([0.8, 1.1, 4.0])
    vector = clt.sgd_mu_fixed(P_MNIST, MNIST["steps"], sigmas)
    assert list(vector) == [clt.sgd_mu_fixed(P_MNIST, MNIST["steps"], float(s)) for s in sigmas]


def test_berry_esseen_mnist() -> None:
    """Reference functionals are per step, of C_p(G_{1/sigma}) (Lemma 4); mu_tilde and gamma are Cor. 5 with T
    steps. Our kappa3bar (and so gamma) is larger by kl^3 (1-p)(2 Phi(mu/2) - 1) ~ 2.4e-15 (2e-9 relative):
    the slope -1 segment of C_p that Lemma 4 leaves out."""
    reference = MNIST["berry_esseen"]
    functionals = clt.subsampled_gaussian_functionals(P_MNIST, 1 / MNIST["sigma"])
    for name in ("kl", "kappa2", "kappa3bar"):
        assert getattr(functionals, name) == pytest.approx(reference[name], rel=1e-8), name
    segment = functionals.kl**3 * (1 - P_MNIST) * (2 * norm.cdf(0.5 / MNIST["sigma"]) - 1)
    assert functionals.kappa3bar - segment == pytest.approx(reference["kappa3bar"], rel=1e-11)
    result = clt.sgd_berry_esseen(P_MNIST, MNIST["steps"], MNIST["sigma"])
    assert result.mu == pytest.approx(reference["mu_tilde"], rel=1e-8)
    assert result.gamma == pytest.approx(reference["gamma"], rel=1e-8)
    assert result.mu >= reference["mu_tilde"] and result.gamma >= reference["gamma"]
    assert result.valid
    # ... but vacuous at delta = 1e-5: band_delta >= 1 - b(0) = 1 + gamma - G_mu(gamma) > 2 gamma
    assert clt.band_epsilon(MNIST["delta"], result.mu, result.gamma) == math.inf
    assert clt.band_delta(50.0, result.mu, result.gamma) > 2 * result.gamma
