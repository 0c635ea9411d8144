"""Mechanisms given as sampled curves: a trade-off function by (alpha, beta) points, a privacy profile by
(epsilon, delta) points (GDP paper, Dong, Roth and Su 2022: Prop. 1, 2, 5, 6).

Both become one `Grid` (core.tradeoff): a convex, piecewise-linear trade-off function F_S that is a
rigorous LOWER bound on the mechanism's trade-off function between and beyond the samples, so every
privacy figure computed from it (epsilon, delta, mu) is an UPPER bound on the mechanism's.

Trade-off points (`tradeoff_bound`), known f(a_i) = b_i up to `tol`, plus f(1) = 0 (f(1) <= 1 - 1):

- exact samples, the secant rule. For convex f and a < c < d, the secant of f through c and d, extended
  to the left of c, lies below f (slopes of chords of a convex function increase:
  (f(c) - f(x)) / (c - x) <= (f(d) - f(c)) / (d - c) for x < c); the same holds to the right of d. So on
  [a_i, a_{i+1}] f >= L_{i-1} and f >= L_{i+1}, the extended secants of the neighbouring pieces, and
  f >= 0: g = max(L_{i-1}, L_{i+1}, 0) there (on [0, a_0]: L_0). This is the tightest bound the samples
  give: the convex function that follows L_{i-1} up to the crossing with L_{i+1}, then L_{i+1}, and the
  chords elsewhere, passes through every sample and equals g on the piece. The chord interpolant
  itself is an UPPER bound on f (a chord of a convex function lies above it), never to be used here.
  Each secant is lowered by what the samples' error tol can move it: tol (|x - a_j| + |x - a_{j+1}|) /
  (a_{j+1} - a_j) at x.
- lower-bound samples (b_i <= f(a_i), e.g. gdpcli's `lower_bound` rows), the ray rule. Extending a secant
  needs its far end from above, which a lower bound does not give; the one exact point is (1, 0): for
  x <= a_j, convexity between x, a_j and 1 gives f(x) >= b_j (1 - x) / (1 - a_j). Only these rays and
  f >= 0 hold; g is their maximum.

Then F = the lower convex hull of g's vertices with (0, 1) and (1, 0), i.e. conv(min(g, 1 - alpha)): f is
convex and f >= g, f <= 1 - alpha, so f >= F. F_S = max(F, F^-1) (Prop. 2: an f-DP mechanism is
max(f, f^-1)-DP, and f >= F gives f^-1 >= F^-1): the samples near alpha = 1 then bound f near 0.

Profile points (`profile_bound`), known delta(eps_i) <= d_i (+ tol), exact or upper bounds: delta(eps) =
1 + f*(-e^eps) is convex and non-increasing in t = e^eps (a conjugate, Prop. 6), and delta = 1 at t = 0
(f(1) = 0). Hence U = the lower convex hull of (0, 1) and (t_i, min_{j <= i} d_j + tol), constant beyond the
last t, is >= delta everywhere (delta is convex and below every point, so below their hull; non-increasing,
so below the running minimum and the constant tail); for exact samples it is the tightest such bound (it
is itself a profile through them). F = sup_t (1 - t alpha - U(t)) (the conjugate, Prop. 5/6) is a lower
bound on the trade-off function, and F_S = max(F, F^-1) as above (the profile holds in both orders).

Rounding: the profile of F_S is evaluated exactly up to a few ulps (profile_from_grid); the tol margin
(default 1e-12) covers the samples' own rounding. Files rounded to k decimals need tol = 5e-(k+1).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.hull import lower_hull
from gdpcli.core.tradeoff import Grid, _min_linear, _pointwise_min, convexify, inverse, profile_from_grid
from gdpcli.errors import InputError

DEFAULT_TOL = 1e-12
"""Absolute accuracy assumed of the samples' beta or delta (gdpcli's own CSV: full float precision)."""

EXACT, LOWER, UPPER = "exact", "lower_bound", "upper_bound"


@dataclass(frozen=True)
class Samples:
    """Points (x, y) read from a CSV, x strictly increasing; `line` is each point's line in the file,
    `exact` whether every point is exact (else each bounds the curve from the safe side)."""

    where: str
    x: np.ndarray
    y: np.ndarray
    line: np.ndarray
    exact: bool

    def fail(self, index: int, column: str, problem: str, hint: str) -> InputError:
        """InputError naming the file, the line and the column of point `index`."""
        return InputError(f"{self.where} line {int(self.line[index])}, column {column}: {problem}", hint)


@dataclass(frozen=True)
class Columns:
    """What a CSV must hold: the x and y column names and the labels of usable rows."""

    x: str
    y: str
    usable: tuple[str, ...]


TRADEOFF_COLUMNS = Columns("alpha", "beta", (EXACT, LOWER))
PROFILE_COLUMNS = Columns("epsilon", "delta", (EXACT, UPPER))


def _header(reader: Any, where: str, columns: Columns) -> dict[str, int]:
    header = next((row for row in reader if any(cell.strip() for cell in row)), None)
    names = [] if header is None else [name.strip().lower() for name in header]
    for name in (columns.x, columns.y):
        if name not in names:
            raise InputError(
                f"{where} line {reader.line_num}: no {name} column",
                f"need columns {columns.x},{columns.y} (others ignored), e.g. gdpcli's own CSV",
            )
    return {name: position for position, name in enumerate(names)}


def _cell(row: list[str], position: int | None) -> str:
    return row[position].strip() if position is not None and position < len(row) else ""


def _pair(cells: tuple[str, str], columns: Columns, where: str, line: int) -> tuple[float, float]:
    """The row's (x, y) as finite floats; InputError naming the line and the column otherwise."""
    values = []
    for cell, column in zip(cells, (columns.x, columns.y), strict=True):
        try:
            values.append(float(cell))
        except ValueError:
            raise InputError(f"{where} line {line}, column {column}: {cell!r} is not a number") from None
        if not math.isfinite(values[-1]):
            raise InputError(f"{where} line {line}, column {column}: {cell!r} is not finite")
    return values[0], values[1]


