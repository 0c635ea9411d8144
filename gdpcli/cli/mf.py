"""`gdpcli mf`: the privacy of matrix-factorization mechanisms of private training, DP-FTRL's tree
aggregation and banded strategies with or without cyclic Poisson sampling (accounting:
gdpcli.accounting.matrix_mechanism)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gdpcli.cli import options
from gdpcli.errors import InputError

if TYPE_CHECKING:
    from gdpcli.accounting import Answer
    from gdpcli.accounting.matrix_mechanism import Mechanism

EPILOG = """\b
Examples (MNIST-sized: 60000 examples, batches of 256, 60 epochs):
  # banded strategy, 4 bands, column norms 1, cyclic Poisson batches
  # (the DP-SGD figures of the run's 3516 steps per example)
  gdpcli mf --strategy banded --bands 4 --dataset-size 60000 \\
      --batch-size 256 --noise-multiplier 1.1 --epochs 60 --delta 1e-5
  # the same strategy without sampling: b-min-sep participation, exact GDP
  gdpcli mf --strategy banded --bands 4 --no-amplification \\
      --noise-multiplier 20 --epochs 60 --delta 1e-5
  # a strategy matrix from a file (CSV rows or .npy): its column norms
  gdpcli mf --strategy banded --bands 4 \\
      --strategy-file examples/banded_strategy.csv \\
      --sampling-rate 0.5 --noise-multiplier 2 --delta 1e-5
  # DP-FTRL: tree aggregation restarted every epoch, exact GDP
  gdpcli mf --strategy tree --dataset-size 60000 --batch-size 256 \\
      --noise-multiplier 10 --epochs 5 --delta 1e-5
