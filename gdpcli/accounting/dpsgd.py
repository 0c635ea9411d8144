"""DP-SGD (NoisySGD) accounting: the run's schedule, its privacy figures by method, and step budgets.

A run is T steps of a Gaussian mechanism on a batch drawn at rate q. The noise multiplier sigma is the
ecosystem's (Opacus, TF Privacy, dp-accounting): noise standard deviation / clipping norm C. One step's
sensitivity (in units of C) follows from the neighbouring relation: 1 for add/remove (one example more or
less changes the summed clipped gradients by at most C), 2 for replace-one (by at most 2C). One step is
then (sensitivity / sigma)-GDP before sampling (GDP paper Thm 1); `sensitivity` can be set explicitly, e.g.
to 1 with replace-one to follow the GDP paper's NoisySGD, whose sigma is in units of 2C (Sec. 5, Thm 10).

- `poisson`: every example joins a batch independently with probability q (add/remove neighbours);
  one step is the Poisson-subsampled Gaussian, whose two directions f_p, f_p^-1 differ (GDP paper Sec. 4);
- `fixed`: batches of a fixed size m = q n without replacement (`Sample_m`, replace-one neighbours);
  one step is C_q(G_mu) and the run is C_q(G_mu)^{(x)T}-DP (GDP paper Thm 10), mu the per-step mu;
- `shuffle`: each epoch a random permutation cut into batches (replace-one neighbours): no tight analysis
  is known, so its figures are a rigorous upper bound without amplification and a rigorous lower bound
  (gdpcli.accounting.shuffled_batches);
- `balls-in-bins`: each epoch every example in one uniformly random batch of b (add/remove neighbours),
  rigorous upper and lower bounds (gdpcli.accounting.balls_in_bins);
- `truncated-poisson`: Poisson batches cut to at most B_max examples (add/remove neighbours), rigorous
  upper and lower bounds (gdpcli.accounting.truncated_poisson);
- `cyclic-poisson`: step t Poisson-samples part t mod b of the data (add/remove neighbours): the worst
  example's ceil(T / b) Poisson steps (gdpcli.accounting.cyclic_poisson.reduced), planned as that Poisson
  run so that every method answers it.
Each scheme that is no composition of sampled steps declares its SchemeBounds (gdpcli.accounting.schemes),
collected in BOUNDS, or its SchemeReduction, collected in REDUCTIONS. The run itself (rate, steps, noise,
scheme, checks) is gdpcli.accounting.run's.

With q = 1 both are the plain Gaussian mechanism: exactly (sqrt(T) mu)-GDP (GDP paper Cor. 2).

Methods (`figures`), the vocabulary of every command: `auto` (the exact GDP closed form at q = 1, else
rigorous PLD upper and lower bounds), `exact` (the closed form only), `pld` (the PLD bounds), `clt`
(Cor. 4 / the Poisson formula: approximations), `edgeworth` (the Edgeworth accountant of Wang et al.
2022: an approximation, Poisson and fixed-size), `berry-esseen` (Cor. 5, fixed-size only: rigorous at
q = 1, an approximation otherwise), `rdp` (moments accountant with a named RDP -> DP conversion: rigorous,
Poisson or q = 1) and `all`.
No rendering here: the CLI (gdpcli.cli.sgd) turns these into rows.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gdpcli.accounting import (
    Figures,
    balls_in_bins,
    cyclic_poisson,
    methods,
    shuffled_batches,
    truncated_poisson,
)
from gdpcli.accounting.figures import APPROXIMATE, PESSIMISTIC, Accountant, smallest, split_by_query
from gdpcli.accounting.methods import REGISTRY, Plan, answering
from gdpcli.accounting.run import MAX_STEPS, check_run
from gdpcli.accounting.schemes import STEPS, SchemeBounds, SchemeReduction
from gdpcli.core.roots import SearchLimitReached, largest_integer_at_most
from gdpcli.defaults import DEFAULT_ACCURACY
from gdpcli.errors import ComputationError, InputError, parameter, spelled
from gdpcli.events import Run, Sampling
from gdpcli.guarantees import Guarantee
from gdpcli.vocabulary import CONVERSIONS as RDP_CONVERSIONS
from gdpcli.vocabulary import METHODS

EVERY = tuple(REGISTRY)
"""What --method all shows, where available for the run (see `plan`)."""
CONVERSIONS = (*RDP_CONVERSIONS, "all")
BOUNDS: dict[Sampling, SchemeBounds] = {
    bounds.sampling: bounds
    for bounds in (
        shuffled_batches.BOUNDS,
        balls_in_bins.BOUNDS,
        truncated_poisson.BOUNDS,
    )
}
"""The bounds of every batch scheme that is no composition of independently sampled steps."""
REDUCTIONS: dict[Sampling, SchemeReduction] = {
    reduction.sampling: reduction for reduction in (cyclic_poisson.REDUCTION,)
}
"""Every batch scheme accounted as another scheme's run."""
_FINE_STEP = 0.002  # the same after two secant steps
_METHOD, _TARGET = parameter("method"), parameter("target_epsilon")


