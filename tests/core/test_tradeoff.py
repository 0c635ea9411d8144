"""Tests for gdpcli.core.tradeoff: closed forms, grids, conversions, group privacy.

Expected numbers come from tests/data/values.json or from mpmath recipes written here.
"""

from __future__ import annotations

import itertools

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.core import gdp
from gdpcli.core.hull import lower_hull
from gdpcli.core.tradeoff import (
    Grid,
    alpha_grid,
    convexify,
    eps_delta_profile,
    eps_delta_tradeoff,
    extend_to_negative,
    grid_from_tradeoff,
    group_tradeoff,
    inverse,
    laplace_profile,
    laplace_tradeoff,
    profile_from_grid,
    symmetrize,
    tradeoff_from_profile,
)
from gdpcli.errors import InputError
from tests.conftest import REFERENCE, eps_delta_grid

SETTINGS = settings(max_examples=30, deadline=None)
UNIFORM = np.linspace(0.0, 1.0, 401)


def assert_tradeoff(beta: np.ndarray, alpha: np.ndarray = UNIFORM, tol: float = 1e-12) -> None:
    """A trade-off function on a uniform grid: in [0, 1 - alpha], non-increasing, convex."""
    assert np.all(beta >= -tol) and np.all(beta <= 1.0 - alpha + tol)
    assert np.all(np.diff(beta) <= tol)
    assert np.all(np.diff(beta, 2) >= -1e-10)


@mp.workdps(40)
def mp_gaussian_profile(epsilon: float, mu: float) -> float:
    """H_{e^eps}(N(mu,1) || N(0,1)) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), all eps (Cor. 1)."""
    e, m = mp.mpf(epsilon), mp.mpf(mu)
    return float(mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2))


@mp.workdps(30)
def mp_laplace_profile(epsilon: float, epsilon0: float) -> float:
    """H_{e^eps}(Lap(eps0, 1) || Lap(0, 1)) = int (q - e^eps p)_+ dx by quadrature, split at the kinks."""
    e, e0 = mp.mpf(epsilon), mp.mpf(epsilon0)

    def integrand(x: mp.mpf) -> mp.mpf:
        return max(mp.mpf(0), mp.exp(-abs(x - e0)) / 2 - mp.exp(e) * mp.exp(-abs(x)) / 2)

    kink = min(max((e + e0) / 2, mp.mpf(0)), e0)
    return float(mp.quad(integrand, [-mp.inf, 0, kink, e0, mp.inf]))


@mp.workdps(40)
def mp_eps_delta_profile(epsilon: float, epsilon0: float, delta0: float) -> float:
    """Hockey-stick divergence of the 4-point tight pair of (eps0, delta0)-DP (Kairouz et al.), any real eps:
    P = (delta0, (1-delta0) e^eps0/(1+e^eps0), (1-delta0)/(1+e^eps0), 0), Q = P reversed."""
    d0, w = mp.mpf(delta0), mp.exp(mp.mpf(epsilon0))
    p = [d0, (1 - d0) * w / (1 + w), (1 - d0) / (1 + w), mp.mpf(0)]
    q = p[::-1]
    return float(sum(max(mp.mpf(0), qi - mp.exp(mp.mpf(epsilon)) * pi) for pi, qi in zip(p, q, strict=True)))


def gaussian_grid(mu: float, size: int = 4001) -> Grid:
    return grid_from_tradeoff(lambda a: gdp.tradeoff(a, mu), alpha_grid(size))


# --- closed forms -------------------------------------------------------------------------------------


@pytest.mark.parametrize("row", REFERENCE["laplace_tradeoff"]["tradeoff"])
def test_laplace_tradeoff_reference(row: dict) -> None:
    epsilon0 = REFERENCE["laplace_tradeoff"]["mu"]
    assert laplace_tradeoff(row["alpha"], epsilon0) == pytest.approx(row["beta"], rel=1e-14)


@pytest.mark.parametrize("epsilon", [-2.5, -0.7, -0.1, 0.0, 0.3, 1.0, 1.9, 2.5])
def test_laplace_profile_matches_quadrature(epsilon: float) -> None:
    assert laplace_profile(epsilon, 2.0) == pytest.approx(
        mp_laplace_profile(epsilon, 2.0), rel=1e-12, abs=1e-15
    )


