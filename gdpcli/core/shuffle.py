"""A rigorous LOWER bound on the privacy of DP-SGD with shuffled fixed-size batches: the "max" test.

Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha and Zhang, "How Private are DP-SGD Implementations?"
(ICML 2024), and "Scalable DP-SGD: Shuffling vs. Poisson Subsampling" (NeurIPS 2024), their lower
bound for shuffled batches:
in one epoch of b batches (steps) with Gaussian noise of standard deviation 1 (after scaling), the
differing example of a replace-one pair puts a shift s (sensitivity / noise multiplier, 2 / sigma for
replace-one) into exactly one of the b steps, at a uniformly random position; in the other dataset it is
absent. The adversary that observes only M = max_j X_j over the epoch sees

    P (no shift):     F_P(t) = Phi(t)^b,                p(t) = b phi(t) Phi(t)^(b-1),
    Q (one shifted):  F_Q(t) = Phi(t - s) Phi(t)^(b-1),  q(t) = phi(t - s) Phi(t)^(b-1)
                                                               + (b-1) Phi(t - s) phi(t) Phi(t)^(b-2),

with the privacy loss l(t) = log(q/p)(t) = log([g Phi(t) + (b-1) Phi(t - s)] / (b Phi(t))),
g = e^{eps0}, eps0 = s t - s^2/2, strictly increasing from -inf to +inf (Phi is log-concave). M is a
post-processing of one epoch for one valid neighbouring pair, so the E-fold composition of (P, Q) and
of (Q, P) is a valid lower bound on the (eps, delta) of E epochs of shuffled DP-SGD (Chua et al. 2024,
the "max" adversary).

Numerics (in log space, where a difference of near-equal terms would cancel): with t_eps the root of
l(t) = eps, F = Phi(t), Fbar = 1 - F and
D = g F - Phi(t - s) = e^{eps0} delta_G(-eps0) (delta_G the mu = s Gaussian profile, gdp.delta), the
root condition b e^eps F = g F + (b-1) Phi(t - s) turns both hockey-stick divergences into sums of
positive terms (no e^eps cancellation):

    H_{e^eps}(Q || P) = (1 - e^eps) + F^(b-1) D / b                                   (eps <= 0)
                      = [delta_G(eps0) (b - 1 + F^b) + (e^{eps0} - 1) Fbar h_b(Fbar)] / (b F)   (eps > 0)
    H_{e^eps}(P || Q) = e^eps F^(b-1) D / b = F^b / (1 + b G / D)    (at t'_eps: l(t'_eps) = -eps)

with h_b(x) = b - (1 - (1 - x)^b) / x = sum_{j=2}^{b} (-1)^j C(b, j) x^(j-1) >= 0, and eps0 > 0 on the
eps > 0 branch (t_eps > s/2 there). Forms that depend on t alone (the eps > 0 one, F^b / (1 + b G / D))
turn the rounding of the root into no more error than the problem's own conditioning. The root itself
needs l(t) to an absolute error far below s where delta is small compared with its derivative, so l is
evaluated as log1p((e^{eps0} - 1 - (b-1) q) / b) with q = 1 - Phi(t - s)/Phi(t) to full relative
accuracy (_one_minus_ratio).

Two shifts (Chua et al.'s own pair, their dpsgd_bounds.py: MoG(mean_upper = 2) vs MoG(mean_lower = 1)):
the random batch carries shift `high` under one dataset and `low` under the other, 0 <= low < high (the
zero-out relation: the others' gradients -C, the differing one +C against 0 gives high = 2C/sigma,
low = C/sigma; for replace-one, +C against -C, the one-shift pair high = 2C/sigma, low = 0 is valid and
gives the larger bound, e.g. epsilon 3.13 against 2.88 at sigma 1, b 1000, delta 1e-5).
With F_a(t) = Phi(t - a) Phi(t)^(b-1), f_a = phi(t) Phi(t)^(b-2) N_a,
N_a = g_a Phi(t) (1 + c rho_a), g_a = e^{a t - a^2/2}, c = b - 1 and
rho_a(t) = Phi(t - a) / (g_a Phi(t)) = E[e^{-a (t - X)} | X <= t] (decreasing in a, rho_0 = 1):

    l(t) = log(f_high / f_low)(t) = eps0 + log(1 + c rho_high) - log(1 + c rho_low),
    eps0 = s (u - s/2), s = high - low, u = t - low,
    l'(t) = (high + b lam) / (1 + c rho_high) - (low + b lam) / (1 + c rho_low) > 0  (lam = phi / Phi > 0),

as N_a' = g_a (a Phi + b phi): the first numerator is larger and the first denominator smaller
(rho_high <= rho_low). So l is strictly increasing for every b >= 1 and 0 <= low < high, from -inf
(t -> -inf: the Phi(t - a) ratio) to +inf (t -> +inf: eps0), the likelihood-ratio test sets are half-lines
{M > t} and {M < t}, and the root-based forms carry over (_two_loss, _log_two_add,
_log_two_remove_tail); an mpmath sweep (t in [-40, 60] by 1/2, 140 (high, low, b) with high in
[0.01, 20], low / high in [0.001, 0.999], b in [2, 1e6]) found no non-increasing step.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import special

from gdpcli.core import gdp
from gdpcli.core.gdp import log_delta_over_density  # the Gaussian tail kernel
from gdpcli.core.pld import DominatingPair
from gdpcli.errors import ComputationError, InputError

Profile = Callable[[np.ndarray], np.ndarray]
LossFn = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]

_SQRT2 = np.sqrt(2.0)
_SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_LOG_SQRT_HALF_PI = 0.5 * np.log(0.5 * np.pi)
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(16)
_FAR = -30.0  # below this t, q comes from erfcx (Phi(t) nears the float range)
_SERIES_TERMS = 24  # terms of the series of h_b for b x < 1/2 (each at most a sixth of the one before)
_NEWTON_STEPS = 200
_ERFCX_LIMIT = 30.0  # below this t, rho_a comes from erfcx (erfcx(-t / sqrt2) overflows near t = 37.7)
_EPS = float(np.finfo(float).eps)
_TAIL = 1e-18  # P- and Q-mass of the loss outside max_test_pair's loss_range (each end)


def check_pair_inputs(shift: float, batches: int) -> tuple[float, int]:
    """Validated (s, b): 0 < s < inf and an integer b >= 1."""
    shift = float(shift)
    if not (np.isfinite(shift) and shift > 0.0):
        raise InputError(f"the shift must be positive and finite, got {shift!r}")
    if int(batches) != batches or batches < 1:
        raise InputError(f"the number of batches must be an integer >= 1, got {batches!r}")
    return shift, int(batches)


def _check_pair(high: float, batches: int, low: float) -> tuple[float, float, int]:
    """Validated (high, low, b): 0 <= low < high < inf and an integer b >= 1."""
    high, b = check_pair_inputs(high, batches)
    low = float(low)
    if not (np.isfinite(low) and 0.0 <= low < high):
        raise InputError(f"the lower shift must satisfy 0 <= low < high = {high!r}, got {low!r}")
    return high, low, b


def _one_minus_ratio(t: np.ndarray, s: float) -> np.ndarray:
    """q(t) = 1 - Phi(t - s) / Phi(t) = (Phi(t) - Phi(t - s)) / Phi(t) in (0, 1], to a few ulps relative.

    Three regimes: for s <= 1 and s |c| <= 1/2 (c = t - s/2 the midpoint) q = (phi(t) / Phi(t)) times
    the integral of phi(u) / phi(t) = e^{-(u - t) t - (u - t)^2 / 2} over [t - s, t] by 16-point
    Gauss-Legendre (positive integrand whose exponent is small and computed to full relative precision;
    quadrature error below 1e-20 relative there); else from
    the tails on the side of 0 where both ends lie, or erf across 0 (the mass is then at least
    1 - e^{-1/2} of the larger tail, so the difference loses under 2 bits); for t < -30 (Phi(t) near
    underflow) as -expm1(eps0 + log rho), rho = erfcx((s - t)/sqrt2) / erfcx(-t/sqrt2) = Phi(t - s) / (g
    Phi(t)), both terms of the sum negative.
    """
    q = np.empty(t.shape)
    c = t - 0.5 * s
    far = t < _FAR
    gauss = ~far & (s <= 1.0) & (s * np.abs(c) <= 0.5)
    rest = ~(far | gauss)
    tf = t[far]
    log_rho = np.log(special.erfcx((s - tf) / _SQRT2)) - np.log(special.erfcx(-tf / _SQRT2))
    q[far] = -np.expm1(s * (tf - 0.5 * s) + log_rho)
    tg = t[gauss][:, None]
    offsets = 0.5 * s * (_NODES - 1.0)  # u = node - t in [-s, 0]: phi(t + u) / phi(t) = e^{-u t - u^2/2}
    weights = np.exp(-offsets * tg - 0.5 * offsets * offsets) @ _WEIGHTS
    q[gauss] = 0.5 * s * _inverse_mills(tg[:, 0]) * weights
    tr = t[rest]
    upper, lower = tr / _SQRT2, (tr - s) / _SQRT2
    with np.errstate(invalid="ignore"):
        mass = np.where(
            lower >= 0.0,
            0.5 * (special.erfc(lower) - special.erfc(upper)),
            np.where(
                upper <= 0.0,
                0.5 * (special.erfc(-upper) - special.erfc(-lower)),
                0.5 * (special.erf(upper) - special.erf(lower)),
            ),
        )
    q[rest] = mass / special.ndtr(tr)
    return q


def _inverse_mills(x: np.ndarray) -> np.ndarray:
    """phi(x) / Phi(x) (0 where it underflows)."""
    with np.errstate(over="ignore"):
        return _SQRT_2_OVER_PI / special.erfcx(-x / _SQRT2)


def _loss(t: np.ndarray, s: float, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The privacy loss l(t) = log(q(t)/p(t)) of the max test and its derivative l'(t).

    l = log1p(y), y = (e^{eps0} - 1 - (b-1) q) / b, where y > -1/2 (q from _one_minus_ratio: the absolute
    error of l is a few ulps of max(|eps0|, q), i.e. relative to the shift when the shift is small);
    below, l = eps0 + log((1 + (b-1) rho) / b), rho = Phi(t - s) / (g Phi(t)) from erfcx (there |l| >
    log 2, so absolute accuracy suffices). l' = w s + (1 - w) (lambda(t - s) - lambda(t)) with
    w = g / (b e^l) and lambda = phi / Phi (only Newton's speed depends on it).
    """
    eps0 = s * (t - 0.5 * s)
    log_b = np.log(b)
    with np.errstate(over="ignore"):
        y = (np.expm1(eps0) - (b - 1) * _one_minus_ratio(t, s)) / b
    loss = np.empty(t.shape)
    near = y > -0.5
    loss[near] = np.log1p(y[near])
    tl = t[~near]
    rho = special.erfcx((s - tl) / _SQRT2) / special.erfcx(-tl / _SQRT2)
    loss[~near] = eps0[~near] + np.log1p((b - 1) * rho) - log_b
    weight = np.exp(np.minimum(eps0 - log_b - loss, 0.0))
    slope = weight * s + (1.0 - weight) * (_inverse_mills(t - s) - _inverse_mills(t))
    return loss, slope


