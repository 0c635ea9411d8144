"""The exact partial order of (eps, delta)-DP conditions and the refinements built on it.

GDPT paper ("Gaussian Differential Privacy Transformation: from identification to application"),
Sec. 3 (Thm 3.1, Cor. 3.1, Cor. 3.2), Sec. 5.2 and Appendices B and C.

Throughout, c(eps0, eps) = (e^eps0 - e^eps)_+ / (1 + e^eps0) is the extra delta that moving from eps0
down to eps costs: (eps0, delta0)-DP implies (eps, delta)-DP iff delta >= delta0 + (1 - delta0) c.
implied_delta, a closed form, is rounded up by a relative 1e-14 (far more than the few ulps of rounding
error in its formula); the inverses (largest_epsilon0, weakest_delta) are moved to the nearest float at
which implied_delta confirms them (gdpcli.core.rounding).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.rounding import elementwise, to_safe_side
from gdpcli.errors import InputError

_SAFETY = 1e-14
_DEFAULT_GRID = np.concatenate([np.linspace(0.0, 20.0, 8001), np.geomspace(20.0, 1000.0, 801)[1:]])


def _shortfall(epsilon0: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    """c(eps0, eps) = (e^eps0 - e^eps)_+ / (1 + e^eps0), written as -expm1(eps - eps0) / (1 + e^-eps0).

    That form is exact for large eps0 (no overflow) and for eps close to eps0 (no cancellation).
    """
    return -np.expm1(np.minimum(epsilon - epsilon0, 0.0)) / (1.0 + np.exp(-epsilon0))


def implied_delta(epsilon0: ArrayLike, delta0: ArrayLike, epsilon: ArrayLike) -> ArrayLike:
    """The smallest delta with (eps0, delta0)-DP => (eps, delta)-DP, GDPT Thm 3.1 and Cor. 3.2 eq. (1):

        delta = delta0 + (1 - delta0) (e^eps0 - e^eps)_+ / (1 + e^eps0).

    As a function of eps this is the privacy profile of the tight (eps0, delta0) pair (the worst
    (eps0, delta0)-DP mechanism of the proof of Thm 3.1); delta0 = 0 gives pure eps0-DP. Rounded up
    where eps < eps0 (for eps >= eps0 it is exactly delta0).
    """
    epsilon0, delta0, epsilon = (np.asarray(v, dtype=float) for v in (epsilon0, delta0, epsilon))
    shortfall = _shortfall(epsilon0, epsilon)
    value = delta0 + (1.0 - delta0) * shortfall
    return as_output(np.minimum(np.where(shortfall > 0.0, value * (1.0 + _SAFETY), value), 1.0))


def implies(
    epsilon0: ArrayLike, delta0: ArrayLike, epsilon: ArrayLike, delta: ArrayLike
) -> bool | np.ndarray:
    """Whether (eps0, delta0)-DP implies (eps, delta)-DP (GDPT Thm 3.1; conservative when borderline)."""
    holds = np.asarray(delta, dtype=float) >= implied_delta(epsilon0, delta0, epsilon)
    return bool(holds) if np.ndim(holds) == 0 else holds


def largest_epsilon0(epsilon: ArrayLike, delta: ArrayLike) -> ArrayLike:
    """The largest eps0 at which some (eps0, delta0)-DP condition implies (eps, delta)-DP (GDPT Cor. 3.1).

    It is the pure-DP one, delta0 = 0: c(eps0, eps) = delta gives eps0 = log((delta + e^eps) / (1 - delta)),
    moved down to the nearest float at which implied_delta(eps0, 0, eps) <= delta holds as computed.
    """
    epsilon, delta = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(delta, dtype=float))

    def implied(epsilon0: np.ndarray, eps: np.ndarray, target: np.ndarray) -> np.ndarray:
        return np.asarray(implied_delta(epsilon0, 0.0, eps)) <= target

    start = np.logaddexp(np.log(delta), epsilon) - np.log1p(-delta)
    return as_output(to_safe_side(start, elementwise(implied, epsilon, delta), "down", what="largest eps0"))


def weakest_delta(epsilon: ArrayLike, delta: ArrayLike, epsilon0: ArrayLike) -> ArrayLike:
    """The largest delta0 with (eps0, delta0)-DP => (eps, delta)-DP, GDPT Cor. 3.1 solved for delta0:

        delta0 = (delta - c) / (1 - c),   c = (e^eps0 - e^eps)_+ / (1 + e^eps0),

    for eps <= eps0 <= largest_epsilon0(eps, delta) (beyond that no delta0 >= 0 works). Moved down to the
    nearest float at which implies(eps0, delta0, eps, delta) holds as computed (with the upward rounding
    of implied_delta), and never below 0.
    """
    epsilon, delta, epsilon0 = np.broadcast_arrays(
        *(np.asarray(v, dtype=float) for v in (epsilon, delta, epsilon0))
    )
    shortfall = _shortfall(epsilon0, epsilon)
    if np.any(shortfall > delta * (1.0 + 1e-12)) or np.any(epsilon0 < epsilon):
        raise InputError(
            "no (eps0, delta0) condition at this eps0 implies the target",
            "need eps <= eps0 <= log((delta + e^eps) / (1 - delta))",
        )

    def implied(delta0: np.ndarray, eps0: np.ndarray, eps: np.ndarray, target: np.ndarray) -> np.ndarray:
        return (delta0 <= 0.0) | (np.asarray(implied_delta(eps0, delta0, eps)) <= target)

    start = np.maximum((delta - shortfall) / (1.0 - shortfall), 0.0)
    rounded = to_safe_side(
        start, elementwise(implied, epsilon0, epsilon, delta), "down", what="weakest delta0"
    )
    return as_output(np.maximum(rounded, 0.0))


def _derivative(func: Callable[[np.ndarray], np.ndarray], x: float, step: float) -> float:
    """func'(x) by Richardson-extrapolated central differences (error O(step^4) + rounding / step)."""
    offsets = np.array([-step, step, -0.5 * step, 0.5 * step])
    values = func(x + offsets)
    coarse = (values[1] - values[0]) / (2.0 * step)
    fine = (values[3] - values[2]) / step
    return float((4.0 * fine - coarse) / 3.0)


