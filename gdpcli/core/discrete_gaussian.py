"""The discrete Gaussian mechanism N_Z(0, sigma^2) on the integers (Canonne, Kamath and Steinke, "The
Discrete Gaussian for Differential Privacy", NeurIPS 2020, arXiv:2004.00010; [CKS20]).

The noise has mass P(x) = w(x) / Z on the integers, w(x) = exp(-x^2 / (2 sigma^2)), Z = sum_y w(y)
([CKS20] Def. 1). A query of integer sensitivity k gives the pair P = N_Z(0, sigma^2), Q = N_Z(k, sigma^2);
the pair (Q, P) is its mirror image x -> k - x, so both directions have the same profile and trade-off
function. The privacy loss L(x) = log P(x)/Q(x) = (k^2 - 2 k x) / (2 sigma^2) is decreasing in x, so

    delta(eps) = sum_x (P(x) - e^eps Q(x))_+ = F(m) - e^eps F(m - k),  m = floor(k/2 - sigma^2 eps / k),

with F the CDF of N_Z(0, sigma^2): the sum runs over the integers x <= m where L(x) >= eps ([CKS20]
Thm 7 writes the same sum with tail probabilities). It is computed in log space as
log F(m) + log(1 - e^{eps + log F(m - k) - log F(m)}), which loses at most the digits of the ratio
delta / F(m) (about 1 / (z sigma) at z standard deviations: three digits at sigma = 35).

How the tails are bounded. Everything is summed over the table x in [-M - k, M + k] with
M = ceil(TAIL_SIGMAS sigma) + k. Beyond m (m <= -M), the ratio of consecutive weights
w(x - 1) / w(x) = exp(-(2|x| + 1) / (2 sigma^2)) is at most r = exp(-(2|m| + 1) / (2 sigma^2)), so

    sum_{x <= m} w(x) <= w(m) / (1 - r)                                                           (T)

(geometric series). With TAIL_SIGMAS = 38.6 the mass outside the table is below e^{-745} / (1 - r)
relative to Z >= 1, under the smallest double: Z, F and delta inside the table are exact up to
floating-point rounding. For m < -M (eps beyond about 38.6 k / sigma) the profile is the upper bound
delta(eps) <= F(m) <= w(m) / ((1 - r) Z) of (T), in log space so that it does not underflow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.errors import ComputationError, parameter

TAIL_SIGMAS = 38.6
"""Half-width of the table in standard deviations: 38.6^2 / 2 > 745, so the mass beyond underflows."""
MAX_TABLE = 2**22
"""The largest table (points) built: sigma up to about 5e4 (a float64 table of 2**22 points is 32 MiB)."""


@dataclass(frozen=True, eq=False)
class Table:
    """log w(x) and log F(x) for x = lowest, ..., lowest + size - 1, and log Z, of N_Z(0, sigma^2)."""

    sigma: float
    lowest: int
    log_weight: np.ndarray
    log_cdf: np.ndarray
    log_z: float

    @property
    def highest(self) -> int:
        return self.lowest + self.log_weight.size - 1

    @property
    def support(self) -> np.ndarray:
        return np.arange(self.lowest, self.highest + 1, dtype=float)

    def masses(self) -> np.ndarray:
        """P(x) on the table."""
        return np.exp(self.log_weight - self.log_z)

    def log_cdf_at(self, m: np.ndarray) -> np.ndarray:
        """log F(m) for integer-valued m (float array): the table inside, 0 above it, the bound (T) below."""
        inside = np.clip(m, self.lowest, self.highest).astype(np.int64) - self.lowest
        values = self.log_cdf[inside]
        return np.where(m > self.highest, 0.0, np.where(m < self.lowest, self.log_tail(m), values))

    def log_tail(self, m: np.ndarray) -> np.ndarray:
        """Upper bound (T) on log F(m) for m < 0: log w(m) - log(1 - r) - log Z, r = e^{-(2|m|+1)/(2s^2)}."""
        s2 = 2.0 * self.sigma**2
        depth = np.abs(np.minimum(m, -1.0))
        with np.errstate(over="ignore"):
            return -np.square(depth) / s2 - np.log(-np.expm1(-(2.0 * depth + 1.0) / s2)) - self.log_z


@lru_cache(maxsize=64)
def table(sigma: float, sens: int = 1) -> Table:
    """The table of N_Z(0, sigma^2) for sensitivity sens (module docstring: x in [-M - k, M + k])."""
    if not (math.isfinite(sigma) and sigma > 0.0):
        raise ComputationError(f"discrete Gaussian: sigma must be a positive number, got {sigma!r}")
    half = math.ceil(TAIL_SIGMAS * sigma) + 2 * sens
    if 2 * half + 1 > MAX_TABLE:
        raise ComputationError(
            f"discrete Gaussian sigma={sigma:g}, sens={sens}: the exact sum needs {2 * half + 1} points",
            f"at most {MAX_TABLE}; use {parameter('method')} rdp (zCDP, rigorous) for this mechanism",
        )
    x = np.arange(-half, half + 1, dtype=float)
    log_weight = -np.square(x) / (2.0 * sigma**2)
    log_partial = np.logaddexp.accumulate(log_weight)
    log_z = float(np.logaddexp.reduce(log_weight))
    return Table(sigma, -half, log_weight, log_partial - log_z, log_z)


def _threshold(epsilon: np.ndarray, sigma: float, sens: int) -> np.ndarray:
    """m = floor(k/2 - sigma^2 eps / k), the largest x with L(x) >= eps (+-1e150 for eps = -+inf)."""
    with np.errstate(over="ignore", invalid="ignore"):
        t = 0.5 * sens - sigma**2 * epsilon / sens
    return np.floor(np.clip(t, -1e150, 1e150))


def _log_far(epsilon: np.ndarray, m: np.ndarray, sigma: float, sens: int, tab: Table) -> np.ndarray:
    """log delta(eps) for thresholds m below the table (m < -M): the first J terms
    P(x) (1 - e^{eps - L(x)}), x = m, m - 1, ..., summed in log space, plus the bound (T) on the rest,
    P(m - J) / (1 - r) <= 1e-20 P(m): a rigorous upper bound within 1e-20 relative of delta."""
    s2 = 2.0 * sigma**2
    rate = (2.0 * (-tab.lowest - sens) - 1.0) / s2  # -log r at the table's edge; r only shrinks beyond
    terms = min(math.ceil(46.0 / rate) + 1, MAX_TABLE)
    out = np.empty(epsilon.shape)
    step = max(1, MAX_TABLE // terms)
    for start in range(0, epsilon.size, step):
        eps, top = epsilon[start : start + step, None], m[start : start + step, None]
        x = top - np.arange(terms, dtype=float)[None, :]
        loss = (sens * sens - 2.0 * sens * x) / s2
        log_terms = -np.square(x) / s2 + _log1m_exp(eps - loss)
        rest = tab.log_tail(top[:, 0] - terms) + tab.log_z
        out[start : start + step] = np.logaddexp(np.logaddexp.reduce(log_terms, axis=1), rest) - tab.log_z
    return out


def log_profile(epsilon: ArrayLike, sigma: float, sens: int = 1, far: bool = True) -> ArrayLike:
    """log delta(eps) of N_Z(0, sigma^2) vs N_Z(sens, sigma^2), vectorized, for all real eps ([CKS20] Thm 7).

    -inf at eps = +inf. Exact up to rounding where the threshold m is inside the table. Below it (eps
    beyond about 38.6 sens / sigma, delta < 1e-320): with far=True the summed rigorous upper bound of
    _log_far (1e-20 relative); with far=False the cruder bound (T) on F(m), which costs nothing.
    """
    epsilon = np.asarray(epsilon, dtype=float)
    tab = table(float(sigma), int(sens))
    m = _threshold(epsilon, sigma, sens)
    below = (m <= tab.lowest + sens) & np.isfinite(epsilon)
    value = np.where(below, tab.log_cdf_at(m), _log_inside(epsilon, m, sigma, sens, tab))
    if far and np.any(below):
        value[below] = _log_far(epsilon[below], m[below], sigma, sens, tab)
    return as_output(np.where(np.isposinf(epsilon), -np.inf, value))


def _log_inside(epsilon: np.ndarray, m: np.ndarray, sigma: float, sens: int, tab: Table) -> np.ndarray:
    """log of P(m) (1 - e^{eps - L(m)}) + [F(m - 1) - e^eps F(m - 1 - k)]: the first term split off, so that
    the bracket cancels by at most 1 - e^{-k / sigma^2} (its ratio is at most e^{eps - L(m - 1)}) even where
    eps sits on a kink L(m) and the first term vanishes."""
    s2 = 2.0 * sigma**2
    log_a, log_b = tab.log_cdf_at(m - 1.0), tab.log_cdf_at(m - 1.0 - sens)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        first = -np.square(m) / s2 - tab.log_z + _log1m_exp(epsilon - (sens * sens - 2.0 * sens * m) / s2)
        rest = log_a + _log1m_exp(np.where(np.isneginf(epsilon), -np.inf, epsilon + log_b - log_a))
        return np.logaddexp(first, rest)  # (nan where sigma is too small for the table: callers refuse it)


def _log1m_exp(x: np.ndarray) -> np.ndarray:
    """log(1 - e^x) for x <= 0 (x > 0, a rounding-level excess, counts as 0: -inf)."""
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(-np.expm1(np.minimum(x, 0.0)), 0.0))


def profile(epsilon: ArrayLike, sigma: float, sens: int = 1) -> ArrayLike:
    """delta(eps) = sum_x (P(x) - e^eps Q(x))_+ for all real eps and eps = +inf (0): log_profile without its
    far sum (there delta < 1e-320: the bound (T), a denormal or 0)."""
    return as_output(np.exp(np.asarray(log_profile(epsilon, sigma, sens, far=False))))


def tradeoff(alpha: ArrayLike, sigma: float, sens: int = 1) -> ArrayLike:
    """T(P, Q)(alpha), piecewise linear through the Neyman-Pearson vertices (GDP paper Def. 1, Prop. 1).

    The likelihood ratio Q/P grows with x, so the most powerful tests reject for x >= t: type I error
    alpha_t = P(X >= t) = F(-t) (P is symmetric), type II error beta_t = Q(X < t) = F(t - 1 - k); tests
    randomized at the boundary give the segments between consecutive vertices.
    """
    alpha = np.asarray(alpha, dtype=float)
    tab = table(float(sigma), int(sens))
    t = np.arange(tab.highest + sens + 1, tab.lowest - 1, -1, dtype=float)  # alpha_t increasing
    alphas = np.exp(tab.log_cdf_at(-t))
    betas = np.exp(tab.log_cdf_at(t - 1.0 - sens))
    alphas = np.concatenate(([0.0], alphas, [1.0]))
    betas = np.concatenate(([1.0], betas, [0.0]))
    return as_output(np.clip(np.interp(alpha, alphas, betas), 0.0, 1.0))


def rdp(order: ArrayLike, sigma: float, sens: int = 1) -> ArrayLike:
    """D_order(N_Z(0, sigma^2) || N_Z(sens, sigma^2)) <= order sens^2 / (2 sigma^2): the discrete Gaussian
    is (sens^2 / (2 sigma^2))-zCDP ([CKS20] Prop. 5), a valid upper bound at every order > 1."""
    return as_output(np.asarray(order, dtype=float) * (sens * sens / (2.0 * sigma * sigma)))


@dataclass(frozen=True)
class Moments:
    """kl, kappa2, kappa3, kappa3bar, variance of the loss log(q/p)(X), X ~ P (GDP paper Sec. 3.2)."""

    kl: float
    kappa2: float
    kappa3: float
    kappa3bar: float
    variance: float


def moments(sigma: float, sens: int = 1) -> Moments:
    """The CLT functionals as exact sums over the table (GDP paper Sec. 3.2).

    The loss log(q/p)(x) = (2 k x - k^2) / (2 sigma^2) is affine in x and E X = 0 by symmetry, so
    kl = k^2 / (2 sigma^2), variance = (k / sigma^2)^2 E X^2, kappa2 = variance + kl^2,
    kappa3bar = (k / sigma^2)^3 E|X|^3 and kappa3 = E|loss|^3 (summed with math.fsum).
    """
    tab = table(float(sigma), int(sens))
    x, p = tab.support, tab.masses()
    slope, kl = sens / sigma**2, sens * sens / (2.0 * sigma**2)
    variance = slope**2 * math.fsum(p * x * x)
    return Moments(
        kl=kl,
        kappa2=variance + kl * kl,
        kappa3=math.fsum(p * np.abs(slope * x - kl) ** 3),
        kappa3bar=slope**3 * math.fsum(p * np.abs(x) ** 3),
        variance=variance,
    )
