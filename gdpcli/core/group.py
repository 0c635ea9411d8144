"""Group privacy of the Poisson-subsampled Gaussian mechanism: the binomial-mixture pair.

A group of K records, each sampled independently at rate q (record-level Poisson sampling), into a sum
query with per-record L2 sensitivity C and Gaussian noise sigma (mu = C / sigma): J ~ Bin(K, q) of them
land in the batch and move the sum by at most J C. The remove direction is the pair

    P = sum_{j=0..K} w_j N(j mu, 1)   against   Q = N(0, 1),   w_j = C(K, j) q^j (1 - q)^{K - j},

and the add direction is (Q, P). It is attained when the K records' clipped contributions coincide (the
worst case: Schuchardt et al., "Unified Mechanism-Specific Amplification by Subsampling and Group Privacy
Amplification", NeurIPS 2024, group privacy of the subsampled Gaussian); for K = 1 it is the Poisson
pair of the GDP paper Sec. 4 (f_p = T(N(0,1), (1 - p) N(0,1) + p N(mu,1))). For q = 1 it is N(K mu, 1)
against N(0, 1), i.e. (K mu)-GDP, the GDP paper's Thm 3 for the Gaussian mechanism.

The likelihood ratio L(x) = dP/dQ(x) = sum_j w_j exp(j mu x - (j mu)^2 / 2) increases in x from w_0 to
infinity, so each hockey-stick divergence has one threshold x*, and with eps_j = j mu x* - (j mu)^2 / 2
(so that L(x*) = sum_j w_j e^{eps_j}) both profiles are sums of positive terms, each a Gaussian profile
(GDP paper Cor. 1) at its own epsilon, summed in log space (no e^eps cancellation):

    H_{e^eps}(P || Q) = sum_{j>=1} w_j delta(eps_j; j mu),                         L(x*) = e^eps,
    H_{e^eps}(Q || P) = e^eps sum_{j>=1} w_j e^{eps_j} delta(-eps_j; j mu),           L(x*) = e^-eps,

where delta(eps; m) = Phi(-eps/m + m/2) - e^eps Phi(-eps/m - m/2) (gdp.log_delta). The remove profile is
1 - e^eps for e^eps <= w_0 (the privacy loss is at least log w_0 = K log(1 - q), a kink that carries the
mass of the j = 0 component), the add profile 0 for e^-eps <= w_0.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from gdpcli.core import gdp
from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.pld import DominatingPair
from gdpcli.core.roots import bracketed_newton
from gdpcli.errors import InputError

MAX_GROUP = 1000
"""The largest group of the mixture pair: its profiles cost K + 1 Gaussian profiles per point."""


class Mixture:
    """The binomial mixture sum_j w_j N(j mu, 1) against N(0, 1): its log weights and threshold solver."""

    def __init__(self, mu: float, sampling_rate: float, group_size: int) -> None:
        _check(mu, sampling_rate, group_size)
        self.mu, self.q, self.k = float(mu), float(sampling_rate), int(group_size)
        self.log_w0 = self.k * math.log1p(-self.q) if self.q < 1.0 else -math.inf
        jobs = np.arange(1, self.k + 1)
        self.log_w = np.array([_log_weight(self.k, int(j), self.q) for j in jobs])
        self.shift = jobs * self.mu  # the mean j mu of component j

    def log_ratio_excess(self, x: np.ndarray) -> np.ndarray:
        """log(L(x) - w_0) = logsumexp_{j>=1} (log w_j + j mu x - (j mu)^2 / 2), vectorized over x."""
        terms = self.log_w[:, None] + self.shift[:, None] * (x[None, :] - 0.5 * self.shift[:, None])
        return np.logaddexp.reduce(terms, axis=0)

    def _slope(self, x: np.ndarray) -> np.ndarray:
        """d/dx log(L(x) - w_0): the softmax-weighted mean of j mu (between mu and K mu)."""
        terms = self.log_w[:, None] + self.shift[:, None] * (x[None, :] - 0.5 * self.shift[:, None])
        weights = np.exp(terms - np.max(terms, axis=0))
        return (self.shift[:, None] * weights).sum(axis=0) / weights.sum(axis=0)

    def threshold(self, log_excess: np.ndarray) -> np.ndarray:
        """The x* with log(L(x*) - w_0) = y for each finite y: safeguarded Newton on the convex increasing
        logsumexp, bracketed by lo = min_j (y - log K - a_j) / b_j <= x* <= min_j (y - a_j) / b_j =
        hi (a_j = log w_j - (j mu)^2 / 2, b_j = j mu: at hi one term alone reaches y, at lo all K together
        stay below it)."""
        intercept = (self.log_w - 0.5 * self.shift**2)[:, None]
        y = log_excess[None, :]
        hi = np.min((y - intercept) / self.shift[:, None], axis=0)
        lo = np.min((y - math.log(self.k) - intercept) / self.shift[:, None], axis=0)
        if self.k == 1:
            return hi  # one component: the root in closed form
        return bracketed_newton(lambda x: self.log_ratio_excess(x) - log_excess, self._slope, lo, hi)

    def exponents(self, x: np.ndarray) -> np.ndarray:
        """eps_j = j mu x - (j mu)^2 / 2 = j mu (x - j mu / 2) for each component j >= 1 (rows) and x."""
        return self.shift[:, None] * (x[None, :] - 0.5 * self.shift[:, None])


def _log_weight(k: int, j: int, q: float) -> float:
    """log of the binomial probability C(k, j) q^j (1 - q)^{k - j}, the coefficient exact (math.comb)."""
    if j < k and q == 1.0:
        return -math.inf  # every record is sampled: only j = K has weight
    tail = (k - j) * math.log1p(-q) if j < k else 0.0
    return math.log(math.comb(k, j)) + j * math.log(q) + tail


def _check(mu: float, sampling_rate: float, group_size: int) -> None:
    """InputError unless mu > 0, 0 < q <= 1 and K a whole number in [1, MAX_GROUP]."""
    if not (math.isfinite(mu) and mu > 0):
        raise InputError(f"mu must be a positive finite number, got {mu!r}")
    if not 0.0 < sampling_rate <= 1.0:
        raise InputError(f"sampling rate must be in (0, 1], got {sampling_rate!r}")
    if int(group_size) != group_size or not 1 <= group_size <= MAX_GROUP:
        raise InputError(f"group size must be a whole number in [1, {MAX_GROUP}], got {group_size!r}")


def _excess_target(log_scale: np.ndarray, log_w0: float) -> np.ndarray:
    """log(e^s - w_0) = s + log(-expm1(log w_0 - s)) for s > log w_0 (no cancellation of e^s - w_0)."""
    with np.errstate(divide="ignore"):
        return log_scale + np.log(-np.expm1(log_w0 - log_scale))


def remove_profile(mu: float, sampling_rate: float, group_size: int) -> Callable[[ArrayLike], ArrayLike]:
    """delta(eps) = H_{e^eps}(P || Q) of the binomial mixture P against Q = N(0, 1) (module docstring), for
    every real eps and +-inf: 1 - e^eps up to log w_0 = K log(1 - q), then sum_j w_j delta(eps_j; j mu)."""
    mixture = Mixture(mu, sampling_rate, group_size)

    def remove(epsilon: ArrayLike) -> ArrayLike:
        epsilon = np.asarray(epsilon, dtype=float)
        flat = epsilon.ravel()
        inside = (flat > mixture.log_w0) & np.isfinite(flat)
        result = np.where(flat == np.inf, 0.0, -np.expm1(np.minimum(flat, 0.0)))
        if inside.any():
            x = mixture.threshold(_excess_target(flat[inside], mixture.log_w0))
            logs = mixture.log_w[:, None] + _log_deltas(mixture.exponents(x), mixture.shift)
            result[inside] = gdp_exp(np.logaddexp.reduce(logs, axis=0))
        return as_output(result.reshape(epsilon.shape))

    return remove


def add_profile(mu: float, sampling_rate: float, group_size: int) -> Callable[[ArrayLike], ArrayLike]:
    """delta(eps) = H_{e^eps}(Q || P), the add direction (module docstring), for every real eps and +-inf:
    e^eps sum_j w_j e^{eps_j} delta(-eps_j; j mu) below -log w_0 = -K log(1 - q), 0 from there on."""
    mixture = Mixture(mu, sampling_rate, group_size)

    def add(epsilon: ArrayLike) -> ArrayLike:
        epsilon = np.asarray(epsilon, dtype=float)
        flat = epsilon.ravel()
        inside = (-flat > mixture.log_w0) & np.isfinite(flat)
        result = np.where(flat == -np.inf, 1.0, 0.0)
        if inside.any():
            eps = flat[inside]
            x = mixture.threshold(_excess_target(-eps, mixture.log_w0))
            exponents = mixture.exponents(x)
            logs = mixture.log_w[:, None] + exponents + _log_deltas(-exponents, mixture.shift)
            result[inside] = np.minimum(gdp_exp(eps + np.logaddexp.reduce(logs, axis=0)), 1.0)
        return as_output(result.reshape(epsilon.shape))

    return add


def _log_deltas(exponents: np.ndarray, shifts: np.ndarray) -> np.ndarray:
    """log delta(eps_j; j mu) per component (rows) and point (columns): GDP paper Cor. 1 in log space."""
    return np.asarray(gdp.log_delta(exponents, np.broadcast_to(shifts[:, None], exponents.shape)))


def gdp_exp(log: np.ndarray) -> np.ndarray:
    """e^log with a positive value below the float range kept as the smallest subnormal (never 0), so that
    a profile stays on the safe side (as gdp.delta does)."""
    value = np.exp(log)
    return np.where((value == 0) & (log > -np.inf), np.nextafter(0.0, 1.0), value)


def pair(mu: float, sampling_rate: float, group_size: int) -> DominatingPair:
    """The group's pair for the PLD engine: remove and add profiles (module docstring) and the kink at the
    smallest privacy loss K log(1 - q), where the j = 0 component's mass sits (DominatingPair.kink). The
    loss range is left to the engine, which sizes it to the query's tail budget (pld.loss_range)."""
    kink = group_size * math.log1p(-sampling_rate) if sampling_rate < 1.0 else None
    return DominatingPair(
        remove_profile(mu, sampling_rate, group_size), add_profile(mu, sampling_rate, group_size), kink=kink
    )


__all__ = ["MAX_GROUP", "Mixture", "add_profile", "pair", "remove_profile"]
