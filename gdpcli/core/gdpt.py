"""The Gaussian differential privacy transformation (GDPT) of a privacy profile.

GDPT paper ("Gaussian Differential Privacy Transformation: from identification to application"):
Def. 4.1 G_f(eps) = mu_GDP(eps, f(eps)), where mu_GDP(x, y) solves delta_mu(x) = y (GDP paper Cor. 1);
Thm 4.3/4.4 (a mechanism is GDP iff lim eps / sqrt(-2 log delta(eps)) < inf); Thm 4.5/4.6 and
Algorithm 3 (certified staircase bounds on sup G over a head [0, eps_head]); Sec. 4.2 (the residual
beyond the head); the paper's built-in examples (Sec. 2, 3, 5.1).

Monotonicity used throughout (derived here, cf. App. A.5): delta_mu(x) increases in mu
(d delta / d mu = phi(a), a = -x/mu + mu/2) and decreases in x (d delta / dx = -e^x Phi(b), b = a - mu),
so mu_GDP(x, y) increases in y and in x, with d mu_GDP / dx = e^x Phi(b) / phi(a) = Phi(b) / phi(b)
(as e^x phi(b) = phi(a)), the Mills ratio at b <= -mu/2 < 0, hence 0 < d mu_GDP / dx <= sqrt(pi/2).
For a non-increasing profile and x_i <= eps <= x_{i+1}:

    mu_GDP(x_i, delta(x_{i+1})) <= G(eps) <= mu_GDP(x_{i+1}, delta(x_i)),

and the upper end exceeds G(x_i) by at most sqrt(pi/2) (x_{i+1} - x_i).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gdpcli.core import gdp, partial_order
from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.errors import ComputationError, InputError, parameter

LogProfile = Callable[[np.ndarray], np.ndarray]

MAX_SLOPE = float(np.sqrt(np.pi / 2.0))  # sup of d mu_GDP / d eps (Thm 4.5, sharpened as derived above)
_INITIAL_CELLS = 256
_MAX_CELLS = 4_000_000
_MONOTONE_SLACK = 1e-9  # allowed increase of log delta between evaluations (rounding in the profile)


# ---------------------------------------------------------------------------------------------------------
# mu_GDP


def mu_bound(epsilon: ArrayLike, log_delta: ArrayLike, side: str) -> np.ndarray:
    """mu_GDP(eps, e^log_delta) rounded to `side` ("lower" / "upper"): gdp.mu_bound, the one solver."""
    if side not in ("lower", "upper"):
        raise InputError(f"side must be 'lower' or 'upper', got {side!r}")
    return np.asarray(gdp.mu_bound(epsilon, log_delta, side))


def gdpt(profile: PrivacyProfile, epsilon: ArrayLike) -> ArrayLike:
    """The GDPT G(eps) = mu_GDP(eps, delta(eps)) of a profile (GDPT Def. 4.1), rounded down."""
    epsilon = np.asarray(epsilon, dtype=float)
    return as_output(mu_bound(epsilon, profile.log_delta(epsilon), "lower").reshape(epsilon.shape))


# ---------------------------------------------------------------------------------------------------------
# Privacy profiles


@dataclass(frozen=True, eq=False)
class PrivacyProfile:
    """A non-increasing privacy profile eps -> delta(eps) on [0, inf), given in log space.

    log_delta is vectorized (-inf where delta = 0). tail_limit is lim_{eps -> inf} G(eps) in closed form
    when known (GDPT Thm 4.4), else None (then it is estimated numerically). tangents holds the tangent
    points (eps_k, delta_k) of a refined profile (GDPT App. B).
    """

    name: str
    log_delta: LogProfile
    tail_limit: float | None = None
    tangents: tuple[np.ndarray, np.ndarray] | None = None

    def delta(self, epsilon: ArrayLike) -> ArrayLike:
        """delta(eps) (underflows to 0 below about 1e-308; use log_delta there)."""
        return as_output(np.exp(self.log_delta(np.asarray(epsilon, dtype=float))))


def _require_positive(**values: float) -> None:
    """Raise InputError unless every value is finite and > 0."""
    for name, value in values.items():
        if not (np.isfinite(value) and value > 0.0):
            raise InputError(f"{name} must be a positive number, got {value}")


def _log(values: np.ndarray) -> np.ndarray:
    """log with log(0) = -inf and no warning."""
    with np.errstate(divide="ignore"):
        return np.log(values)


def gdp_profile(mu: float) -> PrivacyProfile:
    """The profile of mu-GDP, delta_mu(eps) (GDPT eq. (2), GDP paper Cor. 1); its GDPT is constant mu."""
    _require_positive(mu=mu)
    return PrivacyProfile(f"gdp:mu={mu}", lambda eps: np.asarray(gdp.log_delta(eps, mu)), tail_limit=mu)


def dp_profile(epsilon: float, delta: float = 0.0) -> PrivacyProfile:
    """The profile of the tight (eps0, delta0) pair, delta0 + (1 - delta0)(e^eps0 - e^eps)_+/(1 + e^eps0).

    GDPT Thm 3.1 / Cor. 3.2: the largest profile of any (eps0, delta0)-DP mechanism (randomized response
    for delta0 = 0). Tail limit 0 for pure DP (the profile vanishes beyond eps0), inf for delta0 > 0.
    """
    if not (np.isfinite(epsilon) and epsilon >= 0.0 and 0.0 <= delta < 1.0):
        raise InputError(
            f"invalid (epsilon={epsilon}, delta={delta})", "need epsilon >= 0 and 0 <= delta < 1"
        )

    def log_delta(eps: np.ndarray) -> np.ndarray:
        return _log(np.asarray(partial_order.implied_delta(epsilon, delta, eps)))

    return PrivacyProfile(
        f"dp:eps={epsilon},delta={delta}", log_delta, tail_limit=0.0 if delta == 0 else np.inf
    )


def laplace_profile(b: float, sens: float = 1.0) -> PrivacyProfile:
    """The Laplace mechanism (scale b, sensitivity sens): delta(eps) = max(0, 1 - e^{(eps - sens/b)/2}).

    Balle et al. 2020a Thm 3 as quoted in GDPT Sec. 3. It vanishes beyond eps = sens/b: tail limit 0.
    """
    _require_positive(b=b, sens=sens)

    def log_delta(eps: np.ndarray) -> np.ndarray:
        return _log(-np.expm1(0.5 * np.minimum(eps - sens / b, 0.0)))

    return PrivacyProfile(f"laplace:b={b},sens={sens}", log_delta, tail_limit=0.0)


def noise_family_profile(A: float, B: float, sigma: float) -> PrivacyProfile:
    """The naive profile of the family sigma = A eps^-1 sqrt(log(B / delta)) (GDPT Sec. 2, "SGD"):

    delta(eps) = min(1, B exp(-(sigma eps / A)^2)); its tail limit is
    lim eps / sqrt(2 (sigma eps / A)^2 - 2 log B) = A / (sigma sqrt 2).
    """
    _require_positive(A=A, B=B, sigma=sigma)

    def log_delta(eps: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):  # (sigma eps / A)^2 beyond the float range: delta is 0 in floats
            return np.minimum(np.log(B) - np.square(sigma * np.asarray(eps) / A), 0.0)

    return PrivacyProfile(
        f"noise_family:A={A},B={B},sigma={sigma}", log_delta, tail_limit=A / (sigma * math.sqrt(2.0))
    )


def icea_profile(messages: float, users: float) -> PrivacyProfile:
    """The naive profile of the invisibility cloak encoder (GDPT Sec. 2; Ghazi et al. 2019):

    (eps, delta)-DP if m > 10 log(n / (eps delta)), i.e. delta(eps) = min(1, n e^{-m/10} / eps). It decays
    like 1/eps, so the tail limit is inf: not GDP (GDPT Thm 4.3/4.4).
    """
    _require_positive(messages=messages, users=users)

    def log_delta(eps: np.ndarray) -> np.ndarray:
        return np.minimum(np.log(users) - 0.1 * messages - _log(np.asarray(eps, dtype=float)), 0.0)

    return PrivacyProfile(f"icea:m={messages},n={users}", log_delta, tail_limit=np.inf)


def rectified(profile: PrivacyProfile, eps_head: float) -> PrivacyProfile:
    """The profile of "clip and rectify" (GDPT Thm 4.7): clip A's numerical output to [y-, y+], then add
    Laplace noise of scale b = (y+ - y-) / eps_head. It is at most min(profile, Laplace profile at
    sens / b = eps_head): post-processing keeps A's profile, and whatever A does, the clipped outputs of
    neighbours differ by at most y+ - y-, so (hockey-stick divergences being jointly convex, averaged
    over any coupling of the clipped outputs) the result is no worse than the Laplace mechanism on a query
    of sensitivity y+ - y- (laplace_profile). It vanishes from eps_head on: the Thm's proof (eps_head-DP),
    sharpened by the Laplace profile below eps_head. Tail limit 0 (GDP); independent of y-, y+.
    """
    _require_positive(eps_head=eps_head)
    laplace = laplace_profile(1.0, eps_head)

    def log_delta(eps: np.ndarray) -> np.ndarray:
        return np.minimum(profile.log_delta(eps), laplace.log_delta(eps))

    return PrivacyProfile(f"rectified {profile.name}", log_delta, tail_limit=0.0)


def sampled_profile(epsilon: np.ndarray, delta: np.ndarray) -> PrivacyProfile:
    """An upper bound on every privacy profile through the samples (eps_i, delta_i), read as
    identify_sampled reads them: delta_i on [eps_i, eps_{i+1}) (profiles are non-increasing), on [0, eps_0]
    what (eps_0, delta_0) implies (GDPT Thm 3.1), and beyond the last sample 1, or 0 if its delta is 0."""
    epsilon, delta = _samples(epsilon, delta)
    beyond = 0.0 if delta[-1] == 0.0 else 1.0

    def log_delta(eps: np.ndarray) -> np.ndarray:
        eps = np.asarray(eps, dtype=float)
        index = np.searchsorted(epsilon, eps, side="right") - 1
        step = np.where(eps > epsilon[-1], beyond, delta[np.clip(index, 0, delta.size - 1)])
        head = np.asarray(partial_order.implied_delta(epsilon[0], delta[0], np.minimum(eps, epsilon[0])))
        return _log(np.where(index < 0, head, step))

    return PrivacyProfile("sampled profile", log_delta, tail_limit=0.0 if beyond == 0.0 else None)


def refined(profile: PrivacyProfile) -> PrivacyProfile:
    """The refined profile (GDPT Sec. 3, App. B): the naive one lowered by everything its guarantees
    imply through Thm 3.1, min(naive(eps), min_{eps_k >= eps} implied_delta(eps_k, delta_k, eps)).

    The tangent points come from partial_order.tangent_points; the tail (and its limit) is unchanged.
    """
    epsilon_k, delta_k = partial_order.tangent_points(lambda eps: np.exp(profile.log_delta(eps)))

    def log_delta(eps: np.ndarray) -> np.ndarray:
        bound = np.asarray(partial_order.tangent_bound(eps, epsilon_k, delta_k))
        return np.minimum(profile.log_delta(eps), _log(bound))

    return PrivacyProfile(f"refined {profile.name}", log_delta, profile.tail_limit, (epsilon_k, delta_k))


# ---------------------------------------------------------------------------------------------------------
# The tail: is it GDP at all (Thm 4.3, 4.4)


@dataclass(frozen=True)
class TailVerdict:
    """Thm 4.3/4.4: GDP iff lim G(eps) = lim eps / sqrt(-2 log delta(eps)) < inf.

    verdict is "gdp", "not_gdp" or "undetermined"; limit is None when undetermined; method says where the
    limit comes from: "closed_form", "numerical_estimate" (heuristic) or "sampled".
    """

    verdict: str
    limit: float | None
    method: str


def _verdict(limit: float, method: str) -> TailVerdict:
    """The Thm 4.3 verdict for a known tail limit."""
    return TailVerdict("gdp" if np.isfinite(limit) else "not_gdp", float(limit), method)


def tail_verdict(profile: PrivacyProfile) -> TailVerdict:
    """The tail limit of GDPT Thm 4.4 and the verdict of Thm 4.3: closed form when the profile has one,
    else estimate_tail_limit (a numerical heuristic)."""
    if profile.tail_limit is not None:
        return _verdict(profile.tail_limit, "closed_form")
    return estimate_tail_limit(profile.log_delta)


def _underflows(log_delta: LogProfile, finite_at: float, zero_at: float) -> bool:
    """Whether log delta turns -inf between two points through floating-point underflow (its last finite
    value, located by bisection, is below -700) rather than by a true zero of the profile."""
    for _ in range(80):
        middle = 0.5 * (finite_at + zero_at)
        if np.asarray(log_delta(np.array([middle])))[0] == -np.inf:
            zero_at = middle
        else:
            finite_at = middle
    return bool(np.asarray(log_delta(np.array([finite_at])))[0] < -700.0)


def estimate_tail_limit(log_delta: LogProfile, doublings: int = 40) -> TailVerdict:
    """Estimate lim_{eps -> inf} r(eps), r = eps / sqrt(-2 log delta(eps)) (GDPT Thm 4.4), a heuristic.

    r is evaluated at eps = 1, 2, 4, ..., 2^doublings; s_k = log2(r_{k+1} / r_k) is its growth per
    doubling. For mu-GDP, r = mu + O(1/eps), so s_k -> 0 geometrically. Rules: delta reaches 0 (a true
    zero, not an underflow of a profile computed outside log space): limit 0, gdp; otherwise, on the
    points before any zero: |s| < 1e-6 over the last three doublings: limit r_last, gdp; s <= -0.05 over
    the last eight: limit 0, gdp; s >= 0.05 over the last eight (r grows at least like eps^0.05): inf,
    not_gdp; anything else: undetermined. No finite evaluation proves a limit: closed-form tail limits
    are preferred when known.
    """
    eps = np.exp2(np.arange(doublings + 1, dtype=float))
    values = np.asarray(log_delta(eps), dtype=float)
    if np.any(np.isnan(values)):
        raise ComputationError("the privacy profile returned NaN in the tail")
    zero = np.flatnonzero(values == -np.inf)
    count = zero[0] if zero.size else eps.size
    if zero.size and (count == 0 or not _underflows(log_delta, eps[count - 1], eps[count])):
        return TailVerdict("gdp", 0.0, "numerical_estimate")
    if values[count - 1] >= 0.0:
        return TailVerdict("not_gdp", float("inf"), "numerical_estimate")
    ratio = eps[:count] / np.sqrt(-2.0 * values[:count])
    growth = np.diff(np.log2(ratio))[-8:]
    if growth.size < 8:
        return TailVerdict("undetermined", None, "numerical_estimate")
    if np.all(np.abs(growth[-3:]) < 1e-6):
        return TailVerdict("gdp", float(ratio[-1]), "numerical_estimate")
    if np.all(growth <= -0.05):
        return TailVerdict("gdp", 0.0, "numerical_estimate")
    if np.all(growth >= 0.05):
        return TailVerdict("not_gdp", float("inf"), "numerical_estimate")
    return TailVerdict("undetermined", None, "numerical_estimate")


# ---------------------------------------------------------------------------------------------------------
# The head: certified staircase bounds (Thm 4.5, 4.6, Algorithm 3)


@dataclass(frozen=True, eq=False)
class GdptResult:
    """What gdpt-identify reports: the tail verdict and a certified interval for sup G on the head.

    On [0, eps_head] the profile is mu_upper-head-GDP (GDPT Def. 3.1) and no mu < mu_lower is: mu_lower
    <= sup_{[0, eps_head]} G <= mu_upper. residual = delta_{mu_upper}(eps_head) bounds delta(eps) beyond
    the head (GDPT Sec. 4.2), rounded up (log_residual is its log); it is 0 when the profile is 0 at
    eps_head (then mu_upper-GDP holds on all of [0, inf)). The staircase: on [staircase_eps[i],
    staircase_eps[i+1]] (the last cell ends at eps_head) staircase_lower[i] <= G <= staircase_upper[i]
    (Thm 4.6).
    """

    verdict: str
    tail_limit: float | None
    tail_method: str
    mu_lower: float
    mu_upper: float
    eps_head: float
    residual: float
    log_residual: float
    staircase_eps: np.ndarray = field(repr=False)
    staircase_lower: np.ndarray = field(repr=False)
    staircase_upper: np.ndarray = field(repr=False)

    @property
    def slack(self) -> float:
        """mu_upper - mu_lower: the width of the certified interval."""
        return self.mu_upper - self.mu_lower

    def coarse_staircase(self, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """At most `rows` cells, each the union of consecutive cells with the min lower and max upper
        bound (still valid bounds on G), for tables and plots."""
        starts = np.unique(np.linspace(0, self.staircase_eps.size, rows, endpoint=False).astype(int))
        lower = np.minimum.reduceat(self.staircase_lower, starts)
        return self.staircase_eps[starts], lower, np.maximum.reduceat(self.staircase_upper, starts)


def _checked(values: np.ndarray) -> np.ndarray:
    """A profile's log delta values, rejecting NaN."""
    if np.any(np.isnan(values)):
        raise ComputationError("the privacy profile returned NaN")
    return values


