"""Gaussian differential privacy (Dong, Roth and Su, "Gaussian Differential Privacy", JRSS-B 2022).

All functions are vectorized: they broadcast numpy arrays and return floats for
scalar input. Arguments are assumed valid (mu >= 0, 0 < delta < 1, alpha in
[0, 1]); the CLI validates user input before calling in.
"""

from __future__ import annotations

import numpy as np

from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.normal import Phi, Phi_inv, Phi_inv_exp, erfcx, log_Phi
from gdpcli.core.roots import newton_on_active
from gdpcli.core.rounding import Direction, Holds, elementwise, to_safe_side

_SQRT2 = np.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_SMALLEST_SUBNORMAL = float(np.nextafter(0.0, 1.0))
DELTA_RELATIVE_ERROR = 1e-12
"""The relative error of `delta` against 60-digit mpmath over mu in [1e-8, 40], eps in [0, 1e3] and every
representable delta, as verified by tests/core/test_kernel_accuracy.py. Functions whose result must be safe
against the exact value, not only in floating point, raise the computed delta by this much."""


def tradeoff(alpha: ArrayLike, mu: ArrayLike) -> ArrayLike:
    """G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu), GDP paper Def. 2.

    Written as Phi(-Phi^-1(alpha) - mu) so that tiny alpha keeps full precision.
    """
    alpha, mu = np.asarray(alpha, dtype=float), np.asarray(mu, dtype=float)
    return as_output(Phi(-Phi_inv(alpha) - mu))


def symmetric_point(mu: ArrayLike) -> ArrayLike:
    """The fixed point alpha* = G_mu(alpha*) = Phi(-mu/2) of the symmetric trade-off G_mu."""
    return as_output(Phi(-0.5 * np.asarray(mu, dtype=float)))


def log_delta(epsilon: ArrayLike, mu: ArrayLike) -> ArrayLike:
    """log delta(eps; mu) for mu-GDP, GDP paper Cor. 1:

        delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    With a = -eps/mu + mu/2 and b = a - mu one has b^2/2 = a^2/2 + eps, so with
    Phi(x) = erfcx(-x/sqrt 2) e^{-x^2/2} / 2 the two terms share the factor
    e^{-a^2/2} and delta = e^{-a^2/2} (erfcx(-a/sqrt2) - erfcx(-b/sqrt2)) / 2
    with no e^eps cancellation. That form is used for a < 0 (the tail, where
    delta is small); for a >= 0 (eps <= mu^2/2) delta = [Phi(a) - Phi(b)] -
    (e^eps - 1) Phi(b), with the normal mass between b and a taken without
    cancellation (see _normal_mass), so tiny mu keeps its digits too.
    """
    epsilon, mu = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(mu, dtype=float))
    result = np.empty(epsilon.shape)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a = -epsilon / mu + 0.5 * mu
        tail = a < 0  # each branch is evaluated on its own points only (they cost ~5 ufunc calls each)
        result[tail] = _log_delta_tail(a[tail], mu[tail])
        result[~tail] = _log_delta_head(a[~tail], mu[~tail], epsilon[~tail])
        result = np.where(mu == 0, np.where(epsilon >= 0, -np.inf, np.log1p(-np.exp(epsilon))), result)
        result = np.where(np.isposinf(mu) & np.isfinite(epsilon), 0.0, result)
        result = np.where(np.isposinf(epsilon), -np.inf, result)
    return as_output(result)


_GAUSS_NODES, _GAUSS_WEIGHTS = np.polynomial.legendre.leggauss(8)
_LOG_SQRT_HALF_PI = 0.5 * np.log(0.5 * np.pi)


