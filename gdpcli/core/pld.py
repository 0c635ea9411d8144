"""Privacy-loss distributions (PLDs): a rigorous numerical accountant built on privacy profiles.

A mechanism enters as a privacy profile delta(eps) = H_{e^eps}(P || Q) of a dominating pair (P, Q)
(lecture slides, hockey-stick divergence and dominating pairs; Zhu, Dong and Wang 2022). Writing
x = e^eps, the profile is convex and non-increasing in x with delta(x = 0) = 1. A discrete PLD puts
P-masses m_k at the losses eps_k = k D of a uniform grid plus a mass m_inf at +infinity; its profile

    delta(eps) = sum_k m_k (1 - e^{eps - eps_k})_+ + m_inf                                    (*)

is piecewise linear in x with kinks exactly at the grid points. Two discretizations bracket the truth:

* pessimistic ("connect the dots", Doroshenko et al. 2022): interpolate the true profile linearly in x
  between grid points; by convexity this lies above the true profile everywhere;
* optimistic (secant construction): chords that lie below the true profile, then their lower convex
  hull so that every mass is >= 0.

For any measures with non-negative masses, delta of a composition is E_{P_2}[delta_1(x e^{-L_2})]
(Fubini on (*)), so pointwise upper (lower) profiles compose to pointwise upper (lower) profiles. The
composition is an FFT convolution of the P-masses, N-fold self-composition uses repeated squaring, and
every truncation moves mass in the safe direction. Both bounds are rigorous up to floating-point
round-off, whose size is estimated and checked against the answer (ComputationError if it matters).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import TYPE_CHECKING, NamedTuple, TypedDict

import numpy as np

from gdpcli import progress
from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.hull import lower_hull
from gdpcli.defaults import DEFAULT_ACCURACY, EPSILON_SCALE, STEP_SCALE
from gdpcli.errors import ComputationError, InputError

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11 on

ProfileFn = Callable[[np.ndarray], np.ndarray]

MAX_POINTS = 2**25
"""Default cap on the number of grid points of one array (a float64 array of 2**25 points is 256 MiB)."""

_MAX_LOSS = 700.0  # e^{+-700} still fits in a float64
_BLOCK_LOSS = 64.0  # the span of loss over which DiscretePLD._suffix_sums shares one scale
ROUND_OFF_SAFETY = 10.0  # answers carry ten times the round-off estimate (measured errors: a fifth of it)
_MAX_TILT = 64.0  # the largest exponential tilt a composition tries first (_tilt)
_STEEPEST_TILT = (
    4096.0  # the largest it tries where the round-off at _MAX_TILT swallows a delta (epsilon_bounds)
)
_BISECTIONS = 60  # bisection steps of the tilt
_NEGLIGIBLE = -700.0  # log of a term's share of a sum below which it changes no digit (_cumulants)
_FIRST_GRID = 2.0**14  # the first grid interval is at least the composed loss's std over this
_COARSENINGS = 5  # how often a first grid over the cap is retried 4 times coarser (_refine)
_FIRST_POINTS = 2**16  # the first grid spans a step's loss range in at most this many points
_FINEST_FIRST = 1e-9  # the finest first grid interval (negligible mechanisms have no scale to follow)
_FIRST_MAX_POINTS = 2**22  # the cap on the first grid: a heavy-tailed loss can span 1e7 points of it
_LOWER_PASSES = 4  # fixed-point passes of the lower epsilon bound through the round-off (_lower_epsilons)
_LOWER_BISECTIONS = 40  # bisection steps after them (_lower_epsilons)
_SAFETY = 1e-12  # relative outward rounding of reported bounds
_TAIL_BUDGET = 1e-12  # total P-mass that all truncations together may move (see _tail_budget)


_OPTIMISTIC_EVALUATIONS = 6  # profile evaluations a grid point of the optimistic discretization costs
EVALUATION_WORK = 200.0
"""The work of evaluating a profile at one loss, in the unit of fft_work (one evaluation of a subsampled
Gaussian's profile takes about as long as an FFT's 200 units of n log2 n: benchmarks/README.md)."""


MAX_WORK = 8e9
"""The largest work budget, that of the finest accuracies (work_budget)."""


def work_budget(accuracy: float) -> float:
    """The grid work (DiscretePLD.work: FFT lengths n log2 n and profile evaluations) after which the
    refinement returns the tightest bounds found (_refine): 1.2e6 / accuracy within [1.2e9, MAX_WORK].

    It counts operations, not seconds, so where the refinement stops depends only on the input. 1.2e9 at
    the default accuracy (and coarser) is about 1.5 s of DP-SGD accounting on an idle 2-core machine
    (what dp-accounting's PLD takes for one question), and MAX_WORK about 10 s: benchmarks/README.md.
    """
    return min(max(1.2e6 / accuracy, 1.2e9), MAX_WORK)


@dataclass(frozen=True)
class DominatingPair:
    """One mechanism's privacy profile in both add/remove directions.

    remove: delta(eps) of the pair (P, Q) of the "remove" direction, vectorized, for all real eps and
        for eps = +inf, where it must return the mass at infinity lim delta (0 for most mechanisms,
        delta0 for an (eps0, delta0)-DP pair).
    add: the other direction, the profile of (Q, P); None means symmetric (the same as remove).
    loss_range: optional [lo, hi] outside which the P-mass of the privacy loss is negligible; without
        it the range is found from the profiles (see loss_range).
    kink: optional loss at which the remove profile has a kink that carries much of the mass (a
        Poisson-subsampled mechanism's smallest loss log(1 - p); the add direction's is its negative):
        the optimistic discretization's grid puts a point at the merged loss of the cell next to it
        (_cluster_offset), so that it does not move that near-atom down by up to a grid interval in
        every step.
    """

    remove: ProfileFn
    add: ProfileFn | None = None
    loss_range: tuple[float, float] | None = None
    kink: float | None = None

    def directions(self) -> list[tuple[ProfileFn, ProfileFn]]:
        """(profile, reverse profile) for each distinct direction: one if symmetric, else two."""
        if self.add is None:
            return [(self.remove, self.remove)]
        return [(self.remove, self.add), (self.add, self.remove)]


@dataclass(frozen=True)
class RoundOff:
    """Estimated floating-point error of a PLD's masses e_k (and e_inf of its mass at infinity), bounded in
    two norms at once, each bound valid on its own:

        untilted >= sum_k |e_k| + |e_inf|,   untilted_l2 >= (sum_k e_k^2)^(1/2),

    and with a tilt t > 0 (an exponentially tilted composition, see _convolve) the tilted errors
    e_k e^{t eps_k} in both norms too: sum_k |e_k| e^{t eps_k} <= e^{log_tilted}, (sum_k (e_k e^{t
    eps_k})^2)^(1/2) <= e^{log_tilted_l2}, and |e_inf| <= infinity. The errors at losses eps_k >= x then sum
    to at most (the l2 norm by Cauchy-Schwarz against the weights e^{-t eps_k} of the grid points, spaced
    by `interval`)

        tail(x) = min(untilted, e^{log_tilted - t x}, e^{log_tilted_l2 - t x} / sqrt(1 - e^{-2 t interval})),

    and the profile (*) at eps, which sums errors at losses above eps only, each at most 1 in weight, is
    off by at most tail(eps) + infinity (at most untilted). The tilted bounds are relative to the Chernoff
    bound of the tail, far below the untilted one there. The l2 ones are smaller still where the errors
    are the FFT's, spread over the grid (fft_round_off): the query's weights fall geometrically, so that
    about 1 / (2 t interval) grid points count instead of all n. Errors moved into one point
    (_moved_round_off) can grow an l2 norm up to the l1 norm.
    """

    untilted: float = 0.0
    untilted_l2: float = 0.0
    tilt: float = 0.0
    log_tilted: float = -np.inf
    log_tilted_l2: float = -np.inf
    infinity: float = 0.0
    interval: float = 0.0

    def _log_weight(self) -> float:
        """log of the tilted part of tail(x) before its factor e^{-t x}."""
        spread = -0.5 * math.log(-math.expm1(-2.0 * self.tilt * self.interval))
        return min(self.log_tilted, self.log_tilted_l2 + spread)

    def tail(self, loss: ArrayLike, points: ArrayLike | None = None) -> np.ndarray:
        """tail(x): the bound on sum |e_k| over the finite masses at losses eps_k >= x (vectorized), given
        the number of grid points there if known (then also sqrt(points) untilted_l2, Cauchy-Schwarz)."""
        loss = np.asarray(loss, dtype=float)
        bound = np.full(loss.shape, self.untilted)
        if points is not None:
            bound = np.minimum(bound, np.sqrt(np.asarray(points, dtype=float)) * self.untilted_l2)
        if self.tilt <= 0.0:
            return bound
        with np.errstate(over="ignore", invalid="ignore"):
            tilted = np.exp(self._log_weight() - self.tilt * loss)
        return np.minimum(bound, np.nan_to_num(tilted, nan=np.inf))

    def tail_start(self, amount: float) -> float:
        """The smallest loss x whose tilted tail bound is at most `amount` (tilt > 0)."""
        return (self._log_weight() - math.log(amount)) / self.tilt

    def at(self, epsilon: ArrayLike, points: ArrayLike | None = None) -> np.ndarray:
        """The bound on the profile's error at each eps (vectorized), given the number of grid points
        above each if known (DiscretePLD.round_off_at)."""
        return np.minimum(self.untilted, self.tail(epsilon, points) + self.infinity)


@dataclass(frozen=True)
class DiscretePLD:
    """P-masses `masses[i]` at losses offset + (lowest_index + i) * interval, plus `infinity_mass` at
    +infinity. The offset (0 but for optimistic PLDs of a subsampled mechanism, _cluster_offset) adds up
    under composition like the losses.

    round_off estimates the floating-point error that the FFT convolutions left in the masses (RoundOff);
    answers carry it (RoundOff.at) on their safe side. work counts what producing it cost, from the
    discretization on (discretize, fft_work): a function of the grid sizes only, never of a clock.
    """

    lowest_index: int
    interval: float
    masses: np.ndarray
    infinity_mass: float
    round_off: RoundOff = RoundOff()
    offset: float = 0.0
    work: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        """The grid losses eps_k = offset + k D of the masses."""
        return self.offset + (self.lowest_index + np.arange(self.masses.size)) * self.interval

    @cached_property
    def _suffix_sums(self) -> tuple[np.ndarray, np.ndarray]:
        """S0[j] = sum_{k >= j} m_k and R[j] = sum_{k >= j} m_k e^{eps_j - eps_k}, with S0[n] = R[n] = 0,
        computed once per PLD (epsilon_bounds' lower passes query the same PLDs up to eight times).

        R[j] is e^{eps_j} times the Q-mass above eps_j, held relative to the piece's own loss so that
        neither factor leaves the floats however large the losses (an epsilon of 7300 needs losses far
        beyond e^{+-745}): R[j] <= S0[j] <= 1. Formed in blocks of _BLOCK_LOSS of loss, within which the
        weights e^{-(k - b) D} stay above e^{-64}: R = suffix sums of m_k e^{-(k - b) D} over e^{-(j - b) D}
        plus the next block's R at its start times e^{-(start - j) D}.
        """
        masses, interval = self.masses, self.interval
        s0 = np.append(np.cumsum(masses[::-1])[::-1], 0.0)
        r = np.zeros(masses.size + 1)
        block = max(1, int(_BLOCK_LOSS / interval))
        for start in range((masses.size - 1) // block * block, -1, -block):
            stop = min(start + block, masses.size)
            offsets = np.arange(stop - start) * interval
            weights = np.exp(-offsets)
            within = np.cumsum((masses[start:stop] * weights)[::-1])[::-1] / weights
            r[start:stop] = within + r[stop] * np.exp(offsets - (stop - start) * interval)
        return s0, r

    def delta(self, epsilon: ArrayLike) -> ArrayLike:
        """The profile (*) at eps, vectorized: O(n + len(eps) log n) by suffix sums over the grid: at eps in
        the piece below eps_j, S0[j] - e^{eps - eps_j} R[j] + m_inf (_suffix_sums)."""
        epsilon = np.asarray(epsilon, dtype=float)
        s0, r = self._suffix_sums
        j = np.searchsorted(self.losses, epsilon, side="right")
        above = np.append(self.losses, np.inf)[j]  # eps_j (inf past the grid, where R[n] = 0)
        with np.errstate(over="ignore", invalid="ignore"):
            value = s0[j] - np.where(r[j] > 0.0, np.exp(epsilon - above) * r[j], 0.0) + self.infinity_mass
        value = np.where(np.isposinf(epsilon), self.infinity_mass, value)
        return as_output(np.maximum(value, self.infinity_mass))

    def round_off_at(self, epsilon: ArrayLike) -> np.ndarray:
        """The bound on the composition's round-off in the profile at each eps (RoundOff.at, with the
        number of grid points above each eps)."""
        epsilon = np.asarray(epsilon, dtype=float)
        points = self.masses.size - np.searchsorted(self.losses, epsilon, side="right")
        return self.round_off.at(epsilon, points)

    def delta_error(self, epsilon: ArrayLike) -> np.ndarray:
        """The floating-point error of `delta` at each eps (vectorized), estimated like the FFT's.

        S0[j] and R[j] sum up to n non-negative terms each; their rounding errors add up like a random
        walk, to about sqrt(n) u times the sum (u the unit round-off; Higham 2002, Sec. 4.2, where the
        worst case is n u), and S0[j] - e^{eps - eps_j} R[j] + m_inf cancels them where delta << S0[j],
        a loss distribution crowded just above eps: the suffix-sum delta of 1e-9-GDP at 0 was 1e-7
        relative below the truth. Returns ROUND_OFF_SAFETY times 2 sqrt(n + 4) u (S0[j] + m_inf).
        """
        s0, _ = self._suffix_sums
        j = np.searchsorted(self.losses, np.asarray(epsilon, dtype=float), side="right")
        unit = 0.5 * float(np.finfo(float).eps)
        return ROUND_OFF_SAFETY * 2.0 * math.sqrt(self.masses.size + 4) * unit * (s0[j] + self.infinity_mass)

    def delta_by_terms(self, epsilon: float) -> float:
        """delta(eps) as the sum of its non-negative terms m_k (1 - e^{eps - eps_k}) over eps_k > eps plus the
        mass at infinity: O(n), but without the cancellation of the suffix-sum form s0 - e^eps s1 of `delta`
        where delta << s0 (a few ulps relative instead). eps - eps_k is formed from the exact product
        eps_k = k D (_two_product) and -expm1 keeps its digits, so a loss next to eps costs none either."""
        index = (self.lowest_index + np.arange(self.masses.size)).astype(float)
        loss, error = _two_product(index, self.interval)  # loss + error = k D exactly
        epsilon = epsilon - self.offset
        above = loss > epsilon
        gap = (epsilon - loss[above]) - error[above]  # eps - k D: exact difference first, then the tail
        return float(np.sum(self.masses[above] * -np.expm1(gap))) + self.infinity_mass

    def epsilon(self, delta: ArrayLike) -> ArrayLike:
        """The smallest eps (possibly negative) with delta(eps) <= delta, solved exactly on the pieces.

        Below eps_j the profile is S0[j] - e^{eps - eps_j} R[j] + m_inf (constants of the piece), so after
        locating the piece by a search over the grid values the root is a logarithm.
        Returns +inf when delta < m_inf and -inf when delta >= the total mass.
        """
        delta = np.asarray(delta, dtype=float)
        s0, r = self._suffix_sums
        grid = s0[1:] - np.exp(-self.interval) * r[1:] + self.infinity_mass  # delta(eps_k)
        first = np.searchsorted(-grid, -delta, side="left")  # first k with delta(eps_k) <= delta
        losses = np.append(self.losses, np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            eps = losses[first] + np.log((s0[first] + self.infinity_mass - delta) / r[first])
        eps = np.where(first < grid.size, np.minimum(eps, losses[first]), eps)
        eps = np.where(delta < self.infinity_mass, np.inf, eps)
        eps = np.where(delta >= s0[0] + self.infinity_mass, -np.inf, eps)
        return as_output(eps)


def _two_product(a: np.ndarray, b: float) -> tuple[np.ndarray, np.ndarray]:
    """(p, e) with p = fl(a b) and p + e = a b exactly (Dekker's TwoProduct by Veltkamp splitting)."""
    product = a * b

    def split(x: ArrayLike) -> tuple[ArrayLike, ArrayLike]:
        scaled = 134217729.0 * x  # 2^27 + 1
        high = scaled - (scaled - x)
        return high, x - high

    a_high, a_low = split(a)
    b_high, b_low = split(b)
    error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    return product, error


def _grid(lo: float, hi: float, interval: float, max_points: int) -> tuple[int, int]:
    """Grid indices [k_lo, k_hi] covering [lo, hi] (at least 4 points); ComputationError above the cap."""
    if not (-_MAX_LOSS <= lo <= hi <= _MAX_LOSS):
        raise ComputationError(
            f"privacy-loss range [{lo:.3g}, {hi:.3g}] is outside [-700, 700]",
            hint="the mechanism's loss tails are too heavy for the numerical accountant",
        )
    k_lo, k_hi = int(np.floor(lo / interval)), int(np.ceil(hi / interval))
    k_hi = max(k_hi, k_lo + 3)
    _check_size(k_hi - k_lo + 1, max_points)
    return k_lo, k_hi


class GridTooLarge(ComputationError):
    """A grid would pass the grid-point cap."""


def _check_size(points: int, max_points: int) -> None:
    """GridTooLarge before allocating more than max_points grid points."""
    if points > max_points:
        gigabytes = points * 8 * 4 / 2**30  # masses, FFT workspace and copies: ~4 float64 arrays
        raise GridTooLarge(
            f"would need {points:,} grid points ({gigabytes:.1f} GB)",
            hint="lower the accuracy, or raise the grid-point cap",
        )


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
    work = (1 if pessimistic else _OPTIMISTIC_EVALUATIONS) * losses.size * EVALUATION_WORK
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
            hint="--method rdp has no such limit, where every mechanism has an RDP curve",
        )
    return float(candidates[small[0]])


class Tails(NamedTuple):
    """The P-mass a truncation may move off each end of a PLD. Only tightness depends on them (every move
    is on the safe side): mass cut above changes delta at every eps by up to its size, so `above` follows
    the smallest delta asked (TailTarget.tail_budget); mass cut below reaches a delta only through the
    tail of the rest of the composition and keeps the default."""

    below: float
    above: float

    def shared(self, copies: int) -> Tails:
        """The tails of one of `copies` PLDs whose moves all land in the same result."""
        return Tails(self.below / copies, self.above / copies)


def loss_range(profile: ProfileFn, reverse: ProfileFn, tails: Tails) -> tuple[float, float]:
    """[lo, hi] outside which the P-mass of the privacy loss is negligible.

    hi: delta(hi) - lim delta <= tails.above, so the connect-the-dots profile puts at most that at
    +infinity. lo: -1.1 t where t = hi of the reverse pair (Q, P) at tail = tails.below. With L' = -L under Q,
    P(L <= -s) = E_Q[e^{-L'}; L' >= s] <= e^{-s} delta_rev(s - h) / (1 - e^{-h}), so beyond 1.1 t the
    P-mass is below e^{-1.1t} tail / (1 - e^{-0.1 t}). The range only affects tightness, never rigour:
    both discretizations handle the mass outside it on the safe side.
    """
    return -1.1 * _upper_loss(reverse, tails.below), _upper_loss(profile, tails.above)


def _truncate(pld: DiscretePLD, tails: Tails, *, pessimistic: bool) -> DiscretePLD:
    """Cut each end where its cumulative mass is <= its tail, moving that mass in the safe direction.

    Pessimistic: mass above the window goes to +infinity, mass below moves up to the median of the kept
    masses (both raise the profile; the cost is at most the two tails in delta). Optimistic: mass above
    moves down to the highest kept point (a tilted PLD drops it), mass below is dropped (both lower the
    profile as much). A
    mass m moved up (down) by any distance changes delta at every eps by at most m, upwards
    (downwards), here and in every composition with this PLD: (1 - e^{eps - L})_+ is increasing in L
    and within [0, 1]. The median rather than the window's edge: a mass left at the lower edge,
    composed with the rest, seeds a copy of the whole distribution a window-width further down, which
    holds about the tail budget, so the next truncation cannot cut it and the window never shrinks (the
    add direction of q 1e-4, sigma 0.5 kept [-12, 1] over 1e5 steps where the mass is within [-4, 1]).
    A tilted pessimistic PLD keeps the lowest kept point: there mass weighs least in the tilted norms.
    Entries of a plain FFT are exact only up to its round-off, which may look like mass: each end also
    cuts up to the untilted round-off more. Moving masses moves their round-off errors too
    (_moved_round_off), but for the mass a tilted pessimistic PLD moves up: it adds a bound on their
    errors to the mass moved instead (_cut_errors), which keeps the result pessimistic and its errors
    where they were, spread in l2.
    """
    masses = pld.masses
    below = np.cumsum(masses)
    above = np.cumsum(masses[::-1])
    noise = pld.round_off.untilted  # plain-FFT entries this small may be all error: cut with the tails
    if not pessimistic:  # the optimistic PLD may drop or lower any mass: up to the safety factor's worth
        noise *= ROUND_OFF_SAFETY
    first = int(np.searchsorted(below, tails.below + noise, side="right"))
    noise_above = noise if pld.round_off.tilt <= 0.0 else 0.0  # tilted tops are accurate (_lowest_cut)
    last = masses.size - 1 - int(np.searchsorted(above, tails.above + noise_above, side="right"))
    if last < first:
        first = last = int(np.argmax(masses))
    if pessimistic:
        last = max(last, _lowest_cut(pld, tails.above) - 1)
    kept = masses[first : last + 1].copy()
    cut_below = float(below[first - 1]) if first > 0 else 0.0
    cut_above = float(above[masses.size - 2 - last]) if last < masses.size - 1 else 0.0
    centre = 0
    if pessimistic and pld.round_off.tilt <= 0.0:  # (a tilted round-off weighs mass moved up by e^{t eps})
        half = 0.5 * (below[last] + cut_below)  # the median of the kept masses, from the cumulative sums
        centre = min(int(np.searchsorted(below[first : last + 1], half)), kept.size - 1)
    infinity = pld.infinity_mass
    if pessimistic:
        kept[centre] += cut_below + _cut_errors(pld.round_off, first)
        infinity += cut_above
    else:
        kept[-1] += max(cut_above - _cut_errors(pld.round_off, masses.size - 1 - last), 0.0)
    round_off = _moved_round_off(pld, last, pessimistic=pessimistic)
    lowest = pld.lowest_index + first
    return replace(pld, lowest_index=lowest, masses=kept, infinity_mass=infinity, round_off=round_off)


def _cut_errors(error: RoundOff, count: int) -> float:
    """A bound on the errors of `count` masses that a truncation moves into one point, min(l1, sqrt(count)
    l2) of the untilted errors: the pessimistic mass moved up carries it on top, the optimistic mass
    moved down leaves it out. The moved mass is then at least (at most) the true one, so the PLD stays
    pessimistic (optimistic), and those errors leave the error norms instead of gathering in one point,
    where they would grow the l2 norms by up to the l1 norm at every truncation. The extra mass costs
    delta only its share of the tail, which the composition computes (at q 6.4e-5, sigma 0.9, 156250
    steps the tilted norm grew 1e5-fold through gathered errors, and delta 1e-9 had no upper bound).
    """
    return min(error.untilted, math.sqrt(count) * error.untilted_l2) if count > 0 else 0.0


def _lowest_cut(pld: DiscretePLD, tail: float) -> int:
    """The first index whose loss may be moved to infinity: with a tilt t, errors moved there join the
    error of the mass at infinity (every eps), and are at most RoundOff.tail(eps_k) above index k, so the
    cut starts where that is below the tail; 0 without a tilt (the untilted bound covers it)."""
    error = pld.round_off
    if error.tilt <= 0.0 or tail <= 0.0:
        return 0
    lowest = error.tail_start(tail)
    return min(int(np.searchsorted(pld.losses, lowest, side="left")), pld.masses.size)


def _moved_round_off(pld: DiscretePLD, last: int, *, pessimistic: bool) -> RoundOff:
    """The round-off after a truncation whose highest kept index is `last`: the pessimistic mass above
    moves to infinity, and so do its errors, which join the error of the mass at infinity (the moved
    finite masses carry bounds on theirs instead, _cut_errors). Above the cut eps_c they sum to at most
    RoundOff.tail(eps_c); the error the mass at infinity already carries is not among them. (RoundOff.at
    adds that one too: taking it here counted it twice at every truncation, and with a truncation after
    each of the 2 log2(T) convolutions it grew 4-fold per squaring instead of 2-fold: 1.8e-10 at 1e7
    MNIST steps, a floor of 4e-9 on delta.)"""
    error = pld.round_off
    above = pld.masses.size - 1 - last
    if not pessimistic or above == 0:
        return error
    loss_cut = pld.offset + (pld.lowest_index + last + 1) * pld.interval
    return replace(error, infinity=error.infinity + float(error.tail(loss_cut, above)))


def fft_convolve(a: np.ndarray, b: np.ndarray, square: bool) -> np.ndarray:
    """The non-negative linear convolution of a and b by a real FFT (one forward transform for a square)."""
    from scipy import fft  # on first composition only: closed forms that share DiscretePLD stay light

    size = a.size + b.size - 1
    length = fft.next_fast_len(size, real=True)
    spectrum = fft.rfft(a, length)
    spectrum = spectrum * spectrum if square else spectrum * fft.rfft(b, length)
    return np.maximum(fft.irfft(spectrum, length)[:size], 0.0)


def fft_error(size: int) -> float:
    """eps_machine log2(size): the relative round-off of each frequency of an FFT convolution of length
    `size` (Percival 2003 bounds it by a small multiple of this), the unit of fft_round_off."""
    return float(np.finfo(float).eps * np.log2(max(size, 2)))


def fft_work(size: int, square: bool) -> float:
    """The work of a convolution whose result has `size` points (fft_convolve): its transforms (two for a
    square, else three) of about that length, n log2 n each, the unit in which DiscretePLD.work and the
    refinement's budget (work_budget) count. The O(n) passes around them (truncation, heavy points) grow
    alike and are in the calibration of work_budget."""
    return (2.0 if square else 3.0) * size * math.log2(max(size, 2))


class Norms(NamedTuple):
    """Estimated l1 and l2 norms of a convolution's round-off error."""

    l1: float
    l2: float


def _l2(masses: np.ndarray) -> float:
    """|masses|_2 (not np.linalg.norm: BLAS threads stall beside the compositions')."""
    return math.sqrt(float(np.square(masses).sum()))


def fft_round_off(a: np.ndarray, b: np.ndarray, result: np.ndarray) -> Norms:
    """Estimated round-off of `result`, the FFT convolution (fft_convolve) of non-negative a and b,
    n = result.size:

        l2: fft_error(n) (|a|_2 |b|_1 + |a|_1 |b|_2),
        l1: fft_error(n) max(|a|_1 |b|_1, sqrt(n) |result|_2).

    l2: a forward transform errs by about fft_error(n) |A|_2 = fft_error(n) sqrt(N) |a|_2 in l2 (Higham
    2002, Sec. 24.1, for a length-N transform), and a product's factor is at most |B|_inf <= |b|_1; the
    inverse transform scales by 1 / sqrt(N) in l2 (Parseval). l1: the inverse transform spreads the
    errors over the n entries, about fft_error(n) |result|_2 / sqrt(n) each, so sqrt(n) |result|_2
    fft_error(n) in l1; mass spread over many points has sqrt(n) |result|_2 near |a|_1 |b|_1, mass held
    by a few points has it up to sqrt(n) times larger, and there |a|_1 |b|_1 alone undercounted the
    error 8-fold (4e4 points). Measured errors (tests/core/test_pld.py, shapes from spread to comb-like,
    1e3 to 1e5 points) stay below a ninth of the l1 and a fourteenth of the l2 estimate. convolve keeps
    points that hold much of the mass out of the FFT.
    """
    l1_a, l1_b = float(a.sum()), float(b.sum())
    l2_a, l2_b = _l2(a), _l2(b)
    unit = fft_error(result.size)
    return Norms(
        unit * max(l1_a * l1_b, math.sqrt(result.size) * _l2(result)), unit * (l2_a * l1_b + l1_a * l2_b)
    )


HEAVY_SHARE = 1.0 / 16.0
"""A point holding at least this share of an array's mass is convolved directly (convolve): at most 16."""


def _split(masses: np.ndarray, total: float) -> tuple[np.ndarray, np.ndarray]:
    """(indices of the masses of at least HEAVY_SHARE of the total, the masses with those set to 0)."""
    if masses.size == 0 or float(masses.max()) < HEAVY_SHARE * total:
        return np.empty(0, dtype=int), masses
    heavy = np.flatnonzero(masses >= HEAVY_SHARE * total)
    light = masses.copy()
    light[heavy] = 0.0
    return heavy, light


def convolve(a: np.ndarray, b: np.ndarray, square: bool) -> tuple[np.ndarray, Norms]:
    """a * b (non-negative masses) and an estimate of its round-off (Norms).

    a * b = H_a * b + L_a * H_b + L_a * L_b with H the points holding HEAVY_SHARE of the mass or more and
    L the rest: the first two as shifted copies (each entry a sum of at most k + 1 non-negative terms,
    off by (k + 1) eps_machine of itself, k the number of heavy points), the last by FFT, whose round-off
    (fft_round_off) is then that of the light masses only. A subsampled step's PLD holds nearly all of its
    mass at one point (loss 0 or the kink log(1 - q)): split, its FFT round-off is that of the mass q
    around it.
    """
    heavy_a, light_a = _split(a, float(a.sum()))
    heavy_b, light_b = (heavy_a, light_a) if square else _split(b, float(b.sum()))
    result = fft_convolve(light_a, light_b, square)
    error = fft_round_off(light_a, light_b, result)
    for index in heavy_a:
        result[index : index + b.size] += a[index] * b
    for index in heavy_b:
        result[index : index + a.size] += b[index] * light_a
    relative = (heavy_a.size + heavy_b.size + 1) * float(np.finfo(float).eps)
    return result, Norms(error.l1 + relative * float(result.sum()), error.l2 + relative * _l2(result))


def _log_tilted(pld: DiscretePLD, tilt: float) -> tuple[np.ndarray, float]:
    """(m_k e^{t eps_k - c}, c) with c the largest exponent: the tilted masses scaled into range, and
    log sum_k m_k e^{t eps_k} = c + log(sum of the first)."""
    with np.errstate(divide="ignore"):
        exponents = np.log(pld.masses) + tilt * pld.losses
    scale = float(np.max(exponents))
    return np.exp(exponents - scale), scale


def _convolve(first: DiscretePLD, second: DiscretePLD, max_points: int) -> tuple[np.ndarray, RoundOff]:
    """Convolution of the P-masses by FFT, and its round-off (RoundOff).

    A later convolution with non-negative masses of total at most 1 grows neither an l1 nor an l2 error
    (Young: |e * b|_p <= |e|_p |b|_1), so the estimates of successive convolutions add up (a square
    doubles its input's error).

    With a tilt t > 0 the masses are also convolved as m_k e^{t eps_k} (an exponential tilt commutes with
    convolution: e^{t (a + b)} = e^{t a} e^{t b}); that FFT's error is relative to the tilted masses, so
    after untilting it is e^{-t eps_k} times smaller at large losses, where small deltas live. Each entry
    takes the result of the run with the smaller error bound; the switch is the loss L_c where the
    plain run's fresh l2 error, weighed by e^{t L_c}, meets the tilted run's: below it the plain entries
    add at most e^{t L_c} times their norms to the tilted norms, above it the tilted entries at most
    e^{-t L_c} times theirs to the untilted norms.
    """
    a, b = first.masses, second.masses
    size = a.size + b.size - 1
    _check_size(2 * size, max_points)
    square = first is second
    plain, fresh = convolve(a, b, square)
    error_a, error_b = first.round_off, second.round_off
    mass_a, mass_b = float(a.sum()), float(b.sum())
    untilted = error_a.untilted * mass_b + mass_a * error_b.untilted + fresh.l1
    untilted_l2 = error_a.untilted_l2 * mass_b + mass_a * error_b.untilted_l2 + fresh.l2
    infinity = error_a.infinity + error_b.infinity
    infinity += first.infinity_mass * error_b.untilted + error_a.untilted * second.infinity_mass
    tilt = error_a.tilt
    if tilt <= 0.0 or not (a.any() and b.any()):  # (no finite mass, e.g. a negligible mechanism's lower
        return plain, RoundOff(untilted, min(untilted, untilted_l2), infinity=infinity)  # PLD: no tilt)
    (tilted_a, scale_a), (tilted_b, scale_b) = _log_tilted(first, tilt), _log_tilted(second, tilt)
    tilted, tilted_fresh = convolve(tilted_a, tilted_b, square)
    scale = scale_a + scale_b
    offset = first.offset + second.offset
    losses = offset + (first.lowest_index + second.lowest_index + np.arange(size)) * first.interval
    with np.errstate(divide="ignore", over="ignore"):  # inf only where the plain run is taken
        from_tilted = np.exp(np.log(tilted) + scale - tilt * losses)
        lift = float(np.log(tilted_fresh.l2) + scale - np.log(fresh.l2))  # t L_c
    if not np.isfinite(lift):  # one run is exact: take it everywhere
        lift = -np.inf if tilted_fresh.l2 == 0.0 else np.inf
    masses = np.where(tilt * losses >= lift, from_tilted, plain)
    share = fresh.l2 / tilted_fresh.l2 if np.isfinite(lift) else 0.0  # e^{scale - t L_c}
    log_mass_a, log_mass_b = scale_a + np.log(tilted_a.sum()), scale_b + np.log(tilted_b.sum())

    def tilted_norm(log_a: float, log_b: float, fresh_plain: float, fresh_tilted: float) -> float:
        """A tilted norm of the result: propagated, plus the fresh errors of each run where it is taken."""
        norm = float(np.logaddexp(log_a + log_mass_b, log_mass_a + log_b))
        if np.isfinite(lift) and fresh_plain > 0.0:
            norm = float(np.logaddexp(norm, lift + np.log(fresh_plain)))
        return float(np.logaddexp(norm, np.log(fresh_tilted) + scale)) if fresh_tilted > 0.0 else norm

    return masses, RoundOff(
        untilted=untilted + share * tilted_fresh.l1,
        untilted_l2=min(untilted, untilted_l2 + share * tilted_fresh.l2),
        tilt=tilt,
        log_tilted=tilted_norm(error_a.log_tilted, error_b.log_tilted, fresh.l1, tilted_fresh.l1),
        log_tilted_l2=tilted_norm(error_a.log_tilted_l2, error_b.log_tilted_l2, fresh.l2, tilted_fresh.l2),
        infinity=infinity,
        interval=first.interval,
    )


def _compose_pair(
    first: DiscretePLD, second: DiscretePLD, *, pessimistic: bool, tails: Tails, max_points: int
) -> DiscretePLD:
    """The PLD of the composition: convolved masses (offsets add) then truncation.

    Infinite loss: P(L1 + L2 = inf) = a (F2 + b) + F1 b with a, b the infinity masses and F1, F2 the
    finite masses (= 1 - (1 - a)(1 - b) for probability measures; exact for sub-probabilities too).
    """
    masses, round_off = _convolve(first, second, max_points)
    a, b = first.infinity_mass, second.infinity_mass
    infinity_mass = a * (float(second.masses.sum()) + b) + float(first.masses.sum()) * b
    square = first is second
    runs = 2 if round_off.tilt > 0.0 else 1  # a tilted composition convolves twice (_convolve)
    work = first.work + (0.0 if square else second.work) + runs * fft_work(masses.size, square)
    composed = DiscretePLD(
        first.lowest_index + second.lowest_index,
        first.interval,
        masses,
        min(infinity_mass, 1.0),
        round_off,
        first.offset + second.offset,
        work,
    )
    return _truncate(composed, tails, pessimistic=pessimistic)


def compose(
    plds: Sequence[DiscretePLD], *, pessimistic: bool, tails: Tails, max_points: int = MAX_POINTS
) -> DiscretePLD:
    """Composition of a heterogeneous list of PLDs on one grid (FFT convolutions with truncation).

    Each truncation moves at most the two tails of P-mass, i.e. changes delta by at most their sum, in
    the safe direction (see _truncate): with n PLDs the total cost is at most n - 1 times that.
    """
    result = plds[0]
    for pld in plds[1:]:
        result = _compose_pair(result, pld, pessimistic=pessimistic, tails=tails, max_points=max_points)
    return result


def self_compose(
    pld: DiscretePLD, times: int, *, pessimistic: bool, tails: Tails, max_points: int = MAX_POINTS
) -> DiscretePLD:
    """The times-fold composition of pld with itself by repeated squaring (about 2 log2(times) FFTs).

    A mass moved when truncating a power moves in every copy of that power in the result, and the power
    squared at a step where r of the bits of times remain (times >> j = r) is used r times: its
    truncation uses tails.shared(r). Each of the at most 2 log2(times) truncations then changes delta
    by at most the sum of the tails (safe direction).
    """
    pair = partial(_compose_pair, pessimistic=pessimistic, max_points=max_points)
    result, power = None, pld
    while True:
        if times & 1:
            factor = replace(power, work=0.0)  # power.work is counted once, at the end: result shares it
            result = factor if result is None else pair(result, factor, tails=tails)
        times >>= 1
        if not times:
            return replace(result, work=result.work + power.work)
        power = pair(power, power, tails=tails.shared(times))


Components = Sequence[tuple[DominatingPair, int]]


@dataclass(frozen=True)
class Bounds:
    """Rigorous bounds lower <= true value <= upper (floats, or arrays for array queries), found with grid
    interval `interval`; `reached` is False when the refinement stopped at its work or size budget before
    the asked accuracy (the bounds are still rigorous, only wider); `carried` is how much wider than asked
    they are at the widest query where the asked width was met but for the round-off they carry
    (Measurement.slack), which no finer grid removes; `work` is the grid work the refinement spent
    (Composed.work over its grids); `swallowed` marks the queries whose upper bound the round-off
    swallowed on every grid (epsilon_bounds: upper is inf there, saying nothing of the truth)."""

    upper: ArrayLike
    lower: ArrayLike
    interval: float
    reached: bool = True
    carried: float = 0.0
    work: float = 0.0
    swallowed: np.ndarray | bool = False


@dataclass(frozen=True)
class TailTarget:
    """Where a query needs the composition accurate: at the smallest delta asked (epsilon queries; with the
    epsilon of the answer where that is roughly known) or the largest epsilon asked (delta queries).
    Decides the tilt of the composition (_tilt, at most max_tilt) and, for deltas, how much mass
    truncations may move."""

    delta: float | None = None
    epsilon: float | None = None
    max_tilt: float = _MAX_TILT

    def tails(self) -> Tails:
        """The P-mass one truncation may move: _TAIL_BUDGET, above the window at most a millionth of the
        smallest delta asked."""
        above = _TAIL_BUDGET if self.delta is None else min(_TAIL_BUDGET, 1e-6 * self.delta)
        return Tails(_TAIL_BUDGET, above)


@dataclass(frozen=True)
class Composed:
    """The composed PLDs of every direction: pessimistic (upper profile) and optimistic (lower)."""

    upper: list[DiscretePLD]
    lower: list[DiscretePLD]

    def round_off(self) -> float:
        """The largest untilted FFT round-off estimate of the composed PLDs (valid at every eps)."""
        return max(p.round_off.untilted for p in self.upper + self.lower)

    def round_off_at(self, epsilon: ArrayLike) -> np.ndarray:
        """ROUND_OFF_SAFETY times the largest round-off bound of the composed profiles at each eps."""
        return ROUND_OFF_SAFETY * np.max([p.round_off_at(epsilon) for p in self.upper + self.lower], axis=0)

    def delta_error(self, epsilon: ArrayLike) -> np.ndarray:
        """The largest bound on the composed profiles' evaluation errors at each eps (DiscretePLD)."""
        return np.max([p.delta_error(epsilon) for p in self.upper + self.lower], axis=0)

    def points(self) -> int:
        """The size of the largest composed array."""
        return max(p.masses.size for p in self.upper + self.lower)

    def work(self) -> float:
        """What composing them cost (DiscretePLD.work), summed over the compositions."""
        return sum(p.work for p in self.upper + self.lower)


class _Side(NamedTuple):
    """One component in one direction: its profile, the reverse pair's profile, a loss-range hint, and
    the loss at the edge of the crowd that holds most of its mass (DominatingPair.kink; negated in the
    add direction, where it is the largest loss), if any."""

    profile: ProfileFn
    reverse: ProfileFn
    hint: tuple[float, float] | None
    kink: float | None


def _directions(components: Components) -> list[list[_Side]]:
    """Per direction, every component's _Side.

    The remove direction uses each pair's hint and kink as given; the add direction of an asymmetric
    pair (the reverse pair, loss L' = -L) uses them mirrored. One direction if every pair is symmetric.
    """
    remove = [
        _Side(pair.remove, pair.add or pair.remove, pair.loss_range, pair.kink) for pair, _ in components
    ]
    if all(pair.add is None for pair, _ in components):
        return [remove]
    add = [
        _Side(pair.add, pair.remove, _mirror(pair.loss_range), None if pair.kink is None else -pair.kink)
        if pair.add
        else side
        for side, (pair, _) in zip(remove, components, strict=True)
    ]
    return [remove, add]


def _mirror(hint: tuple[float, float] | None) -> tuple[float, float] | None:
    """The loss range [-hi, -lo] of the reverse pair."""
    return None if hint is None else (-hint[1], -hint[0])


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


def _cumulants(
    logs: Sequence[tuple[np.ndarray, np.ndarray]], times: Sequence[int], tilt: float
) -> tuple[float, float]:
    """K(t) = log E[e^{t L}] of the composed finite loss, and K'(t) = its mean under the tilt t, from each
    base's (log m_k, eps_k).

    Terms below e^_NEGLIGIBLE times the largest are left out: they change no digit of the sums, and an
    exponential that underflows into the subnormal range costs some 30 times a normal one. A base
    without finite mass (a negligible mechanism's, all of it cut) is left out too: it has no centre."""
    value, slope = 0.0, 0.0
    for (log_masses, losses), count in zip(logs, times, strict=True):
        exponents = log_masses + tilt * losses
        scale = float(np.max(exponents))
        if scale == -np.inf:
            continue
        exponents -= scale
        exponents[exponents < _NEGLIGIBLE] = -np.inf
        weights = np.exp(exponents)
        value += count * (scale + np.log(weights.sum()))
        slope += count * float(np.sum(weights * losses)) / float(weights.sum())  # (not @: fft_round_off)
    return value, slope


def _tilt(bases: Sequence[DiscretePLD], times: Sequence[int], target: TailTarget | None) -> float:
    """The exponential tilt t >= 0 under which the composed loss is centred where the query looks.

    0 without a target. Else the saddle point of the Chernoff bound: K'(t) = eps where the target names an
    eps (a delta query, or an epsilon query whose answer is known roughly: every direction is then tilted
    at it, the add direction of a Poisson step, whose own delta-tail is far thinner, too), else
    t K'(t) - K(t) = log(1 / delta) (the tilted mean is the epsilon whose tail is delta); found by
    bisection on [0, target.max_tilt].
    """
    if target is None:
        return 0.0
    with np.errstate(divide="ignore"):
        logs = [(np.log(base.masses), base.losses) for base in bases]

    def short(tilt: float) -> bool:  # the tilted centre is still below the target
        value, slope = _cumulants(logs, times, tilt)
        if target.epsilon is not None:
            return slope < float(target.epsilon)
        return tilt * slope - value < -np.log(float(target.delta))

    if not short(0.0):
        return 0.0
    if short(target.max_tilt):
        return target.max_tilt
    low, high = 0.0, target.max_tilt
    for _ in range(_BISECTIONS):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if short(middle) else (low, middle)
    return high


def _compose_direction(
    direction: list[_Side],
    times: list[int],
    interval: float,
    *,
    pessimistic: bool,
    max_points: int,
    target: TailTarget | None,
) -> DiscretePLD:
    """Discretize every component of one direction, self-compose each, then compose the list.

    Components repeated the same number of times n are composed once first and their product is then
    self-composed n times (composition commutes: (x)_i B_i^n = ((x)_i B_i)^n): a schedule of 60
    distinct one-epoch phases costs 59 small convolutions and one self-composition instead of 60
    self-compositions (about 2 log2(n) convolutions each).

    Tails: with budget b per end (TailTarget.tails), each of the sum(times) copies puts at most
    b / sum(times) at the grid ends (loss_range and the trimming of the discretized PLD), each
    convolution truncates at most b per end (self_compose; a product of bases is used n times, so its
    truncations take b / n): with c convolutions delta moves by at most (c + 1) (b_below + b_above)
    (safe side).
    """
    budget = target.tails() if target is not None else Tails(_TAIL_BUDGET, _TAIL_BUDGET)
    tails = budget.shared(sum(times))
    bases = []
    for side in direction:
        support = side.hint if side.hint is not None else loss_range(side.profile, side.reverse, tails)
        crowded = not pessimistic and side.kink is not None
        base = discretize(
            side.profile,
            interval,
            pessimistic=pessimistic,
            loss_range=support,
            max_points=max_points,
            reverse=side.reverse,
            offset=_cluster_offset(side.profile, side.kink, interval) if crowded else 0.0,
        )
        bases.append(_truncate(base, tails, pessimistic=pessimistic))
    tilt = _tilt(bases, times, target)
    groups: dict[int, list[DiscretePLD]] = {}
    for base, count in zip(bases, times, strict=True):
        groups.setdefault(count, []).append(replace(base, round_off=RoundOff(tilt=tilt, interval=interval)))
    plds = [
        self_compose(
            compose(group, pessimistic=pessimistic, tails=budget.shared(count), max_points=max_points),
            count,
            pessimistic=pessimistic,
            tails=budget,
            max_points=max_points,
        )
        for count, group in groups.items()
    ]
    return compose(plds, pessimistic=pessimistic, tails=budget, max_points=max_points)


def compose_all(
    components: Components, interval: float, max_points: int, target: TailTarget | None = None
) -> Composed:
    """Upper and lower composed PLDs of every direction on the grid k * interval, accurate at `target`.

    The (up to four) compositions are independent and spend their time in FFTs and numpy loops that
    release the GIL, so they run on threads, one per core (1.9x faster wall time on 2 cores). With more
    jobs than cores the pessimistic ones run first and the optimistic ones only when all of those
    succeeded: the optimistic discretization costs several times more, and a first grid that the size
    cap refuses (GridTooLarge) would otherwise have started it (q 1e-5, sigma 0.5, T 1e4: 1.3 s wasted).
    """
    times = [int(count) for _, count in components]
    if not components or min(times) < 1:
        raise ComputationError("nothing to compose", hint="give at least one mechanism, each at least once")
    directions = _directions(components)
    run = partial(_compose_direction, times=times, interval=interval, max_points=max_points, target=target)
    workers = min(2 * len(directions), os.cpu_count() or 1)
    waves = [(True, False)] if 2 * len(directions) <= workers else [(True,), (False,)]
    plds: list[DiscretePLD] = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for wave in waves:
            jobs = [(direction, pessimistic) for pessimistic in wave for direction in directions]
            plds += pool.map(lambda job: run(job[0], pessimistic=job[1]), jobs)
    return Composed(upper=plds[: len(directions)], lower=plds[len(directions) :])


def _loss_shape(pair: DominatingPair) -> tuple[float, float]:
    """The standard deviation of the remove-direction privacy loss, from a 2000-point discretization of
    the range that holds all but 1e-9 of it at each end, and the width of the range that holds all but
    1e-15 (loss_range; compositions cut their steps' tails about that fine). Where the first range is
    empty (delta(0) <= 1e-9: the loss is within the scan's smallest step of 0 but for 1e-9), the
    discretization covers the second; (0, 0) where that is empty too (a negligible mechanism)."""
    reverse = pair.add or pair.remove
    wide = pair.loss_range or loss_range(pair.remove, reverse, Tails(1e-15, 1e-15))
    support = pair.loss_range or loss_range(pair.remove, reverse, Tails(1e-9, 1e-9))
    support = support if support[1] > support[0] else wide
    if not support[1] > support[0]:
        return 0.0, 0.0
    coarse = discretize(pair.remove, (support[1] - support[0]) / 2000, pessimistic=True, loss_range=support)
    mass = coarse.masses.sum()
    mean = float(coarse.masses @ coarse.losses) / mass
    return float(np.sqrt(coarse.masses @ (coarse.losses - mean) ** 2 / mass)), wide[1] - wide[0]


def initial_interval(components: Components, accuracy: float, *, cheap: bool = True) -> float:
    """A first grid interval for the relative accuracy, from the empirical gap model below.

    For N_i compositions of losses of standard deviation s_i (composed scale S = sqrt(sum N_i s_i^2))
    the relative gap of the bounds is about 0.02 D^2 sum(N_i / s_i) / S (fitted on Gaussian, sigma=20
    x1000, and Poisson-subsampled Gaussian, MNIST DP-SGD, compositions). Capped at 0.05. The model
    fails for a component whose losses are far narrower than the grid (a tiny eps): its discretization
    error is bounded by its own small effect, not by D^2 / s_i, so scales below 1e-3 S count as 1e-3 S
    (refinement measures the actual gap in any case). Never finer than S / _FIRST_GRID: a tiny accuracy
    then starts on a grid of a few hundred thousand points and refines within the budget (_refine)
    instead of starting beyond it.

    `cheap`: also never finer than a step's loss range (_loss_shape) over _FIRST_POINTS, so that the
    first grid costs little; refinement aims from its measured gap (second order). The model was fitted
    before the optimistic PLD kept the crowd of a subsampled mechanism's losses (_cluster_offset), and
    at small rates and noise it asks for grids far finer than needed: q 1e-5, sigma 0.5, T 1e4 started
    on 1.1 million points a step (refused by the first grid's cap, then 275 000) for bounds 28x
    narrower than asked. Measured in-process: that run 1.25 -> 0.21 s, its 1e6 steps 3.10 -> 0.93 s,
    q 1e-4, sigma 0.5, T 1e5 0.88 -> 0.24 s; MNIST and other settings where the model asks for a coarser
    grid than this are unchanged.
    """
    shapes = [(_loss_shape(pair), int(count)) for pair, count in components]
    composed = float(np.sqrt(sum(count * scale**2 for (scale, _), count in shapes)))
    floor = max(1e-3 * composed, 1e-12)
    density = sum(count / max(scale, floor) for (scale, _), count in shapes)
    modelled = np.sqrt(accuracy * composed / (0.02 * density))
    first = max(span for (_, span), _ in shapes) / _FIRST_POINTS if cheap else 0.0
    return float(min(0.05, max(modelled, composed / _FIRST_GRID, first, _FINEST_FIRST)))


class Measurement(NamedTuple):
    """Bounds at every query from one composed grid, the part of their gap that no finer grid removes
    (`slack`: the round-off carried into the bounds), and the queries that do not decide refinement
    (`settled`: answered exactly, or left to another composition), among them those whose upper bound the
    round-off swallowed (`swallowed`)."""

    upper: np.ndarray
    lower: np.ndarray
    slack: np.ndarray | float = 0.0
    settled: np.ndarray | bool = False
    swallowed: np.ndarray | bool = False


def _refine(
    compose: Compositions,
    measure: Callable[[Composed], Measurement],
    accuracy: float,
    absolute: float,
    max_points: int,
    interval: float,
    target: TailTarget | None = None,
    budget: float | None = None,
    widest: float = math.inf,
) -> Bounds:
    """Shrink the grid interval until upper <= lower + min(accuracy lower + absolute, widest) (or + the
    measurement's slack) at every unsettled query, within max_points, and return the bounds at every
    query (arrays): at each query the tightest of all grids' bounds (each grid's are rigorous, so their
    intersection is; grids of different alignment are tight at different queries, e.g. at an atom of the
    loss).

    The gap is second order in the interval, so the next interval aims at the target with a 10 %
    margin (and at least halves); before composing on it its size and work (Composed.work) are
    predicted from the last one (both grow like 1 / interval): when the size would pass max_points or
    the work spent would pass the budget (by default work_budget of the accuracy asked), the bounds
    found are returned with reached=False (the first grid always runs: where it would pass the cap, or
    _FIRST_MAX_POINTS, a grid up to _COARSENINGS times 4 coarser is tried). When the work left allows
    less than the aimed interval, the next grid is the finest that fits (if at least twice as fine).
    Work is counted from grid sizes, never timed, so the grids and the answer depend on the input only.
    Starts at `interval`. If finer grids stop closing the gap
    (three refinements in a row, each at least halving the interval, without shrinking the worst gap by
    a third: the rest of the gap is not discretization but tail truncation or round-off, which a finer
    grid cannot remove), the bounds found are returned: rigorous, just wider than asked.
    (Single refinements can stall by grid alignment.)
    """
    known: Bounds | None = None
    best_gap = np.inf
    stalls = coarsenings = 0
    spent = 0.0
    budget = work_budget(max(accuracy, absolute)) if budget is None else budget
    while True:
        cap = max_points if known is not None else min(max_points, _FIRST_MAX_POINTS)
        try:
            composed = compose(interval, cap, target)
        except GridTooLarge:
            if known is not None:  # the size prediction fell short: the bounds found stand
                return replace(known, reached=False)
            if coarsenings >= _COARSENINGS:
                raise
            coarsenings, interval = coarsenings + 1, 4.0 * interval
            continue
        measured = measure(composed)
        work = composed.work()
        spent += work
        found = Bounds(
            measured.upper, measured.lower, float(interval), work=spent, swallowed=measured.swallowed
        )
        known = _tightest(known, found)
        gap, asked, slack = _worst_gap(known, measured, accuracy, absolute, widest)
        allowed = asked + slack
        progress.report(
            f"PLD accountant: {composed.points():,}-point grid, bounds {gap:.2g} apart (asked {allowed:.2g})"
        )
        if gap <= allowed:
            return replace(known, carried=max(gap - asked, 0.0))
        stalls = stalls + 1 if gap > best_gap * (2.0 / 3.0) else 0
        best_gap = min(best_gap, gap)
        if stalls >= 3:
            return known
        wanted = (
            0.25
            if not np.isfinite(gap) or allowed <= 0
            else min(0.5, max(0.125, 0.9 * np.sqrt(allowed / gap)))
        )
        remaining = budget - spent
        over = work / remaining if remaining > 0 else math.inf
        affordable = 1.2 * max(composed.points() / max_points, over)  # smallest shrink
        if affordable > 0.5:  # not even a grid twice as fine fits
            return replace(known, reached=False)
        interval *= max(wanted, affordable)


def _tightest(known: Bounds | None, new: Bounds) -> Bounds:
    """The tighter of two rigorous bounds at every query (both hold, so their intersection does), with
    the rest (interval, work) of the newer; a query stays swallowed only if both swallowed it."""
    if known is None:
        return new
    upper, lower = np.minimum(known.upper, new.upper), np.maximum(known.lower, new.lower)
    return replace(new, upper=upper, lower=lower, swallowed=known.swallowed & new.swallowed)


def _worst_gap(
    bounds: Bounds, measured: Measurement, accuracy: float, absolute: float, widest: float
) -> tuple[float, float, float]:
    """(gap, asked gap, slack) at the unsettled query furthest beyond its allowance: the asked gap
    min(accuracy lower + absolute, widest) plus its slack, the round-off the bounds carry ((0, 0, 0) if
    all are settled)."""
    upper, lower = np.atleast_1d(bounds.upper), np.atleast_1d(bounds.lower)
    slack = np.broadcast_to(measured.slack, upper.shape)
    open_ = ~np.broadcast_to(measured.settled, upper.shape)
    if not np.any(open_):
        return 0.0, 0.0, 0.0
    with np.errstate(invalid="ignore"):
        asked = np.minimum(accuracy * lower + absolute, widest)
        excess = np.where(open_, upper - lower - asked - slack, -np.inf)
    worst = int(np.argmax(excess))
    return float(upper[worst] - lower[worst]), float(asked[worst]), float(slack[worst])


def _shaped(bounds: Bounds, shape: tuple[int, ...]) -> Bounds:
    """Bounds with the query's shape (floats for a scalar query)."""
    return replace(
        bounds,
        upper=as_output(np.reshape(bounds.upper, shape)),
        lower=as_output(np.reshape(bounds.lower, shape)),
        swallowed=np.reshape(np.broadcast_to(bounds.swallowed, np.shape(bounds.upper)), shape),
    )


def predicted_round_off(components: Components) -> float:
    """The round-off a plain (untilted) composition is expected to carry (Composed.round_off_at): with
    repeated squaring each copy contributes about two FFT errors of an array of up to 2^20 points."""
    copies = sum(int(count) for _, count in components)
    return ROUND_OFF_SAFETY * 2.0 * copies * fft_error(2**20)


def _epsilons(plds: Sequence[DiscretePLD], deltas: np.ndarray) -> np.ndarray:
    """The worst direction's epsilon at each delta (+inf where a delta is <= 0)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        values = np.max([np.atleast_1d(p.epsilon(np.maximum(deltas, 0.0))) for p in plds], axis=0)
    return np.where(deltas > 0.0, values, np.inf)


def _lower_epsilons(composed: Composed, deltas: np.ndarray) -> np.ndarray:
    """Rigorous lower bounds on the epsilon at each delta, through the round-off g(eps) of the composition
    (Composed.round_off_at, non-increasing in eps): any x with delta_lower(x) - g(x) > delta, delta_lower
    the worst optimistic profile, has a true delta(x) > delta, so the true epsilon is above x.

    From x0, the eps at delta + g(-inf), each x_{i+1} = eps at delta + g(x_i) is such an x (g(x_{i+1}) <=
    g(x_i)); after _LOWER_PASSES of them, bisection between the last and the optimistic epsilon at delta
    itself keeps the largest such x it meets. The passes alone stall where g falls steeply (a tilted
    composition's, by e^{-t eps} with t in the hundreds): at q 1e-5, sigma 1.1, 1e7 steps at delta 1e-15
    they stopped at 0.176 with g there 1e8 times its value at the answer 0.259, which then swallowed delta.
    """
    lower = _epsilons(composed.lower, deltas + composed.round_off_at(-np.inf))
    for _ in range(_LOWER_PASSES):  # each pass stays below the truth; g falls as the eps rises
        lower = _epsilons(composed.lower, deltas + composed.round_off_at(np.maximum(lower, 0.0)))
    high = _epsilons(composed.lower, deltas)
    open_ = np.isfinite(lower) & np.isfinite(high) & (high > lower)
    low, high = np.where(open_, lower, 0.0), np.where(open_, high, 0.0)
    for _ in range(_LOWER_BISECTIONS if np.any(open_) else 0):
        middle = 0.5 * (low + high)
        worst = np.max([np.atleast_1d(p.delta(middle)) for p in composed.lower], axis=0)
        above = worst - composed.round_off_at(middle) > deltas
        low, high = np.where(above, middle, low), np.where(above, high, middle)
    return np.where(open_, low, lower)


def epsilon_bounds(components: Components, delta: ArrayLike, **precision: Unpack[Precision]) -> Bounds:
    """Bounds on the smallest eps >= 0 such that the composition is (eps, delta)-DP, for one delta or an
    array of them from ONE composition per grid (Bounds then holds arrays).

    components: (dominating pair, times) list. The upper bound is the eps of the worst direction of the
    pessimistic PLDs, the lower bound that of the optimistic ones, each with the round-off g(eps) of
    the composition (Composed.round_off_at, non-increasing in eps) on its safe side: the lower bound is
    the largest eps found whose optimistic delta exceeds delta + g(eps) (_lower_epsilons), and the upper
    bound is the eps at delta - g(lower). Refined until
    upper - lower <= accuracy min(lower + EPSILON_SCALE, STEP_SCALE n) at every delta, n the number of
    mechanisms composed: relative accuracy for large epsilons, absolute accuracy x EPSILON_SCALE for
    small ones (no one quotes an epsilon of 0.06 to 1e-4), and for few steps no wider than a per-step
    grid of 1e-4 leaves (defaults.STEP_SCALE). Deltas far below the plain FFT's round-off are answered by
    a tilted composition (TailTarget), at a tilt of at most _MAX_TILT first and, where its round-off would
    swallow a delta (take half of it), again with every direction tilted at the answer's epsilon (the
    pessimistic PLDs' epsilon without round-off on the last grid), up to _STEEPEST_TILT: steeper tilts
    leave errors relative to a thinner tail (q 3.3e-4, sigma 4, 1e4 steps at delta 1e-10 needs t = 800),
    but not always smaller ones (at q 1e-5, sigma 1.1, 1e7 steps at 1e-5 the saddle point, t = 133,
    carries ten times what t = 64 does). Bounds that a plain composition left wider than asked for the
    round-off they carry are recomposed so too. A delta that both compositions swallow has upper bound
    inf and is marked in Bounds.swallowed; its lower bound still holds. Bounds are rounded outward by
    1e-12 relative.
    """
    accuracy, max_points, compose = _precision(precision, components)
    delta = np.asarray(delta, dtype=float)
    flat = np.atleast_1d(delta)
    for value in flat:
        _check_delta(float(value))
    smallest = float(flat.min())
    target = TailTarget(delta=smallest) if smallest < 1e2 * predicted_round_off(components) else None

    centres: list[np.ndarray] = []  # the upper PLDs' epsilons without round-off, grid by grid

    def measure(composed: Composed) -> Measurement:
        lower = _lower_epsilons(composed, flat)
        floor = composed.round_off_at(np.maximum(lower, 0.0))
        swallowed = floor > 0.5 * flat  # no rigorous upper bound from this composition
        upper = np.where(
            swallowed, np.inf, _epsilons(composed.upper, np.where(swallowed, flat, flat - floor))
        )
        with np.errstate(invalid="ignore"):  # (inf - inf where no finite epsilon exists)
            centres.append(_epsilons(composed.upper, flat))
            plain = centres[-1] - _epsilons(composed.lower, flat)  # without round-off
            slack = np.nan_to_num(np.maximum(upper - lower - plain, 0.0), nan=0.0, posinf=0.0)
        upper = np.maximum(upper, 0.0) * (1 + _SAFETY) + _SAFETY
        lower = np.maximum(lower, 0.0) * (1 - _SAFETY)
        settled = np.isinf(lower) | swallowed  # both inf, or no finer grid helps: nothing to refine
        return Measurement(upper, lower, slack, settled=settled, swallowed=swallowed)

    interval = initial_interval(components, accuracy)
    steps = sum(int(count) for _, count in components)
    absolute, widest = EPSILON_SCALE * accuracy, STEP_SCALE * steps * accuracy
    bounds = _refine(compose, measure, accuracy, absolute, max_points, interval, target, widest=widest)
    swallowed = np.any(bounds.swallowed)
    if (target is not None and swallowed) or (target is None and bounds.carried > 0.0):
        centre = np.where(np.isfinite(centres[-1]), centres[-1], np.atleast_1d(bounds.lower))
        answer = float(np.max(np.where(np.atleast_1d(bounds.swallowed) | ~swallowed, centre, 0.0)))
        target = target or TailTarget(delta=smallest)  # (round-off carried: tilt at the answer too)
        steep = replace(target, epsilon=answer if answer > 0.0 else None, max_tilt=_STEEPEST_TILT)
        steeper = _refine(compose, measure, accuracy, absolute, max_points, interval, steep, widest=widest)
        reached, work = bounds.reached and steeper.reached, bounds.work + steeper.work
        bounds = replace(_tightest(bounds, steeper), reached=reached, work=work)
        bounds = replace(
            bounds, carried=_excess(bounds, accuracy, absolute, widest) if bounds.carried else 0.0
        )
    return _shaped(bounds, delta.shape)


def _excess(bounds: Bounds, accuracy: float, absolute: float, widest: float) -> float:
    """How much wider than asked the (finite) bounds are at the widest query."""
    lower, upper = np.atleast_1d(bounds.lower), np.atleast_1d(bounds.upper)
    with np.errstate(invalid="ignore"):
        excess = upper - lower - np.minimum(accuracy * lower + absolute, widest)
    return float(np.max(np.where(np.isfinite(excess), excess, 0.0), initial=0.0))


def delta_bounds(components: Components, epsilon: ArrayLike, **precision: Unpack[Precision]) -> Bounds:
    """Bounds on delta(eps) of the composition, the worst direction's profile, at every eps
    of an array from ONE composition per grid (a whole privacy-profile table costs what one point does).

    The round-off g(eps) of the composition (Composed.round_off_at), with the error of evaluating the
    profiles (Composed.delta_error), is added to the upper profile and taken from the lower one;
    refined until upper <= (1 + accuracy) lower + 1e-15 at every eps, or the gap is the round-off's.
    Where a delta came out within 100 g of zero, the composition is redone tilted towards the largest
    such eps (TailTarget), whose round-off there is far smaller, from the first grid again and within
    what the plain refinement left of the work budget (work_budget); the plain refinement leaves such
    deltas to it, and the answer is the tighter of the two compositions' bounds at each eps. Bounds
    are rounded outward by 1e-12 relative.
    """
    accuracy, max_points, compose = _precision(precision, components)
    epsilon = np.asarray(epsilon, dtype=float)
    flat = np.atleast_1d(epsilon)

    swallowed_below = 1e2 * predicted_round_off(components)

    def measure(composed: Composed, *, plain: bool = True) -> Measurement:
        floor = composed.round_off_at(flat) + composed.delta_error(flat)
        upper = np.max([np.atleast_1d(p.delta(flat)) for p in composed.upper], axis=0)
        lower = np.max([np.atleast_1d(p.delta(flat)) for p in composed.lower], axis=0)
        upper = np.minimum(upper * (1 + _SAFETY) + floor, 1.0)
        lower = np.maximum(lower - floor, 0.0) * (1 - _SAFETY)
        # a delta the plain round-off swallows is left to the tilted composition
        return Measurement(upper, lower, 2.0 * floor, settled=(lower < swallowed_below) if plain else False)

    interval = initial_interval(components, accuracy)
    budget = work_budget(accuracy)
    bounds = _refine(compose, measure, accuracy, 1e-15, max_points, interval, budget=budget)
    swallowed = np.isfinite(flat) & (np.atleast_1d(bounds.lower) < swallowed_below)
    if np.any(swallowed):
        target = TailTarget(epsilon=float(flat[swallowed].max()))
        tilted_measure, left = partial(measure, plain=False), budget - bounds.work
        tilted = _refine(compose, tilted_measure, accuracy, 1e-15, max_points, interval, target, left)
        bounds = replace(_tightest(bounds, tilted), reached=tilted.reached, work=bounds.work + tilted.work)
    return _shaped(bounds, epsilon.shape)


class Compositions:
    """compose_all of one list of components, keeping what it composed for the questions asked next: an
    accountant asks epsilon, delta and beta of the same list, risk asks beta and delta, and the equal-error
    search asks beta twenty times, each refinement starting from the same first grid. A kept composition is
    the object compose_all returned, so no answer changes; grids above _KEPT_POINTS points are not kept,
    and at most _KEPT of them (the oldest goes first)."""

    def __init__(self, components: Components) -> None:
        self.components = components
        self._kept: dict[tuple[float, int, TailTarget | None], Composed] = {}

    def __call__(self, interval: float, cap: int, target: TailTarget | None) -> Composed:
        key = (interval, cap, target)
        if key not in self._kept:
            composed = compose_all(self.components, interval, cap, target)
            if composed.points() > _KEPT_POINTS:
                return composed
            if len(self._kept) >= _KEPT:
                del self._kept[next(iter(self._kept))]
            self._kept[key] = composed
        return self._kept[key]


_KEPT_POINTS = 2**20  # the largest composed array Compositions keeps (8 MiB)
_KEPT = 8  # the most compositions it keeps


class Precision(TypedDict, total=False):
    """The keywords every bounds function takes: `accuracy`, the width asked (DEFAULT_ACCURACY by default;
    each function states its rule), `max_points`, the cap on the points of a grid (MAX_POINTS), and
    `compositions`, the Compositions of the same components to draw on (by default a new one)."""

    accuracy: float
    max_points: int
    compositions: Compositions


def _precision(precision: Precision, components: Components) -> tuple[float, int, Compositions]:
    """(accuracy, max_points, compositions) with their defaults."""
    compositions = precision.get("compositions") or Compositions(components)
    if compositions.components is not components:
        raise ValueError("the compositions given are of other components")
    return precision.get("accuracy", DEFAULT_ACCURACY), precision.get("max_points", MAX_POINTS), compositions


def _check_delta(delta: float) -> None:
    """InputError unless 0 < delta < 1."""
    if not 0.0 < delta < 1.0:
        raise InputError(f"delta must be in (0, 1), got {delta!r}")


def _tests(pld: DiscretePLD, *, pessimistic: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The vertices (alpha_i, beta_i), alpha ascending, of the trade-off function sup_x (1 - delta(x) - x
    alpha) of the profile (*), and the rate -slope of each segment.

    The supremum sits at a kink x = e^{eps_j}: the test that rejects the infinity atom and every atom
    above eps_j, with alpha = sum_{k>=j} m_k e^{-eps_k} (Q-masses summed from the top) and beta = 1 - m_inf
    - sum_{k>=j} m_k = (1 - m_inf - sum_k m_k) + sum_{k<j} m_k (the P-mass left, summed from the bottom):
    sums of non-negative terms, so small values keep their digits. Adding atom k to the rejection has
    rate e^{eps_k}; once all are rejected beta stays at the P-mass left (rate 0).

    pessimistic: the P-mass left, 1 - m_inf - sum_k m_k, is kept when negative (a pessimistic PLD may
    hold more than 1: masses that rounding made negative are raised to 0, 1.4e-12 of them for 10-fold
    pure DP on a grid of 0.011), as conjugacy with its profile asks (beta_j = 1 - delta~(x_j) - x_j
    alpha_j): clipped to 0, beta was that much above the truth near alpha = 0.
    """
    with np.errstate(divide="ignore", over="ignore"):
        rates = np.exp(pld.losses)
        q_masses = np.exp(np.log(pld.masses) - pld.losses)
    rejected_q = np.cumsum(q_masses[::-1])
    left = 1.0 - pld.infinity_mass - float(pld.masses.sum())
    left = left if pessimistic else max(left, 0.0)
    kept_p = np.cumsum(pld.masses)[::-1][1:]
    alpha = np.concatenate(([0.0], rejected_q, [max(1.0, rejected_q[-1])]))
    beta = np.concatenate(([1.0 - pld.infinity_mass], left + kept_p, [left, left]))
    return alpha, beta, np.concatenate((rates[::-1], [0.0, 0.0]))


def _symmetrized_tests(
    plds: Sequence[DiscretePLD], *, pessimistic: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertices and rates of the largest convex function below every direction's trade-off function:
    the lower convex hull (core.hull) of all their vertices (each is convex with these vertices)."""
    vertices = [_tests(p, pessimistic=pessimistic)[:2] for p in plds]
    alpha = np.concatenate([a for a, _ in vertices])
    beta = np.concatenate([b for _, b in vertices])
    order = np.lexsort((beta, alpha))
    alpha, beta = alpha[order], beta[order]
    first = np.concatenate(([True], np.diff(alpha) > 0))  # the lowest beta of each alpha
    alpha, beta = alpha[first], beta[first]
    kept = lower_hull(alpha, beta)
    alpha, beta = alpha[kept], beta[kept]
    with np.errstate(over="ignore"):  # (inf: an edge whose alphas differ by a subnormal, tradeoff_of)
        return alpha, beta, np.append(-np.diff(beta) / np.diff(alpha), 0.0)


def tradeoff_of(plds: Sequence[DiscretePLD], alpha: np.ndarray, *, pessimistic: bool = False) -> np.ndarray:
    """beta(alpha) of the discrete pairs, add/remove-symmetrized over directions: the conjugate of the
    maximum of their profiles (*), i.e. the convex hull of the minimum of their trade-off functions, from
    the Neyman-Pearson tests (_tests) on the segment that holds alpha: beta_{j+1} + rate_j (alpha_{j+1} -
    alpha), a sum of non-negative terms (no cancellation where beta is tiny, e.g. alpha near 1).

    pessimistic: the PLDs are upper profiles, whose beta is a lower bound: a vertex alpha (a Q-mass) that
    rounding put above 1 is taken as 1 (an ulp of Q-mass over 1 gave beta(1) = 2e-24 > 0, the truth);
    moving vertices left, with the segment's rate kept, only lowers beta.

    A rate can overflow to inf (losses above 709, or a hull edge whose alphas differ by a subnormal): on
    such a segment beta is interpolated between its two vertices instead, (beta_j - beta_{j+1}) times
    the share of the segment's alpha width still to go (rate inf times that width was beta 1 there)."""
    if len(plds) == 1:
        vertices, values, rates = _tests(plds[0], pessimistic=pessimistic)
    else:
        vertices, values, rates = _symmetrized_tests(plds, pessimistic=pessimistic)
    if pessimistic:
        vertices = np.minimum(vertices, 1.0)
    alpha = np.asarray(alpha, dtype=float)
    segment = np.clip(np.searchsorted(vertices, alpha, side="right") - 1, 0, vertices.size - 2)
    left = vertices[segment + 1] - alpha
    with np.errstate(invalid="ignore", divide="ignore"):
        rise = np.where(
            np.isinf(rates[segment]),
            (values[segment] - values[segment + 1]) * (left / (vertices[segment + 1] - vertices[segment])),
            rates[segment] * left,
        )
    return np.where(alpha >= vertices[-1], 0.0, np.clip(values[segment + 1] + rise, 0.0, 1.0))


def tradeoff_bounds(components: Components, alpha: ArrayLike, **precision: Unpack[Precision]) -> Bounds:
    """Bounds bracketing the trade-off function beta of the composition at alpha.

    beta(alpha) = sup_x (1 - delta(x) - x alpha) (conjugacy of profile and trade-off function; the
    profile of the add/remove-symmetrized result is the maximum over directions). The pessimistic
    PLDs give a lower bound on beta, the optimistic ones an upper bound (also capped at 1 - alpha);
    refined until max(beta_upper - beta_lower) <= accuracy (absolute).
    """
    accuracy, max_points, compose = _precision(precision, components)
    alpha = np.asarray(alpha, dtype=float)
    flat = np.atleast_1d(alpha)

    def measure(composed: Composed) -> Measurement:
        # beta = sup_x (1 - delta(x) - x alpha) moves by at most the largest round-off of the profiles
        floor = float(np.max(composed.round_off_at(np.array([-np.inf]))))
        lower = np.maximum(tradeoff_of(composed.upper, flat, pessimistic=True) - floor, 0.0)
        upper = np.minimum(tradeoff_of(composed.lower, flat) + floor, 1.0 - flat)
        return Measurement(upper, lower)

    interval = initial_interval(components, accuracy)
    return _shaped(_refine(compose, measure, 0.0, accuracy, max_points, interval), alpha.shape)
