"""Tests for the subsampling CLT in gdpcli.core.clt: the chi-square functionals chi2(f), chi2_plus(f) of
GDP paper Theorem 11 and the limit mu, and the composed functionals behind -v.

Every expected value is an mpmath recipe written next to it, from the mechanism's distributions (never
from its profile, which the code under test integrates).
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from gdpcli.core import clt
from gdpcli.errors import ComputationError
from gdpcli.events import parse
from tests.conftest import at_least_digits


@mp.workdps(30)
def mp_chi_square(density_p, density_q, breaks) -> tuple[mp.mpf, mp.mpf]:
    """Recipe: chi2 = int (q - p)^2 / p and chi2_plus = int_{q > p} (q - p)^2 / p (= E_P (L - 1)^2 and
    E_P (L - 1)_+^2, L = q/p), by mpmath quadrature split at `breaks` (kinks and where q = p)."""

    def part(x, positive_only: bool):
        p, q = density_p(x), density_q(x)
        return (q - p) ** 2 / p if (q > p or not positive_only) else mp.mpf(0)

    chi2 = mp.quad(lambda x: part(x, False), breaks)
    chi2_plus = mp.quad(lambda x: part(x, True), breaks)
    return chi2, chi2_plus


@at_least_digits(30)
def mp_gaussian_chi_square(mu: float) -> tuple[mp.mpf, mp.mpf]:
    """N(0, 1) against N(mu, 1), q > p beyond mu/2."""
    mu = mp.mpf(mu)
    return mp_chi_square(mp.npdf, lambda x: mp.npdf(x, mu), [-mp.inf, mu / 2, mp.inf])


@at_least_digits(30)
def mp_laplace_chi_square(epsilon: float) -> tuple[mp.mpf, mp.mpf]:
    """Lap(0, 1) against Lap(eps, 1): kinks at 0 and eps, q > p beyond eps/2."""
    e = mp.mpf(epsilon)
    return mp_chi_square(
        lambda x: mp.exp(-abs(x)) / 2, lambda x: mp.exp(-abs(x - e)) / 2, [-mp.inf, 0, e / 2, e, mp.inf]
    )


@mp.workdps(30)
def mp_randomized_response_chi_square(epsilon: float) -> tuple[mp.mpf, mp.mpf]:
    """f_{eps,0} = T(Bern(1/(1+e^eps)), Bern(e^eps/(1+e^eps))) (GDP paper eq. 4): sums over the two points."""
    e = mp.mpf(epsilon)
    low, high = 1 / (1 + mp.exp(e)), mp.exp(e) / (1 + mp.exp(e))
    p, q = [1 - low, low], [1 - high, high]
    terms = [(qi - pi) ** 2 / pi for pi, qi in zip(p, q, strict=True)]
    return mp.fsum(terms), mp.fsum(t for t, pi, qi in zip(terms, p, q, strict=True) if qi > pi)


def assert_chi_square(actual: clt.ChiSquare, expected: tuple[mp.mpf, mp.mpf], rel: float) -> None:
    assert float(actual.chi2) == pytest.approx(float(expected[0]), rel=rel)
    assert float(actual.chi2_plus) == pytest.approx(float(expected[1]), rel=rel)


@pytest.mark.parametrize("mu", [0.05, 0.5, 1.0, 2.5])
def test_gaussian_closed_forms(mu: float) -> None:
    """chi2(G_mu) = e^{mu^2} - 1 and Lemma 3's chi2_plus, against the integrals of the densities."""
    assert_chi_square(clt.gaussian_chi_square(mu), mp_gaussian_chi_square(mu), rel=1e-12)


@pytest.mark.parametrize("mu", [0.01, 0.3, 1.0, 3.0])
def test_quadrature_of_the_gaussian_profile_reduces_to_lemma_3(mu: float) -> None:
    """The profile route (used for every non-Gaussian mechanism) on G_mu gives Lemma 3 and e^{mu^2} - 1 to
    round-off, so Theorem 11's mu through it is Cor. 4's closed form."""
    found = clt.chi_square_from_profile(parse(f"gdp:mu={mu}").mechanism.profile)
    assert_chi_square(found, mp_gaussian_chi_square(mu), rel=1e-10)
    assert found.rel_error < 1e-10


@pytest.mark.parametrize("epsilon", [0.01, 0.5, 1.0, 3.0])
def test_laplace(epsilon: float) -> None:
    mechanism = parse(f"laplace:eps={epsilon}").mechanism
    found = clt.chi_square_from_profile(mechanism.profile, mechanism.pure_epsilon)
    assert_chi_square(found, mp_laplace_chi_square(epsilon), rel=1e-9)


def test_laplace_closed_form_of_the_recipe() -> None:
    """The recipe itself against the closed forms derived by hand from the densities:
    chi2 = (2/3) e^eps + (1/3) e^{-2 eps} - 1, chi2_plus = (2/3) e^eps + (4/3) e^{-eps/2} - 2."""
    with mp.workdps(30):
        e = mp.mpf(1)
        chi2, chi2_plus = mp_laplace_chi_square(1.0)
        assert chi2 == pytest.approx(2 * mp.exp(e) / 3 + mp.exp(-2 * e) / 3 - 1, rel=1e-20)
        assert chi2_plus == pytest.approx(2 * mp.exp(e) / 3 + 4 * mp.exp(-e / 2) / 3 - 2, rel=1e-20)