# ---------------------------------------------------------------------------------------------------------
# Figures by method
# ---------------------------------------------------------------------------------------------------------


def clt_mu(run: Run) -> float:
    """The CLT mu of the run: Cor. 4 of the GDP paper (fixed size) or q sqrt(T (e^{1/sigma^2} - 1)) (Poisson).

    An approximation with no rigorous direction; at q = 1 it is the exact sqrt(T) mu only for Poisson. The
    formulas take the noise in units of the sensitivity (Run.effective_noise). For groups of K records it
    is K times that (GDP paper Thm 3 applied to the CLT's G_mu: the naive group scaling, still no bound).
    The scheme's StepAnalysis gives the formula; a scheme of whole-run bounds, which no CLT answers, takes the
    Poisson formula at its rate (the first guess of a search, never printed).
    """
    run = accounted(run)
    mu_of = STEPS.get(run.sampling, STEPS[Sampling.POISSON]).clt_mu
    return run.group * float(mu_of(run.sampling_rate, run.steps, run.effective_noise))


def unavailable(run: Run, method: str) -> str | None:
    """Why a method cannot answer for this run (None when it can)."""
    if method in ("basic", "advanced"):
        return (
            f"the {method} composition theorem takes (eps, delta)-DP mechanisms, and a DP-SGD step is a "
            "subsampled Gaussian (use compose with dp: specs)"
        )
    if not run.sampling.per_step:
        if method in ("auto", "pld", "all"):
            return None
        return (
            f"{run.sampling} batches are accounted by the scheme's rigorous upper and lower bounds (use "
            f"{_METHOD} auto or pld); gdpcli has no closed form, CLT or RDP analysis of them"
        )
    if (
        run.group > 1
        and method in _GROUP_UNAVAILABLE
        and (run.sampling_rate < 1.0 or method == "berry-esseen")
    ):
        return (
            f"{method} has no analysis of a group of sampled records here; the group's binomial-mixture pair "
            f"is accounted by {_METHOD} auto or pld (rigorous), clt scales the CLT mu by K"
        )
    if run.sampling_rate == 1.0:
        return None  # the plain Gaussian mechanism: every method applies
    if method == "exact":
        return f"a subsampled run has no closed form (use {_METHOD} auto or pld: rigorous PLD bounds)"
    return STEPS[run.sampling].refused.get(method)


_GROUP_UNAVAILABLE = ("edgeworth", "berry-esseen", "rdp")
"""Methods that take the record-level step only (at q = 1 a group is the Gaussian at K times the
sensitivity, which edgeworth and rdp account; berry-esseen reads the record-level noise)."""


