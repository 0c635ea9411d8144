"""gdpcli.core.partial_order: GDPT Thm 3.1 / Cor. 3.1 / 3.2, profile refinement (App. B), noise refinement
(Sec. 5.2, App. C), against values.json and mpmath recipes written next to each value."""

from __future__ import annotations

from collections.abc import Callable

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.core import partial_order as po
from gdpcli.errors import InputError
from tests.conftest import REFERENCE, at_least_digits

CONSTANTS = REFERENCE["gdpt_profile_refinement_constants"]
UTILITY = REFERENCE["gdpt_utility_refinement_sec_5_2"]
ICEA_K = 4.0 * np.exp(-2.0)  # n e^{-m/10}, m = 20 messages, n = 4 users


@at_least_digits(40)
def mp_implied(eps0: float, delta0: float, eps: float) -> mp.mpf:
    """Recipe: Thm 3.1, delta0 + (1 - delta0) max(e^eps0 - e^eps, 0) / (1 + e^eps0) at 40 digits."""
    e0, d0, e = mp.mpf(eps0), mp.mpf(delta0), mp.mpf(eps)
    return d0 + (1 - d0) * max(mp.exp(e0) - mp.exp(e), 0) / (1 + mp.exp(e0))


def sgd_naive(eps: np.ndarray) -> np.ndarray:
    """Noise family A=2, B=1, sigma=2: delta(eps) = exp(-eps^2)."""
    return np.exp(-np.square(eps))


def icea_naive(eps: np.ndarray) -> np.ndarray:
    """ICEA m=20, n=4: delta(eps) = min(1, K / eps)."""
    with np.errstate(divide="ignore"):
        return np.minimum(1.0, ICEA_K / np.asarray(eps))


@at_least_digits(40)
def mp_tangent(naive: Callable[[mp.mpf], mp.mpf], x0: float) -> mp.mpf:
    """Recipe: the root of d'(x)(1 + e^x) + (1 - d(x)) e^x = 0 (App. B), d' by mpmath's exact diff."""
    return mp.findroot(lambda x: mp.diff(naive, x) * (1 + mp.exp(x)) + (1 - naive(x)) * mp.exp(x), x0)


@pytest.mark.parametrize(
    ("eps0", "delta0", "eps"),
    [(1.0, 0.0, 0.0), (1.0, 0.1, 0.5), (3.0, 1e-6, 2.999), (50.0, 0.0, 1.0), (0.5, 0.2, 2)],
)
def test_implied_delta_against_mpmath(eps0: float, delta0: float, eps: float) -> None:
    with mp.workdps(40):
        expected = mp_implied(eps0, delta0, eps)
        value = po.implied_delta(eps0, delta0, eps)
        assert value == pytest.approx(float(expected), rel=1e-13)
        assert value >= expected  # rounded up: a safe delta


def test_pure_dp_profile_is_randomized_response() -> None:
    # RR with p = e^eps0/(1+e^eps0) has delta(eps) = p - e^eps (1 - p) for eps <= eps0.
    eps0, eps = 1.0, np.linspace(0, 1, 11)
    p = np.exp(eps0) / (1 + np.exp(eps0))
    np.testing.assert_allclose(
        po.implied_delta(eps0, 0.0, eps), p - np.exp(eps) * (1 - p), rtol=1e-13, atol=1e-15
    )


@settings(max_examples=50, deadline=None)
@given(
    eps0=st.floats(0, 20),
    delta0=st.floats(0, 0.99),
    eps=st.floats(0, 20),
)
def test_theorem_3_1_is_an_iff_at_its_boundary(eps0: float, delta0: float, eps: float) -> None:
    boundary = po.implied_delta(eps0, delta0, eps)
    assert po.implies(eps0, delta0, eps, boundary)
    with mp.workdps(40):
        if float(mp_implied(eps0, delta0, eps)) > 1e-300:
            assert not po.implies(eps0, delta0, eps, 0.999 * boundary)


@settings(max_examples=50, deadline=None)
@given(eps=st.floats(0, 5), delta=st.floats(1e-8, 0.9), fraction=st.floats(0, 1))
def test_weakest_delta_round_trip(eps: float, delta: float, fraction: float) -> None:
    eps0 = eps + fraction * (po.largest_epsilon0(eps, delta) - eps)
    delta0 = po.weakest_delta(eps, delta, eps0)
    assert 0 <= delta0 <= delta
    assert po.implies(eps0, delta0, eps, delta)
    # Cor. 3.1 exactly: delta0 = ((1 + e^eps0) delta - e^eps0 + e^eps) / (1 + e^eps), with the roles of the
    # paper's (eps, delta) and (eps0, delta0) swapped (there the weaker condition carries the 0).
    with mp.workdps(40):
        e0, e = mp.mpf(eps0), mp.mpf(eps)
        exact = (
            ((1 + mp.exp(e0)) * delta - mp.exp(e0) + mp.exp(e)) / (1 + mp.exp(e))
            if eps0 > eps
            else mp.mpf(delta)
        )
        assert delta0 == pytest.approx(float(exact), rel=1e-9, abs=1e-12)


def test_largest_epsilon0_is_pure_dp() -> None:
    eps, delta = 0.2, np.exp(-2.0)
    top = po.largest_epsilon0(eps, delta)
    assert po.weakest_delta(eps, delta, top) == pytest.approx(0.0, abs=1e-12)
    assert po.implied_delta(top, 0.0, eps) == pytest.approx(delta, rel=1e-13)
    with pytest.raises(InputError):
        po.weakest_delta(eps, delta, top + 1e-6)
    with pytest.raises(InputError):
        po.weakest_delta(eps, delta, eps - 0.1)