def read_samples(text: str, where: str, columns: Columns) -> Samples:
    """The usable rows of a CSV: columns x, y (extra columns ignored, rows with both empty skipped);
    with a `guarantee` column only rows labelled as in columns.usable (gdpcli's own CSV reads back).
    InputError (exit 2) naming file, line and column for a non-number, too few rows, x not increasing."""
    reader = csv.reader(io.StringIO(text))
    index = _header(reader, where, columns)
    points: list[tuple[float, float, int]] = []
    labels: set[str] = set()
    for row in reader:
        x_text, y_text = _cell(row, index[columns.x]), _cell(row, index[columns.y])
        label = _cell(row, index.get("guarantee")) or EXACT
        if (not x_text and not y_text) or label not in columns.usable:
            continue
        points.append((*_pair((x_text, y_text), columns, where, reader.line_num), reader.line_num))
        labels.add(label)
    if not points:
        raise InputError(
            f"{where}: no usable ({columns.x}, {columns.y}) rows",
            "rows labelled " + " or ".join(columns.usable) + " are used",
        )
    x, y, line = (np.array(values) for values in zip(*points, strict=True))
    samples = Samples(where, x, y, line.astype(int), labels == {EXACT})
    _check_increasing_x(samples, columns.x)
    return samples


def _check_increasing_x(samples: Samples, column: str) -> None:
    steps = np.flatnonzero(np.diff(samples.x) <= 0)
    if steps.size:
        raise samples.fail(
            steps[0] + 1, column, f"{float(samples.x[steps[0] + 1])!r} does not increase", "sort the rows"
        )


def _check_range(samples: Samples, values: np.ndarray, column: str) -> None:
    outside = np.flatnonzero((values < 0.0) | (values > 1.0))
    if outside.size:
        raise samples.fail(
            outside[0], column, f"{float(values[outside[0]])!r} is outside [0, 1]", "a probability"
        )


