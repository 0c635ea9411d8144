"""Between the spec language and the numerics core: which method answers a question, and with which label.

An accountant answers epsilon(delta), delta(epsilon), beta(alpha) and mu for a list of specs and labels
every figure with its `guarantee` (exact | upper_bound | lower_bound | approximation) and `method`.
`select` implements DESIGN.md principle 2: exact where possible, rigorous otherwise, approximate only
on request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from gdpcli.core import gdp
from gdpcli.defaults import DEFAULT_ACCURACY
from gdpcli.errors import BudgetExceeded, ComputationError
from gdpcli.events import ApproxDP, Mechanism, Repeated
from gdpcli.guarantees import Guarantee

METHODS = ("auto", "exact", "pld", "clt", "berry-esseen", "rdp", "all")
CONVERSIONS = ("classic", "improved", "lemma1", "lemma2", "optimal")


EXACT, UPPER, LOWER, APPROXIMATION = (
    Guarantee.EXACT,
    Guarantee.UPPER_BOUND,
    Guarantee.LOWER_BOUND,
    Guarantee.APPROXIMATION,
)


@dataclass(frozen=True)
class Figures:
    """One kind of answer (e.g. epsilon at several deltas) from one method, with its guarantee."""

    values: np.ndarray
    guarantee: Guarantee
    method: str
    details: tuple[dict, ...] | None = None  # extra columns per value, e.g. the RDP order used


QUESTIONS = {"delta": "epsilon", "epsilon": "delta", "alpha": "beta"}
"""What each question asks for: epsilon at a delta, delta at an epsilon, beta at an alpha."""


@dataclass(frozen=True)
class Answer:
    """A labelled figure with the question it answers: figure.values[i] is the QUESTIONS[given] at
    queries[i] (e.g. given "delta": the epsilon at each delta)."""

    given: str
    queries: np.ndarray
    figure: Figures


def ask(
    accountant: Accountant,
    *,
    deltas: Sequence[float] | None = None,
    epsilons: Sequence[float] | None = None,
    alphas: Sequence[float] | None = None,
) -> list[Answer]:
    """Every requested question put to one accountant, as labelled answers."""
    answers: list[Answer] = []
    for given, queries, question in (
        ("delta", deltas, accountant.epsilon),
        ("epsilon", epsilons, accountant.delta),
        ("alpha", alphas, accountant.beta),
    ):
        if queries:
            values = np.asarray(queries, dtype=float)
            answers += [Answer(given, values, figure) for figure in question(values)]
    return answers


def check_budget(
    answers: Sequence[Answer], *, max_epsilon: float | None = None, max_delta: float | None = None
) -> None:
    """BudgetExceeded (exit 3) when the certified figure exceeds its budget.

    For each queried delta (epsilon), the certified epsilon (delta) is the smallest figure that bounds it
    from above (label exact or upper_bound, Guarantee.certifies_at_most) among the answers; lower bounds
    and approximations never count. ComputationError when a queried point has no such figure.
    """
    for limit, given, name in (
        (max_epsilon, "delta", "--max-epsilon"),
        (max_delta, "epsilon", "--max-delta"),
    ):
        if limit is None:
            continue
        figure_name = QUESTIONS[given]
        certified: dict[float, float] = {}
        asked: set[float] = set()
        for answer in (a for a in answers if a.given == given):
            asked.update(answer.queries.tolist())
            if not answer.figure.guarantee.certifies_at_most:
                continue
            for query, value in zip(
                answer.queries.tolist(), np.ravel(answer.figure.values).tolist(), strict=True
            ):
                certified[query] = min(certified.get(query, np.inf), value)
        missing = sorted(asked - set(certified))
        if not certified or missing:
            where = f" at {given} {missing[0]:g}" if missing else ""
            raise ComputationError(
                f"{name}: no rigorous upper bound on {figure_name} was computed{where}",
                "approximations never pass a budget check, nor do lower bounds; use a rigorous method",
            )
        worst = max(certified.values())
        if worst > limit:
            raise BudgetExceeded(f"{figure_name} {worst:.6g} exceeds {name} {limit:g}")


class Accountant(Protocol):
    """Answers the three questions for a fixed list of specs, each answer labelled."""

    method: str

    def epsilon(self, deltas: np.ndarray) -> list[Figures]: ...

    def delta(self, epsilons: np.ndarray) -> list[Figures]: ...

    def beta(self, alphas: np.ndarray) -> list[Figures]: ...


class ExactGDP:
    """Lists of GDP / Gaussian specs: mu = sqrt(sum times_i mu_i^2) exactly (GDP paper Cor. 2)."""

    method = "gdp"

    def __init__(self, mu: float) -> None:
        self.mu_total = mu

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(gdp.epsilon(deltas, self.mu_total)), EXACT, self.method)]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(gdp.delta(epsilons, self.mu_total)), EXACT, self.method)]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(gdp.tradeoff(alphas, self.mu_total)), EXACT, self.method)]

    def mu(self) -> list[Figures]:
        return [Figures(np.asarray([self.mu_total]), EXACT, self.method)]


class ExactSingle:
    """One mechanism with a closed-form trade-off f and profile (Laplace, (eps, delta)-DP): exact figures.

    epsilon(delta) inverts the closed-form profile by bisection to the last ulp (rounded to the safe side).
    """

    method = "closed-form"

    def __init__(self, mechanism: Mechanism) -> None:
        self.mechanism = mechanism

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core.tradeoff import epsilon_from_profile

        values = epsilon_from_profile(self.mechanism.profile, deltas)
        return [Figures(np.asarray(values), EXACT, self.method)]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(self.mechanism.profile(epsilons)), EXACT, self.method)]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(self.mechanism.tradeoff(alphas)), EXACT, self.method)]


class Binomial:
    """k-fold composition of (eps0, delta_i)-DP with one eps0: exact.

    The eps part is f_{eps0,0}^{(x)k} = T(B(k, 1/(1+e^eps0)), B(k, e^eps0/(1+e^eps0))) (Kairouz et al.,
    quoted in GDP paper Sec. 3.3): losses (2j - k) eps0 with binomial P-masses; the delta part is
    f_{0, 1 - prod(1 - delta_i)} (eq. 10-11), whose tensor product scales the P-masses by prod(1 - delta_i)
    and puts the rest at infinite loss (eq. 12). The profile and its inverse are then exact sums.
    """

    method = "binomial"

    def __init__(self, epsilon0: float, times: int, delta0: float) -> None:
        from scipy.stats import binom

        from gdpcli.core.pld import DiscretePLD

        plus = np.exp(-np.logaddexp(0.0, -epsilon0))  # e^eps0 / (1 + e^eps0), the P-probability of +eps0
        masses = np.zeros(2 * times + 1)
        masses[::2] = (1.0 - delta0) * binom.pmf(np.arange(times + 1), times, plus)
        self.pld = DiscretePLD(-times, epsilon0, masses, delta0)

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        values = np.maximum(np.asarray(self.pld.epsilon(deltas)), 0.0)
        return [Figures(values, EXACT, self.method)]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(self.pld.delta(epsilons)), EXACT, self.method)]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        from gdpcli.core.pld import tradeoff_of

        return [Figures(np.asarray(tradeoff_of([self.pld], alphas)), EXACT, self.method)]


class NumericalPLD:
    """The privacy-loss-distribution accountant (gdpcli.core.pld): rigorous upper and lower bounds."""

    method = "pld"

    def __init__(self, specs: Sequence[Repeated], accuracy: float) -> None:
        self.components = [(dominating_pair(spec), spec.times) for spec in specs]
        self.accuracy = accuracy

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core import pld

        bounds = pld.epsilon_bounds(self.components, np.asarray(deltas, dtype=float), accuracy=self.accuracy)
        return [
            Figures(np.atleast_1d(bounds.upper), UPPER, self.method),
            Figures(np.atleast_1d(bounds.lower), LOWER, self.method),
        ]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        from gdpcli.core import pld

        upper, lower = pld.delta_bounds(self.components, np.asarray(epsilons), accuracy=self.accuracy)
        return [
            Figures(np.atleast_1d(upper), UPPER, self.method),
            Figures(np.atleast_1d(lower), LOWER, self.method),
        ]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        from gdpcli.core import pld

        lower, upper = pld.tradeoff_bounds(self.components, alphas, accuracy=self.accuracy)
        return [
            Figures(np.atleast_1d(lower), LOWER, self.method),
            Figures(np.atleast_1d(upper), UPPER, self.method),
        ]


def dominating_pair(spec: Repeated) -> object:
    """One step of an event as a dominating pair of privacy profiles for the PLD engine (the step's own)."""
    return spec.step.dominating_pair()


class PureDPToGDP:
    """The tightest mu implied by a single pure eps-DP guarantee, -2 Phi^-1(1/(1+e^eps)) (GDPT Thm 5.1).

    Only a mu statement: the mechanism itself is f_{eps,0}, whose other figures come from its exact form.
    """

    method = "gdpt-thm-5.1"

    def __init__(self, epsilon: float) -> None:
        self.epsilon0 = epsilon

    def mu(self) -> list[Figures]:
        return [Figures(np.asarray([gdp.pure_dp_mu(self.epsilon0)]), EXACT, self.method)]


def exact_gdp_mu(specs: Sequence[Repeated]) -> float | None:
    """sqrt(sum mu_i^2) when every spec is exactly GDP, else None."""
    mus = [spec.exact_mu for spec in specs]
    if any(m is None for m in mus):
        return None
    return gdp.compose(np.asarray(mus, dtype=float))


_BINOMIAL_MAX_TIMES = 10**6


def exact_accountant(specs: Sequence[Repeated]) -> Accountant | None:
    """The closed-form accountant for the list, or None when no closed form applies."""
    mu = exact_gdp_mu(specs)
    if mu is not None:
        return ExactGDP(mu)
    if any(spec.sampling_rate is not None for spec in specs):
        return None
    mechanisms = [spec.mechanism for spec in specs]
    if len(specs) == 1 and specs[0].times == 1 and mechanisms[0].has_tradeoff:
        return ExactSingle(mechanisms[0])
    if all(m.eps_delta is not None for m in mechanisms):
        epsilons = {m.eps_delta[0] for m in mechanisms}
        times = sum(spec.times for spec in specs)
        if epsilons == {0.0}:  # f_{0,delta_1} (x) ... = f_{0, 1 - prod(1 - delta_i)} (GDP paper eq. 11)
            return ExactSingle(ApproxDP(0.0, _uniform_delta(specs)))
        if len(epsilons) == 1 and times <= _BINOMIAL_MAX_TIMES:
            return Binomial(epsilons.pop(), times, _uniform_delta(specs))
    return None


def _build(name: str, specs: Sequence[Repeated], accuracy: float, conversions: Sequence[str]) -> Accountant:
    """One accountant by method name; ComputationError when the method cannot handle the list.

    exact, pld and rdp account the delta parts of unsampled (eps, delta)-DP specs in closed form
    (WithUniformDelta, GDP paper eq. 10-12) and only the rest numerically; clt and berry-esseen carry
    them the same way inside (CentralLimit).
    """
    if name == "exact":
        exact = exact_accountant(specs)
        if exact is None:
            rest, delta0 = split_uniform_delta(specs)
            inner = exact_accountant(rest) if delta0 > 0.0 and rest else None
            if inner is None:
                raise ComputationError("no closed form for this list of mechanisms", "use --method pld")
            exact = WithUniformDelta(inner, delta0)
        return exact
    if name in ("pld", "rdp"):
        rest, delta0 = split_uniform_delta(specs)
        if delta0 > 0.0 and not rest:  # only delta parts: f_{0, delta0} itself, in closed form
            return ExactSingle(ApproxDP(0.0, delta0))
        inner = NumericalPLD(rest, accuracy) if name == "pld" else RenyiAccountant(rest, conversions)
        return WithUniformDelta(inner, delta0) if delta0 > 0.0 else inner
    if name == "clt":
        return CentralLimit(specs)
    if name == "berry-esseen":
        return BerryEsseenBand(specs)
    raise ComputationError(f"method {name!r} is not available")


def select(
    specs: Sequence[Repeated],
    method: str,
    *,
    accuracy: float = DEFAULT_ACCURACY,
    conversions: Sequence[str] = ("optimal",),
) -> tuple[list[Accountant], list[str]]:
    """The accountants that answer for `method`, and notes on the methods `all` had to skip.

    auto: exact where a closed form exists, else the rigorous PLD bounds (DESIGN.md principle 2); lists
    with an rdp: spec can only be accounted in RDP.
    """
    if method == "auto":
        if any(not spec.mechanism.has_tradeoff for spec in specs):
            return [_build("rdp", specs, accuracy, conversions)], []
        try:
            return [_build("exact", specs, accuracy, conversions)], []
        except ComputationError:
            return [_build("pld", specs, accuracy, conversions)], []
    if method != "all":
        return [_build(method, specs, accuracy, conversions)], []
    accountants, skipped = [], []
    for name in ("exact", "pld", "clt", "berry-esseen", "rdp"):
        try:
            accountants.append(_build(name, specs, accuracy, conversions))
        except ComputationError as error:
            skipped.append(f"{name}: {error}")
    return accountants, skipped


def split_uniform_delta(specs: Sequence[Repeated]) -> tuple[list[Repeated], float]:
    """The list without the delta parts of its unsampled (eps, delta)-DP specs, and what those parts
    compose to: f_{eps,delta} = f_{eps,0} (x) f_{0,delta} and f_{0,d1} (x) f_{0,d2} = f_{0,1-(1-d1)(1-d2)}
    (GDP paper eq. 10-11), so the whole list is (rest) (x) f_{0, delta0}. Specs with eps = 0 vanish from
    the rest; subsampled specs stay whole."""
    rest = []
    for spec in specs:
        step = spec.step.without_delta_part()
        if step is not None:
            rest.append(Repeated(step, spec.times))
    return rest, _uniform_delta(specs)


class WithUniformDelta:
    """An accountant of a list tensored with f_{0, delta0} (GDP paper eq. 12), in closed form:

        delta(eps) = delta0 + (1 - delta0) delta_rest(eps),
        beta(alpha) = (1 - delta0) beta_rest(alpha / (1 - delta0)) for alpha <= 1 - delta0, else 0,
        eps(delta) = eps_rest((delta - delta0) / (1 - delta0)), and inf for delta < delta0.

    Each figure keeps the inner figure's label: the maps are increasing, so bounds stay bounds. The inner
    target delta' is rounded down for exact and upper-bound epsilons and up for lower bounds, each to the
    nearest float at which delta0 + (1 - delta0) delta' <= delta (>= delta) holds as computed.
    """

    def __init__(self, inner: Accountant, delta0: float) -> None:
        self.inner, self.delta0, self.method = inner, delta0, inner.method

    def _inner_target(self, deltas: np.ndarray, direction: str) -> np.ndarray:
        from gdpcli.core.rounding import elementwise, to_safe_side

        d0 = self.delta0

        def safe(target: np.ndarray, delta: np.ndarray) -> np.ndarray:
            composed = d0 + (1.0 - d0) * target
            return composed <= delta if direction == "down" else composed >= delta

        start = np.maximum((deltas - d0) / (1.0 - d0), 0.0)
        target = to_safe_side(start, elementwise(safe, deltas), direction, what="delta part")
        return np.maximum(target, 0.0)

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        deltas = np.asarray(deltas, dtype=float)
        upper, lower = self._inner_target(deltas, "down"), self._inner_target(deltas, "up")
        exact_at_zero = isinstance(self.inner, (ExactGDP, ExactSingle, Binomial))
        answerable = (upper > 0.0) | exact_at_zero  # PLD and RDP answer delta > 0 only
        query = np.concatenate((np.where(answerable, upper, 0.5), np.where(lower > 0.0, lower, 0.5)))
        figures = []
        for figure in self.inner.epsilon(query):
            above, below = np.split(np.asarray(figure.values, dtype=float), 2)
            if figure.guarantee is LOWER:  # at delta = delta0 only eps >= 0 is known from below
                values = np.where(deltas < self.delta0, np.inf, np.where(lower > 0.0, below, 0.0))
            else:
                values = np.where(answerable & (deltas >= self.delta0), above, np.inf)
            details = figure.details[: deltas.size] if figure.details else None
            figures.append(Figures(values, figure.guarantee, figure.method, details))
        return figures

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return [
            Figures(
                self.delta0 + (1.0 - self.delta0) * np.asarray(f.values), f.guarantee, f.method, f.details
            )
            for f in self.inner.delta(epsilons)
        ]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        alphas = np.asarray(alphas, dtype=float)
        keep = 1.0 - self.delta0
        inside = alphas <= keep
        figures = self.inner.beta(np.where(inside, np.minimum(alphas / keep, 1.0), 1.0))
        return [
            Figures(np.where(inside, keep * np.asarray(f.values), 0.0), f.guarantee, f.method, f.details)
            for f in figures
        ]


def mu_accountant(specs: Sequence[Repeated]) -> ExactGDP | PureDPToGDP:
    """Who can state a mu for the list; ComputationError explaining why not otherwise."""
    mu = exact_gdp_mu(specs)
    if mu is not None:
        return ExactGDP(mu)
    if len(specs) == 1:
        spec = specs[0]
        mechanism = spec.mechanism
        plain = spec.times == 1 and spec.sampling_rate is None
        if mechanism.eps_delta is not None and mechanism.delta_part == 0 and plain:
            return PureDPToGDP(mechanism.eps_delta[0])
        if mechanism.delta_part > 0:
            raise ComputationError(
                f"{spec.describe()}: (eps, delta)-DP with delta > 0 implies mu-GDP for no finite mu",
                "it allows an event that reveals everything with probability delta",
            )
    raise ComputationError(
        "the composition is not exactly GDP, so no exact mu exists",
        "use --method clt for the CLT approximation, or --delta/--epsilon for rigorous figures",
    )


class GroupTradeoff:
    """Group privacy of one f-DP mechanism: 1 - (1 - f)^{o k} (GDP paper Thm 3).

    beta is exact (the closed-form f iterated pointwise); delta(eps) and eps(delta) come from the
    conjugate of the group trade-off on a fine grid, as rigorous upper and lower bounds.
    """

    method = "group"

    def __init__(self, mechanism: Mechanism, group_size: int) -> None:
        from gdpcli.core.tradeoff import alpha_grid, grid_from_tradeoff

        self.mechanism, self.group_size = mechanism, group_size
        self.grid = grid_from_tradeoff(self._tradeoff, alpha_grid(20001))

    def _tradeoff(self, alpha: np.ndarray) -> np.ndarray:
        from gdpcli.core.tradeoff import group_tradeoff

        return np.asarray(group_tradeoff(self.mechanism.tradeoff, alpha, self.group_size))

    def _profile(self, upper: bool) -> object:
        from gdpcli.core.tradeoff import profile_from_grid

        return lambda epsilon: profile_from_grid(self.grid, epsilon, upper=upper)

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        return [Figures(self._tradeoff(alphas), EXACT, self.method)]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return [
            Figures(np.asarray(self._profile(upper)(epsilons)), label, self.method)
            for upper, label in ((True, UPPER), (False, LOWER))
        ]

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core.tradeoff import epsilon_from_profile

        return [
            Figures(np.asarray(epsilon_from_profile(self._profile(upper), deltas)), label, self.method)
            for upper, label in ((True, UPPER), (False, LOWER))
        ]


def group_accountant(spec: Repeated, group_size: int) -> Accountant:
    """Group privacy for groups of k (GDP paper Thm 3): (k mu)-GDP exactly for GDP, else GroupTradeoff."""
    mu = spec.exact_mu
    if mu is not None:
        return ExactGDP(gdp.group_mu(mu, group_size))
    if spec.times != 1 or spec.sampling_rate is not None or not spec.mechanism.has_tradeoff:
        raise ComputationError("group privacy needs a single closed-form mechanism (no times, p or rdp)")
    return GroupTradeoff(spec.mechanism, group_size)


def describe(accountant: Accountant) -> dict[str, float]:
    """Context columns for an accountant's rows: the mu behind GDP and CLT figures, gamma of the band."""
    if isinstance(accountant, BerryEsseenBand):
        return {"mu": accountant.mu_total, "gamma": accountant.theorem5.gamma}
    if isinstance(accountant, (ExactGDP, ApproximateGDP)):
        return {"mu": accountant.mu_total}
    return {}


def mu_figures(specs: Sequence[Repeated], method: str) -> list[Figures]:
    """Figures for --to mu: exact (GDP, or GDPT Thm 5.1 for one pure-DP guarantee) or the CLT mu.

    A mu is only stated when it means something: exactly, or labelled as the CLT approximation.
    """
    if method in ("auto", "exact"):
        return mu_accountant(specs).mu()
    if method == "clt":
        return CentralLimit(specs).mu()
    if method == "all":
        figures: list[Figures] = []
        for build in (mu_accountant, CentralLimit):
            try:
                figures += build(specs).mu()
            except ComputationError:
                continue
        if figures:
            return figures
        return mu_accountant(specs).mu()
    raise ComputationError(f"--to mu is not a {method} figure", "use --method exact, clt or all")


def _uniform_delta(specs: Sequence[Repeated]) -> float:
    """The delta part of the composition: 1 - prod (1 - delta_i)^{times_i} (GDP paper eq. 10-11), summed in
    log space (log1p, fsum, expm1) so that a million tiny deltas keep their digits."""
    import math

    logs = [spec.times * math.log1p(-spec.step.delta_part) for spec in specs]
    return -math.expm1(math.fsum(logs))


class ApproximateGDP:
    """A composition approximated by G_mu (x) f_{0,delta0} (GDP paper eq. 10-12): figures labelled
    `approximation`, no rigorous direction. Built by the CLT (Thm 5) or a DP-SGD CLT formula (Cor. 4)."""

    method = "clt"

    def __init__(self, mu: float, delta0: float = 0.0) -> None:
        self.mu_total, self.delta0 = mu, delta0

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        return [
            Figures(
                np.asarray(clt.uniform_epsilon(deltas, self.mu_total, self.delta0)),
                APPROXIMATION,
                self.method,
            )
        ]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        return [
            Figures(
                np.asarray(clt.uniform_delta(epsilons, self.mu_total, self.delta0)),
                APPROXIMATION,
                self.method,
            )
        ]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        beta = clt.band_tradeoff(alphas, self.mu_total, 0.0, self.delta0)
        return [Figures(np.asarray(beta), APPROXIMATION, self.method)]

    def mu(self) -> list[Figures]:
        return [Figures(np.asarray([self.mu_total]), APPROXIMATION, self.method)]


class CentralLimit(ApproximateGDP):
    """GDP paper Theorem 5's mu for the composition (with eq. 10-12 for the delta part): an approximation."""

    def __init__(self, specs: Sequence[Repeated]) -> None:
        from gdpcli.core import clt

        self.theorem5 = clt.berry_esseen([s.step.clt_functionals() for s in specs], [s.times for s in specs])
        super().__init__(self.theorem5.mu, _uniform_delta(specs))


class BerryEsseenBand(CentralLimit):
    """The Berry-Esseen band of Theorem 5, max(0, G_mu(alpha + gamma) - gamma): a rigorous lower bound on
    the composed trade-off, hence rigorous upper bounds on delta(eps) and eps(delta), when every functional
    behind mu and gamma is rigorous (closed forms); with a quadrature among them (subsampled steps) the same
    figures are labelled approximation. Vacuous when gamma >= 1/2 or when the requested delta is below
    the band's floor (then eps = inf)."""

    method = "berry-esseen"

    def _label(self, bound: Guarantee) -> Guarantee:
        return bound if self.theorem5.rigorous else APPROXIMATION

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        values = clt.band_epsilon(deltas, self.mu_total, self.theorem5.gamma, self.delta0)
        return [Figures(np.asarray(values), self._label(UPPER), self.method)]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        values = clt.band_delta(epsilons, self.mu_total, self.theorem5.gamma, self.delta0)
        return [Figures(np.asarray(values), self._label(UPPER), self.method)]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        values = clt.band_tradeoff(alphas, self.mu_total, self.theorem5.gamma, self.delta0)
        return [Figures(np.asarray(values), self._label(LOWER), self.method)]

    def mu(self) -> list[Figures]:
        raise ComputationError("the Berry-Esseen band is not a GDP guarantee", "use --method clt for its mu")


class RenyiAccountant:
    """RDP accounting: per-step RDP curves add up under composition (Mironov 2017), then a conversion to
    (eps, delta) optimised over the order alpha (Asoodeh et al.: classic eq. 3-4 (for the Gaussian this is
    the moments accountant, eq. 23), improved (Balle et al. 2020), lemma1 (Lemma 1 closed form), lemma2
    (Lemma 1 on the paper's order grid of Fig. 2: for the Gaussian that is Lemma 2 as the paper evaluated
    it), optimal (Thm 3)). Every conversion is a rigorous upper bound; the order used is reported.

    rdp: specs give values at their listed orders only; the other specs' curves are evaluated there.
    """

    method = "rdp"

    def __init__(self, specs: Sequence[Repeated], conversions: Sequence[str]) -> None:
        points = [s for s in specs if s.step.rdp_points is not None]
        self.curves = [(s.step.rdp_curve(), s.times) for s in specs if s.step.rdp_points is None]
        self.points = points
        self.conversions = list(conversions)
        self.orders = self._common_orders(points) if points else None

    @staticmethod
    def _common_orders(points: Sequence[Repeated]) -> np.ndarray:
        common = set(points[0].step.rdp_points[0])
        for spec in points[1:]:
            common &= set(spec.step.rdp_points[0])
        if not common:
            raise ComputationError("the rdp: specs share no order alpha", "give them a common order")
        return np.array(sorted(common))

    def curve(self, order: np.ndarray) -> np.ndarray:
        """The composed RDP curve (sum over specs of times x per-step curve)."""
        order = np.asarray(order, dtype=float)
        total = np.zeros(order.shape)
        for curve, times in self.curves:
            total = total + times * np.asarray(curve(order), dtype=float)
        for spec in self.points:
            lookup = dict(zip(*spec.step.rdp_points, strict=True))
            total = total + spec.times * np.array([lookup[a] for a in np.atleast_1d(order)]).reshape(
                order.shape
            )
        return total

    def _convert(self, queries: np.ndarray, name: str, direction: str) -> Figures:
        from gdpcli.core import rdp

        results = []
        for query in queries:
            if name == "lemma2":
                orders = self._paper_orders(float(query)) if self.orders is None else self.orders
                results.append(rdp.epsilon_from_points(orders, self.curve(orders), float(query), "lemma1"))
            elif self.orders is not None:
                convert = rdp.epsilon_from_points if direction == "epsilon" else rdp.delta_from_points
                results.append(convert(self.orders, self.curve(self.orders), float(query), name))
            else:
                convert = rdp.epsilon_from_curve if direction == "epsilon" else rdp.delta_from_curve
                results.append(convert(self.curve, float(query), name))
        values = np.array([r.value for r in results])
        details = tuple({"order": r.order} for r in results)
        return Figures(values, UPPER, f"rdp-{name}", details)

    def _paper_orders(self, delta: float) -> np.ndarray:
        """lemma2: Lemma 1's closed form on the paper's order grid (its Fig. 2, Lemma 2), restricted to the
        grid points within a factor 8 (in alpha - 1) of the continuous minimiser. Any set of orders gives a
        valid bound, so the restriction keeps the figure rigorous; it keeps subsampled curves, which are
        costly at large orders, cheap."""
        from gdpcli.core import rdp

        best = rdp.epsilon_from_curve(self.curve, delta, "lemma1").order - 1.0
        grid = rdp.PAPER_ORDER_GRID
        return grid[(grid - 1.0 >= best / 8.0) & (grid - 1.0 <= best * 8.0)]

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        return [self._convert(deltas, name, "epsilon") for name in self.conversions]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        from gdpcli.core import rdp

        names = [n for n in self.conversions if n in rdp.DELTA_METHODS]
        if not names:
            raise ComputationError(
                "the lemma1/lemma2 conversions give epsilon only", "use --conversion optimal"
            )
        return [self._convert(epsilons, name, "delta") for name in names]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        raise ComputationError("an RDP curve gives no trade-off function here", "use --method pld or exact")


def _scaled(specs: Sequence[Repeated], repetitions: int) -> list[Repeated]:
    """The list run `repetitions` times: every spec's times multiplied."""
    return [spec.with_times(spec.times * repetitions) for spec in specs]


def step_budgets(
    specs: Sequence[Repeated],
    method: str,
    delta: float,
    target: float,
    *,
    accuracy: float,
    conversions: Sequence[str],
) -> list[dict]:
    """For each method's figure: the largest N such that running the list N times keeps epsilon <= target.

    Rigorous figures (exact, upper_bound) give certified budgets; approximations are labelled as such.
    Lower bounds are not budgets and are skipped. Exponential then binary search over N (epsilon grows
    with N), up to 1e9 repetitions.
    """
    from gdpcli.core.roots import largest_integer_where

    names = ("exact", "pld", "clt", "berry-esseen", "rdp") if method == "all" else (method,)
    if method == "auto":
        names = ("exact",) if exact_accountant(specs) is not None else ("pld",)
    jobs = [(name, (c,)) for name in names for c in (conversions if name == "rdp" else conversions[:1])]
    rows = []
    for name, chosen in jobs:
        try:
            probe = _build(name, specs, accuracy, chosen).epsilon(np.array([delta]))
        except ComputationError:
            if method != "all":
                raise
            continue
        for index, figure in enumerate(probe):
            if not figure.guarantee.certifies_at_most and figure.guarantee is not APPROXIMATION:
                continue

            def epsilon_at(n: int, name: str = name, chosen: tuple = chosen, index: int = index) -> float:
                accountant = _build(name, _scaled(specs, n), accuracy, chosen)
                return float(accountant.epsilon(np.array([delta]))[index].values[0])

            steps = largest_integer_where(lambda n, f=epsilon_at: f(n) <= target, limit=10**9)
            rows.append(
                {
                    "target_epsilon": target,
                    "delta": delta,
                    "repetitions": steps,
                    "epsilon": epsilon_at(steps) if steps else None,
                    "guarantee": figure.guarantee,
                    "method": figure.method,
                }
            )
    return rows
