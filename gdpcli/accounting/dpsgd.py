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
  (gdpcli.accounting.shuffling);
- `balls-in-bins`: each epoch every example in one uniformly random batch of b (add/remove neighbours),
  rigorous upper and lower bounds (gdpcli.accounting.allocation);
- `truncated-poisson`: Poisson batches cut to at most B_max examples (add/remove neighbours), rigorous
  upper and lower bounds (gdpcli.accounting.truncated_poisson).
Each scheme that is no composition of sampled steps is a BatchScheme of SCHEMES (gdpcli.accounting.schemes).

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
from fractions import Fraction

import numpy as np

from gdpcli import events
from gdpcli.accounting import Figures, allocation, shuffling, truncated_poisson
from gdpcli.accounting.figures import APPROXIMATE, PESSIMISTIC, smallest
from gdpcli.accounting.methods import REGISTRY
from gdpcli.accounting.schemes import BatchScheme
from gdpcli.core.roots import SearchLimitReached, largest_integer_where
from gdpcli.defaults import DEFAULT_ACCURACY
from gdpcli.errors import ComputationError, InputError
from gdpcli.events import Repeated, Sampling
from gdpcli.guarantees import Guarantee
from gdpcli.vocabulary import BATCHING, METHODS
from gdpcli.vocabulary import CONVERSIONS as RDP_CONVERSIONS

EVERY = tuple(REGISTRY)
"""What --method all shows, where available for the run (see `unavailable`)."""
CONVERSIONS = (*RDP_CONVERSIONS, "all")
MAX_STEPS = 10**12
SCHEMES: dict[str, BatchScheme] = {
    scheme.name: scheme for scheme in (shuffling.SCHEME, allocation.SCHEME, truncated_poisson.SCHEME)
}
"""The batch schemes that are no composition of independently sampled steps (gdpcli.accounting.schemes)."""
_FINE_STEP = 0.002  # the same after two secant steps


@dataclass(frozen=True)
class Run:
    """One DP-SGD run: T steps at rate q (Poisson) or p = m/n (fixed size), noise multiplier sigma (noise
    std / C); sensitivity None means the neighbouring relation's own (events.Neighbouring.sensitivity).
    dataset_size N and max_batch_size matter to schemes that require them (truncated-poisson). group is K of
    group privacy (K records per user, each sampled on its own: gdpcli.accounting.group), 1 for records."""

    sampling_rate: float
    steps: int
    noise_multiplier: float
    sampling: str = "poisson"
    sensitivity: float | None = None
    dataset_size: int | None = None
    max_batch_size: int | None = None
    group: int = 1

    @property
    def scheme(self) -> BatchScheme | None:
        """The batch scheme when it is no composition of sampled steps (SCHEMES), else None."""
        return SCHEMES.get(self.sampling)

    @property
    def relation(self) -> events.Neighbouring:
        """The neighbouring relation the guarantee refers to: add/remove (Poisson), replace-one (fixed-size
        batches), or the batch scheme's own."""
        if self.scheme is not None:
            return self.scheme.relation
        return Sampling(self.sampling).neighbouring

    @property
    def neighbouring(self) -> str:
        """The neighbouring relation, as a word."""
        return str(self.relation)

    @property
    def step_sensitivity(self) -> float:
        """The L2 sensitivity of one step's summed clipped gradients, in units of C."""
        return self.relation.sensitivity if self.sensitivity is None else self.sensitivity

    @property
    def step_mu(self) -> float:
        """mu of one step before sampling: sensitivity / sigma (GDP paper Thm 1)."""
        return self.step_sensitivity / self.noise_multiplier

    @property
    def effective_noise(self) -> float:
        """The noise in units of the sensitivity, 1 / step_mu: the sigma of the GDP paper's formulas."""
        return self.noise_multiplier / self.step_sensitivity

    @property
    def epochs(self) -> float:
        """Passes over the data: T q (T / b where an epoch is b = ceil(N / B) batches)."""
        if self.scheme is not None and self.scheme.epochs_of_batches:
            return self.steps / shuffling.batches_per_epoch(self.sampling_rate)
        return self.steps * self.sampling_rate

    def with_steps(self, steps: int) -> Run:
        """The same run with another number of steps."""
        return dataclasses.replace(self, steps=steps)

    def spec(self) -> Repeated:
        """The run as an event: T-fold subsampled Gaussian (plain Gaussian when q = 1)."""
        if self.scheme is not None:
            raise ComputationError(
                f"a {self.sampling} run is not a composition of independently sampled steps",
                "its figures come from its batch scheme (gdpcli.accounting.schemes)",
            )
        run = events.dpsgd(
            self.noise_multiplier, self.sampling_rate, self.steps, self.sampling, self.sensitivity
        )
        if self.group == 1:
            return run
        from gdpcli.accounting.group import group_step

        return Repeated(group_step(run.step, self.group), self.steps)