def local_minimizers(func: Callable[[np.ndarray], np.ndarray], grid: np.ndarray) -> np.ndarray:
    """The interior local minima of a vectorized 1-D function, located on a grid and polished.

    A grid point below its left neighbour and not above its right one brackets a minimum in the two
    cells around it; there the root of the (Richardson finite-difference) derivative is found with
    Brent's method, to about 1e-12 for smooth functions. A kink (no sign change) keeps the grid point.
    """
    values = func(grid)
    values = np.where(np.isfinite(values), values, np.inf)
    inner = np.flatnonzero((values[1:-1] < values[:-2]) & (values[1:-1] <= values[2:])) + 1
    minimizers = []
    for k in inner:
        lo, hi = grid[k - 1], grid[k + 1]
        step = min(1e-3 * max(1.0, abs(grid[k])), 0.25 * (hi - lo))

        def slope(x: float, step: float = step) -> float:
            return _derivative(func, x, step)

        a, b = lo + step, hi - step
        from scipy.optimize import brentq

        polished = brentq(slope, a, b, xtol=1e-15, rtol=1e-15) if slope(a) < 0 < slope(b) else grid[k]
        minimizers.append(polished if func(np.array([polished]))[0] <= values[k] else grid[k])
    return np.array(minimizers, dtype=float)


