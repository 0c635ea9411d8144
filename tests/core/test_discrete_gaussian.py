"""The discrete Gaussian N_Z(0, sigma^2) (gdpcli.core.discrete_gaussian; Canonne, Kamath and Steinke 2020)
against independent mpmath sums over the integers and dp-accounting's DiscreteGaussianPrivacyLoss."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from gdpcli.core import discrete_gaussian as dg
from gdpcli.errors import ComputationError
from tests.conftest import at_least_digits

CASES = [(0.5, 1), (1.0, 1), (3.0, 1), (3.0, 2)]
EPSILONS = [-1.0, 0.0, 0.3, 1.0, 2.5, 5.0]


@mp.workdps(60)
def mp_masses(sigma: float, sens: int, epsilon: float) -> tuple[list[int], mp.mpf, mp.mpf]:
    """(support, Z, e^eps) in mpmath: the support reaches past both the noise's 60 sigma and the
    threshold sigma^2 eps / sens, so every term that matters at 60 digits is summed."""
    reach = int(60 * sigma + abs(epsilon) * sigma**2 / sens) + 2 * sens + 5
    support = list(range(-reach, reach + 1))
    z = mp.fsum(mp_weight(x, sigma) for x in support)
    return support, z, mp.exp(mp.mpf(epsilon))


@at_least_digits(60)
def mp_weight(x: int, sigma: float) -> mp.mpf:
    return mp.exp(-(mp.mpf(x) ** 2) / (2 * mp.mpf(sigma) ** 2))


@at_least_digits(60)
def mp_delta(sigma: float, sens: int, epsilon: float) -> mp.mpf:
    """delta(eps) = sum_x (P(x) - e^eps Q(x))_+ at 60 digits, P = N_Z(0, s^2), Q = N_Z(k, s^2)."""
    support, z, e = mp_masses(sigma, sens, epsilon)
    terms = (mp_weight(x, sigma) - e * mp_weight(x - sens, sigma) for x in support)
    return mp.fsum(t for t in terms if t > 0) / z


@pytest.mark.parametrize(("sigma", "sens"), CASES)
def test_profile_matches_mpmath_sum(sigma: float, sens: int) -> None:
    got = np.asarray(dg.profile(EPSILONS, sigma, sens))
    for eps, value in zip(EPSILONS, got, strict=True):
        assert value == pytest.approx(float(mp_delta(sigma, sens, eps)), rel=1e-12, abs=0.0)


@pytest.mark.parametrize(("sigma", "sens", "epsilon"), [(1.0, 1, 60.0), (3.0, 1, 20.0), (0.5, 2, 40.0)])
def test_log_profile_beyond_the_table(sigma: float, sens: int, epsilon: float) -> None:
    """Past the table (delta below the smallest double) the summed far tail is exact in log space."""
    with mp.workdps(60):
        expected = float(mp.log(mp_delta(sigma, sens, epsilon)))
        assert float(dg.log_profile(epsilon, sigma, sens)) == pytest.approx(expected, rel=1e-12)
        assert (
            float(dg.profile(epsilon, sigma, sens)) == 0.0
            or math.log(dg.profile(epsilon, sigma, sens)) >= expected
        )


def test_profile_ends_and_vectorization() -> None:
    assert dg.profile(math.inf, 2.0) == 0.0
    assert dg.profile(-math.inf, 2.0) == 1.0
    eps = np.linspace(-2.0, 6.0, 41)
    scalars = [float(dg.profile(e, 1.5, 2)) for e in eps]
    assert np.array_equal(np.asarray(dg.profile(eps, 1.5, 2)), np.asarray(scalars))
    values = np.asarray(dg.profile(eps, 1.5, 2))
    assert np.all(np.diff(values) <= 0.0)


@pytest.mark.parametrize(("sigma", "sens"), CASES)
def test_tradeoff_vertices_and_symmetry(sigma: float, sens: int) -> None:
    """At the Neyman-Pearson vertices (reject x >= t) f(alpha_t) = beta_t (mpmath), and f = f^-1."""
    with mp.workdps(60):
        support, z, _ = mp_masses(sigma, sens, 0.0)
        for t in range(-2, sens + 3):
            alpha = mp.fsum(mp_weight(x, sigma) for x in support if x >= t) / z
            beta = mp.fsum(mp_weight(x - sens, sigma) for x in support if x < t) / z
            assert float(dg.tradeoff(float(alpha), sigma, sens)) == pytest.approx(
                float(beta), rel=1e-9, abs=1e-15
            )
        alpha = np.linspace(0.0, 1.0, 201)
        beta = np.asarray(dg.tradeoff(alpha, sigma, sens))
        assert np.all(np.diff(beta) <= 1e-15) and np.all(beta <= 1.0 - alpha + 1e-15)
        inverse = np.interp(alpha, beta[::-1], alpha[::-1])  # f^-1 on the same grid
        assert np.asarray(dg.tradeoff(beta, sigma, sens)) == pytest.approx(alpha, abs=5e-3)
        assert inverse == pytest.approx(beta, abs=5e-3)


@pytest.mark.parametrize(("sigma", "sens"), CASES)
def test_profile_is_the_conjugate_of_the_tradeoff(sigma: float, sens: int) -> None:
    """delta(eps) = sup_alpha 1 - f(alpha) - e^eps alpha (GDP paper Prop. 6), the sup at a vertex."""
    alphas = np.linspace(0.0, 1.0, 200001)
    betas = np.asarray(dg.tradeoff(alphas, sigma, sens))
    for eps in (0.0, 0.5, 1.5):
        best = float(np.max(1.0 - betas - math.exp(eps) * alphas))
        assert best <= float(dg.profile(eps, sigma, sens)) + 1e-12
        assert best == pytest.approx(float(dg.profile(eps, sigma, sens)), abs=2e-4)


@pytest.mark.parametrize(("sigma", "sens"), CASES)
def test_moments_match_mpmath(sigma: float, sens: int) -> None:
    with mp.workdps(60):
        support, z, _ = mp_masses(sigma, sens, 0.0)
        s2 = 2 * mp.mpf(sigma) ** 2
        loss = {x: (2 * sens * x - sens**2) / s2 for x in support}  # log(q/p)
        p = {x: mp_weight(x, sigma) / z for x in support}
        kl = -mp.fsum(p[x] * loss[x] for x in support)
        got = dg.moments(sigma, sens)
        assert got.kl == pytest.approx(float(kl), rel=1e-13)
        assert got.kappa2 == pytest.approx(float(mp.fsum(p[x] * loss[x] ** 2 for x in support)), rel=1e-13)
        assert got.kappa3 == pytest.approx(
            float(mp.fsum(p[x] * abs(loss[x]) ** 3 for x in support)), rel=1e-13
        )
        assert got.kappa3bar == pytest.approx(
            float(mp.fsum(p[x] * abs(loss[x] + kl) ** 3 for x in support)), rel=1e-13
        )
        assert got.variance == pytest.approx(
            float(mp.fsum(p[x] * (loss[x] + kl) ** 2 for x in support)), rel=1e-13
        )


def test_rdp_is_the_zcdp_line() -> None:
    """[CKS20]: (sens^2 / (2 sigma^2))-zCDP, i.e. eps(alpha) = alpha sens^2 / (2 sigma^2)."""
    assert np.asarray(dg.rdp([2.0, 8.0], 2.0, 3)) == pytest.approx([2.0 * 9 / 8, 8.0 * 9 / 8])


def test_refuses_tables_it_cannot_build() -> None:
    with pytest.raises(ComputationError, match="points"):
        dg.profile(1.0, 1e6)
    with pytest.raises(ComputationError, match="sigma"):
        dg.table(0.0)


@pytest.mark.parametrize(("sigma", "sens"), [(1.0, 1), (3.0, 2), (10.0, 1)])
def test_matches_dp_accounting_discrete_gaussian(sigma: float, sens: int) -> None:
    """dp-accounting's DiscreteGaussianPrivacyLoss (truncated far beyond the noise) gives the same delta."""
    mechanism = pytest.importorskip("dp_accounting.pld.privacy_loss_mechanism")
    loss = mechanism.DiscreteGaussianPrivacyLoss(sigma, sens, truncation_bound=int(60 * sigma) + sens)
    for eps in (0.0, 0.5, 1.0, 2.0):
        assert float(dg.profile(eps, sigma, sens)) == pytest.approx(
            loss.get_delta_for_epsilon(eps), rel=1e-11
        )


def test_composition_brackets_dp_accounting() -> None:
    """Ten discrete Gaussians (sigma 5) at delta 1e-5: gdpcli's rigorous PLD bracket and dp-accounting's
    pessimistic/optimistic pair overlap; at accuracy 1e-4 the bracket is narrower than 1e-3."""
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    from gdpcli import account, events

    def theirs(pessimistic: bool) -> float:
        one = pld.from_discrete_gaussian_mechanism(
            5.0, value_discretization_interval=1e-4, pessimistic_estimate=pessimistic
        )
        return one.self_compose(10).get_epsilon_for_delta(1e-5)

    figures = {
        str(f.guarantee): f.value
        for f in account.epsilon(events.parse("dgauss:sigma=5x10"), 1e-5, accuracy=1e-4)
    }
    lower, upper = figures["lower_bound"], figures["upper_bound"]
    assert max(lower, theirs(False)) <= min(upper, theirs(True))
    assert upper - lower < 1e-3