def _exact_ratio(value: float) -> Fraction:
    """The decimal the user typed (shortest repr), so that 0.1 epochs of 2560/256 is exactly 1 step."""
    return Fraction(repr(float(value)))


def sampling_rate_of(dataset_size: int | None, batch_size: int | None, sampling_rate: float | None) -> float:
    """q = B / N from dataset and batch size, or the given rate; InputError for missing or mixed inputs."""
    if sampling_rate is not None:
        if batch_size is not None or dataset_size is not None:
            raise InputError(
                "give either --sampling-rate or --dataset-size with --batch-size, not both",
                "the rate is B / N",
            )
        if not (math.isfinite(sampling_rate) and 0 < sampling_rate <= 1):
            raise InputError(f"--sampling-rate: must be in (0, 1], got {sampling_rate!r}")
        return float(sampling_rate)
    if dataset_size is None or batch_size is None:
        raise InputError(
            "the sampling rate is missing", "give --dataset-size N and --batch-size B, or --sampling-rate q"
        )
    if dataset_size < 1 or batch_size < 1:
        raise InputError(f"--dataset-size and --batch-size must be >= 1, got {dataset_size} and {batch_size}")
    if batch_size > dataset_size:
        raise InputError(f"--batch-size {batch_size} exceeds --dataset-size {dataset_size}")
    return batch_size / dataset_size


def schedule(
    dataset_size: int | None,
    batch_size: int | None,
    sampling_rate: float | None,
    epochs: float | None,
    steps: int | None,
    sampling: str = "poisson",
) -> tuple[float, int, float]:
    """(q, T, epochs) of a run: q = B / N, T = ceil(E N / B) (or ceil(E / q) with a rate), epochs = T q;
    shuffled batches walk through b = ceil(N / B) batches an epoch: T = ceil(E b), epochs = T / b.

    Exactly one of epochs and steps; InputError for inconsistent or missing combinations.
    """
    q = sampling_rate_of(dataset_size, batch_size, sampling_rate)
    if (epochs is None) == (steps is None):
        raise InputError("give exactly one of --epochs and --steps", "T = ceil(epochs N / B) steps")
    if steps is None:
        if not (math.isfinite(epochs) and epochs > 0):
            raise InputError(f"--epochs: must be a positive finite number, got {epochs!r}")
        ratio = Fraction(batch_size, dataset_size) if sampling_rate is None else _exact_ratio(q)
        scheme = SCHEMES.get(sampling)
        if scheme is not None and scheme.epochs_of_batches:
            ratio = Fraction(1, shuffling.batches_per_epoch(q))
        steps = math.ceil(_exact_ratio(epochs) / ratio)
    if not 1 <= steps <= MAX_STEPS:
        raise InputError(f"the run has {steps} steps", f"allowed: 1 <= steps <= {MAX_STEPS:.0e}")
    run = Run(q, int(steps), 1.0, sampling)
    return q, run.steps, run.epochs


def repeated(run: Run, runs: int) -> Run:
    """K identical runs on the same data (a hyper-parameter search): their K-fold composition, the run of
    K T steps, each step (and epoch) a fresh draw of its batch. Where an epoch is b batches (shuffling,
    balls-in-bins) that holds only when each run ends at an epoch boundary; InputError otherwise."""
    if runs > 1 and run.scheme is not None and run.scheme.epochs_of_batches:
        batches = shuffling.batches_per_epoch(run.sampling_rate)
        if run.steps % batches:
            raise InputError(
                f"--runs with --sampling {run.sampling} needs whole epochs of {batches} steps each, got "
                f"{run.steps}",
                "each run's partial epoch is a fresh one",
            )
    return run.with_steps(run.steps * runs)


