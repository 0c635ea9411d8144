"""`gdpcli noisy-gd`: the privacy of the last iterate of noisy GD on a strongly convex loss
(accounting: gdpcli.accounting.last_iterate; numerics: gdpcli.core.last_iterate)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from gdpcli.cli import options

if TYPE_CHECKING:
    from gdpcli.accounting.last_iterate import NoisyGD

EPILOG = """\b
Examples:
  # Bok, Su, Altschuler 2024, Table 1: regularized logistic regression on
  # MNIST, 40 cyclic batches of 1500, step size 0.05, L2 regularisation
  # 0.002, gradients clipped at 5, noise 0.01
  gdpcli noisy-gd --dataset-size 60000 --batch-size 1500 --epochs 50 \\
      --step-size 0.05 --strong-convexity 0.002 --smoothness 32.502 \\
      --lipschitz 5 --sigma 0.01 --delta 1e-5
  # the same noise as std / clipping norm (Opacus), in place of
  # --lipschitz 5 --sigma 0.01
  gdpcli noisy-gd --dataset-size 60000 --batch-size 1500 --epochs 50 \\
      --step-size 0.05 --strong-convexity 0.002 --smoothness 32.502 \\
      --noise-multiplier 3 --delta 1e-5
  # full batch
  gdpcli noisy-gd --batching full --dataset-size 1000 --epochs 200 \\
      --step-size 0.1 --strong-convexity 0.5 --smoothness 1 --lipschitz 1 \\
      --sigma 0.02 --delta 1e-5
  # CI check: exit 3 if the last iterate's epsilon exceeds 5
  gdpcli noisy-gd --dataset-size 60000 --batch-size 1500 --epochs 50 \\
      --step-size 0.05 --strong-convexity 0.002 --smoothness 32.502 \\
      --lipschitz 5 --sigma 0.01 --delta 1e-5 --max-epsilon 5
"""

_HELP = {
    "--batching": "cyclic (N / B disjoint batches of B, visited in a fixed order every epoch) | full (every "
    "step on all N examples).",
    "--batch-size": "Cyclic batches: B examples each; B must divide N.",
    "--epochs": "Epochs E (whole passes over the data; T = E N / B steps).",
    "--step-size": "Step size eta; the bound needs eta < 2 / M.",
    "--smoothness": "M: every example's loss is M-smooth (gradient M-Lipschitz).",
    "--strong-convexity": "m > 0: every example's loss is m-strongly convex (e.g. an L2 penalty m/2 |w|^2).",
    "--lipschitz": "L: every example's gradient norm is at most L (the clipping norm); needed with --sigma.",
    "--sigma": "Noise std added to the mean batch gradient, theta <- theta - eta (grad + N(0, sigma^2 I)) "
    "(the paper's sigma); or give --noise-multiplier.",
    "--conversion": "RDP -> (eps, delta) conversion of the RDP row: classic | improved | lemma1 | lemma2 | "
    "optimal | all (each a rigorous upper bound; optimal is Asoodeh et al. Thm 3).",
}
BatchingOption = Annotated[
    options.choices("NoisyBatching", ("cyclic", "full")), typer.Option("--batching", help=_HELP["--batching"])
]
BatchSizeOption = Annotated[int | None, typer.Option("--batch-size", help=_HELP["--batch-size"])]
EpochsOption = Annotated[float, typer.Option("--epochs", help=_HELP["--epochs"])]
StepSizeOption = Annotated[float, typer.Option("--step-size", help=_HELP["--step-size"])]
SmoothnessOption = Annotated[float, typer.Option("--smoothness", help=_HELP["--smoothness"])]
StrongConvexityOption = Annotated[float, typer.Option("--strong-convexity", help=_HELP["--strong-convexity"])]
LipschitzOption = Annotated[float | None, typer.Option("--lipschitz", help=_HELP["--lipschitz"])]
SigmaOption = Annotated[float | None, typer.Option("--sigma", help=_HELP["--sigma"])]
ConversionOption = Annotated[options.Conversion, typer.Option("--conversion", help=_HELP["--conversion"])]


def command(
    *,
    dataset_size: options.DatasetSizeOption,
    batch_size: BatchSizeOption = None,
    batching: BatchingOption = "cyclic",  # type: ignore[assignment]
    epochs: EpochsOption,
    step_size: StepSizeOption,
    smoothness: SmoothnessOption,
    strong_convexity: StrongConvexityOption,
    lipschitz: LipschitzOption = None,
    sigma: SigmaOption = None,
    noise_multiplier: options.NoiseMultiplierOption = None,
    delta: options.DeltaOption,
    conversion: ConversionOption = "optimal",  # type: ignore[assignment]
    max_epsilon: options.MaxEpsilonOption = None,
    fmt: options.FormatOption = None,
) -> None:
    """Last-iterate privacy of noisy GD on a strongly convex loss (shifted interpolation, Bok-Su-Altschuler
    2024) beside the composition of all iterates and the RDP bound."""
    import numpy as np

    from gdpcli.accounting import Answer, check_budget, last_iterate
    from gdpcli.cli.output import Result, emit
    from gdpcli.cli.queries import figure_rows

    assert dataset_size is not None and delta is not None  # required options (no default)
    options.positive(max_epsilon, "--max-epsilon")
    deltas = options.deltas(delta)
    gd = last_iterate.run(
        dataset_size=dataset_size,
        batch_size=batch_size,
        batching=str(batching),
        epochs=epochs,
        step_size=step_size,
        smoothness=smoothness,
        strong_convexity=strong_convexity,
        lipschitz=lipschitz,
        sigma=sigma,
        noise_multiplier=noise_multiplier,
    )
    found, notes = last_iterate.figures(gd, deltas, options.conversions(conversion))
    rows = [{**_context(gd), **row} for row in figure_rows("delta", deltas, "epsilon", found)]
    inputs = options.echo_inputs(**_echo(gd), delta=deltas, conversion=conversion, max_epsilon=max_epsilon)
    emit(Result("noisy-gd", inputs, rows, _title(gd), notes, ("mu", "epsilon")), fmt)
    queries = np.asarray(deltas, dtype=float)
    check_budget([Answer("delta", queries, figure) for figure in found], max_epsilon=max_epsilon)


def _context(gd: NoisyGD) -> dict[str, Any]:
    """The columns that describe the run, first in every row."""
    return {
        "batching": gd.batching,
        "neighbouring": "replace-one",
        "dataset_size": gd.dataset_size,
        "batch_size": gd.batch_size,
        "epochs": gd.epochs,
        "steps": gd.steps,
        "contraction": gd.loss.contraction,
        "step_mu": gd.step_mu,
    }


def _echo(gd: NoisyGD) -> dict[str, Any]:
    """The run's inputs for the JSON inputs block."""
    import dataclasses

    return {**dataclasses.asdict(gd), "batching": gd.batching}


def _title(gd: NoisyGD) -> str:
    return (
        f"gdpcli noisy-gd: {gd.batching} batches ({gd.batches} an epoch), {gd.epochs} epochs, contraction "
        f"c = {gd.loss.contraction:.6g}, mu per step {gd.step_mu:.6g} (replace-one); last iterate vs all "
        "iterates"
    )
