"""Which accountant answers: the method vocabulary, the plan of a composition (exact where possible,
rigorous otherwise, approximate only on request), mu statements, group privacy and step budgets."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from gdpcli.accounting.accountants import (
    BerryEsseenBand,
    Binomial,
    BoundedSingle,
    CentralLimit,
    EdgeworthAccountant,
    ExactGDP,
    ExactSingle,
    GroupTradeoff,
    NumericalPLD,
    PureDPToGDP,
    RenyiAccountant,
    TextbookComposition,
    WithUniformDelta,
    detailed,
    split_uniform_delta,
    uniform_delta,
)
from gdpcli.accounting.figures import APPROXIMATE, Accountant, Figures
from gdpcli.core import gdp
from gdpcli.defaults import DEFAULT_ACCURACY
from gdpcli.errors import ComputationError, InputError, parameter
from gdpcli.events import ApproxDP, RepeatAndSelect, Repeated
from gdpcli.events.repeat_select import RDP_ONLY


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
        single = mechanisms[0]
        return ExactSingle(single) if single.profile_is_exact else BoundedSingle(single)
    if all(m.eps_delta is not None for m in mechanisms):
        epsilons = {m.eps_delta[0] for m in mechanisms}
        times = sum(spec.times for spec in specs)
        if epsilons == {0.0}:  # f_{0,delta_1} (x) ... = f_{0, 1 - prod(1 - delta_i)} (GDP paper eq. 11)
            return ExactSingle(ApproxDP(0.0, uniform_delta(specs)))
        if len(epsilons) == 1 and times <= _BINOMIAL_MAX_TIMES:
            return Binomial(epsilons.pop(), times, uniform_delta(specs))
    return None


Builder = Callable[[Sequence[Repeated], float, Sequence[str]], Accountant]


def _closed_form(specs: Sequence[Repeated], accuracy: float, conversions: Sequence[str]) -> Accountant:
    """exact: the closed form of the list, or of its rest after the delta parts (WithUniformDelta)."""
    exact = exact_accountant(specs)
    if exact is not None:
        return exact
    rest, delta0 = split_uniform_delta(specs)
    inner = exact_accountant(rest) if delta0 > 0.0 and rest else None
    if inner is None:
        raise ComputationError("no closed form for this list of mechanisms", f"use {parameter('method')} pld")
    return WithUniformDelta(inner, delta0)


def _with_delta_parts(numerical: Builder) -> Builder:
    """A numerical accountant of the list without its delta parts, tensored with them in closed form."""

    def build(specs: Sequence[Repeated], accuracy: float, conversions: Sequence[str]) -> Accountant:
        rest, delta0 = split_uniform_delta(specs)
        if delta0 > 0.0 and not rest:  # only delta parts: f_{0, delta0} itself, in closed form
            return ExactSingle(ApproxDP(0.0, delta0))
        inner = numerical(rest, accuracy, conversions)
        return WithUniformDelta(inner, delta0) if delta0 > 0.0 else inner

    return build


REGISTRY: dict[str, Builder] = {
    "exact": _closed_form,
    "pld": _with_delta_parts(lambda specs, accuracy, _: NumericalPLD(specs, accuracy)),
    "clt": lambda specs, _, __: CentralLimit(specs),
    "edgeworth": _with_delta_parts(lambda specs, _, __: EdgeworthAccountant(specs)),
    "berry-esseen": lambda specs, _, __: BerryEsseenBand(specs),
    "rdp": _with_delta_parts(lambda specs, _, conversions: RenyiAccountant(specs, conversions)),
    "basic": lambda specs, _, __: TextbookComposition(specs, "basic"),
    "advanced": lambda specs, _, __: TextbookComposition(specs, "advanced"),
}
"""The accountant behind each method name (what `all` shows, in this order). exact, pld, edgeworth and rdp
account the delta parts of unsampled (eps, delta)-DP specs in closed form (WithUniformDelta, GDP paper eq.
10-12) and only the rest numerically; clt and berry-esseen carry them the same way inside (CentralLimit).
basic and advanced are the textbook theorems (TextbookComposition), for lists of (eps, delta)-DP mechanisms.
A builder that cannot handle the list raises ComputationError saying why: that is its `supports`."""


def _build(name: str, specs: Sequence[Repeated], accuracy: float, conversions: Sequence[str]) -> Accountant:
    """One accountant by method name; ComputationError when the method cannot handle the list."""
    if name not in REGISTRY:
        raise ComputationError(f"method {name!r} is not available")
    if name != "rdp" and any(isinstance(spec.mechanism, RepeatAndSelect) for spec in specs):
        raise ComputationError(RDP_ONLY, f"use {parameter('method')} rdp")
    return REGISTRY[name](specs, accuracy, conversions)


Plan = list[tuple[str, "Accountant | ComputationError"]]
"""Who answers: each method with its accountant, or the ComputationError saying why it cannot."""


def answering(entries: Plan) -> list[Accountant]:
    """The accountants of a plan; the reason of its one entry when that cannot answer (a single method)."""
    if len(entries) == 1 and isinstance(entries[0][1], ComputationError):
        raise entries[0][1]
    return [found for _, found in entries if not isinstance(found, ComputationError)]


def plan(
    specs: Sequence[Repeated],
    method: str,
    *,
    accuracy: float = DEFAULT_ACCURACY,
    conversions: Sequence[str] = ("optimal",),
) -> Plan:
    """Who answers for the composition of `specs` under `method`: each method with its accountant, or the
    reason it cannot answer (the ComputationError its builder raised).

    auto: exact where a closed form exists, else the rigorous PLD bounds (README, "Which method should I
    trust?"); lists with an rdp: spec can only be accounted in RDP. all: every method of REGISTRY in order.
    """
    if method == "auto":
        if any(not spec.mechanism.has_tradeoff for spec in specs):
            return [("rdp", _planned("rdp", specs, accuracy, conversions))]
        exact = _planned("exact", specs, accuracy, conversions)
        if not isinstance(exact, ComputationError):
            return [("exact", exact)]
        return [("pld", _planned("pld", specs, accuracy, conversions))]
    names = tuple(REGISTRY) if method == "all" else (method,)
    return [(name, _planned(name, specs, accuracy, conversions)) for name in names]


def _planned(
    name: str, specs: Sequence[Repeated], accuracy: float, conversions: Sequence[str]
) -> Accountant | ComputationError:
    """The method's accountant, or the reason it cannot handle the list."""
    try:
        return _build(name, specs, accuracy, conversions)
    except ComputationError as error:
        return error


def select(
    specs: Sequence[Repeated],
    method: str,
    *,
    accuracy: float = DEFAULT_ACCURACY,
    conversions: Sequence[str] = ("optimal",),
    verbose: bool = False,
) -> tuple[list[Accountant], list[str]]:
    """The accountants of the plan (see `plan`), and notes on the methods `all` had to skip; the reason of
    a single method that cannot answer is raised. verbose (-v): each shows its details (Detailed)."""
    accountants, skipped = answers(plan(specs, method, accuracy=accuracy, conversions=conversions))
    return detailed(accountants, verbose), skipped


def answers(entries: Plan) -> tuple[list[Accountant], list[str]]:
    """The accountants of a plan (answering) and a note on each method it skipped, with the reason."""
    skipped = [f"{name}: {found.text}" for name, found in entries if isinstance(found, ComputationError)]
    return answering(entries), skipped


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
        f"use {parameter('method')} clt for the CLT approximation, or "
        f"{parameter('delta')}/{parameter('epsilon')} for rigorous figures",
    )