def check_run(run: Run) -> None:
    """InputError unless sigma > 0 and the sensitivity are finite, 0 < q <= 1, 1 <= T <= MAX_STEPS and the
    sampling is known."""
    if not (math.isfinite(run.noise_multiplier) and run.noise_multiplier > 0):
        raise InputError(
            f"--noise-multiplier: must be a positive finite number, got {run.noise_multiplier!r}"
        )
    if run.sensitivity is not None and not (math.isfinite(run.sensitivity) and run.sensitivity > 0):
        raise InputError(f"--sensitivity: must be a positive finite number, got {run.sensitivity!r}")
    if not 0 < run.sampling_rate <= 1:
        raise InputError(f"the sampling rate must be in (0, 1], got {run.sampling_rate!r}")
    if not 1 <= run.steps <= MAX_STEPS:
        raise InputError(f"steps must be in [1, {MAX_STEPS:.0e}], got {run.steps}")
    if run.sampling not in BATCHING:
        raise InputError(f"unknown sampling {run.sampling!r}", "allowed: " + ", ".join(BATCHING))
    required = dict(run.scheme.requires) if run.scheme is not None else {}
    for field, option in required.items():
        if getattr(run, field) is None:
            raise InputError(f"--sampling {run.sampling} needs {option}")
    if run.max_batch_size is not None and "max_batch_size" not in required:
        raise InputError("--max-batch-size caps the batches of --sampling truncated-poisson", "drop it")
    _check_group(run)


def _check_group(run: Run) -> None:
    """InputError unless K is a whole number >= 1; ComputationError for a group under a batch scheme
    without a rigorous group analysis here (every scheme but Poisson)."""
    from gdpcli.accounting.group import check_group

    check_group(run.group)
    if run.group > 1 and (run.scheme is not None or (run.sampling != "poisson" and run.sampling_rate < 1.0)):
        raise ComputationError(
            f"--group with --sampling {run.sampling}: no rigorous group bound for these batches here",
            "use --sampling poisson (each record sampled on its own); for fixed-size batches GDP paper Thm 3 "
            "holds for the whole run, 1 - (1 - f)^{o K} with f its trade-off function, but is not computed",
        )


# ---------------------------------------------------------------------------------------------------------
# Figures by method
# ---------------------------------------------------------------------------------------------------------


def clt_mu(run: Run) -> float:
    """The CLT mu of the run: Cor. 4 of the GDP paper (fixed size) or q sqrt(T (e^{1/sigma^2} - 1)) (Poisson).

    An approximation with no rigorous direction; at q = 1 it is the exact sqrt(T) mu only for Poisson. The
    formulas take the noise in units of the sensitivity (Run.effective_noise). For groups of K records it
    is K times that (GDP paper Thm 3 applied to the CLT's G_mu: the naive group scaling, still no bound).
    """
    from gdpcli.core import clt

    mu_of = clt.sgd_mu_fixed if run.sampling == "fixed" else clt.sgd_mu_poisson
    return run.group * float(mu_of(run.sampling_rate, run.steps, run.effective_noise))


def unavailable(run: Run, method: str) -> str | None:
    """Why a method cannot answer for this run (None when it can)."""
    if method in ("basic", "advanced"):
        return (
            f"the {method} composition theorem takes (eps, delta)-DP mechanisms, and a DP-SGD step is a "
            "subsampled Gaussian (use compose with dp: specs)"
        )
    if run.scheme is not None:
        if method in ("auto", "pld", "all"):
            return None
        return (
            f"{run.sampling} batches are accounted by the scheme's rigorous upper and lower bounds (use "
            "--method auto or pld); gdpcli has no closed form, CLT or RDP analysis of them"
        )
    if (
        run.group > 1
        and method in _GROUP_UNAVAILABLE
        and (run.sampling_rate < 1.0 or method == "berry-esseen")
    ):
        return (
            f"{method} has no analysis of a group of sampled records here; the group's binomial-mixture pair "
            "is accounted by --method auto or pld (rigorous), clt scales the CLT mu by K"
        )
    if run.sampling_rate == 1.0:
        return None  # the plain Gaussian mechanism: every method applies
    if method == "exact":
        return "a subsampled run has no closed form (use --method auto or pld: rigorous PLD bounds)"
    if method == "berry-esseen" and run.sampling == "poisson":
        return (
            "the Berry-Esseen band (GDP paper Cor. 5) needs a symmetric per-step trade-off function; "
            "Poisson subsampling is asymmetric (use --method auto or pld)"
        )
    if method == "rdp" and run.sampling == "fixed":
        return (
            "the moments accountant's subsampled-Gaussian RDP is for Poisson sampling (add/remove); "
            "no RDP bound for fixed-size replace-one sampling is implemented (use --method auto or pld)"
        )
    return None


