"""Tests for gdpcli.core.calibrate: closed-form noise calibration and the generic smallest_noise search."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.core import gdp
from gdpcli.core.calibrate import (
    analytic_gaussian_sigma,
    classical_gaussian_sigma,
    classical_gaussian_valid,
    gaussian_sigma_for_mu,
    laplace_scale,
    smallest_noise,
)
from gdpcli.errors import ComputationError, InputError
from tests.conftest import REFERENCE as ALL_REFERENCE

REFERENCE = ALL_REFERENCE["calibrate_gaussian_analytic"]


def balle_wang_delta(epsilon: float, sensitivity: float, sigma: float) -> mp.mpf:
    """Left side of Balle & Wang (2018) Thm 8, eq. (6), in 40-digit arithmetic (independent of gdp.py)."""
    with mp.workdps(40):
        eps, sens, sig = mp.mpf(epsilon), mp.mpf(sensitivity), mp.mpf(sigma)
        return mp.ncdf(sens / (2 * sig) - eps * sig / sens) - mp.exp(eps) * mp.ncdf(
            -sens / (2 * sig) - eps * sig / sens
        )


def exact_analytic_sigma(epsilon: float, delta: float, sensitivity: float) -> mp.mpf:
    """The root sigma of eq. (6) = delta, by mpmath's secant method in 40 digits, started near 1/mu."""
    with mp.workdps(40):
        start = mp.mpf(sensitivity) / mp.mpf(gdp.mu(epsilon, delta))
        return mp.findroot(
            lambda s: mp.log(balle_wang_delta(epsilon, sensitivity, s)) - mp.log(delta),
            (start, start * (1 + mp.mpf("1e-9"))),
            solver="secant",
        )


# ---------------------------------------------------------------- Gaussian and Laplace closed forms


@pytest.mark.parametrize("row", REFERENCE, ids=lambda r: f"eps={r['epsilon']},delta={r['delta']}")
def test_reference_values(row: dict) -> None:
    eps, delta, sens = row["epsilon"], row["delta"], row["sensitivity"]
    # The reference values are themselves accurate to about 3e-14 (see test_analytic_sigma_matches_mpmath).
    assert analytic_gaussian_sigma(eps, delta, sens) == pytest.approx(row["sigma_analytic"], rel=1e-12)
    assert classical_gaussian_valid(eps) is (row["sigma_classic"] is not None)
    if row["sigma_classic"] is not None:
        assert classical_gaussian_sigma(eps, delta, sens) == pytest.approx(row["sigma_classic"], rel=1e-14)


@pytest.mark.parametrize(
    ("eps", "delta", "sens"),
    [
        (1.0, 1e-5, 1.0),
        (0.1, 1e-6, 2.0),
        (5.0, 1e-10, 1.0),
        (0.01, 0.1, 3.0),
        (1e-3, 1e-5, 1.0),
        (20.0, 1e-50, 1.0),
    ],
)
def test_analytic_sigma_matches_mpmath_and_is_an_upper_bound(eps: float, delta: float, sens: float) -> None:
    sigma = analytic_gaussian_sigma(eps, delta, sens)
    exact = exact_analytic_sigma(eps, delta, sens)
    assert sigma >= exact  # rounded toward the safe side
    assert float((sigma - exact) / exact) < 1e-10
    assert balle_wang_delta(eps, sens, sigma) <= delta


@settings(max_examples=40, deadline=None)
@given(
    eps=st.floats(1e-3, 30.0),
    log10_delta=st.floats(-30.0, -1.0),
    sens=st.floats(0.1, 10.0),
)
def test_analytic_sigma_round_trip(eps: float, log10_delta: float, sens: float) -> None:
    delta = 10.0**log10_delta
    sigma = analytic_gaussian_sigma(eps, delta, sens)
    assert gdp.delta(eps, sens / sigma) * (1.0 + gdp.DELTA_RELATIVE_ERROR) <= delta
    # gdp.epsilon returns the float where its margin check starts to hold for good; the computed delta is
    # monotone only up to its rounding (a few ulps; it also switches form at eps = 1), which moves that
    # float by a few ulps of delta times delta / |d delta / d eps|, with d delta / d eps = -e^eps
    # Phi(-eps/mu - mu/2) (GDP Cor. 1; mpmath): large where eps is small
    mu = sens / sigma
    with mp.workdps(40):
        slope = mp.exp(eps) * mp.ncdf(-mp.mpf(eps) / mu - mp.mpf(mu) / 2)
        slack = float(8 * 2.0**-52 * mp.mpf(delta) / slope)  # 8 ulps of delta, moved to eps
        assert gdp.epsilon(delta, mu) <= eps * (1.0 + 1e-14) + slack
        assert balle_wang_delta(eps, sens, sigma) <= delta
        # and not wastefully large: 1 percent less noise breaks the guarantee
        assert balle_wang_delta(eps, sens, 0.99 * sigma) > delta
        if classical_gaussian_valid(eps):
            assert classical_gaussian_sigma(eps, delta, sens) >= sigma