def _check_non_increasing(left: np.ndarray, right: np.ndarray) -> None:
    """Staircase bounds need a non-increasing profile: refuse one that increases (beyond rounding)."""
    finite = np.isfinite(left)
    allowed = np.where(
        finite, left + _MONOTONE_SLACK * np.maximum(1.0, np.abs(np.where(finite, left, 0.0))), left
    )
    if np.any(right > allowed):
        raise ComputationError(
            "the privacy profile increases somewhere", "a privacy profile is non-increasing"
        )


def _refine_cells(
    log_delta: LogProfile, left: np.ndarray, right: np.ndarray, precision: float
) -> tuple[float, tuple[np.ndarray, ...]]:
    """Adaptive, vectorized version of Algorithm 3 (GDPT App. D) on the cells [left_i, right_i].

    mu_lower is the largest G at a node, up to 1e-3 precision (G is evaluated only where the cheap test
    log delta(x) > log delta_{mu_lower + 1e-3 precision}(x) says it beats the current value by that).
    A cell is final once mu_GDP(right, delta(left)) <= mu_lower + precision, tested as
    log delta_{mu_lower + precision}(right) >= log delta(left) (monotonicity in mu); otherwise it is
    halved. Since that bound exceeds G(left) by at most
    sqrt(pi/2) (right - left), cells narrower than precision / sqrt(pi/2) always pass; the halving stops at
    half that width in any case. Returns mu_lower and the final cells (left, right, log deltas at both).
    """
    nodes = np.concatenate([left, right[-1:]])
    values = _checked(np.asarray(log_delta(nodes), dtype=float))
    _check_non_increasing(values[:-1], values[1:])
    mu_lower = float(np.max(mu_bound(nodes, values, "lower")))
    cells = (left, right, values[:-1], values[1:])
    final: list[tuple[np.ndarray, ...]] = []
    min_width = 0.5 * precision / MAX_SLOPE
    while cells[0].size and np.isfinite(mu_lower):
        left, right, log_left, log_right = cells
        done = (np.asarray(gdp.log_delta(right, mu_lower + precision)) >= log_left) | (
            right - left <= min_width
        )
        final.append(tuple(part[done] for part in cells))
        left, right, log_left, log_right = (part[~done] for part in cells)
        if 2 * left.size > _MAX_CELLS:
            raise ComputationError(
                "the head measurement would need more than 4 million cells",
                f"use a larger {parameter('precision')} or a smaller {parameter('eps_head')}",
            )
        middle = 0.5 * (left + right)
        log_middle = _checked(np.asarray(log_delta(middle), dtype=float))
        _check_non_increasing(np.concatenate([log_left, log_middle]), np.concatenate([log_middle, log_right]))
        beats = log_middle > np.asarray(gdp.log_delta(middle, mu_lower + 1e-3 * precision))
        if np.any(beats):
            mu_lower = max(mu_lower, float(np.max(mu_bound(middle[beats], log_middle[beats], "lower"))))
        cells = (
            np.concatenate([left, middle]),
            np.concatenate([middle, right]),
            np.concatenate([log_left, log_middle]),
            np.concatenate([log_middle, log_right]),
        )
    final.append(cells)
    return mu_lower, tuple(np.concatenate(parts) for parts in zip(*final, strict=True))