_GROUP_UNAVAILABLE = ("edgeworth", "berry-esseen", "rdp")
"""Methods that take the record-level step only (at q = 1 a group is the Gaussian at K times the
sensitivity, which edgeworth and rdp account; berry-esseen reads the record-level noise)."""


def _closed_form_or_pld(run: Run, delta: float, accuracy: float, method: str) -> list[Figures]:
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
        return accountant.epsilon(np.asarray([delta]))
    except ComputationError as error:
        if unavailable(run, "rdp") or (error.hint and "--method rdp" in error.hint):
            raise
        hint = f"{error.hint}; or use --method rdp, rigorous at any delta" if error.hint else None
        raise ComputationError(f"numerical accountant: {error.message}", hint) from None


def _clt(run: Run, delta: float) -> list[Figures]:
    """The CLT mu converted to epsilon at delta as if exactly GDP (GDP paper Cor. 1): an approximation."""
    from gdpcli.core import gdp

    return [Figures(np.asarray([gdp.epsilon(delta, clt_mu(run))]), APPROXIMATE, "clt", "epsilon")]


def _edgeworth(run: Run, delta: float) -> list[Figures]:
    """The Edgeworth accountant of the run's T steps ([WGZ+22]; accountants.EdgeworthAccountant, the same
    accountant as `compose --method edgeworth`): an approximation, both directions for Poisson sampling."""
    from gdpcli.accounting.accountants import EdgeworthAccountant

    return EdgeworthAccountant([run.spec()]).epsilon(np.asarray([delta]))


def _berry_esseen(run: Run, delta: float) -> list[Figures]:
    """The band of GDP paper Cor. 5 (Lemma 4 functionals of C_q(G_mu)), +inf when vacuous at this delta.

    An upper bound when its functionals are rigorous (q = 1: closed forms); the Lemma 4 functionals of a
    subsampled step come from quadrature without a proven error bound, so there it is an approximation.
    """
    from gdpcli.core import clt

    theorem5 = berry_esseen_band(run)
    value = clt.band_epsilon(delta, theorem5.mu, theorem5.gamma)
    side = PESSIMISTIC if theorem5.rigorous else APPROXIMATE
    return [Figures(np.asarray([value]), side, "berry-esseen", "epsilon")]


def berry_esseen_band(run: Run) -> object:
    """mu and gamma of the Berry-Esseen band of the run (GDP paper Cor. 5, Lemma 4)."""
    from gdpcli.core import clt

    return clt.sgd_berry_esseen(run.sampling_rate, run.steps, run.effective_noise)


def _rdp(run: Run, delta: float, conversion: str) -> list[Figures]:
    """Moments accountant: T times the RDP of the Poisson-subsampled Gaussian (Mironov, Talwar, Zhang 2019)
    converted at delta by the named conversion(s): rigorous upper bounds (gdpcli.accounting.RenyiAccountant,
    the same accountant as `compose --method rdp`)."""
    from gdpcli.accounting import RenyiAccountant
    from gdpcli.vocabulary import CONVERSIONS as NAMES

    names = NAMES if conversion == "all" else (conversion,)
    return RenyiAccountant([run.spec()], names).epsilon(np.asarray([delta]))


def _check_method(run: Run, method: str, conversion: str) -> None:
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}", "allowed: " + ", ".join(METHODS))
    if conversion not in CONVERSIONS:
        raise InputError(f"unknown conversion {conversion!r}", "allowed: " + ", ".join(CONVERSIONS))
    reason = unavailable(run, method)
    if reason is not None:
        raise ComputationError(f"--method {method} is not available for {run.sampling} sampling", reason)