def _closed_form_or_pld(run: Run, deltas: np.ndarray, accuracy: float, method: str) -> list[Figures]:
    """auto: exact GDP at q = 1, else rigorous PLD upper and lower bounds (Thm 10 for fixed-size sampling);
    exact: the closed form only; pld: the PLD bounds always.

    Where the PLD cannot answer (an epsilon beyond its range) the error points to RDP when RDP applies to
    this run; a delta its round-off swallows gets RDP's upper bound beside the PLD's lower one
    (NumericalPLD).
    """
    from gdpcli import accounting

    specs = [run.spec()]
    exact = accounting.exact_accountant(specs) if method in ("auto", "exact") else None
    accountant = exact or accounting.NumericalPLD(specs, accuracy)
    try:
        return accountant.epsilon(deltas)
    except ComputationError as error:
        if unavailable(run, "rdp") or (error.hint and "method rdp" in spelled(error.hint)):
            raise
        hint = f"{error.hint}; or use {_METHOD} rdp, rigorous at any delta" if error.hint else None
        raise ComputationError(f"numerical accountant: {error.message}", hint) from None


def _clt(run: Run, deltas: np.ndarray) -> list[Figures]:
    """The CLT mu converted to epsilon at each delta as if exactly GDP (GDP paper Cor. 1): approximations."""
    from gdpcli.core import gdp

    return [Figures(np.atleast_1d(gdp.epsilon(deltas, clt_mu(run))), APPROXIMATE, "clt", "epsilon")]


def _edgeworth(run: Run, deltas: np.ndarray) -> list[Figures]:
    """The Edgeworth accountant of the run's T steps ([WGZ+22]; accountants.EdgeworthAccountant, the same
    accountant as `compose --method edgeworth`): an approximation, both directions for Poisson sampling."""
    from gdpcli.accounting.accountants import EdgeworthAccountant

    return EdgeworthAccountant([run.spec()]).epsilon(deltas)


def _berry_esseen(run: Run, deltas: np.ndarray) -> list[Figures]:
    """The band of GDP paper Cor. 5 (Lemma 4 functionals of C_q(G_mu)), +inf when vacuous at this delta.

    An upper bound when its functionals are rigorous (q = 1: closed forms); the Lemma 4 functionals of a
    subsampled step come from quadrature without a proven error bound, so there it is an approximation.
    """
    from gdpcli.core import clt

    theorem5 = berry_esseen_band(run)
    values = clt.band_epsilon(deltas, theorem5.mu, theorem5.gamma)
    side = PESSIMISTIC if theorem5.rigorous else APPROXIMATE
    return [Figures(np.atleast_1d(values), side, "berry-esseen", "epsilon")]


def berry_esseen_band(run: Run) -> object:
    """mu and gamma of the Berry-Esseen band of the run (GDP paper Cor. 5, Lemma 4)."""
    from gdpcli.core import clt

    return clt.sgd_berry_esseen(run.sampling_rate, run.steps, run.effective_noise)


def _rdp(run: Run, deltas: np.ndarray, conversion: str) -> list[Figures]:
    """Moments accountant: T times the RDP of the Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019)
    converted at delta by the named conversion(s): rigorous upper bounds (gdpcli.accounting.RenyiAccountant,
    the same accountant as `compose --method rdp`)."""
    from gdpcli.accounting import RenyiAccountant
    from gdpcli.vocabulary import CONVERSIONS as NAMES

    names = NAMES if conversion == "all" else (conversion,)
    return RenyiAccountant([run.spec()], names).epsilon(deltas)


def _check_names(method: str, conversion: str) -> None:
    """InputError unless the method and the conversion are words of their vocabularies."""
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}", "allowed: " + ", ".join(METHODS))
    if conversion not in CONVERSIONS:
        raise InputError(f"unknown conversion {conversion!r}", "allowed: " + ", ".join(CONVERSIONS))


