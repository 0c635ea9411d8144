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

    f and fprime take and return arrays of the brackets' shape; see newton_on_active for the method. Each
    call evaluates every element (elements already solved are held at their root), so callers that can
    evaluate a subset should use newton_on_active directly, which is faster on large arrays.
    """
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    shape = lo.shape
    point = _midpoint(lo, hi).ravel().copy()

    def terms(x: Vector, index: Vector) -> tuple[Vector, Vector]:
        point[index] = x
        full = point.reshape(shape)
        return np.asarray(f(full)).ravel()[index], np.asarray(fprime(full)).ravel()[index]

    return newton_on_active(terms, lo, hi, rtol=rtol, maxiter=maxiter)


def newton_on_active(
    terms: Callable[[Vector, Vector], tuple[Vector, Vector]],
    lo: Vector,
    hi: Vector,
    *,
    rtol: float = 4e-16,
    maxiter: int = 200,
) -> Vector:
    """Safeguarded Newton on brackets [lo, hi] (sign(f(lo)) != sign(f(hi))), evaluating only unsolved points.

    terms(x, index) returns (f, f') at the points x of the flattened positions `index`. A Newton step that
    leaves the current bracket (or is not finite) is replaced by bisection, so convergence is guaranteed
    and, near the root, quadratic; f may increase or decrease in each element. An element stops when its
    bracket is narrow or its last Newton step was below rtol relative (Newton approaches from one side,
    so the bracket alone would shrink slowly). Solved elements leave the working set, so a result does not
    depend on the other elements of the batch (vectorized == scalar) and large batches cost what their
    hardest elements need, not maxiter times the batch.
    """
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    shape = lo.shape
    lo, hi = lo.ravel().copy(), hi.ravel().copy()
    f_lo, slope_lo = terms(lo, np.arange(lo.size))
    sign_lo = np.sign(f_lo)
    with np.errstate(divide="ignore", invalid="ignore"):
        first = lo - f_lo / slope_lo  # the first point: Newton from lo where it stays inside, else bisection
    first = np.where(np.isfinite(first) & (first > lo) & (first < hi), first, _midpoint(lo, hi))
    x = np.where(sign_lo == 0, lo, first)  # a bracket end that is a root is the answer
    index = np.flatnonzero(sign_lo != 0)
    for _ in range(maxiter):
        if index.size == 0:
            break
        xa, la, ha = x[index], lo[index], hi[index]
        fx, slope = terms(xa, index)
        at_root = fx == 0
        same_as_lo = np.sign(fx) == sign_lo[index]
        la = np.where(at_root | same_as_lo, xa, la)
        ha = np.where(at_root | ~same_as_lo, xa, ha)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = xa - fx / slope
        inside = np.isfinite(step) & (step > la) & (step < ha)
        # a step below rtol is convergence even where it lands on a bracket end (it often lands on xa)
        tiny_step = np.isfinite(step) & (np.abs(step - xa) <= rtol * np.abs(xa))
        narrow = ha - la <= rtol * np.maximum(np.abs(la), np.abs(ha))
        x[index] = np.where(at_root, xa, np.where(inside, step, np.where(tiny_step, xa, _midpoint(la, ha))))
        lo[index], hi[index] = la, ha
        index = index[~(at_root | tiny_step | narrow)]
    return x.reshape(shape)


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
