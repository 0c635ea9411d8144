"""The lower convex hull of points sorted by x, the one implementation behind the biconjugate f** of a
trade-off grid (core.tradeoff) and the convex privacy profiles of the PLD discretization (core.pld)."""

from __future__ import annotations

import numpy as np

from gdpcli.errors import ComputationError


def lower_hull(x: np.ndarray, y: np.ndarray, *, prefilter: bool = False) -> np.ndarray:
    """Indices of the vertices of the lower convex hull of (x_i, y_i), x strictly increasing; both ends
    are always kept.

    Vectorized passes drop points on or above the chord of their neighbours (never a hull vertex; never two
    neighbours in one pass: _every_other) until the chain turns left everywhere, which for x-sorted points
    makes it the lower hull; after _PASSES of them Andrew's monotone chain finishes the rest (a dent that
    cascades would otherwise cost one pass over all points per point it removes). Exact up to rounding in
    the local cross products. `prefilter` first narrows the points to Qhull's candidates, which saves
    passes on long grids whose hull has few vertices.
    """
    kept = _qhull_candidates(x, y) if prefilter else np.arange(x.size)
    for _ in range(_PASSES):
        if kept.size <= 2:
            return kept
        x0, x1, x2 = x[kept[:-2]], x[kept[1:-1]], x[kept[2:]]
        y0, y1, y2 = y[kept[:-2]], y[kept[1:-1]], y[kept[2:]]
        above = (x1 - x0) * (y2 - y0) - (y1 - y0) * (x2 - x0) <= 0
        if not np.any(above):
            return kept
        kept = kept[np.concatenate(([True], ~_every_other(above), [True]))]
    return kept[_monotone_chain(x[kept].tolist(), y[kept].tolist())]


_PASSES = 8  # vectorized passes before the sequential chain: a dent that cascades costs a pass per point


def _every_other(flags: np.ndarray) -> np.ndarray:
    """The flags with no two neighbours set: the first, third, ... of each run of set flags.

    A pass removes only points whose two neighbours stay, so each removal rests on a chord that is still
    there. Removing neighbours together is wrong in floating point: of two points a few ulps apart in x
    (the Neyman-Pearson vertices of two directions at one atom), each can test as above the chord through
    the other, and both went, taking a hull vertex with them (a pessimistic PLD's trade-off function then
    rose 4e-3 above the truth).
    """
    index = np.arange(flags.size)
    starts = np.where(flags & ~np.concatenate(([False], flags[:-1])), index, 0)
    return flags & ((index - np.maximum.accumulate(starts)) % 2 == 0)


def _monotone_chain(x: list[float], y: list[float]) -> list[int]:
    """Andrew's monotone chain, lower half: O(n), for what the vectorized passes leave."""
    chain: list[int] = []
    for index in range(len(x)):
        while len(chain) >= 2:
            a, b = chain[-2], chain[-1]
            if (x[b] - x[a]) * (y[index] - y[a]) - (y[b] - y[a]) * (x[index] - x[a]) > 0:
                break
            chain.pop()
        chain.append(index)
    return chain


def _qhull_candidates(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices that contain every lower-hull vertex: Qhull's lower hull plus all points below it.

    Two points far above the ends make the hull two-dimensional; every other Qhull vertex then lies on the
    lower hull. Qhull's tolerance is global, so where the points are very steep it can drop true
    vertices; those lie strictly below its hull and are added back.
    """
    from scipy.spatial import ConvexHull, QhullError

    top = np.max(y) + 1.0 + np.ptp(y)
    points = np.column_stack((np.append(x, [x[0], x[-1]]), np.append(y, [top, top])))
    try:
        vertices = np.sort(ConvexHull(points).vertices)
    except QhullError as error:
        hint = str(error).splitlines()[0]
        raise ComputationError("convex hull of a trade-off grid failed", hint=hint) from None
    vertices = np.union1d(vertices[vertices < x.size], [0, x.size - 1])  # the ends are always vertices
    below = y < np.interp(x, x[vertices], y[vertices])
    return np.union1d(vertices, np.flatnonzero(below))