def _root(epsilon: np.ndarray, s: float, b: int) -> np.ndarray:
    """t with l(t) = eps (finite eps, any b >= 1), by safeguarded Newton on a bracket (_solve).

    Bracket: e^l <= g (as Phi(t - s) < g Phi(t)), e^l >= g / b and e^l <= (g + b - 1) / b, so eps0(t_eps)
    lies in [max(eps, log(1 + b (e^eps - 1))), eps + log b]; t = eps0 / s + s/2.
    """
    log_b = np.log(b)
    # the second lower bound exceeds the first only for eps > 0, where log1p's argument is positive
    low0 = np.where(epsilon > 0.0, np.log1p(b * np.expm1(np.fmax(epsilon, 0.0))), epsilon)
    lo = (low0 - 1e-12 * (1.0 + np.abs(low0))) / s + 0.5 * s
    hi = (epsilon + log_b + 1e-12 * (1.0 + np.abs(epsilon + log_b))) / s + 0.5 * s
    return _solve(lambda x: _loss(x, s, b), epsilon, lo, hi)


def _solve(loss: LossFn, epsilon: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The t in [lo, hi] with loss(t) = eps for an increasing loss (loss returns (l, l')), vectorized.

    Safeguarded Newton from lo: a Newton step that leaves the current bracket (or lands on its end) is
    replaced by bisection; a point stops when its Newton step or its bracket is below
    eps_machine max(|t|, 1), at least one ulp, so bisection ends it.
    """
    t = lo.copy()
    active = np.arange(t.size)
    for _ in range(_NEWTON_STEPS):
        if active.size == 0:
            return t
        x, la, ha = t[active], lo[active], hi[active]
        value, slope = loss(x)
        f = value - epsilon[active]
        la = np.where(f < 0.0, x, la)
        ha = np.where(f > 0.0, x, ha)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - f / slope
        tolerance = _EPS * np.maximum(np.abs(x), 1.0)  # >= 1 ulp: bisection always gets there
        converged = np.isfinite(step) & (np.abs(step - x) <= tolerance)
        inside = np.isfinite(step) & (step > la) & (step < ha)
        new = np.where(inside | converged, np.clip(step, la, ha), 0.5 * (la + ha))
        new = np.where(f == 0.0, x, new)
        done = (f == 0.0) | converged | (ha - la <= tolerance)
        t[active], lo[active], hi[active] = new, la, ha
        active = active[~done]
    raise ComputationError(f"max test: the loss root of {active.size} epsilon(s) not found")


def _log_h(b: int, x: np.ndarray, log_x: np.ndarray) -> np.ndarray:
    """log h_b(x), h_b(x) = b - (1 - (1 - x)^b) / x = sum_{j=2}^{b} (-1)^j C(b, j) x^(j-1) >= 0.

    For b x < 1/2 the alternating series (term ratio -(b - j) x / (j + 1), below 1/6 in size), written as
    C(b, 2) x times a sum near 1 so that x = e^log_x may underflow; else the closed form, which there
    loses at most a factor 5 to cancellation.
    """
    result = np.empty(x.shape)
    small = b * x < 0.5
    xs = x[small]
    term, total = np.ones(xs.shape), np.ones(xs.shape)
    for j in range(2, min(b, _SERIES_TERMS + 2)):
        term = term * (-(b - j) * xs / (j + 1))
        total = total + term
    result[small] = np.log(0.5 * b * (b - 1)) + log_x[small] + np.log(total)
    xl = x[~small]
    result[~small] = np.log(b + np.expm1(b * np.log1p(-xl)) / xl)
    return result


def _log_mills(y: np.ndarray) -> np.ndarray:
    """log M(y), M(y) = Phi(-y) / phi(y) = sqrt(pi/2) erfcx(y / sqrt2) the Mills ratio."""
    return _LOG_SQRT_HALF_PI + np.log(special.erfcx(y / _SQRT2))


def _log_d_over_g(t: np.ndarray, s: float) -> np.ndarray:
    """log(D / G), D = g Phi(t) - Phi(t - s) > 0, G = Phi(t - s), to a few ulps relative in D / G.

    With rho = G / (g Phi(t)) = M(s - t) / M(-t) (M the Mills ratio), D / G = (1 - rho) / rho:
    for t < 0, D = phi(t - s) (M(-t) - M(s - t)), whose log gdp's Gaussian tail kernel computes without
    cancellation (by Gauss-Legendre of the Mills slope where the two ratios agree); for t >= 0 with
    s <= 1 or t >= s/2, D / G = (e^{eps0} - 1 + q) / (1 - q), q = 1 - G / Phi(t) (_one_minus_ratio), whose
    two numerator terms are >= 0 or (0 <= t < s/2, s <= 1) cancel by at most a factor 3; else (s > 1,
    0 <= t < s/2: rho < 0.53) from rho itself.
    """
    result = np.empty(t.shape)
    negative = t < 0.0
    tn = t[negative]
    result[negative] = log_delta_over_density(tn, np.full(tn.shape, s)) - _log_mills(s - tn)
    ratio_form = ~negative & ((s <= 1.0) | (t >= 0.5 * s))
    tq = t[ratio_form]
    q = _one_minus_ratio(tq, s)
    result[ratio_form] = np.log(np.expm1(s * (tq - 0.5 * s)) + q) - np.log(
        special.ndtr(tq - s) / special.ndtr(tq)
    )
    rest = ~(negative | ratio_form)
    tr = t[rest]
    rho = special.erfcx((s - tr) / _SQRT2) / special.erfcx(-tr / _SQRT2)
    result[rest] = np.log1p(-rho) - np.log(rho)
    return result


def _log_add(t: np.ndarray, s: float, b: int) -> np.ndarray:
    """log H_{e^eps}(P || Q) at eps = -l(t): F^b / (1 + b G / D), a function of t alone.

    From H = P(M < t) - e^eps Q(M < t) = F^(b-1) (F - e^eps G) and the root condition
    e^-eps = (g F + (b-1) G) / (b F) = (D + b G) / (b F): F - e^eps G = F D / (D + b G).
    """
    return b * special.log_ndtr(t) - np.logaddexp(0.0, np.log(b) - _log_d_over_g(t, s))


def _remove_values(eps: np.ndarray, s: float, b: int) -> np.ndarray:
    """H_{e^eps}(Q || P) at finite eps by the general formulas (max_test_remove_profile); exact for b = 1 too.

    eps <= 0: (1 - e^eps) + e^eps H_{e^-eps}(P || Q) at the same root (_log_add), two terms >= 0;
    eps > 0: [delta_G(eps0) (b - 1 + F^b) + (e^{eps0} - 1) Fbar h_b(Fbar)] / (b F), all terms >= 0.
    """
    return _remove_from(
        eps, _root(eps, s, b), lambda t: _log_add(t, s, b), lambda t: _log_remove_tail(t, s, b)
    )


def _log_remove_tail(t: np.ndarray, s: float, b: int) -> np.ndarray:
    """log H_{e^eps}(Q || P) at l(t) = eps > 0: [delta_G(eps0) (b - 1 + F^b) + (e^{eps0} - 1) Fbar h_b(Fbar)]
    / (b F), a function of t alone."""
    eps0 = s * (t - 0.5 * s)
    log_f, log_fbar = special.log_ndtr(t), special.log_ndtr(-t)
    first = np.asarray(gdp.log_delta(eps0, s)) + np.log(b - 1 + np.exp(b * log_f))
    with np.errstate(divide="ignore"):  # b = 1: h_1 = 0
        second = np.log(np.expm1(eps0)) + log_fbar + _log_h(b, np.exp(log_fbar), log_fbar)
    return np.logaddexp(first, second) - np.log(b) - log_f


def _remove_from(eps: np.ndarray, t: np.ndarray, log_add: Profile, log_tail: Profile) -> np.ndarray:
    """H(Q || P) at finite eps from its roots t: (1 - e^eps) + e^eps H_{e^-eps}(P || Q) (= e^log_add(t)) for
    eps <= 0, two terms >= 0; e^log_tail(t) for eps > 0 (a sum of positive terms, no e^eps)."""
    result = np.empty(eps.shape)
    head = eps <= 0.0
    result[head] = -np.expm1(eps[head]) + np.exp(eps[head] + log_add(t[head]))
    result[~head] = np.exp(log_tail(t[~head]))
    return result


def _add_values(eps: np.ndarray, s: float, b: int) -> np.ndarray:
    """H_{e^eps}(P || Q) at finite eps by the general formula (max_test_add_profile); exact for b = 1 too."""
    return np.exp(_log_add(_root(-eps, s, b), s, b))


# ---------------------------------------------------------------- two shifts: high vs low


def _log_rho(t: np.ndarray, a: float) -> np.ndarray:
    """log rho_a(t), rho_a(t) = Phi(t - a) / (e^{a t - a^2/2} Phi(t)) = E[e^{-a (t - X)} | X <= t] in (0, 1].

    rho_a = M(a - t) / M(-t) (M the Mills ratio) from erfcx below t = 30, beyond from log_ndtr (there
    rho_a is below e^{-25 a} and its absolute accuracy suffices); rho_0 = 1 exactly. Decreasing in a.
    """
    result = np.empty(t.shape)
    near = t < _ERFCX_LIMIT
    tn, tf = t[near], t[~near]
    result[near] = np.log(special.erfcx((a - tn) / _SQRT2)) - np.log(special.erfcx(-tn / _SQRT2))
    result[~near] = special.log_ndtr(tf - a) - special.log_ndtr(tf) - a * (tf - 0.5 * a)
    return result


def _two_loss(t: np.ndarray, high: float, low: float, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The privacy loss l(t) = log(f_high / f_low)(t) of the two-shift max test and its derivative.

    With N_a = e^{a t - a^2/2} Phi(t) + (b-1) Phi(t - a) = g_a Phi(t) (1 + (b-1) rho_a) (f_a = phi(t)
    Phi(t)^(b-2) N_a): e^l = G (1 + c rho_high) / (1 + c rho_low), c = b - 1, G = e^{eps0},
    eps0 = s (u - s/2), s = high - low, u = t - low. Near l = 0 (y = e^l - 1 > -1/2),
    y = (e^{eps0} - 1 - w q) / (1 + w), w = c rho_low, q = 1 - Phi(u - s) / Phi(u) (_one_minus_ratio),
    whose terms are each to full relative accuracy (low = 0 is _loss's form); below, the log form.
    l' = (high + b lam) / (1 + c rho_high) - (low + b lam) / (1 + c rho_low) (lam = phi/Phi, as
    N_a' = g_a (a Phi + b phi)), taken as the one fraction of positive terms
    [s + c (high rho_low - low rho_high) + b c lam (rho_low - rho_high)] / ((1 + c rho_high)(1 + c rho_low)).
    """
    s, u, c = high - low, t - low, b - 1
    eps0 = s * (u - 0.5 * s)
    rho_high, rho_low = np.exp(_log_rho(t, high)), np.exp(_log_rho(t, low))
    weight = c * rho_low
    with np.errstate(over="ignore"):
        y = (np.expm1(eps0) - weight * _one_minus_ratio(u, s)) / (1.0 + weight)
    loss = np.empty(t.shape)
    near = (y > -0.5) & (y < np.inf)  # beyond eps0 = 709 too, the log form (then l > 700)
    loss[near] = np.log1p(y[near])
    loss[~near] = eps0[~near] + np.log1p(c * rho_high[~near]) - np.log1p(weight[~near])
    numerator = s + c * (high * rho_low - low * rho_high) + b * c * _inverse_mills(t) * (rho_low - rho_high)
    slope = numerator / ((1.0 + c * rho_high) * (1.0 + weight))
    return loss, slope


def _two_root(epsilon: np.ndarray, high: float, low: float, b: int) -> np.ndarray:
    """t with l(t) = eps for the two-shift loss (_solve). rho_high <= rho_low <= 1 gives G / b <= e^l <= G,
    so eps0(t_eps) lies in [eps, eps + log b]; t = eps0 / s + (high + low) / 2."""
    s, middle = high - low, 0.5 * (high + low)
    top = epsilon + np.log(b)
    lo = (epsilon - 1e-12 * (1.0 + np.abs(epsilon))) / s + middle
    hi = (top + 1e-12 * (1.0 + np.abs(top))) / s + middle
    return _solve(lambda x: _two_loss(x, high, low, b), epsilon, lo, hi)


def _log_two_add(t: np.ndarray, high: float, low: float, b: int) -> np.ndarray:
    """log H_{e^eps}(P_low || P_high) at l(t) = -eps: Phi(t)^(b-1) Phi(u) (1 - rho_s(u)) / (1 + c rho_high).

    H = Phi(t)^(b-1) [Phi(u) - e^eps Phi(u - s)] and e^eps = (1 + c rho_low) / (G (1 + c rho_high)) turn
    the bracket into Phi(t) D / N_high (the c-terms cancel), D = G Phi(u) - Phi(u - s) = G Phi(u)
    (1 - rho_s(u)) > 0, a function of t alone, each factor <= 1 (_log_one_minus_rho); low = 0 gives
    _log_add.
    """
    u = t - low
    numerator = (b - 1) * special.log_ndtr(t) + special.log_ndtr(u) + _log_one_minus_rho(u, high - low)
    return numerator - np.log1p((b - 1) * np.exp(_log_rho(t, high)))


def _log_one_minus_rho(u: np.ndarray, s: float) -> np.ndarray:
    """log(1 - rho_s(u)), rho_s(u) = Phi(u - s) / (e^{s u - s^2/2} Phi(u)): log1p(-rho) where rho < 1/2, else
    log(D / G) + log rho (D / G = (1 - rho) / rho from _log_d_over_g, free of the cancellation)."""
    log_rho = _log_rho(u, s)
    result = np.empty(u.shape)
    far = log_rho < -np.log(2.0)
    result[far] = np.log1p(-np.exp(log_rho[far]))
    result[~far] = _log_d_over_g(u[~far], s) + log_rho[~far]
    return result


def _log_two_remove_tail(t: np.ndarray, high: float, low: float, b: int) -> np.ndarray:
    """log H_{e^eps}(P_high || P_low) at l(t) = eps > 0 (so eps0 >= eps > 0 and t > low + s/2), t alone:

        [delta_G(eps0) (c k + F^b) + (e^{eps0} - 1) (c phi(t) (M(t - low) - M(t)) + Fbar h_b(Fbar))]
        / (F (1 + c rho_low)),

    k = e^{-low (t - low/2)}, F = Phi(t), M the Mills ratio, delta_G the mu = s Gaussian profile: all terms
    >= 0. From H = (1 - e^eps) + F^(b-1) (e^eps Phi(u) - Phi(u - s)) with e^eps = N_high / N_low, writing
    Phi(u) - Phi(u - s) = delta_G + (G - 1) Phi(-u) and k Phi(-u) = phi(t) M(t - low) (low = 0 gives
    _log_remove_tail, whose bracket is then Fbar h_b(Fbar) = b Fbar - (1 - F^b)).
    """
    s, u, c = high - low, t - low, b - 1
    # eps0 >= eps > 0 at the exact root; at a rounded one for eps near 0 with rho_low, rho_high both near
    # 0 (then eps0 - l = log((1 + c rho_low) / (1 + c rho_high)) is too) it may round below 0
    eps0 = np.maximum(s * (u - 0.5 * s), 0.0)
    log_f, log_fbar = special.log_ndtr(t), special.log_ndtr(-t)
    with np.errstate(divide="ignore"):  # b = 1: c = 0 and h_1 = 0; eps0 = 0
        log_c = np.log(c)
        first = np.asarray(gdp.log_delta(eps0, s)) + np.logaddexp(log_c - low * (t - 0.5 * low), b * log_f)
        mills = log_c - 0.5 * t * t - _LOG_SQRT_2PI + log_delta_over_density(low - t, np.full(t.shape, low))
        union = log_fbar + _log_h(b, np.exp(log_fbar), log_fbar)
        second = np.log(np.expm1(eps0)) + np.logaddexp(mills, union)
    return np.logaddexp(first, second) - log_f - np.log1p(c * np.exp(_log_rho(t, low)))


def _two_remove_values(eps: np.ndarray, high: float, low: float, b: int) -> np.ndarray:
    """H_{e^eps}(P_high || P_low) at finite eps (_remove_from with the two-shift forms)."""
    return _remove_from(
        eps,
        _two_root(eps, high, low, b),
        lambda t: _log_two_add(t, high, low, b),
        lambda t: _log_two_remove_tail(t, high, low, b),
    )


def _two_add_values(eps: np.ndarray, high: float, low: float, b: int) -> np.ndarray:
    """H_{e^eps}(P_low || P_high) at finite eps: e^{_log_two_add} at the root of l = -eps."""
    return np.exp(_log_two_add(_two_root(-eps, high, low, b), high, low, b))


# ---------------------------------------------------------------- the public profiles and pair


def _profile(values: Profile, s: float, b: int) -> Profile:
    """The vectorized profile: values at finite eps (at most 1; gdp.delta(eps, s) for b = 1), 0 at +inf, 1 at
    -inf, nan at nan; any input shape (a 0-d array for a scalar)."""

    def profile(epsilon: np.ndarray) -> np.ndarray:
        flat = np.asarray(epsilon, dtype=float).ravel()
        out = np.where(np.isposinf(flat), 0.0, np.where(np.isneginf(flat), 1.0, np.nan))
        finite = np.isfinite(flat)
        eps = flat[finite]
        # a delta of 1 may round to 1 + ulp (near-disjoint pairs): clipped to the profile's bound 1
        out[finite] = np.asarray(gdp.delta(eps, s)) if b == 1 else np.minimum(values(eps), 1.0)
        return out.reshape(np.shape(epsilon))

    return profile


def _direction(remove: bool, high: float, batches: int, low: float) -> Profile:
    """The validated profile of one direction: the one-shift forms for low = 0, else the two-shift ones."""
    h, lo, b = _check_pair(high, batches, low)
    one, two = (_remove_values, _two_remove_values) if remove else (_add_values, _two_add_values)
    values = (lambda e: one(e, h, b)) if lo == 0.0 else (lambda e: two(e, h, lo, b))
    return _profile(values, h - lo, b)


def max_test_remove_profile(high: float, batches: int, low: float = 0.0) -> Profile:
    """eps -> H_{e^eps}(Q || P) = Q(M > t_eps) - e^eps P(M > t_eps), l(t_eps) = eps (module docstring).

    The privacy profile of the max test of Chua et al. (ICML 2024; NeurIPS 2024) in the direction where
    the epoch with shift `high` (Q) is the first argument and the one with shift `low` (P; 0 by default)
    the second; vectorized over eps (any shape), +inf -> 0, -inf -> 1.
    low = 0: eps <= 0: (1 - e^eps) + e^eps H_{e^-eps}(P || Q) (two terms >= 0, the second from _log_add);
    eps > 0: the root condition eliminates e^eps, leaving
    [delta_G(eps0) (b - 1 + F^b) + (e^{eps0} - 1) Fbar h_b(Fbar)] / (b F), all terms >= 0, eps0 > 0.
    low > 0: the same shapes (_log_two_add, _log_two_remove_tail). Both are evaluated in log space.
    Measured (low = 0) against mpmath over shift in [1e-3, 20], batches in
    [1, 1e6], eps in [-50, 50]: relative error within a few times kappa u (kappa the relative condition
    number of delta in eps, u = 2^-53), which is below 1e-13 except for deltas below about 1e-100, where
    kappa itself exceeds 1e3; a delta below the float range comes out as 0. For batches = 1 it is the
    Gaussian profile gdp.delta(eps, high - low), which the general formulas also reduce to.
    """
    return _direction(True, high, batches, low)


def max_test_add_profile(high: float, batches: int, low: float = 0.0) -> Profile:
    """eps -> H_{e^eps}(P || Q) = P(M < t'_eps) - e^eps Q(M < t'_eps), l(t'_eps) = -eps.

    The other direction of the max test of Chua et al. (ICML 2024; NeurIPS 2024): by the root condition it
    equals Phi(t')^(b-1) D / (G (1 + (b-1) rho_high)) (_log_two_add; Phi(t')^b / (1 + b G / D) for low = 0,
    _log_add), a function of t' alone, so that the rounding of the root costs no more than the problem's own
    conditioning, evaluated in log space (accuracy as for max_test_remove_profile). Vectorized, +inf -> 0,
    -inf -> 1; batches = 1 gives gdp.delta(eps, high - low).
    """
    return _direction(False, high, batches, low)


def max_test_loss_range(
    high: float, batches: int, tail: float = _TAIL, *, low: float = 0.0
) -> tuple[float, float]:
    """[lo, hi] with P- and Q-mass of the loss l(M) at most `tail` below lo and above hi.

    l is increasing in t (module docstring) and Q (shift high) is stochastically larger than P (shift low):
    lo = l(t_lo) with P(M < t_lo) <= Phi(t_lo)^b = tail, hi = l(t_hi) with
    b Phi(-(t_hi - high)) = tail >= Q(M > t_hi) >= P(M > t_hi) (union bound). The mirrored range
    [-hi, -lo] then serves the reverse pair (DominatingPair.loss_range).
    """
    h, lo, b = _check_pair(high, batches, low)
    t_lo = float(special.ndtri_exp(np.log(tail) / b))
    t_hi = h - float(special.ndtri(tail / b))
    points = np.array([t_lo, t_hi])
    losses, _ = _loss(points, h, b) if lo == 0.0 else _two_loss(points, h, lo, b)
    return float(losses[0]), float(losses[1])


def max_test_pair(high: float, batches: int, low: float = 0.0) -> DominatingPair:
    """The max test's pair for the PLD accountant: remove = H(Q || P), add = H(P || Q) (Chua et al.), Q the
    epoch whose random batch carries shift `high`, P the one whose carries `low` (0 <= low < high).

    Chua et al.'s own pair for replace-one neighbours is high = 2 / sigma, low = 1 / sigma (their
    dpsgd_bounds.py); low = 0 (the default) is the one-shift pair. Composing it E times
    (pld.epsilon_bounds([(pair, E)], delta)) bounds the epsilon of E epochs of shuffled DP-SGD from BELOW:
    its `upper` is an upper bound on this adversary's epsilon, not on the mechanism's. loss_range covers
    all but 1e-18 of either measure at each end (max_test_loss_range).
    """
    h, lo, b = _check_pair(high, batches, low)
    return DominatingPair(
        remove=max_test_remove_profile(h, b, lo),
        add=max_test_add_profile(h, b, lo),
        loss_range=max_test_loss_range(h, b, low=lo),
    )
