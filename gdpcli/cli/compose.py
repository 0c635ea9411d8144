"""`gdpcli compose SPEC [SPEC ...]`: the privacy of running several mechanisms on the same data."""

from __future__ import annotations

from typing import Annotated

import typer

from gdpcli.cli import options
from gdpcli.errors import InputError

EPILOG = """\b
Examples:
  gdpcli compose gdp:mu=0.3 gdp:mu=0.4 --to mu                  exact: 0.5-GDP
  gdpcli compose dp:eps=0.31622776601683794x10 --delta 1e-3    exact binomial composition
  gdpcli compose gaussian:sigma=3 laplace:b=2 dp:eps=0.5,delta=1e-6 --delta 1e-5
                                                    rigorous upper and lower bounds (PLD)
  gdpcli compose gaussian:sigma=20x1000 --delta 1e-5 --method all   every method side by side
  gdpcli compose gaussian:sigma=5x100 --delta 1e-5 --max-epsilon 3  CI check: exit 3 if exceeded
  gdpcli compose gaussian:sigma=20 --delta 1e-5 --target-epsilon 6 --method all --conversion all
                                                    how many repetitions fit in epsilon 6, by method
  gdpcli compose laplace:b=2x10 --epsilon 0:8:41 --plot compose.svg   also draw the bounds
"""

MethodOption = Annotated[
    options.Method,
    typer.Option(
        "--method",
        help="auto (exact if a closed form exists, else pld) | exact | pld | clt | berry-esseen | rdp | all.",
    ),
]


def command(
    specs: Annotated[
        list[str], typer.Argument(help="Mechanism specs, e.g. gaussian:sigma=2x100 laplace:b=1.")
    ],
    delta: options.DeltaOption = None,
    epsilon: options.EpsilonOption = None,
    alpha: options.AlphaOption = None,
    to: options.ToOption = None,
    method: MethodOption = "auto",
    conversion: options.ConversionOption = "optimal",
    target_epsilon: options.TargetEpsilonOption = None,
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    max_epsilon: options.MaxEpsilonOption = None,
    max_delta: options.MaxDeltaOption = None,
    fmt: options.FormatOption = None,
    plot: options.PlotOption = None,
) -> None:
    """Compose mechanisms: exact where a closed form exists, rigorous bounds (PLD) otherwise."""
    from gdpcli import accounting
    from gdpcli.cli import output, queries
    from gdpcli.cli import plot as plotting
    from gdpcli.mechanisms import parse_spec

    options.check_output(fmt, plot)
    options.positive(accuracy, "--accuracy")
    parsed = [parse_spec(text) for text in specs]
    deltas = options.deltas(delta) if delta is not None else None
    epsilons = options.epsilons(epsilon) if epsilon is not None else None
    alphas = options.alphas(alpha) if alpha is not None else None
    options.require_budget_query(max_epsilon, deltas, max_delta, epsilons)
    conversions = options.conversions(conversion)
    options.positive(target_epsilon, "--target-epsilon")
    if target_epsilon is not None and (not deltas or len(deltas) != 1):
        raise InputError("--target-epsilon needs exactly one --delta", "the budget is epsilon at that delta")
    if not (deltas or epsilons or alphas or to):
        raise InputError("nothing to compute", "give --delta, --epsilon, --alpha or --to mu")
    if target_epsilon is not None and (max_epsilon is not None or max_delta is not None):
        raise InputError(
            "--max-epsilon/--max-delta check the composition as given, --target-epsilon searches a budget",
            "run them as two commands",
        )
    rows: list[dict] = []
    answers: list[accounting.Answer] = []
    notes: list[str] = []
    if plot or (target_epsilon is None and (deltas or epsilons or alphas)):
        accountants, skipped = accounting.select(parsed, method, accuracy=accuracy, conversions=conversions)
    if target_epsilon is not None:
        rows += accounting.step_budgets(
            parsed, method, deltas[0], target_epsilon, accuracy=accuracy, conversions=conversions
        )
    elif deltas or epsilons or alphas:
        notes += [f"skipped {note}" for note in skipped]
        rows, answers = queries.answer(
            accountants, deltas=deltas, epsilons=epsilons, alphas=alphas, context=accounting.describe
        )
        notes += queries.notes_of(answers)
    if to == "mu":
        rows += queries.mu_rows(accounting.mu_figures(parsed, method))
    inputs = options.echo_inputs(
        specs=specs,
        delta=deltas,
        epsilon=epsilons,
        alpha=alphas,
        to=to,
        method=method,
        conversion=conversion if method in ("rdp", "all") else None,
        target_epsilon=target_epsilon,
        accuracy=accuracy,
        max_epsilon=max_epsilon,
        max_delta=max_delta,
    )
    title = "gdpcli compose " + " ".join(specs)
    if plot:
        plotting.plot_accountants(plot, title, accountants, plotting.gdp_reference(parsed), epsilons)
    output.emit(output.Result("compose", inputs, rows, title, notes), fmt)
    accounting.check_budget(answers, max_epsilon=max_epsilon, max_delta=max_delta)
