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


def _check_epsilon_delta(epsilon: np.ndarray, delta: np.ndarray, sensitivity: np.ndarray) -> None:
    """Validate 0 < eps < inf, 0 < delta < 1 and 0 < sensitivity < inf."""
    _require_positive(epsilon, "epsilon")
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
    smallest sigma is sens / mu*.

    Rounded up: sens / mu* is moved up to the nearest float at which delta(eps; sens/sigma) <= delta holds
    as computed, with the computed delta raised by its verified relative error (core.rounding), so sigma is
    no smaller than the exact root, not only in floating point.
    """
    epsilon, delta, sensitivity = np.broadcast_arrays(
        np.asarray(epsilon, dtype=float), np.asarray(delta, dtype=float), np.asarray(sensitivity, dtype=float)
    )
    _check_epsilon_delta(epsilon, delta, sensitivity)

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