def test_local_minimizers_polishes_to_the_minimum() -> None:
    found = po.local_minimizers(lambda x: np.cos(x) + 0.1 * x, np.linspace(0, 10, 101))
    # f' = -sin x + 0.1 = 0 and f'' = -cos x > 0: minima at pi - asin(0.1) and 3 pi - asin(0.1).
    expected = [np.pi - np.arcsin(0.1), 3 * np.pi - np.arcsin(0.1)]
    np.testing.assert_allclose(found, expected, rtol=1e-10)


def test_sgd_family_tangent_point() -> None:
    eps_k, delta_k = po.tangent_points(sgd_naive)
    with mp.workdps(40):
        c2 = mp_tangent(lambda x: mp.exp(-(x**2)), 1.2)  # recipe: mpmath root, 1.18784889958051325833...
        assert eps_k == pytest.approx([float(c2)], abs=1e-11)
        assert eps_k[0] == pytest.approx(float(CONSTANTS["sgd_family_c2"]), abs=1e-11)
        assert delta_k[0] == pytest.approx(float(CONSTANTS["sgd_family_delta2"]), abs=1e-11)


def test_icea_tangent_point() -> None:
    eps_k, delta_k = po.tangent_points(icea_naive)
    with mp.workdps(40):
        k = 4 * mp.exp(-2)
        c3 = mp_tangent(lambda x: k / x, 1.2)  # recipe: mpmath root, 1.15660703536557801753...
        assert eps_k == pytest.approx([float(c3)], abs=1e-11)
        assert eps_k[0] == pytest.approx(float(CONSTANTS["icea_c3"]), abs=1e-11)
        assert delta_k[0] == pytest.approx(float(CONSTANTS["icea_delta3"]), abs=1e-11)


def test_refined_profile_is_tangent_pair_below_and_naive_above() -> None:
    eps_k, delta_k = po.tangent_points(sgd_naive)
    eps = np.linspace(0, 4, 401)
    # GDPT Sec. 3 / App. B: delta(eps) = min(naive, min over eps_k >= eps of implied_delta(eps_k, delta_k, .))
    refined = np.minimum(np.clip(sgd_naive(eps), 0.0, 1.0), po.tangent_bound(eps, eps_k, delta_k))
    assert np.all(refined <= sgd_naive(eps) * (1 + 1e-15))
    below = eps < eps_k[0]
    with mp.workdps(40):
        expected_below = [float(mp_implied(eps_k[0], delta_k[0], e)) for e in eps[below]]
        np.testing.assert_allclose(refined[below], expected_below, rtol=1e-12)
        np.testing.assert_array_equal(refined[~below], sgd_naive(eps[~below]))
        # Every refined value is implied by some member of the family (here: the tangent pair itself).
        assert np.all(po.implies(eps_k[0], delta_k[0], eps[below], refined[below]))


def test_utility_refinement_reference() -> None:
    result = po.refine_noise(lambda e, d: -np.log(d) / e, 0.2, np.exp(-2.0))
    assert result.naive_sigma == pytest.approx(UTILITY["naive_sigma_over_C"], rel=1e-14)
    assert result.sigma == pytest.approx(float(UTILITY["sigma_over_C"]), abs=1e-9)
    assert result.epsilon0 == pytest.approx(float(UTILITY["eps0"]), abs=1e-10)
    assert result.delta0 == pytest.approx(float(UTILITY["delta0"]), abs=1e-10)
    assert po.implies(result.epsilon0, result.delta0, 0.2, np.exp(-2.0))


def test_utility_refinement_against_mpmath() -> None:
    # Recipe: minimise f(x, delta0(x)) = -log(delta0(x)) / x, delta0(x) = (D - c(x)) / (1 - c(x)),
    # c(x) = (e^x - e^E) / (1 + e^x), by an mpmath root of its derivative.
    with mp.workdps(40):
        e_target, d_target = mp.mpf("0.2"), mp.exp(-2)

        def sigma(x: mp.mpf) -> mp.mpf:
            c = (mp.exp(x) - mp.exp(e_target)) / (1 + mp.exp(x))
            return -mp.log((d_target - c) / (1 - c)) / x

        x_star = mp.findroot(lambda x: mp.diff(sigma, x), (mp.mpf("0.3"), mp.mpf("0.37")), solver="anderson")
        result = po.refine_noise(lambda e, d: -np.log(d) / e, 0.2, np.exp(-2.0))
        assert result.epsilon0 == pytest.approx(float(x_star), abs=1e-10)
        assert result.sigma == pytest.approx(float(sigma(x_star)), rel=1e-13)


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(0.01, 3), log_delta=st.floats(-20, -0.1))
def test_utility_refinement_never_worse_and_always_valid(eps: float, log_delta: float) -> None:
    delta = float(np.exp(log_delta))
    result = po.refine_noise(lambda e, d: np.sqrt(2 * np.log(1.25 / d)) / e, eps, delta)  # classic Gaussian
    assert result.sigma <= result.naive_sigma
    assert po.implies(result.epsilon0, result.delta0, eps, delta)
    assert result.sigma == pytest.approx(
        np.sqrt(2 * np.log(1.25 / result.delta0)) / result.epsilon0, rel=1e-12
    )


@pytest.mark.parametrize(("eps", "delta"), [(-1.0, 0.1), (1.0, 0.0), (1.0, 1.0), (float("nan"), 0.1)])
def test_utility_refinement_rejects_bad_targets(eps: float, delta: float) -> None:
    with pytest.raises(InputError):
        po.refine_noise(lambda e, d: -np.log(d) / e, eps, delta)
