"""`gdpcli convert SPEC`: one guarantee in other representations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from gdpcli import vocabulary
from gdpcli.cli import options
from gdpcli.errors import ComputationError, InputError

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from gdpcli.accounting import Accountant, Answer
    from gdpcli.events import Repeated

DIVERGENCES = ("kl", "tv", "hellinger", "chi2")
"""--to choices: divergences of the mechanism's dominating pair (each printed in a column of its name)."""
ConvertTo = options.choices("ConvertTo", ("mu", "rho", "rdp", "equal-error", *DIVERGENCES))
ConvertMethod = options.choices("ConvertMethod", (*vocabulary.METHODS, *vocabulary.CONVERSIONS))

EPILOG = """\b
Examples:
  # epsilon of 1-GDP at delta 1e-5
  gdpcli convert gdp:mu=1 --delta 1e-5
  # a privacy-profile table
  gdpcli convert gaussian:sigma=2 --epsilon 0:10:11 -f csv
  # the trade-off curve G_1
  gdpcli convert gdp:mu=1 --alpha 0:1:101
  # the tightest mu implied by 1-DP (GDPT Thm 5.1)
  gdpcli convert dp:eps=1 --to mu
  # group privacy for groups of 4
  gdpcli convert gdp:mu=0.5 --group 4 --delta 1e-5
  # RDP -> (eps, delta), every conversion
  gdpcli convert rdp:alpha=8,eps=1 --delta 1e-5 --method all
  # also draw f and the profile
  gdpcli convert laplace:b=1 --epsilon 0:3:31 --plot laplace.png
  # zCDP rho = sens^2 / (2 sigma^2), exact
  gdpcli convert gaussian:sigma=4 --to rho
  # the RDP curve D_alpha at these orders
  gdpcli convert laplace:eps=1 --to rdp --order 2:64:32
  # zCDP -> (eps, delta), every conversion
  gdpcli convert zcdp:rho=0.1,xi=0.01 --delta 1e-5 --method all
  # zCDP -> a rigorous lower bound on beta(alpha)
  gdpcli convert zcdp:rho=0.5 --alpha 0:1:11
  # KL divergence of the pair, exact: 10 (eps + e^-eps - 1)
  gdpcli convert laplace:eps=1x10 --to kl
  # alpha* = f(alpha*) = Phi(-1/2), the best attack's equal error rate
  gdpcli convert gdp:mu=1 --to equal-error
  # does (1, 1e-6)-DP imply (0.5, 0.2)-DP? exit 0 if proven, 3 if not
  gdpcli convert dp:eps=1,delta=1e-6 --implies 0.5,0.2

SPEC is one shell word KIND:key=value,...: `gdpcli specs` lists every kind.
"""

DEFAULT_ORDERS = "1.25,1.5,2,3,4,6,8,16,32,64"
"""The Renyi orders of --to rdp when --order is not given."""
RHO_ORDERS = "1.0001,1.001,1.01,1.02,1.05,1.1,1.2,1.5,2,3,4,6,8,12,16,24,32,48,64,128,256,512,1024"
"""The Renyi orders over which --to rho takes max D_alpha / alpha when --order is not given."""


