"""Self-composition by one FFT power: the T-fold composition of a discretized PLD as irfft(rfft(m)^T) on a
window outside which a Chernoff bound leaves at most the tails' mass.

Repeated squaring (composition.self_compose) costs about 2 log2(T) convolutions of the growing array,
each followed by a truncation; the power costs one forward and one inverse transform of the final window
(per run: plain, and tilted where the composition is tilted). Its price is in the round-off, which the
power multiplies by T (the squarings double theirs log2(T) times: the same order) and which no heavy point
is kept out of (convolution.convolve): power_round_off estimates it. Mass outside the window wraps around
the circular convolution onto the window; it is at most the tails' mass (plain run) and e^-52 of the
tilted mass (tilted run), and is counted as error. Pessimistic PLDs then move the mass beyond the window
to the safe side as truncations do (the Chernoff bound above to infinity, the one below up to the median
of the window's masses); optimistic ones drop it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from gdpcli.core.pld.convolution import Convolved, Norms, _l2, _log_tilted, fft_error, fft_work, merged
from gdpcli.core.pld.representation import DiscretePLD, RoundOff, Tails, _check_size

POWER_MIN = 16
"""The fewest copies a self-composition takes by the power rather than by repeated squaring."""
_SLOPES = 2.0 ** np.arange(-20.0, 44.0, 2.0)  # Chernoff parameters s tried (per unit of loss), then refined
_REFINEMENTS = 16  # golden-section steps around the best of _SLOPES
_BLOCKS = 4096  # the runs of points a moment generating function is searched over (_gathered)
_ALIAS = 2.0**-52  # the tilted run's mass outside the window, relative to its total (_edges)
_EPS = float(np.finfo(float).eps)


def has_no_round_off(pld: DiscretePLD) -> bool:
    """Whether the PLD carries no round-off yet (a discretized step, not a convolution's result)."""
    error = pld.round_off
    return error.untilted == 0.0 and error.untilted_l2 == 0.0 and error.infinity == 0.0


class _Losses(NamedTuple):
    """Log masses and their losses: a PLD's finite masses, or the same gathered in at most _BLOCKS runs of
    neighbouring points at their mean loss (an approximation of its moment generating function in
    O(_BLOCKS), to search with)."""

    log_masses: np.ndarray
    losses: np.ndarray


def _gathered(pld: DiscretePLD) -> tuple[_Losses, _Losses]:
    """(every point, the blocks) of a PLD's finite masses."""
    with np.errstate(divide="ignore"):
        every = _Losses(np.log(pld.masses), pld.losses)
    size = -(-pld.masses.size // _BLOCKS)
    if size <= 1:
        return every, every
    starts = np.arange(0, pld.masses.size, size)
    mass = np.add.reduceat(pld.masses, starts)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.add.reduceat(pld.masses * pld.losses, starts) / mass
        return every, _Losses(np.log(mass), np.where(mass > 0, mean, pld.losses[starts]))


def _log_mgf(of: _Losses, slope: ArrayLike) -> np.ndarray:
    """log sum_k m_k e^{s eps_k}, the moment generating function of the masses, at each s of an array
    (one row of exponents an s)."""
    exponents = of.log_masses + np.multiply.outer(slope, of.losses)
    top = np.max(exponents, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):  # (-inf - -inf where every mass is 0)
        summed = np.exp(exponents - top).sum(axis=-1)
    return np.where(np.isfinite(top[..., 0]), top[..., 0] + np.log(summed), -np.inf)


def _golden(value: Callable[[float], float], low: float, high: float, start: float) -> float:
    """The s of the smallest value found from `start` by golden section on [low, high], one new point a
    step (every s gives a valid bound: the search only tightens it)."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    left, right = high - ratio * (high - low), low + ratio * (high - low)
    at_left, at_right = value(left), value(right)
    seen = [(value(start), start), (at_left, left), (at_right, right)]
    for _ in range(_REFINEMENTS):
        if at_left <= at_right:
            high, right, at_right = right, left, at_left
            left = high - ratio * (high - low)
            at_left = value(left)
            seen.append((at_left, left))
        else:
            low, left, at_left = left, right, at_right
            right = low + ratio * (high - low)
            at_right = value(right)
            seen.append((at_right, right))
    return min(seen)[1]


class _Window(NamedTuple):
    """A run's grid indices [lowest, lowest + points) (of the composed grid) and the mass left outside
    them on each side (at most; relative to the run's total)."""

    lowest: int
    points: int
    below: float
    above: float


def _edges(pld: DiscretePLD, times: int, tails: Tails, tilt: float) -> tuple[_Window, _Window | None]:
    """The windows of the plain and the tilted run: [x_lo, x_hi] outside which the times-fold
    composition's finite P-mass is at most tails.below and tails.above (Chernoff: P(S >= x) <= e^{T K(s) -
    s x}, P(S <= x) <= e^{T K(-s) + s x} for s > 0, K the log moment generating function of one copy's
    finite masses), and with a tilt t the same for its tilted mass at _ALIAS of the tilted total (K(t +-
    s) - K(t)); None without a tilt. The s is searched on the blocks' approximation of K (_gathered) over
    _SLOPES (in one pass), then by golden section; K itself, at that s, gives the edge (every s gives a
    valid one, and near the best s the bound is flat: without a further search on K itself the windows
    moved by at most 31 of 92 000 points at q 1e-5, sigma 0.4, 1e7 steps, where that search, on the
    step's 100 000 points, took 0.6 of the run's 1.7 s of CPU)."""
    every, blocks = _gathered(pld)
    margin = 1e-6  # the bounds' own rounding: log tau is taken this much lower

    def edge(base: float, sign: float, log_tail: float) -> float:
        def bound_on(of: _Losses) -> Callable[[ArrayLike], np.ndarray]:
            centre = float(_log_mgf(of, base)) if base else 0.0
            return lambda s: (times * (_log_mgf(of, base + sign * np.asarray(s)) - centre) - log_tail) / s

        on_blocks, on_every = bound_on(blocks), bound_on(every)
        best = int(np.argmin(on_blocks(_SLOPES)))
        low, high = float(_SLOPES[max(best - 1, 0)]), float(_SLOPES[min(best + 1, _SLOPES.size - 1)])
        slope = _golden(lambda s: float(on_blocks(s)), low, high, float(_SLOPES[best]))
        return sign * float(on_every(slope))

    def window(base: float, below: float, above: float) -> _Window:
        high = edge(base, 1.0, math.log(above) - margin)
        low = edge(base, -1.0, math.log(below) - margin)
        first, last = times * pld.lowest_index, times * (pld.lowest_index + pld.masses.size - 1)
        offset = times * pld.offset
        lowest = max(first, math.ceil((low - offset) / pld.interval) - 1)
        highest = min(last, math.floor((high - offset) / pld.interval) + 1)
        return _Window(lowest, max(highest - lowest + 1, 1), below, above)

    plain = window(0.0, tails.below, tails.above)
    return plain, window(tilt, _ALIAS, _ALIAS) if tilt > 0.0 else None


def power_round_off(
    masses: np.ndarray, times: int, spectrum: np.ndarray, circular: np.ndarray, points: int
) -> Norms:
    """Estimated round-off of the window (`points` entries) of irfft(z^T), z = rfft(m) = `spectrum` on N =
    circular.size points, m = `masses` (non-negative), `circular` the computed inverse transform:

        l2: sqrt(sum_k D_k^2 / N) + fft_error(N) |circular|_2,   l1: sqrt(points) l2,
        D_k = T (|z_k| + 2 e)^(T - 1) (e + 6 eps (|z_k| + 2 e)) + eps,   e = fft_error(N) |m|_1,

    summed over the whole spectrum (twice the half an rfft holds). Each coefficient of the forward
    transform errs by at most about e (a sum of the masses with unit twiddle factors, as in fft_round_off),
    so its T-th power by at most T e (|z_k| + e)^(T - 1) (|z_k| <= |computed z_k| + e), damped where |z_k|
    < 1; the power's own rounding (_power) adds at most 6 T eps |z_k|^T (<= 6 T eps (|z_k| + 2 e)^T, which
    shares the first term's power: one logarithm and one exponential a coefficient), and eps for
    underflow; the inverse transform divides the l2 norm of those errors by sqrt(N) (Parseval) and adds
    its own fft_error(N) |circular|_2. Measured on exact binomial powers of 42 to 1663 points: below a
    fiftieth of it in l1 and l2 (tests/core/test_pld.py).
    """
    length = circular.size
    unit = fft_error(length)
    forward = unit * float(masses.sum())
    widened = np.abs(spectrum) + 2.0 * forward
    with np.errstate(divide="ignore"):
        damped = np.exp((times - 1) * np.log(widened))
    errors = times * damped * (forward + 6.0 * _EPS * widened) + _EPS
    l2 = math.sqrt(2.0 * float(np.square(errors).sum()) / length) + unit * _l2(circular)
    return Norms(math.sqrt(points) * l2, l2)


def _powered(masses: np.ndarray, times: int, length: int, start: int, points: int) -> Convolved:
    """The window [start, start + points) (indices from times x the first) of the times-fold circular
    self-convolution of `masses` on `length` points, clipped at 0, and its fresh round-off."""
    from scipy import fft

    spectrum = fft.rfft(masses, length)
    circular = fft.irfft(_power(spectrum, times), length)
    window = np.maximum(np.roll(circular, -(start % length))[:points], 0.0)
    return Convolved(window, power_round_off(masses, times, spectrum, circular, points))


def _power(values: np.ndarray, times: int) -> np.ndarray:
    """values^times elementwise by repeated squaring (about 2 log2(times) complex products, each off by at
    most sqrt(5) eps relative; a squaring doubles the relative error it is given, so the result is off by
    at most about 2 sqrt(5) times eps relative: power_round_off counts 6 times eps). The products are
    taken in place, into two arrays: the same values as fresh arrays give, at half the time (no page
    faults on fresh memory: 15 -> 7.5 ms for 2^19 coefficients and times 10^7)."""
    result: np.ndarray | None = None
    power = values.copy()
    while True:
        if times & 1:
            result = power.copy() if result is None else np.multiply(result, power, out=result)
        times >>= 1
        if not times:
            return np.ones_like(values) if result is None else result
        np.multiply(power, power, out=power)


def _infinity_mass(finite: float, infinity: float, times: int) -> float:
    """The mass at infinity of T copies: (f + a)^T - f^T (some copy infinite), as f^T expm1(T log1p(a /
    f)), which keeps its digits where a is far below f (the difference cancels them)."""
    if finite <= 0.0:
        return infinity**times
    return math.exp(times * math.log(finite)) * math.expm1(times * math.log1p(infinity / finite))


def _with_alias(run: Convolved, alias: float) -> Convolved:
    """The run with the mass wrapped onto its window (at most `alias`) added to its errors."""
    return run._replace(fresh=Norms(run.fresh.l1 + alias, run.fresh.l2 + alias))


def _run(masses: np.ndarray, times: int, first: int, run: _Window, composed: _Window) -> Convolved:
    """A run of the power on its own window, placed on the composed one (zeros outside its window, whose
    mass, like what wraps around onto it, counts as error: once more on each side where the composed
    window reaches further)."""
    from scipy import fft

    length = fft.next_fast_len(run.points, real=True)
    powered = _powered(masses, times, length, run.lowest - times * first, run.points)
    placed = np.zeros(composed.points)
    start = run.lowest - composed.lowest
    placed[start : start + run.points] = powered.masses
    beyond = (run.below if run.lowest > composed.lowest else 0.0) + (
        run.above if run.lowest + run.points < composed.lowest + composed.points else 0.0
    )
    return _with_alias(powered._replace(masses=placed), run.below + run.above + beyond)


def power_compose(
    pld: DiscretePLD, times: int, *, pessimistic: bool, tails: Tails, max_points: int
) -> DiscretePLD:
    """The times-fold composition of a PLD without round-off by one FFT power (module docstring): the
    same DiscretePLD as composition.self_compose gives, on the union of the runs' windows (_edges), with
    its round-off. The tilted run transforms the union, the plain run only its own window: a heavy-tailed
    step's tilted run reaches far above it (q 1e-5, sigma 1, 1e5 steps at delta 1e-15: 1.9 million
    points to its 120 000), and where the plain run is taken (below the switch of merged) the tilted one
    must have its values. Its work counts the two transforms of each run (fft_work) and the passes around
    them, measured at about (log2(times) + 16) units a point (the products of _power, the estimate of
    power_round_off), each run at the union's length: a bound on what the plain run costs, and the count
    the work budget was set by (counted at its own length, the plain run let a list down to 1e-15 at
    q 1e-5, sigma 1, 1e7 steps refine one grid further, to 1.7 s where dp-accounting takes 1.0 s)."""
    interval, first = pld.interval, pld.lowest_index
    offset = times * pld.offset
    tilt = pld.round_off.tilt
    plain_window, tilted_window = _edges(pld, times, tails, tilt if pld.masses.any() else 0.0)
    windows = [window for window in (plain_window, tilted_window) if window is not None]
    lowest = min(window.lowest for window in windows)
    highest = max(window.lowest + window.points for window in windows)
    composed = _Window(lowest, highest - lowest, _ALIAS, _ALIAS)
    from scipy import fft

    length = fft.next_fast_len(composed.points, real=True)
    _check_size(2 * length, max_points)
    plain = _run(pld.masses, times, first, plain_window, composed)
    if tilted_window is not None:
        tilted_masses, scale = _log_tilted(pld, tilt)  # (largest 1: the power cannot overflow if the
        scale += math.log(float(tilted_masses.sum()))  # total is 1)
        tilted = _run(tilted_masses / tilted_masses.sum(), times, first, composed, composed)
        losses = offset + (lowest + np.arange(composed.points)) * interval
        propagated = RoundOff(tilt=tilt, interval=interval)
        masses, round_off = merged(plain, tilted._replace(scale=times * scale), losses, propagated)
    else:
        masses, fresh = plain.masses, plain.fresh
        round_off = RoundOff(fresh.l1, min(fresh.l1, fresh.l2))
    infinity = _infinity_mass(float(pld.masses.sum()), pld.infinity_mass, times)
    if pessimistic:
        masses = masses.copy()
        cumulative = np.cumsum(masses)
        centre = (
            0 if tilt > 0.0 else min(int(np.searchsorted(cumulative, 0.5 * cumulative[-1])), masses.size - 1)
        )
        masses[centre] += tails.below
        infinity += tails.above
    round_off = replace(round_off, infinity=4.0 * times * _EPS * infinity)
    runs = 1 if tilted_window is None else 2
    work = pld.work + runs * (fft_work(length, square=True) + (math.log2(times) + 16.0) * length)
    return DiscretePLD(lowest, interval, masses, min(infinity, 1.0), round_off, offset, work)
