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

Numerics (DESIGN.md, log space): with t_eps the root of l(t) = eps, F = Phi(t), Fbar = 1 - F and
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

_SQRT2 = np.sqrt(2.0)
_SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_LOG_SQRT_HALF_PI = 0.5 * np.log(0.5 * np.pi)
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(16)
_FAR = -30.0  # below this t, q comes from erfcx (Phi(t) nears the float range)
_SERIES_TERMS = 24  # terms of the series of h_b for b x < 1/2 (each at most a sixth of the one before)
_NEWTON_STEPS = 200
_EPS = float(np.finfo(float).eps)
_TAIL = 1e-18  # P- and Q-mass of the loss outside max_test_pair's loss_range (each end)


def _check(shift: float, batches: int) -> tuple[float, int]:
    """Validated (s, b): 0 < s < inf and an integer b >= 1."""
    shift = float(shift)
    if not (np.isfinite(shift) and shift > 0.0):
        raise InputError(f"the shift must be positive and finite, got {shift!r}")
    if int(batches) != batches or batches < 1:
        raise InputError(f"the number of batches must be an integer >= 1, got {batches!r}")
    return shift, int(batches)


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
    """t with l(t) = eps (finite eps, any b >= 1), by safeguarded Newton on a bracket.

    Bracket: e^l <= g (as Phi(t - s) < g Phi(t)), e^l >= g / b and e^l <= (g + b - 1) / b, so eps0(t_eps)
    lies in [max(eps, log(1 + b (e^eps - 1))), eps + log b]; t = eps0 / s + s/2. A Newton step that
    leaves the current bracket (or lands on its end) is replaced by bisection; a point stops when its
    Newton step or its bracket is below eps_machine max(|t|, 1), at least one ulp, so bisection ends it.
    """
    log_b = np.log(b)
    # the second lower bound exceeds the first only for eps > 0, where log1p's argument is positive
    low0 = np.where(epsilon > 0.0, np.log1p(b * np.expm1(np.fmax(epsilon, 0.0))), epsilon)
    lo = (low0 - 1e-12 * (1.0 + np.abs(low0))) / s + 0.5 * s
    hi = (epsilon + log_b + 1e-12 * (1.0 + np.abs(epsilon + log_b))) / s + 0.5 * s
    t = lo.copy()
    active = np.arange(t.size)
    for _ in range(_NEWTON_STEPS):
        if active.size == 0:
            return t
        x, la, ha = t[active], lo[active], hi[active]
        loss, slope = _loss(x, s, b)
        f = loss - epsilon[active]
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
    t = _root(eps, s, b)
    result = np.empty(eps.shape)
    head = eps <= 0.0
    result[head] = -np.expm1(eps[head]) + np.exp(eps[head] + _log_add(t[head], s, b))
    tail = t[~head]
    eps0 = s * (tail - 0.5 * s)
    log_f, log_fbar = special.log_ndtr(tail), special.log_ndtr(-tail)
    first = np.asarray(gdp.log_delta(eps0, s)) + np.log(b - 1 + np.exp(b * log_f))
    with np.errstate(divide="ignore"):  # b = 1: h_1 = 0
        second = np.log(np.expm1(eps0)) + log_fbar + _log_h(b, np.exp(log_fbar), log_fbar)
    result[~head] = np.exp(np.logaddexp(first, second) - np.log(b) - log_f)
    return result


def _add_values(eps: np.ndarray, s: float, b: int) -> np.ndarray:
    """H_{e^eps}(P || Q) at finite eps by the general formula (max_test_add_profile); exact for b = 1 too."""
    return np.exp(_log_add(_root(-eps, s, b), s, b))


def _profile(values: Callable[[np.ndarray, float, int], np.ndarray], s: float, b: int) -> Profile:
    """The vectorized profile: values at finite eps (gdp.delta for b = 1), 0 at +inf, 1 at -inf, nan at nan;
    any input shape (a 0-d array for a scalar)."""

    def profile(epsilon: np.ndarray) -> np.ndarray:
        flat = np.asarray(epsilon, dtype=float).ravel()
        out = np.where(np.isposinf(flat), 0.0, np.where(np.isneginf(flat), 1.0, np.nan))
        finite = np.isfinite(flat)
        eps = flat[finite]
        out[finite] = np.asarray(gdp.delta(eps, s)) if b == 1 else values(eps, s, b)
        return out.reshape(np.shape(epsilon))

    return profile