class RunFigures:
    """One method's accountant for a DP-SGD run, as `plan` gives it: epsilon at each delta, labelled. A
    batch scheme that is no composition of sampled steps answers by its own bounds (BOUNDS); the others by
    the method's accountant of the run's event (the same as `compose`'s) or the run's own formulas (the
    CLT mu of the Poisson or fixed-size run, the Berry-Esseen band)."""

    def __init__(self, run: Run, method: str, accuracy: float, conversion: str) -> None:
        self.run, self.method, self.accuracy, self.conversion = run, method, accuracy, conversion

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        """epsilon at each delta by the method, the figures of each delta in turn (by_delta)."""
        return [figure for _, found in self.by_delta(deltas) for figure in found]

    def by_delta(self, deltas: np.ndarray) -> list[tuple[float, list[Figures]]]:
        """(delta, its figures, one value each) for each delta. A run of sampled steps is answered at every
        delta from one computation (the PLD bounds from one composition per grid for the whole list, as
        `compose` answers a list); a batch scheme's bounds delta by delta."""
        deltas = np.atleast_1d(np.asarray(deltas, dtype=float))
        for delta in deltas:
            if not 0 < delta < 1:
                raise InputError(f"delta must be in (0, 1), got {float(delta)!r}")
        if not self.run.sampling.per_step:
            scheme = BOUNDS[self.run.sampling]
            return [(float(delta), scheme.figures(self.run, float(delta), self.accuracy)) for delta in deltas]
        return split_by_query(self._at(deltas), deltas)

    def _at(self, deltas: np.ndarray) -> list[Figures]:
        run, method = self.run, self.method
        if method in ("auto", "exact", "pld"):
            return _closed_form_or_pld(run, deltas, self.accuracy, method)
        if method == "rdp":
            return _rdp(run, deltas, self.conversion)
        own: dict[str, Callable[[Run, np.ndarray], list[Figures]]] = {
            "clt": _clt,
            "edgeworth": _edgeworth,
            "berry-esseen": _berry_esseen,
        }
        return own[method](run, deltas)


def plan(run: Run, method: str, *, accuracy: float = DEFAULT_ACCURACY, conversion: str = "optimal") -> Plan:
    """Who answers for the run under `method` (a METHODS word): the method, or for `all` every method of
    EVERY in that order, each with its accountant or the reason it cannot answer (a ComputationError whose
    hint says why)."""
    check_run(run)
    _check_names(method, conversion)
    names = EVERY if method == "all" else (method,)
    return [(name, _planned(accounted(run), name, accuracy, conversion, run.sampling)) for name in names]


def tradeoff_plan(run: Run, method: str, *, accuracy: float = DEFAULT_ACCURACY) -> Plan:
    """Who answers trade-off questions (beta and delta: risk, audit) for the run under `method`: the methods
    of `plan`, with its reasons where one cannot answer, each by an accountant of the whole trade-off
    function: the scheme's pairs (SchemeBounds.accountant) for a run of whole-run bounds, else the
    accountant `compose` plans for the event of the run (or of its reduced run), whose own reason stands
    where it has no such accountant (the CLT of Poisson steps: sgd's CLT mu is no trade-off function)."""
    entries = plan(run, method, accuracy=accuracy)
    return [
        (name, found if isinstance(found, ComputationError) else _tradeoff_accountant(run, name, accuracy))
        for name, found in entries
    ]


def _tradeoff_accountant(run: Run, method: str, accuracy: float) -> Accountant | ComputationError:
    """The accountant of the run's trade-off function by a method `plan` allows for it."""
    run = accounted(run)
    if not run.sampling.per_step:
        return BOUNDS[run.sampling].accountant(run, accuracy)
    [(_, found)] = methods.plan([run.spec()], method, accuracy=accuracy)
    return found


def accounted(run: Run) -> Run:
    """The run the methods answer for: the run its scheme reduces to (REDUCTIONS: a cyclic-Poisson run's
    worst example's Poisson run), else itself."""
    reduction = REDUCTIONS.get(run.sampling)
    return run if reduction is None else reduction.reduced(run)


def _planned(
    run: Run, name: str, accuracy: float, conversion: str, scheme: Sampling
) -> RunFigures | ComputationError:
    reason = unavailable(run, name)
    if reason is not None:
        return ComputationError(f"{_METHOD} {name} is not available for {scheme} sampling", reason)
    return RunFigures(run, name, accuracy, conversion)


