"""From a privacy profile to a discrete PLD on a grid: pessimistic (connect the dots) and optimistic
(chords, then their lower convex hull) masses, and the loss range that holds all but a tail of the mass.
"""

from __future__ import annotations

import math

import numpy as np

from gdpcli.core.hull import lower_hull
from gdpcli.core.pld.representation import _MAX_LOSS, DiscretePLD, ProfileFn, Tails, _grid
from gdpcli.errors import ComputationError, parameter

MAX_POINTS = 2**25
"""Default cap on the number of grid points of one array (a float64 array of 2**25 points is 256 MiB)."""

_OPTIMISTIC_EVALUATIONS = 6  # profile evaluations a grid point of the optimistic discretization costs

EVALUATION_WORK = 200.0
"""The work of evaluating a profile at one loss, in the unit of fft_work (one evaluation of a subsampled
Gaussian's profile takes about as long as an FFT's 200 units of n log2 n: benchmarks/README.md)."""


def evaluation_work(points: float, *, pessimistic: bool) -> float:
    """The work of discretizing a profile on `points` grid points (its profile evaluations)."""
    return (1 if pessimistic else _OPTIMISTIC_EVALUATIONS) * points * EVALUATION_WORK


def _masses(values: np.ndarray, at_zero: float, interval: float, seam: int | None = None) -> np.ndarray:
    """P-masses m_k = x_k (s_k - s_{k-1}) of the function linear in x through the grid values.

    values[k] is the profile at x_k = e^{(k_lo + k) D}, at_zero its value at x = 0 (left of x_0 the
    function is the line through (0, at_zero)); right of the last point it is constant (= m_inf).
    With x_{k+1} = x_k e^D, m_k = ((v_{k+1} - v_k) - e^D (v_k - v_{k-1})) / (e^D - 1), evaluated as
    (s_k - s_{k-1}) / (e^D - 1) - s_{k-1} with s_k = v_{k+1} - v_k: the rounding of e^D and of e^D - 1 is
    the same relative error in every mass, which in the first form adds up to an ulp over D times the
    total step (3e-12 on grids of 3e-6, beyond the outward rounding of the bounds: the upper bound fell
    below the truth), in the second form to an ulp times the change of slope, whose sum telescopes.

    seam: values[:seam + 1] are the profile's excess over the line 1 - x, f_k - (1 - x_k), at_zero is 1
    and values[seam] is at x = 1 (loss 0), where the excess is f itself. Where f is
    within rounding of 1 - x (negative losses), its second differences cancel: an ulp of 1 is e^{-eps_k}
    / D times the masses' scale at eps_k < 0 (q 1e-4, sigma 0.5, grid 5e-5: 1.9e-7 of spurious P-mass at
    losses down to -8, where the truth has 1e-16; 1e5 steps composed 0.019 of it and a grid three times
    longer). The line's second differences are 0: with the slopes written s_k = -c_k + r_k / (x_k (e^D -
    1)), c_k = 1 on the pieces left of the seam (r_k the step of the excesses) and 0 right of it (r_k the
    step of f), the masses are (r_k - e^D r_{k-1}) / (e^D - 1) + x_k (c_{k-1} - c_k): in exact arithmetic
    the same numbers (the same interpolant), each now a difference of small terms. Both readings of the
    value at the seam agree exactly (1 - x = 0), so no ulp of 1 enters there either.
    """
    step = np.diff(values, append=values[-1])
    growth = np.expm1(interval)
    start = values[0] - (0.0 if seam is not None else at_zero)
    previous = np.concatenate(([-start * np.expm1(-interval)], step[:-1]))
    masses = (step - previous) / growth - previous  # = (step - e^D previous) / (e^D - 1), see below
    if seam is not None:
        masses[seam] += 1.0  # x_seam (c_{seam - 1} - c_seam), x_seam = 1
    return masses


def _evaluate(profile: ProfileFn, losses: np.ndarray) -> np.ndarray:
    """The profile at the given losses, checked finite and clipped to [0, 1]."""
    values = np.asarray(profile(losses), dtype=float)
    if not np.all(np.isfinite(values)):
        raise ComputationError("the privacy profile returned a non-finite value", hint="check the mechanism")
    return np.clip(values, 0.0, 1.0)