def max_test_remove_profile(shift: float, batches: int) -> Profile:
    """eps -> H_{e^eps}(Q || P) = Q(M > t_eps) - e^eps P(M > t_eps), l(t_eps) = eps (module docstring).

    The privacy profile of the max test of Chua et al. (ICML 2024; NeurIPS 2024) in the direction where
    the shifted epoch is the first argument; vectorized over eps (any shape), +inf -> 0, -inf -> 1.
    eps <= 0: (1 - e^eps) + e^eps H_{e^-eps}(P || Q) (two terms >= 0, the second from _log_add);
    eps > 0: the root condition eliminates e^eps, leaving
    [delta_G(eps0) (b - 1 + F^b) + (e^{eps0} - 1) Fbar h_b(Fbar)] / (b F), all terms >= 0, eps0 > 0.
    Both are evaluated in log space. Measured against mpmath over shift in [1e-3, 20], batches in
    [1, 1e6], eps in [-50, 50]: relative error within a few times kappa u (kappa the relative condition
    number of delta in eps, u = 2^-53), which is below 1e-13 except for deltas below about 1e-100, where
    kappa itself exceeds 1e3; a delta below the float range comes out as 0. For batches = 1 it is the
    Gaussian profile gdp.delta(eps, shift), which the general formulas also reduce to.
    """
    s, b = _check(shift, batches)
    return _profile(_remove_values, s, b)


def max_test_add_profile(shift: float, batches: int) -> Profile:
    """eps -> H_{e^eps}(P || Q) = P(M < t'_eps) - e^eps Q(M < t'_eps), l(t'_eps) = -eps.

    The other direction of the max test of Chua et al. (ICML 2024; NeurIPS 2024): by the root condition it
    equals Phi(t')^b / (1 + b G / D) (_log_add), a function of t' alone, so that the rounding of the root
    costs no more than the problem's own conditioning, evaluated in log space (accuracy as for
    max_test_remove_profile). Vectorized, +inf -> 0, -inf -> 1; batches = 1 gives gdp.delta(eps, shift).
    """
    s, b = _check(shift, batches)
    return _profile(_add_values, s, b)


def max_test_loss_range(shift: float, batches: int, tail: float = _TAIL) -> tuple[float, float]:
    """[lo, hi] with P- and Q-mass of the loss l(M) at most `tail` below lo and above hi.

    Q is stochastically larger than P, so P(M < t) >= Q(M < t) and Q(M > t) >= P(M > t): lo = l(t_lo) with
    P(M < t_lo) = Phi(t_lo)^b = tail, hi = l(t_hi) with b Phi(-(t_hi - s)) = tail >= Q(M > t_hi) (union
    bound). The mirrored range [-hi, -lo] then serves the reverse pair (DominatingPair.loss_range).
    """
    s, b = _check(shift, batches)
    t_lo = float(special.ndtri_exp(np.log(tail) / b))
    t_hi = s - float(special.ndtri(tail / b))
    losses, _ = _loss(np.array([t_lo, t_hi]), s, b)
    return float(losses[0]), float(losses[1])


def max_test_pair(shift: float, batches: int) -> DominatingPair:
    """The max test's pair for the PLD accountant: remove = H(Q || P), add = H(P || Q) (Chua et al.).

    Composing it E times (pld.epsilon_bounds([(pair, E)], delta)) bounds the epsilon of E epochs of
    shuffled DP-SGD from BELOW: its `upper` is an upper bound on this adversary's epsilon, not on the
    mechanism's. loss_range covers all but 1e-18 of either measure at each end (max_test_loss_range).
    """
    s, b = _check(shift, batches)
    return DominatingPair(
        remove=max_test_remove_profile(s, b),
        add=max_test_add_profile(s, b),
        loss_range=max_test_loss_range(s, b),
    )
