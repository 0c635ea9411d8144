"""Shared option definitions and value parsers: the same flag means the same thing in every command.

Numbers are parsed here (not by Typer) so that every bad value gives the same one-line error and
exit code 2. Lists are `a,b,c`; ranges are `START:STOP:NUM` (inclusive, like numpy.linspace).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gdpcli import vocabulary
from gdpcli.defaults import DEFAULT_ACCURACY as DEFAULT_ACCURACY  # re-exported for option defaults
from gdpcli.errors import InputError

if TYPE_CHECKING:
    from gdpcli.accounting.run import RunLength
    from gdpcli.events import Run


class Choice(str, Enum):
    """The words an option takes, as a type: the CLI framework validates them (exit 2 naming the option)
    and completions and man pages read them as data. A member is its word (str, format, ==)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


def choices(name: str, words: Sequence[str]) -> type[Choice]:
    """A Choice type of these words."""
    return Choice(name, [(word, word) for word in words])  # type: ignore[return-value]


Format = choices("Format", vocabulary.FORMATS)
Sampling = choices("Sampling", vocabulary.SAMPLING)
Batching = choices("Batching", vocabulary.BATCHING)
Conversion = choices("Conversion", (*vocabulary.CONVERSIONS, "all"))
Method = choices("Method", vocabulary.METHODS)

FORMAT_HELP = "Output format: table | csv | json (default: table on a terminal, csv otherwise)."

