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

Numerics: E[(K - t)_+] = A_m + (m - t) B_m for t in [m - 1, m), B_m = Pr(K >= m), A_m = sum_{j > m} B_j,
from reverse cumulative log-sum-exps of the log pmf (_ExcessTable); the binomial tails left out are bounded
by Hoeffding's inequality and added; the mixture over C is summed exactly over a window of c and the rest
bounded by monotonicity (delta_c is non-increasing in c: the pair for c + 1 is the pair for c with one more
Bern(1/2) clone added under both hypotheses, a post-processing). The log pmfs come from lgamma, whose
rounding (a few ulps of log N!) is covered by a relative safety margin (_margin); e^eps0 is rounded up and
q down, both safe (the eps0' > eps0 class contains the eps0 one; fewer clones never help).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import gammaln, logsumexp

from gdpcli.errors import ComputationError, InputError

if TYPE_CHECKING:
    from gdpcli.core.arrays import ArrayLike
    from gdpcli.core.pld import DominatingPair

Profile = Callable[[np.ndarray], np.ndarray]

RANDOMIZERS = ("rr", "general")
"""rr: the stronger clone of [FMT23] (binary / k-ary randomized response); general: any eps0-LDP [FMT22]."""

_TAIL_LOG = 250.0  # binomial tails beyond exp(-_TAIL_LOG) (Hoeffding) are bounded, not summed
_WINDOW_LOG = 120.0  # the mixture over C is summed where log w_c >= max - _WINDOW_LOG
_MAX_CELLS = 2**25  # the largest table (rows x width) built
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


class _ExcessTable:
    """log E[(K - t)_+] for K ~ Bin(N_r, p) on each row r, t >= first_r - 1, as sums of positive terms.

    For t in [m - 1, m): E[(K - t)_+] = A_m + (m - t) B_m, B_m = Pr(K >= m), A_m = sum_{j > m} B_j. The table
    holds m = first_r .. first_r + width - 1; Pr(K > first_r + width - 1) <= tau_r (Hoeffding) is added to
    every B_m and N_r tau_r to every A_m (each B_j beyond the table is <= tau_r), and beyond the table
    E[(K - t)_+] <= N_r tau_r.
    """

    def __init__(self, big_n: np.ndarray, first: np.ndarray, width: int, p: float) -> None:
        if big_n.size * width > _MAX_CELLS:
            raise ComputationError("shuffle: the binomial tables are too large", "use a smaller n")
        self.big_n, self.first, self.width = big_n.astype(float), first.astype(float), width
        k = self.first[:, None] + np.arange(width)
        log_pmf = _log_pmf(self.big_n[:, None], k, math.log(p), math.log1p(-p))
        log_tau = _log_hoeffding(self.big_n, self.first + width - 1, p)[:, None]
        self.log_beyond = log_tau[:, 0] + np.log(self.big_n)
        self.log_b = np.logaddexp(_reverse_cumulative(log_pmf), log_tau)
        shifted = np.concatenate([self.log_b[:, 1:], np.full((big_n.size, 1), -np.inf)], axis=1)
        self.log_a = np.logaddexp(_reverse_cumulative(shifted), self.log_beyond[:, None])

    def log_excess(self, t: np.ndarray) -> np.ndarray:
        """log E[(K_r - t_r)_+] for t of shape (rows, m) (t >= first - 1), -inf where it is 0 (t >= N)."""
        m = np.floor(t) + 1.0
        index = m - self.first[:, None]
        inside = (index >= 0) & (index < self.width)
        j = np.clip(index, 0, self.width - 1).astype(np.intp)
        rows = np.arange(t.shape[0])[:, None]
        with np.errstate(divide="ignore"):
            value = np.logaddexp(self.log_a[rows, j], np.log(m - t) + self.log_b[rows, j])
        beyond = np.broadcast_to(self.log_beyond[:, None], t.shape)
        value = np.where(inside, value, beyond)
        return np.where(t >= self.big_n[:, None], -np.inf, value)


def _tail_width(big_n: float, p: float) -> int:
    """Table width reaching _TAIL_LOG beyond the mean by Hoeffding: sqrt(_TAIL_LOG N / 2) + 2."""
    return math.ceil(math.sqrt(_TAIL_LOG * big_n / 2.0)) + 2


@dataclass(frozen=True)
class _Mixture:
    """The binomial mixing weights w_c = Bin(n - 1, q)(c): a window [lo, hi] summed exactly, and the masses
    below and above it (exact sums in log space)."""

    counts: np.ndarray
    log_weights: np.ndarray
    log_below: float
    log_above: float


def _mixture(n: int, q: float) -> _Mixture:
    c = np.arange(n, dtype=float)
    log_w = _log_pmf(np.array(n - 1.0), c, math.log(q), math.log1p(-q))
    inside = np.flatnonzero(log_w >= log_w.max() - _WINDOW_LOG)
    lo, hi = int(inside[0]), int(inside[-1])
    below = float(logsumexp(log_w[:lo])) if lo > 0 else -math.inf
    above = float(logsumexp(log_w[hi + 1 :])) if hi + 1 < n else -math.inf
    return _Mixture(c[lo : hi + 1], log_w[lo : hi + 1], below, above)


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
        return _mixture(self.n, self.clone_probability)

    @cached_property
    def _table(self) -> _ExcessTable:
        big_n = self._weights.counts + 1.0
        first = np.floor(big_n / 2.0) - 1.0
        width = min(int(big_n.max()) + 2, _tail_width(float(big_n.max()), 0.5))
        return _ExcessTable(big_n, first, width, 0.5)

    def _log_components(self, x: np.ndarray) -> np.ndarray:
        """log delta_c(eps) for the window's c (rows) and x = e^eps in [1, e) (columns)."""
        e, big_n = self.ratio, self._weights.counts[:, None] + 1.0
        x = x * (1.0 - 2.0 * _ULP)  # e^eps rounded down: the profile is non-increasing in it
        t = big_n * ((x * e - 1.0) / ((e - 1.0) * (x + 1.0))) * (1.0 - 8.0 * _ULP)
        t = np.maximum(t, self._table.first[:, None] - 1.0)
        log_factor = math.log(2.0 * (e - 1.0) / (e + 1.0)) + np.log1p(x) - np.log(big_n)
        return log_factor + self._table.log_excess(t)

    def _log_profile_nonnegative(self, x: np.ndarray) -> np.ndarray:
        """log delta(eps) for x = e^eps in [1, e) (1-D): window sum plus the bounded tails of C."""
        mixture = self._weights
        components = self._log_components(x[None, :])
        inner = logsumexp(mixture.log_weights[:, None] + components, axis=0)
        e = self.ratio
        first = np.log(np.maximum(e - x, 0.0)) - math.log(e + 1.0)  # delta_0, bounds c below the window
        tails = np.logaddexp(mixture.log_below + first, mixture.log_above + components[-1])
        cells = self._table.big_n.size * self._table.width
        return np.logaddexp(inner, tails) + math.log1p(_margin(self.n, cells))

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
    grid = np.linspace(-eps0, eps0, _TRADEOFF_GRID)
    lines = 1.0 - profile(grid)
    values = lines[:, None] - np.exp(grid)[:, None] * a.reshape(1, -1)
    return np.clip(values.max(axis=0), 0.0, 1.0 - a.reshape(-1)).reshape(a.shape)


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


def _clone_log_moments(pair: CloneReduction, order: float) -> float:
    """log sum_c w_c M_c, M_c = sum_k P_c(k)^order Q_c(k)^(1 - order), upper-bounded: k within
    sqrt(L N / 2) of N/2 (the rest, of P-mass <= 2 exp(-L) by Hoeffding, at most e^{(order - 1) eps0} each
    in ratio), c outside the window by M_0 (below) and M_{c_hi} (above): M_c is non-increasing in c."""
    mixture, e = pair._weights, pair.ratio
    a, tail_log = e / (e + 1.0), _TAIL_LOG + (order - 1.0) * pair.eps0
    big_n = mixture.counts + 1.0
    half = math.ceil(math.sqrt(tail_log * big_n.max() / 2.0))
    k = np.floor(big_n / 2.0)[:, None] + np.arange(-half - 1, half + 2)
    log_pmf = _log_pmf(big_n[:, None], k, math.log(0.5), math.log(0.5))
    kk = np.clip(k, 0.0, big_n[:, None])
    log_p = np.log(a * kk + (1.0 - a) * (big_n[:, None] - kk))
    log_q = np.log(a * (big_n[:, None] - kk) + (1.0 - a) * kk)
    terms = np.where(np.isfinite(log_pmf), log_pmf + order * log_p + (1.0 - order) * log_q, -np.inf)
    log_m = logsumexp(terms, axis=1) + math.log(2.0) - np.log(big_n)
    dropped = math.log(4.0) - tail_log + (order - 1.0) * pair.eps0
    log_m = np.logaddexp(log_m, dropped)
    log_m0 = float(
        np.logaddexp(
            order * math.log(a) + (1.0 - order) * math.log1p(-a),
            order * math.log1p(-a) + (1.0 - order) * math.log(a),
        )
    )
    inner = float(logsumexp(mixture.log_weights + log_m))
    tails = np.logaddexp(mixture.log_below + log_m0, mixture.log_above + log_m[-1])
    return float(np.logaddexp(inner, tails)) + math.log1p(_margin(pair.n, terms.size))


def _clone_rdp(pair: CloneReduction, orders: np.ndarray) -> np.ndarray:
    """D_order(P || Q) = log(moment) / (order - 1), capped by eps0 (the pair is eps0-DP)."""
    flat = orders.reshape(-1)
    if np.any(~(flat > 1.0)):
        raise InputError("shuffle: RDP orders must be > 1", "allowed: order > 1")
    values = [min(_clone_log_moments(pair, float(o)) / (o - 1.0), pair.eps0) for o in flat]
    return np.array(values).reshape(orders.shape)


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
        """E[(Y - t)_+] tables for Y ~ Bin(n, r) and for n - Y ~ Bin(n, 1 - r), every k (no tail bound)."""
        r = 1.0 / (self.ratio + 1.0)
        rows, first = np.array([float(self.n)]), np.array([0.0])
        return _ExcessTable(rows, first, self.n + 1, r), _ExcessTable(rows, first, self.n + 1, 1.0 - r)

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
        log_e = table.log_excess(t[None, :])[0]
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