"""

_HELP = {
    "--strategy": "tree (DP-FTRL: tree aggregation restarted every epoch of ceil(N / B) steps, each example "
    "once an epoch; a Gaussian mechanism of sensitivity sqrt(sum over the epochs of ceil(log2(n + 1))), "
    "Kairouz et al. 2021, arXiv:2103.00039, App. D: exact) | banded (a lower-triangular strategy with "
    "--bands nonzero bands, Choquette-Choo et al. 2023, arXiv:2306.08153).",
    "--bands": "b of --strategy banded: the strategy's nonzero bands, and the parts of the data (step t "
    "samples part t mod b; each example is in at most ceil(T / b) steps).",
    "--sensitivity": "The banded strategy's largest column norm S (in units of C; default 1, "
    "jax_privacy's column-normalized strategies), every column taken to have norm S; or give "
    "--strategy-file.",
    "--strategy-file": "The banded strategy as a T x T matrix, CSV rows of numbers or .npy (- reads stdin): "
    "lower triangular, at most --bands nonzero bands; the sensitivities come from its column norms.",
    "--no-amplification": "No sampling: every example of the active part is in its step (b-min-sep "
    "participation, an epoch is b steps): a Gaussian mechanism of sensitivity sqrt(max over patterns of "
    "sum ||c_i||^2) (the paper's Sec. 3, Algorithm 3), exact. By default the run is amplified by cyclic "
    "Poisson sampling: ceil(T / b) Poisson-subsampled Gaussian steps at noise sigma / S (the paper's Thm "
    "4, jax_privacy's amplified_bandmf_event), rigorous PLD upper and lower bounds.",
    "--sampling-rate": "Cyclic Poisson: the rate p within the active part (jax_privacy's sampling_prob); "
    "tree: B / N, an epoch of ceil(1 / q) steps.",
    "--batch-size": "The (expected) batch size B: p = b B / N under cyclic Poisson; ceil(N / B) steps an "
    "epoch for the tree.",
    "--epochs": "Epochs E: T = ceil(E N / B) steps under cyclic Poisson, ceil(E n) for the tree (n = "
    "ceil(N / B) steps an epoch), ceil(E b) without amplification.",
    "--noise-multiplier": "Noise standard deviation / clipping norm C, per entry of the strategy's output "
    "(per tree node).",
}
StrategyOption = Annotated[
    options.choices("Strategy", ("tree", "banded")), typer.Option("--strategy", help=_HELP["--strategy"])
]
BandsOption = Annotated[int | None, typer.Option("--bands", help=_HELP["--bands"])]
SensitivityOption = Annotated[float | None, typer.Option("--sensitivity", help=_HELP["--sensitivity"])]
StrategyFileOption = Annotated[
    str | None, typer.Option("--strategy-file", metavar="FILE", help=_HELP["--strategy-file"])
]
NoAmplificationOption = Annotated[bool, typer.Option("--no-amplification", help=_HELP["--no-amplification"])]
SamplingRateOption = Annotated[float | None, typer.Option("--sampling-rate", help=_HELP["--sampling-rate"])]
BatchSizeOption = Annotated[int | None, typer.Option("--batch-size", help=_HELP["--batch-size"])]
EpochsOption = Annotated[float | None, typer.Option("--epochs", help=_HELP["--epochs"])]
NoiseOption = Annotated[float | None, typer.Option("--noise-multiplier", help=_HELP["--noise-multiplier"])]
METHOD_HELP = (
    "auto (exact GDP where the run is a Gaussian mechanism, else rigorous PLD upper and lower bounds) | "
    "exact | pld | clt | edgeworth | berry-esseen | rdp | all: as in gdpcli sgd, of the run's Gaussian "
    "or of its ceil(T / b) Poisson-subsampled steps."
)


@options.grouped(output=options.output_options)
def command(
    *,
    strategy: StrategyOption,
    bands: BandsOption = None,
    sensitivity: SensitivityOption = None,
    strategy_file: StrategyFileOption = None,
    no_amplification: NoAmplificationOption = False,
    dataset_size: options.DatasetSizeOption = None,
    batch_size: BatchSizeOption = None,
    sampling_rate: SamplingRateOption = None,
    epochs: EpochsOption = None,
    steps: options.StepsOption = None,
    noise_multiplier: NoiseOption = None,
    delta: options.DeltaOption = None,
    method: Annotated[options.Method, typer.Option("--method", help=METHOD_HELP)] = "auto",
    conversion: options.ConversionOption = "optimal",
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    max_epsilon: options.MaxEpsilonOption = None,
    output: options.Output,
) -> None:
    """Privacy of matrix-factorization mechanisms (DP-FTRL's tree, banded strategies with cyclic Poisson
    batches or without sampling): epsilon at delta by several accountants."""
    from gdpcli.accounting import check_budget, dpsgd
    from gdpcli.accounting import matrix_mechanism as mf
    from gdpcli.accounting.run import RunLength
    from gdpcli.cli import queries
    from gdpcli.cli.output import Result, emit

    options.positive(accuracy, "--accuracy")
    options.positive(noise_multiplier, "--noise-multiplier")
    options.positive(max_epsilon, "--max-epsilon")
    options.positive(sensitivity, "--sensitivity")
    if noise_multiplier is None:
        raise InputError("--noise-multiplier is required", "the noise standard deviation / clipping norm")
    if delta is None:
        raise InputError("--delta is required", "epsilon is reported at that delta, e.g. --delta 1e-5")
    if max_epsilon is not None:
        dpsgd.check_budget_method(method)
    deltas = options.deltas(delta)
    length = RunLength(dataset_size, batch_size, sampling_rate, epochs, steps)
    if strategy == "tree":
        _only_banded(bands, sensitivity, strategy_file, no_amplification)
        mechanism = mf.tree(noise_multiplier, length)
    else:
        if bands is None:
            raise InputError("--strategy banded needs --bands", "the strategy's nonzero bands b")
        matrix = None if strategy_file is None else mf.read_strategy(strategy_file)
        mechanism = mf.banded(
            noise_multiplier,
            bands,
            length,
            sensitivity=sensitivity,
            strategy=matrix,
            amplified=not no_amplification,
        )
    entries = mf.plan(mechanism, method, accuracy=accuracy, conversion=conversion)
    notes = queries.skipped(entries)
    answers = queries.epsilon_answers(entries, deltas, notes)
    rows = [_row(mechanism, noise_multiplier, answer) for answer in answers]
    inputs = options.echo_inputs(
        strategy=str(strategy),
        bands=bands,
        sensitivity=sensitivity,
        strategy_file=strategy_file,
        no_amplification=no_amplification,
        **(dataclasses.asdict(length) | {"steps": mechanism.steps}),
        noise_multiplier=noise_multiplier,
        delta=deltas,
        **options.method_inputs(method, conversion, accuracy),
        max_epsilon=max_epsilon,
    )
    title = _title(mechanism, noise_multiplier)
    emit(Result("mf", inputs, rows, title, notes + _notes(mechanism), ("epsilon",)), output.fmt)
    check_budget(answers, max_epsilon=max_epsilon)


def _only_banded(
    bands: int | None, sensitivity: float | None, path: str | None, no_amplification: bool
) -> None:
    """InputError for an option of banded strategies given with --strategy tree."""
    given = {"--bands": bands, "--sensitivity": sensitivity, "--strategy-file": path}
    given["--no-amplification"] = no_amplification or None
    for option, value in given.items():
        if value is not None:
            raise InputError(f"{option} describes a banded strategy", "drop it with --strategy tree")


def _title(mechanism: Mechanism, noise_multiplier: float) -> str:
    """What the run is accounted as: the strategy, the neighbouring relation, the sensitivity's meaning."""
    gaussian = (
        f"({mechanism.relation}): a Gaussian mechanism of sensitivity {mechanism.sensitivity:.6g} C, sigma = "
        f"{noise_multiplier:g} C"
    )
    if mechanism.strategy == "tree":
        return (
            f"gdpcli mf: DP-FTRL tree aggregation restarted every epoch of {mechanism.per_epoch} steps "
            f"{gaussian} per node"
        )
    if not mechanism.amplified:
        return (
            f"gdpcli mf: {mechanism.bands}-banded strategy, {mechanism.bands}-min-sep participation without "
            f"sampling {gaussian}"
        )
    rate = _rate_or_mu(mechanism, noise_multiplier)["sampling_rate"]
    return (
        f"gdpcli mf: {mechanism.bands}-banded strategy, cyclic Poisson batches at p = {rate:.6g} "
        f"within each of {mechanism.bands} parts ({mechanism.relation}): {mechanism.participations} "
        f"Poisson-subsampled Gaussian steps per example, column norm {mechanism.sensitivity:.6g} C, sigma = "
        f"{noise_multiplier:g} C"
    )


