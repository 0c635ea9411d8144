"""Noise calibration: the smallest noise that meets a privacy target.

Closed forms for the Gaussian and Laplace mechanisms, and `smallest_noise`, a
conservative bracketing search for any privacy figure that decreases in the
noise (used for DP-SGD with an expensive numerical accountant). Every noise
level returned here is rounded up: it meets its target in floating point.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from gdpcli.core import gdp
from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.rounding import elementwise, to_safe_side
from gdpcli.errors import ComputationError, InputError


def _require_positive(value: np.ndarray, name: str) -> None:
    """Raise InputError unless every element of value is positive and finite."""
    if not np.all(np.isfinite(value) & (value > 0)):
        raise InputError(f"{name} must be positive and finite")


def _check_epsilon_delta(
    epsilon: np.ndarray, delta: np.ndarray, sensitivity: np.ndarray, *, zero_epsilon: bool = False
) -> None:
    """Validate 0 < eps < inf (0 <= eps with zero_epsilon), 0 < delta < 1 and 0 < sensitivity < inf."""
    _require_positive(np.where(zero_epsilon & (epsilon == 0.0), 1.0, epsilon), "epsilon")
    if not np.all((delta > 0) & (delta < 1)):
        raise InputError("delta must lie strictly between 0 and 1")
    _require_positive(sensitivity, "sensitivity")


def _noise_for_ratio(sensitivity: ArrayLike, target: ArrayLike, name: str) -> ArrayLike:
    """The noise scale s = sens / target, rounded up to the nearest float with sens / s <= target."""
    sensitivity, target = np.broadcast_arrays(
        np.asarray(sensitivity, dtype=float), np.asarray(target, dtype=float)
    )
    _require_positive(target, name)
    _require_positive(sensitivity, "sensitivity")

    def met(scale: np.ndarray, sens: np.ndarray, goal: np.ndarray) -> np.ndarray:
        return sens / scale <= goal

    scale = sensitivity / target
    return as_output(to_safe_side(scale, elementwise(met, sensitivity, target), "up", what="noise scale"))


def gaussian_sigma_for_mu(mu: ArrayLike, sensitivity: ArrayLike = 1.0) -> ArrayLike:
    """sigma = sens / mu: N(0, sigma^2) noise on a sens-sensitive query is mu-GDP (GDP paper Thm 1)."""
    return _noise_for_ratio(sensitivity, mu, "mu")


def analytic_gaussian_sigma(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike = 1.0) -> ArrayLike:
    """The smallest sigma for which the Gaussian mechanism is (eps, delta)-DP (analytic Gaussian mechanism).

    Balle & Wang (2018) Thm 8 (papers/003): f(x) + N(0, sigma^2 I) with L2 sensitivity sens is
    (eps, delta)-DP if and only if

        Phi(sens/(2 sigma) - eps sigma/sens) - e^eps Phi(-sens/(2 sigma) - eps sigma/sens) <= delta.

    With mu = sens/sigma the left side is exactly delta(eps; mu), the privacy profile of mu-GDP
    (GDP paper Cor. 1), and the mechanism is mu-GDP (GDP paper Thm 1). delta(eps; mu) increases in
    mu, so the condition is mu <= mu*(eps, delta), the largest mu that gdp.mu returns, and the
    smallest sigma is sens / mu*. eps = 0 is allowed: delta(0; mu) = 2 Phi(mu/2) - 1, so mu* =
    2 Phi^-1((1 + delta)/2) in closed form (gdp.mu starts from it: its floor is exact at eps = 0).

    Rounded up: sens / mu* is moved up to the nearest float at which delta(eps; sens/sigma) <= delta holds
    as computed, with the computed delta raised by its verified relative error (core.rounding), so sigma is
    no smaller than the exact root, not only in floating point.
    """
    epsilon, delta, sensitivity = np.broadcast_arrays(
        np.asarray(epsilon, dtype=float), np.asarray(delta, dtype=float), np.asarray(sensitivity, dtype=float)
    )
    _check_epsilon_delta(epsilon, delta, sensitivity, zero_epsilon=True)

    def met(sigma: np.ndarray, eps: np.ndarray, target: np.ndarray, sens: np.ndarray) -> np.ndarray:
        return np.asarray(gdp.delta(eps, sens / sigma)) * (1.0 + gdp.DELTA_RELATIVE_ERROR) <= target

    sigma = sensitivity / np.asarray(gdp.mu(epsilon, delta))
    holds = elementwise(met, epsilon, delta, sensitivity)
    return as_output(to_safe_side(sigma, holds, "up", what="analytic Gaussian sigma"))


def classical_gaussian_sigma(epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike = 1.0) -> ArrayLike:
    """sigma = sqrt(2 ln(1.25/delta)) sens / eps, the classical Gaussian mechanism.

    Dwork & Roth (2014) Thm A.1, quoted as Thm 1 in Balle & Wang (2018): valid only for eps < 1
    (see `classical_gaussian_valid`), and never smaller than the analytic sigma there. Shown for
    comparison; it is evaluated for any eps, so check the flag before using it as a guarantee.
    """
    epsilon, delta, sensitivity = np.broadcast_arrays(
        np.asarray(epsilon, dtype=float), np.asarray(delta, dtype=float), np.asarray(sensitivity, dtype=float)
    )
    _check_epsilon_delta(epsilon, delta, sensitivity)
    return as_output(np.sqrt(2.0 * np.log(1.25 / delta)) * sensitivity / epsilon)


def classical_gaussian_valid(epsilon: ArrayLike) -> bool | np.ndarray:
    """Whether the classical Gaussian mechanism's theorem covers eps (Dwork & Roth Thm A.1: 0 < eps < 1)."""
    valid = np.asarray(epsilon, dtype=float) < 1.0
    return bool(valid) if valid.ndim == 0 else valid