def _check_non_increasing(samples: Samples, y: np.ndarray, column: str, tol: float) -> None:
    rises = np.flatnonzero(np.diff(y) > 2.0 * tol)
    if rises.size:
        raise samples.fail(
            rises[0] + 1,
            column,
            f"{float(y[rises[0] + 1])!r} exceeds the previous row's {float(y[rises[0]])!r}",
            "the curve is non-increasing (GDP paper Prop. 1)",
        )


def _check_convex(
    samples: Samples,
    points: tuple[np.ndarray, np.ndarray],
    column: str,
    what: str,
    tol: float,
    shift: int = 0,
) -> None:
    """Each point on or below the chord of its neighbours, within what tol can move them (2 tol); points
    are the samples with a known point after (f(1) = 0) or before (a profile's (0, 1): shift = -1)."""
    x, y = points
    share = (x[1:-1] - x[:-2]) / (x[2:] - x[:-2])
    above = y[1:-1] - (y[:-2] + share * (y[2:] - y[:-2]))
    bad = np.flatnonzero(above > 2.0 * tol)
    if bad.size:
        at = min(bad[0] + 1 + shift, samples.x.size - 1)
        raise samples.fail(
            at,
            column,
            f"not convex {what}: {above[bad[0]]:.3g} above the chord of its neighbours",
            "a trade-off function is convex and its profile convex in e^epsilon (GDP paper Prop. 1, 6)",
        )


def check_tradeoff(samples: Samples, tol: float) -> None:
    """GDP paper Prop. 1 on the samples: alpha, beta in [0, 1], beta <= 1 - alpha; exact samples also
    non-increasing and convex together with f(1) = 0 (and with f(0) <= 1: the first secant, extended)."""
    _check_range(samples, samples.x, "alpha")
    _check_range(samples, samples.y, "beta")
    over = np.flatnonzero(samples.y > 1.0 - samples.x + tol)
    if over.size:
        raise samples.fail(
            over[0], "beta", f"{float(samples.y[over[0]])!r} > 1 - alpha", "f(alpha) <= 1 - alpha"
        )
    if not samples.exact:
        return
    x, y = _with_end(samples.x, samples.y)
    _check_non_increasing(samples, y[: samples.x.size], "beta", tol)
    _check_convex(samples, (x, y), "beta", "(with f(1) = 0)", tol)
    if x[0] > 0.0 and x.size > 1 and y[0] + x[0] * (y[0] - y[1]) / (x[1] - x[0]) > 1.0 + 3.0 * tol:
        raise samples.fail(
            0, "beta", "the first two points' secant exceeds 1 at alpha = 0", "no trade-off function passes"
        )


def check_profile(samples: Samples, tol: float) -> None:
    """GDP paper Prop. 6 on the samples: delta in [0, 1]; exact samples also non-increasing, >= 1 - e^eps
    and convex in t = e^eps together with delta = 1 at t = 0."""
    _check_range(samples, samples.y, "delta")
    if not samples.exact:
        return
    t = np.exp(samples.x)
    low = np.flatnonzero(samples.y < -np.expm1(samples.x) - tol)
    if low.size:
        raise samples.fail(low[0], "delta", "below 1 - e^epsilon", "every profile has delta >= 1 - e^epsilon")
    _check_non_increasing(samples, samples.y, "delta", tol)
    _check_convex(samples, (np.append(0.0, t), np.append(1.0, samples.y)), "delta", "in e^epsilon", tol, -1)


