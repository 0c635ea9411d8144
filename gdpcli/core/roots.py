"""Bracketing root finders shared by the conversions, calibration and budgets.

Bracket first, then a robust method: every solver
here keeps a bracket [lo, hi] that provably contains the root and falls back to
bisection whenever a Newton step would leave it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from gdpcli.errors import ComputationError

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
    start: Vector | None = None,
) -> Vector:
    """Safeguarded Newton on brackets [lo, hi] (sign(f(lo)) != sign(f(hi))), evaluating only unsolved points.

    `start` is the first point (clipped into the bracket), for callers with a good guess; by default the
    bracket's midpoint.

    terms(x, index) returns (f, f') at the points x of the flattened positions `index`. A Newton step that
    leaves the current bracket (or is not finite) is replaced by bisection, so convergence is guaranteed
    and, near the root, quadratic (bisection alone halves a float bracket to its last ulp in ~1100 steps,
    geometric midpoints in far fewer); ComputationError if maxiter is exhausted. f may increase or decrease
    in each element. An element stops when its
    bracket is narrow or its last Newton step was below rtol relative (Newton approaches from one side,
    so the bracket alone would shrink slowly). Solved elements leave the working set, so a result does not
    depend on the other elements of the batch (vectorized == scalar) and large batches cost what their
    hardest elements need, not maxiter times the batch.
    """
    lo, hi = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    shape = lo.shape
    lo, hi = lo.ravel().copy(), hi.ravel().copy()
    sign_lo = np.sign(terms(lo, np.arange(lo.size))[0])
    first = _midpoint(lo, hi) if start is None else np.clip(np.ravel(np.broadcast_to(start, shape)), lo, hi)
    x = np.where(sign_lo == 0, lo, first)  # a bracket end that is a root is the answer
    index = np.flatnonzero(sign_lo != 0)
    last_move = hi - lo  # the last move of each point: a Newton step may be at most half of it
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
        # inside the bracket and at most half the move before (Numerical Recipes' rtsafe): where rounding
        # noise in f makes Newton wander without converging, bisection takes over
        inside = np.isfinite(step) & (step > la) & (step < ha) & (np.abs(step - xa) <= 0.5 * last_move[index])
        # a step below rtol is convergence even where it lands on a bracket end (it often lands on xa)
        tiny_step = np.isfinite(step) & (np.abs(step - xa) <= rtol * np.abs(xa))
        narrow = ha - la <= rtol * np.maximum(np.abs(la), np.abs(ha))
        x[index] = np.where(at_root, xa, np.where(inside, step, np.where(tiny_step, xa, _midpoint(la, ha))))
        last_move[index] = np.abs(x[index] - xa)
        lo[index], hi[index] = la, ha
        index = index[~(at_root | tiny_step | narrow)]
    if index.size:
        raise ComputationError(f"Newton: {index.size} root(s) not found within {maxiter} iterations")
    return x.reshape(shape)


def _midpoint(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Bisection point: geometric for positive brackets spanning more than a factor 4 (so a bracket
    [1e-300, 2] takes tens of steps, not a thousand), arithmetic otherwise."""
    with np.errstate(invalid="ignore", divide="ignore"):
        geometric = np.exp(0.5 * (np.log(lo) + np.log(hi)))
    wide = (lo > 0) & (hi > 4 * lo)
    return np.where(wide, geometric, 0.5 * (lo + hi))


class SearchLimitReached(ComputationError):
    """largest_integer_where's condition still holds at its limit."""


def largest_integer_where(
    holds: Callable[[int], bool], *, guess: int = 1, step: float = 1.0, limit: int = 10**12
) -> int:
    """The largest n in [0, limit] with holds(n), for a predicate true up to some n and false after (0 when
    holds(1) is false already).

    From the guess (clipped to [1, limit]) the search moves geometrically, by relative steps s, 2 s, 4 s,
    ... (at least one integer each), until the boundary is bracketed, then bisects on integers: about
    2 log2(relative error of the guess / s) + log2(s n) + 2 evaluations. SearchLimitReached when
    holds(limit) is still true: the search does not answer "at least the limit" silently.
    """
    good, bad = _integer_bracket(holds, min(max(guess, 1), limit), step, limit)
    while bad - good > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if holds(middle) else (good, middle)
    return good


def largest_integer_at_most(
    value: Callable[[int], float], target: float, *, guess: int = 1, step: float = 1.0, limit: int = 10**12
) -> int:
    """The largest n in [0, limit] with value(n) <= target, for a value that grows with n (up to jitter:
    the answer n then has value(n) <= target < value(n + 1)), as largest_integer_where finds it but with
    fewer evaluations where value is smooth in n: the bracket is narrowed by interpolation (Illinois
    variant of regula falsi: an end kept twice has its excess halved, so neither end stalls), by bisection
    whenever an interpolation step failed to halve it. A step budget costs a PLD composition an
    evaluation: from a 0.2 % bracket of 8e6 steps bisection takes 14 evaluations, interpolation about 5.
    """
    known: dict[int, float] = {}

    def at(n: int) -> float:
        if n not in known:
            known[n] = float(value(n))
        return known[n]

    good, bad = _integer_bracket(lambda n: at(n) <= target, min(max(guess, 1), limit), step, limit)
    if good == 0:
        return 0
    low, high = at(good) - target, at(bad) - target  # excesses: low <= 0 < high
    moved, interpolate = 0, math.isfinite(high)  # the end replaced last: +1 good, -1 bad
    while bad - good > 1:
        width = bad - good
        middle = good + (round(-low / (high - low) * width) if interpolate else width // 2)
        middle = min(max(middle, good + 1), bad - 1)
        excess = at(middle) - target
        if excess <= 0:
            good, low = middle, excess
            high *= 0.5 if moved == 1 else 1.0  # Illinois: bad kept twice
            moved = 1
        else:
            bad, high = middle, excess
            low *= 0.5 if moved == -1 else 1.0  # Illinois: good kept twice
            moved = -1
        interpolate = 2 * (bad - good) <= width and math.isfinite(high) and high > low
    return good


def _integer_bracket(holds: Callable[[int], bool], guess: int, step: float, limit: int) -> tuple[int, int]:
    """(good, bad) with holds(good) (or good = 0) and not holds(bad), bad = good + 1 at the end."""
    if holds(guess):
        good = guess
        while good < limit:
            candidate = min(max(int(good * (1 + step)), good + 1), limit)
            if not holds(candidate):
                return good, candidate
            good, step = candidate, 2 * step
        raise SearchLimitReached(f"the condition still holds at the search limit {limit:.3g}")
    bad = guess
    while bad > 1:
        candidate = max(min(int(bad / (1 + step)), bad - 1), 1)
        if holds(candidate):
            return candidate, bad
        bad, step = candidate, 2 * step
    return 0, 1
