"""The binomial-mixture pair of a group of K Poisson-sampled records (gdpcli.core.group).

Reference recipe (mpmath, 60 digits, computed here from the definition and nothing of the code under test):
w_j = C(K, j) q^j (1 - q)^{K-j}, L(x) = sum_j w_j exp(j mu x - (j mu)^2 / 2); the threshold x* with
L(x*) = e^eps (remove) or e^-eps (add) by 300 bisections on [-60, 60]; then the hockey-stick divergences
straight from their definition, H(P || Q) = sum_j w_j Phi(j mu - x*) - e^eps Phi(-x*) and
H(Q || P) = Phi(x*) - e^eps sum_j w_j Phi(x* - j mu) (their cancellation is harmless at 60 digits for the
values compared, all above 1e-40).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy.special import logsumexp

from gdpcli.core import gdp, group, pld, subsample

EPSILONS = np.array([-2.0, -0.3, 0.0, 0.05, 0.5, 1.5, 4.0, 8.0])


def reference(mu: float, q: float, k: int, eps: float, direction: str) -> mp.mpf:
    """The profile at eps by the recipe of the module docstring."""
    with mp.workdps(60):
        mu_, q_, eps_ = mp.mpf(mu), mp.mpf(q), mp.mpf(eps)
        w = [mp.binomial(k, j) * q_**j * (1 - q_) ** (k - j) for j in range(k + 1)]
        target = mp.exp(eps_) if direction == "remove" else mp.exp(-eps_)
        if target <= w[0]:
            return 1 - mp.exp(eps_) if direction == "remove" else mp.mpf(0)
        lo, hi = mp.mpf(-60), mp.mpf(60)
        for _ in range(300):
            mid = (lo + hi) / 2
            ratio = mp.fsum(w[j] * mp.exp(j * mu_ * mid - (j * mu_) ** 2 / 2) for j in range(k + 1))
            lo, hi = (mid, hi) if ratio < target else (lo, mid)
        x = (lo + hi) / 2
        if direction == "remove":
            return mp.fsum(w[j] * mp.ncdf(j * mu_ - x) for j in range(k + 1)) - mp.exp(eps_) * mp.ncdf(-x)
        return mp.ncdf(x) - mp.exp(eps_) * mp.fsum(w[j] * mp.ncdf(x - j * mu_) for j in range(k + 1))


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("q", [0.01, 0.3])
@pytest.mark.parametrize("mu", [0.5, 2.0])
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_profiles_match_mpmath(k: int, q: float, mu: float, direction: str) -> None:
    profile = (group.remove_profile if direction == "remove" else group.add_profile)(mu, q, k)
    computed = np.asarray(profile(EPSILONS))
    for eps, value in zip(EPSILONS, computed, strict=True):
        exact = reference(mu, q, k, float(eps), direction)
        if exact == 0:
            assert value == 0.0
        elif exact > mp.mpf("1e-40"):
            assert abs(value - exact) <= 1e-12 * exact, (eps, value, exact)


def test_kink_and_limits() -> None:
    mu, q, k = 1.0, 0.2, 3
    remove, add = group.remove_profile(mu, q, k), group.add_profile(mu, q, k)
    floor = k * math.log1p(-q)
    assert remove(floor - 0.1) == -math.expm1(floor - 0.1)
    assert add(-floor + 1e-9) == 0.0
    assert remove(math.inf) == 0.0 and add(math.inf) == 0.0 and add(-math.inf) == 1.0
    assert group.pair(mu, q, k).kink == floor


@pytest.mark.parametrize("q", [0.004, 0.3])
def test_group_of_one_is_the_poisson_pair(q: float) -> None:
    """K = 1 is the Poisson-subsampled Gaussian of core.subsample, to rounding (1e-12 relative)."""
    mu = 1 / 1.1
    eps = np.linspace(-5.0, 25.0, 3001)
    plain = [
        subsample.poisson_remove_profile(lambda e: gdp.delta(e, mu), q)(eps),
        subsample.poisson_add_profile(lambda e: gdp.delta(e, mu), q)(eps),
    ]
    ours = [group.remove_profile(mu, q, 1)(eps), group.add_profile(mu, q, 1)(eps)]
    for mine, theirs in zip(ours, plain, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-300)


def test_full_sampling_is_gaussian_at_k_times_mu() -> None:
    eps = np.linspace(-3.0, 10.0, 53)
    np.testing.assert_allclose(group.remove_profile(0.7, 1.0, 3)(eps), gdp.delta(eps, 2.1), rtol=1e-12)
    np.testing.assert_allclose(group.add_profile(0.7, 1.0, 3)(eps), gdp.delta(eps, 2.1), rtol=1e-12)


def test_bad_group_sizes() -> None:
    for k in (0, -1, 2.5, group.MAX_GROUP + 1):
        with pytest.raises(Exception, match="group size"):
            group.Mixture(1.0, 0.1, k)


def _monte_carlo(mu: float, q: float, k: int, steps: int, eps: float, n: int) -> tuple[float, float]:
    """A 99.99 % confidence interval for the composed profile's larger direction, by sampling the privacy
    loss of each direction (the likelihood ratio written out here with scipy) and averaging
    (1 - e^{eps - L})_+ (each sample in [0, 1]; mean +- 4 standard errors)."""
    rng = np.random.default_rng(7)
    j = np.arange(k + 1)
    log_w = np.array([math.log(math.comb(k, i)) + i * math.log(q) + (k - i) * math.log1p(-q) for i in j])

    def log_ratio(x: np.ndarray) -> np.ndarray:
        return logsumexp(log_w + np.multiply.outer(x, j * mu) - (j * mu) ** 2 / 2, axis=-1)

    from_p = rng.binomial(k, q, size=(n, steps)) * mu + rng.standard_normal((n, steps))
    from_q = rng.standard_normal((n, steps))
    losses = [log_ratio(from_p).sum(axis=1), -log_ratio(from_q).sum(axis=1)]
    intervals = []
    for loss in losses:
        sample = np.maximum(-np.expm1(eps - loss), 0.0)
        half = 4 * sample.std() / math.sqrt(n)
        intervals.append((sample.mean() - half, sample.mean() + half))
    return max(lo for lo, _ in intervals), max(hi for _, hi in intervals)


def test_pld_bounds_against_monte_carlo() -> None:
    """The PLD engine's bounds on 10 composed group steps bracket a Monte Carlo estimate: lower <= the
    estimate's upper confidence end and upper >= its lower end."""
    mu, q, k, steps, eps = 1.0, 0.3, 2, 10, 1.0
    bounds = pld.delta_bounds([(group.pair(mu, q, k), steps)], np.array([eps]), accuracy=1e-3)
    low, high = _monte_carlo(mu, q, k, steps, eps, 100_000)
    lower, upper = float(np.ravel(bounds.lower)[0]), float(np.ravel(bounds.upper)[0])
    assert lower <= high and upper >= low, (lower, upper, low, high)
    assert upper - lower < high - low  # the bounds are the sharper statement