def _notes(mechanism: Mechanism) -> list[str]:
    """What a given column norm assumes, and where the lower bounds of an amplified strategy come from
    when not from its own run."""
    if mechanism.column_norm is not None:
        return [
            f"every column of the strategy taken at norm {mechanism.column_norm:.6g} C (the figures hold for "
            "such a strategy; --strategy-file computes them from a strategy's own columns)"
        ]
    if mechanism.lower is None:
        return []
    if not mechanism.lower:
        return ["no lower bound: an example with the most steps meets columns of norm 0 only"]
    levels = ", ".join(f"{spec.times} at {spec.mechanism.sens:.6g} C" for spec in mechanism.lower)  # type: ignore[attr-defined]
    return [
        f"lower bounds: the steps of an example with {mechanism.participations} steps at column norms no "
        f"larger than its own ({levels}); the upper bound takes every column at the largest norm"
    ]


def _rate_or_mu(mechanism: Mechanism, noise_multiplier: float) -> dict[str, float]:
    """An amplified run's rate p; else the Gaussian mechanism's mu = sensitivity / sigma (exactly GDP)."""
    if isinstance(mechanism.subject, list):
        return {"mu": mechanism.sensitivity / noise_multiplier}
    return {"sampling_rate": mechanism.subject.sampling_rate}


def _row(mechanism: Mechanism, noise_multiplier: float, answer: Answer) -> dict[str, Any]:
    """One row: the mechanism, delta, epsilon, guarantee, method (and the RDP order used)."""
    figure = answer.figure
    shape = {"steps_per_epoch": mechanism.per_epoch} if mechanism.per_epoch else {"bands": mechanism.bands}
    return {
        "strategy": mechanism.strategy,
        "neighbouring": mechanism.relation,
        "amplified": mechanism.amplified,
        "noise_multiplier": noise_multiplier,
        "sensitivity": mechanism.sensitivity,
        **_rate_or_mu(mechanism, noise_multiplier),
        "steps": mechanism.steps,
        "epochs": mechanism.epochs,
        **shape,
        "steps_per_example": mechanism.participations,
        "delta": float(answer.queries[0]),
        "epsilon": float(figure.values[0]),
        "guarantee": figure.guarantee,
        "method": figure.method,
        **(figure.details[0] if figure.details else {}),
    }
