"""Repeat and select (gdpcli.core.repeat_select; Papernot and Steinke, ICLR 2022).

- the truncated negative binomial's mean against a direct sum over its probability mass function (the
  paper's Def. 1, written out below), and the gamma found for a mean;
- the bounds are bounds: for randomized response on one bit, the best of K runs has an RDP in closed form
  (the best is a 1 unless every run gives 0: P[best = 1] = 1 - G(1 - a), G the generating function of K;
  K = 0 under Poisson releases nothing, a third outcome), and Thm 2 / Thm 6 must lie above it;
- against dp_accounting's RDP accountant on the same RepeatAndSelectDpEvent and orders: the same theorem
  gives the same curve (Thm 2 to 1e-9; Thm 6 given dp_accounting's own delta_hat), gdpcli's whole curve
  and epsilon are never above dp_accounting's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special

from gdpcli.core import rdp
from gdpcli.core import repeat_select as rs

SHAPES = (-0.5, 0.0, 0.5, 1.0, 2.0)


def tnb_pmf(k: np.ndarray, gamma: float, shape: float) -> np.ndarray:
    """The paper's Def. 1: P[K = k] = (1 - gamma)^k / (gamma^-eta - 1) prod_{l<k} (l + eta) / (l + 1) for
    eta != 0, and (1 - gamma)^k / (k log(1/gamma)) for eta = 0 (k >= 1)."""
    if shape == 0.0:
        return (1.0 - gamma) ** k / (k * math.log(1.0 / gamma))
    ratios = np.cumprod((np.arange(k.size) + shape) / (np.arange(k.size) + 1.0))
    return (1.0 - gamma) ** k * ratios / (gamma**-shape - 1.0)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("gamma", [0.05, 0.3, 0.9])
def test_truncated_negative_binomial_mean_is_the_mean_of_its_mass_function(
    gamma: float, shape: float
) -> None:
    k = np.arange(1, 4001, dtype=float)
    mass = tnb_pmf(k, gamma, shape)
    assert math.fsum(mass) == pytest.approx(1.0, rel=1e-12)
    assert rs.truncated_negative_binomial_mean(gamma, shape) == pytest.approx(math.fsum(k * mass), rel=1e-11)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("mean", [1.5, 10.0, 1e4])
def test_gamma_of_a_mean_is_at_most_the_true_one(mean: float, shape: float) -> None:
    gamma = rs.truncated_negative_binomial_gamma(mean, shape)
    assert rs.truncated_negative_binomial_mean(gamma, shape) >= mean * (1 - 1e-15)  # 1 / mean: rounding
    assert rs.truncated_negative_binomial_mean(gamma * (1 + 1e-9), shape) < mean
    assert rs.truncated_negative_binomial_gamma(1.0, shape) == 1.0


# ---------------------------------------------------------------------------------------------------------
# The bounds lie above the exact RDP of the best of K randomized responses
# ---------------------------------------------------------------------------------------------------------


def renyi(order: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """D_order(P || Q) at each order of distributions P, Q on a few outcomes (outcomes of P-mass 0 add
    nothing), in closed form."""
    p, q = p[p > 0], q[p > 0]
    with np.errstate(divide="ignore"):
        terms = order[:, None] * np.log(p) + (1.0 - order[:, None]) * np.log(q)
    return special.logsumexp(terms, axis=1) / (order - 1.0)


def symmetric(order: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return np.maximum(renyi(order, p, q), renyi(order, q, p))


def best_of(keep: float, generating: object) -> np.ndarray:
    """Outcomes (1, 0, nothing) of the best of K one-bit responses that give 1 with probability `keep`."""
    none = generating(0.0)
    all_zero = generating(1.0 - keep) - none
    return np.array([1.0 - all_zero - none, all_zero, none])


ORDERS = np.array([1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0])


def best_of_k_responses(eps0: float, mean: float, shape: float) -> np.ndarray:
    """The exact RDP at ORDERS of the best of K randomized responses (either direction, the larger)."""
    a, b = math.exp(eps0) / (1.0 + math.exp(eps0)), 1.0 / (1.0 + math.exp(eps0))
    if shape == rs.POISSON:
        generating = lambda s: math.exp(mean * (s - 1.0))  # noqa: E731
    elif mean == 1.0:
        generating = lambda s: s  # noqa: E731  (K = 1: the limit gamma -> 1)
    else:
        gamma = rs.truncated_negative_binomial_gamma(mean, shape)
        k = np.arange(1, 50_001, dtype=float)
        mass = tnb_pmf(k, gamma, shape)
        generating = lambda s: math.fsum(mass * s**k)  # noqa: E731
    return symmetric(ORDERS, best_of(a, generating), best_of(b, generating))


@pytest.mark.parametrize("eps0", [0.3, 3.0])
@pytest.mark.parametrize("mean", [1.0, 10.0, 100.0])
@pytest.mark.parametrize("shape", [*SHAPES, rs.POISSON])
def test_bounds_lie_above_the_exact_rdp_of_the_best_of_k_responses(
    eps0: float, mean: float, shape: float
) -> None:
    base = rdp.randomized_response(ORDERS, eps0)
    assert np.allclose(
        base,
        symmetric(
            ORDERS,
            np.array([0.5, 0.5]) + np.tanh(eps0 / 2) * np.array([0.5, -0.5]),
            np.array([0.5, 0.5]) - np.tanh(eps0 / 2) * np.array([0.5, -0.5]),
        ),
        rtol=1e-12,
    )
    exact = best_of_k_responses(eps0, mean, shape)
    assert np.all(rs.on_orders(ORDERS, base, mean, shape) >= exact * (1 - 1e-9))
    if shape != rs.POISSON:  # the curve on its grid (for Poisson the slow test below)
        selected = rs.curve(lambda order: rdp.randomized_response(order, eps0), mean, shape)(ORDERS)
        assert np.all(selected >= exact * (1 - 1e-9))


@pytest.mark.slow
def test_poisson_curve_lies_above_the_exact_rdp_of_the_best_of_k_responses() -> None:
    for eps0, mean in [(0.3, 10.0), (3.0, 100.0)]:
        selected = rs.curve(lambda order, e=eps0: rdp.randomized_response(order, e), mean, rs.POISSON)(ORDERS)
        assert np.all(selected >= best_of_k_responses(eps0, mean, rs.POISSON) * (1 - 1e-9))


# ---------------------------------------------------------------------------------------------------------
# dp_accounting's RDP accountant on the same events
# ---------------------------------------------------------------------------------------------------------

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.rdp import rdp_privacy_accountant as ra  # noqa: E402

DP_ORDERS = np.array(ra.DEFAULT_RDP_ORDERS, dtype=float)
BASES = {
    "mnist": dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(256 / 60000, dp_accounting.GaussianDpEvent(1.1)), 14063
    ),
    "gaussian": dp_accounting.GaussianDpEvent(4.0),
    "laplace": dp_accounting.SelfComposedDpEvent(dp_accounting.LaplaceDpEvent(20.0), 10),
}


def dp_rdp(event: object) -> np.ndarray:
    accountant = ra.RdpAccountant(DP_ORDERS)
    accountant.compose(event)
    return accountant._rdp.copy()  # the curve at its orders (no public getter)


@pytest.mark.parametrize("base_name", sorted(BASES))
@pytest.mark.parametrize("mean", [1.5, 300.0])
@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 2.0, rs.POISSON])
def test_same_theorem_same_curve_as_dp_accounting(base_name: str, mean: float, shape: float) -> None:
    base_event = BASES[base_name]
    base = dp_rdp(base_event)
    theirs = dp_rdp(dp_accounting.dp_event.RepeatAndSelectDpEvent(base_event, mean, shape))
    if shape == rs.POISSON:
        hat = [ra.compute_delta(DP_ORDERS, base, float(e))[0] for e in rs.poisson_epsilon_hat(DP_ORDERS)]
        same = rs.poisson(DP_ORDERS, base, mean, np.array(hat))
    else:
        cost = rs.selection_cost(DP_ORDERS, base, mean, shape)
        same = rs.monotone_envelope(DP_ORDERS, rs.truncated_negative_binomial(DP_ORDERS, base, mean, cost))
    assert np.allclose(same, theirs, rtol=1e-9, atol=0)
    if shape in (1.0, rs.POISSON):  # the same gamma (1 / mean) or none: rounded up, never below
        assert np.all(same >= theirs)


@pytest.mark.parametrize(("base_name", "mean"), [("mnist", 10.0)])
@pytest.mark.parametrize("shape", [0.5, 1.0, 2.0, rs.POISSON])
def test_curve_and_epsilon_are_at_most_dp_accountings(base_name: str, mean: float, shape: float) -> None:
    """gdpcli's whole curve (delta_hat by the optimal conversion too, the monotone envelope) at
    dp_accounting's orders, and the epsilon at 1e-5 from it by gdpcli's optimal conversion."""
    accountant = ra.RdpAccountant(DP_ORDERS)
    accountant.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(BASES[base_name], mean, shape))
    ours = rs.on_orders(DP_ORDERS, dp_rdp(BASES[base_name]), mean, shape)
    assert np.all(ours <= accountant._rdp * (1 + 1e-9))
    epsilon = rdp.epsilon_from_points(DP_ORDERS, ours, 1e-5).value
    assert epsilon <= accountant.get_epsilon(1e-5) * (1 + 1e-12)  # equal where the conversions agree
