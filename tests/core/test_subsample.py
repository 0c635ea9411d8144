"""Tests for gdpcli.core.subsample: C_p, eq. (13), Cor. 3, Poisson and fixed-size profile transforms.

Expected numbers come from tests/data/values.json, mpmath recipes written here, or
dp-accounting; the closed forms are also checked against the independent grid route of tradeoff.py.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.core import gdp
from gdpcli.core.subsample import (
    fixed_size_profile,
    mix,
    poisson_add_profile,
    poisson_remove_profile,
    subsample_grid,
    subsampled_eps_delta,
    subsampled_eps_delta_tradeoff,
    subsampled_gdp_tradeoff,
)
from gdpcli.core.tradeoff import (
    Grid,
    alpha_grid,
    eps_delta_profile,
    eps_delta_tradeoff,
    grid_from_tradeoff,
    inverse,
    profile_from_grid,
)
from gdpcli.errors import InputError
from tests.conftest import REFERENCE, eps_delta_grid

EQ13 = REFERENCE["subsample_gdp_eq_13"]
COR3 = REFERENCE["subsample_corollary_3"]
SETTINGS = settings(max_examples=20, deadline=None)
UNIFORM = np.linspace(0.0, 1.0, 401)
EPSILONS = np.linspace(-3.0, 4.0, 29)


def gaussian_grid(mu: float, size: int = 4001) -> Grid:
    return grid_from_tradeoff(lambda a: gdp.tradeoff(a, mu), alpha_grid(size))


# --- C_p(G_mu), eq. (13) -------------------------------------------------------------------------------


@pytest.mark.parametrize("row", EQ13["tradeoff"])
def test_subsampled_gdp_reference(row: dict) -> None:
    beta = subsampled_gdp_tradeoff(row["alpha"], EQ13["mu"], EQ13["rate"])
    assert beta == pytest.approx(row["beta"], rel=1e-13)


def test_subsampled_gdp_mirror_piece_by_mpmath() -> None:
    """Recipe: f_p^-1(x) = Phi(-c) where (1 - p) Phi(c) + p Phi(c - mu) = x, solved by mpmath findroot."""
    with mp.workdps(40):
        mu, p = mp.mpf("1.8"), mp.mpf("0.35")
        for x in ("0.65", "0.9", "0.999", "0.999999"):
            c = mp.findroot(lambda c, x=x: (1 - p) * mp.ncdf(c) + p * mp.ncdf(c - mu) - mp.mpf(x), 1)
            assert subsampled_gdp_tradeoff(float(x), 1.8, 0.35) == pytest.approx(
                float(mp.ncdf(-c)), rel=1e-12
            )


@SETTINGS
@given(st.floats(0.2, 4.0), st.floats(0.02, 1.0))
def test_subsampled_gdp_equals_grid_route(mu: float, p: float) -> None:
    closed = subsampled_gdp_tradeoff(UNIFORM, mu, p)
    route = subsample_grid(gaussian_grid(mu), p)(UNIFORM)
    # the interpolant lies above G_mu and C_p is monotone (GDP paper Sec. 4.1 (b)): route >= closed
    assert np.all(closed <= route + 1e-12)
    assert np.max(route - closed) < 2e-6


@SETTINGS
@given(st.floats(0.2, 4.0), st.floats(0.02, 0.98), st.floats(0.0, 1.0))
def test_subsampled_gdp_is_symmetric_tradeoff_monotone_in_p(mu: float, p: float, shrink: float) -> None:
    beta = subsampled_gdp_tradeoff(UNIFORM, mu, p)
    assert np.all(beta >= 0) and np.all(beta <= 1 - UNIFORM + 1e-15)
    assert np.all(np.diff(beta) <= 1e-15) and np.all(np.diff(beta, 2) >= -1e-12)
    positive = beta > 1e-300
    assert np.allclose(
        subsampled_gdp_tradeoff(beta[positive], mu, p), UNIFORM[positive], rtol=1e-9, atol=1e-12
    )
    # f <= C_q(f) <= C_p(f) <= Id for p <= q (GDP paper Sec. 4.1 (a))
    smaller = subsampled_gdp_tradeoff(UNIFORM, mu, max(p * shrink, 1e-3))
    assert np.all(gdp.tradeoff(UNIFORM, mu) <= beta + 1e-15) and np.all(beta <= smaller + 1e-15)


def test_full_sampling_is_identity_operator() -> None:
    assert np.allclose(subsampled_gdp_tradeoff(UNIFORM, 1.3, 1.0), gdp.tradeoff(UNIFORM, 1.3), atol=1e-15)


# --- (eps, delta): Cor. 3 and Lemma 2 --------------------------------------------------------------------


def test_corollary_3_parameters_reference() -> None:
    epsilon_p, delta_p = subsampled_eps_delta(COR3["eps"], COR3["delta"], COR3["rate"])
    assert epsilon_p == pytest.approx(COR3["eps_prime"], rel=4e-16)
    assert delta_p == pytest.approx(COR3["delta_prime"], rel=1e-15)


@pytest.mark.parametrize("row", COR3["tradeoff"])
def test_lemma_2_column_reference(row: dict) -> None:
    epsilon_p, delta_p = subsampled_eps_delta(COR3["eps"], COR3["delta"], COR3["rate"])
    assert eps_delta_tradeoff(row["alpha"], epsilon_p, delta_p) == pytest.approx(
        row["ullman_beta"], rel=1e-14
    )


@pytest.mark.parametrize("row", COR3["tradeoff"])
def test_corollary_3_column_is_printed_eq_14_and_ours_is_tighter_by_p_delta_tanh(row: dict) -> None:
    """Reference beta column = eq. (14) as printed: max(f_{eps',delta'}, 1 - p delta - p tanh(eps/2) - x).

    C_p(f_{eps,delta}) itself (Def. 6, eq. (13); also Lemma 2 applied at eps = 0, whose (0, p delta(0))-DP
    gives the line 1 - p delta(0) - alpha) has the middle line higher by p delta tanh(eps/2).
    """
    with mp.workdps(40):
        eps, delta, p, alpha = (
            mp.mpf(value) for value in (COR3["eps"], COR3["delta"], COR3["rate"], row["alpha"])
        )
        printed = max(mp.mpf(row["ullman_beta"]), 1 - p * delta - p * mp.tanh(eps / 2) - alpha)
        assert float(printed) == pytest.approx(row["beta"], rel=1e-14)
        delta_at_zero = delta + (1 - delta) * mp.tanh(eps / 2)
        tight = max(mp.mpf(row["ullman_beta"]), 1 - p * delta_at_zero - alpha)
        ours = subsampled_eps_delta_tradeoff(row["alpha"], COR3["eps"], COR3["delta"], COR3["rate"])
        assert ours == pytest.approx(float(tight), rel=1e-14)
        assert ours >= row["beta"] and ours - row["beta"] <= float(p * delta * mp.tanh(eps / 2)) + 1e-15


@SETTINGS
@given(st.floats(0.0, 4.0), st.floats(0.0, 0.3), st.floats(0.01, 1.0))
def test_corollary_3_equals_grid_route(epsilon: float, delta: float, p: float) -> None:
    route = subsample_grid(eps_delta_grid(epsilon, delta), p)(UNIFORM)
    assert np.allclose(subsampled_eps_delta_tradeoff(UNIFORM, epsilon, delta, p), route, atol=1e-13)


# --- profile transforms -------------------------------------------------------------------------------


@pytest.mark.parametrize(("epsilon0", "delta0", "p"), [(3.0, 0.1, 0.2), (0.5, 1e-3, 0.7), (1.0, 0.0, 0.05)])
def test_poisson_profiles_equal_exact_grid_route(epsilon0: float, delta0: float, p: float) -> None:
    """For piecewise-linear f the grid route is exact: remove = profile of f_p, add = profile of f_p^-1."""
    profile = lambda e: eps_delta_profile(e, epsilon0, delta0)  # noqa: E731
    mixed = mix(eps_delta_grid(epsilon0, delta0), p)
    remove = poisson_remove_profile(profile, p)(EPSILONS)
    add = poisson_add_profile(profile, p)(EPSILONS)
    assert np.allclose(remove, profile_from_grid(mixed, EPSILONS, upper=False), atol=1e-14)
    assert np.allclose(add, profile_from_grid(inverse(mixed), EPSILONS, upper=False), atol=1e-14)
    fixed = fixed_size_profile(profile, p)(EPSILONS)
    route = profile_from_grid(subsample_grid(eps_delta_grid(epsilon0, delta0), p), EPSILONS, upper=False)
    assert np.allclose(fixed, route, atol=1e-14)


@pytest.mark.parametrize(("mu", "p"), [(1.8, 0.35), (0.5, 0.01), (4.0, 0.9)])
def test_poisson_profiles_of_gaussian_bracketed_by_grid_bounds(mu: float, p: float) -> None:
    profile = lambda e: gdp.delta(e, mu)  # noqa: E731
    mixed = mix(gaussian_grid(mu, 20001), p)
    for transformed, grid in (
        (poisson_remove_profile(profile, p), mixed),
        (poisson_add_profile(profile, p), inverse(mixed)),
    ):
        values = transformed(EPSILONS)
        lower = profile_from_grid(grid, EPSILONS, upper=False)
        assert np.all(lower <= values + 1e-13)
        assert np.all(values <= profile_from_grid(grid, EPSILONS, upper=True) + 1e-13)
        assert np.max(values - lower) < 1e-6
    fixed = fixed_size_profile(profile, p)(EPSILONS)
    route = profile_from_grid(subsample_grid(gaussian_grid(mu, 20001), p), EPSILONS, upper=False)
    assert np.all(route <= fixed + 1e-13) and np.max(fixed - route) < 1e-6


def test_poisson_gaussian_within_dp_accounting_bounds() -> None:
    """dp-accounting's PLD (add-or-remove; max over both directions) brackets max(remove, add)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    mu, p = 1.8, 0.35
    kwargs = {"sampling_prob": p, "value_discretization_interval": 1e-3, "use_connect_dots": False}
    upper = pld.from_gaussian_mechanism(1 / mu, pessimistic_estimate=True, **kwargs)
    lower = pld.from_gaussian_mechanism(1 / mu, pessimistic_estimate=False, **kwargs)
    profile = lambda e: gdp.delta(e, mu)  # noqa: E731
    for epsilon in (0.0, 0.5, 1.0, 2.0, 3.0):
        ours = max(poisson_remove_profile(profile, p)(epsilon), poisson_add_profile(profile, p)(epsilon))
        assert (
            lower.get_delta_for_epsilon(epsilon) - 1e-12
            <= ours
            <= upper.get_delta_for_epsilon(epsilon) + 1e-12
        )


