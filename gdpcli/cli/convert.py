"""`gdpcli convert SPEC`: one guarantee in other representations."""

from __future__ import annotations

from typing import Annotated

import typer

from gdpcli import vocabulary
from gdpcli.cli import options
from gdpcli.errors import ComputationError, InputError

ConvertMethod = options.choices("ConvertMethod", (*vocabulary.METHODS, *vocabulary.CONVERSIONS))

EPILOG = """\b
Examples:
  gdpcli convert gdp:mu=1 --delta 1e-5            epsilon of 1-GDP at delta 1e-5
  gdpcli convert gaussian:sigma=2 --epsilon 0:10:11 -f csv   a privacy-profile table
  gdpcli convert gdp:mu=1 --alpha 0:1:101         the trade-off curve G_1
  gdpcli convert dp:eps=1 --to mu                 tightest mu implied by 1-DP (GDPT Thm 5.1)
  gdpcli convert gdp:mu=0.5 --group 4 --delta 1e-5   group privacy for groups of 4
  gdpcli convert rdp:alpha=8,eps=1 --delta 1e-5 --method all   RDP -> (eps, delta), every conversion
  gdpcli convert laplace:b=1 --epsilon 0:3:31 --plot laplace.png   also draw f and the profile
"""


@options.grouped(queries=options.query_options, output=options.output_options)
def command(
    spec: Annotated[str, typer.Argument(help="Mechanism spec, e.g. gdp:mu=1 or dp:eps=1,delta=1e-6.")],
    *,
    queries: options.Queries,
    to: options.ToOption = None,
    group: Annotated[
        int | None, typer.Option("--group", help="Group privacy: the guarantee for groups of K individuals.")
    ] = None,
    method: Annotated[
        ConvertMethod,
        typer.Option(
            "--method",
            help="auto | exact | pld | clt | edgeworth | berry-esseen | rdp | all, or an RDP conversion "
            "classic | improved | lemma1 | lemma2 | optimal (short for --method rdp --conversion NAME).",
        ),
    ] = "auto",
    conversion: options.ConversionOption = "optimal",
    output: options.Output,
) -> None:
    """Convert one privacy guarantee: epsilon at delta, delta at epsilon, trade-off beta(alpha), mu."""
    from gdpcli import accounting
    from gdpcli.cli import plot as plotting
    from gdpcli.cli.output import Result, emit
    from gdpcli.cli.queries import answer, mu_rows, notes_of
    from gdpcli.mechanisms import parse_spec

    conversions = options.conversions(conversion)
    if method in accounting.CONVERSIONS:
        method, conversions = "rdp", (method,)
    elif method == "all":
        conversions = accounting.CONVERSIONS
    parsed = parse_spec(spec)
    if group is not None and not 1 <= group <= 10**6:
        raise InputError(f"--group: {group} is out of range", "allowed: 1 <= K <= 1000000")
    if not (queries.asked or to):
        raise InputError("nothing to compute", "give --delta, --epsilon, --alpha or --to mu")
    context = {"group": group} if group else {}
    rows: list[dict] = []
    notes: list[str] = []
    if queries.asked or output.plot:
        if group:
            accountants = [accounting.group_accountant(parsed, group)]
        else:
            accountants, _ = accounting.select([parsed], method, conversions=conversions)
    if queries.asked:
        answered, answers = answer(
            accountants, queries, context=lambda acc: {**context, **accounting.describe(acc)}
        )
        rows += answered
        notes += notes_of(answers)
    if to == "mu":
        if group:
            source = accounting.group_accountant(parsed, group)
            if not hasattr(source, "mu"):
                raise ComputationError("group privacy of a non-GDP mechanism has no exact mu")
            rows += mu_rows(source.mu(), context)
        else:
            rows += mu_rows(accounting.mu_figures([parsed], method), context)
    inputs = options.echo_inputs(spec=spec, **queries.echo(), to=to, group=group, method=method)
    title = f"gdpcli convert {spec}"
    if output.plot:
        references = [] if group else plotting.gdp_reference([parsed])
        label = title + (f" --group {group}" if group else "")
        plotting.plot_accountants(output.plot, label, accountants, references, queries.epsilons)
    emit(Result("convert", inputs, rows, title, notes), output.fmt)