@pytest.mark.parametrize("spec", ["dp:eps=0.2", "dp:eps=1", "rr:keep=0.9"])
def test_pure_dp(spec: str) -> None:
    mechanism = parse(spec).mechanism
    found = clt.chi_square_from_profile(mechanism.profile, mechanism.pure_epsilon)
    assert_chi_square(found, mp_randomized_response_chi_square(mechanism.pure_epsilon), rel=1e-12)


def test_discrete_gaussian() -> None:
    """Recipe: sums over the integers of N_Z(0, sigma^2) against N_Z(1, sigma^2); chi2 is e^{1/sigma^2} - 1
    exactly (complete the square in sum_k p_{k-1}^2 / p_k). Its profile has a kink at every loss value:
    the quadrature is accurate to ~1e-7 there (accepted: the figure is a CLT approximation)."""
    with mp.workdps(30):
        sigma = 1.5
        ks = range(-60, 61)
        weights = {k: mp.exp(-(mp.mpf(k) ** 2) / (2 * sigma**2)) for k in range(-61, 62)}
        total = mp.fsum(weights[k] for k in ks)
        p = {k: weights[k] / total for k in range(-61, 62)}
        chi2 = mp.fsum((p[k - 1] - p[k]) ** 2 / p[k] for k in ks)
        chi2_plus = mp.fsum((p[k - 1] - p[k]) ** 2 / p[k] for k in ks if k >= 1)  # p_{k-1} > p_k iff k >= 1
        assert chi2 == pytest.approx(mp.expm1(1 / mp.mpf(sigma) ** 2), rel=1e-20)
        mechanism = parse(f"dgauss:sigma={sigma}").mechanism
        assert_chi_square(clt.chi_square_from_profile(mechanism.profile), (chi2, chi2_plus), rel=1e-5)


def test_delta_part_makes_it_infinite() -> None:
    """f_{eps,delta} with delta > 0 has f(0) = 1 - delta < 1: its profile never falls below delta."""
    mechanism = parse("dp:eps=1,delta=1e-3").mechanism
    with pytest.raises(ComputationError, match="infinite"):
        clt.chi_square_from_profile(mechanism.profile)


@pytest.mark.parametrize("fixed", [True, False])
def test_limit_mu_formulas(fixed: bool) -> None:
    """Theorem 11: p sqrt(T) sqrt(2 chi2_plus) for fixed-size batches; Poisson: p sqrt(T chi2). Laplace
    eps = 1 at p = 0.01, T = 10^4 (nu = 1), recipe from the densities."""
    with mp.workdps(30):
        chi2, chi2_plus = mp_laplace_chi_square(1.0)
        expected = mp.sqrt(2 * chi2_plus) if fixed else mp.sqrt(chi2)
        chi_square = clt.ChiSquare(float(chi2), float(chi2_plus))
        assert clt.subsampling_limit_mu(0.01, 10_000, chi_square, fixed=fixed) == pytest.approx(
            float(expected), rel=1e-14
        )


def test_limit_mu_vectorized() -> None:
    chi_square = clt.gaussian_chi_square(1.0)
    rates = np.array([0.001, 0.01, 0.1])
    vector = clt.subsampling_limit_mu(rates, 100, chi_square, fixed=True)
    assert list(vector) == [clt.subsampling_limit_mu(float(p), 100, chi_square, fixed=True) for p in rates]


def test_composed_functionals_are_weighted_sums() -> None:
    """sum_i times_i functional(f_i): G_1 twice and f_{0.5,0} three times; recipe: kl(G_mu) = mu^2/2,
    kappa2(G_mu) = mu^2 + mu^4/4, kl(f_{eps,0}) = eps tanh(eps/2), kappa2 = eps^2, kappa3 = eps^3."""
    with mp.workdps(30):
        total = clt.composed([clt.gaussian_functionals(1.0), clt.pure_dp_functionals(0.5)], [2, 3])
        e = mp.mpf("0.5")
        assert total.kl == pytest.approx(float(2 * mp.mpf(1) / 2 + 3 * e * mp.tanh(e / 2)), rel=1e-14)
        assert total.kappa2 == pytest.approx(float(2 * (1 + mp.mpf(1) / 4) + 3 * e**2), rel=1e-14)
        gaussian_kappa3 = mp.quad(lambda x: abs(x) ** 3 * mp.npdf(x, -0.5, 1), [-mp.inf, -0.5, 0, mp.inf])
        assert total.kappa3 == pytest.approx(float(2 * gaussian_kappa3 + 3 * e**3), rel=1e-12)
        theorem6 = 2 * 3 * e * mp.tanh(e / 2) / mp.sqrt(3 * e**2)  # 2K/s
        assert clt.limit_mu([clt.pure_dp_functionals(0.5)], [3]) == pytest.approx(float(theorem6), rel=1e-14)
