"""Privacy amplification by shuffling: n users each send one eps0-LDP report, the analyst sees them shuffled.

Upper bound: the clone reduction of Feldman, McMillan and Talwar. For neighbouring datasets that differ in
user 1 (x_1^0 against x_1^1), the shuffled output is a post-processing of one of the pair

    P = (A + D, C - A + 1 - D),    Q = (A + 1 - D, C - A + D),
    C ~ Bin(n - 1, q),  A ~ Bin(C, 1/2),  D ~ Bern(e^eps0 / (e^eps0 + 1)),

([FMT22] "Hiding among the clones", FOCS 2021, Thm 3.2: q = e^-eps0 for every eps0-LDP randomizer,
adaptive ones included; [FMT23] "Stronger privacy amplification by shuffling for Renyi and approximate
DP", SODA 2023, Thm 3.2 with its errata: the "stronger clone" q = 2 / (e^eps0 + 1) for the class of
randomizers its errata names, which holds binary and k-ary randomized response; randomizer="rr" here).
Each other user is a clone of user 1 (an x_1^0 or an x_1^1 report, 1/2 each) with probability q.

The f-DP of the pair is that of a mixture over C = c with weights w_c = Bin(n - 1, q)(c): the review's
eq. (4.1) ([WSY+23], Wang, Su, Ye, Shokri and Su, NeurIPS 2023) with components (P_c, Q_c). As the sum of
the two coordinates reveals c, the components have disjoint supports and (4.1) holds with equality; in
privacy-profile form

    delta(eps) = H_{e^eps}(P || Q) = sum_c w_c delta_c(eps),

and with x = e^eps in [1, e^eps0), N = c + 1, K ~ Bin(N, 1/2) (the count of x_1^0-type reports):

    P_c(k) / Q_c(k) = (e k + N - k) / (e (N - k) + k),      e = e^eps0,
    delta_c(eps) = 2 (e - 1) (x + 1) / ((e + 1) N) * E[(K - t)_+],   t = N (x e - 1) / ((e - 1) (x + 1)),

a sum of positive terms (no e^eps cancellation). delta(eps) = 0 for eps >= eps0, and swapping the two
coordinates maps P to Q, so the pair is symmetric and eps < 0 follows from
delta(eps) = 1 - e^eps + e^eps delta(-eps). The trade-off function is the dual (review eq. 2.4; GDP paper
Prop. 6): f(alpha) = sup_eps (1 - delta(eps) - e^eps alpha).

Lower bound: binary randomized response (keep = e^eps0 / (1 + e^eps0)) on the explicit neighbours
D0 = (0, 0, ..., 0) and D1 = (1, 0, ..., 0); the number Y of reported ones is a sufficient statistic of the
shuffled output, with Y ~ Bin(n, r), r = 1 / (e + 1), under D0 and Q(y) = P(y) (e y + (n - y) / e) / n under
D1 (ShuffledRR).

Numerics: delta_c(eps) = 2 (e - 1)(x + 1) / (e + 1) E[(K / N - h)_+] with h = t / N, so the mixture is one
expectation E[(R - h)_+] over the atoms k / N of every row c (_RatioExcess), sorted once: for h between
atoms it is A_i + (rho_i - h) B_i with B_i, A_i reverse cumulative log-sum-exps (sums of positive terms,
no cancellation), and each epsilon costs a binary search. The binomial tails left out are bounded by
Hoeffding's inequality and added at the largest ratio; the mixture over C is summed over a window of c
(weights are evaluated only on a range of c beyond which Chernoff's bound leaves less than e^-_WINDOW_LOG
/ n times e^-40) and the rest bounded by monotonicity (delta_c is non-increasing in c: the pair for c + 1
is the pair for c with one more Bern(1/2) clone added under both hypotheses, a post-processing). Where
the window times the table width passes _MAX_CELLS (large n), runs of consecutive c are summed at their
first c, an upper bound by the same monotonicity (_Mixture.coarsened), so memory stays bounded for every n
up to _MAX_USERS. The log pmfs come from lgamma, whose rounding (a few ulps of log N!) is covered by a
relative safety margin (_margin); e^eps0 is rounded up and q down, both safe (the eps0' > eps0 class
contains the eps0 one; fewer clones never help). The lower bound's E[(Y - t)_+] (_ExcessTable) sums the
counts within Hoeffding's reach of the mean and leaves the rest out, which only lowers it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import gammaln, logsumexp, rel_entr

from gdpcli.errors import ComputationError, InputError

if TYPE_CHECKING:
    from gdpcli.core.arrays import ArrayLike
    from gdpcli.core.pld import DominatingPair

Profile = Callable[[np.ndarray], np.ndarray]

RANDOMIZERS = ("rr", "general")
"""rr: the stronger clone of [FMT23] (binary / k-ary randomized response); general: any eps0-LDP [FMT22]."""

_TAIL_LOG = 250.0  # binomial tails beyond exp(-_TAIL_LOG) (Hoeffding) are bounded, not summed
_WINDOW_LOG = 120.0  # the mixture over C is summed where log w_c >= max - _WINDOW_LOG
_MAX_CELLS = 2**23  # the most binomial terms of the clone pair summed (rows x width): 64 MiB per array
_BLOCK_CELLS = 2**20  # rows x columns of one block of work (8 MiB per temporary array)
_MAX_USERS = 10**9  # lgamma's rounding of log n! grows like n log n ulps (_margin): 2e-3 relative at 1e9
_ULP = 2.0**-52
_TRADEOFF_GRID = 401  # epsilons of the dual (eq. 2.4) sup in tradeoff()
_BISECTIONS = 60


def check_parameters(eps0: float, n: float) -> tuple[float, int]:
    """(eps0, n) validated: eps0 > 0 finite, n >= 2 an integer; InputError (one line) otherwise."""
    if not (math.isfinite(eps0) and eps0 > 0.0):
        raise InputError(f"shuffle: eps0={eps0!r} is out of range", "allowed: eps0 > 0")
    if not (float(n).is_integer() and n >= 2):
        raise InputError(
            f"shuffle: n={n!r} is out of range", "allowed: n >= 2, an integer (the number of users)"
        )
    if eps0 > 300.0:
        raise InputError(f"shuffle: eps0={eps0!r} is out of range", "allowed: eps0 <= 300")
    if n > _MAX_USERS:
        raise ComputationError(
            f"shuffle: n={n:.6g} users is more than the binomial sums are accurate for",
            f"n <= {_MAX_USERS:.0e}",
        )
    return float(eps0), int(n)


def check_randomizer(randomizer: str) -> str:
    if randomizer not in RANDOMIZERS:
        raise InputError(
            f"shuffle: randomizer={randomizer!r} is unknown", f"allowed: {', '.join(RANDOMIZERS)}"
        )
    return randomizer


def local_ratio(eps0: float) -> float:
    """e^eps0 rounded up (two ulps: exp is within one): a larger ratio is a weaker, safe assumption."""
    return math.nextafter(math.nextafter(math.exp(eps0), math.inf), math.inf)


def clone_probability(eps0: float, randomizer: str = "rr") -> float:
    """q rounded down: 2 / (e^eps0 + 1) for randomized response ([FMT23] Thm 3.2, stronger clone), e^-eps0
    for a general eps0-LDP randomizer ([FMT22] Thm 3.2)."""
    e = local_ratio(eps0)
    q = 2.0 / (e + 1.0) if check_randomizer(randomizer) == "rr" else 1.0 / e
    return q * (1.0 - 4.0 * _ULP)


def _margin(n: int, cells: int) -> float:
    """Relative safety margin of a computed sum of binomial terms: lgamma of arguments up to n + 1 is within
    a few ulps of log (n+1)! <= (n+1) log(n+1), and a log-sum-exp of `cells` terms loses cells ulps."""
    return math.expm1(2.0**-46 * (6.0 * (n + 1) * math.log(n + 2.0) + cells + 64.0))


def _log_pmf(big_n: np.ndarray, k: np.ndarray, log_p: float, log_q: float) -> np.ndarray:
    """log Bin(N, p)(k), -inf outside 0 <= k <= N (broadcasting)."""
    inside = (k >= 0) & (k <= big_n)
    kk, nn = np.where(inside, k, 0), np.where(inside, big_n, 0)
    value = gammaln(nn + 1.0) - gammaln(kk + 1.0) - gammaln(nn - kk + 1.0) + kk * log_p + (nn - kk) * log_q
    return np.where(inside, value, -np.inf)


def _reverse_cumulative(log_terms: np.ndarray) -> np.ndarray:
    """log sum_{j' >= j} exp(log_terms[..., j']) along the last axis."""
    return np.logaddexp.accumulate(log_terms[..., ::-1], axis=-1)[..., ::-1]


def _log_hoeffding(big_n: np.ndarray, last: np.ndarray, p: float) -> np.ndarray:
    """log of a bound on Pr(K > last), K ~ Bin(N, p): exp(-2 (last - N p)^2 / N) (Hoeffding); -inf when
    last >= N, 0 when last < N p."""
    gap = np.maximum(last - big_n * p, 0.0)
    bound = -2.0 * gap**2 / np.maximum(big_n, 1.0)
    return np.where(last >= big_n, -np.inf, bound)


def _log_chernoff(m: int, q: float, k: int) -> float:
    """log of a bound on Pr(C <= k) for k <= m q, or on Pr(C >= k) for k >= m q, C ~ Bin(m, q): Chernoff's
    -m KL(k/m || q) (Hoeffding 1963, Thm 1), its exponent shrunk by 1e-9 against rounding."""
    share = k / m
    return -m * float(rel_entr(share, q) + rel_entr(1.0 - share, 1.0 - q)) * (1.0 - 1e-9)


def _region(m: int, q: float, level: float) -> tuple[int, int]:
    """Counts [lo, hi] of C ~ Bin(m, q) beyond which each tail holds at most e^-level (Chernoff): the
    weights are evaluated there only, never at all m + 1 counts."""
    mean, half = m * q, 16.0 * math.sqrt(m * q * (1.0 - q)) + 16.0
    while True:
        lo, hi = max(0, math.floor(mean - half)), min(m, math.ceil(mean + half))
        low_ok = lo == 0 or _log_chernoff(m, q, lo - 1) <= -level
        if low_ok and (hi == m or _log_chernoff(m, q, hi + 1) <= -level):
            return lo, hi
        half *= 2.0


class _ExcessTable:
    """log E[(K - t)_+] for K ~ Bin(N, p), a lower bound from the counts first .. first + width - 1 (the
    mass beyond them left out), as sums of positive terms.

    For t in [m - 1, m): E[(K - t)_+] >= A_m + (m - t) B_m, B_m = Pr(first + width > K >= m),
    A_m = sum_{j > m} B_j; below the table only K >= first counts: A_first + (first - t) B_first.
    """

    def __init__(self, big_n: int, first: int, width: int, p: float) -> None:
        self.big_n, self.first, self.width = float(big_n), float(first), width
        k = self.first + np.arange(width, dtype=float)
        self.log_b = _reverse_cumulative(_log_pmf(np.array(self.big_n), k, math.log(p), math.log1p(-p)))
        self.log_a = _reverse_cumulative(np.append(self.log_b[1:], -np.inf))

    def log_excess(self, t: np.ndarray) -> np.ndarray:
        """log of the lower bound on E[(K - t)_+] (1-D t), -inf where it is 0."""
        m = np.maximum(np.floor(t) + 1.0, self.first)
        index = m - self.first
        j = np.minimum(index, self.width - 1).astype(np.intp)
        with np.errstate(divide="ignore"):
            value = np.logaddexp(self.log_a[j], np.log(m - t) + self.log_b[j])
        return np.where((index < self.width) & (t < self.big_n), value, -np.inf)


class _RatioExcess:
    """log E[(R - h)_+] for R = K / N, N = C + 1, C drawn from the mixture's rows and K ~ Bin(N, 1/2): an
    upper bound, as sums of positive terms, for h >= 1/2 (where k < N/2 adds nothing).

    Atoms: each row's k = floor(N/2) .. floor(N/2) + width - 1 at ratio k / N rounded up, with mass
    w_c Bin(N, 1/2)(k); the mass beyond them (<= tau_c, Hoeffding) and delta_0's share of the mass below the
    window (K = N = 1, probability 1/2) at ratio 1, the largest. Sorted, rho_1 <= ... <= rho_M, and for
    rho_{i-1} < h <= rho_i:

        E[(R - h)_+] = A_i + (rho_i - h) B_i,  B_i = sum_{j >= i} m_j,
        A_i = sum_{j > i} (rho_j - rho_{j-1}) B_j.

    One sort when built; each query is a binary search, whatever the number of rows.
    """

    def __init__(self, mixture: _Mixture, width: int) -> None:
        if mixture.counts.size * width > _MAX_CELLS:
            raise ComputationError(
                f"shuffle: the clone pair needs {mixture.counts.size * width:.3g} binomial terms",
                f"the most summed is {_MAX_CELLS:.3g}: use a smaller n",
            )
        big_n = mixture.counts + 1.0
        log_w = mixture.log_weights.copy()
        log_w[-1] = np.logaddexp(log_w[-1], mixture.log_above)  # c above the window: delta_c <= the last's
        step = max(1, _BLOCK_CELLS // width)
        blocks = [
            _ratio_atoms(big_n[s : s + step], log_w[s : s + step], width) for s in range(0, big_n.size, step)
        ]
        ratio = np.concatenate([b[0] for b in blocks] + [[1.0]])
        log_mass = np.concatenate([b[1] for b in blocks] + [[mixture.log_below - math.log(2.0)]])
        order = np.argsort(ratio, kind="stable")
        self.ratio, self.terms = ratio[order], ratio.size
        self.log_b = _reverse_cumulative(log_mass[order])
        with np.errstate(divide="ignore"):
            log_gaps = np.log(np.diff(self.ratio)) + self.log_b[1:]
        self.log_a = _reverse_cumulative(np.append(log_gaps, -np.inf))

    def log_excess(self, h: np.ndarray) -> np.ndarray:
        """log of the upper bound on E[(R - h)_+] (1-D h), -inf where it is 0 (h above every ratio)."""
        i = np.searchsorted(self.ratio, h, side="left")
        j = np.minimum(i, self.ratio.size - 1)
        with np.errstate(divide="ignore"):
            value = np.logaddexp(self.log_a[j], np.log(self.ratio[j] - h) + self.log_b[j])
        return np.where(i < self.ratio.size, value, -np.inf)


def _ratio_atoms(big_n: np.ndarray, log_w: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(ratio, log mass) of one block of rows' atoms for _RatioExcess, zero masses left out."""
    first = np.floor(big_n / 2.0)
    k = first[:, None] + np.arange(width)
    log_mass = log_w[:, None] + _log_pmf(big_n[:, None], k, math.log(0.5), math.log(0.5))
    log_tau = log_w + _log_hoeffding(big_n, first + width - 1.0, 0.5)
    ratio = np.nextafter(k / big_n[:, None], np.inf)
    kept = np.isfinite(log_mass)
    return np.append(ratio[kept], np.ones(big_n.size)), np.append(log_mass[kept], log_tau)