@SETTINGS
@given(st.floats(0.1, 5.0), st.floats(0.001, 1.0), st.floats(0.0, 8.0))
def test_remove_dominates_add_for_nonnegative_epsilon(mu: float, p: float, epsilon: float) -> None:
    """For symmetric f and eps >= 0 the fixed-size profile is the remove direction (GDP paper Thm 9 proof)."""
    profile = lambda e: gdp.delta(e, mu)  # noqa: E731
    remove = poisson_remove_profile(profile, p)(epsilon)
    assert poisson_add_profile(profile, p)(epsilon) <= remove * (1 + 1e-12) + 1e-300
    # the fixed-size profile is the larger direction: the remove one, up to the rounding that can leave the
    # add direction an ulp above it where the two coincide (Hypothesis: mu = p = 1 - 2^-53, eps = 1)
    assert remove <= fixed_size_profile(profile, p)(epsilon) <= remove * (1 + 1e-12) + 1e-300


def test_poisson_profiles_limits() -> None:
    profile = lambda e: gdp.delta(e, 1.0)  # noqa: E731
    assert np.allclose(poisson_remove_profile(profile, 1.0)(EPSILONS), gdp.delta(EPSILONS, 1.0), atol=1e-15)
    assert np.allclose(poisson_add_profile(profile, 1.0)(EPSILONS), gdp.delta(EPSILONS, 1.0), atol=1e-15)
    # e^eps <= 1 - p: the remove direction is 1 - e^eps; e^eps (1 - p) >= 1: the add direction is 0
    assert poisson_remove_profile(profile, 0.5)(np.log(0.4)) == pytest.approx(0.6, rel=1e-15)
    assert poisson_add_profile(profile, 0.5)(np.log(2.5)) == 0.0
    assert isinstance(fixed_size_profile(profile, 0.5)(0.3), float)


@pytest.mark.parametrize("p", [0.0, -0.1, 1.5])
def test_sampling_rate_validated(p: float) -> None:
    with pytest.raises(InputError):
        subsampled_gdp_tradeoff(0.3, 1.0, p)
    with pytest.raises(InputError):
        poisson_remove_profile(lambda e: gdp.delta(e, 1.0), p)
