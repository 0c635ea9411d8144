"""`gdpcli audit`: what an empirical membership-inference attack proves, beside the claim."""

from __future__ import annotations

from typing import Annotated

import typer

from gdpcli.cli import options
from gdpcli.cli.risk import SpecsArgument
from gdpcli.errors import BudgetExceeded, InputError

EPILOG = """\b
Examples:
  # lower bounds on epsilon and mu at 95 % confidence
  gdpcli audit --tpr-hits 620 --fpr-hits 40 --trials 1000 --delta 1e-5
  # and the gap to what the accountant guarantees; exit 3 if the attack
  # proves more than was claimed
  gdpcli audit --tpr-hits 620 --fpr-hits 40 --trials 1000 --delta 1e-5 \\
      gaussian:sigma=1x4

SPEC is one shell word KIND:key=value,...: `gdpcli specs` lists every kind.
"""

HitsOption = Annotated[int, typer.Option(help="Members the attack flagged (true positives), of --trials.")]


@options.grouped(run_options=options.run_options, output=options.output_options)
def command(
    specs: SpecsArgument = None,
    *,
    tpr_hits: Annotated[int, typer.Option("--tpr-hits", help="Members the attack flagged, of --trials.")],
    fpr_hits: Annotated[int, typer.Option("--fpr-hits", help="Non-members the attack flagged, of --trials.")],
    trials: Annotated[int, typer.Option("--trials", help="Members tried, and as many non-members.")],
    confidence: Annotated[
        float, typer.Option("--confidence", help="Probability that the lower bounds hold (jointly).")
    ] = 0.95,
    delta: Annotated[float, typer.Option("--delta", help="The delta at which epsilon is bounded.")] = 1e-5,
    run_options: options.RunOptions,
    noise_multiplier: options.NoiseMultiplierOption = None,
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    output: options.Output,
) -> None:
    """Rigorous lower bounds on epsilon and mu from an attack's hits; exit 3 if they exceed the claim."""
    from gdpcli.accounting import audit
    from gdpcli.cli.output import Result, emit
    from gdpcli.cli.risk import subject_of

    options.positive(accuracy, "--accuracy")
    if not 0.0 < delta < 1.0:
        raise InputError(f"--delta: {delta!r} is not in (0, 1)")
    if output.plot:
        raise InputError("--plot is not available for audit", "drop --plot")
    proven = audit.lower_bounds(tpr_hits, fpr_hits, trials, confidence, delta)
    rows = [
        {"measure": measure, "value": float(f.values[0]), "guarantee": f.guarantee, "method": f.method}
        | (f.details[0] if f.details else {})
        for measure, f in zip(("epsilon", "mu"), proven, strict=True)
    ]
    rows[0]["delta"] = delta
    notes = [f"the lower bounds hold with probability >= {confidence:g} over the audit's trials"]
    claimed = None
    if specs or noise_multiplier is not None:
        subject, _ = subject_of(specs or [], run_options, noise_multiplier)
        claimed = audit.claimed_epsilon(subject, delta, accuracy)
        value = float(claimed.values[0])
        rows.append(
            {"measure": "epsilon", "value": value, "guarantee": claimed.guarantee}
            | {"method": claimed.method, "delta": delta, "gap": value - rows[0]["value"]}
        )
    inputs = options.echo_inputs(specs=specs, tpr_hits=tpr_hits, fpr_hits=fpr_hits, trials=trials)
    inputs |= {"confidence": confidence, "delta": delta}
    emit(Result("audit", inputs, rows, "gdpcli audit", notes, ("value",)), output.fmt)
    if claimed is not None and rows[0]["value"] > float(claimed.values[0]):
        raise BudgetExceeded(
            f"the audit proves epsilon >= {rows[0]['value']:.4g} at delta {delta:g}, above the accountant's "
            f"upper bound {float(claimed.values[0]):.4g}: the pipeline leaks more than it was accounted for"
        )