def test_vectorized_equals_scalar() -> None:
    eps = np.array([[0.1], [1.0], [4.0]])
    delta = np.array([1e-8, 1e-5, 1e-2])
    sigma = analytic_gaussian_sigma(eps, delta, 2.0)
    classical = classical_gaussian_sigma(eps, delta, 2.0)
    assert sigma.shape == classical.shape == (3, 3)
    for i, j in np.ndindex(3, 3):
        assert sigma[i, j] == analytic_gaussian_sigma(float(eps[i, 0]), float(delta[j]), 2.0)
        assert classical[i, j] == classical_gaussian_sigma(float(eps[i, 0]), float(delta[j]), 2.0)
    assert classical_gaussian_valid(eps).tolist() == [[True], [False], [False]]
    assert isinstance(analytic_gaussian_sigma(1.0, 1e-5), float)


@settings(max_examples=40, deadline=None)
@given(target=st.floats(1e-6, 1e3), sens=st.floats(1e-3, 1e3))
def test_ratio_calibrations_meet_target(target: float, sens: float) -> None:
    sigma = gaussian_sigma_for_mu(target, sens)
    b = laplace_scale(target, sens)
    assert sens / sigma <= target and sens / b <= target
    assert sigma == pytest.approx(sens / target, rel=4e-16) and b == sigma


@pytest.mark.parametrize(
    "call",
    [
        lambda: analytic_gaussian_sigma(-1.0, 1e-5),
        lambda: analytic_gaussian_sigma(math.inf, 1e-5),
        lambda: analytic_gaussian_sigma(1.0, 0.0),
        lambda: analytic_gaussian_sigma(1.0, 1.0),
        lambda: analytic_gaussian_sigma(1.0, 1e-5, 0.0),
        lambda: classical_gaussian_sigma(1.0, math.nan),
        lambda: analytic_gaussian_sigma(np.array([1.0, -1.0]), 1e-5),
        lambda: gaussian_sigma_for_mu(0.0),
        lambda: gaussian_sigma_for_mu(1.0, -2.0),
        lambda: laplace_scale(math.nan),
    ],
)
def test_invalid_arguments_raise_input_error(call) -> None:
    with pytest.raises(InputError):
        call()


# ---------------------------------------------------------------- smallest_noise


class Counted:
    """Wrap f and count its calls."""

    def __init__(self, f) -> None:
        self.f, self.calls = f, 0

    def __call__(self, s: float) -> float:
        self.calls += 1
        return self.f(s)


@settings(max_examples=50, deadline=None)
@given(
    log10_exact=st.floats(-4.0, 4.0),
    power=st.floats(0.3, 4.0),
    target=st.floats(1e-3, 1e2),
    rtol=st.sampled_from([1e-1, 1e-3, 1e-6]),
)
def test_smallest_noise_on_power_laws(log10_exact: float, power: float, target: float, rtol: float) -> None:
    """f(s) = target (exact / s)^power: the exact answer is `exact`."""
    exact = 10.0**log10_exact
    f = Counted(lambda s: target * (exact / s) ** power)
    result = smallest_noise(f, target, rtol=rtol)
    assert result.value == f(result.noise) <= target
    assert f(result.noise * (1.0 - rtol)) > target
    assert exact * (1 - 1e-12) <= result.noise <= exact * (1.0 + rtol) * (1 + 1e-12)
    assert result.evaluations == f.calls - 2
    assert result.evaluations <= 15  # measured: at most 8 over 3000 random cases