# The options that several commands share, declared once: the same flag means the same thing in every
# command. Each flag's help, then each option's type (in the order of the names below), short form, metavar.
_HELP: dict[str, str] = {
    "--format": FORMAT_HELP,
    "--delta": "delta value(s) at which to report epsilon: D, D1,D2,... or START:STOP:NUM.",
    "--epsilon": "epsilon value(s) at which to report delta: E, E1,E2,... or START:STOP:NUM.",
    "--alpha": "Type I error(s) alpha at which to report the trade-off beta = f(alpha).",
    "--max-epsilon": "Budget check: exit 3 if the rigorous epsilon exceeds this.",
    "--max-delta": "Budget check: exit 3 if the rigorous delta exceeds this.",
    "--conversion": "RDP -> (eps, delta) conversion for --method rdp: classic | improved | lemma1 | lemma2 | "
    "optimal | all (each a rigorous upper bound; optimal is Asoodeh et al. Thm 3).",
    "--target-epsilon": "Budget: the largest number of repetitions whose rigorous epsilon stays <= this.",
    "--accuracy": "Numerical (PLD) accountant: how close its rigorous bounds must be. Epsilon: upper - lower "
    "<= accuracy x min(lower + 0.1, 0.025 x steps), i.e. relative for large epsilon, absolute accuracy/10 "
    "near 0, and at most accuracy/40 per composed step; delta: upper <= (1 + accuracy) lower + 1e-15; "
    "beta: upper - lower <= accuracy.",
    "--plot": "Also draw the result to FILE.png or FILE.svg (needs matplotlib: pip install 'gdpcli[plot]').",
    "--dataset-size": "Number of examples N.",
    "--batch-size": "Expected (Poisson) or fixed batch size B; q = B / N.",
    "--sampling-rate": "Sampling rate q directly, instead of --dataset-size/--batch-size.",
    "--epochs": "Epochs E; steps are counted as T = ceil(E N / B) (or ceil(E / q)).",
    "--steps": "Number of steps T (instead of --epochs).",
    "--noise-multiplier": "Noise standard deviation / clipping norm C (sigma), as in Opacus, TF Privacy, "
    "dp-accounting.",
    "--sensitivity": "One step's L2 sensitivity in units of C (default: the neighbouring relation's, 1 for "
    "add/remove, 2 for replace-one). The GDP paper's NoisySGD measures sigma in units of 2C: to "
    "reproduce it with --sampling fixed, give --sensitivity 1.",
    "--sampling": vocabulary.BATCHING_HELP,
    "--schedule": "A run in phases, composed exactly: a CSV (header: steps|epochs, batch_size|sampling_rate, "
    "noise_multiplier[, sampling, sensitivity]) or JSON file of phases, an Opacus accountant history "
    "(JSON [[noise_multiplier, sample_rate, steps], ...]) or dp_accounting events as JSON; - reads stdin.",
    "--participations": "With --sampling balls-in-bins: each example in K distinct batches, a uniformly "
    "random K of every round of t = ceil(K N / B) steps (K passes over the data; default 1: one batch an "
    "epoch). Rigorous upper bound: the round as K one-batch allocations of about t / K steps (Feldman and "
    "Shenfeld 2025); rigorous lower bound from the K-out-of-t pair itself.",
    "--accumulation-steps": "Gradient accumulation: A micro-batches of --batch-size B make one logical "
    "batch of A x B examples, q = A B / N, with noise drawn once per logical step (added to the sum of "
    "the A micro-batches' clipped gradients; --noise-multiplier is that noise). --steps and --epochs count "
    "logical (optimizer) steps; rows print steps and physical_steps = A x steps. Under Poisson sampling "
    "the logical batch is one Poisson sample at rate A B / N, split into the micro-batches.",
    "--max-batch-size": "The cap B_max of --sampling truncated-poisson: a batch of more examples is cut to a "
    "uniformly random B_max of them (needs --dataset-size).",
    "--bands": "The b parts of --sampling cyclic-poisson (b = 1 is Poisson): step t samples part t mod b "
    "only. With it --sampling-rate is the rate p within that part (jax_privacy's sampling_prob) and "
    "--batch-size the expected batch B, p = b B / N; each example is in at most ceil(T / b) steps.",
    "--group": "Group privacy: the guarantee for groups of K records (K records per user; default 1). "
    "Exact for mechanisms that add noise to a query of bounded sensitivity (K times the sensitivity) and "
    "for GDP (K mu, GDP paper Thm 3); rigorous PLD bounds for Poisson-subsampled Gaussian steps, whose K "
    "records are each sampled (the binomial mixture of N(j mu, 1), j ~ Bin(K, q), against N(0, 1)).",
    "--verbose": "Also print, as extra columns, what the figures rest on: for clt the CLT functionals kl, "
    "kappa2, kappa3 summed over the composition and the mu of GDP paper Thm 6 (and Thm 7 for (eps, delta)-DP "
    "lists); for berry-esseen the functionals behind mu and gamma; for the subsampling CLT nu = p sqrt(T) "
    "and the chi-square functional of Thm 11.",
}
_KIND: dict[str, Any] = {
    "--format": Format | None,
    "--delta": str | None,
    "--epsilon": str | None,
    "--alpha": str | None,
    "--max-epsilon": float | None,
    "--max-delta": float | None,
    "--conversion": Conversion,
    "--target-epsilon": float | None,
    "--accuracy": float,
    "--plot": Path | None,
    "--dataset-size": int | None,
    "--batch-size": int | None,
    "--sampling-rate": float | None,
    "--epochs": float | None,
    "--steps": int | None,
    "--noise-multiplier": float | None,
    "--sensitivity": float | None,
    "--sampling": Batching,
    "--max-batch-size": int | None,
    "--participations": int | None,
    "--accumulation-steps": int | None,
    "--bands": int | None,
    "--schedule": str | None,
    "--group": int | None,
    "--verbose": bool,
}
_SHORT = {"--format": ("-f",), "--verbose": ("-v",)}
_METAVAR = {
    "--format": "FORMAT",
    "--plot": "FILE",
    "--schedule": "FILE",
    "--sampling": "SCHEME",
    "--participations": "K",
    "--accumulation-steps": "A",
}
(
    FormatOption,
    DeltaOption,
    EpsilonOption,
    AlphaOption,
    MaxEpsilonOption,
    MaxDeltaOption,
    ConversionOption,
    TargetEpsilonOption,
    AccuracyOption,
    PlotOption,
    DatasetSizeOption,
    BatchSizeOption,
    SamplingRateOption,
    EpochsOption,
    StepsOption,
    NoiseMultiplierOption,
    SensitivityOption,
    BatchingOption,
    MaxBatchSizeOption,
    ParticipationsOption,
    AccumulationStepsOption,
    BandsOption,
    ScheduleOption,
    GroupOption,
    VerboseOption,
) = (
    Annotated[kind, typer.Option(flag, *_SHORT.get(flag, ()), metavar=_METAVAR.get(flag), help=_HELP[flag])]
    for flag, kind in _KIND.items()
)


