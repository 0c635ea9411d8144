"""Arguments at the ends of the float range reach the numerics without a floating-point warning (which would
reach a user's stderr), and give the float nearest the true value."""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from scipy.stats import norm

from gdpcli.core import gdp, gdpt


@pytest.fixture(autouse=True)
def warnings_fail() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@mp.workdps(40)
def test_log_delta_over_density_far_out() -> None:
    """log(M(x) - M(x + mu)) with M the Mills ratio, 1/t - 1/t^3 + ...: log(1 / (x (x + 1))) to 1e-400
    relative at x = 1e200, mu = 1; at x = 1e100, mu = 1e-300 the difference underflows (delta is 0 in
    floating point there: it is at most mu / x), and the log is -inf."""
    x = mp.mpf("1e200")
    values = gdp.log_delta_over_density(np.array([-1e200, -1e100]), np.array([1.0, 1e-300]))
    assert values[0] == pytest.approx(float(-mp.log(x * (x + 1))), rel=1e-13)
    assert values[1] == -np.inf


def test_mu_at_an_epsilon_near_the_float_range() -> None:
    """delta(eps; mu) = Phi(-a) - e^eps Phi(-b), a = eps/mu - mu/2, b = a + mu: the second term is about a/b
    (1e-150) of the first here, so delta = 1e-5 at a = z = Phi^-1(1 - 1e-5): mu = sqrt(z^2 + 2 eps) - z."""
    z = norm.isf(1e-5)
    assert gdp.mu(np.array([1e300]), 1e-5)[0] == pytest.approx(math.sqrt(z * z + 2e300) - z, rel=1e-12)


def test_noise_family_with_sigma_beyond_the_float_range() -> None:
    """delta(eps) = min(1, B exp(-(sigma eps / A)^2)): at sigma = 1e300 and eps = 1e-300 the square is 1/4;
    at eps = 1 it is beyond the float range and delta = 0; the tail limit A / (sigma sqrt 2) is inf for
    A = 1e300, sigma = 1e-300 (a quotient beyond the float range)."""
    profile = gdpt.noise_family_profile(2.0, 1.0, 1e300)
    np.testing.assert_array_equal(profile.log_delta(np.array([0.0, 1.0])), [0.0, -np.inf])
    assert profile.log_delta(np.array([1e-300]))[0] == pytest.approx(-0.25, rel=1e-15)
    assert gdpt.noise_family_profile(1e300, 1e300, 1e-300).tail_limit == math.inf


@pytest.mark.parametrize("law", ["poisson_gaussian_law", "fixed_gaussian_law"])
def test_edgeworth_laws_at_full_sampling_rate_are_the_gaussian(law: str) -> None:
    """p = 1 (every record in every batch; log(1 - p) = -inf): the privacy loss of G_mu, N(-mu^2/2, mu^2)
    under P and N(mu^2/2, mu^2) under Q, whose third and fourth cumulants vanish."""
    from gdpcli.core import edgeworth

    mu = 1.5
    pair = getattr(edgeworth, law)(1.0, mu).pair()
    for cumulants, mean in ((pair.under_p, -0.5 * mu * mu), (pair.under_q, 0.5 * mu * mu)):
        assert cumulants.k1 == pytest.approx(mean, rel=1e-12)
        assert cumulants.k2 == pytest.approx(mu * mu, rel=1e-12)
        assert abs(cumulants.k3) < 1e-12 and abs(cumulants.k4) < 1e-12
