"""Safe-side rounding as a checked contract.

A function that promises a rounding direction (gdp.epsilon: "delta(eps; mu) <= delta holds at the returned
eps"; gdp.mu: "... at the returned mu"; a calibrated noise: "the target is met") computes an approximate
root and then calls `to_safe_side` with the defining inequality. The helper evaluates the inequality in
floating point, exactly as a user who checks the promise would, and steps every element that fails it
toward the safe side, one float at a time and then in doubling strides, until it holds; it returns the
nearest float found at which the inequality was *seen* to hold. It never trusts an error estimate: a result
that it returns has passed the check, and one that cannot pass raises ComputationError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from gdpcli.errors import ComputationError

Holds = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""holds(candidates, index) -> bool array: the defining inequality at `candidates`, the values proposed for
the flat positions `index` of the result (so the check can look up each element's own parameters)."""

Direction = Literal["up", "down"]

_SIGN = np.uint64(2**63)
_ALL = np.uint64(2**64 - 1)
_KEY_OF_INF = np.uint64(0x7FF0000000000000) | _SIGN
_KEY_OF_MINUS_INF = ~np.uint64(0xFFF0000000000000) & _ALL
_MAX_DOUBLINGS = 64  # strides up to 2^63 floats: the whole line


def _keys(x: np.ndarray) -> np.ndarray:
    """Floats as uint64 keys that order like the floats and step by one between neighbouring floats
    (-0.0 and +0.0 are neighbours)."""
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
    return np.where(bits & _SIGN, ~bits & _ALL, bits | _SIGN)


def _floats(keys: np.ndarray) -> np.ndarray:
    """The inverse of _keys."""
    keys = np.asarray(keys, dtype=np.uint64)
    return np.where(keys & _SIGN, keys & ~_SIGN & _ALL, ~keys & _ALL).view(np.float64)


def _advance(start: np.ndarray, offset: np.ndarray, up: bool) -> np.ndarray:
    """The floats `offset` keys above (up) or below `start`, stopping at +-inf."""
    offset = np.asarray(offset, dtype=np.uint64)
    if up:
        return _floats(start + np.minimum(offset, _KEY_OF_INF - start))
    return _floats(start - np.minimum(offset, start - _KEY_OF_MINUS_INF))


def to_safe_side(x: np.ndarray, holds: Holds, direction: Direction, *, what: str) -> np.ndarray:
    """x with every element moved `direction` ("up" or "down") to the nearest float at which holds is True.

    Elements where holds(x) is already True are returned unchanged. For the others the helper gallops (1,
    2, 4, ... floats) until holds is True, then bisects between the last failing and the first passing
    float; it returns the passing end, so every returned value was checked. The inequality need not be
    monotone at the level of single floats (rounding noise): only checked values are returned. Raises
    ComputationError naming `what` when an element is NaN or when the inequality fails even at +-inf.
    """
    x = np.array(x, dtype=float)  # a copy: the caller's array is not changed
    flat = x.reshape(-1)
    if np.any(np.isnan(flat)):
        raise ComputationError(f"{what}: the computed value is NaN", "the input may be out of range")
    failing = np.flatnonzero(~np.asarray(holds(flat, np.arange(flat.size)), dtype=bool))
    if failing.size == 0:
        return x
    up = direction == "up"
    start = _keys(flat[failing])
    good = np.zeros(failing.size, dtype=np.uint64)  # offsets (in floats) seen to pass, or not yet
    bad = np.zeros(failing.size, dtype=np.uint64)  # offsets seen to fail (0: the start itself)
    open_ = np.arange(failing.size)
    for doubling in range(_MAX_DOUBLINGS):
        stride = np.uint64(2**doubling)
        candidate = _advance(start[open_], stride, up)
        ok = np.asarray(holds(candidate, failing[open_]), dtype=bool)
        good[open_[ok]] = stride
        bad[open_[~ok]] = stride
        if np.any(np.isinf(candidate) & ~ok):
            raise ComputationError(
                f"{what}: no float on the safe side satisfies the defining inequality",
                "this is a bug in gdpcli; please report the input",
            )
        open_ = open_[~ok]
        if open_.size == 0:
            break
    active = np.flatnonzero(good - bad > 1)
    while active.size:
        middle = bad[active] + (good[active] - bad[active]) // np.uint64(2)
        ok = np.asarray(holds(_advance(start[active], middle, up), failing[active]), dtype=bool)
        good[active[ok]] = middle[ok]
        bad[active[~ok]] = middle[~ok]
        active = active[good[active] - bad[active] > 1]
    flat[failing] = _advance(start, good, up)
    return x


def elementwise(check: Callable[..., np.ndarray], *parameters: np.ndarray) -> Holds:
    """A Holds from check(candidate, *parameters) over broadcast parameter arrays (raveled here)."""
    flat = [np.ravel(p) for p in np.broadcast_arrays(*parameters)]

    def holds(candidate: np.ndarray, index: np.ndarray) -> np.ndarray:
        return check(candidate, *(p[index] for p in flat))

    return holds


__all__ = ["Direction", "Holds", "elementwise", "to_safe_side"]
