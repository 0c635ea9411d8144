"""Tests for gdpcli.core.rdp: RDP curves and RDP -> (eps, delta) conversions.

Expected numbers come from tests/data/values.json, from mpmath recipes written next to the
check, or from dp-accounting (test-only).
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gdpcli.core import gdp, rdp
from gdpcli.core.roots import largest_integer_where
from gdpcli.errors import InputError
from tests.conftest import REFERENCE


def gaussian_composition_epsilon(sigma: float, steps: int, delta: float, method: str) -> float:
    """epsilon at delta of the T-fold Gaussian composition (unit sensitivity), the paper's Sec. IV methods:
    `ma`, the moments accountant, eq. (23): rho T + sqrt(4 rho T log(1/delta)), rho = 1/(2 sigma^2);
    `lemma2`, Lemma 2 (eq. 26) minimised over the paper's order grid (its Fig. 2); `lemma2-continuous`,
    the same over all real orders; `optimal`, Thm 3; `exact`, GDP with mu = sqrt(T)/sigma (GDP Cor. 1, 2)."""
    if method == "ma":
        rho_t = steps / (2.0 * sigma**2)
        return rho_t + float(np.sqrt(4.0 * rho_t * -np.log(delta)))
    if method == "exact":
        return float(gdp.epsilon(delta, np.sqrt(steps) / sigma))
    curve = rdp.self_compose(lambda order: rdp.gaussian(order, sigma), steps)
    if method == "lemma2":
        grid = rdp.PAPER_ORDER_GRID
        return rdp.epsilon_from_points(grid, curve(grid), delta, "lemma1").value
    return rdp.epsilon_from_curve(
        curve, delta, "lemma1" if method == "lemma2-continuous" else "optimal"
    ).value


def gaussian_composition_steps(sigma: float, epsilon_budget: float, delta: float, method: str) -> int:
    """The largest T whose T-fold Gaussian composition has epsilon <= the budget at delta, by method."""
    return largest_integer_where(
        lambda t: gaussian_composition_epsilon(sigma, t, delta, method) <= epsilon_budget
    )


ASOODEH = REFERENCE["asoodeh_gaussian_sigma20_delta1e-5"]
MNIST = REFERENCE["dp_sgd_mnist"]

# ---------------------------------------------------------------------------------------------------------
# mpmath recipes
# ---------------------------------------------------------------------------------------------------------


def mp_theorem3(order: float, epsilon: float, delta: float) -> mp.mpf:
    """gamma_alpha^eps(delta) of Asoodeh et al. Thm 3 at 30 digits.

    The bracket p^a (p-d)^{1-a} + (1-p)^a (e^eps - p + d)^{1-a} is convex in p, hence unimodal in
    s = log(p - a d) (its minimiser lies above p = a d): golden-section search on s in [-700, log(1 - a d)]
    for 160 steps, i.e. to 1e-30 in s (the value is then exact to far beyond double precision).
    """
    with mp.workdps(30):
        a, e, d = mp.mpf(order), mp.mpf(epsilon), mp.mpf(delta)
        if a * d >= 1:
            return e - mp.log(1 - d)

        def bracket(s: mp.mpf) -> mp.mpf:
            p = a * d + mp.exp(s)
            return mp.log(p**a * (p - d) ** (1 - a) + (1 - p) ** a * (mp.exp(e) - p + d) ** (1 - a)) / (a - 1)

        lo, hi = mp.mpf(-700), mp.log(1 - a * d)
        ratio = (mp.sqrt(5) - 1) / 2
        for _ in range(160):
            m1, m2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
            if bracket(m1) < bracket(m2):
                hi = m2
            else:
                lo = m1
        return e + bracket((lo + hi) / 2)


def mp_sampled_gaussian_rdp(order: float, q: float, sigma: float) -> float:
    """RDP of the Poisson-sampled Gaussian by quadrature (Mironov, Talwar, Zhang 2019, Sec. 3):

    A = int N(z; 0, sigma^2) ((1-q) + q exp((2z-1)/(2 sigma^2)))^alpha dz, eps_R = log(A) / (alpha - 1).
    """
    with mp.workdps(30):
        a, q, s = mp.mpf(order), mp.mpf(q), mp.mpf(sigma)

        def integrand(z: mp.mpf) -> mp.mpf:
            return mp.npdf(z, 0, s) * ((1 - q) + q * mp.exp((2 * z - 1) / (2 * s * s))) ** a

        area = mp.quad(integrand, [-mp.inf, -10 * s, 0, 0.5, 1, 10 * s, 40 * s + 10, mp.inf])
        return float(mp.log(area) / (a - 1))


# ---------------------------------------------------------------------------------------------------------
# Single RDP points
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("row", REFERENCE["rdp_to_dp_single_point"])
def test_single_point_reference(row: dict) -> None:
    alpha, rdp_eps, delta = row["alpha"], row["rdp_eps"], row["delta"]
    assert rdp.epsilon(alpha, rdp_eps, delta, "classic") == pytest.approx(row["eps_classic"], rel=1e-13)
    assert rdp.epsilon(alpha, rdp_eps, delta, "optimal") == pytest.approx(row["eps_optimal"], rel=1e-10)


# (alpha, eps_R, delta): Balle's term active, Lemma 1's second term active, small alpha, large delta, ...
THEOREM3_POINTS = [
    (8.0, 1.0, 1e-5),
    (2.0, 0.5, 1e-5),
    (44.22485586878801, 0.004007089731263356, 1.4815555660625937e-06),
    (1.5310800207290087, 0.3241514756573428, 0.02480860382848533),
    (1.0165733269612138, 0.10636585600153252, 0.001789675649901848),
    (9.62305194223642, 0.03994888583732805, 5.278841661330978e-10),
    (2.0983, 0.00401, 2.72e-8),
    (211.0, 8.0, 1e-10),
]


@pytest.mark.parametrize(("alpha", "rdp_eps", "delta"), THEOREM3_POINTS)
def test_optimal_epsilon_is_valid_and_tight_against_mpmath(
    alpha: float, rdp_eps: float, delta: float
) -> None:
    # (alpha, eps_R)-RDP implies (eps, delta)-DP for every mechanism iff eps_R <= gamma_alpha^eps(delta).
    eps = rdp.epsilon(alpha, rdp_eps, delta, "optimal")
    assert mp_theorem3(alpha, eps, delta) >= rdp_eps
    assert mp_theorem3(alpha, eps * (1 - 1e-9), delta) < rdp_eps


@pytest.mark.parametrize(("alpha", "rdp_eps", "delta"), THEOREM3_POINTS)
def test_closed_form_conversions_are_valid_against_mpmath(alpha: float, rdp_eps: float, delta: float) -> None:
    for method in ("classic", "improved", "lemma1"):
        assert mp_theorem3(alpha, rdp.epsilon(alpha, rdp_eps, delta, method), delta) >= rdp_eps


@pytest.mark.parametrize(
    ("alpha", "rdp_eps", "epsilon"), [(8.0, 1.0, 2.0), (2.0, 0.5, 3.0), (30.0, 0.2, 0.5)]
)
def test_optimal_delta_is_valid_and_tight_against_mpmath(
    alpha: float, rdp_eps: float, epsilon: float
) -> None:
    delta = rdp.delta(alpha, rdp_eps, epsilon, "optimal")
    assert mp_theorem3(alpha, epsilon, delta) >= rdp_eps
    assert mp_theorem3(alpha, epsilon, delta * (1 - 1e-8)) < rdp_eps
    assert (
        delta
        <= rdp.delta(alpha, rdp_eps, epsilon, "improved")
        <= rdp.delta(alpha, rdp_eps, epsilon, "classic")
    )


def mp_laplace_delta(epsilon: float, eps0: float) -> float:
    """Hockey-stick divergence E_{e^eps}(Lap(eps0, 1) || Lap(0, 1)) = int (p - e^eps q)_+ by quadrature."""
    with mp.workdps(30):
        e, e0 = mp.mpf(epsilon), mp.mpf(eps0)

        def excess(x: mp.mpf) -> mp.mpf:
            return max(mp.exp(-abs(x - e0)) / 2 - mp.exp(e) * mp.exp(-abs(x)) / 2, mp.mpf(0))

        return float(mp.quad(excess, [-mp.inf, 0, (e0 + e) / 2, e0, mp.inf]))


@pytest.mark.parametrize("alpha", [1.5, 3.0, 20.0])
@pytest.mark.parametrize("epsilon", [0.1, 0.7])
def test_optimal_delta_covers_mechanisms_that_meet_the_rdp_point(alpha: float, epsilon: float) -> None:
    # Randomized response and Laplace with eps0 = 1 satisfy (alpha, their RDP)-RDP, so the optimal
    # delta at that single point must be at least their exact delta(eps). RR is a binary pair; Laplace is
    # not (this checks that binary pairs suffice in Thm 3).
    eps0 = 1.0
    rr_delta = (np.exp(eps0) - np.exp(epsilon)) / (1 + np.exp(eps0))
    assert rdp.delta(alpha, rdp.randomized_response(alpha, eps0), epsilon) >= rr_delta
    assert rdp.delta(alpha, rdp.laplace(alpha, eps0), epsilon) >= mp_laplace_delta(epsilon, eps0)


def test_large_delta_branch_is_closed_form() -> None:
    # alpha delta >= 1: eps = (eps_R + log(1 - delta))_+ (Lemma 1, eq. 19), exact for both methods.
    for method in ("lemma1", "optimal"):
        assert rdp.epsilon(4.0, 2.0, 0.5, method) == pytest.approx(2.0 + np.log(0.5), rel=1e-13)
        assert rdp.epsilon(4.0, 0.1, 0.5, method) == 0.0


points = st.tuples(st.floats(1.001, 500.0), st.floats(1e-4, 50.0), st.floats(1e-12, 0.3))


@settings(max_examples=50, deadline=None)
@given(point=points)
@example(point=(1.001, 0.00390625, 0.005))  # broke when newton_on_active started from lo (1.8e-11)
@example(point=(1.001, 0.021419451902246672, 0.021419451902246672))  # 2.2e-12 apart
def test_optimal_is_smallest_and_vectorized_equals_scalar(point: tuple[float, float, float]) -> None:
    """The vectorized root is the scalar one to a few ulps of the conversion's conditioning, which grows like
    1 / (alpha - 1) (its terms are divided by alpha - 1): 1e-12 relative at alpha 2, 1e-9 at 1.001."""
    alpha, rdp_eps, delta = point
    optimal = rdp.epsilon(alpha, rdp_eps, delta, "optimal")
    others = [rdp.epsilon(alpha, rdp_eps, delta, m) for m in ("classic", "improved", "lemma1")]
    assert 0.0 <= optimal <= min(others)
    batch = rdp.epsilon(np.array([alpha, 2.0]), np.array([rdp_eps, 0.5]), delta, "optimal")
    assert batch[0] == pytest.approx(optimal, rel=1e-12 / min(alpha - 1.0, 1.0))


@settings(max_examples=50, deadline=None)
@given(point=points)
def test_delta_round_trip(point: tuple[float, float, float]) -> None:
    alpha, rdp_eps, delta = point
    eps = rdp.epsilon(alpha, rdp_eps, delta, "optimal")
    if eps > 0:
        # Both directions are rounded up by their error margins (largest for alpha near 1).
        assert rdp.delta(alpha, rdp_eps, eps, "optimal") <= delta * (1 + 1e-6)
    assert rdp.delta(alpha, rdp_eps, eps, "optimal") <= rdp.delta(alpha, rdp_eps, eps, "classic")


# ---------------------------------------------------------------------------------------------------------
# RDP curves
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("q", "sigma"), [(256 / 60000, 1.1), (0.01, 0.7), (0.3, 2.0), (0.5, 1.0), (0.9, 5.0)]
)
def test_sampled_gaussian_equals_dp_accounting_at_integer_orders(q: float, sigma: float) -> None:
    from dp_accounting.rdp.rdp_privacy_accountant import _compute_rdp_poisson_subsampled_gaussian

    orders = np.array([2, 3, 4, 8, 16, 32, 64, 128, 200, 256], dtype=float)
    expected = _compute_rdp_poisson_subsampled_gaussian(q, sigma, orders)
    np.testing.assert_allclose(rdp.subsampled_gaussian(orders, q, sigma), expected, rtol=1e-10)


@pytest.mark.parametrize(
    ("alpha", "q", "sigma"),
    [
        (1.5, 0.3, 2.0),
        (1.5, 0.5, 1.0),
        (2.5, 0.01, 0.7),
        (1.01, 0.5, 1.0),
        (10.3, 256 / 60000, 1.1),
        (33.3, 0.1, 3.0),
    ],
)
def test_sampled_gaussian_fractional_orders_against_quadrature(alpha: float, q: float, sigma: float) -> None:
    assert rdp.subsampled_gaussian(alpha, q, sigma) == pytest.approx(
        mp_sampled_gaussian_rdp(alpha, q, sigma), rel=1e-11
    )


def test_sampled_gaussian_edge_cases() -> None:
    orders = np.array([1.5, 2.0, 256.0, 300.5])
    np.testing.assert_array_equal(rdp.subsampled_gaussian(orders, 0.0, 1.0), 0.0)
    np.testing.assert_allclose(rdp.subsampled_gaussian(orders, 1.0, 2.0), orders / 8.0, rtol=1e-15)
    # Large orders: finite, increasing, continuous across integer orders.
    large = rdp.subsampled_gaussian(np.array([255.0, 256.0, 256.0 + 1e-9, 1000.0, 5000.5]), 0.01, 1.0)
    assert np.all(np.isfinite(large)) and np.all(np.diff(large[[0, 1, 3, 4]]) > 0)
    assert large[2] == pytest.approx(large[1], rel=1e-8)


@pytest.mark.parametrize("sigma", [1e10, 1e154, 1e300])
def test_sampled_gaussian_at_huge_noise_is_a_divergence(sigma: float) -> None:
    """At huge noise the RDP is q^2 alpha / sigma^2 to first order (below 1e-20 here): the computed values
    are within the rounding of log A (1e-15) of it and, as divergences, never negative."""
    orders = np.array([1.5, 2.0, 10.0, 100.0, 1000.0])
    values = rdp.subsampled_gaussian(orders, 0.0332, sigma)
    assert np.all(values >= 0.0) and np.all(values <= 1e-15)

    with mp.workdps(30):
        for alpha, eps0 in [(1.5, 0.3), (2.0, 1.0), (32.0, 2.0), (1.0001, 0.5)]:
            a, e = mp.mpf(alpha), mp.mpf(eps0)
            # Mironov 2017, Table II.
            laplace = mp.log(
                a / (2 * a - 1) * mp.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mp.exp(-a * e)
            ) / (a - 1)
            p = mp.exp(e) / (1 + mp.exp(e))
            rr = mp.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)
            assert rdp.laplace(alpha, eps0) == pytest.approx(float(laplace), rel=1e-11)
            assert rdp.randomized_response(alpha, eps0) == pytest.approx(float(rr), rel=1e-11)


def test_composition_adds_curves() -> None:
    orders = np.array([1.5, 4.0, 30.0])
    curve = rdp.compose([lambda a: rdp.gaussian(a, 2.0), lambda a: rdp.laplace(a, 0.5)])
    np.testing.assert_allclose(
        curve(orders), rdp.gaussian(orders, 2.0) + rdp.laplace(orders, 0.5), rtol=1e-15
    )
    tenfold = rdp.self_compose(lambda a: rdp.gaussian(a, 2.0, sensitivity=3.0), 10)
    np.testing.assert_allclose(tenfold(orders), 10 * orders * 9.0 / 8.0, rtol=1e-15)


# ---------------------------------------------------------------------------------------------------------
# Curves: continuous optimisation over the order
# ---------------------------------------------------------------------------------------------------------


def test_gaussian_composition_sigma20_reference() -> None:
    eps_ref = ASOODEH["eps_T1000"]
    assert gaussian_composition_epsilon(20, 1000, 1e-5, "ma") == pytest.approx(
        eps_ref["eps_ma_T1000"], rel=1e-13
    )
    assert gaussian_composition_epsilon(20, 1000, 1e-5, "optimal") == pytest.approx(
        eps_ref["eps_optimal_conversion_T1000"], rel=1e-10
    )
    assert gaussian_composition_epsilon(20, 1000, 1e-5, "exact") == pytest.approx(
        eps_ref["eps_exact_gdp_T1000"], rel=1e-12
    )


# The reference's Lemma 2 figures take the infimum of eq. (26) over the grid alpha in
# numpy.linspace(1, 1/delta, 200001)[1:] (step 0.499995; its best point at T = 1000 is alpha = 3.99997).
# Over that grid the figures are reproduced exactly; the continuous infimum is smaller (tighter) still.
# Only the grid points below alpha = 1000 are kept: for T >= 1 the minimiser of eq. (26), near
# 1 + sqrt(log(1/delta) / (rho T)) <= 98, lies far below, and eq. (26) increases beyond it.
LEMMA2_GRID = np.linspace(1.0, 1e5, 200001)[1:2000]


def lemma2_on_grid(steps: int) -> float:
    return rdp.epsilon_from_points(LEMMA2_GRID, steps * LEMMA2_GRID / 800.0, 1e-5, "lemma1").value


def test_lemma2_reference_on_its_grid() -> None:
    eps_ref = ASOODEH["eps_T1000"]
    assert lemma2_on_grid(1000) == pytest.approx(eps_ref["eps_lemma2_T1000"], rel=1e-11)
    steps = np.arange(1, 1001, 10)
    improvement = [gaussian_composition_epsilon(20, t, 1e-5, "ma") - lemma2_on_grid(t) for t in steps]
    assert max(improvement) == pytest.approx(eps_ref["max_improvement_T_1_to_1000_step10"], abs=1e-9)
    assert steps[int(np.argmax(improvement))] == eps_ref["argmax_T"]


def test_lemma2_method_is_the_papers_grid() -> None:
    eps_ref = ASOODEH["eps_T1000"]
    assert gaussian_composition_epsilon(20, 1000, 1e-5, "lemma2") == pytest.approx(
        eps_ref["eps_lemma2_T1000"], rel=1e-11
    )
    assert gaussian_composition_steps(20, 6.0, 1e-5, "lemma2") == ASOODEH["max_steps_eps6"]["lemma2"]


def test_lemma2_continuous_is_tighter_than_grid_and_above_optimal() -> None:
    continuous = gaussian_composition_epsilon(20, 1000, 1e-5, "lemma2-continuous")
    optimal = gaussian_composition_epsilon(20, 1000, 1e-5, "optimal")
    exact = gaussian_composition_epsilon(20, 1000, 1e-5, "exact")
    assert exact < optimal <= continuous < lemma2_on_grid(1000)


@pytest.mark.slow
def test_step_budgets_at_epsilon_6() -> None:
    """Slow: tests/cli/test_rdp_cli.py's test_a_hundred_rounds checks the same budgets through the CLI."""
    budgets = ASOODEH["max_steps_eps6"]
    assert gaussian_composition_steps(20, 6.0, 1e-5, "ma") == budgets["ma"]
    assert gaussian_composition_steps(20, 6.0, 1e-5, "exact") == budgets["gdp_exact"]
    grid_budget = largest_integer_where(lambda t: lemma2_on_grid(t) <= 6.0)
    assert grid_budget == budgets["lemma2"]
    # Continuous Lemma 2 and the optimal conversion allow at least as many steps, never more than exact.
    lemma2 = gaussian_composition_steps(20, 6.0, 1e-5, "lemma2-continuous")
    optimal = gaussian_composition_steps(20, 6.0, 1e-5, "optimal")
    assert budgets["lemma2"] <= lemma2 <= optimal <= budgets["gdp_exact"]