def _with_end(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The samples with f(1) = 0 appended (when 1 is not sampled)."""
    return (x, y) if x[-1] >= 1.0 else (np.append(x, 1.0), np.append(y, 0.0))


# ---------------------------------------------------------------------------------------------------------
# Trade-off samples -> lower bound


def _secants(x: np.ndarray, y: np.ndarray, tol: float, right_of: bool) -> tuple[np.ndarray, np.ndarray]:
    """(slope, intercept) of each piece's secant, lowered by tol's effect where it is used: right of its
    piece (right_of) the error grows like tol (2x - a_j - a_{j+1}) / w_j, left of it like tol (a_j +
    a_{j+1} - 2x) / w_j."""
    width = np.diff(x)
    slope = np.diff(y) / width
    intercept = y[:-1] - slope * x[:-1]
    sign = 1.0 if right_of else -1.0
    return slope - sign * 2.0 * tol / width, intercept + sign * tol * (x[:-1] + x[1:]) / width


def _none(size: int) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(size), np.full(size, -np.inf)


def _piece_lines(x: np.ndarray, y: np.ndarray, tol: float) -> tuple[np.ndarray, ...]:
    """Per piece [lo, hi] of [0, 1]: the left neighbour's secant A and the right one's B (slope,
    intercept; -inf intercept where there is none), for the secant rule."""
    pieces = x.size - 1
    left_s, left_c = _secants(x, y, tol, right_of=True)
    right_s, right_c = _secants(x, y, tol, right_of=False)
    a_s, a_c = _none(pieces)
    b_s, b_c = _none(pieces)
    a_s[1:], a_c[1:] = left_s[:-1], left_c[:-1]
    b_s[:-1], b_c[:-1] = right_s[1:], right_c[1:]
    lo, hi = x[:-1], x[1:]
    if x[0] > 0.0:  # [0, a_0]: the first secant, extended left
        lo, hi = np.append(0.0, lo), np.append(x[0], hi)
        a_s, a_c = np.append(0.0, a_s), np.append(-np.inf, a_c)
        b_s, b_c = np.append(right_s[0], b_s), np.append(right_c[0], b_c)
    return lo, hi, a_s, a_c, b_s, b_c


def _crossing(s1: np.ndarray, c1: np.ndarray, s2: np.ndarray, c2: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return (c2 - c1) / (s1 - s2)


def _secant_rule(x: np.ndarray, y: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of g = max(A, B, 0) on each piece: its ends and the lines' pairwise crossings."""
    if x.size < 2:  # nothing but f(1) = 0: only f >= 0
        return np.zeros(1), np.zeros(1)
    lo, hi, a_s, a_c, b_s, b_c = _piece_lines(x, y, tol)
    zero = np.zeros_like(lo)
    pairs = ((a_s, a_c, b_s, b_c), (a_s, a_c, zero, zero), (b_s, b_c, zero, zero))
    crossings = [_crossing(*pair) for pair in pairs]
    at = np.stack([lo, hi, *(np.clip(np.nan_to_num(c, nan=0.0), lo, hi) for c in crossings)])
    with np.errstate(invalid="ignore"):
        g = np.maximum(np.maximum(a_s * at + a_c, b_s * at + b_c), 0.0)
    return at.ravel(), g.ravel()


def _ray_rule(x: np.ndarray, y: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of g(alpha) = (1 - alpha) max_{a_j >= alpha} (b_j - tol) / (1 - a_j): at 0 and just right of
    each sample (the lower one-sided limit, which the hull of g reaches)."""
    inner = x < 1.0
    x, y = x[inner], y[inner]
    ratio = np.maximum(y - tol, 0.0) / (1.0 - x)
    suffix = np.append(np.maximum.accumulate(ratio[::-1])[::-1], 0.0)
    return np.append(0.0, x), np.append(suffix[0], (1.0 - x) * suffix[1:])


def _hull_grid(x: np.ndarray, y: np.ndarray) -> Grid:
    """conv(min(g, 1 - alpha)): the lower convex hull of g's vertices with (0, 1) and (1, 0); at equal x
    the lowest point."""
    x, y = np.append(x, [0.0, 1.0]), np.append(y, [1.0, 0.0])
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    first = np.append(True, np.diff(x) > 0)
    x, y = x[first], y[first]
    kept = lower_hull(x, y)
    return Grid(x[kept], y[kept])


def symmetric(grid: Grid) -> Grid:
    """max(F, F^-1) (GDP paper Prop. 2), exact for the interpolant: max = F + F^-1 - min on the knots of
    min(F, F^-1), which hold both functions' knots and their crossings."""
    flipped = inverse(grid)
    low = _pointwise_min(grid, flipped)
    return convexify(Grid(low.alpha, grid(low.alpha) + flipped(low.alpha) - low.beta))


def tradeoff_bound(samples: Samples, tol: float = DEFAULT_TOL) -> Grid:
    """F_S <= the mechanism's trade-off function from (alpha, beta) samples (module docstring: the secant
    rule for exact samples, the ray rule for lower bounds; then the hull and Prop. 2)."""
    check_tradeoff(samples, tol)
    x, y = _with_end(samples.x, samples.y)
    vertices = _secant_rule(x, y, tol) if samples.exact else _ray_rule(x, y, tol)
    return symmetric(_hull_grid(*vertices))


# ---------------------------------------------------------------------------------------------------------
# Profile samples -> lower bound


def _profile_hull(samples: Samples, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """U's vertices (t, delta): the lower hull of (0, 1) and (t_i, running-min d_i + tol), capped at 1."""
    t = np.append(0.0, np.exp(samples.x))
    d = np.append(1.0, np.minimum(np.minimum.accumulate(samples.y) + tol, 1.0))
    if np.any(np.diff(t) <= 0):  # e^eps rounds equal for very close or very negative epsilons
        t, d = t[np.append(True, np.diff(t) > 0)], d[np.append(True, np.diff(t) > 0)]
    kept = lower_hull(t, d)
    return t[kept], d[kept]


def profile_bound(samples: Samples, tol: float = DEFAULT_TOL) -> Grid:
    """F_S <= the mechanism's trade-off function from (epsilon, delta) samples: F(alpha) = sup_t (1 - t
    alpha - U(t)) (GDP paper Prop. 5/6) is piecewise linear with knots at the slopes -U'; then Prop. 2."""
    check_profile(samples, tol)
    t, u = _profile_hull(samples, tol)
    slopes = np.diff(u) / np.diff(t)
    knots = np.unique(np.clip(np.append(-slopes, [0.0, 1.0]), 0.0, 1.0))
    values = 1.0 - _min_linear(t, u, knots)  # at alpha = 0: 1 - U(last t), the limit t -> inf
    return symmetric(Grid(knots, np.maximum(values, 0.0)))


def bound(kind: str, text: str, where: str, tol: float = DEFAULT_TOL) -> Grid:
    """F_S of a CSV text for the spec kind `tradeoff` (alpha, beta) or `profile` (epsilon, delta)."""
    if kind == "tradeoff":
        return tradeoff_bound(read_samples(text, where, TRADEOFF_COLUMNS), tol)
    return profile_bound(read_samples(text, where, PROFILE_COLUMNS), tol)


# ---------------------------------------------------------------------------------------------------------
# Representations of F_S


def tradeoff(grid: Grid, alpha: ArrayLike) -> ArrayLike:
    """F_S(alpha): a lower bound on beta."""
    return grid(alpha)


def profile(grid: Grid, epsilon: ArrayLike) -> ArrayLike:
    """1 + F_S*(-e^eps) for all real eps and eps = inf (the atom 1 - F_S(0)): an upper bound on delta."""
    return as_output(profile_from_grid(grid, epsilon, upper=False))


def log_profile(grid: Grid, epsilon: ArrayLike) -> np.ndarray:
    """log of `profile` (-inf where it is 0), for the GDPT engine."""
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(profile(grid, epsilon), dtype=float))


def atom(grid: Grid) -> float:
    """lim_{eps -> inf} delta(eps) = 1 - F_S(0): the part no epsilon covers."""
    return float(1.0 - grid.beta[0])
