"""Calibration: the least noise that meets a privacy target, and the privacy it achieves, as labelled rows
(`calibrate gaussian | laplace | family | sgd`). Every row states the noise and the privacy achieved at
that noise (`achieved_*`), so the slack is visible."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from gdpcli.accounting import dpsgd
from gdpcli.accounting.figures import Figures
from gdpcli.accounting.schemes import STEPS
from gdpcli.core import calibrate, gdp, partial_order
from gdpcli.errors import ComputationError, InputError, parameter
from gdpcli.events import Run
from gdpcli.guarantees import Guarantee, Side, bound

NoiseFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


def gaussian_for_mu(mu: float, sens: float) -> dict:
    """sigma = sens / mu: the Gaussian mechanism is exactly (sens / sigma)-GDP (GDP paper Thm 1)."""
    sigma = calibrate.gaussian_sigma_for_mu(mu, sens)
    return {"mu": mu, "sigma": sigma, "sens": sens, "achieved_mu": sens / sigma} | {
        "guarantee": Guarantee.EXACT,
        "method": "gdp",
    }


def gaussian_for_epsilon_delta(epsilon: float, delta: float, sens: float) -> list[dict]:
    """The analytic Gaussian sigma (Balle & Wang Thm 8) and the classical one (Dwork & Roth Thm A.1, valid
    only for eps < 1: the row's `valid`), each with the (epsilon, delta) it achieves exactly (GDP Cor. 1).
    At eps = 0 only the analytic row: its sigma is sens / (2 Phi^-1((1 + delta)/2)), while the classical
    sqrt(2 ln(1.25/delta)) sens / eps has no finite value."""
    rows = []
    valid = calibrate.classical_gaussian_valid(epsilon)
    methods = (
        ("analytic", calibrate.analytic_gaussian_sigma, True),
        ("classical", calibrate.classical_gaussian_sigma, valid),
    )
    for method, sigma_of, method_valid in methods if epsilon > 0.0 else methods[:1]:
        row = _gaussian_row(epsilon, delta, sigma_of(epsilon, delta, sens), sens, method, method_valid)
        if method == "analytic":  # its sigma was checked to meet the target: both are upper bounds
            row["achieved_epsilon"] = min(row["achieved_epsilon"], epsilon)
        rows.append(row)
    return rows


def _gaussian_row(epsilon: float, delta: float, sigma: float, sens: float, method: str, valid: bool) -> dict:
    """One `calibrate gaussian` row: the target, sigma and the (epsilon, delta) and mu = sens / sigma it
    achieves exactly (GDP paper Thm 1, Cor. 1)."""
    achieved_mu = sens / sigma
    return {
        "epsilon": epsilon,
        "delta": delta,
        "sigma": sigma,
        "sens": sens,
        "achieved_epsilon": float(gdp.epsilon(delta, achieved_mu)),
        "achieved_delta": float(gdp.delta(epsilon, achieved_mu)),
        "mu": achieved_mu,
        "guarantee": Guarantee.EXACT,
        "method": method,
        "valid": valid,
    }


CLOSED_FORM_METHODS = {rule: f"closed-form-{rule}" for rule in calibrate.HUNDRED_ROUNDS}
"""The method names of the hundred-rounds closed forms' rows (calibrate --closed-form)."""


def hundred_rounds_noise(
    epsilon: float, delta: float, steps: int, sensitivity: float, sampling_rate: float = 1.0
) -> dict[str, float]:
    """{rule: noise} by the hundred-rounds paper's closed forms (core.calibrate.hundred_rounds_variance,
    rules whose variance is not positive left out): the noise standard deviation, in units of the query's
    scale, of T = steps Gaussian steps of L2 sensitivity `sensitivity` (the unit-sensitivity sigma times
    it). At a Poisson sampling rate q < 1 each step enters, as in the paper's Sec. IV.B (Fig. 3), as
    rho = q^2 sens^2 / ((1 - q) s^2)-zCDP (Abadi et al. 2016, Lemma 3, which drops an O(q^3) term: an
    approximation), so s^2 = 2 T sens^2 q^2 sigma_1^2 / (1 - q) with sigma_1^2 the variance per round."""
    noises = {}
    for rule in calibrate.HUNDRED_ROUNDS:
        variance = float(calibrate.hundred_rounds_variance(epsilon, delta, rule))
        if variance > 0.0:
            per_step = steps * variance
            if sampling_rate < 1.0:
                per_step *= 2.0 * sampling_rate**2 / (1.0 - sampling_rate)
            noises[rule] = sensitivity * math.sqrt(per_step)
    return noises


def gaussian_closed_forms(epsilon: float, delta: float, sens: float) -> list[dict]:
    """calibrate gaussian --closed-form: the hundred-rounds closed forms at T = 1, each with the (epsilon,
    delta) its sigma achieves exactly; valid where the closed form is proven sufficient (eq. 23, 28)."""
    noises = hundred_rounds_noise(epsilon, delta, 1, sens)
    return [
        _gaussian_row(
            epsilon, delta, sigma, sens, CLOSED_FORM_METHODS[rule], rule in calibrate.PROVEN_SUFFICIENT
        )
        for rule, sigma in noises.items()
    ]


def laplace_for_epsilon(epsilon: float, sens: float) -> dict:
    """b = sens / eps: Lap(b) is eps-DP for L1 sensitivity sens (Dwork & Roth Thm 3.6)."""
    scale = calibrate.laplace_scale(epsilon, sens)
    return {
        "epsilon": epsilon,
        "b": scale,
        "sens": sens,
        "achieved_epsilon": sens / scale,
        "achieved_delta": 0.0,
    } | {"guarantee": Guarantee.EXACT, "method": "laplace"}


def family_for(noise: NoiseFn, epsilon: float, delta: float) -> list[dict]:
    """sigma = f(eps, delta) as given (naive) and refined by the exact partial order of (eps, delta)
    conditions (GDPT Sec. 5.2), each with the delta it achieves at eps (GDPT Thm 3.1)."""
    refined = partial_order.refine_noise(_feasible_noise(noise), epsilon, delta)
    rows = []
    for method, sigma, epsilon0, delta0 in (
        ("naive", refined.naive_sigma, epsilon, delta),
        ("gdpt-refined", refined.sigma, refined.epsilon0, refined.delta0),
    ):
        achieved = partial_order.implied_delta(epsilon0, delta0, epsilon)
        rows.append(
            {"epsilon": epsilon, "delta": delta, "sigma": sigma}
            | {"epsilon0": epsilon0, "delta0": delta0, "achieved_delta": min(float(achieved), 1.0)}
            | {"guarantee": bound("delta", Side.PESSIMISTIC), "method": method}
        )
    return rows


def _feasible_noise(formula: NoiseFn) -> NoiseFn:
    """f(eps, delta) with non-finite or non-positive values turned into NaN (infeasible for refine_noise)."""

    def noise(epsilon: np.ndarray, delta: np.ndarray) -> np.ndarray:
        values = np.asarray(formula(epsilon, delta), dtype=float)
        return np.where(np.isfinite(values) & (values > 0), values, np.nan)

    return noise


def clt_noise(mu: float, run: Run) -> float:
    """The noise multiplier at which the Poisson CLT gives mu: mu = q sqrt(T (e^{mu_1^2} - 1)) with
    mu_1 = sensitivity / s (one step), solved for s.

    Su (2024), DP-SGD section (Bu et al. 2020). Used as an approximation (--method clt, Poisson) and as
    the first bracket of every search (the rigorous noise is typically a few percent larger).
    """
    effective = 1.0 / math.sqrt(math.log1p((mu / run.sampling_rate) ** 2 / run.steps))
    return effective * run.step_sensitivity


def sgd_epsilon_row(
    epsilon: float,
    delta: float,
    run: Run,
    method: str,
    conversion: str,
    tolerance: float,
    accuracy: float,
) -> dict:
    """The smallest noise multiplier whose `method` epsilon at delta is <= epsilon (CLT guess first).

    The figure is dpsgd.certified, the number `gdpcli sgd` reports and a budget check relies on, so the
    answer round-trips; the row carries that figure's own label.
    """

    found: dict[float, Figures] = {}

    def epsilon_of(noise: float) -> float:
        found[noise] = dpsgd.certified(
            dataclasses.replace(run, noise_multiplier=noise),
            delta,
            dpsgd.Method(method, accuracy, conversion),
        )
        return float(found[noise].values[0])

    guess = clt_noise(float(gdp.mu(epsilon, delta)), run)
    search = calibrate.smallest_noise(epsilon_of, epsilon, guess, guess * 1.05, rtol=tolerance)
    figure = found[search.noise]
    return {
        "epsilon": epsilon,
        "delta": delta,
        "noise_multiplier": search.noise,
        "achieved_epsilon": search.value,
        "guarantee": figure.guarantee,
        "method": figure.method,
    }


def sgd_closed_form_rows(
    epsilon: float, delta: float, run: Run, method: str, conversion: str, accuracy: float
) -> list[dict]:
    """calibrate sgd --closed-form: the hundred-rounds closed forms' noise multipliers for the run
    (hundred_rounds_noise at its steps, step sensitivity and sampling rate), each with the epsilon gdpcli
    certifies at that noise (dpsgd.certified, what `gdpcli sgd --method` reports) and that figure's label.
    valid: the closed form provably meets the target (eq. 23 and 28 at sampling rate 1). InputError for
    batches that are neither the full data nor Poisson-sampled, which the closed forms do not take: a
    subsampled step enters as the zCDP of the moments accountant, so they take the schemes whose subsampled
    step has an RDP analysis (schemes.STEPS)."""
    analysis = STEPS.get(run.sampling)
    if run.sampling_rate < 1.0 and (analysis is None or "rdp" in analysis.refused):
        raise InputError(
            f"{parameter('closed_form')} with {parameter('sampling')} {run.sampling} is not supported",
            "the closed forms take the full batch (sampling rate 1) or Poisson batches",
        )
    noises = hundred_rounds_noise(epsilon, delta, run.steps, run.step_sensitivity, run.sampling_rate)
    rows = []
    for rule, noise in noises.items():
        noisy = dataclasses.replace(run, noise_multiplier=noise)
        figure = dpsgd.certified(noisy, delta, dpsgd.Method(method, accuracy, conversion))
        rows.append(
            {
                "epsilon": epsilon,
                "delta": delta,
                "noise_multiplier": noise,
                "achieved_epsilon": float(figure.values[0]),
                "guarantee": figure.guarantee,
                "method": CLOSED_FORM_METHODS[rule],
                "valid": rule in calibrate.PROVEN_SUFFICIENT and run.sampling_rate == 1.0,
            }
        )
    return rows


def schedule_epsilon_row(
    epsilon: float,
    delta: float,
    phases: tuple[Run, ...],
    method: dpsgd.Method,
    last_only: bool,
    tolerance: float,
) -> dict:
    """The smallest factor c by which every noise multiplier (or the last phase's) can be scaled so that
    the schedule's certified epsilon at delta (schedules.certified) is <= epsilon; the scaled noise
    multipliers come with it."""
    from gdpcli.accounting import schedules

    found: dict[float, Figures] = {}

    def epsilon_of(factor: float) -> float:
        scaled = schedules.merged(schedules.scaled(phases, factor, last_only))
        found[factor] = schedules.certified(scaled, delta, method)
        return float(found[factor].values[0])

    search = calibrate.smallest_noise(epsilon_of, epsilon, 0.9, 1.1, rtol=tolerance)
    figure = found[search.noise]
    return {
        "epsilon": epsilon,
        "delta": delta,
        "scale": search.noise,
        "noise_multipliers": [p.noise_multiplier for p in schedules.scaled(phases, search.noise, last_only)],
        "achieved_epsilon": search.value,
        "guarantee": figure.guarantee,
        "method": figure.method,
    }


def sgd_mu_row(mu: float, run: Run, method: str, tolerance: float) -> dict:
    """The smallest noise multiplier whose CLT mu (GDP paper Cor. 4, or the Poisson formula) is <= mu.

    With m = sensitivity / s the mu of one step: without subsampling (q = 1) the run is exactly
    (sqrt(T) m)-GDP (GDP paper Cor. 2). Otherwise only the CLT states a mu for DP-SGD: composition only
    lowers a trade-off function, so the run's f is at most the one-step p G_m(alpha) + (1 - p)(1 - alpha)
    (GDP paper Sec. 4; C_p of it for fixed-size batches is lower still), whose tail 1 - f(alpha) >=
    p Phi(m - z), z = Phi^-1(1 - alpha), exceeds 1 - G_mu(alpha) = Phi(mu - z) as z -> inf for every
    mu < m. So an exact mu-GDP guarantee needs m <= mu whatever p is, and a numerical accountant with
    truncated tails cannot certify G_mu there.
    """

    if run.sampling_rate == 1.0 and method != "clt":
        total = run.step_sensitivity * math.sqrt(run.steps)
        noise = calibrate.gaussian_sigma_for_mu(mu, total)
        return _mu_row(mu, noise, total / noise, Guarantee.EXACT, "gdp")
    if method != "clt":
        needed = run.step_sensitivity / mu
        raise ComputationError(
            f"{parameter('mu')} with {parameter('method')} {method} is not supported: subsampled DP-SGD is "
            "only asymptotically GDP "
            f"(an exact {mu:g}-GDP guarantee needs noise_multiplier >= {needed:.6g} at any sampling rate)",
            f"use {parameter('epsilon')} with {parameter('delta')} for a rigorous calibration, or "
            f"{parameter('method')} clt for an approximation",
        )
    guess = clt_noise(mu, run)
    search = calibrate.smallest_noise(
        lambda noise: dpsgd.clt_mu(dataclasses.replace(run, noise_multiplier=noise)),
        mu,
        guess,
        guess * (1 + tolerance),
        rtol=tolerance,
    )
    return _mu_row(mu, search.noise, search.value, Guarantee.APPROXIMATION, "clt")


def _mu_row(mu: float, noise: float, achieved: float, guarantee: Guarantee, method: str) -> dict:
    """One `calibrate sgd --mu` row."""
    return {
        "mu": mu,
        "noise_multiplier": noise,
        "achieved_mu": achieved,
        "guarantee": guarantee,
        "method": method,
    }


def gaussian_for_risk(
    max_tpr: float | None, at_fpr: float | None, max_advantage: float | None, sens: float
) -> dict:
    """sigma = sens / mu, mu the largest that meets the risk target (accounting.risk.gaussian_mu): exact."""
    from gdpcli.accounting import risk

    return gaussian_for_mu(risk.gaussian_mu(max_tpr, at_fpr, max_advantage), sens) | _risk_target(
        max_tpr, at_fpr, max_advantage
    )


def sgd_risk_row(
    max_tpr: float | None,
    at_fpr: float | None,
    max_advantage: float | None,
    run: Run,
    tolerance: float,
    accuracy: float,
) -> dict:
    """The smallest noise multiplier whose run's certified attack TPR at at_fpr (or advantage) meets the
    target: the figure `gdpcli risk` reports as the run's upper bound, so it round-trips."""
    from gdpcli.accounting import risk

    measure = "advantage" if max_advantage is not None else "tpr"
    target = max_advantage if max_advantage is not None else max_tpr
    assert target is not None  # risk.check_target's
    found: dict[float, risk.Risk] = {}

    def risk_of(noise: float) -> float:
        found[noise] = risk.certified(
            dataclasses.replace(run, noise_multiplier=noise), measure, at_fpr, accuracy
        )
        return found[noise].value

    search = calibrate.smallest_noise(risk_of, target, 0.5, 2.0, rtol=tolerance)
    figure = found[search.noise]
    return _risk_target(max_tpr, at_fpr, max_advantage) | {
        "noise_multiplier": search.noise,
        f"achieved_{measure}": search.value,
        "guarantee": figure.guarantee,
        "method": figure.method,
    }


def _risk_target(max_tpr: float | None, at_fpr: float | None, max_advantage: float | None) -> dict:
    """The target columns of a risk calibration row."""
    if max_advantage is not None:
        return {"max_advantage": max_advantage}
    return {"max_tpr": max_tpr, "at_fpr": at_fpr}