def _certify(tail: TailVerdict, mu_lower: float, cells: tuple[np.ndarray, ...]) -> GdptResult:
    """Thm 4.6 on final cells [left, right] with log deltas (log_left, log_right): lower_i = mu_GDP(left,
    delta(right)) rounded down, upper_i = mu_GDP(right, delta(left)) rounded up; mu_upper = max upper_i.
    The last cell ends at eps_head; the residual uses its log delta there."""
    order = np.argsort(cells[0], kind="stable")
    left, right, log_left, log_right = (part[order] for part in cells)
    lower = mu_bound(left, log_right, "lower")
    upper = mu_bound(right, log_left, "upper")
    if np.isfinite(mu_lower):
        mu_lower, mu_upper = max(mu_lower, float(np.max(lower))), float(np.max(upper))
    else:
        mu_upper = mu_lower
    eps_head, log_delta_head = float(right[-1]), float(log_right[-1])
    log_residual = -np.inf if log_delta_head == -np.inf else float(gdp.log_delta(eps_head, mu_upper))
    residual = (
        0.0 if log_residual == -np.inf else max(float(np.exp(log_residual)), float(np.nextafter(0.0, 1.0)))
    )
    return GdptResult(
        tail.verdict,
        tail.limit,
        tail.method,
        mu_lower,
        mu_upper,
        eps_head,
        residual,
        log_residual,
        left,
        lower,
        upper,
    )


