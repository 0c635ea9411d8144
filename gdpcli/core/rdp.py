"""Renyi differential privacy: RDP curves of common mechanisms and RDP -> (eps, delta) conversions.

An RDP curve is a vectorized callable order -> eps_R(order) for orders alpha > 1 (continuous, not
only integers). Curves compose by addition (Mironov 2017, Prop. 1): `compose`, `self_compose`.

Conversions (Asoodeh, Liao, Calmon, Kosut, Sankar, "A Better Bound Gives a Hundred Rounds",
called "the paper" below), each a rigorous upper bound on epsilon (or delta), selected by name:

- `classic`: Mironov 2017 Prop. 3, the paper's eq. (3)-(4): eps = eps_R + log(1/delta) / (alpha - 1).
- `improved`: Balle et al. 2020, "Hypothesis testing interpretations and Renyi DP", Thm 21:
  eps = eps_R + log((alpha - 1) / alpha) - (log delta + log alpha) / (alpha - 1).
- `lemma1`: the paper's Lemma 1 (for Gaussian curves optimised over alpha this is its Lemma 2).
- `optimal`: the paper's Thm 3, the exact conversion of a single RDP point (tight over all
  mechanisms satisfying it), solved numerically.

For a curve the best order is searched continuously: a vectorized scan over log(alpha - 1) that
widens until the minimum is interior, then zooms in until log(alpha - 1) is known to 1e-7. Every
order gives a valid bound, so the search affects only tightness, never validity.

Public API: curves `gaussian`, `laplace`, `randomized_response`, `subsampled_gaussian`, `compose`,
`self_compose`; single points `epsilon`, `delta`; curves and finite point sets `epsilon_from_curve`,
`delta_from_curve`, `epsilon_from_points`, `delta_from_points` (each returns a `Conversion`: the value
and the order that achieved it); trade-off lower bounds `binary_tradeoff`, `tradeoff_from_points`,
`tradeoff_from_curve` (what an RDP guarantee says about any test's type II error). The paper's Sec. IV
comparisons (T-fold Gaussian composition by each method) are reproduced in tests/core/test_rdp.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from scipy import special

from gdpcli.core import gdp
from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.normal import log_Phi
from gdpcli.core.roots import bracketed_newton
from gdpcli.errors import ComputationError, InputError

RdpCurve = Callable[[np.ndarray], np.ndarray]
_T = TypeVar("_T")

EPSILON_METHODS = ("classic", "improved", "lemma1", "optimal")
DELTA_METHODS = ("classic", "improved", "optimal")
# The order grid on which the paper's Fig. 2 comparison (and values.json) minimises Lemma 2: 200000 equally
# spaced orders in (1, 1e5] (step 0.499995), 1e5 = 1/delta being the largest order Lemma 2 allows.
PAPER_ORDER_GRID = np.linspace(1.0, 1e5, 200001)[1:]

_SERIES_CHUNK = 1024
_SERIES_EXTRA_TERMS = 20_000
_SERIES_RTOL = 1e-15
_OPTIMAL_ROUND_UP = 1e-11
_CLOSED_FORM_RTOL = 1e-14
_NOISE = 16.0 * np.finfo(float).eps
_SLOPE_RTOL = 1e-14
_STEP_RTOL = 1e-15
_ZOOM_POINTS = 33
_ZOOM_XTOL = 1e-7
_MIN_ORDER_MINUS_ONE = 1e-9
_MAX_ORDER = 1e6


# ---------------------------------------------------------------------------------------------------------
# RDP curves
# ---------------------------------------------------------------------------------------------------------


def _orders(order: ArrayLike) -> np.ndarray:
    """Renyi orders as a float array; InputError unless every order is > 1."""
    order = np.asarray(order, dtype=float)
    if not np.all(order > 1.0):
        raise InputError("Renyi orders must be greater than 1", "e.g. alpha=1.5 or alpha=32")
    return order


def gaussian(order: ArrayLike, sigma: float, sensitivity: float = 1.0) -> ArrayLike:
    """RDP of the Gaussian mechanism: alpha sens^2 / (2 sigma^2) (Mironov 2017, Prop. 7).

    This is the RDP of mu-GDP with mu = sens / sigma (`gdpcli.core.gdp.rdp`).
    """
    return gdp.rdp(_orders(order), sensitivity / sigma)


def laplace(order: ArrayLike, epsilon: float) -> ArrayLike:
    """RDP of the Laplace mechanism with eps0 = sens / b (Mironov 2017, Table II), exact:

        1/(alpha-1) log( alpha/(2alpha-1) e^{(alpha-1) eps0} + (alpha-1)/(2alpha-1) e^{-alpha eps0} )
        = eps0 + log1p( (alpha-1)/(2alpha-1) expm1((1-2alpha) eps0) ) / (alpha-1),

    the second form being free of overflow and accurate as alpha -> 1 (a rounding-negative value reads 0).
    """
    order = _orders(order)
    x = (order - 1.0) / (2.0 * order - 1.0) * np.expm1((1.0 - 2.0 * order) * epsilon)
    return as_output(np.maximum(epsilon + np.log1p(x) / (order - 1.0), 0.0))


def randomized_response(order: ArrayLike, epsilon: float) -> ArrayLike:
    """RDP of the tight pair of pure eps0-DP, randomized response with p = e^eps0 / (1 + e^eps0):

        1/(alpha-1) log( p^alpha (1-p)^{1-alpha} + (1-p)^alpha p^{1-alpha} )
        = eps0 + log1p( (1-p) expm1(-2 (alpha-1) eps0) ) / (alpha-1)

    (Mironov 2017, Table II), the second form being stable for large eps0 and alpha near 1.
    """
    order = _orders(order)
    x = special.expit(-epsilon) * np.expm1(-2.0 * (order - 1.0) * epsilon)
    return as_output(np.maximum(epsilon + np.log1p(x) / (order - 1.0), 0.0))


def _log_abs_binom(order: np.ndarray, i: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log |binom(alpha, i)| and its sign, for real alpha > 1 and integers i >= 0 (broadcast)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_abs = special.gammaln(order + 1.0) - special.gammaln(i + 1.0) - special.gammaln(order - i + 1.0)
        sign = special.gammasgn(order - i + 1.0)
    vanishing = ((order == np.floor(order)) & (i > order)) | np.isneginf(log_abs)
    return np.where(vanishing, -np.inf, log_abs), np.where(vanishing, 0.0, sign)


def _log_a_terms(
    order: np.ndarray, i: np.ndarray, log_q: float, log_1mq: float, sigma: float
) -> tuple[np.ndarray, np.ndarray]:
    """log |term_i| and sign of the series A_alpha = E[(mixture/base)^alpha] of the sampled Gaussian.

    Integer alpha: the binomial sum of Mironov, Talwar, Zhang 2019 ("Renyi differential privacy of the
    sampled Gaussian mechanism"), Sec. 3.3, exact (terms with i > alpha vanish):
    term_i = binom(alpha, i) q^i (1-q)^{alpha-i} e^{(i^2-i)/(2 sigma^2)}.
    Fractional alpha: their convergent series, the integral split at z0 = sigma^2 log(1/q - 1) + 1/2
    (as tensorflow-privacy's _compute_log_a_frac): term_i = s0_i + s1_i,

        s0_i = binom(alpha, i) q^i (1-q)^{alpha-i} e^{(i^2-i)/(2 sigma^2)} Phi((z0 - i)/sigma),
        s1_i = binom(alpha, i) q^{alpha-i} (1-q)^i e^{(j^2-j)/(2 sigma^2)} Phi((j - z0)/sigma), j = alpha - i.
    """
    log_binom, sign = _log_abs_binom(order, i)
    j = order - i
    variance = sigma * sigma  # (inf beyond the floats, where sigma**2 raises: the exponents are then 0)
    log_s0 = i * log_q + j * log_1mq + _exponent(i, variance)
    fractional = order != np.floor(order)
    if np.any(fractional):
        z0 = variance * (log_1mq - log_q) + 0.5
        log_s0_split = log_s0 + log_Phi((z0 - i) / sigma)
        log_s1 = j * log_q + i * log_1mq + _exponent(j, variance) + log_Phi((j - z0) / sigma)
        log_s0 = np.where(fractional, np.logaddexp(log_s0_split, log_s1), log_s0)
    return log_binom + log_s0, sign


def _exponent(k: np.ndarray, variance: float) -> np.ndarray:
    """(k^2 - k) / (2 sigma^2): 0 at k = 0 and 1 whatever the variance, and inf elsewhere where the
    variance underflowed to 0 (noise 1e-300 and below: the curve is then infinite, without numpy's
    division warnings)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(k * k == k, 0.0, (k * k - k) / (2.0 * variance))


def _log_a(order: np.ndarray, sampling_rate: float, sigma: float) -> np.ndarray:
    """log A_alpha for the Poisson-subsampled Gaussian, 0 < q < 1, orders alpha > 1 (1-d array).

    The terms are summed in chunks, signed, in log space. Integer orders stop after i = alpha (exact).
    Fractional orders stop once a chunk's terms are below 1e-15 of the partial sum, or after alpha + 20000
    terms (near alpha = 1 the terms decay only like i^-(alpha+2)); beyond i = alpha + 1 the terms alternate
    in sign with decreasing magnitude, so adding the magnitude of the last term summed keeps the truncated
    value an upper bound (the safe side).
    """
    log_q, log_1mq = math.log(sampling_rate), math.log1p(-sampling_rate)
    log_sum = np.full(order.shape, -np.inf)
    sign_sum = np.ones(order.shape)
    last_term = np.full(order.shape, -np.inf)
    active = np.ones(order.shape, dtype=bool)
    start = 0
    while np.any(active):
        a = order[active][:, None]
        i = np.arange(start, start + _SERIES_CHUNK, dtype=float)[None, :]
        log_terms, signs = _log_a_terms(a, i, log_q, log_1mq, sigma)
        chunk_log, chunk_sign = special.logsumexp(log_terms, b=signs, axis=1, return_sign=True)
        total_log, total_sign = special.logsumexp(
            np.stack([log_sum[active], chunk_log]),
            b=np.stack([sign_sum[active], chunk_sign]),
            axis=0,
            return_sign=True,
        )
        log_sum[active], sign_sum[active] = total_log, total_sign
        last_term[active] = log_terms[:, -1]
        chunk_max = np.max(log_terms, axis=1)
        past_order = start + _SERIES_CHUNK > a[:, 0] + 1
        small = chunk_max < total_log + math.log(_SERIES_RTOL)
        done = past_order & (small | (start + _SERIES_CHUNK > a[:, 0] + _SERIES_EXTRA_TERMS))
        active[np.flatnonzero(active)[done]] = False
        start += _SERIES_CHUNK
    if np.any(sign_sum <= 0):
        raise ComputationError("the sampled-Gaussian RDP series lost all precision", "check the inputs")
    return np.logaddexp(log_sum, last_term)


def subsampled_gaussian(order: ArrayLike, sampling_rate: float, noise_multiplier: float) -> ArrayLike:
    """RDP of the Poisson-subsampled Gaussian mechanism (Mironov, Talwar, Zhang 2019, Sec. 3.3).

    eps_R(alpha) = log(A_alpha) / (alpha - 1), with s the noise multiplier and
    A_alpha = E_{z ~ N(0, s^2)}[((1-q) + q e^{(2z-1)/(2 s^2)})^alpha]: exact binomial sum at integer
    orders, the MTZ series (as tensorflow-privacy's _compute_log_a_frac, summed with signs and truncated
    on the safe side) at fractional orders. q = 1 is the plain Gaussian alpha / (2 s^2); q = 0 gives 0.
    A Renyi divergence is >= 0: where the true value is below the rounding of log A near 0 (noise 1e10
    and beyond: values of either sign at 1e-16), a negative one is 0 (the optimal conversion found no
    root for it: exit 1 at noise 1e300).
    """
    order = _orders(order)
    if not (0.0 <= sampling_rate <= 1.0 and noise_multiplier > 0.0):
        raise InputError("need 0 <= sampling rate <= 1 and noise multiplier > 0", "e.g. p=0.01,sigma=1.1")
    if sampling_rate == 0.0:
        return as_output(np.zeros(order.shape))
    if sampling_rate == 1.0:
        return gaussian(order, noise_multiplier)
    flat = order.ravel()
    values = np.maximum(_log_a(flat, sampling_rate, noise_multiplier) / (flat - 1.0), 0.0)
    return as_output(values.reshape(order.shape))


POISSON_BOUND_MAX_ORDER = 256
"""The largest integer order at which `poisson_subsampled` sums Zhu and Wang's bound (cost ~ order)."""
_POISSON_BOUND_RTOL = 1e-12
"""Rounding allowance of `poisson_subsampled` (a few ulps per term of its log-sum-exp), added outward: at
order 2 the bound is attained (the subsampled Gaussian), so unrounded it can fall an ulp below the truth."""


def _log_poisson_bound(order: int, sampling_rate: float, log_base: np.ndarray) -> float:
    """(alpha - 1) x the bound of `poisson_subsampled` at one integer alpha >= 2, in logs;
    log_base[j - 2] = (j - 1) eps(j)."""
    j = np.arange(2, order + 1, dtype=float)
    log_binom = special.gammaln(order + 1.0) - special.gammaln(j + 1.0) - special.gammaln(order - j + 1.0)
    weight = log_binom + j * math.log(sampling_rate) + special.xlogy(order - j, 1.0 - sampling_rate)
    factor = np.where(j >= 3.0, math.log(3.0), 0.0)  # the 3 of every term with j >= 3
    first = special.xlogy(order - 1.0, 1.0 - sampling_rate) + math.log1p((order - 1.0) * sampling_rate)
    return float(special.logsumexp(np.concatenate(([first], weight + factor + log_base[: order - 1]))))


def _convexity_bound(order: np.ndarray, sampling_rate: float, base: RdpCurve) -> np.ndarray:
    """1/(alpha-1) log(1 - gamma + gamma e^{(alpha-1) eps(alpha)}) at every alpha > 1, for both directions.

    int p^alpha q^{1-alpha} is the f-divergence of f(t) = t^alpha (convex for alpha > 1), hence jointly convex
    in (P, Q); the Poisson-subsampled pairs are (1-gamma) (Q0, Q0) + gamma (Q1, Q0) and its mirror image
    (1-gamma) (Q0, Q0) + gamma (Q0, Q1), each bounded so by the base curve's two directions."""
    log_mixture = np.logaddexp(
        math.log1p(-sampling_rate), math.log(sampling_rate) + (order - 1.0) * base(order)
    )
    return log_mixture / (order - 1.0)


def poisson_subsampled(order: ArrayLike, sampling_rate: float, base: RdpCurve) -> ArrayLike:
    """An upper bound on the RDP of any mechanism with RDP curve eps(.) (both directions, add/remove
    neighbours) run on a Poisson sample at rate gamma: the smaller of Zhu and Wang 2019, "Poisson Subsampled
    Renyi Differential Privacy", ICML, Thm 6 (general upper bound), at integer alpha >= 2:

        (alpha-1) eps'(alpha) <= log{ (1-gamma)^{alpha-1} (alpha gamma - gamma + 1)
            + binom(alpha, 2) gamma^2 (1-gamma)^{alpha-2} e^{eps(2)}
            + 3 sum_{j=3}^{alpha} binom(alpha, j) gamma^j (1-gamma)^{alpha-j} e^{(j-1) eps(j)} },

    and the joint-convexity bound (`_convexity_bound`, every alpha > 1). A Renyi divergence is
    non-decreasing in its order, so a fractional alpha takes Thm 6 at ceil(alpha) (alpha in (1, 2): at 2);
    orders above POISSON_BOUND_MAX_ORDER take the convexity bound only.
    """
    order = _orders(order)
    if not 0.0 < sampling_rate < 1.0:
        raise InputError(f"sampling rate {sampling_rate!r} is not in (0, 1)", "e.g. p=0.01")
    ceiling = np.maximum(np.ceil(order), 2.0)
    inside = ceiling <= POISSON_BOUND_MAX_ORDER
    needed = int(np.max(ceiling[inside], initial=2.0))
    j = np.arange(2, needed + 1, dtype=float)
    log_base = (j - 1.0) * np.asarray(base(j), dtype=float)
    bounds = {int(m): _log_poisson_bound(int(m), sampling_rate, log_base) for m in np.unique(ceiling[inside])}
    theorem6 = [
        bounds[int(m)] / (m - 1.0) if m <= POISSON_BOUND_MAX_ORDER else math.inf for m in ceiling.ravel()
    ]
    best = np.minimum(np.reshape(theorem6, order.shape), _convexity_bound(order, sampling_rate, base))
    return as_output(np.maximum(best, 0.0) * (1.0 + _POISSON_BOUND_RTOL))


def compose(curves: Sequence[RdpCurve]) -> RdpCurve:
    """RDP of an adaptive composition: the sum of the curves (Mironov 2017, Prop. 1)."""
    return lambda order: sum((np.asarray(curve(order), dtype=float) for curve in curves), np.float64(0.0))


def self_compose(curve: RdpCurve, times: int) -> RdpCurve:
    """RDP of the T-fold adaptive self-composition: T * curve (Mironov 2017, Prop. 1)."""
    return lambda order: times * np.asarray(curve(order), dtype=float)


# ---------------------------------------------------------------------------------------------------------
# Single-point conversions (vectorized over order, rdp epsilon and delta / epsilon)
# ---------------------------------------------------------------------------------------------------------


def _log_zeta(order: np.ndarray) -> np.ndarray:
    """log zeta_alpha, zeta_alpha = (1/alpha) (1 - 1/alpha)^{alpha-1} (the paper's Thm 4)."""
    return -np.log(order) + (order - 1.0) * np.log1p(-1.0 / order)


def _upward_sum(*terms: np.ndarray) -> np.ndarray:
    """The sum of the terms rounded up by 1e-14 of the sum of their magnitudes.

    1e-14 is about 45 ulps, well above the rounding error of the few operations in each closed-form
    conversion, so a closed-form bound stays a bound in floating point even where it is tight.
    """
    total = sum(terms, np.float64(0.0))
    magnitude = sum((np.abs(term) for term in terms), np.float64(0.0))
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(total), total + _CLOSED_FORM_RTOL * magnitude, total)


def _classic_epsilon(order: np.ndarray, rdp_epsilon: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Mironov's conversion, the paper's eq. (3): eps = eps_R + log(1/delta) / (alpha - 1)."""
    return _upward_sum(rdp_epsilon, -np.log(delta) / (order - 1.0))


def _improved_epsilon(order: np.ndarray, rdp_epsilon: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Balle et al. 2020 Thm 21: eps = eps_R - log(delta / zeta_alpha) / (alpha - 1), floored at 0."""
    bound = _upward_sum(rdp_epsilon, _log_zeta(order) / (order - 1.0), -np.log(delta) / (order - 1.0))
    return np.maximum(bound, 0.0)


def _lemma1_epsilon(order: np.ndarray, rdp_epsilon: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """The paper's Lemma 1, eq. (19)-(20): for alpha delta >= 1, eps = (eps_R + log(1 - delta))_+; else

        eps = min{ (eps_R - log(delta/zeta_alpha)/(alpha-1))_+,
                   log( (e^{(alpha-1) eps_R} - 1) / (alpha delta) + 1 ) / (alpha-1) },

    using (alpha-1) chi(eps_R) = e^{(alpha-1) eps_R} - 1 (eq. (9)); the second term is formed in log space.
    """
    with np.errstate(over="ignore", divide="ignore"):
        scaled = (order - 1.0) * rdp_epsilon
        log_chi_term = _upward_sum(scaled, np.log(-np.expm1(-scaled)), -np.log(order * delta))
        second = _upward_sum(np.logaddexp(log_chi_term, 0.0) / (order - 1.0))
    small = np.minimum(_improved_epsilon(order, rdp_epsilon, delta), second)
    large = np.maximum(_upward_sum(rdp_epsilon, np.log1p(-np.minimum(delta, 1.0))), 0.0)
    return np.where(order * delta >= 1.0, large, small)


def _memo_last(function: Callable[[np.ndarray], _T]) -> Callable[[np.ndarray], _T]:
    """Cache the last call: bracketed_newton evaluates f and f' at the same point in turn."""
    last: list = [None, None]

    def cached(x: np.ndarray) -> _T:
        if last[0] is None or not np.array_equal(last[0], x):
            last[0], last[1] = np.array(x, copy=True), function(x)
        return last[1]

    return cached


@dataclass(frozen=True)
class _BinaryPair:
    """The bracket of Thm 3 at p = alpha delta + t, as log S(p) with its first two derivatives in p."""

    p_minus_delta: np.ndarray
    log_c: np.ndarray
    log_s: np.ndarray
    log_s_error: np.ndarray
    w_a: np.ndarray
    w_b: np.ndarray
    slope: np.ndarray
    curvature: np.ndarray


def _binary_pair(s: np.ndarray, order: np.ndarray, epsilon: np.ndarray, delta: np.ndarray) -> _BinaryPair:
    """S(p) = A + B at p = a delta + e^s, A = p^a (p-delta)^{1-a}, B = (1-p)^a c^{1-a}, c = e^eps - p + delta.

    (log S)' = w_A u + w_B v with w = share of S, u = (p - a delta) / (p (p - delta)) (free of cancellation),
    v = (a-1)/c - a/(1-p) < 0; (log S)'' = w_A (u^2 + (a(a-1) delta^2 - t^2) / (p (p-delta))^2)
    + w_B (v^2 - a/(1-p)^2 + (a-1)/c^2) - ((log S)')^2. The curvature is returned per unit of s (times t).
    A slope below 1e-14 of |w_A u| + |w_B v| (rounding noise), or whose Newton step in s is below a few
    ulps of s, reads 0: the minimiser is found to working precision and the solver stops at once.
    """
    t = np.exp(s)
    p = order * delta + t
    p_minus_delta = (order - 1.0) * delta + t
    one_minus_p = (1.0 - order * delta) - t
    log_c = epsilon + np.log1p(-p_minus_delta * np.exp(-epsilon))
    log_a = order * np.log(p) + (1.0 - order) * np.log(p_minus_delta)
    log_b = order * np.log(one_minus_p) + (1.0 - order) * log_c
    log_s = np.logaddexp(log_a, log_b)
    w_a, w_b = np.exp(log_a - log_s), np.exp(log_b - log_s)
    u = t / (p * p_minus_delta)
    v = (order - 1.0) * np.exp(-log_c) - order / one_minus_p
    slope = w_a * u + w_b * v
    second_a = u * u + (order * (order - 1.0) * delta * delta - t * t) / (p * p_minus_delta) ** 2
    second_b = v * v - order / one_minus_p**2 + (order - 1.0) * np.exp(-2.0 * log_c)
    curvature = t * (w_a * second_a + w_b * second_b - slope * slope)
    converged = (np.abs(slope) <= _SLOPE_RTOL * (w_a * u - w_b * v)) | (
        np.abs(slope) <= _STEP_RTOL * (np.abs(s) + 1.0) * np.abs(curvature)
    )
    slope = np.where(converged, 0.0, slope)
    log_s_error = _NOISE * (np.abs(log_a) + np.abs(log_b) + 1.0)
    return _BinaryPair(p_minus_delta, log_c, log_s, log_s_error, w_a, w_b, slope, curvature)


def _inner_bracket(
    order: np.ndarray, epsilon: np.ndarray, delta: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A bracket in s = log t for the minimiser of Thm 3, narrow where possible.

    Linearising (log S)' = 0 about p = alpha delta (where u = 0) gives t0 = p (p - delta) (B/A) |v|, which
    is accurate when B << A. The bracket starts at [log t0 - 1, log t0 + 1] and its upper end moves up in
    doubling steps while the derivative there is still negative (up to p = 1, where it is positive). Where
    the derivative does not change sign on it (t0 underflows: B is negligible, the minimum sits at t = 0 to
    double precision) the bracket collapses to the lowest point considered.
    """
    floor = np.maximum(np.log(order * delta * (1.0 - order * delta)) - 600.0, -700.0)
    ceiling = np.log1p(-order * delta)
    start = _binary_pair(np.full(order.shape, -np.inf), order, epsilon, delta)
    log_t0 = np.log(order * delta * (order - 1.0) * delta * np.abs(start.slope)) - np.log(start.w_a)
    lo = np.clip(log_t0 - 1.0, floor, ceiling)
    lo = np.where(_binary_pair(lo, order, epsilon, delta).slope < 0.0, lo, floor)
    hi = np.clip(log_t0 + 1.0, lo, ceiling)
    for step in 2.0 ** np.arange(12):
        below = (_binary_pair(hi, order, epsilon, delta).slope < 0.0) & (hi < ceiling)
        if not np.any(below):
            break
        lo = np.where(below, hi, lo)
        hi = np.where(below, np.minimum(hi + step, ceiling), hi)
    return lo, hi


@dataclass(frozen=True)
class _Theorem3:
    """gamma_alpha^eps(delta) of the paper's Thm 3 and its partial derivatives (envelope theorem)."""

    gamma: np.ndarray
    d_epsilon: np.ndarray
    d_delta: np.ndarray
    gamma_error: np.ndarray


def _theorem3(order: np.ndarray, epsilon: np.ndarray, delta: np.ndarray) -> _Theorem3:
    """The smallest RDP gamma of any mechanism that is not better than (eps, delta)-DP (paper, Thm 3):

        gamma = eps + min_{p in (delta, 1)} log( p^a (p-delta)^{1-a} + (1-p)^a (e^eps-p+delta)^{1-a} ) / (a-1)

    Derivation: over binary pairs P = (p, 1-p), Q = (q, 1-q) with E_{e^eps}(P||Q) = p - e^eps q = delta,
    the Renyi divergence is the expression above. Writing p = alpha delta + t, the first-order condition
    forces t > 0 (the derivative of the first term vanishes at p = alpha delta, the second term always
    decreases), and for alpha delta >= 1 the minimum sits at p = 1: gamma = eps - log(1 - delta) (eq. 17).
    The inner problem is solved by safeguarded Newton in s = log t on (log S)'. The partial derivatives
    of gamma follow from the envelope theorem. gamma_error bounds the floating-point error of gamma: the
    rounding of log S (a few ulps of |log A| + |log B|) divided by alpha - 1, large for alpha near 1.
    """
    order, epsilon, delta = np.broadcast_arrays(order, epsilon, delta)
    boundary = order * delta >= 1.0
    d = np.where(boundary, 0.5 / order, delta)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        pair = _memo_last(lambda s: _binary_pair(s, order, epsilon, d))
        lo, hi = _inner_bracket(order, epsilon, d)
        s = bracketed_newton(lambda s: pair(s).slope, lambda s: pair(s).curvature, lo, hi, rtol=1e-15)
        best = pair(np.where(pair(lo).slope >= 0.0, lo, s))
        gamma = epsilon + best.log_s / (order - 1.0)
        d_epsilon = best.w_a - best.w_b * best.p_minus_delta * np.exp(-best.log_c)
        d_delta = best.w_a / best.p_minus_delta - best.w_b * np.exp(-best.log_c)
        boundary_gamma = epsilon - np.log1p(-np.minimum(delta, 1.0))
        return _Theorem3(
            gamma=np.where(boundary, boundary_gamma, gamma),
            d_epsilon=np.where(boundary, 1.0, d_epsilon),
            d_delta=np.where(boundary, 1.0 / (1.0 - delta), d_delta),
            gamma_error=_NOISE * np.abs(epsilon)
            + np.where(boundary, _NOISE * boundary_gamma, best.log_s_error / (order - 1.0)),
        )


def _margin(at_root: _Theorem3, slope: np.ndarray) -> np.ndarray:
    """How far to move a computed root of gamma = eps_R to be sure of the safe side: 3 gamma_error / slope.

    The root satisfies |gamma - eps_R| <= gamma_error in floating point, so the true gamma there is within
    2 gamma_error of eps_R; a third covers the curvature of gamma over the step. Infinite if the slope is
    not positive (the caller then falls back to a closed-form bound).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(slope > 0.0, 3.0 * at_root.gamma_error / slope, np.inf)


_BRACKET_DOUBLINGS = 60
"""Widenings of the lower end of the optimal conversion's bracket (its width doubles each time)."""


def _optimal_epsilon(order: np.ndarray, rdp_epsilon: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """The paper's Thm 3 inverted in eps: the smallest eps with gamma_alpha^eps(delta) >= eps_R.

    gamma_alpha^eps(delta) increases in eps. Bracket: below, eps_R + log(1 - delta) (the binary pair with
    p = 1 gives gamma <= eps - log(1 - delta)) or 0; above, Lemma 1 (widened by 1e-9, as the root is often
    Lemma 1 itself) where it brackets the root, otherwise Mironov's classic eps (a valid bound, so always
    above the root). Safeguarded Newton with the envelope derivative; a Newton step below 1e-14 of eps, or
    a gap below the floating-point error of gamma, counts as converged. The root is then rounded up by
    3 gamma_error / slope (covering the error of gamma at the root) plus a relative 1e-11, and capped by
    Lemma 1 (a valid closed form), so the result never exceeds the other conversions. An infinite eps_R
    (a curve beyond the floats: noisy-gd at Lipschitz constant 1e300) gives eps inf.
    """
    order, rdp_epsilon, delta = np.broadcast_arrays(order, rdp_epsilon, delta)
    infinite = np.isposinf(rdp_epsilon)  # (eps inf; solved at 0 so that Newton meets no infinite bracket)
    rdp_epsilon = np.where(infinite, 0.0, rdp_epsilon)
    theorem3 = _memo_last(lambda epsilon: _theorem3(order, epsilon, delta))

    def gap(epsilon: np.ndarray) -> np.ndarray:
        result = theorem3(epsilon)
        gap = result.gamma - rdp_epsilon
        converged = (np.abs(gap) <= result.gamma_error) | (np.abs(gap) <= 1e-14 * epsilon * result.d_epsilon)
        return np.where(converged, 0.0, gap)

    def slope(epsilon: np.ndarray) -> np.ndarray:
        return theorem3(epsilon).d_epsilon

    lemma1 = _lemma1_epsilon(order, rdp_epsilon, delta)
    lemma1_above = gap(lemma1) >= 0.0
    lo = np.where(lemma1_above, np.maximum(rdp_epsilon + np.log1p(-delta), 0.0), lemma1)
    hi = np.where(lemma1_above, lemma1 * (1.0 + 1e-9), _classic_epsilon(order, rdp_epsilon, delta))
    solved_at_lo = gap(lo) >= 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        root = bracketed_newton(gap, slope, lo, np.where(solved_at_lo, lo, hi), rtol=1e-15)
        margin = _margin(theorem3(root), slope(root)) + _OPTIMAL_ROUND_UP * root
    found = np.where(order * delta >= 1.0, lemma1, np.fmin(root + margin, lemma1))
    return np.where(infinite, np.inf, found)


_EPSILON_CONVERSIONS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "classic": _classic_epsilon,
    "improved": _improved_epsilon,
    "lemma1": _lemma1_epsilon,
    "optimal": _optimal_epsilon,
}


def _check_method(method: str, allowed: tuple[str, ...]) -> None:
    """Raise InputError for an unknown conversion method."""
    if method not in allowed:
        raise InputError(f"unknown RDP conversion method {method!r}", f"use one of {', '.join(allowed)}")


def _check_delta(delta: ArrayLike) -> np.ndarray:
    """delta as a float array; InputError unless 0 < delta < 1."""
    delta = np.asarray(delta, dtype=float)
    if not np.all((delta > 0.0) & (delta < 1.0)):
        raise InputError("delta must lie strictly between 0 and 1", "e.g. delta=1e-5")
    return delta


def _check_nonnegative(name: str, value: ArrayLike) -> np.ndarray:
    """value as a float array; InputError unless every entry is >= 0 (inf allowed, NaN not)."""
    value = np.asarray(value, dtype=float)
    if not np.all(value >= 0.0):
        raise InputError(f"{name} must be non-negative", f"got {value}")
    return value


def _checked(result: np.ndarray) -> ArrayLike:
    """The result as float/array; ComputationError if the numerics produced NaN or a negative figure."""
    if not np.all(result >= 0.0):
        raise ComputationError("the RDP conversion failed numerically", "try other orders or report a bug")
    return as_output(result)


def epsilon(order: ArrayLike, rdp_epsilon: ArrayLike, delta: ArrayLike, method: str = "optimal") -> ArrayLike:
    """epsilon such that an (alpha, eps_R)-RDP mechanism is (eps, delta)-DP, by the named conversion.

    Vectorized over order (> 1), rdp_epsilon (>= 0) and delta (in (0, 1)). Every method gives a rigorous
    upper bound; `optimal` (the paper's Thm 3) is the smallest valid one for a single RDP point.
    """
    _check_method(method, EPSILON_METHODS)
    order, rdp_epsilon, delta = (
        _orders(order),
        _check_nonnegative("RDP epsilon", rdp_epsilon),
        _check_delta(delta),
    )
    return _checked(_EPSILON_CONVERSIONS[method](order, rdp_epsilon, delta))


def _classic_log_delta(order: np.ndarray, rdp_epsilon: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """Mironov's conversion, the paper's eq. (3): log delta = (alpha - 1)(eps_R - eps)."""
    return np.minimum(_upward_sum((order - 1.0) * rdp_epsilon, -(order - 1.0) * epsilon), 0.0)


def _improved_log_delta(order: np.ndarray, rdp_epsilon: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """Balle et al. 2020 Thm 21 solved for delta: log delta = (alpha-1)(eps_R - eps) + log zeta_alpha."""
    log_delta = _upward_sum((order - 1.0) * rdp_epsilon, -(order - 1.0) * epsilon, _log_zeta(order))
    return np.minimum(log_delta, 0.0)


def _optimal_log_delta(order: np.ndarray, rdp_epsilon: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """The paper's Thm 3 inverted in delta: the largest delta with gamma_alpha^eps(delta) <= eps_R.

    For delta >= 1/alpha, gamma = eps - log(1 - delta) (eq. 17) inverts in closed form to
    delta = 1 - e^{eps - eps_R}. Otherwise the root in x = log delta is bracketed above by
    min(improved delta, 1/alpha) (Balle et al.'s delta is valid) and below by stepping down from
    log(zeta_alpha e^{-(alpha-1) eps} (e^{(alpha-1) eps_R} - 1)) - 1 (the binary pair at p = alpha delta,
    to first order in delta) until gamma < eps_R; then safeguarded Newton. The root is rounded up by a
    relative 1e-11 in delta plus 3 gamma_error / slope (as for eps), and capped by the improved delta.
    """
    order, rdp_epsilon, epsilon = np.broadcast_arrays(order, rdp_epsilon, epsilon)
    improved = _improved_log_delta(order, rdp_epsilon, epsilon)
    with np.errstate(divide="ignore"):
        gap_down = np.minimum(-_upward_sum(rdp_epsilon, -epsilon), 0.0)
        closed_form = _upward_sum(np.log(-np.expm1(gap_down)))
    in_boundary = closed_form >= -np.log(order)
    theorem3 = _memo_last(lambda x: _theorem3(order, epsilon, np.exp(x)))

    def gap(x: np.ndarray) -> np.ndarray:
        result = theorem3(x)
        gap = result.gamma - rdp_epsilon
        converged = (np.abs(gap) <= result.gamma_error) | (
            np.abs(gap) <= 1e-14 * np.abs(x) * np.exp(x) * result.d_delta
        )
        return np.where(converged, 0.0, gap)

    def slope(x: np.ndarray) -> np.ndarray:
        return np.exp(x) * theorem3(x).d_delta

    solvable = ~in_boundary & (rdp_epsilon > 0.0)
    hi = np.where(solvable, np.minimum(improved, -np.log(order)) + 1e-9, 0.0)
    with np.errstate(divide="ignore", over="ignore"):
        guess = _log_zeta(order) - (order - 1.0) * epsilon + np.log(np.expm1((order - 1.0) * rdp_epsilon))
    lo = np.minimum(np.where(np.isfinite(guess), guess, hi), hi) - 1.0
    too_high = np.zeros(lo.shape, dtype=bool)
    for _ in range(_BRACKET_DOUBLINGS):
        too_high = (gap(lo) >= 0.0) & solvable
        if not np.any(too_high):
            break
        lo = np.where(too_high, 2.0 * lo - hi, lo)
    # Still above the root after the doublings (delta underflows, e.g. eps beyond a pure-DP curve's limit):
    # e^lo itself is a valid, if loose, delta there; Newton runs on the bracketed entries only.
    newton_hi = np.where(too_high, lo, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        root = bracketed_newton(gap, slope, np.where(solvable, lo, hi), newton_hi, rtol=1e-15)
        margin = _margin(theorem3(root), slope(root)) + _OPTIMAL_ROUND_UP
    root = np.where(too_high, lo, np.fmin(root + margin, improved))
    return np.where(in_boundary, closed_form, np.where(rdp_epsilon > 0.0, root, -np.inf))


def _exp_up(log_delta: np.ndarray) -> np.ndarray:
    """delta = e^{log delta} rounded up by two ulps (exp's own error and the final rounding), capped at 1.

    Near delta = 1 an ulp of delta is a large part of 1 - delta, so this matters for validity there;
    an underflowing positive delta comes out as the smallest subnormal instead of 0.
    """
    up = np.nextafter(np.nextafter(np.exp(log_delta), np.inf), np.inf)
    return np.where(np.isneginf(log_delta), 0.0, np.minimum(up, 1.0))


_LOG_DELTA_CONVERSIONS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "classic": _classic_log_delta,
    "improved": _improved_log_delta,
    "optimal": _optimal_log_delta,
}


def delta(order: ArrayLike, rdp_epsilon: ArrayLike, epsilon: ArrayLike, method: str = "optimal") -> ArrayLike:
    """delta such that an (alpha, eps_R)-RDP mechanism is (eps, delta)-DP, by the named conversion.

    Vectorized over order (> 1), rdp_epsilon (>= 0) and epsilon (>= 0); a rigorous upper bound, capped
    at 1. Methods: classic (eq. 3), improved (Balle et al. Thm 21), optimal (Thm 3, the exact value).
    """
    _check_method(method, DELTA_METHODS)
    order, rdp_epsilon = _orders(order), _check_nonnegative("RDP epsilon", rdp_epsilon)
    epsilon = _check_nonnegative("epsilon", epsilon)
    return _checked(_exp_up(_LOG_DELTA_CONVERSIONS[method](order, rdp_epsilon, epsilon)))


# ---------------------------------------------------------------------------------------------------------
# Curves: the best order, searched continuously
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Conversion:
    """An (eps, delta) figure obtained from RDP, with the Renyi order alpha that achieved it."""

    value: float
    order: float


def _best_on_grid(objective: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> tuple[int, np.ndarray]:
    """Evaluate objective at orders 1 + e^x; return the index of the smallest value and all values."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        values = np.asarray(objective(1.0 + np.exp(x)), dtype=float)
    values = np.where(np.isnan(values), np.inf, values)
    return int(np.argmin(values)), values


def _minimize_over_orders(objective: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float]:
    """min over alpha > 1 of a vectorized objective(alpha); returns (value, alpha).

    x = log(alpha - 1) is scanned on [log 1e-2, log 1e3] with spacing ln(10)/8; while the minimum sits on
    the edge the scan moves on one decade at a time in that direction (down to alpha - 1 = 1e-9, up to
    alpha = 1e6; large orders are costly for the sampled Gaussian), then zooms into the cells next to the
    best point until x is known to 1e-7. Any order gives a valid bound: the search only affects tightness
    (a multimodal objective may be left at a local minimum).
    """
    x_min, x_max = math.log(_MIN_ORDER_MINUS_ONE), math.log(_MAX_ORDER - 1.0)
    decade = math.log(10.0)
    x = np.arange(math.log(1e-2), math.log(1e3) + 1e-9, decade / 8)
    spacing = x[1] - x[0]
    k, values = _best_on_grid(objective, x)
    direction = 0
    while (k == 0 and x[0] > x_min and direction <= 0) or (
        k == x.size - 1 and x[-1] < x_max and direction >= 0
    ):
        direction = -1 if k == 0 else 1
        edge = x[k]
        x = np.clip(np.linspace(edge, edge + direction * decade, 9), x_min, x_max)
        x = x[::direction]
        k, values = _best_on_grid(objective, x)
    best_value, best_x = values[k], x[k]
    if not np.isfinite(best_value):
        raise ComputationError(
            "the RDP curve is infinite or undefined at every order tried", "check the mechanism"
        )
    while spacing > _ZOOM_XTOL:
        x = np.linspace(max(best_x - spacing, x_min), min(best_x + spacing, x_max), _ZOOM_POINTS)
        spacing = x[1] - x[0]
        k, values = _best_on_grid(objective, x)
        if values[k] < best_value:
            best_value, best_x = values[k], x[k]
    return float(best_value), float(1.0 + math.exp(best_x))


def epsilon_from_curve(curve: RdpCurve, delta: float, method: str = "optimal") -> Conversion:
    """The smallest epsilon at this delta over all orders alpha > 1 of an RDP curve, by the named conversion.

    Optimal: the paper's eq. (4) with Thm 3 in place of eq. (3). The returned order is where it was attained.
    """
    _check_method(method, EPSILON_METHODS)
    _check_delta(delta)
    conversion = _EPSILON_CONVERSIONS[method]
    value, order = _minimize_over_orders(lambda a: conversion(a, np.asarray(curve(a), dtype=float), delta))
    return Conversion(value=float(_checked(np.asarray(value))), order=order)


def delta_from_curve(curve: RdpCurve, epsilon: float, method: str = "optimal") -> Conversion:
    """The smallest delta at this epsilon over all orders alpha > 1 of an RDP curve (paper, eq. (4))."""
    _check_method(method, DELTA_METHODS)
    _check_nonnegative("epsilon", epsilon)
    conversion = _LOG_DELTA_CONVERSIONS[method]
    value, order = _minimize_over_orders(lambda a: conversion(a, np.asarray(curve(a), dtype=float), epsilon))
    return Conversion(value=float(_checked(_exp_up(np.asarray(value)))), order=order)


def epsilon_from_points(
    orders: np.ndarray, rdp_epsilons: np.ndarray, delta: float, method: str = "optimal"
) -> Conversion:
    """The smallest epsilon at this delta over a finite set of RDP points (alpha_i, eps_R,i)."""
    return _best(orders, epsilon(orders, rdp_epsilons, delta, method))


def delta_from_points(
    orders: np.ndarray, rdp_epsilons: np.ndarray, epsilon: float, method: str = "optimal"
) -> Conversion:
    """The smallest delta at this epsilon over a finite set of RDP points (alpha_i, eps_R,i)."""
    return _best(orders, delta(orders, rdp_epsilons, epsilon, method))


def _best(orders: np.ndarray, values: ArrayLike) -> Conversion:
    """The smallest of the values, one per order, with the order that gave it."""
    values = np.atleast_1d(values)
    k = int(np.argmin(values))
    return Conversion(value=float(values[k]), order=float(np.atleast_1d(orders)[k]))


# ---------------------------------------------------------------------------------------------------------
# Trade-off functions: the most an RDP curve says about beta(alpha)
# ---------------------------------------------------------------------------------------------------------

TRADEOFF_ORDERS = 1.0 + np.logspace(-5.0, 5.0, 321)
"""The orders whose RDP `tradeoff_from_curve` combines: alpha - 1 from 1e-5 to 1e5, 32 per decade."""
_TRADEOFF_ZOOMS = 2
_TRADEOFF_ZOOM_POINTS = 17
_BISECTIONS = 64
_LOG_RTOL = 1e-13


def _binary_log_divergences(order: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, ...]:
    """(a - 1) D_a of a test's outcomes in both directions, and a bound on their rounding error.

    A test with type I error alpha and type II error beta maps P, Q to the binary P' = (alpha, 1 - alpha)
    and Q' = (1 - beta, beta): (a - 1) D_a(P'||Q') = log(alpha^a (1-beta)^{1-a} + (1-alpha)^a beta^{1-a})
    and (a - 1) D_a(Q'||P') = log((1-beta)^a alpha^{1-a} + beta^a (1-alpha)^{1-a}), in log space. The
    error bound is _LOG_RTOL times the magnitudes of the products summed (which may cancel).
    """
    logs = (np.log(alpha), np.log1p(-alpha), np.log(beta), np.log1p(-beta))
    log_a, log_1ma, log_b, log_1mb = (order * v for v in logs)
    log_a_rest, log_1ma_rest, log_b_rest, log_1mb_rest = ((1.0 - order) * v for v in logs)
    forward = np.logaddexp(log_a + log_1mb_rest, log_1ma + log_b_rest)
    backward = np.logaddexp(log_1mb + log_a_rest, log_b + log_1ma_rest)
    finite = (np.where(np.isfinite(v), np.abs(v), 0.0) for v in (log_a, log_1ma, log_b, log_1mb))
    error = _LOG_RTOL * (2.0 * sum(finite, np.float64(0.0)) + 1.0)
    return forward, backward, error


def binary_tradeoff(order: ArrayLike, rdp_epsilon: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """A rigorous lower bound on beta at type I error alpha for any mechanism that is (order, rdp_epsilon)-RDP
    (both D_a(P||Q) and D_a(Q||P) at most rdp_epsilon, as RDP over a symmetric neighbouring relation states).

    Data processing (Renyi divergences only shrink under a test's binary outcome: van Erven and Harremoes
    2014, "Renyi divergence and Kullback-Leibler divergence"; the hypothesis-testing reading of RDP is Balle
    et al. 2020, "Hypothesis testing interpretations and Renyi DP"): the binary pair P' = (alpha, 1 - alpha),
    Q' = (1 - beta, beta) of any test obeys both divergences <= rdp_epsilon. For beta in [0, 1 - alpha]
    each divergence is convex in beta with its minimum 0 at beta = 1 - alpha, so the feasible betas form an
    interval [beta*, 1 - alpha]; beta* is bracketed by bisection and the lower end of the bracket returned,
    a point being judged infeasible only when a divergence exceeds rdp_epsilon by more than its rounding
    allowance. Broadcast over order, rdp_epsilon and alpha; a NaN rdp_epsilon states nothing (bound 0). The
    bound is tight: the binary pair at beta* is itself a mechanism with these divergences.
    """
    order, rdp_epsilon, alpha = np.broadcast_arrays(
        _orders(order), np.asarray(rdp_epsilon, dtype=float), np.asarray(alpha, dtype=float)
    )
    rdp_epsilon = np.where(np.isnan(rdp_epsilon), np.inf, np.maximum(rdp_epsilon, 0.0))  # NaN: nothing known
    limit = (order - 1.0) * rdp_epsilon
    lo, hi = np.zeros(order.shape), 1.0 - alpha
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for _ in range(_BISECTIONS):
            middle = 0.5 * (lo + hi)
            forward, backward, error = _binary_log_divergences(order, alpha, middle)
            allowed = limit * (1.0 + _LOG_RTOL) + error
            infeasible = (middle < hi) & ~((forward <= allowed) & (backward <= allowed))
            lo, hi = np.where(infeasible, middle, lo), np.where(infeasible, hi, middle)
    return lo


def tradeoff_from_points(orders: ArrayLike, rdp_epsilons: ArrayLike, alpha: ArrayLike) -> np.ndarray:
    """The best `binary_tradeoff` over finitely many RDP points (order_i, eps_R,i), at each alpha.

    A test's binary pair must obey every point at once, so the largest bound holds (and is tight)."""
    orders, values = np.atleast_1d(_orders(orders)), np.atleast_1d(np.asarray(rdp_epsilons, dtype=float))
    alpha = np.asarray(alpha, dtype=float)
    bounds = binary_tradeoff(orders, values, alpha.reshape(-1)[:, None])
    return np.max(bounds, axis=1).reshape(alpha.shape)


def tradeoff_from_curve(curve: RdpCurve, alpha: ArrayLike) -> np.ndarray:
    """A rigorous lower bound on the trade-off function beta(alpha) of any mechanism with this RDP curve:
    `binary_tradeoff` maximised over the orders, at each alpha (a zCDP curve: Bun and Steinke 2016).

    The orders are TRADEOFF_ORDERS, then twice a zoom of 17 orders around each alpha's best so far (the
    spacing shrinking 16-fold each time). Every order gives a valid bound, so the search affects only
    tightness: measured within 1e-8 of the supremum over all orders (an mpmath golden-section search, tests/
    cli/test_zcdp_tradeoff.py), which is the tightest bound the curve implies (see binary_tradeoff). By
    the same token it equals the f_{eps,delta} envelope of the optimal conversion's profile (paper Thm 3).
    """
    alpha = np.asarray(alpha, dtype=float)
    flat = alpha.reshape(-1)[:, None]
    x = np.log(TRADEOFF_ORDERS - 1.0)[None, :]
    spacing = float(x[0, 1] - x[0, 0])
    with np.errstate(over="ignore", invalid="ignore"):
        bounds = binary_tradeoff(1.0 + np.exp(x), np.asarray(curve(1.0 + np.exp(x)), dtype=float), flat)
        best, centre = np.max(bounds, axis=1), x[0, np.argmax(bounds, axis=1)]
        for _ in range(_TRADEOFF_ZOOMS):
            x = centre[:, None] + np.linspace(-spacing, spacing, _TRADEOFF_ZOOM_POINTS)[None, :]
            spacing = float(x[0, 1] - x[0, 0])
            orders = 1.0 + np.exp(x)
            bounds = binary_tradeoff(orders, np.asarray(curve(orders), dtype=float), flat)
            better = np.max(bounds, axis=1) > best
            best = np.where(better, np.max(bounds, axis=1), best)
            centre = np.where(better, x[np.arange(x.shape[0]), np.argmax(bounds, axis=1)], centre)
    return best.reshape(alpha.shape)
