"""Last-iterate privacy of noisy gradient descent on strongly convex losses, by shifted interpolation.

Bok, Su and Altschuler, "Shifted interpolation for differential privacy" (ICML 2024, arXiv:2403.00278;
"BSA24" below; the review 004 Sec. 4.2). Noisy GD releases only its last iterate

    theta_{k+1} = theta_k - eta (grad f_{B_k}(theta_k) + Z_k),    Z_k ~ N(0, sigma^2 I),

where f_B is the mean loss over the batch B_k: the whole data (full batch, one step an epoch) or, for
cyclic batches, the l = N / B disjoint batches of B examples visited in a fixed order. Every example's loss
is m-strongly convex and M-smooth with gradients bounded by L (the clipping norm), and eta < 2 / M, so one
gradient step is a contraction with factor c = max(|1 - eta m|, |1 - eta M|) < 1. Replace-one neighbours
change one batch's mean gradient by at most 2 L / B: one step shifts the iterate by s = 2 eta L / B against
noise of std eta sigma, so `step_mu` = s / (eta sigma) = 2 L / (B sigma) (the mu of one step, GDP paper
Thm 1; BSA24's tables write it L / (B sigma) with L the gradient sensitivity).

Shifted interpolation (BSA24 Sec. 3) runs an auxiliary process equal to the second run up to the
interpolation time tau and to the first run at the last step; shifting it by a_k at step k costs
(a_k / (eta sigma))^2 in mu^2 (Gaussian shifts compose, GDP paper Cor. 2), and the shifts must absorb the
sensitivity contracted to the end, S = sum_k c^{T-k} s_k, whatever tau is. By Cauchy-Schwarz the cheapest
shifts on the steps after tau (none larger than the distance left) are proportional to c^{T-k}, costing
S^2 / sum_{k>tau} c^{2(T-k)}: the later tau, the fewer steps share S. The bound is therefore smallest at
tau = 0, where it is BSA24's closed form; at the last tau (no interpolation) it is the plain contraction
bound mu = step_mu S / s. The functions take tau (vectorized) so that callers can optimise over it and
tests can check where the optimum lies.

Every mu is rounded up by MU_ROUND_UP (relative) and the contraction gap 1 - c is computed from the exact
binary values of the inputs and rounded down (no bound shrinks as c grows): safe-side upper bounds.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from gdpcli.core.arrays import ArrayLike, as_output

MU_ROUND_UP = 1e-12
"""Relative margin added to every mu: covers the formulas' floating-point error (below 1e-13 against
50-digit mpmath, tests/core/test_last_iterate.py) and the few ulps of step_mu."""


def _exact_gap(step_size: float, strong_convexity: float, smoothness: float) -> Fraction:
    """1 - c = min(eta m, 2 - eta M) of the exact binary inputs: on [m, M] the largest |1 - eta x| is at an
    end point, so c = max(|1 - eta m|, |1 - eta M|) = max(1 - eta m, eta M - 1) for 0 < m <= M."""
    eta = Fraction(step_size)
    return min(eta * Fraction(strong_convexity), 2 - eta * Fraction(smoothness))


def contraction_gap(step_size: float, strong_convexity: float, smoothness: float) -> float:
    """1 - c for c = max(|1 - eta m|, |1 - eta M|), the contraction factor of a gradient step on an
    m-strongly convex, M-smooth loss with 0 < eta < 2 / M and 0 < m <= M (BSA24 Sec. 4); computed exactly
    and rounded down, as a smaller gap only raises the bound."""
    return math.nextafter(float(_exact_gap(step_size, strong_convexity, smoothness)), 0.0)


def contraction(step_size: float, strong_convexity: float, smoothness: float) -> float:
    """c itself, rounded to nearest (for display; the bounds use `contraction_gap`)."""
    return float(1 - _exact_gap(step_size, strong_convexity, smoothness))


def _power(log_c: float, exponent: np.ndarray) -> np.ndarray:
    """c^k from log c, with c^0 = 1 also for c = 0 (log c = -inf)."""
    with np.errstate(invalid="ignore"):
        return np.where(exponent == 0, 1.0, np.exp(exponent * log_c))


def _one_minus_power(log_c: float, exponent: np.ndarray) -> np.ndarray:
    """1 - c^k without cancellation for c near 1 (expm1); 0 at k = 0."""
    with np.errstate(invalid="ignore"):
        return np.where(exponent == 0, 0.0, -np.expm1(exponent * log_c))


def _rounded_up(mu: np.ndarray) -> ArrayLike:
    """mu raised by MU_ROUND_UP (the safe side of an upper bound)."""
    return as_output(np.asarray(mu, dtype=float) * (1.0 + MU_ROUND_UP))


def full_batch_mu(step_mu: float, gap: float, steps: int, tau: ArrayLike = 0) -> ArrayLike:
    """mu-GDP of the last of T full-batch noisy GD steps, interpolating from step tau (0 <= tau < T):

        mu(tau)^2 = step_mu^2 (1 - c^T)^2 (1 - c^2) / ((1 - c)^2 (1 - c^{2 (T - tau)})).

    At tau = 0 this is BSA24's strongly convex full-batch bound (Sec. 4; the authors' code
    plot_table_ngd_fdp.py) mu = step_mu sqrt((1 + c)/(1 - c) (1 - c^T)/(1 + c^T)), which the linear-Gaussian
    dynamics theta_k = c theta_{k-1} - eta g + noise attain. At tau = T - 1 it is step_mu (1 - c^T)/(1 - c).
    """
    log_c = math.log1p(-gap)
    remaining = steps - np.asarray(tau, dtype=float)
    reach = _one_minus_power(log_c, np.asarray(float(steps))) / gap
    squared = step_mu**2 * reach**2 * gap * (2.0 - gap) / _one_minus_power(log_c, 2.0 * remaining)
    return _rounded_up(np.sqrt(squared))


def _geometric(log_c: float, ratio_exponent: float, terms: np.ndarray) -> np.ndarray:
    """sum_{i < terms} (c^r)^i = (1 - c^{r terms}) / (1 - c^r), r = ratio_exponent > 0."""
    ratio = _one_minus_power(log_c, np.asarray(ratio_exponent))
    return _one_minus_power(log_c, ratio_exponent * terms) / ratio


def cyclic_mu(step_mu: float, gap: float, batches: int, epochs: int, tau: ArrayLike = 0) -> ArrayLike:
    """mu-GDP of the last iterate of E epochs of cyclic noisy GD over l >= 2 batches, interpolating from
    epoch tau (0 <= tau < E), the differing example in the last batch of an epoch (the place where the
    linear-Gaussian run leaks most, tests/core/test_last_iterate.py):

        mu(tau)^2 = step_mu^2 (1 + c^{2l-2} A^2 / sum_{i < (E-1-tau) l} c^{2i}),  A = sum_{e < E-1} c^{l e},

    for tau < E - 1 (the last step carries its own sensitivity; the E - 1 earlier ones, contracted to step
    T - 1, are shifted away on the steps from the sensitive step of epoch tau + 1 on), and the contraction
    bound step_mu sum_{e < E} c^{l e} at tau = E - 1. At tau = 0 this is BSA24 Thm 4.5 (NoisyCGD, strongly
    convex; the authors' code table_privacy_lr.py, Table 1):

        mu = step_mu sqrt(1 + c^{2l-2} (1 - c^2)/(1 - c^l)^2 (1 - c^{l(E-1)})/(1 + c^{l(E-1)})).
    """
    log_c = math.log1p(-gap)
    tau = np.asarray(tau, dtype=float)
    before_last = _geometric(log_c, float(batches), np.asarray(epochs - 1.0))
    spread = _geometric(log_c, 2.0, (epochs - 1.0 - tau) * batches)
    with np.errstate(divide="ignore", invalid="ignore"):
        interpolated = np.sqrt(1.0 + _power(log_c, np.asarray(2.0 * batches - 2.0)) * before_last**2 / spread)
    contraction_only = _geometric(log_c, float(batches), np.asarray(float(epochs)))
    return _rounded_up(step_mu * np.where(tau < epochs - 1, interpolated, contraction_only))


def cyclic_rdp_rho(step_mu: float, gap: float, batches: int, epochs: int) -> float:
    """rho of the RDP bound eps_R(alpha) = alpha rho that BSA24 compare with in their Table 1 (review
    Table 1, column RDP), for cyclic noisy GD, as computed by the authors' code (table_privacy_lr.py):

        rho = step_mu^2 / 2 (1 + c^{l-2} (1 - c^2)(1 - c^{l(E-1)}) / (1 - c^l)^2).

    Rounded up like mu. The fraction is taken as c^{l-2} (1 - c^2) / (1 - c^l) times (1 - c^{l(E-1)}) /
    (1 - c^l), two ratios of small numbers, not over the square (1 - c^l)^2, which underflows to 0 for a
    gap near 1e-300 (0 / 0: an internal error a fuzz walk found); where log c rounds to 0 it is the limit
    c -> 1, 2 (E - 1) / l.
    """
    log_c = math.log1p(-gap)
    if log_c == 0.0:
        fraction = 2.0 * (epochs - 1.0) / batches
    else:
        whole = _one_minus_power(log_c, np.asarray(float(batches)))
        carried = _one_minus_power(log_c, np.asarray(batches * (epochs - 1.0))) / whole
        fraction = _power(log_c, np.asarray(batches - 2.0)) * gap * (2.0 - gap) / whole * carried
    rho = 0.5 * step_mu * step_mu * (1.0 + fraction)  # (inf, not OverflowError, past the floats)
    return float(rho) * (1.0 + MU_ROUND_UP)


def composition_mu(step_mu: float, epochs: int) -> float:
    """mu of all iterates by GDP composition (GDP paper Cor. 2): the differing example enters one step an
    epoch, a step_mu-GDP Gaussian step, and the others are post-processing: step_mu sqrt(E). Releasing the
    last iterate only is post-processing of all of them, so this bounds it too."""
    return float(_rounded_up(np.asarray(step_mu * math.sqrt(epochs))))


def best_tau(family: np.ndarray, taus: np.ndarray) -> tuple[float, int]:
    """The smallest bound of a family evaluated at the interpolation times taus, and its tau."""
    k = int(np.argmin(family))
    return float(family[k]), int(taus[k])


def tau_grid(last: int, points: int = 4096) -> np.ndarray:
    """Interpolation times to optimise over: every tau in [0, last] up to `points` of them, else a
    log-spaced integer grid that keeps 0 and last (any subset gives a valid bound)."""
    if last < points:
        return np.arange(last + 1)
    return np.unique(np.concatenate(([0], np.round(np.geomspace(1, last, points - 1))))).astype(np.int64)


__all__ = [
    "MU_ROUND_UP",
    "best_tau",
    "composition_mu",
    "contraction",
    "contraction_gap",
    "cyclic_mu",
    "cyclic_rdp_rho",
    "full_batch_mu",
    "tau_grid",
]