def mechanism_interval(
    result: GdptResult, sup_bound: float | None = None, vanishes_beyond: float | None = None
) -> tuple[float, float]:
    """[lower, upper] for the mechanism's own GDP parameter mu = sup_{eps >= 0} G(eps) (GDPT Def. 4.1, Thm
    4.3), not only its head.

    lower: the head's mu_lower, raised to the tail limit when that is known in closed form (sup >= lim);
    inf when the tail says not GDP. upper: the least of (a) the head's mu_upper when nothing lies beyond
    the head: the profile is 0 at eps_head (non-increasing, so 0 beyond: residual 0) or is known to vanish
    beyond `vanishes_beyond` <= eps_head; and (b) sup_bound, a bound on G known to hold at every eps
    (e.g. mu for mu-GDP); inf when neither is known (beyond the head only the residual is certified,
    GDPT Sec. 4.2).
    """
    if result.verdict == "not_gdp":
        return np.inf, np.inf
    lower = result.mu_lower
    if result.tail_method == "closed_form" and result.tail_limit is not None:
        lower = max(lower, float(result.tail_limit))
    candidates = [] if sup_bound is None else [float(sup_bound)]
    if result.residual == 0.0 or (vanishes_beyond is not None and vanishes_beyond <= result.eps_head):
        candidates.append(result.mu_upper)
    return lower, min(candidates, default=np.inf)