@options.grouped(queries=options.query_options, output=options.output_options)
def command(
    spec: Annotated[str, typer.Argument(help="Mechanism spec, e.g. gdp:mu=1 or dp:eps=1,delta=1e-6.")],
    *,
    queries: options.Queries,
    to: Annotated[
        ConvertTo | None,
        typer.Option(
            "--to",
            help="Convert to another representation: mu (tightest GDP mu) | rho (zCDP: exact for the "
            "Gaussian, else the smallest rho with D_alpha <= alpha rho over --order) | rdp (the RDP curve "
            "D_alpha at --order) | equal-error (alpha* = f(alpha*), the equal error rate of the best test; "
            "a bound on f gives a bound on alpha* in the same direction) | kl | tv | hellinger | chi2 "
            "(divergences of the dominating pair P, Q: KL(P||Q), total variation = delta(0), squared "
            "Hellinger 1 - int sqrt(pq), chi2(P||Q) = e^D_2 - 1).",
        ),
    ] = None,
    group: Annotated[
        int | None, typer.Option("--group", help="Group privacy: the guarantee for groups of K individuals.")
    ] = None,
    method: Annotated[
        ConvertMethod,
        typer.Option(
            "--method",
            metavar="METHOD",
            help="auto | exact | pld | clt | edgeworth | berry-esseen | rdp | basic | advanced | all, or an "
            "RDP conversion classic | improved | lemma1 | lemma2 | optimal (short for --method rdp "
            "--conversion NAME).",
        ),
    ] = "auto",
    conversion: options.ConversionOption = "optimal",
    order: Annotated[
        str | None,
        typer.Option(
            "--order",
            help="Renyi orders alpha > 1 for --to rdp (and --to rho from a curve): A, A1,A2,... or "
            f"START:STOP:NUM (default {DEFAULT_ORDERS}; for rho 1.0001 to 1024).",
        ),
    ] = None,
    implies: Annotated[
        str | None,
        typer.Option(
            "--implies",
            metavar="EPSILON,DELTA",
            help="Does SPEC imply (EPSILON, DELTA)-DP, i.e. delta(EPSILON) <= DELTA? Exit 0 if proven (an "
            "exact figure or rigorous upper bound), 3 if disproven (exact figure or lower bound above "
            "DELTA), 1 if the rigorous bounds straddle DELTA (GDPT Thm 3.1 for dp: specs).",
        ),
    ] = None,
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    verbose: options.VerboseOption = False,
    output: options.Output,
) -> None:
    """Convert one privacy guarantee: epsilon at delta, delta at epsilon, trade-off beta(alpha), mu."""
    from gdpcli import accounting
    from gdpcli.accounting import divergences
    from gdpcli.cli.output import FIGURES, Result, emit
    from gdpcli.cli.queries import answer, mu_rows, notes_of
    from gdpcli.events.spec import parse_spec

    options.positive(accuracy, "--accuracy")
    conversions = options.conversions(conversion)
    if method in accounting.CONVERSIONS:
        method, conversions = "rdp", (method,)
    elif method == "all":
        conversions = accounting.CONVERSIONS
    parsed = parse_spec(spec)
    if group is not None and not 1 <= group <= 10**6:
        raise InputError(f"--group: {group} is out of range", "allowed: 1 <= K <= 1000000")
    claim = _implied_pair(implies) if implies is not None else None
    if not (queries.asked or to or claim):
        raise InputError("nothing to compute", "give --delta, --epsilon, --alpha, --to or --implies")
    context = {"group": group} if group else {}
    rows: list[dict] = []
    notes: list[str] = []
    if queries.asked or output.plot or to in ("equal-error", "tv") or claim:
        if group:
            accountants = [accounting.group_accountant(parsed, group)]
        else:
            accountants, _ = accounting.select(
                [parsed], method, accuracy=accuracy, conversions=conversions, verbose=verbose
            )

    def columns(accountant: Accountant) -> dict:
        return {**context, **accounting.describe(accountant)}

    if queries.asked:
        answered, answers = answer(accountants, queries, context=columns)
        rows += answered
        notes += notes_of(answers)
    if claim:
        claimed, claim_answers = _implication_rows(accountants, claim, columns)
        rows += claimed
        notes += notes_of(claim_answers)
    if to == "equal-error":
        found, caveats = _equal_error_rows(accountants, columns)
        rows += found
        notes += caveats
    if to == "tv":
        tv_rows, tv_answers = _tv_rows(accountants, columns)
        rows += tv_rows
        notes += notes_of(tv_answers)
    elif to in DIVERGENCES:
        if group:
            raise InputError(f"--to {to} with --group is not supported", "convert the mechanism itself")
        rows += divergences.divergence_rows(parsed, str(to))
        notes += _divergence_notes(rows)
    if to in ("rho", "rdp"):
        if group:
            raise InputError(f"--to {to} with --group is not supported", "convert the mechanism itself")
        rows += divergences.curve_rows(parsed, str(to), _orders(order, str(to), parsed), method == "all")
        notes += _curve_notes(rows, parsed)
    if to == "mu":
        if group:
            source = accounting.group_accountant(parsed, group)
            if not hasattr(source, "mu"):
                raise ComputationError("group privacy of a non-GDP mechanism has no exact mu")
            rows += mu_rows(source.mu(), context)
        else:
            rows += mu_rows(accounting.mu_figures([parsed], method, verbose), context)
    inputs = options.echo_inputs(
        spec=spec,
        **queries.echo(),
        to=to,
        order=order,
        group=group,
        implies=claim,
        **options.method_inputs(method, conversion, accuracy),
    )
    title = f"gdpcli convert {spec}"
    if output.plot:
        from gdpcli.cli import plot as plotting

        references = [] if group else plotting.gdp_reference([parsed])
        label = title + (f" --group {group}" if group else "")
        plotting.plot_accountants(output.plot, label, accountants, references, queries.epsilons)
    answered_columns = (*FIGURES, "rho", "rdp_epsilon", "equal_error", "implied", *DIVERGENCES)
    emit(Result("convert", inputs, rows, title, notes, answers=answered_columns), output.fmt)
    if claim:
        accounting.check_implication(claim_answers, *claim, spec + (f" --group {group}" if group else ""))


def _implied_pair(text: str) -> tuple[float, float]:
    """--implies EPSILON,DELTA: epsilon >= 0 and delta in [0, 1]."""
    parts = text.split(",")
    if len(parts) != 2:
        raise InputError(f"--implies: {text!r} is not EPSILON,DELTA", "e.g. --implies 1,1e-5")
    epsilon = options.parse_float(parts[0], "--implies epsilon")
    delta = options.parse_float(parts[1], "--implies delta")
    options.check_range([epsilon], "--implies epsilon", low=0, high=1e300)
    options.check_range([delta], "--implies delta", low=0, high=1)
    return epsilon, delta


