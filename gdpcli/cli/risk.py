"""`gdpcli risk SPEC ... | sgd options`: what a membership-inference attacker can achieve.

The math and the labels are gdpcli.accounting.risk's: TPR at given FPRs (1 - f(alpha)), the advantage
max(TPR - FPR) = delta(0), and the Bayes success rate of the best attack for a prior, each from the
accountants' rigorous bounds by default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from gdpcli.cli import options
from gdpcli.errors import InputError

if TYPE_CHECKING:
    from gdpcli.events import Repeated, Run

EPILOG = """\b
Examples:
  # TPR at FPR 0.1 %, 1 %, 10 %, the advantage, and the Bayes success at 1/2
  gdpcli risk gdp:mu=1
  # TPR at five FPRs from 1e-4 to 0.1, the Bayes success at priors 0.01, 0.5
  gdpcli risk gaussian:sigma=2x10 --fpr 1e-4:0.1:5 --prior 0.01,0.5
  # the MNIST DP-SGD run (rigorous PLD bounds)
  gdpcli risk --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60
  # also draw the ROC bound (log-log)
  gdpcli risk gaussian:sigma=1,p=0.01x1000 --plot roc.png

SPEC is one shell word KIND:key=value,...: `gdpcli specs` lists every kind.
"""

SpecsArgument = Annotated[
    list[str] | None,
    typer.Argument(help="Mechanism specs, e.g. gaussian:sigma=2x10 (or DP-SGD run options instead)."),
]
"""The mechanisms assessed (risk, audit): specs, or none when the run options describe a DP-SGD run."""
FprOption = Annotated[
    str,
    typer.Option(
        "--fpr",
        help="False-positive rate(s) alpha at which to bound the attack's TPR = 1 - f(alpha): A, A1,A2,... "
        "or START:STOP:NUM, each in (0, 1).",
    ),
]
PriorOption = Annotated[
    str,
    typer.Option(
        "--prior",
        help="Prior probability(ies) that the record is a member, for the best attack's Bayes success rate.",
    ),
]
MethodOption = Annotated[
    options.Method,
    typer.Option(
        "--method",
        help="auto (exact where a closed form exists, else pld) | exact | pld | rdp (RDP's trade-off lower "
        "bound: rigorous, looser) | clt | all.",
    ),
]


@options.grouped(run_options=options.run_options, output=options.output_options)
def command(
    specs: SpecsArgument = None,
    *,
    fpr: FprOption = "0.001,0.01,0.1",
    prior: PriorOption = "0.5",
    run_options: options.RunOptions,
    noise_multiplier: options.NoiseMultiplierOption = None,
    method: MethodOption = "auto",
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    group: options.GroupOption = None,
    output: options.Output,
) -> None:
    """Attack risk: the most any membership-inference attack achieves against these mechanisms or this run
    (with --group K: against a user's K records together)."""
    from gdpcli.accounting import risk
    from gdpcli.cli.output import Result, emit

    options.positive(accuracy, "--accuracy")
    fprs, priors = options.parse_values(fpr, "--fpr"), options.parse_values(prior, "--prior")
    risk.check_probabilities(fprs, "--fpr")
    risk.check_probabilities(priors, "--prior")
    subject, title = subject_of(specs or [], run_options, noise_multiplier)
    if group is not None:
        title = f"{title} (groups of {group})"
    accountants, skipped = risk.accountants_for(subject, method, accuracy, group)
    if output.plot:
        from gdpcli.cli import plot as plotting

        events = risk.events_of(subject, group) or []
        plotting.plot_roc(output.plot, title, accountants, plotting.gdp_reference(events))
    found = [
        figure
        for accountant in accountants
        for figure in (
            risk.true_positive_rates(accountant, fprs)
            + risk.advantages(accountant)
            + risk.bayes_success(accountant, priors)
        )
    ]
    rows = [
        {"measure": r.measure}
        | ({"fpr": r.at} if r.measure == "tpr" else {"prior": r.at} if r.measure == "bayes_success" else {})
        | {"value": r.value, "guarantee": r.guarantee, "method": r.method}
        for r in found
    ]
    inputs = options.echo_inputs(
        specs=specs, **run_options.echo(), noise_multiplier=noise_multiplier, fpr=fprs, prior=priors
    ) | options.method_inputs(method, "optimal", accuracy)
    notes = [f"skipped {note}" for note in skipped] + [
        "tpr: the most any attack's true-positive rate can be at that false-positive rate (1 - f(fpr)); "
        "advantage: max TPR - FPR; bayes_success: the best attack's chance of guessing membership right"
    ]
    notes += list(dict.fromkeys(r.note for r in found if r.note))
    emit(Result("risk", inputs, rows, title, notes, ("value",)), output.fmt)


def subject_of(
    specs: list[str], run_options: options.RunOptions, noise_multiplier: float | None
) -> tuple[list[Repeated] | Run, str]:
    """What is assessed: the specs' events, or the DP-SGD run the run options and --noise-multiplier
    describe (under any batch scheme), and a title."""
    from gdpcli.events.spec import parse_spec

    run_given = (
        noise_multiplier is not None or run_options.epochs is not None or run_options.steps is not None
    )
    if specs and run_given:
        raise InputError("give mechanism specs or a DP-SGD run, not both")
    if specs:
        return [parse_spec(text) for text in specs], "gdpcli risk " + " ".join(specs)
    if noise_multiplier is None:
        raise InputError("nothing to assess", "give mechanism specs, or a DP-SGD run with --noise-multiplier")
    options.positive(noise_multiplier, "--noise-multiplier")
    q, steps, _ = run_options.rate_and_steps()
    run = run_options.run(q, steps, noise_multiplier)
    title = (
        f"gdpcli risk: DP-SGD, q = {q:.6g}, sigma = {noise_multiplier:g}, T = {steps} ({run.neighbouring})"
    )
    return run, title
