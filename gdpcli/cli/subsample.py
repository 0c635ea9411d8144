"""`gdpcli subsample SPEC --rate p`: privacy amplification by subsampling (GDP paper Sec. 4).

One step (times=1) is the sampling operator C_p(f) = min(f_p, f_p^-1)** (Def. 6): fixed-size sampling with
replace-one neighbours gives it by Thm 9, and Poisson sampling with add/remove neighbours, whose two
directions f_p and f_p^-1 are symmetrized, gives the same function. Several steps (SPECxN) differ between
the schemes and are composed by the rigorous PLD accountant. --method clt gives the subsampling CLT of
Thm 11 instead (an approximation, for any mechanism with f(0) = 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from gdpcli import vocabulary
from gdpcli.cli import options
from gdpcli.errors import InputError

if TYPE_CHECKING:
    from gdpcli.accounting import Accountant

EPILOG = """\b
Examples:
  # the exact C_p next to Cor. 3 as printed and the classical Lemma 2 bound
  gdpcli subsample dp:eps=3,delta=0.1 --rate 0.2 --alpha 0.1
  # the trade-off curve C_p(G_mu) of eq. (13)
  gdpcli subsample gdp:mu=1.8 --rate 0.35 --alpha 0:1:11
  # one subsampled Laplace step: epsilon at delta and delta at epsilon
  gdpcli subsample laplace:eps=1 --rate 0.1 --delta 1e-6 --epsilon 0.1
  # CI budget check: exit 3 if the rigorous epsilon exceeds 1
  gdpcli subsample gdp:mu=1x100 --rate 0.01 --delta 1e-5 --max-epsilon 1
  # also draw C_p(f), the mechanism without subsampling and the profile
  gdpcli subsample gdp:mu=2 --rate 0.1 --epsilon 0:4:41 --plot cp.png
  # 10000 Poisson-subsampled steps: rigorous PLD bounds beside the subsampling
  # CLT and the functionals it rests on
  gdpcli subsample laplace:b=1x10000 --rate 0.01 --delta 1e-5 --method all -v

SPEC is one shell word KIND:key=value,...: `gdpcli specs` lists every kind.
"""

RateOption = Annotated[
    float,
    typer.Option("--rate", help="Sampling rate p in (0, 1]: the chance that a record is in the sample."),
]
SubsampleMethod = options.choices("SubsampleMethod", ("auto", "clt", "all"))
MethodOption = Annotated[
    SubsampleMethod,
    typer.Option(
        "--method",
        help="auto (rigorous: the exact C_p for one step, PLD bounds for several) | clt (the subsampling "
        "CLT, GDP paper Thm 11 for fixed-size batches and its Poisson counterpart: an approximation) | all.",
    ),
]
SamplingOption = Annotated[
    options.Sampling,
    typer.Option(
        "--sampling",
        help=vocabulary.SAMPLING_HELP,
    ),
]


def _check_finite(rows: list[dict[str, Any]]) -> None:
    """ComputationError instead of a NaN in the output (extreme inputs can overflow)."""
    import math

    from gdpcli.errors import ComputationError

    for row in rows:
        if any(isinstance(value, float) and math.isnan(value) for value in row.values()):
            raise ComputationError(
                "the computation overflowed", "the inputs are too extreme; try a smaller eps"
            )


@options.grouped(queries=options.query_options, budget=options.budget_options, output=options.output_options)
def command(
    spec: Annotated[
        str,
        typer.Argument(help="Mechanism spec without p=/sampling=, e.g. gdp:mu=1 or gaussian:sigma=1.1x100."),
    ],
    *,
    rate: RateOption,
    sampling: SamplingOption = "poisson",  # type: ignore[assignment]
    queries: options.Queries,
    method: MethodOption = "auto",  # type: ignore[assignment]
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    verbose: options.VerboseOption = False,
    budget: options.BudgetChecks,
    output: options.Output,
) -> None:
    """Amplification by subsampling: the privacy of a mechanism run on a random sample of the data.

    For one step both sampling schemes give the same C_p(f); they differ once composed (SPECxN).
    """
    import numpy as np

    from gdpcli.accounting import check_budget, describe
    from gdpcli.accounting.subsampling import subsampling_accountants
    from gdpcli.cli import plot as plotting
    from gdpcli.cli.output import Result, emit
    from gdpcli.cli.queries import answer, notes_of
    from gdpcli.events import Sampling
    from gdpcli.events.spec import parse_spec

    options.positive(accuracy, "--accuracy")
    if not 0.0 < rate <= 1.0:
        raise InputError(f"--rate: {rate!r} is out of range", "allowed: (0, 1]")
    parsed = parse_spec(spec)
    if parsed.sampling_rate is not None:
        raise InputError(f"spec {spec!r} already has p=", "give the sampling rate with --rate only")
    budget.require(queries)
    if not queries.asked:
        raise InputError("nothing to compute", "give --delta, --epsilon or --alpha")
    neighbouring = Sampling(sampling).neighbouring
    context = {
        "sampling": sampling,
        "neighbouring": str(neighbouring),
        "sampling_rate": rate,
        "steps": parsed.times,
    }

    def columns(accountant: Accountant) -> dict[str, Any]:
        return {**context, **describe(accountant)}

    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # NaN is refused below
        accountants, notes = subsampling_accountants(parsed, rate, sampling, accuracy, method, verbose)
        rows, answers = answer(accountants, queries, context=columns)
    notes += notes_of(answers)
    _check_finite(rows)
    title = (
        f"gdpcli subsample {spec} at rate {rate:g} ({sampling} sampling, {Sampling(sampling).neighbouring})"
    )
    if output.plot:
        references = plotting.subsampling_references(parsed, rate, sampling)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            plotting.plot_accountants(output.plot, title, accountants, references, queries.epsilons)
    inputs = options.echo_inputs(
        spec=spec,
        rate=rate,
        sampling=sampling,
        **queries.echo(),
        method=method if method != "auto" else None,
        accuracy=accuracy if parsed.times > 1 else None,
        max_epsilon=budget.max_epsilon,
        max_delta=budget.max_delta,
    )
    emit(Result("subsample", inputs, rows, title, notes), output.fmt)
    check_budget(answers, max_epsilon=budget.max_epsilon, max_delta=budget.max_delta)