def identify(profile: PrivacyProfile, eps_head: float = 100.0, precision: float = 1e-3) -> GdptResult:
    """Is the profile GDP (GDPT Thm 4.3/4.4), and for which mu: a certified [mu_lower, mu_upper] for
    sup_{[0, eps_head]} G with mu_upper - mu_lower <= precision (Thm 4.5/4.6, Algorithm 3), plus the
    residual beyond the head (Sec. 4.2). An infinite mu_upper means no GDP guarantee on the head (e.g.
    delta(0) = 1 in a naive profile; its refined profile may do better).
    """
    if not (np.isfinite(eps_head) and eps_head > 0.0):
        raise InputError(f"eps_head must be a positive number, got {eps_head}")
    _require_positive(precision=precision)
    tail = tail_verdict(profile)
    edges = np.linspace(0.0, eps_head, _INITIAL_CELLS + 1)
    mu_lower, cells = _refine_cells(profile.log_delta, edges[:-1], edges[1:], precision)
    return _certify(tail, mu_lower, cells)


def _samples(epsilon: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Samples (eps_i, delta_i) as flat arrays, checked, each delta lowered to the ones before it."""
    epsilon, delta = np.asarray(epsilon, dtype=float).reshape(-1), np.asarray(delta, dtype=float).reshape(-1)
    if epsilon.size != delta.size or epsilon.size < 2:
        raise InputError("a sampled profile needs at least two (epsilon, delta) rows of equal length")
    if not (np.all(np.isfinite(epsilon)) and epsilon[0] >= 0.0 and np.all(np.diff(epsilon) > 0.0)):
        raise InputError("profile epsilons must be finite, >= 0 and strictly increasing")
    if not np.all((delta >= 0.0) & (delta <= 1.0)):
        raise InputError("profile deltas must lie in [0, 1]")
    return epsilon, np.minimum.accumulate(delta)


def identify_sampled(epsilon: np.ndarray, delta: np.ndarray) -> GdptResult:
    """identify for a profile known only at samples (eps_i, delta_i), e.g. read from a CSV.

    Rigorous reading: delta is non-increasing, so delta(eps) <= delta_i on [eps_i, eps_{i+1}] (a delta_j
    above an earlier delta_i is lowered to it), and on [0, eps_0] Thm 3.1 gives delta(eps) <=
    implied_delta(eps_0, delta_0, eps). mu_upper = max_i mu_GDP(eps_{i+1}, delta_i) (the sup of the GDPT
    of that step function); mu_lower = max_i mu_GDP(eps_i, delta_i) over the given samples. Their
    difference, the slack, is what the sampling costs (<= sqrt(pi/2) max spacing). The head ends at the
    last sample; beyond it nothing is known, unless its delta is 0: then the profile is 0 there and the
    tail limit is 0.
    """
    epsilon, delta = _samples(epsilon, delta)
    log_samples = _log(delta)
    mu_lower = float(np.max(mu_bound(epsilon, log_samples, "lower")))
    if epsilon[0] > 0.0:
        at_zero = np.atleast_1d(partial_order.implied_delta(epsilon[0], delta[0], 0.0))
        epsilon, log_samples = np.concatenate([[0.0], epsilon]), np.concatenate([_log(at_zero), log_samples])
    vanishes = delta[-1] == 0.0
    tail = TailVerdict("gdp", 0.0, "sampled") if vanishes else TailVerdict("undetermined", None, "sampled")
    return _certify(tail, mu_lower, (epsilon[:-1], epsilon[1:], log_samples[:-1], log_samples[1:]))