@pytest.mark.parametrize("epsilon", [-3.0, -1.0, -0.2, 0.0, 0.5, 1.5, 3.0])
def test_eps_delta_profile_matches_tight_pair(epsilon: float) -> None:
    expected = mp_eps_delta_profile(epsilon, 1.5, 1e-3)
    assert eps_delta_profile(epsilon, 1.5, 1e-3) == pytest.approx(expected, rel=1e-13, abs=1e-16)


def test_eps_delta_profile_large_epsilon0_does_not_overflow() -> None:
    assert eps_delta_profile(800.0, 1000.0, 1e-6) == pytest.approx(1.0, rel=1e-12)


@SETTINGS
@given(st.floats(0.0, 5.0), st.floats(0.0, 0.5))
def test_eps_delta_tradeoff_is_symmetric_tradeoff(epsilon0: float, delta0: float) -> None:
    beta = eps_delta_tradeoff(UNIFORM, epsilon0, delta0)
    assert_tradeoff(beta)
    assert np.allclose(inverse(eps_delta_grid(epsilon0, delta0))(UNIFORM), beta, atol=1e-12)


@SETTINGS
@given(st.floats(0.0, 6.0))
def test_laplace_tradeoff_is_symmetric_tradeoff(epsilon0: float) -> None:
    beta = laplace_tradeoff(UNIFORM, epsilon0)
    assert_tradeoff(beta)
    grid = grid_from_tradeoff(lambda a: laplace_tradeoff(a, epsilon0), alpha_grid(4001))
    assert np.allclose(inverse(grid)(UNIFORM), grid(UNIFORM), atol=1e-5)


# --- grids --------------------------------------------------------------------------------------------


def test_grid_rounds_toward_safe_side() -> None:
    grid = Grid(np.array([0.0, 0.5, 0.6, 1.0]), np.array([1.2, 0.3, 0.35, 0.1]))
    assert np.array_equal(grid.beta, [1.0, 0.3, 0.3, 0.0])


@pytest.mark.parametrize(
    ("alpha", "beta"),
    [
        ([0.1, 1.0], [0.5, 0.0]),
        ([0.0, 0.9], [1.0, 0.0]),
        ([0.0, 0.5, 0.5, 1.0], [1, 0.5, 0.5, 0]),
        ([0.0], [1.0]),
    ],
)
def test_grid_rejects_bad_knots(alpha: list, beta: list) -> None:
    with pytest.raises(InputError):
        Grid(np.array(alpha, dtype=float), np.array(beta, dtype=float))


def test_inverse_of_gaussian_is_gaussian() -> None:
    grid = gaussian_grid(1.3)
    assert np.max(np.abs(inverse(grid)(UNIFORM) - gdp.tradeoff(UNIFORM, 1.3))) < 1e-5
    twice = inverse(inverse(grid))
    assert np.allclose(twice(UNIFORM), grid(UNIFORM), atol=1e-14)


def test_inverse_handles_flat_parts() -> None:
    # f_{1, 0.2}: f(0) = 0.8 < 1 and f = 0 on [0.8, 1]; f^-1 = 0 on [0.8, 1] and f^-1(0) = 0.8.
    flipped = inverse(eps_delta_grid(1.0, 0.2))
    assert flipped(0.0) == pytest.approx(0.8) and flipped(0.9) == 0.0
    assert np.allclose(flipped(UNIFORM), eps_delta_tradeoff(UNIFORM, 1.0, 0.2), atol=1e-14)


@SETTINGS
@given(st.lists(st.floats(0.0, 1.0), min_size=3, max_size=40))
def test_convexify_is_greatest_convex_minorant(values: list) -> None:
    knots = np.linspace(0.0, 1.0, len(values))
    grid = Grid(knots, np.sort(values)[::-1])
    hull = convexify(grid)
    assert set(hull.alpha) <= set(knots)
    assert np.all(hull(knots) <= grid.beta + 1e-12)
    assert np.all(np.diff(np.diff(hull.beta) / np.diff(hull.alpha)) >= -1e-9)
    assert np.allclose(convexify(hull)(UNIFORM), hull(UNIFORM), atol=1e-14)