@settings(max_examples=30, deadline=None)
@given(rate=st.floats(0.1, 10.0), log_target=st.floats(-30.0, -0.1))
def test_smallest_noise_on_exponentials(rate: float, log_target: float) -> None:
    """f(s) = exp(-rate s), far from a power law; the answer is -log_target / rate."""
    result = smallest_noise(lambda s: math.exp(-rate * s), math.exp(log_target), rtol=1e-3)
    exact = -log_target / rate
    assert math.exp(-rate * result.noise) <= math.exp(log_target)
    assert math.exp(-rate * result.noise * (1 - 1e-3)) > math.exp(log_target)
    assert exact * (1 - 1e-9) <= result.noise <= exact * (1 + 1e-3) * (1 + 1e-9)


def test_smallest_noise_few_calls_on_gdp_epsilon() -> None:
    """Intended use: epsilon(delta) of a Gaussian mechanism as a function of sigma (vs the analytic sigma)."""
    for target in (0.05, 0.5, 1.0, 3.0, 10.0):
        f = Counted(lambda s: gdp.epsilon(1e-5, 1.0 / s))
        result = smallest_noise(f, target, rtol=1e-3)
        exact = analytic_gaussian_sigma(target, 1e-5)
        assert exact * (1 - 1e-9) <= result.noise <= exact * (1 + 1e-3)
        assert f.calls <= 10


def test_smallest_noise_against_dp_accounting_rdp() -> None:
    """DP-SGD with dp-accounting's RDP accountant (independent library) as the expensive figure."""
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.rdp import rdp_privacy_accountant

    def epsilon_of_sigma(sigma: float) -> float:
        accountant = rdp_privacy_accountant.RdpAccountant()
        event = dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(sigma))
        accountant.compose(event, 1000)
        return accountant.get_epsilon(1e-5)

    result = smallest_noise(epsilon_of_sigma, 1.0, rtol=1e-3)
    assert result.value <= 1.0 < epsilon_of_sigma(result.noise * (1 - 1e-3))
    assert result.evaluations <= 10


def test_smallest_noise_step_function_and_special_values() -> None:
    step = smallest_noise(lambda s: math.ceil(10.0 / s), 3.0, rtol=1e-3)
    assert step.value == 3.0 and 10.0 / 3.0 <= step.noise <= 10.0 / 3.0 * (1 + 1e-3)
    # infinite below the answer, zero above it
    wall = smallest_noise(lambda s: math.inf if s < 1.5 else 0.0, 0.5, lo=0.1, hi=100.0, rtol=1e-4)
    assert wall.value == 0.0 and 1.5 <= wall.noise <= 1.5 * (1 + 1e-4)
    # exactly on target at the first guess: that guess may be returned only if the bracket closes
    on_target = smallest_noise(lambda s: 1.0 / s, 0.5, lo=2.0, hi=2.0, rtol=1e-3)
    assert on_target.noise == 2.0


@pytest.mark.parametrize("start", [(1e-6, 1e-6), (1e5, 1e6), (0.5, 2.0)])
def test_smallest_noise_brackets_from_far_away(start: tuple[float, float]) -> None:
    result = smallest_noise(lambda s: 2.0 / s, 0.1, lo=start[0], hi=start[1], rtol=1e-3)
    assert 20.0 <= result.noise <= 20.0 * (1 + 1e-3)
    assert result.evaluations <= 20


def test_smallest_noise_failures() -> None:
    with pytest.raises(ComputationError, match="search range"):
        smallest_noise(lambda s: 1.0 + 1.0 / s, 0.5)  # unreachable: f > 1 for every noise
    with pytest.raises(ComputationError, match="search range"):
        smallest_noise(lambda s: 0.0, 0.5)  # every noise meets the target: there is no smallest one
    with pytest.raises(ComputationError, match="nan"):
        smallest_noise(lambda s: math.nan, 0.5)
    with pytest.raises(ComputationError, match=r"-1\.0"):
        smallest_noise(lambda s: -1.0, 0.5)
    with pytest.raises(ComputationError, match="evaluations"):
        smallest_noise(lambda s: 1.0 / s, 1e-3, rtol=1e-9, max_evaluations=5)
    for bad in (
        dict(target=0.0),
        dict(target=math.inf),
        dict(rtol=0.0),
        dict(rtol=1.0),
        dict(lo=3.0, hi=2.0),
    ):
        arguments = dict(target=0.5, lo=0.5, hi=2.0, rtol=1e-3) | bad
        with pytest.raises(InputError):
            smallest_noise(lambda s: 1.0 / s, **arguments)
