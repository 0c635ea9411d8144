"""What a PLD is here: a mechanism's dominating pair (its privacy profiles), a discrete PLD on a
uniform grid with its mass at infinity and the round-off it carries, and the grid's bookkeeping.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.errors import ComputationError

ProfileFn = Callable[[np.ndarray], np.ndarray]
_MAX_LOSS = 700.0  # e^{+-700} still fits in a float64
_BLOCK_LOSS = 64.0  # the span of loss over which DiscretePLD._suffix_sums shares one scale
ROUND_OFF_SAFETY = 10.0  # answers carry ten times the round-off estimate (measured errors: a fifth of it)


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
    off by at most tail(eps) + infinity (at most untilted); with a tilt, less (at: the weights 1 - e^{eps -
    eps_k} vanish at eps and the tilt's e^{-t (eps_k - eps)} beyond, about t times less). The tilted bounds
    are relative to the Chernoff bound of the tail, far below the untilted one there. The l2 ones are
    smaller still where the errors are the FFT's, spread over the grid (fft_round_off): the query's
    weights fall geometrically, so that about 1 / (2 t interval) grid points count instead of all n.
    Truncations keep them so: they move no errors into one point, which could grow an l2 norm up to the
    l1 norm (composition._cut_errors).
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
        return self._bounded(loss, points, self._log_weight)

    def tail_start(self, amount: float) -> float:
        """The smallest loss x whose tilted tail bound is at most `amount` (tilt > 0)."""
        return (self._log_weight() - math.log(amount)) / self.tilt

    def at(self, epsilon: ArrayLike, points: ArrayLike | None = None) -> np.ndarray:
        """The bound on the profile's error at each eps (vectorized), given the number of grid points
        above each if known (DiscretePLD.round_off_at): the errors of the finite masses as the profile
        weighs them (_log_profile_weight), plus the error at infinity."""
        finite = self._bounded(epsilon, points, self._log_profile_weight)
        return np.minimum(self.untilted, finite + self.infinity)

    def _bounded(
        self, loss: ArrayLike, points: ArrayLike | None, log_weight: Callable[[], float]
    ) -> np.ndarray:
        """min(untilted, sqrt(points) untilted_l2 where points are known, e^{log_weight() - t x} where
        tilted) at each x."""
        loss = np.asarray(loss, dtype=float)
        bound = np.full(loss.shape, self.untilted)
        if points is not None:
            bound = np.minimum(bound, np.sqrt(np.asarray(points, dtype=float)) * self.untilted_l2)
        if self.tilt <= 0.0:
            return bound
        with np.errstate(over="ignore", invalid="ignore"):
            tilted = np.exp(log_weight() - self.tilt * loss)
        return np.minimum(bound, np.nan_to_num(tilted, nan=np.inf))

    def _log_profile_weight(self) -> float:
        """log of the tilted part of the profile's error bound (at) before its factor e^{-t x}.

        The profile at x weighs the error e_k at eps_k > x by 1 - e^{x - eps_k}, which is
        [e_k e^{t eps_k}] e^{-t x} g(eps_k - x) with g(u) = (1 - e^{-u}) e^{-t u}. Against the tilted l1
        norm that is at most max g = (t / (t + 1))^t / (t + 1) (at u = log(1 + 1 / t)); against the l2
        norm (Cauchy-Schwarz) at most sqrt(sum_k g(u_k)^2), and for the unimodal g^2 on points spaced by
        `interval` that sum is at most the integral over the interval plus the peak: int_0^inf g^2 =
        2 / (s (s + 1) (s + 2)) with s = 2 t, about 1 / (4 t^3). Both are about t times below the weight 1
        of the tail (max g is the constant of RDP's conversion to delta, Canonne et al. 2020): at q 1e-5,
        sigma 1, 1e5 steps tilted at t = 262 the bound at delta 1e-15 fell from 6e-14 to 1.6e-16."""
        t, s = self.tilt, 2.0 * self.tilt
        log_peak = -math.log1p(t) - t * math.log1p(1.0 / t)
        spread = 2.0 / (s * (s + 1.0) * (s + 2.0)) / self.interval + math.exp(2.0 * log_peak)
        return min(self.log_tilted + log_peak, self.log_tilted_l2 + 0.5 * math.log(spread))


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

    @cached_property
    def losses(self) -> np.ndarray:
        """The grid losses eps_k = offset + k D of the masses (computed once: queries read them often)."""
        return self.offset + (self.lowest_index + np.arange(self.masses.size)) * self.interval

    def prepared(self) -> DiscretePLD:
        """This PLD with the tables its queries read (losses, suffix sums, the grid's profile) computed now,
        e.g. on the worker thread that composed it rather than by the first query (they cost about as much
        as a tenth of the composition). Returns self."""
        _ = self._padded_losses, self._negated_grid_profile
        return self

    @cached_property
    def _padded_losses(self) -> np.ndarray:
        """The losses with +inf after the last (eps_n, past the grid), computed once: queries index them."""
        return np.append(self.losses, np.inf)

    @cached_property
    def _negated_grid_profile(self) -> np.ndarray:
        """-delta(eps_k) at every grid loss (_suffix_sums; ascending), computed once for `epsilon`."""
        s0, r = self._suffix_sums
        return -(s0[1:] - np.exp(-self.interval) * r[1:] + self.infinity_mass)

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
        above = self._padded_losses[j]  # eps_j (inf past the grid, where R[n] = 0)
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
        negated = self._negated_grid_profile  # -delta(eps_k)
        first = np.searchsorted(negated, -delta, side="left")  # first k with delta(eps_k) <= delta
        losses = self._padded_losses
        with np.errstate(divide="ignore", invalid="ignore"):
            eps = losses[first] + np.log((s0[first] + self.infinity_mass - delta) / r[first])
        eps = np.where(first < negated.size, np.minimum(eps, losses[first]), eps)
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
    """A grid of `points` would pass the grid-point cap `max_points`."""

    def __init__(self, points: int, max_points: int) -> None:
        gigabytes = points * 8 * 4 / 2**30  # masses, FFT workspace and copies: ~4 float64 arrays
        super().__init__(
            f"would need {points:,} grid points ({gigabytes:.1f} GB)",
            hint="lower the accuracy, or raise the grid-point cap",
        )
        self.excess = points / max_points


def _check_size(points: int, max_points: int) -> None:
    """GridTooLarge before allocating more than max_points grid points."""
    if points > max_points:
        raise GridTooLarge(points, max_points)


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
