"""gdpcli.core.gdpt: mu_GDP, the GDPT of built-in and sampled profiles, the tail verdict (Thm 4.3/4.4) and the
certified head interval (Thm 4.5/4.6, Algorithm 3), against values.json and mpmath recipes."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.core import gdp, gdpt
from gdpcli.errors import ComputationError, InputError
from tests.conftest import REFERENCE, at_least_digits

TAILS = REFERENCE["gdpt_tail_limits"]
CONSTANTS = REFERENCE["gdpt_profile_refinement_constants"]
PURE_DP = {case["epsilon"]: float(case["mu"]) for case in REFERENCE["pure_dp_to_gdp_gdpt_thm_5_1"]}


@at_least_digits(50)
def mp_log_delta(epsilon: mp.mpf, mu: mp.mpf) -> mp.mpf:
    """Recipe: log of GDP paper Cor. 1, Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), at 50 digits."""
    return mp.log(mp.ncdf(-epsilon / mu + mu / 2) - mp.exp(epsilon) * mp.ncdf(-epsilon / mu - mu / 2))


@at_least_digits(50)
def mp_mu_gdp(epsilon: float, log_delta: float, guess: float) -> mp.mpf:
    """Recipe: mu_GDP as an mpmath root of log delta_mu(eps) = log delta (works far below 1e-308)."""
    return mp.findroot(lambda m: mp_log_delta(mp.mpf(epsilon), m) - log_delta, mp.mpf(guess))


@pytest.mark.parametrize(
    ("epsilon", "log_delta", "guess"),
    [
        (0.0, np.log(0.5), 1.35),
        (1.0, np.log(1e-5), 0.25),
        (100.0, -2000.0, 1.6),
        (3.0, -5000.0, 0.03),
        (0.5, -0.01, 6),
    ],
)
def test_mu_bound_brackets_mpmath(epsilon: float, log_delta: float, guess: float) -> None:
    with mp.workdps(50):
        exact = mp_mu_gdp(epsilon, log_delta, guess)
        lower = gdpt.mu_bound(epsilon, log_delta, "lower")
        upper = gdpt.mu_bound(epsilon, log_delta, "upper")
        assert lower <= exact <= upper
        # width: 1e-11, plus the margin of delta's error (gdp.DELTA_RELATIVE_ERROR, on each side) times the
        # condition number kappa = 1 / (d log delta / d log mu) of the root (mpmath, independent)
        kappa = 1 / abs(mp.diff(lambda m: mp_log_delta(mp.mpf(epsilon), m), exact) * exact)
        assert upper - lower <= (1e-11 + 2.2 * gdp.DELTA_RELATIVE_ERROR * float(kappa)) * float(exact)


def test_mu_bound_end_points_and_side() -> None:
    np.testing.assert_array_equal(gdpt.mu_bound([1.0, 1.0], [-np.inf, 0.0], "upper"), [0.0, np.inf])
    with pytest.raises(InputError):
        gdpt.mu_bound(1.0, -1.0, "middle")


@settings(max_examples=50, deadline=None)
@given(epsilon=st.floats(0, 200), mu=st.floats(0.05, 8))
def test_mu_bound_brackets_the_gdp_mu(epsilon: float, mu: float) -> None:
    log_delta = gdp.log_delta(epsilon, mu)
    lower = gdpt.mu_bound(epsilon, log_delta, "lower")
    upper = gdpt.mu_bound(epsilon, log_delta, "upper")
    assert lower <= upper
    assert lower == pytest.approx(mu, rel=1e-9)
    assert upper == pytest.approx(mu, rel=1e-9)


@pytest.mark.parametrize("eps_head", [20.0, 100.0])
def test_gdp_profile_interval(eps_head: float) -> None:
    result = gdpt.identify(gdpt.gdp_profile(1.5), eps_head=eps_head, precision=1e-3)
    assert result.verdict == "gdp"
    assert result.tail_limit == 1.5
    assert result.mu_lower <= 1.5 <= result.mu_upper
    assert result.slack <= 1e-3
    with mp.workdps(50):
        assert result.log_residual == pytest.approx(
            float(mp_log_delta(mp.mpf(eps_head), mp.mpf(result.mu_upper)))
        )
        assert result.residual > 0.0  # e^-2181 at eps_head = 100 is rounded up, never to 0


def test_pure_dp_interval_is_theorem_5_1() -> None:
    result = gdpt.identify(gdpt.dp_profile(1.0), eps_head=20.0, precision=1e-3)
    assert result.verdict == "gdp"
    assert result.tail_limit == 0.0
    assert result.mu_lower <= PURE_DP[1] <= result.mu_upper  # 1.2320353853449009729
    assert result.slack <= 1e-3
    assert result.residual == 0.0  # the profile vanishes beyond eps0 = 1


def test_approximate_dp_is_not_gdp() -> None:
    result = gdpt.identify(gdpt.dp_profile(1.0, 1e-6), eps_head=20.0)
    assert (result.verdict, result.tail_limit) == ("not_gdp", np.inf)


def test_noise_family_tail_and_refinement() -> None:
    raw = gdpt.noise_family_profile(2.0, 1.0, 2.0)
    result = gdpt.identify(raw, eps_head=20.0)
    assert result.verdict == "gdp"
    assert result.tail_limit == pytest.approx(float(TAILS["sgd_family"]), abs=1e-12)  # 1/sqrt(2)
    # delta(0) = B = 1: the naive profile says nothing (mu_upper = inf); the lower bound stays finite because
    # a delta that rounds to 1 may be 1 - 1e-17 (mu_GDP(0, 1 - 2^-53) ~ 16.6)
    assert result.mu_upper == np.inf
    assert 16 < result.mu_lower < np.inf

    refined = gdpt.refined(raw)
    assert refined.tangents is not None
    assert refined.tangents[0] == pytest.approx([float(CONSTANTS["sgd_family_c2"])], abs=1e-11)
    assert refined.tangents[1] == pytest.approx([float(CONSTANTS["sgd_family_delta2"])], abs=1e-11)
    # Recipe for the sup, attained at eps = 0: c2 solves d'(c)(1 + e^c) + (1 - d(c)) e^c = 0 for
    # d(c) = e^{-c^2}; delta(0) = d(c2) + (1 - d(c2)) (e^c2 - 1) / (1 + e^c2) (Thm 3.1);
    # mu = mu_GDP(0, delta(0)) = 2 sqrt(2) erfinv(delta(0)), as delta_mu(0) = 2 Phi(mu/2) - 1: 1.8563572885...
    with mp.workdps(50):
        c2 = mp.findroot(
            lambda c: -2 * c * mp.exp(-(c**2)) * (1 + mp.exp(c)) + (1 - mp.exp(-(c**2))) * mp.exp(c), 1.2
        )
        d2 = mp.exp(-(c2**2))
        expected = 2 * mp.sqrt(2) * mp.erfinv(d2 + (1 - d2) * (mp.exp(c2) - 1) / (1 + mp.exp(c2)))
        assert float(expected) == pytest.approx(1.8563573, abs=1e-7)
        result = gdpt.identify(refined, eps_head=50.0, precision=1e-3)
        assert result.verdict == "gdp"
        assert result.mu_lower <= expected <= result.mu_upper
        assert result.slack <= 1e-3
        assert gdpt.gdpt(refined, 0.0) >= result.mu_lower - 1e-12  # the best lower bound is G(0)


def test_icea_is_not_gdp_and_its_refinement() -> None:
    raw = gdpt.icea_profile(20, 4)
    assert gdpt.tail_verdict(raw) == gdpt.TailVerdict("not_gdp", np.inf, "closed_form")
    assert TAILS["icea"] == "inf"
    refined = gdpt.refined(raw)
    assert refined.tangents is not None
    assert refined.tangents[0] == pytest.approx([float(CONSTANTS["icea_c3"])], abs=1e-11)
    assert refined.tangents[1] == pytest.approx([float(CONSTANTS["icea_delta3"])], abs=1e-11)
    short, long = gdpt.identify(refined, eps_head=10.0), gdpt.identify(refined, eps_head=40.0)
    assert short.verdict == "not_gdp"
    assert short.mu_upper < long.mu_lower  # the GDPT grows without bound


@pytest.mark.parametrize("b", [0.1, 0.5, 2.0, 50.0])
def test_laplace_is_gdp_with_tail_limit_zero(b: float) -> None:
    profile = gdpt.laplace_profile(b)
    result = gdpt.identify(profile, eps_head=30.0, precision=1e-3)
    assert (result.verdict, result.tail_limit) == ("gdp", TAILS["laplace"])
    assert gdpt.estimate_tail_limit(profile.log_delta) == gdpt.TailVerdict("gdp", 0.0, "numerical_estimate")
    # The sup over a fine grid of independent values (gdp.mu, lower bounds of G) lies below mu_upper; Thm 5.1
    # bounds it. The grid's maximum is at eps = 0, where G is known exactly: delta(0) = 1 - e^(-1/(2b)) for
    # Laplace, and mu-GDP has delta(0) = 2 Phi(mu/2) - 1, so G(0) = 2 Phi^-1(1 - e^(-1/(2b)) / 2) (recipe,
    # mpmath at 40 digits); mu_lower <= G(0) <= sup G shows mu_lower is a lower bound.
    eps = np.linspace(0, 1 / b, 2001)[:-1]
    values = np.asarray(gdp.mu(eps, profile.delta(eps)))
    assert np.argmax(values) == 0 and values.max() <= result.mu_upper
    with mp.workdps(40):
        at_zero = 2 * mp.sqrt(2) * mp.erfinv(1 - mp.exp(-1 / (2 * mp.mpf(b))))
    assert values[0] <= at_zero and result.mu_lower <= at_zero <= result.mu_upper
    assert result.mu_upper <= gdp.pure_dp_mu(1 / b) + 1e-3


@pytest.mark.parametrize(
    "profile",
    [
        gdpt.gdp_profile(0.7),
        gdpt.laplace_profile(0.5),
        gdpt.dp_profile(2.0),
        gdpt.dp_profile(0.5, 0.01),
        gdpt.refined(gdpt.noise_family_profile(2.0, 1.0, 2.0)),
        gdpt.refined(gdpt.icea_profile(20, 4)),
    ],
    ids=lambda p: p.name,
)
def test_staircase_sandwiches_the_gdpt(profile: gdpt.PrivacyProfile) -> None:
    result = gdpt.identify(profile, eps_head=15.0, precision=1e-3)
    eps = np.random.default_rng(7).uniform(0, 15.0, 3000)
    values = gdp.mu(eps, profile.delta(eps))  # pointwise G(eps), rounded down
    cell = np.searchsorted(result.staircase_eps, eps, side="right") - 1
    assert np.all(result.staircase_lower[cell] <= values * (1 + 1e-12))
    assert np.all(values <= result.staircase_upper[cell] * (1 + 1e-12))
    assert np.max(values) <= result.mu_upper
    assert result.slack <= 1e-3
    eps_c, lower_c, upper_c = result.coarse_staircase(50)
    assert eps_c.size <= 50
    assert eps_c[0] == 0.0
    assert np.all(lower_c <= values.max()) and np.max(upper_c) == result.mu_upper


def test_gdpt_function_is_pointwise_mu_gdp() -> None:
    profile = gdpt.refined(gdpt.noise_family_profile(2.0, 1.0, 2.0))
    eps = np.linspace(0, 5, 51)
    np.testing.assert_allclose(gdpt.gdpt(profile, eps), gdp.mu(eps, profile.delta(eps)), rtol=1e-11)


def test_sampled_gdp_profile() -> None:
    # Samples stop at eps = 37 where delta_1 is still ~1e-291: beyond ~38.6 it is below the float range and
    # gdp.delta returns the smallest subnormal (an upper bound), which would inflate the sampled GDPT.
    eps = np.linspace(0, 37, 3701)
    result = gdpt.identify_sampled(eps, gdp.delta(eps, 1.0))
    assert result.tail_method == "sampled"
    assert result.verdict == "undetermined"  # a finite sample never reaching 0 cannot prove the tail
    assert result.mu_lower - result.slack <= 1.0 <= result.mu_upper
    assert 0 < result.slack <= gdpt.MAX_SLOPE * 0.01
    assert result.eps_head == 37.0


def test_sampled_profile_without_zero_and_starting_late() -> None:
    eps = np.linspace(1.0, 10.0, 901)
    result = gdpt.identify_sampled(eps, gdp.delta(eps, 1.0))
    assert (result.verdict, result.tail_limit) == ("undetermined", None)
    assert result.staircase_eps[0] == 0.0  # [0, 1] is covered by Thm 3.1 from the first sample
    assert result.mu_upper >= gdp.mu(0.0, gdpt.partial_order.implied_delta(1.0, gdp.delta(1.0, 1.0), 0.0))
    assert result.mu_lower <= 1.0 + 1e-9
    assert result.residual == pytest.approx(gdp.delta(10.0, result.mu_upper))


def test_sampled_profile_lowers_increases_and_validates() -> None:
    eps = np.array([0.0, 1.0, 2.0, 3.0])
    bumpy = gdpt.identify_sampled(eps, np.array([0.5, 0.2, 0.3, 0.0]))
    flat = gdpt.identify_sampled(eps, np.array([0.5, 0.2, 0.2, 0.0]))
    assert (bumpy.mu_lower, bumpy.mu_upper) == (flat.mu_lower, flat.mu_upper)
    for bad_eps, bad_delta in [
        ([0.0], [0.5]),
        ([0.0, 1.0], [0.5]),
        ([1.0, 0.5], [0.5, 0.1]),
        ([-1.0, 0.5], [0.5, 0.1]),
        ([0.0, 1.0], [0.5, 1.5]),
        ([0.0, 1.0], [0.5, np.nan]),
    ]:
        with pytest.raises(InputError):
            gdpt.identify_sampled(np.array(bad_eps), np.array(bad_delta))


@pytest.mark.parametrize(
    ("log_delta", "verdict", "limit"),
    [
        (lambda e: gdp.log_delta(e, 2.0), "gdp", 2.0),
        (lambda e: -np.square(e), "gdp", 1 / np.sqrt(2)),
        (lambda e: np.log(0.3) - np.square(e) / 8, "gdp", 2.0),
        (lambda e: -(e**3), "gdp", 0.0),
        (lambda e: np.minimum(0.0, np.log(0.5) - np.log(e)), "not_gdp", np.inf),
        (lambda e: -(e**1.5), "not_gdp", np.inf),
        (lambda e: np.log(np.exp(-e)), "not_gdp", np.inf),  # e^-eps underflows: not mistaken for delta = 0
        (
            lambda e: -np.square(e) / np.log(np.e + e),
            "undetermined",
            None,
        ),  # limit inf, but only like sqrt(log)
    ],
)
def test_tail_limit_estimate(log_delta: gdpt.LogProfile, verdict: str, limit: float | None) -> None:
    with np.errstate(divide="ignore", over="ignore"):
        estimate = gdpt.estimate_tail_limit(log_delta)
    assert estimate.verdict == verdict
    assert estimate.limit == (None if limit is None else pytest.approx(limit, rel=1e-6))


def test_custom_profile_uses_the_estimate() -> None:
    profile = gdpt.PrivacyProfile("custom", lambda e: gdp.log_delta(e, 0.8))
    result = gdpt.identify(profile, eps_head=10.0)
    assert (result.verdict, result.tail_method) == ("gdp", "numerical_estimate")
    assert result.tail_limit == pytest.approx(0.8, rel=1e-6)
    assert result.mu_lower <= 0.8 <= result.mu_upper


def test_bad_arguments() -> None:
    profile = gdpt.gdp_profile(1.0)
    for eps_head, precision in [(0.0, 1e-3), (np.inf, 1e-3), (10.0, 0.0), (10.0, -1.0)]:
        with pytest.raises(InputError):
            gdpt.identify(profile, eps_head, precision)
    for make in (
        lambda: gdpt.gdp_profile(0.0),
        lambda: gdpt.laplace_profile(-1.0),
        lambda: gdpt.dp_profile(1.0, 1.0),
    ):
        with pytest.raises(InputError):
            make()
    increasing = gdpt.PrivacyProfile("increasing", lambda e: -1.0 / (1.0 + e), tail_limit=np.inf)
    with pytest.raises(ComputationError):
        gdpt.identify(increasing, 10.0)