def _implication_rows(
    accountants: Sequence[Accountant], claim: tuple[float, float], columns: Callable[[Accountant], dict]
) -> tuple[list[dict], list[Answer]]:
    """--implies: the rigorous rows of delta at the claim's epsilon (as --epsilon gives them), each with
    the claim's delta (target_delta) and the verdict (implied: yes | no | undecided), and their answers."""
    from gdpcli import accounting
    from gdpcli.cli.queries import answer

    epsilon, delta = claim
    rows, answers = answer(accountants, options.Queries(None, [epsilon], None), context=columns)
    extra = {"target_delta": delta, "implied": accounting.implication(answers, delta)}
    return [row | extra for row in rows if row["guarantee"].rigorous], answers


def _equal_error_rows(
    accountants: Sequence[Accountant], columns: Callable[[Accountant], dict]
) -> tuple[list[dict], list[str]]:
    """--to equal-error: alpha* = f(alpha*) of each trade-off figure, labelled like that figure
    (accounting.equal_error), and the figures' caveats (e.g. the PLD's accuracy not reached)."""
    from gdpcli import accounting

    found = [(acc, f) for acc in accountants for f in accounting.equal_error(acc)]
    rows = [
        {**columns(acc), "equal_error": float(f.values[0]), "guarantee": f.guarantee, "method": f.method}
        for acc, f in found
    ]
    return rows, list(dict.fromkeys(f.note for _, f in found if f.note))


def _tv_rows(
    accountants: Sequence[Accountant], columns: Callable[[Accountant], dict]
) -> tuple[list[dict], list[Answer]]:
    """--to tv: TV(P, Q) = sup_alpha (1 - alpha - f(alpha)) = delta(0), the profile at 0 as --epsilon 0 gives
    it (same figures and labels; both directions for a subsampled pair), and its answers."""
    from gdpcli.cli.queries import answer

    rows, answers = answer(accountants, options.Queries(None, [0.0], None), context=columns)
    kept = [{k: v for k, v in row.items() if k not in ("epsilon", "delta")} for row in rows]
    return [{"tv": row["delta"]} | rest for row, rest in zip(rows, kept, strict=True)], answers


def _divergence_notes(rows: list[dict]) -> list[str]:
    """What --to kl | hellinger | chi2 rows mean: the direction, Hellinger's convention, the quadrature."""
    notes = [
        "P, Q: the mechanism's dominating pair, symmetric (D(P||Q) = D(Q||P)); composition: product pairs"
    ]
    if any("hellinger" in row for row in rows):
        notes.append(
            "hellinger: squared Hellinger distance 1 - int sqrt(p q) (with the factor 1/2: in [0, 1])"
        )
    if any(row.get("method") == "tradeoff-quadrature" for row in rows):
        notes.append(
            "tradeoff-quadrature: the functionals of |f'| on the binned pair (as --to rdp): an "
            "approximation, low where the mass lies in 1 - f < 1e-9"
        )
    return notes


def _orders(text: str | None, to: str, parsed: Repeated) -> list[float]:
    """--order: Renyi orders, each > 1 (default: an rdp: spec's own, else DEFAULT_ORDERS / RHO_ORDERS)."""
    if text is None and parsed.step.rdp_points is not None:
        return list(parsed.step.rdp_points[0])
    values = options.parse_values(text or (RHO_ORDERS if to == "rho" else DEFAULT_ORDERS), "--order")
    return options.check_range(values, "--order", low=1.0, high=1e6, low_open=True)


def _curve_notes(rows: list[dict], parsed: Repeated) -> list[str]:
    """What the labels of --to rdp / rho rows mean where they are not exact."""
    methods = {row.get("method") for row in rows}
    notes = []
    if parsed.sampling_rate is not None and parsed.step.gdp_mu is None:
        notes.append(
            "rdp-curve of a Poisson-subsampled mechanism: an upper bound for both directions (add/remove), "
            "the least of Zhu and Wang 2019 Thm 6 at ceil(alpha), joint convexity and the amplified pure eps"
        )
    if "tradeoff-quadrature" in methods:
        notes.append(
            "tradeoff-quadrature: D_alpha = 1/(alpha-1) log int_0^1 |f'(x)|^(1-alpha) dx (Su 2024, Sec. 2.3, "
            "eq. 2.3) by quadrature: an approximation, low at large orders (mass where 1 - f < 1e-9)"
        )
    if any(str(m).startswith("max-over-orders") for m in methods):
        notes.append("rho = max D_alpha / alpha over the orders given: a zCDP rho needs every alpha > 1")
    return notes