def _tangent_lines(
    profile: ProfileFn, points: np.ndarray, width: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """At each loss m of `points` a line (through (x_m, y_m) with slope s) below the convex profile f
    everywhere, and f(x_m).

    With a < m < b the losses m -+ width, the secants s1 = secant(a, m) and s2 = secant(m, b) bracket the
    tangent slope. The line through (m, f(m) - e) with slope s = (s1 (b - m) + s2 (m - a)) / (b - a) and
    e = (s2 - s1)(m - a)(b - m) / (b - a) is below f everywhere: on [m, b] it is below the extension of
    secant(a, m), on [a, m] below that of secant(m, b), and outside [a, b] below both. It is nearly the
    tangent at m (e ~ f'' width^2 / 2), or at a kink of f within [a, b] a line through it.
    """
    x_a, x_m, x_b = (np.exp(points + shift * width) for shift in (-1.0, 0.0, 1.0))
    f_a, f_m, f_b = (_evaluate(profile, np.log(x)) for x in (x_a, x_m, x_b))
    s1, s2 = (f_m - f_a) / (x_m - x_a), (f_b - f_m) / (x_b - x_m)
    slope = (s1 * (x_b - x_m) + s2 * (x_m - x_a)) / (x_b - x_a)
    drop = np.abs(s2 - s1) * (x_m - x_a) * (x_b - x_m) / (x_b - x_a)
    return x_m, f_m - drop, slope, f_m


def _optimistic_values(profile: ProfileFn, losses: np.ndarray, atom: float) -> np.ndarray:
    """Grid values whose interpolant lies below the convex profile f (a near-tangent construction).

    With l_k a line below f chosen for piece k and l_{-1}(x) = 1 - x (below every profile),
    v_k = min(l_{k-1}(x_k), l_k(x_k)) puts each chord below its piece's line, hence below f; the
    interpolant starts at (0, 1). Each piece takes, of three lines below f (_tangent_lines at its
    midpoint, bracket D/16, and at its two ends, bracket D/256), the one whose worse end is relatively
    closest to f: the midpoint's for a smooth piece (error f'' D^2 / 8 at both ends, like connect the
    dots), an end's where f has a kink inside the piece (the near-atom of a subsampled mechanism's loss
    at log(1 - q)), which a midpoint tangent would extrapolate far below f, even below its limit. The
    last value is at most the atom c (a lower bound on lim f, the constant right of the grid); where
    some v_j < c the values from j - 1 on are set to c (a chord to a lower end point stays below the
    line; the constant c is below f).
    """
    x = np.exp(losses)
    interval = losses[1] - losses[0]
    middle = _tangent_lines(profile, losses[:-1] + 0.5 * interval, interval / 16)
    x_g, y_g, s_g, f = _tangent_lines(profile, losses, interval / 256)
    lines = [middle[:3], (x_g[:-1], y_g[:-1], s_g[:-1]), (x_g[1:], y_g[1:], s_g[1:])]
    ends = [(y + s * (x[:-1] - x_m), y + s * (x[1:] - x_m)) for x_m, y, s in lines]
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = [
            np.minimum(_closeness(start, f[:-1], atom), _closeness(end, f[1:], atom)) for start, end in ends
        ]
    best = np.argmax(scores, axis=0)
    start = np.choose(best, [start for start, _ in ends])
    end = np.choose(best, [end for _, end in ends])
    values = np.minimum(np.concatenate((start, [np.inf])), np.concatenate(([1.0 - x[0]], end)))
    return _between_limits(values, losses, atom)


def _between_limits(values: np.ndarray, losses: np.ndarray, atom: float) -> np.ndarray:
    """The values raised to the line 1 - x where they dip below it, then cut to the atom c at the top.

    Both limits are below every profile f: f(x) = sup_S P(S) - x Q(S) >= 1 - x (S everything) and
    f >= lim f >= c. Where the last v_i < 1 - x_i, the values up to i + 1 become 1 - x_k (the
    interpolant is that line on [0, x_{i+1}]; the chord from x_{i+1} on starts at a lowered end point,
    so stays below its line); then, where the first v_j < c, the values from j - 1 on become c (the
    same argument mirrored; the constant right of the grid is then c). The line keeps f~(0) = 1 and
    f~'(0) = -1, i.e. the P- and Q-mass of the pair (a kink at 1 - x left of the crowd of a subsampled
    mechanism's losses just above log(1 - q) would otherwise take Q-mass in excess and move that crowd
    down by part of a grid interval: a first-order bias in every step), the atom keeps lim f~ = c.
    The line is skipped where it would take half of v_{i+1} or more (a kink inside a piece of a grid
    coarser than |log(1 - q)|: the plain values keep more of the near-atom there); either way the
    interpolant is below f.
    A convex f~ <= f with f's masses at 0 and infinity is a garbling of the true pair (Blackwell), so
    its error in the composition is second order like connect the dots' (the Jensen gap of a
    mean-preserving contraction instead of a spread).
    """
    line = -np.expm1(losses)
    under = np.flatnonzero(values < line)
    end = under[-1] + 2 if under.size else 0
    if under.size and np.all(line[end - 1 : end] >= 0.5 * values[end - 1 : end]):
        values[:end] = line[:end]
    values[-1] = min(values[-1], atom)
    below = np.flatnonzero(values < atom)
    if below.size:
        values[max(below[0] - 1, 0) :] = atom
    return values


def _closeness(line: np.ndarray, profile: np.ndarray, atom: float) -> np.ndarray:
    """log((line - atom) / (profile - atom)): 0 where the line meets f, -inf where it is at or below the
    atom (where f is at the atom: 0, as no line below f does better there)."""
    return np.where(profile > atom, np.log(np.maximum(line - atom, 0.0) / (profile - atom)), 0.0)


def _lower_hull_masses(values: np.ndarray, x: np.ndarray, at_zero: float) -> np.ndarray:
    """Masses of the lower convex hull (core.hull) of (0, at_zero), (x_k, values_k): the slope changes at
    its vertices times x, the last vertex carrying the constant tail; points off the hull get none.
    Dropping points only lowers the function."""
    xs, vs = np.concatenate(([0.0], x)), np.concatenate(([at_zero], values))
    kept = lower_hull(xs, vs)
    slopes = np.append(np.diff(vs[kept]) / np.diff(xs[kept]), 0.0)
    result = np.zeros(x.size)
    result[kept[1:] - 1] = xs[kept[1:]] * np.diff(slopes)
    return result


def discretize(
    profile: ProfileFn,
    interval: float,
    *,
    pessimistic: bool,
    loss_range: tuple[float, float],
    max_points: int = MAX_POINTS,
    reverse: ProfileFn | None = None,
    offset: float = 0.0,
) -> DiscretePLD:
    """A discrete PLD on the grid offset + k * interval over loss_range whose profile bounds `profile`.

    pessimistic=True: connect the dots (Doroshenko et al. 2022), the interpolant of the true values,
    linear in x, with the line to (0, 1) on the left and constant right of the grid: by convexity an
    upper bound on the profile everywhere (a dominating pair). pessimistic=False: _optimistic_values
    and their lower convex hull, a lower bound everywhere. Both err by O(D^2) per mechanism and keep
    the P- and Q-mass (1 and 1 - c for the optimistic one, _between_limits), so the error of a
    composition also stays second order.

    reverse: the profile g of the reverse pair (Q, P). Connect the dots then takes its values at the
    negative losses as their excess over the line 1 - x, x g(-eps) (_masses' seam at loss 0), from
    H_x(P || Q) = 1 - x + x H_{1/x}(Q || P) (probability measures): f itself in exact arithmetic, but
    without the rounding of f near 1 - x. Where g only bounds the reverse pair's profile from above,
    1 - x + x g(-eps) still bounds f* (the mechanism's profile) from above, as the identity is increasing
    in H; connect the dots of values above the convex f* at the grid points is above f* everywhere
    (chords of a convex function lie above it; left of x_0 the chord from (0, 1 >= f*(0)), right of the
    grid the constant f~(x_last) >= f*), so either way the interpolant is an upper bound; masses clipped
    up to 0 only raise it. (The seam needs loss 0 on the grid: offset 0.)
    """
    k_lo, k_hi = _grid(loss_range[0] - offset, loss_range[1] - offset, interval, max_points)
    losses = offset + np.arange(k_lo, k_hi + 1) * interval
    atom = float(_evaluate(profile, np.array([np.inf]))[0])
    if pessimistic and reverse is not None and offset == 0.0 and k_lo < 0 <= k_hi:
        seam = -k_lo  # the index of loss 0
        excess = np.exp(losses[:seam]) * _evaluate(reverse, -losses[:seam])
        values = np.concatenate((excess, _evaluate(profile, losses[seam:])))
        masses = _masses(values, 1.0, interval, seam)
    elif pessimistic:
        values = _evaluate(profile, losses)
        masses = _masses(values, 1.0, interval)
    else:
        values = _optimistic_values(profile, losses, atom)
        at_zero = 1.0 if values[0] > atom else atom
        masses = _lower_hull_masses(values, np.exp(losses), at_zero)
    work = evaluation_work(losses.size, pessimistic=pessimistic)
    return DiscretePLD(k_lo, interval, np.maximum(masses, 0.0), float(values[-1]), offset=offset, work=work)


def _upper_loss(profile: ProfileFn, tail: float) -> float:
    """A loss eps_hi >= 0 with delta(eps_hi) - lim delta <= tail, from one vectorized scan.

    Candidates grow geometrically by 10 % from 2^-30 up to 700; the first that qualifies is returned.
    """
    candidates = np.concatenate(([0.0], 2.0 ** np.arange(-30.0, np.log2(_MAX_LOSS), 0.125)))
    excess = np.asarray(profile(candidates), dtype=float) - float(np.asarray(profile(np.array([np.inf])))[0])
    small = np.flatnonzero(excess <= tail)
    if not small.size:
        raise ComputationError(
            "the privacy loss has no negligible tail below 700, the PLD accountant's range",
            hint=f"{parameter('method')} rdp has no such limit, where every mechanism has an RDP curve",
        )
    return float(candidates[small[0]])


def loss_range(profile: ProfileFn, reverse: ProfileFn, tails: Tails) -> tuple[float, float]:
    """[lo, hi] outside which the P-mass of the privacy loss is negligible.

    hi: delta(hi) - lim delta <= tails.above, so the connect-the-dots profile puts at most that at
    +infinity. lo: -1.1 t where t = hi of the reverse pair (Q, P) at tail = tails.below. With L' = -L under Q,
    P(L <= -s) = E_Q[e^{-L'}; L' >= s] <= e^{-s} delta_rev(s - h) / (1 - e^{-h}), so beyond 1.1 t the
    P-mass is below e^{-1.1t} tail / (1 - e^{-0.1 t}). The range only affects tightness, never rigour:
    both discretizations handle the mass outside it on the safe side.
    """
    return -1.1 * _upper_loss(reverse, tails.below), _upper_loss(profile, tails.above)


def _cluster_offset(profile: ProfileFn, kink: float, interval: float) -> float:
    """The grid offset that puts a grid point at the merged loss of the cell of width `interval` next to
    the kink (on the side of 0), where a Poisson-subsampled mechanism holds most of its mass (about 0.9
    at q 1e-5, sigma 0.5, interval 1e-4).

    Any offset keeps the optimistic discretization a lower bound; this one makes it tight. With the crowd
    inside one piece, grid points only at its ends force the optimistic PLD to move the crowd down to
    the lower end in every step, a first-order bias (at q 1e-5, sigma 0.5, 1e4 steps: a lower bound of
    0 on every grid coarser than 2 |kink|, 0.028 with the kink itself a grid point at interval 1e-4).
    Merging the cell into one outcome is a garbling that loses only its spread, O(q^2) a step, and its
    loss log(P(cell) / Q(cell)) on the grid lets the near-tangent construction do as well (0.07031
    against the truth 0.0704 at interval 1e-4). The cell's masses come from the profile's slope:
    P(L > e) = delta(e) - delta'(e), Q(L > e) = -e^{-e} delta'(e), by central differences. Returns 0
    where that fails (the offset only affects tightness).
    """
    inner = kink - math.copysign(interval, kink)  # the cell's end on the side of 0
    outer = kink + math.copysign(1e-3 * interval, kink)
    step = 1e-3 * interval
    ends = np.array([outer, inner])
    values = _evaluate(profile, np.concatenate((ends - step, ends, ends + step)))
    slopes = (values[4:] - values[:2]) / (2.0 * step)
    above_p, above_q = values[2:4] - slopes, -np.exp(-ends) * slopes
    with np.errstate(divide="ignore", invalid="ignore"):
        merged = float(np.log(abs(above_p[0] - above_p[1]) / abs(above_q[0] - above_q[1])))
    if not min(kink, inner) <= merged <= max(kink, inner):
        return 0.0
    return merged % interval
