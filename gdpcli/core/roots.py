"""Bracketing root finders shared by the conversions, calibration and budgets.

"Bracket first, then a robust method" (DESIGN.md, numerics rules): every solver
here keeps a bracket [lo, hi] that provably contains the root and falls back to
bisection whenever a Newton step would leave it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Vector = np.ndarray


def bracketed_newton(
    f: Callable[[Vector], Vector],
    fprime: Callable[[Vector], Vector],
    lo: Vector,
    hi: Vector,
    *,
    rtol: float = 4e-16,
    maxiter: int = 200,
) -> Vector:
    """Solve f(x) = 0 elementwise on brackets [lo, hi] with sign(f(lo)) != sign(f(hi)).

    Safeguarded Newton: a step that leaves the current bracket (or is not
    finite) is replaced by bisection, so convergence is guaranteed and, near
    the root, quadratic. f may be increasing or decreasing in each element.
    Each element stops when its bracket is narrow or its last Newton step was
    below rtol relative (Newton approaches from one side, so the bracket alone
    would shrink slowly); stopped elements are frozen, so a result does not
    depend on the other elements of the batch (vectorized == scalar).
    """
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    lo, hi = lo.copy(), hi.copy()
    sign_lo = np.sign(f(lo))
    x = _midpoint(lo, hi)
    done = np.zeros(x.shape, dtype=bool)
    for _ in range(maxiter):
        fx = f(x)
        at_root = fx == 0
        same_as_lo = np.sign(fx) == sign_lo
        lo = np.where(done, lo, np.where(at_root, x, np.where(same_as_lo, x, lo)))
        hi = np.where(done, hi, np.where(at_root, x, np.where(same_as_lo, hi, x)))
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - fx / fprime(x)
        inside = np.isfinite(step) & (step > lo) & (step < hi)
        tiny_step = inside & (np.abs(step - x) <= rtol * np.abs(x))
        narrow = hi - lo <= rtol * np.maximum(np.abs(lo), np.abs(hi))
        x = np.where(done, x, np.where(inside, step, _midpoint(lo, hi)))
        done |= at_root | tiny_step | narrow
        if np.all(done):
            break
    return x


def _midpoint(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Bisection point: geometric for positive brackets spanning more than a factor 4 (so a bracket
    [1e-300, 2] takes tens of steps, not a thousand), arithmetic otherwise."""
    with np.errstate(invalid="ignore", divide="ignore"):
        geometric = np.exp(0.5 * (np.log(lo) + np.log(hi)))
    wide = (lo > 0) & (hi > 4 * lo)
    return np.where(wide, geometric, 0.5 * (lo + hi))


def largest_integer_where(holds: Callable[[int], bool], start: int = 1, limit: int = 10**12) -> int:
    """The largest n >= start - 1 with holds(n) true, for a predicate true up to some n and false after.

    Exponential search for a bracket, then integer bisection. Returns start - 1
    when holds(start) is already false, and raises OverflowError when holds(limit)
    is still true.
    """
    if not holds(start):
        return start - 1
    good, step = start, 1
    while True:
        candidate = min(start + step, limit)
        if not holds(candidate):
            bad = candidate
            break
        good = candidate
        if candidate == limit:
            raise OverflowError(f"the predicate still holds at the search limit {limit}")
        step *= 2
    while bad - good > 1:
        mid = (good + bad) // 2
        if holds(mid):
            good = mid
        else:
            bad = mid
    return good