def parse_float(text: str, option: str) -> float:
    """One number; InputError naming the option otherwise."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise InputError(f"{option}: {text!r} is not a number", "e.g. 1e-5 or 0.5") from None
    if math.isnan(value):
        raise InputError(f"{option}: NaN is not allowed")
    return value


def parse_values(text: str, option: str) -> list[float]:
    """A value, a comma list `a,b,c` or an inclusive range `START:STOP:NUM`."""
    text = text.strip()
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise InputError(f"{option}: range {text!r} must be START:STOP:NUM", "e.g. 0:10:11")
        start, stop = parse_float(parts[0], option), parse_float(parts[1], option)
        try:
            count = int(parts[2])
        except ValueError:
            raise InputError(f"{option}: NUM in {text!r} must be a whole number", "e.g. 0:10:11") from None
        if not 1 <= count <= 1_000_000:
            raise InputError(f"{option}: NUM in {text!r} must be between 1 and 1000000")
        if count == 1:
            return [start]
        step = (stop - start) / (count - 1)
        return [start + i * step if i < count - 1 else stop for i in range(count)]
    items = [item for item in text.split(",")]
    if any(not item.strip() for item in items):
        raise InputError(f"{option}: empty entry in {text!r}", "write a list as 0.5,1,2")
    return [parse_float(item, option) for item in items]


def check_range(
    values: list[float],
    option: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> list[float]:
    """Every value inside the interval, else InputError stating the allowed interval."""
    left, right = ("(" if low_open else "["), (")" if high_open else "]")
    for value in values:
        too_low = value <= low if low_open else value < low
        too_high = value >= high if high_open else value > high
        if too_low or too_high:
            raise InputError(
                f"{option}: {value!r} is out of range", f"allowed: {left}{low:g}, {high:g}{right}"
            )
    return values


def deltas(text: str, option: str = "--delta") -> list[float]:
    """delta values in (0, 1)."""
    return check_range(parse_values(text, option), option, low=0, high=1, low_open=True, high_open=True)


def epsilons(text: str, option: str = "--epsilon") -> list[float]:
    """epsilon values >= 0 (inf allowed only where meaningful: not here)."""
    return check_range(parse_values(text, option), option, low=0, high=1e300)


def alphas(text: str, option: str = "--alpha") -> list[float]:
    """Type I errors in [0, 1]."""
    return check_range(parse_values(text, option), option, low=0, high=1)


def positive(value: float | None, option: str) -> float | None:
    """A finite number > 0 (or None when the option was not given)."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise InputError(f"{option}: must be a positive finite number, got {value!r}")
    return value


def probability(value: float | None, option: str) -> float | None:
    """A number in (0, 1)."""
    if value is not None and not 0 < value < 1:
        raise InputError(f"{option}: must be in (0, 1), got {value!r}")
    return value


def echo_inputs(**inputs: Any) -> dict[str, Any]:
    """The inputs block of the JSON output, without the options the user left out."""
    return {key: value for key, value in inputs.items() if value is not None}


def method_inputs(method: str, conversion: str, accuracy: float) -> dict[str, Any]:
    """--method, --conversion (only where an RDP conversion is used) and --accuracy, for the inputs block."""
    used = method in ("rdp", "all")
    return {"method": method, "conversion": conversion if used else None, "accuracy": accuracy}


def conversions(value: str) -> tuple[str, ...]:
    """--conversion: one RDP conversion name, or all of them."""
    return vocabulary.CONVERSIONS if value == "all" else (str(value),)


# ---------------------------------------------------------------------------------------------------------
# Option groups: options that several commands share, declared once. A group is a function whose
# parameters are the options and whose value (parsed and checked) reaches the command as one argument.
# ---------------------------------------------------------------------------------------------------------