def mnist_curve(order: np.ndarray) -> np.ndarray:
    return MNIST["steps"] * rdp.subsampled_gaussian(order, MNIST["batch"] / MNIST["n"], MNIST["sigma"])


def test_mnist_optimal_conversion() -> None:
    result = rdp.epsilon_from_curve(mnist_curve, MNIST["delta"], "optimal")
    assert result.value == pytest.approx(MNIST["rdp_poisson"], rel=0.01)
    improved = rdp.epsilon_from_curve(mnist_curve, MNIST["delta"], "improved")
    assert (
        result.value <= improved.value <= rdp.epsilon_from_curve(mnist_curve, MNIST["delta"], "classic").value
    )
    assert 5.0 < result.order < 12.0
    # dp-accounting's figure is the improved conversion over its default orders (best at alpha = 8.1,
    # where it sums the MTZ series in absolute value, hence the looser tolerance).
    from dp_accounting.rdp.rdp_privacy_accountant import DEFAULT_RDP_ORDERS

    orders = np.array(DEFAULT_RDP_ORDERS, dtype=float)
    on_default_orders = rdp.epsilon_from_points(orders, mnist_curve(orders), MNIST["delta"], "improved")
    assert on_default_orders.value == pytest.approx(MNIST["rdp_poisson"], rel=1e-8)


