"""Binomial probabilities to a few ulps without scipy.stats: Loader's saddle-point algorithm (C. Loader,
"Fast and Accurate Computation of Binomial Probabilities", 2000; the method of R's dbinom), in numpy.

    P(K = k) = sqrt(n / (2 pi k (n - k))) exp(-(stirlerr(k) + stirlerr(n - k) - stirlerr(n))
                                               - bd0(k, n p) - bd0(n - k, n q))

with stirlerr(m) = log m! - log(sqrt(2 pi m) (m/e)^m) and bd0(x, m) = x log(x/m) + m - x taken without
cancellation, so no term is formed by subtracting large logs.
"""

from __future__ import annotations

import math

import numpy as np

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SERIES_FROM = 16  # stirlerr by its asymptotic series from here, from lgamma below
_BD0_TERMS = 1000  # the bd0 series converges geometrically in v^2 < 1/121: far fewer are ever used


_STIRLERR_TABLE = np.array(
    [0.0]
    + [math.lgamma(m + 1.0) - (m + 0.5) * math.log(m) + m - _LOG_SQRT_2PI for m in range(1, _SERIES_FROM)]
)
"""stirlerr(m) for m < _SERIES_FROM from lgamma (an absolute error near 1e-16: what the exponent needs)."""


def _stirlerr(m: np.ndarray) -> np.ndarray:
    """log m! - log(sqrt(2 pi m) (m/e)^m) for integers m >= 1: the asymptotic series 1/(12m) - 1/(360m^3)
    + 1/(1260m^5) - 1/(1680m^7) + 1/(1188m^9) from m = 16 (its truncation error is below 1e-17 there),
    the table below."""
    m = np.asarray(m, dtype=float)
    inverse_square = 1.0 / (m * m)
    series = (
        1 / 12
        - (1 / 360 - (1 / 1260 - (1 / 1680 - inverse_square / 1188) * inverse_square) * inverse_square)
        * inverse_square
    ) / m
    small = _STIRLERR_TABLE[np.minimum(m, _SERIES_FROM - 1).astype(int)]
    return np.where(m >= _SERIES_FROM, series, small)


def _bd0(x: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """x log(x / mean) + mean - x >= 0 (the deviance term), by its series in v = (x - mean)/(x + mean)
    where x is near the mean (the closed form cancels there), else in closed form."""
    x, mean = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(mean, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        result = x * np.log(x / mean) + mean - x
    near = np.abs(x - mean) < 0.1 * (x + mean)
    if np.any(near):
        xs, ms = x[near], mean[near]
        v = (xs - ms) / (xs + ms)
        total, term = (xs - ms) * v, 2.0 * xs * v
        for j in range(1, _BD0_TERMS):
            term = term * v * v
            updated = total + term / (2 * j + 1)
            if np.all(updated == total):
                break
            total = updated
        result[near] = total
    return result


def binomial_pmf(n: int, p: float, q: float | None = None) -> np.ndarray:
    """P(K = k) for k = 0..n, K ~ Binomial(n, p), 0 < p < 1, each to a few ulps relative; q = 1 - p may be
    given when the caller knows it more accurately than 1 - p (p near 1)."""
    q = 1.0 - p if q is None else q
    k = np.arange(n + 1, dtype=float)
    pmf = np.empty(n + 1)
    pmf[0] = math.exp(n * math.log(q))
    pmf[n] = math.exp(n * math.log(p))
    if n >= 2:
        inner = k[1:n]
        exponent = (
            _stirlerr(np.array(float(n)))
            - _stirlerr(inner)
            - _stirlerr(n - inner)
            - _bd0(inner, n * p)
            - _bd0(n - inner, n * q)
        )
        pmf[1:n] = np.exp(exponent) * np.sqrt(n / (2.0 * math.pi * inner * (n - inner)))
    return pmf
