"""Composition of discrete PLDs: convolutions with truncation in the safe direction, self-composition
by repeated squaring, the tilt a query needs, and every direction and side of a list of components.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import NamedTuple

import numpy as np

from gdpcli.core.arrays import ArrayLike
from gdpcli.core.pld.convolution import _convolve, fft_work
from gdpcli.core.pld.discretization import MAX_POINTS, _cluster_offset, discretize, loss_range
from gdpcli.core.pld.power import POWER_MIN, has_no_round_off, power_compose
from gdpcli.core.pld.representation import (
    ROUND_OFF_SAFETY,
    DiscretePLD,
    DominatingPair,
    ProfileFn,
    RoundOff,
    Tails,
)
from gdpcli.errors import ComputationError

FIRST_TILT = 64.0
"""The largest exponential tilt a composition tries first (_tilt), for a composed loss of scale >= 1."""
_TILT_PRECISION = 2.0**-24
"""How close to the saddle point, relative to its cap, the tilt is found (_tilt): any tilt carries about
the round-off the saddle point's does."""
_TILT_STEPS = 60  # the most Newton or bisection steps of _first_root
_NEGLIGIBLE = -700.0  # log of a term's share of a sum below which it changes no digit (_cumulants)
_TAIL_BUDGET = 1e-12  # total P-mass that all truncations together may move (see _tail_budget)
_DELTA_SHARE = 1e-3
"""The share of the smallest delta asked that one truncation may move above the window (TailTarget.tails).

The mass moved to infinity joins the pessimistic profile at every eps, so the upper bound is the eps at
about delta (1 - c _DELTA_SHARE) for c truncations (a few with the FFT power): e^{-t eps} tails move it
by about c _DELTA_SHARE / t. A millionth of delta (as before) kept losses so rare that, tilted, they held
most of the tilted mass far from the query: at q 1e-5, sigma 1, 1e5 steps at delta 1e-15 the round-off
then swallowed delta at the lower bound and the bounds were [0.0288, 0.0406]; with a thousandth they are
[0.03686, 0.03692]."""
_KEPT_POINTS = 2**20  # the largest composed array Compositions keeps (8 MiB)
_KEPT = 8  # the most compositions it keeps


