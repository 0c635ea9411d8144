"""core.hull.lower_hull against a brute-force definition of the lower convex hull."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.core.hull import lower_hull


def brute_force_hull(x: np.ndarray, y: np.ndarray) -> list[int]:
    """Indices i with (x_i, y_i) strictly below every chord between a point left and a point right of it
    (the vertices of the lower hull of x-sorted points in general position), plus both ends."""
    vertices = [0]
    for i in range(1, x.size - 1):
        left, right = np.arange(i), np.arange(i + 1, x.size)
        a, b = np.meshgrid(left, right, indexing="ij")
        chord = y[a] + (y[b] - y[a]) * (x[i] - x[a]) / (x[b] - x[a])
        if np.all(y[i] < chord):
            vertices.append(i)
    return [*vertices, x.size - 1]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=3, max_size=60), st.integers(0, 3))
def test_matches_the_definition(heights: list[int], curvature: int) -> None:
    x = np.arange(len(heights), dtype=float)
    y = np.asarray(heights, dtype=float) + curvature * (x - x.mean()) ** 2
    assert lower_hull(x, y).tolist() == brute_force_hull(x, y)


def test_rounding_dents_on_a_long_convex_curve() -> None:
    """Rounding-sized dents on 200001 points of a convex curve (the optimistic PLD values at a fine grid
    look like this): vectorized passes alone cascade for hundreds of passes. The result is a hull: its
    slopes increase and no point lies below it."""
    x = np.linspace(0.0, 1.0, 200001)
    y = (x - 0.3) ** 2 + 1e-12 * np.random.default_rng(1).random(x.size)
    hull = lower_hull(x, y)
    slopes = np.diff(y[hull]) / np.diff(x[hull])
    assert hull[0] == 0 and hull[-1] == x.size - 1
    assert np.all(np.diff(slopes) > 0)
    assert np.all(y >= np.interp(x, x[hull], y[hull]) - 1e-15)


def test_two_points_an_ulp_apart_keep_their_vertex() -> None:
    """Four Neyman-Pearson vertices of a 3-fold Poisson-subsampled randomized response (two directions,
    pessimistic PLDs on a grid of 0.0277): the middle two are one vertex an ulp apart. Each tests as on or
    above the chord through the other, and removing both in one pass left the hull 3.6e-3 above the
    vertex, a trade-off 'lower bound' above the truth. No point may lie below the hull."""
    x = np.array([0.21879945608561185, 0.34300000000000086, 0.34300000000000097, 0.38616413981356357])
    y = np.array([0.7160362319493019, 0.5781249999999988, 0.5781249999999987, 0.5349608601864361])
    hull = lower_hull(x, y)
    assert np.all(y >= np.interp(x, x[hull], y[hull]) - 1e-15)