def laplace_scale(epsilon: ArrayLike, sensitivity: ArrayLike = 1.0) -> ArrayLike:
    """b = sens / eps: Lap(b) noise on a query of L1 sensitivity sens is eps-DP (Dwork-Roth 2014 Thm 3.6)."""
    return _noise_for_ratio(sensitivity, epsilon, "epsilon")


HUNDRED_ROUNDS = ("eq23", "eq28", "thm5")
"""The hundred-rounds paper's closed forms for the noise variance (see hundred_rounds_variance)."""
PROVEN_SUFFICIENT = ("eq23", "eq28")
"""The closed forms whose variance provably makes the T-fold Gaussian (eps, delta)-DP."""


def hundred_rounds_variance(epsilon: ArrayLike, delta: ArrayLike, rule: str) -> ArrayLike:
    """sigma^2 / T for the T-fold composition of the unit-sensitivity Gaussian mechanism N(0, sigma^2) to be
    (eps, delta)-DP, by the closed forms of Asoodeh et al., "A Better Bound Gives a Hundred Rounds" (the
    paper), with L = log(1/delta); rounded up by 1e-14 (a few ulps of these few operations):

    - eq23: the moments accountant, eq. (23) eps = rho T + 2 sqrt(rho T L) with rho = 1/(2 sigma^2) (the
      classic RDP conversion of the Gaussian's curve, minimised over the order in closed form) solved for
      rho T = (sqrt(L + eps) - sqrt(L))^2: sigma^2 / T = (sqrt(L + eps) + sqrt(L))^2 / (2 eps^2), the least
      variance that accountant certifies. Rigorous.
    - eq28: eq. (28) without its O(1/L) term, 2 L / eps^2 + 1 / eps. Rigorous: it is at least eq23, since
      eq23 = L / eps^2 + 1/(2 eps) + sqrt(L (L + eps)) / eps^2 and sqrt(L (L + eps)) <= L + eps / 2.
    - thm5: Thm 5 without its O(log^2(L) / L) term, eq28 - (2 / eps^2)(log(2 L) + 1 - log eps): the
      leading terms of the expansion (derived again here: the order alpha - 1 ~ 2 L / eps in Balle et al.
      2020 Thm 21, the paper's Lemma 1 first term, turns L into L - log(2 L / eps) - 1). NOT a sufficient
      condition: measured below that conversion's variance for every delta in [1e-30, 1e-2] at eps <= 2,
      below even the exact variance (1 / mu(eps, delta)^2) at eps = 0.5, delta = 1e-2, and <= 0 at
      eps = 0.1, delta = 1e-2 (where the theorem's eps > 2 delta L holds). Callers label it accordingly.

    Vectorized over epsilon (> 0) and delta (in (0, 1)); thm5 may return values <= 0 (no noise stated).
    """
    if rule not in HUNDRED_ROUNDS:
        raise InputError(f"unknown closed form {rule!r}", f"use one of {', '.join(HUNDRED_ROUNDS)}")
    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(delta, dtype=float))
    _check_epsilon_delta(epsilon, delta, np.ones(epsilon.shape))
    log_inverse = -np.log(delta)
    if rule == "eq23":
        variance = (np.sqrt(log_inverse + epsilon) + np.sqrt(log_inverse)) ** 2 / (2.0 * epsilon**2)
    else:
        variance = 2.0 * log_inverse / epsilon**2 + 1.0 / epsilon
        if rule == "thm5":
            variance -= 2.0 / epsilon**2 * (np.log(2.0 * log_inverse) + 1.0 - np.log(epsilon))
    return as_output(variance + 1e-14 * np.abs(variance))


