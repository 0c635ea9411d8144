"""Questions asked of a composition, answered with rigorous bounds: epsilon at delta, delta at epsilon,
beta at alpha, each refined over finer grids until the accuracy asked or a work budget is reached.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, NamedTuple, TypedDict

import numpy as np

from gdpcli import progress
from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.hull import lower_hull
from gdpcli.core.pld.composition import FIRST_TILT, Components, Composed, Compositions, TailTarget
from gdpcli.core.pld.convolution import fft_error
from gdpcli.core.pld.discretization import MAX_POINTS, discretize, evaluation_work, loss_range
from gdpcli.core.pld.representation import ROUND_OFF_SAFETY, DiscretePLD, DominatingPair, GridTooLarge, Tails
from gdpcli.defaults import DEFAULT_ACCURACY, EPSILON_SCALE, STEP_SCALE
from gdpcli.errors import InputError

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11 on


_TINY_DELTA = 1e-9
"""Below this smallest delta the first tilt's cap scales with the losses too (_scaled_tilt): a list down
to 1e-15 at q 1e-5, sigma 1, 1e5 steps is then answered on the first grids (1.7 s -> 0.9 s), while at
moderate deltas the unscaled cap serves as well for less (q 1e-5, sigma 1.1, 1e7 steps at 1e-5: the
saddle point t = 133 widens the power's window by 40 % over t = 64, for the same bounds)."""
_STEEPEST_TILT = 4096.0  # the steepest retry's tilt for a composed loss of scale >= 1 (_scaled_tilt)
_FIRST_GRID = 2.0**14  # the first grid interval is at least the composed loss's std over this
_COARSENINGS = 5  # how often a first grid over the cap is retried coarser (_refine)
_COARSENING = 4.0  # a first grid over the cap is retried at least this much coarser (_refine)
_COARSENING_MARGIN = 1.1  # ... and this far inside the cap (_refine)
_FIRST_POINTS = 2**16  # the first grid spans a step's loss range in at most this many points
_FINEST_FIRST = 1e-9  # the finest first grid interval (negligible mechanisms have no scale to follow)
_FIRST_MAX_POINTS = 2**22  # the cap on the first grid: a heavy-tailed loss can span 1e7 points of it
_ADDED_VARIANCE = 0.35  # the gap's constant in _added_variance_interval (measured 0.15 to 0.6)
_FIRST_SHARE = 0.5  # the most of the work budget the first grid's discretizations may cost (epsilon_interval)
_FINEST_GRID = 2.0**16  # _added_variance_interval is at least the composed loss's std over this
_LOWER_PASSES = 4  # fixed-point passes of the lower epsilon bound through the round-off (_lower_epsilons)
_LOWER_SCAN = 31  # points tried after them, evenly spaced up to the optimistic eps (_lower_epsilons)
_LOWER_BISECTIONS = 40  # bisection steps after the scan (_lower_epsilons)
_SAFETY = 1e-12  # relative outward rounding of reported bounds
_HALVINGS = 60  # the smallest share of delta, 2^-60, at which _upper_through looks for an upper bound

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
class Bounds:
    """Rigorous bounds lower <= true value <= upper (floats, or arrays for array queries), found with grid
    interval `interval`; `reached` is False when the refinement stopped at its work or size budget before
    the asked accuracy (the bounds are still rigorous, only wider); `carried` is how much wider than asked
    they are at the widest query where the asked width was met but for the round-off they carry
    (Measurement.slack), which no finer grid removes; `work` is the grid work the refinement spent
    (Composed.work over its grids); `swallowed` marks the queries whose upper bound the round-off
    swallowed on every grid (epsilon_bounds: upper is inf there, saying nothing of the truth), and
    `rescued` those whose upper bound was found through a round-off that swallows delta at the lower
    bound (epsilon_bounds: finite, but wide)."""

    upper: ArrayLike
    lower: ArrayLike
    interval: float
    reached: bool = True
    carried: float = 0.0
    work: float = 0.0
    swallowed: np.ndarray | bool = False
    rescued: np.ndarray | bool = False


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


Shapes = list[tuple[tuple[float, float], int]]
"""Each component's (standard deviation, range) of its loss (_loss_shape) and its count."""


def _loss_shapes(components: Components) -> Shapes:
    """_loss_shape of each component, with its count."""
    return [(_loss_shape(pair), int(count)) for pair, count in components]


def _composed_scale(shapes: Shapes) -> float:
    """S = sqrt(sum N_i s_i^2), the standard deviation of the composed loss."""
    return float(np.sqrt(sum(count * scale**2 for (scale, _), count in shapes)))


def initial_interval(
    components: Components, accuracy: float, *, cheap: bool = True, shapes: Shapes | None = None
) -> float:
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
    grid than this are unchanged. Below epsilon EPSILON_SCALE the width asked is about absolute
    (epsilon_bounds), so the relative accuracy modelled is that width at eps = 4 S over 4 S: at q 1e-5,
    sigma 1, 1e3 steps (S 4e-4) the first grid is 8 times coarser (5.2e-7 -> 4.1e-6), its bounds still
    within the width.
    `shapes`: _loss_shapes(components), where the caller has them.
    """
    shapes = _loss_shapes(components) if shapes is None else shapes
    composed = _composed_scale(shapes)
    floor = max(1e-3 * composed, 1e-12)
    density = sum(count / max(scale, floor) for (scale, _), count in shapes)
    modelled = np.sqrt(_relative(accuracy, composed) * composed / (0.02 * density))
    first = max(span for (_, span), _ in shapes) / _FIRST_POINTS if cheap else 0.0
    return float(min(0.05, max(modelled, composed / _FIRST_GRID, first, _FINEST_FIRST)))


def epsilon_interval(
    components: Components, accuracy: float, smallest_delta: float, *, shapes: Shapes | None = None
) -> float:
    """The first grid interval of epsilon_bounds: initial_interval's, or _added_variance_interval's where
    that is finer and the smallest delta is at least _TINY_DELTA, but no finer than _affordable_interval.
    A list down to tinier deltas is composed twice (tilted for its smallest delta, then again at a larger
    one's answer), both on this interval: at q 1e-5, sigma 1, 1e7 steps, deltas 1e-15 to 0.1, the finer
    grid took 2.1 s where the coarser one took 0.6 s (to bounds within 1.4 % rather than 0.1 %, at the
    work budget)."""
    shapes = _loss_shapes(components) if shapes is None else shapes
    interval = initial_interval(components, accuracy, shapes=shapes)
    if smallest_delta < _TINY_DELTA:
        return interval
    modelled = max(_added_variance_interval(shapes, accuracy), _affordable_interval(shapes, accuracy))
    return min(interval, modelled)


def _affordable_interval(shapes: Shapes, accuracy: float) -> float:
    """The finest interval at which discretizing every component's step (its loss range, both ways, in
    both directions) costs at most _FIRST_SHARE of the work budget, leaving the rest to the composition
    and a second grid. The added-variance model's constant is 0.01 to 0.04 at q 1e-5, sigma 0.4, where
    0.35 asked for 750 000 points a step: 2e9 units of work, for bounds 28 times narrower than asked."""
    per_interval = sum(
        2.0 * (evaluation_work(span, pessimistic=True) + evaluation_work(span, pessimistic=False))
        for (_, span), _ in shapes
    )
    return per_interval / (_FIRST_SHARE * work_budget(accuracy))


def _relative(accuracy: float, composed: float) -> float:
    """The relative width asked of epsilon bounds at eps = 4 S (S the composed scale), where below
    EPSILON_SCALE the width asked is about absolute (epsilon_bounds)."""
    return accuracy * (1.0 + EPSILON_SCALE / (4.0 * max(composed, 1e-12)))


def _added_variance_interval(shapes: Shapes, accuracy: float) -> float:
    """The interval at which the bounds' gap, modelled as the variance the rounding adds to the composed
    loss, meets the relative accuracy: (upper - lower) / (lower + EPSILON_SCALE) is about K n D^2 / S^2
    for n copies composed (K D^2 / s^2 for one mechanism's), so D = S sqrt(relative / (K n)).

    Measured on one grid across the range (q 1e-5, 1e-3, 0.3; sigma 0.4, 1, 10; 1e3, 1e5 and 1e7 steps;
    deltas 1e-15 to 0.1), K = _ADDED_VARIANCE is 0.15 to 0.6 (0.02 for q 1e-5, sigma 10) and does not
    grow with the steps. initial_interval's model grows as sqrt(n), which long runs meet at its floor S /
    _FIRST_GRID: at 1e7 steps D = 0.19 s, a gap 5 to 15 times the one asked, and a second grid. Never
    finer than S / _FINEST_GRID (nor _FINEST_FIRST: negligible mechanisms have no scale)."""
    copies = sum(count for _, count in shapes)
    composed = _composed_scale(shapes)
    modelled = composed * np.sqrt(_relative(accuracy, composed) / (_ADDED_VARIANCE * max(copies, 1)))
    return float(max(modelled, composed / _FINEST_GRID, _FINEST_FIRST))


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
    fitted: bool = False,
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
    _FIRST_MAX_POINTS, by some factor, up to _COARSENINGS grids are tried, each _COARSENING times coarser
    or that factor with a margin where it is larger (a grid's size goes as 1 / interval): a cheap probe
    to refine from; `fitted` (a first interval already chosen for the work budget): that factor with a
    margin only, the finest grid that fits, where the probe overshot: q 1e-5, sigma 0.4, 1e7 steps at
    1e-5 passed the cap 1.6 times, and the probe's grid, 2.3 times coarser than fits, left the upper
    bound 0.1 % above dp-accounting's figure within the budget). When the work
    left allows less than the aimed interval, the next grid is the finest that fits (if at least twice
    as fine). Work is counted from grid sizes, never timed, so the grids and the answer depend on the
    input only. Starts at `interval`. If finer grids stop closing the gap (three refinements in a row,
    each at least halving the interval, without shrinking the worst gap by a third: the rest of the gap
    is not discretization but tail truncation or round-off, which a finer grid cannot remove), the
    bounds found are returned: rigorous, just wider than asked. (Single refinements can stall by grid
    alignment.)
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
        except GridTooLarge as error:
            if known is not None:  # the size prediction fell short: the bounds found stand
                return replace(known, reached=False)
            if coarsenings >= _COARSENINGS:
                raise
            coarsenings = coarsenings + 1
            factor = _COARSENING_MARGIN * error.excess
            interval *= factor if fitted else max(factor, _COARSENING)
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
        asked = _asked(lower, accuracy, absolute, widest)
        excess = np.where(open_, upper - lower - asked - slack, -np.inf)
    worst = int(np.argmax(excess))
    return float(upper[worst] - lower[worst]), float(asked[worst]), float(slack[worst])


def _asked(lower: np.ndarray, accuracy: float, absolute: float, widest: float) -> np.ndarray:
    """The width asked of epsilon bounds at each query: min(accuracy lower + absolute, widest)."""
    return np.minimum(accuracy * lower + absolute, widest)


def _shaped(bounds: Bounds, shape: tuple[int, ...]) -> Bounds:
    """Bounds with the query's shape (floats for a scalar query)."""
    return replace(
        bounds,
        upper=as_output(np.reshape(bounds.upper, shape)),
        lower=as_output(np.reshape(bounds.lower, shape)),
        swallowed=np.reshape(np.broadcast_to(bounds.swallowed, np.shape(bounds.upper)), shape),
        rescued=np.reshape(np.broadcast_to(bounds.rescued, np.shape(bounds.upper)), shape),
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
    g(x_i)); after _LOWER_PASSES of them, _LOWER_SCAN evenly spaced points between the last and the
    optimistic epsilon at delta itself are tried, and bisection between the largest that is such an x and
    the next keeps the largest it meets. The passes alone stall where g falls steeply (a tilted
    composition's, by e^{-t eps} with t in the hundreds): at q 1e-5, sigma 1.1, 1e7 steps at delta 1e-15
    they stopped at 0.176 with g there 1e8 times its value at the answer 0.259, which then swallowed delta.
    Those x need not form an interval (g falls faster than delta_lower near the tilt's centre): for
    1000 x G_0.1 at delta 1e-100 bisection alone stopped at 23.0, and the upper bound was found through
    the round-off (_rescue); the scan finds 71.967, below the exact 71.9687.
    """
    lower = _epsilons(composed.lower, deltas + composed.round_off_at(-np.inf))
    for _ in range(_LOWER_PASSES):  # each pass stays below the truth; g falls as the eps rises
        lower = _epsilons(composed.lower, deltas + composed.round_off_at(np.maximum(lower, 0.0)))
    high = _epsilons(composed.lower, deltas)
    open_ = np.isfinite(lower) & np.isfinite(high) & (high > lower)
    if not np.any(open_):
        return lower
    with np.errstate(invalid="ignore"):  # (inf - inf where no finite epsilon exists: not open)
        start, width = np.where(open_, lower, 0.0), np.where(open_, high - lower, 0.0)

    def holds(x: np.ndarray) -> np.ndarray:
        worst = np.max([np.atleast_1d(p.delta(x)) for p in composed.lower], axis=0)
        return worst - composed.round_off_at(x) > deltas

    shares = np.arange(1, _LOWER_SCAN + 1) / (_LOWER_SCAN + 1)
    found = np.zeros(deltas.shape)  # the largest share of the width at which x holds (0: the passes' x)
    for share in shares:
        found = np.where(holds(start + share * width), share, found)
    low, high = start + found * width, start + (found + 1.0 / (_LOWER_SCAN + 1)) * width
    for _ in range(_LOWER_BISECTIONS):
        middle = 0.5 * (low + high)
        above = holds(middle)
        low, high = np.where(above, middle, low), np.where(above, high, middle)
    return np.where(open_, low, lower)


def _zero_suffices(composed: Composed, deltas: np.ndarray) -> np.ndarray:
    """Where epsilon 0 is certified: the worst pessimistic profile at 0, with the error of evaluating it
    and the composition's round-off there, is at most delta (then the upper bound is 0 itself, not the
    outward rounding of a solved epsilon near 0)."""
    at_zero = max(float(np.atleast_1d(p.delta(0.0))[0]) for p in composed.upper)
    error = float(composed.delta_error(0.0)) + float(composed.round_off_at(0.0))
    return at_zero + error <= deltas


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
    grid of 1e-4 leaves (defaults.STEP_SCALE).

    Deltas far below the plain FFT's round-off are answered by a tilted composition (TailTarget) aimed at
    the smallest delta, at a tilt of at most FIRST_TILT; a delta whose round-off that leaves too large
    (swallowed: half of delta at the lower bound, or wider than asked by at most twice its round-off, or
    without a finite upper bound) is composed again, largest delta first, with every direction tilted at
    its answer's epsilon (the pessimistic PLDs' epsilon without round-off on the last grid), up to
    _STEEPEST_TILT (caps scaled to the losses, _scaled_tilt; the first below _TINY_DELTA only): steeper
    tilts leave errors relative to a thinner tail (q 3.3e-4, sigma 4, 1e4 steps at delta 1e-10 needs
    t = 800), but not always smaller ones (at q 1e-5, sigma 1.1, 1e7 steps at 1e-5 the saddle point,
    t = 133, carried ten times what t = 64 did); a delta only wider than asked is composed so within
    what is left of the work budget (at least one grid). Bounds that a plain composition left wider than
    asked for the round-off they carry are recomposed so too. A delta that every composition swallows
    has upper bound inf and is marked in Bounds.swallowed; its lower bound still holds, and where the
    pessimistic profile plus the round-off meets delta further up that is its upper bound (_rescue).
    Bounds are rounded outward by 1e-12 relative.
    """
    accuracy, max_points, compose = _precision(precision, components)
    delta = np.asarray(delta, dtype=float)
    flat = np.atleast_1d(delta)
    for value in flat:
        _check_delta(float(value))
    smallest = float(flat.min())
    # tilted from the first grid where the plain round-off would take a visible share of delta (that
    # prediction runs up to 10x below what it measures: q 1e-4, sigma 1.1, 1e6 steps carried 6.6e-7 at 1e-5)
    shapes = _loss_shapes(components)
    first_tilt = _scaled_tilt(FIRST_TILT, shapes) if smallest < _TINY_DELTA else FIRST_TILT
    target = (
        TailTarget(delta=smallest, max_tilt=first_tilt)
        if smallest < 1e3 * predicted_round_off(components)
        else None
    )

    centres: list[np.ndarray] = []  # the upper PLDs' epsilons without round-off, grid by grid
    slacks: list[np.ndarray] = []  # the round-off the bounds carry, grid by grid
    rescued = np.full(flat.shape, np.inf)  # upper bounds through the round-off where it swallows delta

    def measure(composed: Composed) -> Measurement:
        lower = _lower_epsilons(composed, flat)
        floor = composed.round_off_at(np.maximum(lower, 0.0))
        swallowed = floor > 0.5 * flat  # no upper bound from this composition at g(lower)
        if np.any(swallowed):
            rescued[swallowed] = np.minimum(rescued[swallowed], _upper_through(composed, flat[swallowed]))
        upper = np.where(
            swallowed, np.inf, _epsilons(composed.upper, np.where(swallowed, flat, flat - floor))
        )
        with np.errstate(invalid="ignore"):  # (inf - inf where no finite epsilon exists)
            centres.append(_epsilons(composed.upper, flat))
            plain = centres[-1] - _epsilons(composed.lower, flat)  # without round-off
            slack = np.nan_to_num(np.maximum(upper - lower - plain, 0.0), nan=0.0, posinf=0.0)
            slacks.append(slack)
        upper = np.where(
            _zero_suffices(composed, flat), 0.0, np.maximum(upper, 0.0) * (1 + _SAFETY) + _SAFETY
        )
        lower = np.maximum(lower, 0.0) * (1 - _SAFETY)
        cut = max(p.infinity_mass for p in composed.upper) >= flat - floor  # (truncations' mass: any grid)
        settled = np.isinf(lower) | swallowed | cut  # both inf, or no finer grid helps: nothing to refine
        return Measurement(upper, lower, slack, settled=settled, swallowed=swallowed)

    interval = epsilon_interval(components, accuracy, smallest, shapes=shapes)
    steps = sum(int(count) for _, count in components)
    absolute, widest = EPSILON_SCALE * accuracy, STEP_SCALE * steps * accuracy
    fitted = smallest >= _TINY_DELTA  # (epsilon_interval weighed the work budget: no probe)
    bounds = _refine(
        compose, measure, accuracy, absolute, max_points, interval, target, widest=widest, fitted=fitted
    )
    carried = bounds.carried > 0.0  # (round-off beyond the accuracy: retried tilted at the answer)
    tried = np.zeros(flat.shape, dtype=bool)
    widths, budget = (accuracy, absolute, widest), work_budget(max(accuracy, absolute))
    while np.any(untried := _retried(bounds, target, tried, slacks[-1], widths)) or carried:
        centre = np.where(np.isfinite(centres[-1]), centres[-1], np.atleast_1d(bounds.lower))
        allowance = None  # (a work budget of its own)
        if carried:  # round-off carried: every query, tilted at the largest answer
            retried, steep = ~tried, TailTarget(delta=smallest, epsilon=float(np.max(centre)))
        else:  # the largest delta left first, each at its own answer (a list needs several tilts)
            retried = flat == np.max(np.where(untried, flat, -np.inf))
            steep = replace(target, epsilon=float(np.max(centre[retried])))  # (truncated for the smallest)
            if not np.any(retried & _unanswered(bounds)):  # only wide: within what is left of the budget
                allowance = max(budget - bounds.work, 0.0)
        steep = replace(
            steep,
            epsilon=steep.epsilon if steep.epsilon > 0.0 else None,
            max_tilt=_scaled_tilt(_STEEPEST_TILT, shapes),
        )
        steeper = _refine(
            compose, measure, accuracy, absolute, max_points, bounds.interval, steep, allowance, widest=widest
        )
        reached, work = bounds.reached and steeper.reached, bounds.work + steeper.work
        bounds = replace(_tightest(bounds, steeper), reached=reached, work=work)
        bounds = replace(
            bounds, carried=_excess(bounds, accuracy, absolute, widest) if bounds.carried else 0.0
        )
        tried |= retried
        carried = False
    return _shaped(_rescue(bounds, rescued, accuracy, absolute, widest), delta.shape)


def _scaled_tilt(tilt: float, shapes: Shapes) -> float:
    """A cap on the tilt, given for a composed loss of scale >= 1, for this one: over its scale where that
    is below 1 (FIRST_TILT first, _STEEPEST_TILT for the retries).

    A tilt acts through t L: losses 1000 times smaller need a tilt 1000 times steeper for the same
    effect. At q 1e-5, sigma 10, 1e3 steps a step's losses are about 1e-6 and the composed scale 3e-5:
    the saddle point at delta 1e-12 is t = 1.6e5, and at 4096 the round-off swallowed delta (RDP's
    0.0056 stood in beside the PLD's lower bound 1.4e-4; tilted at the saddle point the bounds are
    [1.62956e-4, 1.62990e-4]). The first tilt is scaled so below _TINY_DELTA."""
    return tilt / min(1.0, max(_composed_scale(shapes), _FINEST_FIRST))


def _rescue(bounds: Bounds, rescued: np.ndarray, accuracy: float, absolute: float, widest: float) -> Bounds:
    """The bounds with the upper bound through the round-off (_upper_through, the tightest of all grids)
    where every grid's round-off swallowed delta at its lower bound; swallowed stays only where none was
    found. The round-off then leaves them wider than asked: `carried` says by how much."""
    swallowed = np.atleast_1d(bounds.swallowed)
    found = swallowed & np.isfinite(rescued)
    if not np.any(found):
        return bounds
    upper = np.where(found, rescued * (1 + _SAFETY) + _SAFETY, np.atleast_1d(bounds.upper))
    bounds = replace(bounds, upper=upper, swallowed=swallowed & ~found, rescued=found)
    return replace(bounds, carried=max(bounds.carried, _excess(bounds, accuracy, absolute, widest)))


def _upper_through(composed: Composed, deltas: np.ndarray) -> np.ndarray:
    """Rigorous upper bounds on the epsilon at each delta where the round-off g(eps) (Composed.round_off_at,
    non-increasing) is too large at the lower bound: any x with delta_upper(x) + e(x) + g(x) <= delta,
    delta_upper the worst pessimistic profile and e its evaluation error (Composed.delta_error), has a
    true delta(x) <= delta. The first of x_k = the pessimistic eps at delta 2^-k (k = 1 .. _HALVINGS) that
    is such an x, then bisection down towards the eps at delta itself (below which none is) keeps the
    smallest such x it meets; +inf where no x_k is one."""

    def holds(x: np.ndarray) -> np.ndarray:
        worst = np.max([np.atleast_1d(p.delta(x)) for p in composed.upper], axis=0)
        with np.errstate(invalid="ignore"):
            return worst + composed.delta_error(x) + composed.round_off_at(x) <= deltas

    high = np.full(deltas.shape, np.inf)
    for halving in range(1, _HALVINGS + 1):
        open_ = ~np.isfinite(high)
        if not np.any(open_):
            break
        candidate = _epsilons(composed.upper, deltas * 2.0**-halving)
        high = np.where(open_ & np.isfinite(candidate) & holds(np.nan_to_num(candidate)), candidate, high)
    found = np.isfinite(high)
    low = np.where(found, _epsilons(composed.upper, deltas), 0.0)
    high = np.where(found, high, 0.0)
    for _ in range(_LOWER_BISECTIONS if np.any(found) else 0):
        middle = 0.5 * (low + high)
        below = holds(middle)
        low, high = np.where(below, low, middle), np.where(below, middle, high)
    return np.where(found, np.maximum(high, 0.0), np.inf)


def _excesses(bounds: Bounds, accuracy: float, absolute: float, widest: float) -> np.ndarray:
    """How much wider than asked the bounds are at each query (0 where they are not finite)."""
    lower, upper = np.atleast_1d(bounds.lower), np.atleast_1d(bounds.upper)
    with np.errstate(invalid="ignore"):
        excess = upper - lower - _asked(lower, accuracy, absolute, widest)
    return np.where(np.isfinite(excess), excess, 0.0)


def _excess(bounds: Bounds, accuracy: float, absolute: float, widest: float) -> float:
    """How much wider than asked the (finite) bounds are at the widest query."""
    return float(np.max(_excesses(bounds, accuracy, absolute, widest), initial=0.0))


def _retried(
    bounds: Bounds,
    target: TailTarget | None,
    tried: np.ndarray,
    slack: np.ndarray,
    widths: tuple[float, float, float],
) -> np.ndarray:
    """The queries a steep retry of a tilted composition is still owed (epsilon_bounds): those the round-off
    swallows, those without a finite upper bound above a finite lower one (another query's tilt cut the
    tail they need: at q 1e-5, sigma 10, 1e5 steps the retry for 1e-9 left 1e-15 at inf, no longer
    swallowed), and those wider than asked (widths: accuracy, absolute, widest) where the round-off they
    carried on the last grid (`slack`) is at least half of the excess: a tilt at their own answer removes
    most of that, where a finer grid would not. The first tilt aims at the smallest delta; at q 1e-5,
    sigma 1, 1e7 steps it left 1e-5 at [0.1279, 0.1328] (excess 0.0049, 0.0034 of it round-off), and the
    retry tilted there [0.1295, 0.1310] (on the grid the budget left; a budget of its own refined it to
    [0.13045, 0.13064] in twice the time); retries for excesses that are discretization (slack below 1e-5
    of the excess there) cost a composition each for nothing."""
    if target is None:
        return np.zeros(tried.shape, dtype=bool)
    excess = _excesses(bounds, *widths)
    owed = _unanswered(bounds) | ((excess > 0.0) & (2.0 * slack >= excess))
    return owed & ~tried


def _unanswered(bounds: Bounds) -> np.ndarray:
    """The queries without a finite upper bound above a finite lower one (swallowed, or cut)."""
    unbounded = ~np.isfinite(np.atleast_1d(bounds.upper)) & np.isfinite(np.atleast_1d(bounds.lower))
    return np.atleast_1d(bounds.swallowed) | unbounded


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