def _truncate(pld: DiscretePLD, tails: Tails, *, pessimistic: bool) -> DiscretePLD:
    """Cut each end where its cumulative mass is <= its tail, moving that mass in the safe direction.

    Pessimistic: mass above the window goes to +infinity, mass below moves up to the median of the kept
    masses (both raise the profile; the cost is at most the two tails in delta). Optimistic: mass above
    moves down to the highest kept point, mass below is dropped (both lower the profile as much). A mass
    m moved up (down) by any distance changes delta at every eps by at most m, upwards
    (downwards), here and in every composition with this PLD: (1 - e^{eps - L})_+ is increasing in L
    and within [0, 1]. The median rather than the window's edge: a mass left at the lower edge,
    composed with the rest, seeds a copy of the whole distribution a window-width further down, which
    holds about the tail budget, so the next truncation cannot cut it and the window never shrinks (the
    add direction of q 1e-4, sigma 0.5 kept [-12, 1] over 1e5 steps where the mass is within [-4, 1]).
    A tilted pessimistic PLD keeps the lowest kept point: there mass weighs least in the tilted norms.
    Entries of a plain FFT are exact only up to its round-off, which may look like mass: each end also
    cuts up to the untilted round-off more. Mass moved into a finite point carries a bound on its
    errors (_cut_errors: added above, taken off below), so those errors leave the error norms instead
    of gathering in one point; errors moved to infinity join its error (_moved_round_off).
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
    """The times-fold composition of pld with itself: by one FFT power (power.power_compose) where pld
    carries no round-off yet, has finite mass (a negligible mechanism's optimistic PLD may hold none: no
    Chernoff window) and times >= POWER_MIN, else by repeated squaring (about 2 log2(times) FFTs).

    A mass moved when truncating a power moves in every copy of that power in the result, and the power
    squared at a step where r of the bits of times remain (times >> j = r) is used r times: its
    truncation uses tails.shared(r). Each of the at most 2 log2(times) truncations then changes delta
    by at most the sum of the tails (safe direction).
    """
    if times >= POWER_MIN and has_no_round_off(pld) and pld.masses.any():
        powered = power_compose(pld, times, pessimistic=pessimistic, tails=tails, max_points=max_points)
        return _truncate(powered, tails, pessimistic=pessimistic)  # (the Chernoff window is wider)
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
class TailTarget:
    """Where a query needs the composition accurate: at the smallest delta asked (epsilon queries; with the
    epsilon of the answer where that is roughly known) or the largest epsilon asked (delta queries).
    Decides the tilt of the composition (_tilt, at most max_tilt) and, for deltas, how much mass
    truncations may move."""

    delta: float | None = None
    epsilon: float | None = None
    max_tilt: float = FIRST_TILT

    def tails(self) -> Tails:
        """The P-mass one truncation may move: _TAIL_BUDGET, above the window at most _DELTA_SHARE of the
        smallest delta asked."""
        above = _TAIL_BUDGET if self.delta is None else min(_TAIL_BUDGET, _DELTA_SHARE * self.delta)
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


def _cumulants(
    logs: Sequence[tuple[np.ndarray, np.ndarray]], times: Sequence[int], tilt: float
) -> tuple[float, float, float]:
    """K(t) = log E[e^{t L}] of the composed finite loss, K'(t) = its mean under the tilt t and K''(t) its
    variance there, from each base's (log m_k, eps_k).

    Terms below e^_NEGLIGIBLE times the largest are left out: they change no digit of the sums, and an
    exponential that underflows into the subnormal range costs some 30 times a normal one. A base
    without finite mass (a negligible mechanism's, all of it cut) is left out too: it has no centre."""
    value, slope, curvature = 0.0, 0.0, 0.0
    for (log_masses, losses), count in zip(logs, times, strict=True):
        exponents = log_masses + tilt * losses
        scale = float(np.max(exponents))
        if scale == -np.inf:
            continue
        exponents -= scale
        exponents[exponents < _NEGLIGIBLE] = -np.inf
        weights = np.exp(exponents)
        total = float(weights.sum())
        mean = float(np.sum(weights * losses)) / total  # (not @: fft_round_off)
        value += count * (scale + math.log(total))
        slope += count * mean
        curvature += count * float(np.sum(weights * (losses - mean) ** 2)) / total
    return value, slope, curvature


def _tilt(bases: Sequence[DiscretePLD], times: Sequence[int], target: TailTarget | None) -> float:
    """The exponential tilt t >= 0 under which the composed loss is centred where the query looks.

    0 without a target. Else the saddle point of the Chernoff bound: K'(t) = eps where the target names an
    eps (a delta query, or an epsilon query whose answer is known roughly: every direction is then tilted
    at it, the add direction of a Poisson step, whose own delta-tail is far thinner, too), else
    t K'(t) - K(t) = log(1 / delta) (the tilted mean is the epsilon whose tail is delta); found on
    [0, target.max_tilt] by _first_root.
    """
    if target is None:
        return 0.0
    with np.errstate(divide="ignore"):
        logs = [(np.log(base.masses), base.losses) for base in bases]

    def excess(tilt: float) -> tuple[float, float]:  # how far the tilted centre is past the target, and
        value, slope, curvature = _cumulants(logs, times, tilt)  # its derivative (increasing in t)
        if target.epsilon is not None:
            return slope - float(target.epsilon), curvature
        return tilt * slope - value + math.log(float(target.delta)), tilt * curvature

    return _first_root(excess, target.max_tilt, _TILT_PRECISION * target.max_tilt)


def _first_root(excess: Callable[[float], tuple[float, float]], cap: float, precision: float) -> float:
    """The root of an increasing function h on [0, cap] to within `precision`, from above (0 if h(0) >= 0,
    cap if h(cap) < 0), given h and h': Newton steps kept inside the bracket, a bisection wherever a step
    would leave it or shrink it by less than half (Numerical Recipes' rtsafe). A few evaluations where
    bisection took 24 (each a pass over every base's points: 0.26 of 2.2 s of CPU at q 1e-5, sigma 0.4,
    1e7 steps)."""
    (at_low, _), (at_high, derivative) = excess(0.0), excess(cap)
    if at_low >= 0.0 or at_high < 0.0:
        return 0.0 if at_low >= 0.0 else cap
    low, high, point, value, step = 0.0, cap, cap, at_high, cap
    for _ in range(_TILT_STEPS):
        newton = point - value / derivative if derivative > 0.0 else math.nan
        if low < newton < high and abs(point - newton) <= 0.5 * step:
            step, point = abs(point - newton), newton
        else:
            step, point = 0.5 * (high - low), 0.5 * (low + high)
        value, derivative = excess(point)
        low, high = (point, high) if value < 0.0 else (low, point)
        if high - low <= precision or step <= 0.5 * precision:
            break
    if value < 0.0 and high - low > precision:  # converged from below: close the bracket above
        high = min(high, point + precision)
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
    release the GIL, so they run on threads, one per core (1.9x faster wall time on 2 cores), each then
    preparing its PLD's query tables (DiscretePLD.prepared). With more
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
            plds += pool.map(lambda job: run(job[0], pessimistic=job[1]).prepared(), jobs)
    return Composed(upper=plds[: len(directions)], lower=plds[len(directions) :])


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