class NoiseSearch(NamedTuple):
    """Result of `smallest_noise`: the noise, the privacy figure it achieves, and the evaluations spent."""

    noise: float
    value: float
    evaluations: int


def smallest_noise(
    epsilon_of_noise: Callable[[float], float],
    target: float,
    lo: float = 0.5,
    hi: float = 2.0,
    *,
    rtol: float = 1e-3,
    max_ratio: float = 1e8,
    max_evaluations: int = 100,
) -> NoiseSearch:
    """The smallest noise s (to relative tolerance rtol, rounded up) with epsilon_of_noise(s) <= target.

    epsilon_of_noise is any privacy figure (epsilon, delta, mu) that decreases in the noise s; it may
    be expensive (a numerical accountant), so few calls are spent:

    1. Bracket: [lo, hi] is a first guess, widened geometrically (steps by factors 2, 4, 16, 256, ...)
       until some bad < good have f(bad) > target >= f(good); not beyond [lo / max_ratio,
       hi * max_ratio] (ComputationError: the target looks unreachable).
    2. Narrow: Brent's method (scipy.optimize.brentq: bisection safeguarding secant and inverse
       quadratic steps) on log f(s) - log target against log s; privacy figures are close to power
       laws in the noise, so this takes a few calls (4-7 for rtol 1e-3 on GDP epsilon curves).
    3. Round up: of all noises probed, bad is the largest that missed the target and good the
       smallest above it that met it; bisect until good <= bad (1 + rtol) (Brent already gets there).

    The result is a noise at which f was evaluated and met the target, so it is safe whatever f
    does; when f decreases, f(good (1 - rtol)) >= f(bad) > target, so it is within rtol of the
    exact smallest noise. ComputationError when f returns NaN or a negative value, or when the
    evaluations exceed max_evaluations.
    """
    if not (math.isfinite(target) and target > 0):
        raise InputError(f"the target must be positive and finite, got {target!r}")
    if not (0 < lo <= hi < math.inf and 1e-9 <= rtol < 1 and max_ratio > 1):
        raise InputError("smallest_noise needs 0 < lo <= hi < inf, 1e-9 <= rtol < 1 and max_ratio > 1")
    search = _Search(epsilon_of_noise, target, max_evaluations)
    bad, good = search.bracket(lo, hi, lo / max_ratio, hi * max_ratio)
    tol = math.log1p(rtol)
    from scipy import optimize  # only where a search runs: closed-form calibrations stay light

    optimize.brentq(search.residual, bad.log_noise, good.log_noise, xtol=0.9 * tol, maxiter=max_evaluations)
    bad, good = search.tightest()
    while good.noise > bad.noise * (1.0 + rtol):
        middle = search.probe(math.sqrt(bad.noise) * math.sqrt(good.noise))
        bad, good = (middle, good) if middle.too_small else (bad, middle)
    return NoiseSearch(good.noise, good.value, search.evaluations)


