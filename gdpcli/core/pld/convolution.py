"""Convolution of PLD masses by FFT and the round-off it leaves, in l1 and l2, plain and exponentially
tilted (the tilt keeps the errors relative to the tail where small deltas live).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from gdpcli.core.pld.representation import DiscretePLD, RoundOff, _check_size

HEAVY_SHARE = 1.0 / 16.0
"""A point holding at least this share of an array's mass is convolved directly (convolve): at most 16."""


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
    after untilting it is e^{-t eps_k} times smaller at large losses, where small deltas live (merged).
    """
    a, b = first.masses, second.masses
    size = a.size + b.size - 1
    _check_size(2 * size, max_points)
    square = first is second
    plain, fresh = convolve(a, b, square)
    error_a, error_b = first.round_off, second.round_off
    mass_a, mass_b = float(a.sum()), float(b.sum())
    infinity = error_a.infinity + error_b.infinity
    infinity += first.infinity_mass * error_b.untilted + error_a.untilted * second.infinity_mass
    propagated = RoundOff(
        untilted=error_a.untilted * mass_b + mass_a * error_b.untilted,
        untilted_l2=error_a.untilted_l2 * mass_b + mass_a * error_b.untilted_l2,
        tilt=error_a.tilt,
        infinity=infinity,
        interval=first.interval,
    )
    if propagated.tilt <= 0.0 or not (a.any() and b.any()):  # (no finite mass, e.g. a negligible
        return plain, _plain_round_off(propagated, fresh)  # mechanism's lower PLD: no tilt)
    tilt = propagated.tilt
    (tilted_a, scale_a), (tilted_b, scale_b) = _log_tilted(first, tilt), _log_tilted(second, tilt)
    tilted, tilted_fresh = convolve(tilted_a, tilted_b, square)
    log_mass_a, log_mass_b = scale_a + np.log(tilted_a.sum()), scale_b + np.log(tilted_b.sum())
    propagated = replace(
        propagated,
        log_tilted=float(np.logaddexp(error_a.log_tilted + log_mass_b, log_mass_a + error_b.log_tilted)),
        log_tilted_l2=float(
            np.logaddexp(error_a.log_tilted_l2 + log_mass_b, log_mass_a + error_b.log_tilted_l2)
        ),
    )
    offset = first.offset + second.offset
    losses = offset + (first.lowest_index + second.lowest_index + np.arange(size)) * first.interval
    return merged(
        Convolved(plain, fresh), Convolved(tilted, tilted_fresh, scale_a + scale_b), losses, propagated
    )


class Convolved(NamedTuple):
    """One run of a convolution: its masses (times e^{-scale}: a tilted run's are scaled into range) and
    the estimate of its fresh round-off (relative to those masses)."""

    masses: np.ndarray
    fresh: Norms
    scale: float = 0.0


def _plain_round_off(propagated: RoundOff, fresh: Norms) -> RoundOff:
    """The untilted round-off of a plain run (no tilt): the propagated errors plus its fresh ones."""
    untilted = propagated.untilted + fresh.l1
    return RoundOff(untilted, min(untilted, propagated.untilted_l2 + fresh.l2), infinity=propagated.infinity)


def merged(
    plain: Convolved, tilted: Convolved, losses: np.ndarray, propagated: RoundOff
) -> tuple[np.ndarray, RoundOff]:
    """The masses of a tilted composition from its plain and its tilted run, and their round-off: the
    propagated errors (`propagated`, untilted and tilted norms without this step's) plus the fresh ones.

    Each entry takes the result of the run with the smaller error bound; the switch is the loss L_c where
    the plain run's fresh l2 error, weighed by e^{t L_c}, meets the tilted run's: below it the plain
    entries add at most e^{t L_c} times their norms to the tilted norms, above it the tilted entries at
    most e^{-t L_c} times theirs to the untilted norms.
    """
    tilt, fresh, tilted_fresh, scale = propagated.tilt, plain.fresh, tilted.fresh, tilted.scale
    with np.errstate(divide="ignore", over="ignore"):  # inf only where the plain run is taken
        from_tilted = np.exp(np.log(tilted.masses) + scale - tilt * losses)
        lift = float(np.log(tilted_fresh.l2) + scale - np.log(fresh.l2))  # t L_c
    if not np.isfinite(lift):  # one run is exact: take it everywhere
        lift = -np.inf if tilted_fresh.l2 == 0.0 else np.inf
    masses = np.where(tilt * losses >= lift, from_tilted, plain.masses)
    share = fresh.l2 / tilted_fresh.l2 if np.isfinite(lift) else 0.0  # e^{scale - t L_c}

    def tilted_norm(propagated_norm: float, fresh_plain: float, fresh_tilted: float) -> float:
        """A tilted norm of the result: propagated, plus the fresh errors of each run where it is taken."""
        norm = propagated_norm
        if np.isfinite(lift) and fresh_plain > 0.0:
            norm = float(np.logaddexp(norm, lift + np.log(fresh_plain)))
        return float(np.logaddexp(norm, np.log(fresh_tilted) + scale)) if fresh_tilted > 0.0 else norm

    untilted = propagated.untilted + fresh.l1 + share * tilted_fresh.l1
    return masses, replace(
        propagated,
        untilted=untilted,
        untilted_l2=min(untilted, propagated.untilted_l2 + fresh.l2 + share * tilted_fresh.l2),
        log_tilted=tilted_norm(propagated.log_tilted, fresh.l1, tilted_fresh.l1),
        log_tilted_l2=tilted_norm(propagated.log_tilted_l2, fresh.l2, tilted_fresh.l2),
    )