@pytest.mark.parametrize(("mu", "p"), [(4.99, 0.98), (4.3, 0.55), (1.4, 0.05)])
def test_convexify_exact_where_tradeoff_is_steep(mu: float, p: float) -> None:
    """Near alpha = 0 slopes reach 1e10; a globally-toleranced hull would cut above data points there. The
    reference is the hull without Qhull's candidates (lower_hull, checked against the definition in
    test_hull.py)."""
    grid = gaussian_grid(mu, 2301)
    mixed = Grid(grid.alpha, p * grid.beta + (1 - p) * (1 - grid.alpha))
    for knots, values in (
        (mixed.alpha, np.minimum(mixed.beta, inverse(mixed)(mixed.alpha))),
        (mixed.alpha, mixed.beta),
    ):
        hull = convexify(Grid(knots, values))
        reference = lower_hull(knots, values)
        assert np.all(hull(knots) <= values + 1e-15)
        assert np.max(np.abs(hull(knots) - np.interp(knots, knots[reference], values[reference]))) < 1e-15


def mixed_gaussian(mu: float, p: float) -> Grid:
    """An asymmetric trade-off function: p G_mu + (1 - p) Id (built here, independent of subsample.py)."""
    grid = gaussian_grid(mu, 2001)
    return Grid(grid.alpha, p * grid.beta + (1 - p) * (1 - grid.alpha))


@SETTINGS
@given(st.floats(0.2, 4.0), st.floats(0.05, 0.95))
def test_symmetrize_is_symmetric_tradeoff_below_both(mu: float, p: float) -> None:
    grid = mixed_gaussian(mu, p)
    result = symmetrize(grid)
    beta = result(UNIFORM)
    assert_tradeoff(beta)
    assert np.allclose(inverse(result)(UNIFORM), beta, atol=1e-12)
    assert np.all(beta <= np.minimum(grid(UNIFORM), inverse(grid)(UNIFORM)) + 1e-12)


# --- profile <-> trade-off ----------------------------------------------------------------------------

EPSILONS = np.array([-2.0, -0.5, 0.0, 0.25, 1.0, 2.0, 3.5])


def test_profile_from_grid_brackets_and_converges_gaussian() -> None:
    expected = np.array([mp_gaussian_profile(e, 1.0) for e in EPSILONS])
    gaps = []
    for size in (200, 2000, 20000):
        grid = gaussian_grid(1.0, size)
        lower = profile_from_grid(grid, EPSILONS, upper=False)
        upper = profile_from_grid(grid, EPSILONS, upper=True)
        assert np.all(lower <= expected + 1e-15) and np.all(expected <= upper + 1e-15)
        gaps.append(np.max(upper - lower))
    assert gaps[0] > gaps[1] > gaps[2] and gaps[2] < 1e-3
    assert np.allclose(
        profile_from_grid(gaussian_grid(1.0, 20000), EPSILONS, upper=False), expected, atol=1e-8
    )


def test_profile_from_grid_laplace_converges() -> None:
    expected = np.array([mp_laplace_profile(e, 1.0) for e in EPSILONS])
    grid = grid_from_tradeoff(lambda a: laplace_tradeoff(a, 1.0), alpha_grid(20000))
    lower = profile_from_grid(grid, EPSILONS, upper=False)
    upper = profile_from_grid(grid, EPSILONS, upper=True)
    assert np.all(lower <= expected + 1e-15) and np.all(expected <= upper + 1e-15)
    assert np.allclose(lower, expected, atol=1e-8)


def test_profile_of_piecewise_linear_grid_is_exact() -> None:
    expected = [mp_eps_delta_profile(e, 1.2, 0.05) for e in EPSILONS]
    assert np.allclose(
        profile_from_grid(eps_delta_grid(1.2, 0.05), EPSILONS, upper=False), expected, atol=1e-15
    )


def test_profile_scalar_in_float_out() -> None:
    assert isinstance(profile_from_grid(gaussian_grid(1.0, 500), 0.5), float)


def test_extend_to_negative_asymmetric() -> None:
    grid = mixed_gaussian(1.5, 0.3)
    flipped = inverse(grid)
    extended = extend_to_negative(
        lambda e: profile_from_grid(grid, e, upper=False),
        lambda e: profile_from_grid(flipped, e, upper=False),
    )
    assert np.allclose(extended(EPSILONS), profile_from_grid(grid, EPSILONS, upper=False), atol=1e-14)


@pytest.mark.parametrize("row", REFERENCE["gdp_tradeoff"])
def test_tradeoff_from_profile_recovers_gaussian(row: dict) -> None:
    mu, expected = row["mu"], float(row["beta"])
    beta = tradeoff_from_profile(lambda e: gdp.delta(e, mu), row["alpha"], np.linspace(-20.0, 20.0, 40001))
    assert beta <= expected + 1e-15
    assert beta == pytest.approx(expected, rel=1e-6, abs=1e-9)