def figures(
    run: Run, delta: float, method: str, *, accuracy: float = DEFAULT_ACCURACY, conversion: str = "optimal"
) -> list[Figures]:
    """epsilon at delta of the run by method (METHODS), each labelled.

    `all` gives every method of EVERY available for the run (see `unavailable`) in that order.
    """
    check_run(run)
    if not 0 < delta < 1:
        raise InputError(f"delta must be in (0, 1), got {delta!r}")
    _check_method(run, method, conversion)
    if run.scheme is not None:
        return run.scheme.figures(run, delta, accuracy)
    compute: dict[str, Callable[[], list[Figures]]] = {
        "auto": lambda: _closed_form_or_pld(run, delta, accuracy, "auto"),
        "exact": lambda: _closed_form_or_pld(run, delta, accuracy, "exact"),
        "pld": lambda: _closed_form_or_pld(run, delta, accuracy, "pld"),
        "clt": lambda: _clt(run, delta),
        "edgeworth": lambda: _edgeworth(run, delta),
        "berry-esseen": lambda: _berry_esseen(run, delta),
        "rdp": lambda: _rdp(run, delta, conversion),
    }
    if method != "all":
        return compute[method]()
    return [figure for name in EVERY if unavailable(run, name) is None for figure in compute[name]()]


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
        raise ComputationError(f"--method {method.name} gives no upper bound on epsilon for this run")
    return smallest(found, lambda guarantee: _budget_rests_on(method.name, guarantee))


def _budget_figures(run: Run, delta: float, method: Method) -> list[Figures]:
    """The figures a budget is decided on: the method's, but of a batch scheme only its upper bound (its
    lower bound and comparisons cannot certify anything and cost a PLD each)."""
    if run.scheme is not None:
        check_run(run)
        return [run.scheme.budget_figure(run, delta, method.accuracy)]
    return figures(run, delta, method.name, accuracy=method.accuracy, conversion=method.conversion)


def _budget_rests_on(method: str, guarantee: Guarantee) -> bool:
    """Whether a budget may rest on a figure of this label: exact or upper_bound; for clt and edgeworth
    their approximation (reported by calibrate --method clt, never passing a budget check)."""
    if method in _APPROXIMATE_METHODS:
        return guarantee is Guarantee.APPROXIMATION
    return guarantee.certifies_at_most


_APPROXIMATE_METHODS = ("clt", "edgeworth")
"""Methods whose only figure is an approximation: their step budgets are reported, labelled as such."""


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
        raise InputError(f"--target-epsilon: must be a positive finite number, got {target_epsilon!r}")
    _check_method(run, method.name, method.conversion)
    cache: dict[int, list[Figures]] = {}

    def found(steps: int) -> list[Figures]:
        if steps not in cache:
            cache[steps] = _budget_figures(run.with_steps(steps), delta, method)
        return cache[steps]

    def value(steps: int, kind: Callable[[Guarantee], bool]) -> float:
        return float(np.atleast_1d(smallest(found(steps), kind).values)[0])

    mu_target = gdp_mu(target_epsilon, delta)

    def search(kind: Callable[[Guarantee], bool], guess: int) -> int:
        """Two secant steps in the GDP scale (mu ~ sqrt(T)), then a fine bracket and bisection."""
        for _ in range(2):
            epsilon = value(guess, kind)
            if not 0 < epsilon < math.inf:
                break
            guess = _rescaled(guess, mu_target, gdp_mu(epsilon, delta))
        return largest_integer_where(
            lambda t: value(t, kind) <= target_epsilon, guess=guess, step=_FINE_STEP, limit=MAX_STEPS
        )

    def allowed(guarantee: Guarantee) -> bool:
        return _budget_rests_on(method.name, guarantee)

    def lower(guarantee: Guarantee) -> bool:
        return guarantee is Guarantee.LOWER_BOUND

    try:
        steps = search(allowed, _steps_guess(run, delta, target_epsilon))
    except SearchLimitReached:
        raise InputError(
            f"--target-epsilon {target_epsilon:g} allows more than {MAX_STEPS:.0e} steps, the most gdpcli "
            "searches",
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
    if method.name not in ("auto", "pld") or run.scheme is not None or steps >= MAX_STEPS:
        # PLD lower bounds locate the boundary (a batch scheme's lower bound is of another pair: its gap
        # to the upper bound is no refinement away)
        return budget
    next_lower = value(steps + 1, lower)
    exceeds_from = steps + 1 if next_lower > target_epsilon else search(lower, steps + 1) + 1
    return dataclasses.replace(budget, next_lower=next_lower, exceeds_from=max(exceeds_from, steps + 1))