def _tail_width(big_n: float, p: float) -> int:
    """Table width reaching _TAIL_LOG beyond the mean by Hoeffding: sqrt(_TAIL_LOG N / 2) + 2."""
    return math.ceil(math.sqrt(_TAIL_LOG * big_n / 2.0)) + 2


def _clone_width(big_n: float) -> int:
    """The clone atoms' width for N = big_n reports (K ~ Bin(N, 1/2) from N/2 on)."""
    return min(int(big_n) + 2, _tail_width(big_n, 0.5))


@dataclass(frozen=True)
class _Mixture:
    """The binomial mixing weights w_c = Bin(n - 1, q)(c): rows at counts c with the log weight each stands
    for, together the window of c where log w_c >= max - _WINDOW_LOG (`summed` weights), and upper bounds on
    the masses below and above it (exact sums near the window, the Chernoff bound beyond)."""

    counts: np.ndarray
    log_weights: np.ndarray
    log_below: float
    log_above: float
    summed: int

    def coarsened(self, rows: int) -> _Mixture:
        """At most `rows` rows: each run of b = ceil(size / rows) consecutive counts becomes one row at its
        first count carrying the run's weight, an upper bound on sum_c w_c g(c) for every g non-increasing in
        c (delta_c(eps) and the Renyi moments M_c are: the pair for c + 1 post-processes the one for c)."""
        run = -(-self.counts.size // rows)
        if run == 1:
            return self
        starts = np.arange(0, self.counts.size, run)
        log_weights = np.logaddexp.reduceat(self.log_weights, starts)
        return replace(self, counts=self.counts[starts], log_weights=log_weights)


def _mixture(n: int, q: float) -> _Mixture:
    m = n - 1
    lo, hi = _region(m, q, _WINDOW_LOG + math.log(n) + 40.0)  # the mode's weight is >= 1/n: window inside
    c = np.arange(lo, hi + 1, dtype=float)
    log_w = _log_pmf(np.array(float(m)), c, math.log(q), math.log1p(-q))
    inside = np.flatnonzero(log_w >= log_w.max() - _WINDOW_LOG)
    first, last = int(inside[0]), int(inside[-1])
    far_below = _log_chernoff(m, q, lo - 1) if lo > 0 else -math.inf
    far_above = _log_chernoff(m, q, hi + 1) if hi < m else -math.inf
    below = float(logsumexp(np.append(log_w[:first], far_below)))
    above = float(logsumexp(np.append(log_w[last + 1 :], far_above)))
    return _Mixture(c[first : last + 1], log_w[first : last + 1], below, above, last + 1 - first)


@dataclass(frozen=True)
class CloneReduction:
    """The [FMT22]/[FMT23] clone pair (P, Q) of n shuffled eps0-LDP reports: a rigorous upper bound on the
    privacy of the shuffled output, symmetric in the two directions."""

    eps0: float
    n: int
    randomizer: str = "rr"

    def __post_init__(self) -> None:
        check_parameters(self.eps0, self.n)
        check_randomizer(self.randomizer)

    @property
    def ratio(self) -> float:
        return local_ratio(self.eps0)

    @property
    def clone_probability(self) -> float:
        return clone_probability(self.eps0, self.randomizer)

    @cached_property
    def _weights(self) -> _Mixture:
        """The mixture over C with at most as many rows as _MAX_CELLS atoms allow."""
        mixture = _mixture(self.n, self.clone_probability)
        width = _clone_width(float(mixture.counts.max()) + 1.0)
        return mixture.coarsened(max(1, _MAX_CELLS // width))

    @cached_property
    def _excess(self) -> _RatioExcess:
        return _RatioExcess(self._weights, _clone_width(float(self._weights.counts.max()) + 1.0))

    def _log_profile_nonnegative(self, x: np.ndarray) -> np.ndarray:
        """log delta(eps) for x = e^eps in [1, e) (1-D): with h = (x e - 1) / ((e - 1)(x + 1)),
        delta_c(eps) = 2 (e - 1)(x + 1) / (e + 1) E[(K / N - h)_+], so delta(eps) is that factor times
        E[(R - h)_+] over the mixture (the bounded tails of C among its atoms)."""
        e = self.ratio
        x = x * (1.0 - 2.0 * _ULP)  # e^eps rounded down: the profile is non-increasing in it
        h = (x * e - 1.0) / ((e - 1.0) * (x + 1.0)) * (1.0 - 8.0 * _ULP)
        log_factor = math.log(2.0 * (e - 1.0) / (e + 1.0)) + np.log1p(x)
        terms = self._excess.terms + self._weights.summed
        return log_factor + self._excess.log_excess(h) + math.log1p(_margin(self.n, terms))

    def profile(self, epsilon: ArrayLike) -> np.ndarray:
        """A rigorous upper bound on delta(eps) = H_{e^eps}(P || Q) = H_{e^eps}(Q || P), all real eps
        (+inf gives 0), vectorized."""
        return _symmetric_profile(self._log_profile_nonnegative, self.eps0, epsilon)

    def dominating_pair(self) -> DominatingPair:
        """The pair for gdpcli's PLD engine (symmetric; losses within [-eps0, eps0])."""
        from gdpcli.core.pld import DominatingPair

        return DominatingPair(self.profile, loss_range=(-self.eps0, self.eps0))

    def tradeoff(self, alpha: ArrayLike) -> np.ndarray:
        """A rigorous lower bound on the trade-off function: the dual of the profile (review eq. 2.4)."""
        return _dual_tradeoff(self.profile, self.eps0, alpha)

    def epsilon(self, delta: ArrayLike) -> np.ndarray:
        """A rigorous upper bound on eps(delta): the bisection's upper end, where profile <= delta."""
        return _epsilon_of(self.profile, self.eps0, delta, upper=True)

    def rdp(self, order: ArrayLike) -> np.ndarray:
        """An upper bound on the Renyi divergence D_order(P || Q) of the clone pair (orders > 1), so on the
        RDP of the shuffled output (data processing)."""
        return _clone_rdp(self, np.asarray(order, dtype=float))


@lru_cache(maxsize=32)
def clone_reduction(eps0: float, n: int, randomizer: str = "rr") -> CloneReduction:
    """A shared CloneReduction (its binomial tables are built once per parameter set)."""
    return CloneReduction(eps0, n, randomizer)


@lru_cache(maxsize=32)
def shuffled_rr(eps0: float, n: int) -> ShuffledRR:
    """A shared ShuffledRR lower-bound pair."""
    return ShuffledRR(eps0, n)


def _symmetric_profile(log_nonnegative: Profile, eps0: float, epsilon: ArrayLike) -> np.ndarray:
    """delta(eps) of a symmetric pair from its log profile on [0, eps0): 0 beyond eps0, and
    1 - e^eps + e^eps delta(-eps) below 0."""
    eps = np.asarray(epsilon, dtype=float)
    flat = eps.reshape(-1)
    out = np.zeros(flat.shape)
    magnitude = np.abs(flat)
    active = magnitude < eps0
    if active.any():
        out[active] = np.exp(log_nonnegative(np.exp(magnitude[active])))
    negative = flat < 0
    x = np.exp(flat[negative])
    out[negative] = -np.expm1(flat[negative]) + x * out[negative]
    return np.minimum(out, 1.0).reshape(eps.shape)


def _dual_tradeoff(profile: Profile, eps0: float, alpha: ArrayLike) -> np.ndarray:
    """f(alpha) >= max(0, max over a grid of eps in [-eps0, eps0] of 1 - delta(eps) - e^eps alpha): each
    line is valid for an upper bound delta (review eq. 2.4; GDP paper Prop. 6): the max is a lower bound."""
    a = np.asarray(alpha, dtype=float)
    flat = a.reshape(-1)
    grid = np.linspace(-eps0, eps0, _TRADEOFF_GRID)
    lines, slopes = 1.0 - profile(grid)[:, None], np.exp(grid)[:, None]
    step = _BLOCK_CELLS // _TRADEOFF_GRID
    best = [(lines - slopes * flat[s : s + step]).max(axis=0) for s in range(0, flat.size, step)]
    return np.clip(np.concatenate(best), 0.0, 1.0 - flat).reshape(a.shape)


def _epsilon_of(profile: Profile, eps0: float, delta: ArrayLike, *, upper: bool) -> np.ndarray:
    """eps(delta) by bisection on [0, eps0] (the profile is non-increasing): the upper end (upper bound when
    the profile is an upper bound) or the lower end (lower bound when it is a lower bound)."""
    d = np.asarray(delta, dtype=float).reshape(-1)
    if np.any(~(d > 0.0) | ~(d < 1.0)):
        raise InputError("shuffle: delta is out of range", "allowed: 0 < delta < 1")
    lo, hi = np.zeros_like(d), np.full_like(d, eps0)
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        above = profile(mid) > d
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    zero = profile(np.zeros_like(d)) <= d
    result = np.where(zero, 0.0, hi if upper else lo)
    return result.reshape(np.shape(delta))


def _clone_log_moments(pair: CloneReduction, orders: np.ndarray) -> np.ndarray:
    """log sum_c w_c M_c, M_c = sum_k P_c(k)^order Q_c(k)^(1 - order), upper-bounded, at each order of a
    flat array: k within sqrt(L N / 2) of N/2 (the rest, of P-mass <= 2 exp(-L) by Hoeffding, at most
    e^{(order - 1) eps0} each in ratio), c outside the window by M_0 (below) and M_{c_hi} (above): M_c is
    non-increasing in c, so runs of c may be coarsened to fit _MAX_CELLS terms; inf (no bound) where one
    row alone would not. Orders whose coarsening is the same share the binomial terms: each order sums its
    own window of them (the terms, their order and so the values are those of one order at a time; an
    accountant's first question asks 321 orders, at 0.08 s each for n = 3000)."""
    e, tails_log = pair.ratio, _TAIL_LOG + (orders - 1.0) * pair.eps0
    a, most = e / (e + 1.0), float(pair._weights.counts.max()) + 1.0
    halves = np.minimum(np.ceil(np.sqrt(tails_log * most / 2.0)), math.ceil(most / 2.0)).astype(int)
    rows = np.maximum(1, _MAX_CELLS // (2 * halves + 3))
    runs = -(-pair._weights.counts.size // rows)  # the coarsening's run length (_Mixture.coarsened)
    result = np.full(orders.shape, math.inf)
    for run in np.unique(runs):
        group = np.flatnonzero(runs == run)
        mixture = pair._weights.coarsened(int(rows[group[0]]))
        fits = group[mixture.counts.size * (2 * halves[group] + 3) <= _MAX_CELLS]
        if fits.size:
            result[fits] = _mixed_log_moments(pair, mixture, a, orders[fits], halves[fits], tails_log[fits])
    return result


def _mixed_log_moments(
    pair: CloneReduction,
    mixture: _Mixture,
    a: float,
    orders: np.ndarray,
    halves: np.ndarray,
    tails_log: np.ndarray,
) -> np.ndarray:
    """_clone_log_moments of orders that share the mixture's rows, each with its own window half-width
    and Hoeffding level."""
    big_n = mixture.counts + 1.0
    widest = int(halves.max())
    step = max(1, _BLOCK_CELLS // (2 * widest + 3))
    rows = [
        _log_row_moments(big_n[s : s + step], widest, a, orders, halves) for s in range(0, big_n.size, step)
    ]
    log_m = np.concatenate(rows, axis=1) + math.log(2.0) - np.log(big_n)
    dropped = math.log(4.0) - tails_log + (orders - 1.0) * pair.eps0
    log_m = np.logaddexp(log_m, dropped[:, None])
    log_m0 = np.logaddexp(
        orders * math.log(a) + (1.0 - orders) * math.log1p(-a),
        orders * math.log1p(-a) + (1.0 - orders) * math.log(a),
    )
    inner = logsumexp(mixture.log_weights + log_m, axis=1)
    tails = np.logaddexp(mixture.log_below + log_m0, mixture.log_above + log_m[:, -1])
    cells = big_n.size * (2 * halves + 3)
    margins = np.log1p([_margin(pair.n, int(c) + mixture.summed) for c in cells])
    return np.logaddexp(inner, tails) + margins


def _log_row_moments(
    big_n: np.ndarray, widest: int, a: float, orders: np.ndarray, halves: np.ndarray
) -> np.ndarray:
    """log sum_k Bin(N, 1/2)(k) p_k^order q_k^(1 - order), p_k = a k + (1 - a)(N - k) and q_k its mirror,
    over k within half + 1 of N/2, for each order (its own half) and each N of big_n: rows by order."""
    k = np.floor(big_n / 2.0)[:, None] + np.arange(-widest - 1, widest + 2)
    log_pmf = _log_pmf(big_n[:, None], k, math.log(0.5), math.log(0.5))
    kk = np.clip(k, 0.0, big_n[:, None])
    log_p = np.log(a * kk + (1.0 - a) * (big_n[:, None] - kk))
    log_q = np.log(a * (big_n[:, None] - kk) + (1.0 - a) * kk)
    inside = np.isfinite(log_pmf)
    moments = np.empty((orders.size, big_n.size))
    for index, (order, half) in enumerate(zip(orders, halves, strict=True)):
        window = slice(widest - half, widest + half + 3)
        terms = log_pmf[:, window] + order * log_p[:, window] + (1.0 - order) * log_q[:, window]
        moments[index] = logsumexp(np.where(inside[:, window], terms, -np.inf), axis=1)
    return moments


def _clone_rdp(pair: CloneReduction, orders: np.ndarray) -> np.ndarray:
    """D_order(P || Q) = log(moment) / (order - 1), capped by eps0 (the pair is eps0-DP)."""
    flat = orders.reshape(-1)
    if np.any(~(flat > 1.0)):
        raise InputError("shuffle: RDP orders must be > 1", "allowed: order > 1")
    values = np.minimum(_clone_log_moments(pair, flat) / (flat - 1.0), pair.eps0)
    return values.reshape(orders.shape)


@dataclass(frozen=True)
class ShuffledRR:
    """A rigorous LOWER bound: n users run binary randomized response with keep = e^eps0 / (1 + e^eps0),
    shuffled, on the neighbours D0 = (0, ..., 0) and D1 = (1, 0, ..., 0). Y, the number of reported ones,
    is sufficient: Y ~ Bin(n, r), r = 1/(e + 1), under D0 (P), and Q(y) = P(y) (e^2 y + n - y) / (e n)
    under D1.

    remove: H_x(P || Q) = x (e^2 - 1) / (e n) E[(y2 - Y)_+], y2 = n (e - x) / (x (e^2 - 1));
    add:    H_x(Q || P) = (e^2 - 1) / (e n) E[(Y - y1)_+],  y1 = n (x e - 1) / (e^2 - 1),
    for x = e^eps >= 1; both vanish for eps >= eps0, and H_x(P || Q) = 1 - x + x H_{1/x}(Q || P) below 0.
    """

    eps0: float
    n: int

    def __post_init__(self) -> None:
        check_parameters(self.eps0, self.n)

    @property
    def ratio(self) -> float:
        return math.exp(self.eps0)

    @cached_property
    def _tables(self) -> tuple[_ExcessTable, _ExcessTable]:
        """E[(Y - t)_+] tables for Y ~ Bin(n, r) and for n - Y ~ Bin(n, 1 - r), lower bounds."""
        r = 1.0 / (self.ratio + 1.0)
        return self._table(r), self._table(1.0 - r)

    def _table(self, p: float) -> _ExcessTable:
        """The counts within sqrt(_TAIL_LOG n / 2) of the mean n p, every count for small n; the rest (mass
        <= 2 e^-_TAIL_LOG, Hoeffding) is left out, which keeps the profile a lower bound."""
        width = min(self.n + 1, 2 * _tail_width(float(self.n), p))
        first = min(max(0, math.floor(self.n * p) - width // 2), self.n + 1 - width)
        return _ExcessTable(self.n, first, width, p)

    def _log_direction(self, x: np.ndarray, add: bool) -> np.ndarray:
        """log H_x for x = e^eps in [1, e) (1-D), rounded down (t up, the margin taken off)."""
        e, n = self.ratio, float(self.n)
        x = x * (1.0 + 2.0 * _ULP)
        scale = math.log(e * e - 1.0) - math.log(e * n)
        if add:
            t, table, factor = n * (x * e - 1.0) / (e * e - 1.0), self._tables[0], 0.0
        else:
            t = n - n * (e - x) / (x * (e * e - 1.0))
            table, factor = self._tables[1], np.log(x)
        t = np.maximum(t * (1.0 + 8.0 * _ULP) + 8.0 * _ULP, -0.5)
        log_e = table.log_excess(t)
        return log_e + scale + factor + math.log1p(-_margin(self.n, self.n + 1))

    def _direction(self, epsilon: ArrayLike, add: bool) -> np.ndarray:
        eps = np.asarray(epsilon, dtype=float)
        flat = eps.reshape(-1)
        out = np.zeros(flat.shape)
        own = (flat >= 0) & (flat < self.eps0)
        out[own] = np.exp(self._log_direction(np.exp(flat[own]), add))
        neg = (flat < 0) & (flat > -self.eps0)
        out[neg] = -np.expm1(flat[neg]) + np.exp(flat[neg]) * np.exp(
            self._log_direction(np.exp(-flat[neg]), not add)
        )
        far = flat <= -self.eps0
        out[far] = -np.expm1(flat[far])
        return np.clip(out, 0.0, 1.0).reshape(eps.shape)

    def remove_profile(self, epsilon: ArrayLike) -> np.ndarray:
        """H_{e^eps}(P || Q) (D0 against D1), rounded down."""
        return self._direction(epsilon, add=False)

    def add_profile(self, epsilon: ArrayLike) -> np.ndarray:
        """H_{e^eps}(Q || P) (D1 against D0), rounded down."""
        return self._direction(epsilon, add=True)

    def profile(self, epsilon: ArrayLike) -> np.ndarray:
        """A rigorous lower bound on the mechanism's delta(eps): the larger direction."""
        return np.maximum(self.remove_profile(epsilon), self.add_profile(epsilon))

    def dominating_pair(self) -> DominatingPair:
        """The exact pair (lower bound) for the PLD engine: composing it bounds compositions from below."""
        from gdpcli.core.pld import DominatingPair

        return DominatingPair(self.remove_profile, self.add_profile, loss_range=(-self.eps0, self.eps0))

    def epsilon(self, delta: ArrayLike) -> np.ndarray:
        """A rigorous lower bound on eps(delta): the bisection's lower end."""
        return _epsilon_of(self.profile, self.eps0, delta, upper=False)

    def sample(self, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Y under D0 and under D1 (for Monte Carlo checks)."""
        r = 1.0 / (self.ratio + 1.0)
        under_d0 = rng.binomial(self.n, r, size)
        under_d1 = rng.binomial(self.n - 1, r, size) + rng.binomial(1, 1.0 - r, size)
        return under_d0, under_d1

    def log_likelihood_ratio(self, y: np.ndarray) -> np.ndarray:
        """log Q(y) / P(y) = log((e^2 y + n - y) / (e n))."""
        e = self.ratio
        return np.log1p((e * e - 1.0) * y / self.n) - self.eps0
