"""Trade-off functions and privacy profiles (Dong, Roth and Su, "Gaussian Differential Privacy", JRSS-B 2022).

A trade-off function f = T(P, Q) is convex, continuous, non-increasing and f(alpha) <= 1 - alpha on [0, 1]
(GDP paper Prop. 1). gdpcli represents one either as a vectorized callable alpha -> beta or as a `Grid`: its
values at knots 0 = alpha_0 < ... < alpha_n = 1, read as the piecewise-linear interpolant.

Privacy profiles: for f = T(P, Q) the profile is delta(eps) = 1 + f*(-e^eps) = sup_alpha (1 - f(alpha) - e^eps
alpha), the hockey-stick divergence H_{e^eps}(Q || P) (GDP paper Prop. 6). It is defined for every real eps;
a profile of a symmetric f on eps >= 0 determines f (Prop. 5/6), an asymmetric one also needs eps < 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.hull import lower_hull
from gdpcli.core.normal import Phi, Phi_inv
from gdpcli.errors import ComputationError, InputError

TradeoffFn = Callable[[np.ndarray], np.ndarray]
ProfileFn = Callable[[np.ndarray], np.ndarray]
_BROADCAST_BUDGET = 2**22  # entries per chunk in tradeoff_from_profile


@dataclass(frozen=True)
class Grid:
    """A trade-off function given by its values beta at knots alpha (0 = alpha[0] < ... < alpha[-1] = 1).

    Between knots it is the linear interpolant. On construction the values are rounded toward the safe side
    (smaller beta: a weaker privacy claim) to what every trade-off function satisfies: beta is clipped to
    [0, 1 - alpha] and replaced by its running minimum, so it is non-increasing (GDP paper Prop. 1).
    Convexity is not imposed; `convexify` does that.
    """

    alpha: np.ndarray
    beta: np.ndarray

    def __post_init__(self) -> None:
        alpha = np.asarray(self.alpha, dtype=float)
        beta = np.asarray(self.beta, dtype=float)
        if alpha.ndim != 1 or alpha.shape != beta.shape or alpha.size < 2:
            raise InputError("a trade-off grid needs two 1-d arrays of equal length >= 2")
        if not (np.all(np.isfinite(alpha)) and np.all(np.isfinite(beta))):
            raise InputError("a trade-off grid must be finite")
        if alpha[0] != 0.0 or alpha[-1] != 1.0 or np.any(np.diff(alpha) <= 0):
            raise InputError("trade-off grid knots must increase strictly from 0 to 1")
        beta = np.minimum.accumulate(np.clip(beta, 0.0, 1.0 - alpha))
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "beta", beta)

    def __call__(self, alpha: ArrayLike) -> ArrayLike:
        """Evaluate the piecewise-linear interpolant (alpha in [0, 1])."""
        return as_output(np.interp(alpha, self.alpha, self.beta))


def alpha_grid(size: int = 4001, smallest: float = 1e-12) -> np.ndarray:
    """Knots 0, Phi(z_1), ..., Phi(z_m), 1 with z uniform in [Phi^-1(smallest), -Phi^-1(smallest)].

    Uniform in the normal quantile, the spacing suits G_mu-like functions whose slope blows up at 0 and
    vanishes at 1; the linear interpolation error of G_mu on it is O(((z range) / size)^2).
    """
    z_max = -float(Phi_inv(smallest))
    return np.unique(np.concatenate(([0.0], Phi(np.linspace(-z_max, z_max, size)), [1.0])))


def grid_from_tradeoff(tradeoff: TradeoffFn, alpha: np.ndarray) -> Grid:
    """Sample a vectorized trade-off function at alpha (0 and 1 are added)."""
    knots = np.unique(np.concatenate(([0.0], np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0), [1.0])))
    return Grid(knots, np.asarray(tradeoff(knots), dtype=float))


_EXP_LIMIT = 709.0
"""exp(eps) is finite below this."""


def _scaled(alpha: np.ndarray, epsilon: ArrayLike) -> np.ndarray:
    """e^eps alpha for alpha >= 0: exp(eps) * alpha (two roundings) where exp(eps) is finite, beyond that
    exp(eps + log alpha) (an error of about |eps + log alpha| ulps); 0 at alpha = 0 (no inf * 0 = NaN)."""
    alpha, epsilon = np.broadcast_arrays(np.asarray(alpha, dtype=float), np.asarray(epsilon, dtype=float))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        direct = np.exp(np.minimum(epsilon, _EXP_LIMIT)) * alpha
        logged = np.exp(epsilon + np.log(np.where(alpha > 0, alpha, 1.0)))
    return np.where(alpha > 0, np.where(epsilon < _EXP_LIMIT, direct, logged), 0.0)


def _one_minus_sum(first: ArrayLike, second: ArrayLike) -> np.ndarray:
    """1 - first - second for first in [0, 1] and second >= 0, with the rounding error of 1 - first carried
    (Fast2Sum: it is (1 - head) - first exactly), so where the result cancels (second close to 1 - first)
    it is rounded once, not after losing the digits of 1 - first."""
    head = 1.0 - np.asarray(first, dtype=float)
    carried = (1.0 - head) - first
    with np.errstate(invalid="ignore"):
        return (head - second) + carried


def eps_delta_tradeoff(alpha: ArrayLike, epsilon0: float, delta0: float) -> ArrayLike:
    """f_{eps,delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)) (GDP eq. (4)).

    1 - delta - alpha is formed with one rounding where it cancels (alpha near 1 - delta, _one_minus_sum).
    The steep piece 1 - delta - e^eps alpha near the kink alpha = (1 - delta) / (1 + e^eps) inherits the
    rounding of e^eps amplified by its condition number e^eps alpha / beta (about e^eps there): no
    double-precision evaluation does better (tests/core/test_kernel_accuracy.py states the rule).
    """
    alpha = np.asarray(alpha, dtype=float)
    steep = _one_minus_sum(delta0, _scaled(alpha, epsilon0))
    with np.errstate(under="ignore"):
        flat = np.exp(-np.asarray(epsilon0, dtype=float)) * _one_minus_sum(delta0, alpha)
    return as_output(np.maximum(0.0, np.maximum(steep, flat)))


def extend_to_negative(profile: ProfileFn, reverse_profile: ProfileFn | None = None) -> ProfileFn:
    """Extend a profile known for eps >= 0 to all real eps: delta(-t) = 1 - e^-t + e^-t delta_reverse(t).

    With delta(eps) = H_{e^eps}(Q || P) and delta_reverse(eps) = H_{e^eps}(P || Q), complementing the event S
    gives Q(S) - e^-t P(S) = 1 - e^-t + e^-t (P(S^c) - e^t Q(S^c)), hence the identity (the hockey-stick
    divergence; GDP paper Prop. 6 applied to f and f^-1). reverse_profile=None means symmetric (f = f^-1).
    """
    reverse = profile if reverse_profile is None else reverse_profile

    def extended(epsilon: ArrayLike) -> ArrayLike:
        epsilon = np.asarray(epsilon, dtype=float)
        t = np.abs(epsilon)
        negative = -np.expm1(-t) + np.exp(-t) * np.asarray(reverse(t), dtype=float)
        return as_output(np.where(epsilon >= 0, np.asarray(profile(t), dtype=float), negative))

    return extended


def eps_delta_profile(epsilon: ArrayLike, epsilon0: float, delta0: float) -> ArrayLike:
    """Privacy profile of f_{eps0,delta0} for all real eps (GDP paper eq. (4) with Prop. 6).

    For eps >= 0: delta(eps) = delta0 + (1 - delta0) max(0, e^eps0 - e^eps) / (1 + e^eps0), written as
    (1 - e^{eps - eps0})_+ / (1 + e^-eps0) so that large eps0 does not overflow; eps < 0 by
    `extend_to_negative` (f_{eps0,delta0} is symmetric).
    """

    def nonnegative(t: np.ndarray) -> np.ndarray:
        # t - eps0 is exact near the kink t = eps0 (Sterbenz); min(., 0) keeps expm1 from overflowing
        above = -np.expm1(np.minimum(t - epsilon0, 0.0))
        return delta0 + (1.0 - delta0) * above / (1.0 + np.exp(-epsilon0))

    return extend_to_negative(nonnegative)(epsilon)


def laplace_tradeoff(alpha: ArrayLike, epsilon0: float) -> ArrayLike:
    """T(Lap(0, b), Lap(sens, b)) with eps0 = sens / b (GDP paper Sec. 2.5, Prop. 7), by Neyman-Pearson:

    1 - e^eps0 alpha          for alpha < e^-eps0 / 2,
    e^-eps0 / (4 alpha)       for e^-eps0 / 2 <= alpha <= 1/2,
    e^-eps0 (1 - alpha)       for alpha > 1/2.

    Written with s = e^eps0 alpha (_scaled): the steep piece where 2 s < 1 (a switch that stays exact
    where e^-eps0 / 2 would be subnormal), then 1 / (4 s) (_quarter_over_scaled: neither e^eps0 alpha
    overflows nor e^-eps0 underflows for eps0 up to 1e3), and for alpha > 1/2 the middle piece at 1/2 times
    2 (1 - alpha) (exact), so the pieces meet monotonically.
    """
    alpha = np.asarray(alpha, dtype=float)
    scaled = _scaled(alpha, epsilon0)
    middle = np.minimum(_quarter_over_scaled(alpha, epsilon0), 0.5)  # <= 1/2 where it is used
    half = _quarter_over_scaled(0.5, epsilon0)  # e^-eps0 / 2
    with np.errstate(over="ignore"):
        beta = np.where(2.0 * scaled < 1.0, 1.0 - scaled, middle)
    return as_output(np.where(alpha > 0.5, half * (2.0 * (1.0 - alpha)), beta))


def _quarter_over_scaled(alpha: ArrayLike, epsilon: ArrayLike) -> np.ndarray:
    """1 / (4 e^eps alpha) for alpha > 0 (inf at 0), the same way as _scaled: 0.25 / (exp(eps) alpha) where
    exp(eps) is finite, 0.25 exp(-(eps + log alpha)) beyond, so it is monotone in alpha."""
    alpha, epsilon = np.broadcast_arrays(np.asarray(alpha, dtype=float), np.asarray(epsilon, dtype=float))
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        direct = 0.25 / (np.exp(np.minimum(epsilon, _EXP_LIMIT)) * alpha)
        logged = 0.25 * np.exp(-(epsilon + np.log(alpha)))
    return np.where(epsilon < _EXP_LIMIT, direct, logged)


def laplace_profile(epsilon: ArrayLike, epsilon0: float) -> ArrayLike:
    """Privacy profile of the Laplace trade-off for all real eps: max(0, 1 - e^{(eps - eps0)/2}) for eps >= 0.

    Derivation: on the middle piece f'(alpha) = -e^eps at alpha = e^{-(eps0 + eps)/2} / 2, where
    1 - f - e^eps alpha = 1 - e^{(eps - eps0)/2}; eps < 0 by `extend_to_negative` (symmetric).
    """
    return extend_to_negative(lambda t: -np.expm1(0.5 * np.minimum(t - epsilon0, 0.0)))(epsilon)


def inverse(grid: Grid) -> Grid:
    """f^-1(alpha) = inf{t in [0, 1] : f(t) <= alpha} (GDP paper eq. (3)) of the interpolant.

    The interpolant's inverse is the interpolant through the reflected knots (beta_i, alpha_i); among equal
    beta the smallest alpha is taken (the infimum), and f^-1 = 0 on [f(0), 1].
    """
    beta, first = np.unique(grid.beta, return_index=True)
    alpha = grid.alpha[first]
    if beta[-1] < 1.0:
        beta, alpha = np.append(beta, 1.0), np.append(alpha, 0.0)
    return Grid(beta, alpha)


def convexify(grid: Grid) -> Grid:
    """The greatest convex function below the grid: its biconjugate f** (lower convex hull of the knots)."""
    kept = lower_hull(grid.alpha, grid.beta, prefilter=True)
    return Grid(grid.alpha[kept], grid.beta[kept])


def _pointwise_min(first: Grid, second: Grid) -> Grid:
    """min(g, h) of two interpolants, exact: knots of both plus the points where the two cross."""
    knots = np.union1d(first.alpha, second.alpha)
    gap = first(knots) - second(knots)
    crossing = gap[:-1] * gap[1:] < 0
    left, right = gap[:-1][crossing], gap[1:][crossing]
    crossings = knots[:-1][crossing] + np.diff(knots)[crossing] * left / (left - right)
    knots = np.union1d(knots, crossings)
    return Grid(knots, np.minimum(first(knots), second(knots)))


def symmetrize(grid: Grid) -> Grid:
    """min(f, f^-1)**: the greatest symmetric trade-off function below f (GDP paper Sec. 4, Def. 6).

    This is the guarantee when f bounds one ordering of neighbours and f^-1 the other (add/remove
    directions); C_p applies it to f_p. (Prop. 2's max(f, f^-1) is for f holding in both orderings.)
    """
    return convexify(_pointwise_min(grid, inverse(grid)))


def _min_linear(x: np.ndarray, y: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """min_i (y_i + slope x_i) for each slope >= 0 (possibly inf), via the lower hull and searchsorted.

    On the hull the minimiser is the vertex where the edge slopes cross -slope; its neighbours are also
    evaluated so that rounding in the edge slopes cannot pick a wrong vertex.
    """
    kept = lower_hull(x, y, prefilter=True)
    hull_x, hull_y = x[kept], y[kept]
    slope = np.asarray(slope, dtype=float)
    edges = np.maximum.accumulate(np.diff(hull_y) / np.diff(hull_x))
    k = np.asarray(np.searchsorted(edges, -slope))
    candidates = np.clip(k[..., None] + np.array([-1, 0, 1]), 0, hull_x.size - 1)
    with np.errstate(invalid="ignore"):
        values = hull_y[candidates] + np.where(
            hull_x[candidates] == 0, 0.0, slope[..., None] * hull_x[candidates]
        )
    return np.min(values, axis=-1)


def profile_from_grid(grid: Grid, epsilon: ArrayLike, *, upper: bool = True) -> ArrayLike:
    """Rigorous bounds on delta(eps) = sup_alpha (1 - f(alpha) - e^eps alpha) (GDP paper Prop. 6), all eps.

    The grid holds the values of a non-increasing f at its knots. Lower bound: the sup over the knots.
    Upper bound (interval argument): on [a_i, a_{i+1}], f(alpha) >= f(a_{i+1}) and alpha >= a_i, so the
    sup is at most 1 - f(a_{i+1}) - e^eps a_i. Both are sups of linear functionals over finite point sets,
    evaluated exactly on the lower convex hull by binary search: O((n + m) log n). When the grid is the
    function itself (a piecewise-linear f), the lower bound is exact. Accurate up to floating-point
    rounding, about 1e-16 (1 + e^eps) absolute.
    """
    epsilon = np.asarray(epsilon, dtype=float)
    if upper:
        x, y = grid.alpha[:-1], grid.beta[1:]
    else:
        x, y = grid.alpha, grid.beta
    return as_output(np.clip(1.0 - _min_linear(x, y, np.exp(epsilon)), 0.0, 1.0))


def tradeoff_from_profile(profile: ProfileFn, alpha: ArrayLike, epsilon_grid: np.ndarray) -> ArrayLike:
    """beta(alpha) = max(0, max_j (1 - delta(eps_j) - e^{eps_j} alpha)) (GDP paper Prop. 5/6).

    Each eps_j gives a supporting line of f, so this is a lower bound on f (the safe side), tight as the
    grid of (finite) eps_j refines; include negative eps_j for asymmetric f. If the profile is an upper
    bound on the true one, the result is still a lower bound on f. Exact broadcasting in chunks.
    """
    epsilon_grid = np.asarray(epsilon_grid, dtype=float).ravel()
    if not np.all(np.isfinite(epsilon_grid)):
        raise InputError("the epsilon grid must be finite")
    delta = np.asarray(profile(epsilon_grid), dtype=float)
    slope = np.exp(epsilon_grid)
    flat = np.asarray(alpha, dtype=float).ravel()
    chunk = max(1, _BROADCAST_BUDGET // epsilon_grid.size)
    beta = np.concatenate(
        [
            np.max(1.0 - delta - slope * flat[start : start + chunk, None], axis=1, initial=0.0)
            for start in range(0, flat.size, chunk)
        ]
    )
    return as_output(beta.reshape(np.shape(alpha)))


def group_tradeoff(tradeoff: TradeoffFn, alpha: ArrayLike, group_size: int) -> ArrayLike:
    """Group privacy 1 - (1 - f)^{o k}(alpha): k-fold iteration of alpha -> 1 - f(alpha) (GDP paper Thm 3).

    For f = G_mu this is G_{k mu}, since 1 - G_mu(alpha) = Phi(Phi^-1(alpha) + mu).
    """
    if int(group_size) != group_size or group_size < 1:
        raise InputError(f"group size must be a positive integer, got {group_size}")
    level = np.asarray(alpha, dtype=float)
    for _ in range(int(group_size)):
        level = np.clip(1.0 - np.asarray(tradeoff(level), dtype=float), level, 1.0)
    return as_output(1.0 - level)


__all__ = [
    "Grid",
    "ProfileFn",
    "TradeoffFn",
    "alpha_grid",
    "convexify",
    "eps_delta_profile",
    "eps_delta_tradeoff",
    "extend_to_negative",
    "grid_from_tradeoff",
    "group_tradeoff",
    "inverse",
    "laplace_profile",
    "laplace_tradeoff",
    "profile_from_grid",
    "symmetrize",
    "tradeoff_from_profile",
]


def epsilon_from_profile(profile: ProfileFn, delta: ArrayLike, *, ceiling: float = 1e4) -> ArrayLike:
    """The smallest eps >= 0 with profile(eps) <= delta, for a non-increasing privacy profile.

    Vectorized bisection to the last ulp that returns the upper end of the final bracket, so
    profile(eps) <= delta holds at the returned eps (a valid (eps, delta) guarantee). eps = inf when even
    profile(ceiling) > delta (e.g. an (eps0, delta0) guarantee asked for a delta below delta0).
    """
    delta = np.asarray(delta, dtype=float)
    with np.errstate(over="ignore"):
        return as_output(_bisect_profile(profile, delta, ceiling))


_BISECTIONS = 1100
"""Halvings that take any float bracket down to adjacent floats (the exponent range is about 2100)."""


def _bisect_profile(profile: ProfileFn, delta: np.ndarray, ceiling: float) -> np.ndarray:
    lo = np.zeros_like(delta)
    hi = np.ones_like(delta)
    while True:
        short = (profile(hi) > delta) & (hi < ceiling)
        if not np.any(short):
            break
        hi = np.where(short, np.minimum(2.0 * hi, ceiling), hi)
    unreachable = profile(hi) > delta
    done = profile(lo) <= delta
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if np.all((mid <= lo) | (mid >= hi)):
            break
        below = profile(mid) <= delta
        hi = np.where(below, mid, hi)
        lo = np.where(below, lo, mid)
    else:
        raise ComputationError(f"epsilon from a profile: not converged in {_BISECTIONS} bisections")
    return np.where(done, 0.0, np.where(unreachable, np.inf, hi))