def figures(
    run: Run, delta: float, method: str, *, accuracy: float = DEFAULT_ACCURACY, conversion: str = "optimal"
) -> list[Figures]:
    """epsilon at delta of the run by method (METHODS), each labelled.

    `all` gives every method of EVERY available for the run (see `plan`) in that order.
    """
    entries = plan(run, method, accuracy=accuracy, conversion=conversion)
    return [figure for found in answering(entries) for figure in found.epsilon(np.asarray([delta]))]


@dataclass(frozen=True)
class Method:
    """The accountant a budget rests on: --method (one of METHODS but all), the PLD's --accuracy and the RDP
    --conversion."""

    name: str = "auto"
    accuracy: float = DEFAULT_ACCURACY
    conversion: str = "optimal"


def certified(run: Run, delta: float, method: Method = Method()) -> Figures:
    """The figure a budget may rely on: the method's smallest figure that bounds epsilon from above (label
    exact or upper_bound; for conversion `all` the smallest over the conversions).

    For `clt` the approximation is returned, labelled as such: it never passes a budget check, but
    calibrate --method clt reports it. ComputationError when the method gives no such figure.
    """
    found = _budget_figures(run, delta, method)
    if not any(_budget_rests_on(method.name, f.guarantee) for f in found):
        raise ComputationError(f"{_METHOD} {method.name} gives no upper bound on epsilon for this run")
    return smallest(found, lambda guarantee: _budget_rests_on(method.name, guarantee))


def _budget_figures(run: Run, delta: float, method: Method) -> list[Figures]:
    """The figures a budget is decided on: the method's, but of a batch scheme only its upper bound (its
    lower bound and comparisons cannot certify anything and cost a PLD each)."""
    run = accounted(run)
    if not run.sampling.per_step:
        check_run(run)
        return [BOUNDS[run.sampling].budget_figure(run, delta, method.accuracy)]
    return figures(run, delta, method.name, accuracy=method.accuracy, conversion=method.conversion)


def _budget_rests_on(method: str, guarantee: Guarantee) -> bool:
    """Whether a budget may rest on a figure of this label: exact or upper_bound; for clt and edgeworth
    their approximation (reported by calibrate --method clt, never passing a budget check)."""
    if method in _APPROXIMATE_METHODS:
        return guarantee is Guarantee.APPROXIMATION
    return guarantee.certifies_at_most


_APPROXIMATE_METHODS = ("clt", "edgeworth")
"""Methods whose only figure is an approximation: their step budgets are reported, labelled as such."""


def check_budget_method(method: str) -> None:
    """InputError for a budget check (max_epsilon) by a method whose only figure is an approximation."""
    if method in _APPROXIMATE_METHODS:
        raise InputError(
            f"{parameter('max_epsilon')} cannot be checked with {_METHOD} {method}",
            f"{method} is an approximation; use a rigorous method: auto, pld or rdp",
        )