def tangent_points(
    delta_naive: Callable[[np.ndarray], np.ndarray], grid: np.ndarray = _DEFAULT_GRID
) -> tuple[np.ndarray, np.ndarray]:
    """The tangent points (eps_k, delta_naive(eps_k)) of the profile refinement, GDPT App. B.

    A family of guarantees (eps0, delta_naive(eps0)) (e.g. from inverting sigma = f(eps, delta)) implies
    delta(eps) <= g(eps, eps0) = implied_delta(eps0, delta_naive(eps0), eps) for every eps0 >= eps. With
    s = e^eps0, d = delta_naive(eps0): dg/deps0 = (1 + e^eps) / (1 + s)^2 [d'(1 + s) + (1 - d) s], whose
    sign does not depend on eps, so g(eps, .) has the same local minimizers eps_k for every eps: they are
    the minimizers of g(0, .), searched on `grid`.
    """

    def bound_at_zero(epsilon0: np.ndarray) -> np.ndarray:
        naive = np.clip(delta_naive(epsilon0), 0.0, 1.0)
        return naive + (1.0 - naive) * _shortfall(epsilon0, np.zeros_like(epsilon0))

    epsilon_k = local_minimizers(bound_at_zero, np.asarray(grid, dtype=float))
    delta_k = np.clip(np.asarray(delta_naive(epsilon_k), dtype=float), 0.0, 1.0)
    return epsilon_k, delta_k


def tangent_bound(epsilon: ArrayLike, tangent_epsilon: np.ndarray, tangent_delta: np.ndarray) -> ArrayLike:
    """min over tangent points with eps_k >= eps of implied_delta(eps_k, delta_k, eps); 1 if none (App. B)."""
    epsilon = np.asarray(epsilon, dtype=float)
    flat = epsilon.reshape(1, -1)
    pairs = implied_delta(tangent_epsilon[:, None], tangent_delta[:, None], flat)
    pairs = np.where(tangent_epsilon[:, None] >= flat, pairs, 1.0)
    return as_output(pairs.min(axis=0, initial=1.0).reshape(epsilon.shape))


@dataclass(frozen=True)
class NoiseRefinement:
    """Utility refinement of a noise calibration sigma = f(eps, delta) for a target (E, D) (GDPT Sec. 5.2).

    (epsilon0, delta0)-DP implies the target, so the noise sigma = f(epsilon0, delta0) meets it too.
    """

    naive_sigma: float
    sigma: float
    epsilon0: float
    delta0: float


def refine_noise(
    noise: Callable[[np.ndarray, np.ndarray], np.ndarray], epsilon: float, delta: float, grid_size: int = 4001
) -> NoiseRefinement:
    """The smallest sigma = f(eps0, delta0) over the conditions (eps0, delta0) that imply (E, D)-DP.

    GDPT Sec. 5.2 and App. C: sigma = min_{eps0 in [E, eps_max)} f(eps0, weakest_delta(E, D, eps0)),
    eps_max = largest_epsilon0(E, D); f must be non-increasing in delta, which makes the weakest delta0
    at each eps0 the best one. `noise` is vectorized. Searched on a grid of `grid_size` points and
    polished; the result never exceeds the naive f(E, D) and (epsilon0, delta0) always implies (E, D).
    """
    if not (epsilon >= 0.0 and 0.0 < delta < 1.0):
        raise InputError(
            f"invalid target (epsilon={epsilon}, delta={delta})", "need epsilon >= 0, 0 < delta < 1"
        )
    upper = float(largest_epsilon0(epsilon, delta))

    def refined_sigma(epsilon0: np.ndarray) -> np.ndarray:
        epsilon0 = np.clip(epsilon0, epsilon, upper)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.asarray(noise(epsilon0, weakest_delta(epsilon, delta, epsilon0)), dtype=float)

    naive_sigma = float(noise(np.array([epsilon]), np.array([delta]))[0])
    candidates = np.concatenate(
        [[epsilon], local_minimizers(refined_sigma, np.linspace(epsilon, upper, grid_size))]
    )
    sigmas = refined_sigma(candidates)
    sigmas = np.where(np.isfinite(sigmas), sigmas, np.inf)
    best = int(np.argmin(sigmas))
    if best == 0 or not sigmas[best] < naive_sigma:
        return NoiseRefinement(naive_sigma, naive_sigma, float(epsilon), float(delta))
    epsilon0 = float(candidates[best])
    return NoiseRefinement(
        naive_sigma, float(sigmas[best]), epsilon0, float(weakest_delta(epsilon, delta, epsilon0))
    )
