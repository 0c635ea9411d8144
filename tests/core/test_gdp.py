"""gdpcli.core.gdp against 60-digit mpmath values (values.json) and mpmath recipes, plus properties."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.core import gdp
from tests.conftest import REFERENCE, at_least_digits, safe_side_of


@at_least_digits(60)
def mp_delta(epsilon: float, mu: float) -> mp.mpf:
    """Recipe: GDP paper Cor. 1 at 60 digits, delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    e, m = mp.mpf(epsilon), mp.mpf(mu)
    return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)


REFERENCE_FUNCTIONS = (
    ("gdp_delta_of_epsilon", gdp.delta, ("epsilon", "mu"), "delta", 1e-12),
    ("gdp_epsilon_of_delta", gdp.epsilon, ("delta", "mu"), "epsilon", 1e-13),
    ("gdp_mu_of_epsilon_delta", gdp.mu, ("epsilon", "delta"), "mu", 1e-13),
    ("gdp_tradeoff", gdp.tradeoff, ("alpha", "mu"), "beta", 1e-13),
    ("pure_dp_to_gdp_gdpt_thm_5_1", gdp.pure_dp_mu, ("epsilon",), "mu", 1e-13),
)
"""(reference key, function, the case's arguments, its value, relative tolerance)."""


@pytest.mark.parametrize(
    ("function", "arguments", "value", "rel", "case"),
    [
        pytest.param(function, arguments, value, rel, case, id=f"{key}-{index}")
        for key, function, arguments, value, rel in REFERENCE_FUNCTIONS
        for index, case in enumerate(REFERENCE[key])
    ],
)
def test_reference_values(function, arguments: tuple[str, ...], value: str, rel: float, case: dict) -> None:
    assert function(*(case[name] for name in arguments)) == pytest.approx(float(case[value]), rel=rel)


@pytest.mark.parametrize("case", REFERENCE["gdp_symmetric_point"])
def test_symmetric_point_reference(case: dict) -> None:
    alpha = gdp.symmetric_point(case["mu"])
    assert alpha == pytest.approx(float(case["alpha"]), rel=1e-13)
    assert gdp.tradeoff(alpha, case["mu"]) == pytest.approx(alpha, rel=1e-12)


@pytest.mark.parametrize(("epsilon", "mu"), [(200, 6), (100, 3), (700, 40), (5, 0.01), (1e-3, 0.05)])
def test_delta_deep_tail_against_mpmath(epsilon: float, mu: float) -> None:
    with mp.workdps(60):
        expected = mp_delta(epsilon, mu)
        assert expected > 0
        assert gdp.delta(epsilon, mu) == pytest.approx(float(expected), rel=1e-9)


def test_delta_200_mu_6_is_about_3_4e_minus_203() -> None:
    assert gdp.delta(200, 6) == pytest.approx(3.4360194832e-203, rel=1e-9)


def test_epsilon_is_a_valid_guarantee_and_mu_is_largest() -> None:
    deltas = np.array([1e-5, 1e-10, 1e-300, 0.3])
    mus = np.array([1.0, 3.0, 2.0, 0.5])
    eps = gdp.epsilon(deltas, mus)
    assert np.all(gdp.delta(eps, mus) <= deltas)
    mu = gdp.mu(np.array([1.0, 3.0, 0.5]), np.array([1e-5, 1e-5, 1e-3]))
    assert np.all(gdp.delta(np.array([1.0, 3.0, 0.5]), mu) <= np.array([1e-5, 1e-5, 1e-3]))


def test_mu_end_points() -> None:
    """delta = 0: no mu > 0 (delta(eps; mu) > 0); delta >= 1 or eps = inf: every mu (GDPT Def. 4.1)."""
    values = gdp.mu(np.array([1.0, 0.0, 1.0, 2.0, np.inf]), np.array([0.0, 0.0, 1.0, 1.5, 1e-5]))
    assert list(values) == [0.0, 0.0, np.inf, np.inf, np.inf]


def test_epsilon_zero_when_delta_is_large() -> None:
    assert gdp.epsilon(0.9, 1.0) == 0.0