_REPETITIONS = 10**9
"""The most repetitions a step budget (compose --target-epsilon) searches."""

_GROUP_LIMIT = 10_000
"""The largest group for the general bound, whose trade-off function is f composed with itself k times."""


def group_accountant(spec: Repeated, group_size: int) -> Accountant:
    """Group privacy for groups of k (GDP paper Thm 3): (k mu)-GDP exactly for GDP, the mechanism itself
    at k times its sensitivity where it adds noise to a query (Mechanism.group), else GroupTradeoff."""
    mu = spec.exact_mu
    if mu is not None:
        return ExactGDP(gdp.group_mu(mu, group_size))
    if spec.times != 1 or spec.sampling_rate is not None or not spec.mechanism.has_tradeoff:
        raise ComputationError("group privacy needs a single closed-form mechanism (no times, p or rdp)")
    grouped = spec.mechanism.group(group_size)
    if grouped is not None:
        return ExactSingle(grouped)
    if group_size > _GROUP_LIMIT:
        raise InputError(
            f"{parameter('group')} {group_size} is above {_GROUP_LIMIT:,} for {spec.mechanism.describe()}",
            "the general group bound iterates the trade-off function k times; use a smaller group",
        )
    return GroupTradeoff(spec.mechanism, group_size)


def describe(accountant: Accountant) -> dict[str, float]:
    """Context columns for an accountant's rows (its `context`, if it has one): the mu behind GDP and CLT
    figures, gamma of the Berry-Esseen band, eps' and delta' of Lemma 2."""
    return dict(getattr(accountant, "context", {}))


def mu_figures(specs: Sequence[Repeated], method: str, verbose: bool = False) -> list[Figures]:
    """Figures for --to mu: exact (GDP, or GDPT Thm 5.1 for one pure-DP guarantee) or the CLT mu, with
    the CLT's details when verbose (-v).

    A mu is only stated when it means something: exactly, or labelled as the CLT approximation.
    """

    def central_limit(specs: Sequence[Repeated]) -> Accountant:
        return detailed([CentralLimit(specs)], verbose)[0]

    if method in ("auto", "exact"):
        return mu_accountant(specs).mu()
    if method == "clt":
        return central_limit(specs).mu()
    if method == "all":
        figures: list[Figures] = []
        for build in (mu_accountant, central_limit):
            try:
                figures += build(specs).mu()
            except ComputationError:
                continue
        if figures:
            return figures
        return mu_accountant(specs).mu()
    raise ComputationError(
        f"{parameter('to')} mu is not a {method} figure", f"use {parameter('method')} exact, clt or all"
    )


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
    with N), up to _REPETITIONS; a target that allows more is an InputError naming the limit.
    """
    from gdpcli.core.roots import SearchLimitReached, largest_integer_where

    names = tuple(REGISTRY) if method == "all" else (method,)
    if method == "auto":
        names = tuple(name for name, _ in plan(specs, "auto", accuracy=accuracy, conversions=conversions))
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
            if not figure.guarantee.certifies_at_most and figure.side is not APPROXIMATE:
                continue

            def epsilon_at(n: int, name: str = name, chosen: tuple = chosen, index: int = index) -> float:
                accountant = _build(name, _scaled(specs, n), accuracy, chosen)
                return float(accountant.epsilon(np.array([delta]))[index].values[0])

            try:
                steps = largest_integer_where(lambda n, f=epsilon_at: f(n) <= target, limit=_REPETITIONS)
            except SearchLimitReached:
                raise InputError(
                    f"{parameter('target_epsilon')} {target:g} allows more than {_REPETITIONS:,} "
                    "repetitions, the most "
                    "gdpcli searches",
                    "give a smaller target",
                ) from None
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
