"""Random allocation ("balls-in-bins") of the Gaussian mechanism: rigorous upper and lower bounds on the
privacy profile of one epoch, as pairs for the PLD accountant (core.pld).

One epoch: every example lands in exactly one of b batches, uniformly at random and independently of the
others; each step releases its batch's clipped gradient sum plus N(0, sigma^2 C^2 I). Neighbours are
add/remove: the differing example is present (in its one random batch) or absent. In noise units, with
s = sensitivity / noise multiplier, the pair

    P = (1/b) sum_t N(s e_t, I_b)    (present),        Q = N(0, I_b)    (absent)

dominates one epoch, adaptive steps included, in both directions (remove: H(P || Q), add: H(Q || P)):
Chua, Ghazi, Harrison, Leeman, Kamath, Kumar, Manurangsi, Sinha, Zhang, "Balls-and-Bins Sampling for
DP-SGD" (AISTATS 2025), Sec. 3, the dominating pair (P_B, Q_B) of the adaptive batch linear queries
mechanism ABLQ_B; Feldman and Shenfeld, "Privacy Amplification by Random Allocation" (2025), Sec. 2,
the reduction of random allocation of adaptive Gaussian steps to the same pair. Epochs use fresh
allocations, so E epochs are dominated by the E-fold product (adaptive composition of dominating pairs).

Everything depends on x only through S = sum_t Y_t, Y_t = exp(s x_t - s^2/2): dP/dQ = S / b, so with
Y_t iid lognormal (under Q, E Y = 1, Var Y = e^{s^2} - 1)

    remove(x) = H_x(P || Q) = E_Q[(S/b - x)_+],      add(x) = H_x(Q || P) = E_Q[(1 - x S/b)_+]    (x = e^eps),

both convex functions of S. This module computes the law of S on a lattice h Z with FFT convolutions:

* UPPER pair (`upper_pair`): each Y_t is rounded at random to a neighbouring lattice point with the
  probabilities that keep its mean, Y'_t = jh or (j+1)h with E[Y'_t | Y_t] = Y_t. Then E[S' | x] = S, so
  by conditional Jensen E_Q[g(S')] >= E_Q[g(S)] for both convex g above: the lattice pair (P', Q'), Q' the
  law of S' = sum_t Y'_t and dP'/dQ' = S'/b (a probability since E S' = b), dominates (P, Q) in both
  directions. Its excess is second order: the rounding adds variance <= h^2 / (4 b) to S/b.
* LOWER pair (`lower_pair`): K = min(sum_t floor(Y_t / h), N) is a post-processing of x, so its laws
  under P and Q form a pair dominated by (P, Q) in both directions (data processing). Under Q the
  floor(Y_t / h) are iid; under P (the mixture over the shifted coordinate) K is the sum of b - 1 of them
  and one with the shifted law P(floor(Y/h) = j) = E_Q[Y; floor(Y/h) = j], clamped at N after every
  convolution (min(a + b, N) = min(min(a, N) + min(b, N), N) for a, b >= 0: exact).

Tails of the upper pair, added to both profiles as constants (mass at infinity), each at most `_TAIL`:
the event A that some Y_t exceeds Y_max (P(A) <= Phi(-(z - s)) + (b-1) Phi(-z), Q(A) <= b Phi(-z) with
Y_max = e^{s z - s^2/2}); partial sums above T = N h, dropped from the convolutions: off A, by Chernoff,
E_Q[(S'/b) 1{S' > T}] <= e^{-theta T} M1(theta) M(theta)^(b-1) and Q(S' > T) <= e^{-theta T} M(theta)^b,
M(theta) = E[e^{theta Y'}; Y' <= Y_max], M1(theta) = E[Y' e^{theta Y'}; Y' <= Y_max] (lattice sums;
partial sums are at most the whole, all terms being >= 0); and the FFT round-off, estimated as the PLD
engine estimates its own (pld.convolve, ten times, as pld.ROUND_OFF_SAFETY), times the largest weight
of a mass in the profile (T / b for remove, 1 for add). The lower pair subtracts the same round-off.

k participations (k-out-of-t allocation, Feldman and Shenfeld 2025): every example lands in k distinct
steps of a round of t, a uniformly random k-subset S. Its pair is P_k = C(t, k)^-1 sum_S N(s 1_S, I_t)
against Q = N(0, I_t).

* UPPER (`parts`): cut t into k parts t_i, r = t mod k of ceil(t / k) steps and k - r of floor(t / k).
  Draw a uniformly random permutation pi of the t steps, cut its positions into consecutive blocks of
  sizes t_i and pick one uniform position in each block: the image under a uniform pi of any k distinct
  positions is a uniform k-subset, so this draws S as the allocation does. Given pi the blocks are k
  independent 1-out-of-t_i allocations on disjoint steps, so P_k = E_pi[pi(P_1 x ... x P_k)] with P_i
  the one-participation pair of t_i batches and Q = pi(Q); the hockey-stick divergence is convex in
  the mixed argument, so H_x(P_k || Q) <= H_x(P_1 x ... x P_k || Q) and H_x(Q || P_k) likewise: the
  product of the parts' pairs dominates the round in both directions. With adaptive steps (pi revealed,
  a post-processing the other way) the k blocks are allocations run interleaved, each dominated by its
  pair, and interleaved (concurrent) composition of f-DP mechanisms obeys the same product bound as
  sequential composition (Vadhan and Zhang, "Concurrent Composition Theorems for Differential Privacy",
  STOC 2023). This is Feldman and Shenfeld's reduction of k-out-of-t allocation to k allocations of
  about t / k steps, with the floor/ceil parts of dp-accounting's random allocation accountant.
* LOWER (`lower_pair` with participations k): the run in which the differing example's clipped
  gradient is the same C v at every step, seen along v, releases exactly P_k or Q, so any
  post-processing of (P_k, Q) is dominated by the mechanism. The statistic is K above; by symmetry its
  law under P_k is that of k shifted coordinates and t - k plain ones, whatever S is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import special

from gdpcli.core.pld import ROUND_OFF_SAFETY, DominatingPair, convolve
from gdpcli.core.shuffle import check_pair_inputs

Profile = Callable[[np.ndarray], np.ndarray]

_TAIL = 1e-16  # each tail bound of the upper pair (module docstring), in delta per epoch
_MAX_CELLS = 2**19  # the most lattice points of one convolution operand
_CELLS_PER_UNIT = 0.5  # h = this * sqrt(accuracy Var Y): the rounding's relative excess variance ~ acc / 16
_THETAS = np.geomspace(1e-2, 300.0, 16)  # Chernoff exponents, in units of 1 / Y_max


@dataclass(frozen=True)
class Lattice:
    """The lattice of one epoch: spacing h, points 0, h, ..., (points - 1) h of S, Y_max = cells * h, and
    log M, log M1 of the rounded Y' at the Chernoff exponents `thetas` (module docstring)."""

    shift: float
    batches: int
    accuracy: float
    spacing: float
    cells: int
    points: int
    thetas: np.ndarray
    log_m: np.ndarray
    log_m1: np.ndarray

    @property
    def resolved(self) -> bool:
        """True when the spacing is within 8 times what the accuracy asked (spacing_for; relative excess
        variance 4 accuracy), not set by the point cap: otherwise the bounds are rigorous but loose, and a
        caller may prefer another."""
        return self.spacing <= 8.0 * spacing_for(self.shift, self.accuracy)

    @property
    def top(self) -> float:
        """T, the largest lattice value of S."""
        return (self.points - 1) * self.spacing