class _Probe(NamedTuple):
    """One evaluation: the noise s, log s, f(s), and whether f(s) > target (the noise is too small)."""

    noise: float
    log_noise: float
    value: float
    too_small: bool


class _Search:
    """One `smallest_noise` run: the function, the target, the evaluation budget and every probe made."""

    def __init__(self, f: Callable[[float], float], target: float, max_evaluations: int) -> None:
        self.f, self.target, self.max_evaluations = f, target, max_evaluations
        self.probes: dict[float, _Probe] = {}
        self.noise_of_log: dict[float, float] = {}

    @property
    def evaluations(self) -> int:
        """Number of calls of f so far."""
        return len(self.probes)

    def probe(self, noise: float) -> _Probe:
        """f at noise (each noise evaluated once); +inf and 0 are allowed, NaN or negative values are not."""
        if noise not in self.probes:
            if self.evaluations >= self.max_evaluations:
                raise ComputationError(
                    f"noise calibration needed more than {self.max_evaluations} evaluations"
                )
            value = float(self.f(noise))
            if math.isnan(value) or value < 0:
                raise ComputationError(f"the privacy figure at noise {noise!r} is {value!r}")
            self.probes[noise] = _Probe(noise, math.log(noise), value, value > self.target)
            self.noise_of_log[math.log(noise)] = noise
        return self.probes[noise]

    def residual(self, log_noise: float) -> float:
        """log f(s) - log target at s = exp(log_noise), clipped to +-2000 and signed by the exact comparison.

        A figure that rounds to the target in log space keeps the sign of f(s) - target (+-1e-300), so
        the root finder never stops on a probe that misses the target, nor treats a good probe as bad.
        Logs of earlier probes map back to the exact noise probed, so brentq's first calls are free.
        """
        probe = self.probe(self.noise_of_log.get(log_noise, math.exp(log_noise)))
        log_ratio = math.log(probe.value / self.target) if probe.value > 0 else -math.inf
        clipped = min(max(log_ratio, -2000.0), 2000.0)
        return max(clipped, 1e-300) if probe.too_small else min(clipped, -1e-300)

    def tightest(self) -> tuple[_Probe, _Probe]:
        """(bad, good): the largest probe that missed the target, and the smallest one above it that met it.

        For a decreasing f these are the two probes nearest the answer. Should f wiggle (a noisy
        numerical accountant), good is still a noise above every noise seen to miss the target.
        """
        bad = max((p for p in self.probes.values() if p.too_small), key=lambda p: p.noise)
        above = (p for p in self.probes.values() if p.noise > bad.noise and not p.too_small)
        return bad, min(above, key=lambda p: p.noise)

    def bracket(self, lo: float, hi: float, floor: float, ceiling: float) -> tuple[_Probe, _Probe]:
        """Probes (bad, good) with f(bad) > target >= f(good), widening [lo, hi] geometrically."""
        good = self.probe(hi)
        if good.too_small:
            return self._expand(good, 2.0, ceiling)
        bad = self.probe(lo) if lo < hi else good
        return (bad, good) if bad.too_small else self._expand(bad, 0.5, floor)

    def _expand(self, start: _Probe, factor: float, limit: float) -> tuple[_Probe, _Probe]:
        """Step from start by factor, squaring the factor each time, until the target changes side."""
        previous = start
        while previous.noise != limit:
            noise = min(previous.noise * factor, limit) if factor > 1 else max(previous.noise * factor, limit)
            current = self.probe(noise)
            if current.too_small != previous.too_small:
                return (previous, current) if factor > 1 else (current, previous)
            previous, factor = current, factor * factor
        if factor > 1:
            raise ComputationError(
                f"no noise in the search range meets the target (tried up to {limit!r})",
                "the target may be unreachable",
            )
        raise ComputationError(
            f"every noise in the search range meets the target (tried down to {limit!r})",
            "the target may need no noise at all",
        )