def _log_delta_tail(a: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """a < 0: log of e^{-a^2/2} (erfcx(-a/sqrt2) - erfcx(-b/sqrt2)) / 2 with b = a - mu."""
    return -0.5 * a * a - _LOG_SQRT_2PI + _log_delta_over_density(a, mu)


def _log_delta_over_density(a: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """a < 0: log(delta / phi(a)) = log(M(x) - M(x + mu)), x = -a, M the Mills ratio; delta / phi(a) is also
    1 / (d log delta / d mu), which gdp.mu needs without the cancellation of log delta + a^2/2 at tiny mu.

    With x = -a and the Mills ratio M(t) = Phi(-t)/phi(t) = sqrt(pi/2) erfcx(t/sqrt2), this is
    phi(a) (M(x) - M(x + mu)) = phi(a) M(x) (1 - e^I), I = log M(x + mu) - log M(x) = int_x^{x+mu}
    (t - 1/M(t)) dt (as M' = t M - 1). Where |I| is about 1/64 or more (estimated at the midpoint) the
    two erfcx terms are subtracted directly (relative error a few ulps / (1 - e^-1/64), below 1e-13); where
    the difference cancels more (small mu, or large x, where I ~ -mu/x) I is integrated by 8-point
    Gauss-Legendre (a smooth integrand) and
    1 - e^I = -expm1(I) carries no cancellation.
    """
    x = -a
    result = np.empty(a.shape)
    middle = x + 0.5 * mu  # a rough I: |t - 1/M(t)| is about 1/(t + 2/t) (within 5 %) beyond t = 1
    direct = mu >= (middle + 2.0 / np.maximum(middle, 1.0)) / 64.0
    xd, md = x[direct], mu[direct]
    result[direct] = _LOG_SQRT_HALF_PI + np.log(erfcx(xd / _SQRT2) - erfcx((xd + md) / _SQRT2))
    xs, ms = x[~direct][:, None], mu[~direct][:, None]
    integrand = _log_mills_slope(xs + 0.5 * ms * (1.0 + _GAUSS_NODES))
    log_ratio = 0.5 * ms[:, 0] * np.sum(integrand * _GAUSS_WEIGHTS, axis=1)  # the same order for any size
    log_mills = _LOG_SQRT_HALF_PI + np.log(erfcx(xs[:, 0] / _SQRT2))
    result[~direct] = log_mills + np.log(-np.expm1(log_ratio))
    return result


_FRACTION_DEPTHS = ((4.0, 40), (8.0, 18), (20.0, 10), (40.0, 7))
"""Levels of the continued fraction by lower end of t: each converged to 2e-16 there (checked with mpmath)."""


def _log_mills_slope(t: np.ndarray) -> np.ndarray:
    """(log M)'(t) = t - 1/M(t) for t >= 0, M the Mills ratio, to a few ulps.

    For t < 4 from erfcx (the difference loses at most t^2 ulps); beyond, where t and 1/M(t) agree to
    ever more digits, from Laplace's continued fraction 1/M(t) = t + 1/(t + 2/(t + 3/(t + ...))), i.e.
    t - 1/M(t) = -1/(t + 2/(t + 3/(t + ...))), with fewer levels the larger t (_FRACTION_DEPTHS).
    """
    result = np.empty(t.shape)
    near = t < _FRACTION_DEPTHS[0][0]
    result[near] = t[near] - 1.0 / (np.sqrt(0.5 * np.pi) * erfcx(t[near] / _SQRT2))
    edges = [lo for lo, _ in _FRACTION_DEPTHS[1:]] + [np.inf]
    for (lo, depth), hi in zip(_FRACTION_DEPTHS, edges, strict=True):
        tier = (t >= lo) & (t < hi)
        far = t[tier]
        fraction = far + depth / far
        for level in range(depth - 1, 1, -1):
            fraction = far + level / fraction
        result[tier] = -1.0 / fraction
    return result


def _log_delta_head(a: np.ndarray, mu: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """a >= 0: log of [Phi(a) - Phi(b)] - (e^eps - 1) Phi(b), b = a - mu, e^eps - 1 without overflow."""
    b = a - mu
    excess = np.where(
        epsilon < 1.0, np.expm1(np.minimum(epsilon, 1.0)) * Phi(b), np.exp(epsilon + log_Phi(b)) - Phi(b)
    )
    return np.log(_normal_mass(b, a) - excess)


def _normal_mass(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Phi(upper) - Phi(lower) for lower <= upper without cancellation: from the upper tails when both
    are positive, from the lower tails when both are negative, from erf (odd, accurate near 0) when the
    interval contains 0. upper = 0 counts as containing 0: Phi(0) - Phi(lower) = 1/2 - Phi(lower) would
    lose -log10(|lower|) digits for small |lower| (3e-10 relative at lower = -7e-8), erf(-lower/sqrt2)/2
    loses none."""
    from scipy.special import erf

    both_positive = Phi(-lower) - Phi(-upper)
    across = 0.5 * (erf(upper / _SQRT2) - erf(lower / _SQRT2))
    return np.where(lower >= 0, both_positive, np.where(upper < 0, Phi(upper) - Phi(lower), across))


def delta(epsilon: ArrayLike, mu: ArrayLike) -> ArrayLike:
    """delta(eps; mu) of mu-GDP (GDP paper Cor. 1), accurate down to about 1e-300.

    A positive delta below the float range is returned as the smallest subnormal (5e-324), never as 0,
    so the figure stays an upper bound; 0 means exactly 0 (mu = 0 or eps = inf).
    """
    log = np.asarray(log_delta(epsilon, mu))
    value = np.exp(log)
    return as_output(np.where((value == 0) & (log > -np.inf), _SMALLEST_SUBNORMAL, value))


def _delta_at_zero(mu: np.ndarray) -> np.ndarray:
    """delta(0; mu) = 2 Phi(mu/2) - 1, the largest delta of interest for eps >= 0."""
    return 1.0 - 2.0 * Phi(-0.5 * mu)


def epsilon(delta: ArrayLike, mu: ArrayLike) -> ArrayLike:
    """The smallest eps >= 0 with delta(eps; mu) <= delta: mu-GDP implies (eps, delta)-DP (Cor. 1).

    Bracket: eps = 0 and eps_hi = mu (mu/2 - Phi^-1(delta)), where Phi(a) = delta
    already bounds delta(eps_hi) <= delta. Safeguarded Newton on log delta, whose
    derivative in eps is 1 - Phi(a)/delta(eps). The root is then moved up to the
    nearest float at which delta(eps; mu) (1 + DELTA_RELATIVE_ERROR) <= delta holds as
    computed (core.rounding), so (eps, delta) is a valid guarantee for the exact delta,
    not only in floating point: the result is at or above the exact root, by at most
    about DELTA_RELATIVE_ERROR times the problem's condition number.
    """
    delta, mu = np.broadcast_arrays(np.asarray(delta, dtype=float), np.asarray(mu, dtype=float))
    with np.errstate(divide="ignore"):  # delta = 0: eps = inf
        log_target = np.log(delta)
    # eps = 0 is the answer exactly when it meets the contract as computed
    trivial = _delta_at_most(np.zeros(delta.shape), mu, delta) | (mu == 0)
    settled = trivial | ~np.isfinite(mu)
    safe_mu = np.where(settled, 1.0, mu)
    safe_target = np.where(settled, np.log(0.5 * _delta_at_zero(1.0)), log_target)
    with np.errstate(over="ignore"):  # mu near 1e300: eps overflows to inf, which is the answer
        hi = safe_mu * (0.5 * safe_mu - Phi_inv_exp(safe_target))

    flat_mu, flat_target = safe_mu.ravel(), safe_target.ravel()

    def terms(eps: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = flat_mu[index]
        log = np.asarray(log_delta(eps, m))
        return log - flat_target[index], -np.expm1(log_Phi(-eps / m + 0.5 * m) - log)

    with np.errstate(over="ignore", invalid="ignore"):
        eps = newton_on_active(terms, np.zeros_like(hi), hi)
        holds = elementwise(_delta_at_most, mu, delta, settled)
        eps = to_safe_side(eps, holds, "up", what="gdp.epsilon")
        eps = _tightened(eps, holds, "down", settled, what="gdp.epsilon")
    eps = np.where(trivial, 0.0, eps)
    eps = np.where(np.isposinf(mu), np.inf, eps)
    return as_output(eps)


def _delta_at_most(
    epsilon: np.ndarray, mu: np.ndarray, target: np.ndarray, settled: np.ndarray | bool = False
) -> np.ndarray:
    """The defining inequality of gdp.epsilon and gdp.mu, delta(eps; mu) <= target, checked with the
    computed delta raised by DELTA_RELATIVE_ERROR, so that it holds for the exact delta too, not only as
    computed; `settled` marks elements whose answer is set otherwise (they pass)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        safe_mu = np.where(settled, 1.0, mu)
        return settled | (np.asarray(delta(epsilon, safe_mu)) * (1.0 + DELTA_RELATIVE_ERROR) <= target)


def mu(epsilon: ArrayLike, delta: ArrayLike) -> ArrayLike:
    """The largest mu such that mu-GDP implies (eps, delta)-DP, i.e. delta(eps; mu) <= delta.

    delta(eps; mu) increases in mu with d delta / d mu = phi(a) (a = -eps/mu + mu/2),
    so d log delta / d mu = phi(a) / delta (taken as 1 / (M(x) - M(x + mu)) in the tail,
    without cancellation). Bracket: _mu_bracket. The root is then moved down to the
    nearest float at which delta(eps; mu) (1 + DELTA_RELATIVE_ERROR) <= delta holds as
    computed (core.rounding): at or below the exact root, as gdp.epsilon is at or above.
    """
    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(delta, dtype=float))
    finite = np.isfinite(epsilon)
    settled = ~finite | (delta <= 0)  # eps = inf: mu = inf; delta <= 0 (eps finite): mu = 0
    eps = np.where(finite, epsilon, 1.0)
    log_target = np.log(np.where(settled, 0.5, delta))
    lo, hi = _mu_bracket(eps, log_target)

    flat_eps, flat_target = eps.ravel(), log_target.ravel()

    def terms(m: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        e = flat_eps[index]
        log = np.asarray(log_delta(e, m), dtype=float)
        a = -e / m + 0.5 * m
        tail = a < 0
        log_slope = -0.5 * a * a - _LOG_SQRT_2PI - log  # log(phi(a) / delta), cancels in the tail
        log_slope[tail] = -_log_delta_over_density(a[tail], m[tail])
        return log - flat_target[index], np.exp(log_slope)

    with np.errstate(over="ignore", invalid="ignore"):  # at mu near 0, a^2 overflows: Newton bisects there
        result = newton_on_active(terms, lo, hi)

    def holds(m: np.ndarray, e: np.ndarray, target: np.ndarray, skip: np.ndarray) -> np.ndarray:
        return _delta_at_most(e, m, target) | skip

    checked = elementwise(holds, eps, delta, settled)
    result = to_safe_side(result, checked, "down", what="gdp.mu")
    with np.errstate(over="ignore", invalid="ignore"):
        result = _tightened(result, checked, "up", settled | ~(delta < 1.0), what="gdp.mu")
    return as_output(np.where(finite, np.where(settled, 0.0, result), np.inf))


def _mu_bracket(epsilon: np.ndarray, log_target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """lo <= mu(eps, delta) <= hi, from lower bounds on the root that hold up to rounding:
    delta(eps; mu) <= Phi(a) with a = -eps/mu + mu/2, so the mu solving a = z = Phi^-1(delta),
    mu = z + sqrt(z^2 + 2 eps) = 2 eps / (sqrt(z^2 + 2 eps) - z), is below the root; and
    delta(eps; mu) <= delta(0; mu) = 2 Phi(mu/2) - 1 <= mu / sqrt(2 pi) gives delta sqrt(2 pi). Halving
    (lo) and doubling (hi, from 2 lo or 2) finish the bracket, each on the elements still outside it only."""
    shape = epsilon.shape
    epsilon, log_target = epsilon.ravel(), log_target.ravel()
    z = np.asarray(Phi_inv_exp(log_target), dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        gaussian = np.where(
            z < 0, 2.0 * epsilon / (np.sqrt(z * z + 2.0 * epsilon) - z), z + np.sqrt(z * z + 2.0 * epsilon)
        )
    lo = np.maximum(np.nan_to_num(gaussian, nan=0.0), np.exp(log_target + _LOG_SQRT_2PI))
    hi = np.maximum(2.0, 2.0 * lo)
    for end, outside, factor in ((lo, np.greater, 0.5), (hi, np.less, 2.0)):
        active = np.flatnonzero(outside(log_delta(epsilon, end), log_target))
        for _ in range(2100):
            if active.size == 0:
                break
            end[active] *= factor
            still = outside(np.asarray(log_delta(epsilon[active], end[active])), log_target[active])
            active = active[still]
    return lo.reshape(shape), hi.reshape(shape)


def _tightened(
    x: np.ndarray, holds: Holds, direction: Direction, skip: np.ndarray, *, what: str
) -> np.ndarray:
    """x, at which `holds` (the defining inequality) passes, moved `direction` (toward the unsafe side) to
    the last float before the first one at which it fails: the result is tight, one float further the
    inequality fails as computed, and it still passes (every returned float was checked).

    Newton on log delta stops within a few ulps of its root and to_safe_side moves only results that fail,
    so without this a result could sit hundreds of floats inside the safe side where delta is computed from
    a log of magnitude 700 (one ulp of log delta is 1e-13 relative in delta). Skipped elements (`skip`,
    end points 0 and inf) are returned unchanged.
    """
    skip = np.ravel(np.broadcast_to(skip, x.shape) | (x == 0) | ~np.isfinite(x))
    step = np.inf if direction == "up" else -np.inf

    def fails(candidate: np.ndarray, index: np.ndarray) -> np.ndarray:
        return skip[index] | ~np.asarray(holds(candidate, index), dtype=bool)

    first_failing = to_safe_side(np.nextafter(x, step), fails, direction, what=what)
    return np.where(skip.reshape(x.shape), x, np.nextafter(first_failing, -step))


def pure_dp_mu(epsilon: ArrayLike) -> ArrayLike:
    """Tightest mu with eps-DP => mu-GDP: mu = -2 Phi^-1(1 / (1 + e^eps)) (GDPT paper Thm 5.1).

    1/(1 + e^eps) is formed in log space, -log1p(e^eps), so large eps stays exact. G_mu <= f_{eps,0}
    holds iff G_mu lies below the kink (x, x) of f_{eps,0}, x = 1/(1 + e^eps); the result is moved up to
    the nearest float at which tradeoff(x, mu) <= x holds as computed (core.rounding).
    """
    epsilon = np.asarray(epsilon, dtype=float)
    log_kink = -np.logaddexp(0.0, epsilon)

    def below_kink(mu: np.ndarray, log_x: np.ndarray) -> np.ndarray:
        return np.asarray(log_Phi(-Phi_inv_exp(log_x) - mu)) <= log_x

    mu = -2.0 * Phi_inv_exp(log_kink)
    return as_output(to_safe_side(mu, elementwise(below_kink, log_kink), "up", what="gdp.pure_dp_mu"))


def group_mu(mu: ArrayLike, group_size: int) -> ArrayLike:
    """Group privacy of GDP: a mu-GDP mechanism is (k mu)-GDP for groups of size k (GDP paper Thm 3/Cor.)."""
    return as_output(np.asarray(mu, dtype=float) * group_size)


def rdp(order: ArrayLike, mu: ArrayLike) -> ArrayLike:
    """Renyi DP of mu-GDP: D_alpha(N(mu,1) || N(0,1)) = alpha mu^2 / 2."""
    return as_output(0.5 * np.asarray(order, dtype=float) * np.square(np.asarray(mu, dtype=float)))


def compose(mus: np.ndarray) -> float:
    """Composition of mu_i-GDP mechanisms is sqrt(sum mu_i^2)-GDP (GDP paper Cor. 2).

    Scaled by the largest mu so that neither 1e-300 nor 1e300 under- or overflows in the squares.
    """
    mus = np.abs(np.asarray(mus, dtype=float))
    largest = float(np.max(mus)) if mus.size else 0.0
    if largest == 0.0 or not np.isfinite(largest):
        return largest
    return largest * float(np.sqrt(np.sum(np.square(mus / largest))))


__all__ = [
    "Phi",
    "compose",
    "delta",
    "epsilon",
    "group_mu",
    "log_delta",
    "mu",
    "pure_dp_mu",
    "rdp",
    "symmetric_point",
    "tradeoff",
]