def grouped(**groups: Callable[..., Any]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command the options of these groups: the command takes each group as a keyword-only argument
    named after it; its options take that argument's place in the command's signature (and so in --help),
    and the group's value is what the command receives."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        members = {name: inspect.signature(group, eval_str=True).parameters for name, group in groups.items()}
        signature = inspect.signature(command, eval_str=True)
        parameters = [
            member.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for p in signature.parameters.values()
            for member in (members[p.name].values() if p.name in groups else (p,))
        ]

        @functools.wraps(command)
        def with_groups(**values: Any) -> None:
            for name, group in groups.items():
                values[name] = group(**{member: values.pop(member) for member in members[name]})
            command(**values)

        with_groups.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        with_groups.__annotations__ = {p.name: p.annotation for p in parameters}
        return with_groups

    return decorate


@dataclass(frozen=True)
class Queries:
    """--delta, --epsilon, --alpha parsed: where epsilon, delta and the trade-off beta are reported."""

    deltas: list[float] | None
    epsilons: list[float] | None
    alphas: list[float] | None

    @property
    def asked(self) -> bool:
        """Whether any value was given."""
        return bool(self.deltas or self.epsilons or self.alphas)

    def echo(self) -> dict[str, Any]:
        """The queries for the JSON inputs block."""
        return {"delta": self.deltas, "epsilon": self.epsilons, "alpha": self.alphas}


def query_options(
    delta: DeltaOption = None, epsilon: EpsilonOption = None, alpha: AlphaOption = None
) -> Queries:
    """The query group (convert, compose, subsample)."""
    return Queries(
        deltas(delta) if delta is not None else None,
        epsilons(epsilon) if epsilon is not None else None,
        alphas(alpha) if alpha is not None else None,
    )


@dataclass(frozen=True)
class BudgetChecks:
    """--max-epsilon and --max-delta: exit 3 when the rigorous figure exceeds them."""

    max_epsilon: float | None
    max_delta: float | None

    @property
    def given(self) -> bool:
        """Whether a check was asked for."""
        return self.max_epsilon is not None or self.max_delta is not None

    def require(self, queries: Queries) -> None:
        """--max-epsilon checks epsilon at --delta; --max-delta checks delta at --epsilon."""
        if self.max_epsilon is not None and not queries.deltas:
            raise InputError("--max-epsilon needs --delta", "the budget is checked on epsilon at that delta")
        if self.max_delta is not None and not queries.epsilons:
            raise InputError("--max-delta needs --epsilon", "the budget is checked on delta at that epsilon")


def budget_options(max_epsilon: MaxEpsilonOption = None, max_delta: MaxDeltaOption = None) -> BudgetChecks:
    """The budget-check group (compose, subsample)."""
    return BudgetChecks(positive(max_epsilon, "--max-epsilon"), probability(max_delta, "--max-delta"))


@dataclass(frozen=True)
class Output:
    """-f/--format and --plot, checked before anything is computed."""

    fmt: Format | None
    plot: Path | None


def output_options(fmt: FormatOption = None, plot: PlotOption = None) -> Output:
    """The output group (every accounting command); the --plot target is checked to be writable."""
    if plot:
        from gdpcli.cli.plot import check_target

        check_target(plot)
    return Output(fmt, plot)


@dataclass(frozen=True)
class RunOptions:
    """The options that describe a DP-SGD run's data, batches and steps (not its noise)."""

    dataset_size: int | None
    batch_size: int | None
    sampling_rate: float | None
    epochs: float | None
    steps: int | None
    sampling: Batching
    sensitivity: float | None
    max_batch_size: int | None
    schedule: str | None
    participations: int | None = None
    accumulation_steps: int | None = None
    bands: int | None = None

    @property
    def logical_batch_size(self) -> int | None:
        """A x B: the batch of one optimizer step (B itself without --accumulation-steps)."""
        if self.batch_size is None:
            return None
        return self.batch_size * (self.accumulation_steps or 1)

    @property
    def length(self) -> RunLength:
        """N, the logical batch A x B (see logical_batch_size), q, E and T, as the run takes them."""
        from gdpcli.accounting.run import RunLength

        batch = self.logical_batch_size
        return RunLength(self.dataset_size, batch, self.sampling_rate, self.epochs, self.steps)

    def sampling_rate_of(self) -> float:
        """q from --sampling-rate or the logical batch A x B / --dataset-size (p = b B / N with --bands b)."""
        from gdpcli.accounting import cyclic_poisson

        if self.bands is not None:
            return cyclic_poisson.rate(self.length, self.bands)
        return self.length.rate()

    def rate_and_steps(self) -> tuple[float, int, float]:
        """(q, T, epochs) of the run, T in logical steps (see accounting.run.schedule; cyclic_poisson.schedule
        with --bands)."""
        from gdpcli.accounting import cyclic_poisson, run

        if self.bands is not None:
            p, steps = cyclic_poisson.schedule(self.length, self.bands)
            return p, steps, self.run(p, steps, 1.0).epochs
        return run.schedule(self.length, self.sampling)

    def echo(self) -> dict[str, Any]:
        """The run options for the JSON inputs block."""
        return dict(vars(self))

    def phases(self) -> tuple[Run, ...]:
        """The phases of --schedule (see gdpcli.accounting.schedules)."""
        return self.noted_phases()[0]

    def noted_phases(self) -> tuple[tuple[Run, ...], list[str]]:
        """The phases of --schedule and the notes on how dp_accounting takes its events, if it holds any
        (schedules.read_noted)."""
        assert self.schedule is not None
        return read_schedule(self.schedule, self.dataset_size)

    def run(self, sampling_rate: float, steps: int, noise_multiplier: float) -> Run:
        """The run these options describe, at this rate, step count and noise."""
        from gdpcli.events import Run

        return Run(
            sampling_rate,
            steps,
            noise_multiplier,
            self.sampling,
            self.sensitivity,
            self.dataset_size,
            self.max_batch_size,
            participations=1 if self.participations is None else self.participations,
            bands=self.bands,
        )


def run_options(
    dataset_size: DatasetSizeOption = None,
    batch_size: BatchSizeOption = None,
    sampling_rate: SamplingRateOption = None,
    epochs: EpochsOption = None,
    steps: StepsOption = None,
    sampling: BatchingOption = "poisson",  # type: ignore[assignment]
    sensitivity: SensitivityOption = None,
    max_batch_size: MaxBatchSizeOption = None,
    participations: ParticipationsOption = None,
    accumulation_steps: AccumulationStepsOption = None,
    bands: BandsOption = None,
    schedule: ScheduleOption = None,
) -> RunOptions:
    """The run group (sgd, calibrate sgd)."""
    positive(sensitivity, "--sensitivity")
    given = {
        "--batch-size": batch_size,
        "--sampling-rate": sampling_rate,
        "--epochs": epochs,
        "--steps": steps,
    }
    given |= {"--sensitivity": sensitivity, "--max-batch-size": max_batch_size, "--bands": bands}
    given |= {"--participations": participations, "--accumulation-steps": accumulation_steps}
    clashing = [option for option, value in given.items() if value is not None]
    if schedule is not None and (clashing or sampling != "poisson"):
        raise InputError(
            f"--schedule gives the phases; {(clashing or ['--sampling'])[0]} cannot go with it",
            "put it in the schedule's columns",
        )
    if accumulation_steps is not None:
        _check_accumulation(accumulation_steps, dataset_size, batch_size, sampling_rate)
    return RunOptions(
        dataset_size,
        batch_size,
        sampling_rate,
        epochs,
        steps,
        sampling,
        sensitivity,
        max_batch_size,
        schedule,
        participations,
        accumulation_steps,
        bands,
    )


def _check_accumulation(
    accumulation_steps: int, dataset_size: int | None, batch_size: int | None, sampling_rate: float | None
) -> None:
    """InputError unless A >= 1 multiplies a --batch-size (the micro-batch) into a logical batch A x B of
    at most --dataset-size examples."""
    if accumulation_steps < 1:
        raise InputError(f"--accumulation-steps: must be a whole number >= 1, got {accumulation_steps}")
    if sampling_rate is not None or batch_size is None:
        raise InputError(
            "--accumulation-steps multiplies --batch-size, the micro-batch",
            "give --dataset-size and --batch-size; a --sampling-rate is already the logical batch's",
        )
    if dataset_size is not None and accumulation_steps * batch_size > dataset_size:
        raise InputError(
            f"the logical batch --accumulation-steps {accumulation_steps} x --batch-size {batch_size} = "
            f"{accumulation_steps * batch_size} exceeds --dataset-size {dataset_size}"
        )


def read_schedule(path: str, dataset_size: int | None) -> tuple[tuple[Run, ...], list[str]]:
    """--schedule FILE (- for stdin) read into phases, with the notes on its dp_accounting events
    (schedules.read_noted); InputError for an unreadable file or a bad schedule."""
    from gdpcli.accounting import schedules
    from gdpcli.textfiles import read_text

    hint = "give a CSV header row and one row per phase, or a JSON list"
    return schedules.read_noted(read_text(path, "--schedule", hint), dataset_size)
