"""`gdpcli compose SPEC [SPEC ...]`: the privacy of running several mechanisms on the same data."""

from __future__ import annotations

import csv
from typing import TYPE_CHECKING, Annotated

import typer

from gdpcli.cli import options
from gdpcli.errors import InputError
from gdpcli.textfiles import read_text

if TYPE_CHECKING:
    from gdpcli.events import Repeated

EPILOG = """\b
Examples:
  # exact: 0.5-GDP
  gdpcli compose gdp:mu=0.3 gdp:mu=0.4 --to mu
  # exact binomial composition
  gdpcli compose dp:eps=0.31622776601683794x10 --delta 1e-3
  # rigorous upper and lower bounds (PLD)
  gdpcli compose gaussian:sigma=3 laplace:b=2 dp:eps=0.5,delta=1e-6 \\
      --delta 1e-5
  # every method side by side
  gdpcli compose gaussian:sigma=20x1000 --delta 1e-5 --method all
  # the CLT with its functionals, Thm 6/7 mu
  gdpcli compose dp:eps=0.1x100 --delta 1e-5 --method clt -v
  # CI check: exit 3 if exceeded
  gdpcli compose gaussian:sigma=5x100 --delta 1e-5 --max-epsilon 3
  # how many repetitions fit in epsilon 6, by method
  gdpcli compose gaussian:sigma=20 --delta 1e-5 --target-epsilon 6 \\
      --method all --conversion all
  # also draw the bounds
  gdpcli compose laplace:b=2x10 --epsilon 0:8:41 --plot compose.svg
  # discrete Gaussians (PLD)
  gdpcli compose dgauss:sigma=5x10 gaussian:sigma=2 --delta 1e-5
  # specs from a file (- for stdin), one per line
  gdpcli compose --specs examples/census_us_level.csv --delta 1e-11 \\
      --method all
  # groups of 3 records: exact (sens 3)
  gdpcli compose gaussian:sigma=2x10 --group 3 --delta 1e-5
  # groups of 4 records, each Poisson-sampled: PLD bounds
  gdpcli compose gaussian:sigma=1,p=0.01x1000 --group 4 --delta 1e-5

SPEC is one shell word KIND:key=value,...: `gdpcli specs` lists every kind.
"""

MethodOption = Annotated[
    options.Method,
    typer.Option(
        "--method",
        help="auto (exact if a closed form exists, else pld) | exact | pld | clt | edgeworth | "
        "berry-esseen | rdp | basic | advanced (the textbook theorems, for (eps, delta)-DP specs) | all.",
    ),
]


ComposeTo = options.choices("ComposeTo", ("mu", "dp-event"))
ToOption = Annotated[
    ComposeTo | None,
    typer.Option(
        "--to",
        help="Convert to another representation: mu (tightest GDP mu) | dp-event (the composition as a "
        "dp_accounting DpEvent, JSON on stdout, for gdpcli compose --specs or dp_accounting).",
    ),
]


SpecsOption = Annotated[
    str | None,
    typer.Option(
        "--specs",
        metavar="FILE",
        help="Read more specs from FILE (- for stdin): one spec per line, or a CSV with a `spec` column; "
        "blank lines and # comments are skipped; or a dp_accounting DpEvent as JSON (to_named_tuple() with "
        "every named tuple a dict, or a list of them). Composed with the specs given as arguments.",
    ),
]


def _spec_lines(text: str) -> list[tuple[int, str]]:
    """(line number, stripped line) of the lines that are neither blank nor # comments."""
    lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), start=1)]
    return [(number, line) for number, line in lines if line and not line.startswith("#")]


def _spec_column(lines: list[tuple[int, str]], where: str) -> list[tuple[int, str]]:
    """The specs of a file: the `spec` column when the first line is a CSV header naming one (gdpcli's
    CSV convention), else each line as one spec word."""
    header = next(csv.reader([lines[0][1]])) if lines else []
    names = [name.strip().lower() for name in header]
    if "spec" not in names:
        return lines
    column, specs = names.index("spec"), []
    for number, line in lines[1:]:
        row = next(csv.reader([line]))
        if len(row) != len(names):
            raise InputError(f"{where} line {number}: {len(row)} fields, the header has {len(names)}")
        specs.append((number, row[column].strip()))
    return specs


def read_specs(path: str) -> tuple[list[tuple[str, str]], list[Repeated]]:
    """--specs FILE (- for stdin): (where, spec text) per spec, or the events of a dp_accounting event given
    as JSON (gdpcli.dp_events); InputError (exit 2) for an unreadable file, a line that is not one spec word
    (naming the line) or an event gdpcli does not read (naming it)."""
    where = "stdin" if path == "-" else repr(path)
    text = read_text(path, "--specs", "give a text file, one spec per line")
    if text.lstrip().startswith(("{", "[")):
        return [], _dp_event(text, where)
    specs = []
    for number, spec in _spec_column(_spec_lines(text), where):
        if not spec or len(spec.split()) != 1:
            raise InputError(f"{where} line {number}: {spec!r} is not one spec word", "one spec per line")
        specs.append((f"{where} line {number}", spec))
    if not specs:
        raise InputError(f"--specs: {where} holds no specs", "one spec per line, # for comments")
    return specs, []