# ---------------------------------------------------------------------------------------------------------
# Step budgets
# ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """The largest step count whose certified epsilon stays within target_epsilon (0 if none).

    epsilon: the certified figure at `steps` (guarantee as labelled; nan when steps = 0).
    next_lower: a rigorous lower bound on epsilon at steps + 1 (exact method only, else None).
    exceeds_from: the smallest step count shown to exceed the target by a rigorous lower bound (exact
    method only): since more steps never help, every run of at least that many steps exceeds it; the true
    largest count lies in [steps, exceeds_from).
    """

    run: Run
    target_epsilon: float
    steps: int
    epsilon: float
    guarantee: Guarantee
    method: str
    next_lower: float | None = None
    exceeds_from: int | None = None

    @property
    def next_step_exceeds(self) -> bool | None:
        """True when epsilon at steps + 1 provably exceeds the target (exact method only)."""
        return None if self.exceeds_from is None else self.exceeds_from == self.steps + 1


def _steps_guess(run: Run, delta: float, target_epsilon: float) -> int:
    """A first guess of the budget from the CLT: mu grows like sqrt(T) (GDP paper Cor. 4, Poisson formula)."""
    return _rescaled(1, float(gdp_mu(target_epsilon, delta)), clt_mu(run.with_steps(1)))


def _rescaled(steps: int, mu_target: float, mu_at_steps: float) -> int:
    """steps (mu_target / mu_at_steps)^2, clipped to [1, MAX_STEPS]: the budget if mu grew like sqrt(T)."""
    return int(min(max(steps * (mu_target / mu_at_steps) ** 2, 1.0), MAX_STEPS))


def gdp_mu(epsilon: float, delta: float) -> float:
    """The mu whose GDP guarantee has this epsilon at delta (GDP paper Cor. 1, inverted)."""
    from gdpcli.core import gdp

    return float(gdp.mu(epsilon, delta))


def largest_steps(run: Run, delta: float, target_epsilon: float, method: Method = Method()) -> Budget:
    """The largest number of steps whose certified epsilon (see `certified`) is <= target_epsilon.

    The run's own step count is ignored. Every evaluation is cached; for the exact method the PLD's lower
    bounds then locate the smallest step count that provably exceeds the target (Budget.exceeds_from).
    The certified figure may jitter slightly with T (the PLD grid is chosen per T), so the answer is a T
    whose bound is within the target and whose successor's is not; it is rigorous in any case.
    """
    if method.name == "all":
        raise InputError("largest_steps needs a single method", "one of " + ", ".join(EVERY))
    if not (math.isfinite(target_epsilon) and target_epsilon > 0):
        raise InputError(f"{_TARGET}: must be a positive finite number, got {target_epsilon!r}")
    answering(plan(run, method.name, accuracy=method.accuracy, conversion=method.conversion))
    cache: dict[int, list[Figures]] = {}

    def found(steps: int) -> list[Figures]:
        if steps not in cache:
            cache[steps] = _budget_figures(run.with_steps(steps), delta, method)
        return cache[steps]

    def value(steps: int, kind: Callable[[Guarantee], bool]) -> float:
        return float(np.atleast_1d(smallest(found(steps), kind).values)[0])

    mu_target = gdp_mu(target_epsilon, delta)

    def search(kind: Callable[[Guarantee], bool], guess: int) -> int:
        """Two secant steps in the GDP scale (mu ~ sqrt(T)), then a fine bracket narrowed by interpolation."""
        for _ in range(2):
            epsilon = value(guess, kind)
            if not 0 < epsilon < math.inf:
                break
            guess = _rescaled(guess, mu_target, gdp_mu(epsilon, delta))
        return largest_integer_at_most(
            lambda t: value(t, kind), target_epsilon, guess=guess, step=_FINE_STEP, limit=MAX_STEPS
        )

    def allowed(guarantee: Guarantee) -> bool:
        return _budget_rests_on(method.name, guarantee)

    def lower(guarantee: Guarantee) -> bool:
        return guarantee is Guarantee.LOWER_BOUND

    try:
        steps = search(allowed, _steps_guess(run, delta, target_epsilon))
    except SearchLimitReached:
        raise InputError(
            f"{_TARGET} {target_epsilon:g} allows more than {MAX_STEPS:.0e} steps, the most gdpcli searches",
            "give a smaller target",
        ) from None
    label = smallest(found(max(steps, 1)), allowed)
    budget = Budget(
        run.with_steps(steps),
        target_epsilon,
        steps,
        value(steps, allowed) if steps else math.nan,
        label.guarantee,
        label.method,
    )
    if label.guarantee is Guarantee.EXACT:
        return dataclasses.replace(budget, next_lower=value(steps + 1, allowed), exceeds_from=steps + 1)
    if method.name not in ("auto", "pld") or not run.sampling.per_step or steps >= MAX_STEPS:
        # PLD lower bounds locate the boundary (a batch scheme's lower bound is of another pair: its gap
        # to the upper bound is no refinement away)
        return budget
    next_lower = value(steps + 1, lower)
    exceeds_from = steps + 1 if next_lower > target_epsilon else search(lower, steps + 1) + 1
    return dataclasses.replace(budget, next_lower=next_lower, exceeds_from=max(exceeds_from, steps + 1))