def test_dp_accounting_rdp_accountant_at_integer_orders() -> None:
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    q, sigma, steps, delta = 0.01, 0.8, 3000, 1e-6
    orders = np.arange(2.0, 257.0)
    accountant = RdpAccountant(orders=list(orders))
    accountant.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    expected, expected_order = accountant.get_epsilon_and_optimal_order(delta)
    result = rdp.epsilon_from_points(
        orders, steps * rdp.subsampled_gaussian(orders, q, sigma), delta, "improved"
    )
    assert result.value == pytest.approx(expected, rel=1e-10)
    assert result.order == expected_order


curves = st.one_of(
    st.tuples(st.just("gaussian"), st.floats(0.05, 20.0)),
    st.tuples(st.just("laplace"), st.floats(0.01, 5.0)),
    st.tuples(st.just("rr"), st.floats(0.01, 5.0)),
)


def make_curve(kind: str, parameter: float) -> rdp.RdpCurve:
    if kind == "gaussian":
        return lambda a: rdp.gaussian(a, 1.0 / parameter)
    if kind == "laplace":
        return lambda a: rdp.laplace(a, parameter)
    return lambda a: rdp.randomized_response(a, parameter)


def optimal_is_smallest(curve: tuple[str, float], times: int, delta: float) -> None:
    """The optimal conversion is no larger than the others, and its delta round-trips."""
    composed = rdp.self_compose(make_curve(*curve), times)
    optimal = rdp.epsilon_from_curve(composed, delta, "optimal").value
    for method in ("classic", "improved", "lemma1"):
        assert optimal <= rdp.epsilon_from_curve(composed, delta, method).value * (1 + 1e-9)
    delta_optimal = rdp.delta_from_curve(composed, optimal, "optimal").value
    # Round trip up to the rounding margins (about 1e-6 relative at the largest order searched, 1e6).
    assert delta_optimal <= delta * (1 + 1e-5)
    for method in ("classic", "improved"):
        assert delta_optimal <= rdp.delta_from_curve(composed, optimal, method).value * (1 + 1e-9)


