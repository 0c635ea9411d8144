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


@options.grouped(queries=options.query_options, budget=options.budget_options, output=options.output_options)
def command(
    specs: Annotated[
        list[str], typer.Argument(help="Mechanism specs, e.g. gaussian:sigma=2x100 laplace:b=1.")
    ],
    *,
    queries: options.Queries,
    to: options.ToOption = None,
    method: MethodOption = "auto",
    conversion: options.ConversionOption = "optimal",
    target_epsilon: options.TargetEpsilonOption = None,
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    budget: options.BudgetChecks,
    output: options.Output,
) -> None:
    """Compose mechanisms: exact where a closed form exists, rigorous bounds (PLD) otherwise."""
    from gdpcli import accounting
    from gdpcli.cli import plot as plotting
    from gdpcli.cli.output import Result, emit
    from gdpcli.cli.queries import answer, mu_rows, notes_of
    from gdpcli.mechanisms import parse_spec

    options.positive(accuracy, "--accuracy")
    parsed = [parse_spec(text) for text in specs]
    deltas = queries.deltas
    budget.require(queries)
    conversions = options.conversions(conversion)
    options.positive(target_epsilon, "--target-epsilon")
    if target_epsilon is not None and (not deltas or len(deltas) != 1):
        raise InputError("--target-epsilon needs exactly one --delta", "the budget is epsilon at that delta")
    if not (queries.asked or to):
        raise InputError("nothing to compute", "give --delta, --epsilon, --alpha or --to mu")
    if target_epsilon is not None and budget.given:
        raise InputError(
            "--max-epsilon/--max-delta check the composition as given, --target-epsilon searches a budget",
            "run them as two commands",
        )
    rows: list[dict] = []
    answers: list[accounting.Answer] = []
    notes: list[str] = []
    if output.plot or (target_epsilon is None and queries.asked):
        accountants, skipped = accounting.select(parsed, method, accuracy=accuracy, conversions=conversions)
    if target_epsilon is not None:
        rows += accounting.step_budgets(
            parsed, method, deltas[0], target_epsilon, accuracy=accuracy, conversions=conversions
        )
    elif queries.asked:
        notes += [f"skipped {note}" for note in skipped]
        rows, answers = answer(accountants, queries, context=accounting.describe)
        notes += notes_of(answers)
    if to == "mu":
        rows += mu_rows(accounting.mu_figures(parsed, method))
    inputs = options.echo_inputs(
        specs=specs,
        **queries.echo(),
        to=to,
        **options.method_inputs(method, conversion, accuracy),
        target_epsilon=target_epsilon,
        max_epsilon=budget.max_epsilon,
        max_delta=budget.max_delta,
    )
    title = "gdpcli compose " + " ".join(specs)
    if output.plot:
        references = plotting.gdp_reference(parsed)
        plotting.plot_accountants(output.plot, title, accountants, references, queries.epsilons)
    emit(Result("compose", inputs, rows, title, notes), output.fmt)
    accounting.check_budget(answers, max_epsilon=budget.max_epsilon, max_delta=budget.max_delta)