@settings(max_examples=50, deadline=None)
@given(st.floats(0.05, 8), st.floats(0, 30))
def test_round_trip_eps_delta_eps(mu: float, epsilon: float) -> None:
    delta = gdp.delta(epsilon, mu)
    if not 1e-300 < delta < gdp.delta(0.0, mu):
        return
    # gdp.epsilon checks delta with a margin of DELTA_RELATIVE_ERROR, which moves the root up by about
    # margin * delta / |d delta / d eps|, with d delta / d eps = -e^eps Phi(-eps/mu - mu/2) (GDP Cor. 1;
    # mpmath): large where delta is near delta(0; mu)
    with mp.workdps(60):
        slope = mp.exp(epsilon) * mp.ncdf(-mp.mpf(epsilon) / mu - mp.mpf(mu) / 2)
        shift = float(3 * gdp.DELTA_RELATIVE_ERROR * mp.mpf(delta) / slope)
        assert (
            epsilon - 1e-9 * max(epsilon, 1.0)
            <= gdp.epsilon(delta, mu)
            <= epsilon + 1e-9 * max(epsilon, 1.0) + shift
        )


@settings(max_examples=50, deadline=None)
@given(st.floats(0, 20), st.floats(1e-12, 0.5))
def test_round_trip_mu(epsilon: float, delta: float) -> None:
    mu = gdp.mu(epsilon, delta)
    assert gdp.delta(epsilon, mu) == pytest.approx(delta, rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 40), min_size=1, max_size=20), st.floats(0.05, 10))
def test_vectorized_equals_scalar(epsilons: list[float], mu: float) -> None:
    vector = gdp.delta(np.array(epsilons), mu)
    assert np.array_equal(vector, np.array([gdp.delta(e, mu) for e in epsilons]))


@settings(max_examples=30, deadline=None)
@given(st.floats(0.01, 6))
def test_tradeoff_convex_decreasing_symmetric(mu: float) -> None:
    alpha = np.linspace(0, 1, 2001)
    beta = gdp.tradeoff(alpha, mu)
    assert np.all(np.diff(beta) <= 0)
    assert np.all(np.diff(beta, 2) >= -1e-12)
    assert np.all(beta <= 1 - alpha + 1e-15)
    # symmetric: G_mu is its own inverse, G_mu(G_mu(alpha)) = alpha
    assert np.allclose(gdp.tradeoff(beta, mu), alpha, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.floats(0.05, 5), st.floats(0.05, 5), st.floats(0, 10))
def test_delta_monotone(mu: float, factor: float, epsilon: float) -> None:
    bigger = mu * (1 + factor)
    assert gdp.delta(epsilon, bigger) >= gdp.delta(epsilon, mu)
    assert gdp.delta(epsilon + factor, mu) <= gdp.delta(epsilon, mu)


def test_rdp_and_group_and_compose() -> None:
    assert gdp.rdp(8.0, 0.5) == 1.0
    assert gdp.group_mu(0.5, 4) == 2.0
    assert gdp.compose(np.array([0.3, 0.4])) == pytest.approx(0.5, rel=1e-15)


def test_public_api() -> None:
    from gdpcli import gdp as api

    assert safe_side_of("4.3771780956812246086", api.epsilon(1e-5, 1.0), "above", 1e-13)
    assert safe_side_of("0.26805112321129421922", api.mu(1.0, 1e-5), "below", 1e-13)
    assert np.shape(api.delta(np.ones(3), 1.0)) == (3,)
    assert api.tradeoff(0.05, 1.0) == pytest.approx(0.74048897715855592063, rel=1e-13)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.0, 1e-300), (0.0, 1e-100), (0.0, 1e-12)])
def test_mu_far_below_one(epsilon: float, delta: float) -> None:
    """Recipe: mpmath findroot of Cor. 1 in mu at 700 digits (the difference of two Phi's near 1/2 is
    ~delta, so it needs -log10(delta) digits more than the answer)."""
    with mp.workdps(700):
        guess = mp.mpf(delta) * mp.sqrt(2 * mp.pi)
        expected = mp.findroot(lambda m: mp_delta(epsilon, m) - mp.mpf(delta), guess, tol=mp.mpf(10) ** -600)
    assert gdp.mu(epsilon, delta) == pytest.approx(float(expected), rel=1e-12)


@pytest.mark.parametrize(("epsilon", "mu"), [(0.0, 1e-10), (1e-12, 1e-5), (0.0, 1e-20), (-1.0, 0.5)])
def test_delta_small_mu_and_negative_epsilon(epsilon: float, mu: float) -> None:
    with mp.workdps(100):
        expected = mp_delta(epsilon, mu)
    assert gdp.delta(epsilon, mu) == pytest.approx(float(expected), rel=1e-13)
