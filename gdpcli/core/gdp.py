"""Gaussian differential privacy (Dong, Roth and Su, "Gaussian Differential Privacy", JRSS-B 2022).

All functions are vectorized: they broadcast numpy arrays and return floats for
scalar input. Arguments are assumed valid (mu >= 0, 0 < delta < 1, alpha in
[0, 1]); the CLI validates user input before calling in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.normal import Phi, Phi_inv, Phi_inv_exp, erfcx, log_Phi
from gdpcli.core.roots import newton_on_active
from gdpcli.core.rounding import Direction, Holds, elementwise, to_safe_side
from gdpcli.errors import ComputationError

_SQRT2 = np.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
_SMALLEST_SUBNORMAL = float(np.nextafter(0.0, 1.0))
_NORMAL = float(np.finfo(float).tiny)
_EPSILON = float(np.finfo(float).eps)
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
    return -0.5 * a * a - _LOG_SQRT_2PI + log_delta_over_density(a, mu)


def log_delta_over_density(a: np.ndarray, mu: np.ndarray) -> np.ndarray:
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
    result[direct] = _LOG_SQRT_HALF_PI + _log_underflowed(erfcx(xd / _SQRT2) - erfcx((xd + md) / _SQRT2))
    xs, ms = x[~direct][:, None], mu[~direct][:, None]
    integrand = _log_mills_slope(xs + 0.5 * ms * (1.0 + _GAUSS_NODES))
    log_ratio = 0.5 * ms[:, 0] * np.sum(integrand * _GAUSS_WEIGHTS, axis=1)  # the same order for any size
    log_mills = _LOG_SQRT_HALF_PI + _log_underflowed(erfcx(xs[:, 0] / _SQRT2))
    result[~direct] = log_mills + _log_underflowed(-np.expm1(log_ratio))
    return result


def _log_underflowed(values: np.ndarray) -> np.ndarray:
    """log, -inf without a warning where a factor of M(x) - M(x + mu) underflowed to 0 (x or x / mu near the
    float range): delta, at most mu / x, is 0 in floating point there."""
    with np.errstate(divide="ignore"):
        return np.log(values)


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
    return as_output(_delta_from_log(np.asarray(log_delta(epsilon, mu))))


def _delta_from_log(log: np.ndarray) -> np.ndarray:
    """e^log, with a positive value below the float range as the smallest subnormal, never 0."""
    value = np.exp(log)
    return np.where((value == 0) & (log > -np.inf), _SMALLEST_SUBNORMAL, value)


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
    """The largest mu such that mu-GDP implies (eps, delta)-DP, i.e. delta(eps; mu) <= delta (GDPT
    Def. 4.1's mu_GDP(eps, delta), rounded down): `mu_bound` on log delta, at or below the exact root.

    End points: delta <= 0 gives 0 (every mu > 0 has delta(eps; mu) > 0), delta >= 1 and eps = inf give
    inf (every mechanism is (eps, 1)-DP and (inf, delta)-DP).
    """
    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(delta, dtype=float))
    below_one = np.where(delta >= 1.0, 0.5, delta)
    with np.errstate(divide="ignore"):
        result = _mu_solve(epsilon, np.log(below_one), below_one, "lower")
    return as_output(np.where(delta >= 1.0, np.inf, result))


Side = Literal["lower", "upper"]
_MU_LIMIT = 2100
"""Halvings or doublings that bracket any mu_GDP root from its first guess (floats span 2^2100)."""


def mu_bound(epsilon: ArrayLike, log_delta_target: ArrayLike, side: Side) -> ArrayLike:
    """mu_GDP(eps, e^t), the mu with delta(eps; mu) = e^t (GDPT Def. 4.1), rounded to `side`; vectorized,
    in log space (targets far below 1e-308 work).

    delta(eps; mu) increases in mu with d log delta / d mu = phi(a) / delta (a = -eps/mu + mu/2), taken as
    1 / (M(x) - M(x + mu)) in the tail, without cancellation. Bracket: _mu_bracket; safeguarded Newton
    (core.roots). The root is then moved to the float where the inequality holds with the computed delta
    moved against the result by DELTA_RELATIVE_ERROR (core.rounding), tight: "lower" is the largest mu with
    delta(eps; mu) (1 + DELTA_RELATIVE_ERROR) <= e^t as computed (also in linear space where e^t is a
    float, the form gdp.mu promises), so at or below the exact root; "upper" the smallest mu with
    delta(eps; mu) (1 - DELTA_RELATIVE_ERROR) >= e^t, at or above it.

    End points: t = -inf gives 0, eps = inf gives inf, and t >= 0 gives inf on the upper side and, on the
    lower side, the root for the largest delta below 1 (a delta that rounded to 1 may be 1 - 1e-17).
    Both sides are finally kept above `_mu_floor` (moved outward by DELTA_RELATIVE_ERROR), a lower bound
    exact at eps = 0, which repairs the check where log delta itself loses its digits (delta within 1e-16
    of 1, or mu below 1e-16 at eps = 0). gdp.mu, whose promise is the computed inequality, has no floor.
    """
    epsilon, log_target = np.broadcast_arrays(
        np.asarray(epsilon, dtype=float), np.asarray(log_delta_target, dtype=float)
    )
    if side == "lower":
        log_target = np.where(log_target >= 0.0, np.log1p(-np.finfo(float).epsneg), log_target)
    with np.errstate(under="ignore"):
        result = _mu_solve(epsilon, log_target, np.exp(log_target), side)
    inner = np.isfinite(epsilon) & (log_target < 0.0) & (log_target > -np.inf)
    with np.errstate(invalid="ignore"):
        floor = _mu_floor(np.where(inner, epsilon, 1.0), np.where(inner, log_target, np.log(0.5)))
    margin = 1.0 - DELTA_RELATIVE_ERROR if side == "lower" else 1.0 + DELTA_RELATIVE_ERROR
    return as_output(np.where(inner, np.maximum(result, floor * margin), result))


def _mu_solve(
    epsilon: np.ndarray, log_target: np.ndarray, target_delta: np.ndarray, side: Side
) -> np.ndarray:
    """mu_bound's work, with the target given both as log delta and as delta (the float that the linear
    check compares with: gdp.mu's own argument, not a rounded exp(log))."""
    epsilon, log_target, target_delta = np.broadcast_arrays(epsilon, log_target, target_delta)
    shape = epsilon.shape
    epsilon, log_target, target_delta = epsilon.ravel(), log_target.ravel(), target_delta.ravel()
    finite = np.isfinite(epsilon)
    margin = np.log1p(DELTA_RELATIVE_ERROR) * (1.0 if side == "lower" else -1.0)
    # an upper bound whose target, raised by the margin, reaches delta = 1 is inf: no mu gets there
    infinite = ~finite | (log_target >= 0.0) | (log_target - margin >= 0.0)
    settled = infinite | (log_target == -np.inf)
    eps = np.where(settled, 1.0, epsilon)
    target = np.where(settled, np.log(0.5), log_target)
    floor = _mu_floor(eps, target)
    shifted = target - margin
    result = _mu_root(eps, shifted, *_mu_bracket(eps, shifted, floor))
    holds = elementwise(_mu_inequality(side), eps, target, target_delta, settled)
    unsafe = "up" if side == "lower" else "down"
    with np.errstate(over="ignore", invalid="ignore"):
        result = to_safe_side(result, holds, "down" if side == "lower" else "up", what="gdp.mu")
        result = _tightened(result, holds, unsafe, settled, what="gdp.mu")
    ends = np.where(infinite, np.inf, 0.0)
    return np.where(settled, ends, result).reshape(shape)


def _mu_inequality(side: Side) -> Callable[..., np.ndarray]:
    """The inequality that a rounded mu_GDP bound must meet, as computed, with the error margin: in linear
    space where e^t is a normal float (gdp.mu's promise, delta (1 + DELTA_RELATIVE_ERROR) <= e^t), in log
    space otherwise and for the upper side, where the margin also covers the rounding of log delta itself
    (a few ulps of |t|: 7e-12 at t = -3e4, beyond the range the accuracy harness verifies)."""

    def holds(
        m: np.ndarray, eps: np.ndarray, target: np.ndarray, linear: np.ndarray, skip: np.ndarray
    ) -> np.ndarray:
        log_margin = np.log1p(DELTA_RELATIVE_ERROR) + 8.0 * _EPSILON * np.abs(target)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
            log = np.asarray(log_delta(eps, np.where(skip, 1.0, m)))
            if side == "upper":
                return skip | (log - log_margin >= target)
            in_log = log + log_margin <= target
            in_linear = _delta_from_log(log) * (1.0 + DELTA_RELATIVE_ERROR) <= linear
            return skip | np.where(linear >= _NORMAL, in_linear, in_log)

    return holds


def _mu_at_zero(log_target: np.ndarray) -> np.ndarray:
    """mu_GDP(0, e^t) = 2 sqrt(2) erfinv(delta), as delta(0; mu) = 2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2)).

    For delta > 1/2 it is written with erfcinv(1 - delta), 1 - delta = -expm1(t), to keep its digits.
    """
    from scipy import special

    delta_value = np.exp(log_target)
    with np.errstate(divide="ignore"):
        inverse = np.where(
            delta_value < 0.5, special.erfinv(delta_value), special.erfcinv(-np.expm1(log_target))
        )
    return 2.0 * _SQRT2 * inverse


def _mu_floor(epsilon: np.ndarray, log_target: np.ndarray) -> np.ndarray:
    """A lower bound on mu_GDP(eps, e^t), the larger of two (both from the monotonicity of delta):
    delta(eps; mu) <= Phi(a), so the mu solving a = z = Phi^-1(e^t), mu = z + sqrt(z^2 + 2 eps)
    = 2 eps / (sqrt(z^2 + 2 eps) - z), is too small; and delta(eps; mu) <= delta(0; mu), so
    mu_GDP(0, e^t) (exact at eps = 0) is too small."""
    z = np.asarray(Phi_inv_exp(log_target), dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # eps near 1e308: inf, a valid floor
        root = np.sqrt(z * z + 2.0 * epsilon)
        from_tail = np.where(z < 0.0, 2.0 * epsilon / (root - z), z + root)
    return np.maximum(np.nan_to_num(from_tail, nan=0.0), _mu_at_zero(log_target))


def _mu_bracket(
    epsilon: np.ndarray, log_target: np.ndarray, floor: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """lo <= mu_GDP(eps, e^t) <= hi: lo from the floor (a lower bound up to rounding, halved while the
    computed delta says otherwise), hi doubled from max(2, 2 lo); each loop only on the elements still
    outside, at most _MU_LIMIT times (ComputationError beyond)."""
    lo = np.maximum(floor * (1.0 - DELTA_RELATIVE_ERROR), np.finfo(float).tiny)
    hi = np.maximum(2.0, 2.0 * lo)
    for end, outside, factor in ((lo, np.greater, 0.5), (hi, np.less, 2.0)):
        active = np.flatnonzero(outside(log_delta(epsilon, end), log_target))
        for _ in range(_MU_LIMIT):
            if active.size == 0:
                break
            end[active] *= factor
            still = outside(np.asarray(log_delta(epsilon[active], end[active])), log_target[active])
            active = active[still]
        if active.size:
            where = f"eps = {epsilon[active[0]]}, log delta = {log_target[active[0]]}"
            raise ComputationError(f"gdp.mu: no bracket after {_MU_LIMIT} steps at {where}")
    return lo, hi


def _mu_root(epsilon: np.ndarray, log_target: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Safeguarded Newton on mu -> log delta(eps; mu) - t within [lo, hi]."""

    def terms(m: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        e = epsilon[index]
        log = np.asarray(log_delta(e, m), dtype=float)
        a = -e / m + 0.5 * m
        tail = a < 0
        log_slope = -0.5 * a * a - _LOG_SQRT_2PI - log  # log(phi(a) / delta), cancels in the tail
        log_slope[tail] = -log_delta_over_density(a[tail], m[tail])
        return log - log_target[index], np.exp(log_slope)

    with np.errstate(over="ignore", invalid="ignore"):  # at mu near 0, a^2 overflows: Newton bisects there
        return newton_on_active(terms, lo, hi, start=lo)  # lo is the tight floor: Newton from there


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