def _z_of(y: np.ndarray, s: float) -> np.ndarray:
    """z with e^{s z - s^2/2} = y (-inf at y = 0)."""
    with np.errstate(divide="ignore"):
        return (np.log(y) + 0.5 * s * s) / s


def _cell_moments(s: float, h: float, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """(m_j, mu_j) = (Q(Y in C_j), E_Q[Y; Y in C_j]) for the cells C_j = [jh, (j+1)h), j < cells.

    Y in C_j iff Z in [z_j, z_{j+1}); E_Q[Y; Z in I] = P_shifted(Z in I) = mass of I under N(s, 1). Each
    difference of normal CDFs is taken on the side of the median where both ends lie (erfc tails)."""
    z = _z_of(np.arange(cells + 1) * h, s)
    return _mass_between(z[:-1], z[1:]), _mass_between(z[:-1] - s, z[1:] - s)


def _mass_between(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Phi(hi) - Phi(lo) for lo <= hi, from the upper tails where lo >= 0 (no cancellation of two ~1s)."""
    upper = special.ndtr(-lo) - special.ndtr(-hi)
    return np.where(lo >= 0.0, upper, special.ndtr(hi) - special.ndtr(lo))


def _spread_masses(s: float, h: float, cells: int) -> np.ndarray:
    """Masses r_0..r_cells of Y' (mean-preserving random rounding of Y to the lattice), Y <= cells * h only:
    cell j sends E[((j+1)h - Y)/h; C_j] to j and E[(Y - jh)/h; C_j] to j + 1."""
    mass, moment = _cell_moments(s, h, cells)
    index = np.arange(cells)
    up = np.clip(moment / h - index * mass, 0.0, mass)
    r = np.zeros(cells + 1)
    r[:-1] += mass - up
    r[1:] += up
    return r


def _floor_masses(s: float, h: float, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """Q- and shifted laws of min(floor(Y / h), cells): cell masses, the last point taking Y >= cells * h."""
    mass, moment = _cell_moments(s, h, cells)
    z_top = _z_of(np.array([cells * h]), s)[0]
    q = np.append(mass, special.ndtr(-z_top))
    p = np.append(moment, special.ndtr(s - z_top))
    return q, p


def _fit(masses: np.ndarray, points: int, clamp: bool) -> np.ndarray:
    """masses on points 0..points-1: the mass beyond added to the last point (clamp) or dropped."""
    result = masses[:points].copy()
    if clamp and masses.size > points:
        result[-1] += masses[points:].sum()
    return result


def _convolve(a: np.ndarray, b: np.ndarray, points: int, clamp: bool) -> tuple[np.ndarray, float]:
    """a * b on points 0..points-1 (_fit), and the estimated l1 round-off of its FFT (pld.convolve)."""
    full, round_off = convolve(a, b, square=a is b)
    return _fit(full, points, clamp), round_off.l1


def _power(masses: np.ndarray, times: int, points: int, clamp: bool) -> tuple[np.ndarray | None, float]:
    """The times-fold convolution of masses (None for times = 0) by repeated squaring on `points` points,
    and its estimated l1 round-off: with sub-probabilities, conv(a, b) errs by at most e_a + e_b + fresh."""
    result, error = None, 0.0
    power, power_error = _fit(masses, points, clamp), 0.0
    while times:
        if times & 1:
            if result is None:
                result, error = power, power_error
            else:
                result, fresh = _convolve(result, power, points, clamp)
                error += power_error + fresh
        times >>= 1
        if times:
            power, fresh = _convolve(power, power, points, clamp)
            power_error = 2.0 * power_error + fresh
    return result, error


def _log_moments(r: np.ndarray, h: float, thetas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log M(theta) and log M1(theta) of the lattice masses r at j h (module docstring)."""
    values = np.arange(r.size) * h
    with np.errstate(divide="ignore"):
        log_r, log_v = np.log(r), np.log(values)
    exponents = log_r[None, :] + thetas[:, None] * values[None, :]
    return special.logsumexp(exponents, axis=1), special.logsumexp(exponents + log_v[None, :], axis=1)


def _chernoff_top(log_m: np.ndarray, log_m1: np.ndarray, thetas: np.ndarray, b: int) -> float:
    """The smallest T (over the theta grid) at which both Chernoff tails are at most _TAIL."""
    needed = np.maximum(log_m1 + (b - 1) * log_m, b * log_m) - np.log(_TAIL)
    return float(np.min(needed / thetas))


def _y_max(s: float, b: int) -> float:
    """Y_max = e^{s z - s^2/2} with Phi(-(z - s)) <= _TAIL / 2 and (b - 1) Phi(-z) <= _TAIL / 2."""
    z = max(s - special.ndtri(_TAIL / 2), -special.ndtri(_TAIL / (2 * max(b - 1, 1))))
    return float(np.exp(s * z - 0.5 * s * s))


def spacing_for(shift: float, accuracy: float) -> float:
    """The lattice spacing the accuracy asks for: the rounding adds <= h^2 / (4b) to Var(S/b) = Var(Y) / b,
    a relative excess of h^2 / (4 Var Y) = _CELLS_PER_UNIT^2 accuracy / 4."""
    return _CELLS_PER_UNIT * float(np.sqrt(accuracy * np.expm1(shift * shift)))


@lru_cache(maxsize=16)
def lattice(shift: float, batches: int, accuracy: float) -> Lattice:
    """The lattice for one epoch at this accuracy: spacing_for the accuracy, coarser where Y_max or the
    Chernoff top T would need more than _MAX_CELLS points; cells up to Y_max, points up to T."""
    s, b = check_pair_inputs(shift, batches)
    y_max = _y_max(s, b)
    h = max(spacing_for(s, accuracy), y_max / (_MAX_CELLS - 1))
    thetas = _THETAS / y_max
    while True:
        cells = int(np.ceil(y_max / h))
        log_m, log_m1 = _log_moments(_spread_masses(s, h, cells), h, thetas)
        points = int(np.ceil(_chernoff_top(log_m, log_m1, thetas, b) / h)) + 1
        if points <= _MAX_CELLS:
            return Lattice(s, b, accuracy, h, cells, max(points, 2), thetas, log_m, log_m1)
        h *= points / (_MAX_CELLS - 1)


def _tail_constants(grid: Lattice, round_off: float) -> tuple[float, float]:
    """(remove, add) constants: event A, Chernoff at T, and the FFT round-off (module docstring)."""
    s, b = grid.shift, grid.batches
    z = float(_z_of(np.array([grid.cells * grid.spacing]), s)[0])
    exponent = grid.thetas * grid.top
    chernoff_remove = float(np.exp(np.min(grid.log_m1 + (b - 1) * grid.log_m - exponent)))
    chernoff_add = float(np.exp(np.min(b * grid.log_m - exponent)))
    event_remove = special.ndtr(s - z) + (b - 1) * special.ndtr(-z)
    event_add = b * special.ndtr(-z)
    slack = ROUND_OFF_SAFETY * round_off
    return (
        float(event_remove + chernoff_remove + slack * max(grid.top / b, 1.0)),
        float(event_add + chernoff_add + slack),
    )


def _interpolate(table: np.ndarray, position: np.ndarray) -> np.ndarray:
    """table at fractional indices in [0, len - 1], linearly (both neighbours >= 0: no cancellation)."""
    below = np.clip(np.floor(position).astype(np.int64), 0, table.size - 2)
    weight = position - below
    return (1.0 - weight) * table[below] + weight * table[below + 1]


def _spread_profiles(q: np.ndarray, h: float, b: int, tails: tuple[float, float]) -> tuple[Profile, Profile]:
    """remove(eps) = E[(S'/b - e^eps)_+] + c_R and add(eps) = E[(1 - e^eps S'/b)_+] + c_A for S' = k h with
    masses q_k, as interpolations of double partial sums of positive terms (module docstring):
    A(j) = (h/b) sum_{i > j} sum_{k >= i} q_k = E[(S'/b - jh/b)_+] and B(j) = (h/b) sum_{i < j}
    sum_{k <= i} q_k = E[(jh/b - S'/b)_+], both linear between lattice points."""
    unit = h / b
    above = np.cumsum(q[::-1])[::-1]  # C(i) = sum_{k >= i} q_k
    a_table = unit * np.append(np.cumsum(above[:0:-1])[::-1], 0.0)  # A(j), j = 0..N
    below = np.cumsum(q)  # F(i) = sum_{k <= i} q_k
    b_table = unit * np.concatenate(([0.0], np.cumsum(below)))  # B(j), j = 0..N+1
    last, total = q.size - 1, float(below[-1])
    remove_tail, add_tail = tails

    def remove(epsilon: np.ndarray) -> np.ndarray:
        eps = np.asarray(epsilon, dtype=float)
        with np.errstate(over="ignore"):
            position = np.exp(eps) / unit
        inside = position < last
        values = np.where(inside, _interpolate(a_table, np.minimum(position, last)), 0.0)
        values = np.where(np.isneginf(eps), 1.0, values)  # x = 0: E[S'/b] + tails, which is >= 1
        return values + remove_tail

    def add(epsilon: np.ndarray) -> np.ndarray:
        eps = np.asarray(epsilon, dtype=float)
        with np.errstate(over="ignore", divide="ignore"):
            x = np.exp(eps)
            position = np.exp(-eps) / unit
        inside = position <= last + 1
        clipped = np.minimum(position, last + 1)
        beyond = b_table[-1] + (position - last - 1) * unit * total  # linear right of the lattice
        table = np.where(inside, _interpolate(b_table, clipped), beyond)
        with np.errstate(invalid="ignore"):
            values = np.where(np.isposinf(eps), q[0], x * table)
        values = np.where(np.isneginf(eps), total, values)
        return values + add_tail

    return remove, add


def upper_pair(shift: float, batches: int, accuracy: float) -> tuple[DominatingPair, Lattice]:
    """A pair that dominates one epoch of random allocation in both directions (module docstring: the
    mean-preserving random rounding, conditional Jensen, tails as constants), and its lattice. Compose it
    with pld.epsilon_bounds and use only `.upper`: its `.lower` bounds this pair, not the mechanism."""
    grid = lattice(shift, batches, accuracy)
    r = _spread_masses(grid.shift, grid.spacing, grid.cells)
    q, round_off = _power(r, grid.batches, grid.points, clamp=False)
    tails = _tail_constants(grid, round_off)
    remove, add = _spread_profiles(q, grid.spacing, grid.batches, tails)
    return DominatingPair(remove=remove, add=add), grid


def _discrete_profile(p: np.ndarray, q: np.ndarray, error: tuple[float, float]) -> Profile:
    """eps -> max(0, sum_k (p_k - e^eps q_k)_+ - e_p - e^eps e_q): the hockey-stick divergence of a
    discrete pair less its round-off (e_p, e_q) in l1, a convex lower bound on the exact pair's. Points
    sorted by their loss log(p_k / q_k); suffix sums give each eps's sum in O(log n)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.log(p) - np.log(q)
    keep = p > 0.0
    order = np.argsort(loss[keep])
    losses, ps, qs = loss[keep][order], p[keep][order], q[keep][order]
    suffix_p = np.append(np.cumsum(ps[::-1])[::-1], 0.0)
    suffix_q = np.append(np.cumsum(qs[::-1])[::-1], 0.0)
    error_p, error_q = error

    def profile(epsilon: np.ndarray) -> np.ndarray:
        eps = np.asarray(epsilon, dtype=float)
        first = np.searchsorted(losses, eps, side="right")
        with np.errstate(over="ignore", invalid="ignore"):
            x = np.exp(eps)
            value = (
                suffix_p[first]
                - error_p
                - np.where(suffix_q[first] > 0, x * (suffix_q[first] + error_q), 0.0)
            )
        value = np.where(np.isneginf(eps), suffix_p[0], value)
        return np.maximum(np.nan_to_num(value, nan=0.0, neginf=0.0), 0.0)

    return profile


def lower_pair(
    shift: float, batches: int, accuracy: float, participations: int = 1
) -> tuple[DominatingPair, Lattice]:
    """A pair dominated by one round's (P_k, Q) in both directions (k = participations < batches: each
    example in k of the round's batches; one epoch for k = 1): the laws of the post-processing
    K = min(sum_t floor(Y_t / h), N) (module docstring). Compose it with pld.epsilon_bounds and use only
    `.lower`, a rigorous lower bound on the epsilon of the mechanism."""
    grid = lattice(shift, batches, accuracy)
    if not 1 <= participations < grid.batches:
        raise ValueError(f"participations must be in [1, {grid.batches}), got {participations}")
    q_cell, p_cell = _floor_masses(grid.shift, grid.spacing, grid.cells)
    rest, error = _power(q_cell, grid.batches - participations, grid.points, clamp=True)
    shifted = (q_cell, p_cell)
    if participations > 1:
        (q_part, q_error), (p_part, p_error) = (
            _power(c, participations, grid.points, clamp=True) for c in shifted
        )
        shifted, error = (q_part, p_part), error + max(q_error, p_error)
    (q, fresh_q), (p, fresh_p) = (_convolve(rest, c, grid.points, clamp=True) for c in shifted)
    error += max(fresh_q, fresh_p)
    slack = ROUND_OFF_SAFETY * error
    pair = DominatingPair(
        remove=_discrete_profile(p, q, (slack, slack)), add=_discrete_profile(q, p, (slack, slack))
    )
    return pair, grid


def parts(steps: int, participations: int) -> tuple[tuple[int, int], ...]:
    """The k-out-of-t allocation's parts (module docstring, UPPER): ((size, count), ...), t mod k parts of
    ceil(t / k) steps and the others of floor(t / k), those present only; the product of the parts'
    one-participation pairs dominates the round."""
    if not 1 <= participations <= steps:
        raise ValueError(f"participations must be in [1, {steps}], got {participations}")
    size, longer = divmod(steps, participations)
    found = ((size, participations - longer), (size + 1, longer))
    return tuple((length, count) for length, count in found if count)