def _dp_event(text: str, where: str) -> list[Repeated]:
    """The events of a dp_accounting event in JSON, errors naming the file."""
    from gdpcli import dp_events

    try:
        return dp_events.read(text)
    except InputError as error:
        raise InputError(f"--specs {where}: {error.message}", error.hint) from None


def _explained_budget(row: dict) -> dict:
    """A --target-epsilon row that not even one repetition meets has no epsilon, and a reason saying so."""
    if row["repetitions"]:
        return row
    why = "epsilon is missing: not even one repetition is certified within the target"
    return {**row, "reason": f"{why} {row['target_epsilon']:g} by {row['method']}"}


def _parse_all(arguments: list[str], from_file: list[tuple[str, str]]) -> list[Repeated]:
    """Events of the argument specs, then of the file's, whose errors name the line."""
    from gdpcli.events.spec import parse_spec

    parsed = [parse_spec(text) for text in arguments]
    for where, text in from_file:
        try:
            parsed.append(parse_spec(text))
        except InputError as error:
            raise InputError(f"{where}: {error.message}", error.hint) from None
    return parsed


def _grouped(parsed: list[Repeated], group: int | None) -> list[Repeated]:
    """--group K: every spec for groups of K records (accounting.group; ComputationError where none is
    rigorous), or the specs themselves."""
    if group is None:
        return parsed
    from gdpcli.accounting.group import check_group, group_specs

    return group_specs(parsed, check_group(group))


@options.grouped(queries=options.query_options, budget=options.budget_options, output=options.output_options)
def command(
    specs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Mechanism specs, e.g. gaussian:sigma=2x100 laplace:b=1 (or read them with --specs)."
        ),
    ] = None,
    *,
    specs_file: SpecsOption = None,
    group: options.GroupOption = None,
    queries: options.Queries,
    to: ToOption = None,
    method: MethodOption = "auto",
    conversion: options.ConversionOption = "optimal",
    target_epsilon: options.TargetEpsilonOption = None,
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    verbose: options.VerboseOption = False,
    budget: options.BudgetChecks,
    output: options.Output,
) -> None:
    """Compose mechanisms: exact where a closed form exists, rigorous bounds (PLD) otherwise."""
    from gdpcli import accounting, dp_events
    from gdpcli.cli import plot as plotting
    from gdpcli.cli.output import Result, emit, print_dp_event
    from gdpcli.cli.queries import answer, mu_rows, notes_of

    options.positive(accuracy, "--accuracy")
    arguments = list(specs or [])
    from_file, from_event = read_specs(specs_file) if specs_file is not None else ([], [])
    if not arguments and not from_file and not from_event:
        raise InputError("no mechanism specs", "give specs as arguments or --specs FILE (- for stdin)")
    parsed = _grouped(_parse_all(arguments, from_file) + from_event, group)
    specs = arguments + [text for _, text in from_file] + [event.describe() for event in from_event]
    if to == "dp-event":
        asked = queries.asked or target_epsilon is not None or budget.given or output.plot is not None
        print_dp_event(parsed, asked, output.fmt)
        return
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
    grouping = {"group": group} if group else {}
    rows: list[dict] = []
    answers: list[accounting.Answer] = []
    notes = dp_events.notes(from_event) if from_event else []
    if output.plot or (target_epsilon is None and queries.asked):
        accountants, skipped = accounting.select(
            parsed, method, accuracy=accuracy, conversions=conversions, verbose=verbose
        )
    if target_epsilon is not None:
        rows += map(
            _explained_budget,
            accounting.step_budgets(
                parsed, method, deltas[0], target_epsilon, accuracy=accuracy, conversions=conversions
            ),
        )
    elif queries.asked:
        notes += [f"skipped {note}" for note in skipped]
        rows, answers = answer(
            accountants, queries, context=lambda acc: {**grouping, **accounting.describe(acc)}
        )
        notes += notes_of(answers)
    if to == "mu":
        figures = accounting.mu_figures(parsed, method, verbose)
        rows += mu_rows(figures, grouping)
        notes += [figure.note for figure in figures if figure.note]
    inputs = options.echo_inputs(
        specs=specs,
        group=group,
        **queries.echo(),
        to=to,
        **options.method_inputs(method, conversion, accuracy),
        target_epsilon=target_epsilon,
        max_epsilon=budget.max_epsilon,
        max_delta=budget.max_delta,
    )
    title = "gdpcli compose " + " ".join(
        arguments
        + ([f"--specs {specs_file}"] if specs_file else [])
        + ([f"--group {group}"] if group else [])
    )
    if output.plot:
        references = plotting.gdp_reference(parsed)
        plotting.plot_accountants(output.plot, title, accountants, references, queries.epsilons)
    emit(Result("compose", inputs, rows, title, notes), output.fmt)
    accounting.check_budget(answers, max_epsilon=budget.max_epsilon, max_delta=budget.max_delta)