@pytest.mark.parametrize("row", REFERENCE["laplace_tradeoff"]["tradeoff"])
def test_tradeoff_from_profile_recovers_laplace(row: dict) -> None:
    beta = tradeoff_from_profile(
        lambda e: laplace_profile(e, 1.0), row["alpha"], np.linspace(-5.0, 5.0, 20001)
    )
    assert row["beta"] - 1e-6 <= beta <= row["beta"] + 1e-15


def test_tradeoff_from_profile_asymmetric_needs_negative_epsilons() -> None:
    grid = mixed_gaussian(2.0, 0.4)
    profile = lambda e: profile_from_grid(grid, e, upper=False)  # noqa: E731
    full = tradeoff_from_profile(profile, UNIFORM, np.linspace(-12.0, 12.0, 4001))
    assert_tradeoff(full, tol=1e-9)
    assert np.all(full <= grid(UNIFORM) + 1e-12) and np.max(grid(UNIFORM) - full) < 1e-4
    positive_only = tradeoff_from_profile(profile, UNIFORM, np.linspace(0.0, 12.0, 2001))
    assert np.max(full - positive_only) > 0.05


def test_tradeoff_from_profile_keeps_shape() -> None:
    beta = tradeoff_from_profile(lambda e: gdp.delta(e, 1.0), np.full((2, 3), 0.3), np.linspace(-5, 5, 11))
    assert beta.shape == (2, 3)
    with pytest.raises(InputError):
        tradeoff_from_profile(lambda e: gdp.delta(e, 1.0), 0.3, np.array([0.0, np.inf]))


# --- group privacy -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("row_index", "mu", "group_size"), [(0, 0.5, 2), (1, 0.25, 2), (2, 1.0, 3), (3, 0.5, 4)]
)
def test_group_privacy_of_gdp_is_k_mu(row_index: int, mu: float, group_size: int) -> None:
    row = REFERENCE["gdp_tradeoff"][row_index]
    assert mu * group_size == row["mu"]
    beta = group_tradeoff(lambda a: gdp.tradeoff(a, mu), row["alpha"], group_size)
    assert beta == pytest.approx(float(row["beta"]), rel=1e-11)


@SETTINGS
@given(st.floats(0.05, 2.0), st.integers(1, 6))
def test_group_privacy_gdp_and_shape(mu: float, group_size: int) -> None:
    beta = group_tradeoff(lambda a: gdp.tradeoff(a, mu), UNIFORM, group_size)
    with mp.workdps(30):
        expected = [
            float(mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * mp.mpf(a) - 1) - group_size * mp.mpf(mu)))
            for a in UNIFORM[1:-1:40]
        ]
        assert np.allclose(beta[1:-1:40], expected, atol=1e-13)
        assert_tradeoff(beta)


@SETTINGS
@given(st.floats(0.01, 2.0), st.floats(0.0, 0.1), st.integers(1, 8))
def test_group_privacy_of_eps_delta_is_tradeoff(epsilon0: float, delta0: float, group_size: int) -> None:
    assert_tradeoff(group_tradeoff(lambda a: eps_delta_tradeoff(a, epsilon0, delta0), UNIFORM, group_size))


def test_group_privacy_of_pure_dp_approaches_laplace() -> None:
    """GDP paper Prop. 7: 1 - (1 - f_{mu/k,0})^{o k} -> T(Lap(0,1), Lap(mu,1)) uniformly.

    The text after Prop. 7 says the gap is below 0.005 for mu = 1, k = 4; it is 0.00687 (by hand at
    alpha = 0.2068: four steps of x -> min(1, e^{1/4} x, 1 - e^{-1/4}(1 - x)) give 0.43784, while
    e^-1 / (4 alpha) = 0.44471), so the test checks the convergence, at rate about 1/k^2.
    """
    alpha = np.linspace(0.0, 1.0, 20001)
    gaps = [
        np.max(
            np.abs(
                group_tradeoff(lambda a, k=k: eps_delta_tradeoff(a, 1.0 / k, 0.0), alpha, k)
                - laplace_tradeoff(alpha, 1.0)
            )
        )
        for k in (1, 2, 4, 8, 16)
    ]
    assert gaps[2] == pytest.approx(0.00687, abs=1e-4)
    assert all(later < 0.35 * earlier for earlier, later in itertools.pairwise(gaps))


def test_group_size_must_be_positive_integer() -> None:
    with pytest.raises(InputError):
        group_tradeoff(lambda a: gdp.tradeoff(a, 1.0), 0.5, 0)