@settings(max_examples=8, deadline=None)
@given(curve=curves, times=st.integers(1, 200), delta=st.floats(1e-12, 0.1))
def test_optimal_is_smallest_over_curves(curve: tuple[str, float], times: int, delta: float) -> None:
    optimal_is_smallest(curve, times, delta)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(curve=curves, times=st.integers(1, 200), delta=st.floats(1e-12, 0.1))
def test_optimal_is_smallest_over_more_curves(curve: tuple[str, float], times: int, delta: float) -> None:
    """Slow: the check above on 25 examples (about 0.2 s each)."""
    optimal_is_smallest(curve, times, delta)


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(mu=st.floats(0.01, 20.0), delta=st.floats(1e-12, 0.2))
def test_conversions_of_gaussian_curves_bound_exact_gdp(mu: float, delta: float) -> None:
    curve = lambda a: gdp.rdp(a, mu)  # noqa: E731
    exact = gdp.epsilon(delta, mu)
    for method in rdp.EPSILON_METHODS:
        assert rdp.epsilon_from_curve(curve, delta, method).value >= exact
    eps = rdp.epsilon_from_curve(curve, delta, "optimal").value
    assert rdp.delta_from_curve(curve, eps, "optimal").value >= gdp.delta(eps, mu)


def test_points_report_their_best_order() -> None:
    orders = np.array([2.0, 8.0, 32.0])
    result = rdp.epsilon_from_points(orders, orders * 0.01, 1e-5, "classic")
    assert result.order == 32.0
    assert result.value == pytest.approx(0.32 + np.log(1e5) / 31.0, rel=1e-14)


# ---------------------------------------------------------------------------------------------------------
# Input errors
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: rdp.epsilon(8.0, 1.0, 1e-5, "magic"),
        lambda: rdp.epsilon(1.0, 1.0, 1e-5),
        lambda: rdp.epsilon(8.0, -1.0, 1e-5),
        lambda: rdp.epsilon(8.0, 1.0, 0.0),
        lambda: rdp.delta(8.0, 1.0, -1.0),
        lambda: rdp.delta(8.0, 1.0, 1.0, "lemma1"),
        lambda: rdp.subsampled_gaussian(2.0, 1.5, 1.0),
        lambda: rdp.gaussian(np.array([0.5, 2.0]), 1.0),
    ],
)
def test_invalid_input_raises(call) -> None:
    with pytest.raises(InputError):
        call()
