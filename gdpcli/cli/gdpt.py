"""`gdpcli gdpt-identify INPUT`: is a mechanism GDP, and for which mu (the GDP transformation, GDPT paper).

INPUT is a mechanism spec, a built-in of the GDPT paper (family:..., icea:...) or a privacy-profile CSV
(a path, or - for stdin). The row states the verdict (Thm 4.3), the tail limit (Thm 4.4), an interval
[mu_lower, mu_upper] for the mechanism's own mu = sup_{eps >= 0} G(eps), the certified interval
[head_mu_lower, head_mu_upper] for sup G over the head [0, eps_head] (Thm 4.5/4.6, Algorithm 3) and the
residual delta_{head_mu_upper}(eps_head) beyond it (Sec. 4.2). mu_upper is the head's bound only where
nothing lies beyond the head (the profile is 0 at eps_head), otherwise a bound on G valid at every eps
(e.g. C_p(f) >= f for subsampled mechanisms), and inf where none is known: the head's figure is never
passed off as the mechanism's mu.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gdpcli.cli import options
from gdpcli.errors import InputError
from gdpcli.guarantees import Guarantee, Side, bound

if TYPE_CHECKING:
    from gdpcli.accounting.gdpt_input import GdptResult, PrivacyProfile, Profiles

EPILOG = """\b
Examples:
  # 1-DP is GDP: mu = 1.2320 (GDPT Thm 5.1)
  gdpcli gdpt-identify dp:eps=1
  # subsampled: rigorous PLD bounds
  gdpcli gdpt-identify gaussian:sigma=1,p=0.01x100 --eps-head 2
  # the paper's noise family, refined (App. B)
  gdpcli gdpt-identify family:A=2,B=1,sigma=2 --refine
  # not GDP: the tail limit is infinite
  gdpcli gdpt-identify icea:m=20,n=4 --refine
  # a sampled profile from stdin
  gdpcli convert gdp:mu=1 --epsilon 0:40:4001 -f csv \\
      | gdpcli gdpt-identify -
  # the staircase bounds on G(eps), for plotting
  gdpcli gdpt-identify laplace:b=1 --table -f csv
  # draw the staircase
  gdpcli gdpt-identify laplace:b=1 --eps-head 10 --plot staircase.png
  # clip to [0, 1] and add Laplace noise: GDP after all (clip and rectify,
  # Thm 4.7)
  gdpcli gdpt-identify dp:eps=1,delta=1e-6 --eps-head 10 --rectify 0,1

SPEC is one shell word KIND:key=value,...: `gdpcli specs` lists every kind.
"""

TABLE_ROWS = 1000
DEFAULT_PRECISION = 1e-3
SAMPLED_NOTE = (
    "between the rows the profile is only known to be non-increasing: on [eps_i, eps_i+1] it is taken as "
    "delta_i, and on [0, eps_0] as what (eps_0, delta_0) implies (GDPT Thm 3.1); beyond the last row "
    "nothing is known unless its delta is 0"
)

InputArgument = Annotated[
    str,
    typer.Argument(
        help="A spec (gdp:mu=1, dp:eps=1, laplace:b=1, ...), a built-in (family:A=2,B=1,sigma=2 or "
        "icea:m=20,n=4), or a CSV with columns epsilon,delta: a path, or - for stdin.",
        metavar="INPUT",
    ),
]
PrecisionOption = Annotated[
    float | None,
    typer.Option("--precision", help="Width of the certified mu interval, in (0, 1] (default 1e-3)."),
]
EpsHeadOption = Annotated[
    float | None,
    typer.Option(
        "--eps-head",
        help="End of the head [0, H] that is measured (default 100; for PLD inputs where the upper "
        "profile reaches 1e-9; for a CSV its last row).",
    ),
]
TableOption = Annotated[
    bool, typer.Option("--table", help="Print the staircase bounds on G(eps) (at most 1000 rows) instead.")
]
RefineOption = Annotated[
    bool,
    typer.Option("--refine", help="Built-ins: refine the profile by the exact partial order (GDPT App. B)."),
]
RectifyOption = Annotated[
    str | None,
    typer.Option(
        "--rectify",
        metavar="LOW,HIGH",
        help="Clip and rectify (GDPT Thm 4.7): clip the mechanism's numerical output to [LOW, HIGH] and add "
        "Laplace noise of scale (HIGH - LOW) / eps_head; prints that scale and the mu for which the result "
        "is GDP, whatever the tail.",
    ),
]
RECTIFY_NOTE = (
    "--rectify: clipped to [rectify_low, rectify_high] plus Laplace noise of scale laplace_b = "
    "(rectify_high - rectify_low) / eps_head, the mechanism is rectified_mu_upper-GDP (GDPT Thm 4.7: "
    "head_mu_upper; lower where the Laplace noise's own profile is below the mechanism's); a larger "
    "--eps-head means less noise"
)


@options.grouped(output=options.output_options)
def command(
    source: InputArgument,
    *,
    precision: PrecisionOption = None,
    eps_head: EpsHeadOption = None,
    table: TableOption = False,
    refine: RefineOption = False,
    rectify: RectifyOption = None,
    output: options.Output,
) -> None:
    """Is the mechanism GDP, and for which mu: verdict, tail limit and a certified mu interval."""
    from gdpcli.accounting import gdpt_input as profiles
    from gdpcli.cli import plot as plotting
    from gdpcli.cli.output import Result, emit

    options.positive(eps_head, "--eps-head")
    if precision is not None and not 0 < precision <= 1:
        raise InputError(f"--precision: must be in (0, 1], got {precision!r}")
    clip = _clip_range(rectify)
    notes: list[str] = []
    if profiles.is_sampled(source):
        if refine:
            raise InputError("--refine applies to the built-in families family: and icea:, not to a CSV")
        sampled = profiles.load_csv(source, eps_head)
        result, lower_guarantee = profiles.identify_sampled(sampled)
        notes += [*sampled.notes, SAMPLED_NOTE]
        if precision is not None:
            notes.append("--precision does not apply to a sampled profile: the sampling sets the slack")
        summary = _summary(source, "csv", result, None, lower_guarantee, "gdpt-sampled")
        staircase_guarantee, upper = sampled.staircase_guarantee, sampled.upper
    else:
        given = profiles.from_text(source, refine)
        precision = DEFAULT_PRECISION if precision is None else precision
        result, given = profiles.identify(given, eps_head, precision)
        notes += given.notes
        if result.slack > precision:
            why = (
                ": the PLD engine's grid and truncation errors limit it (a smaller --eps-head helps)"
                if given.source == "pld"
                else ""
            )
            width = f"the interval is {result.slack:.3g} wide, wider than --precision {precision:g}"
            notes.append(width + why)
        lower = bound("mu", Side.OPTIMISTIC)
        summary = _summary(source, given.source, result, precision, lower, "gdpt-staircase", given)
        summary |= _tangents(given.upper.tangents, notes)
        staircase_guarantee = lower
        upper = given.upper
    if clip is not None:
        summary |= _rectified(result, upper, clip, precision or DEFAULT_PRECISION)
        notes.append(RECTIFY_NOTE)
    notes += _explain(result, summary["mu_upper"])
    summary |= _reason(summary)
    rows = _staircase(result, staircase_guarantee, summary["method"]) if table else [summary]
    if table:
        notes.insert(0, ", ".join(f"{key}={value}" for key, value in summary.items()))
    inputs = options.echo_inputs(
        input=source,
        precision=precision,
        eps_head=eps_head,
        table=table or None,
        refine=refine or None,
        rectify=None if clip is None else list(clip),
    )
    title = f"gdpcli gdpt-identify {source}"
    if output.plot:
        plotting.plot_gdpt(output.plot, title, result)
    emit(Result("gdpt-identify", inputs, rows, title, notes, ("mu_lower", "mu_upper")), output.fmt)


def _summary(
    source: str,
    profile: str,
    result: GdptResult,
    precision: float | None,
    lower: Guarantee,
    method: str,
    given: Profiles | None = None,
) -> dict[str, Any]:
    """The one result row: verdict, tail, the mechanism's mu interval (gdpt.mechanism_interval), the head's
    certified interval, head and residual, with the labels of the upper and lower ends."""
    from gdpcli.accounting.gdpt_input import mechanism_interval

    mu_lower, mu_upper = mechanism_interval(result, given)
    head_slack = result.slack if math.isfinite(result.mu_upper) else math.inf
    return {
        "input": source,
        "profile": profile,
        "verdict": result.verdict,
        "tail_limit": result.tail_limit,
        "tail_method": result.tail_method,
        "mu_lower": mu_lower,
        "mu_upper": mu_upper,
        "head_mu_lower": result.mu_lower,
        "head_mu_upper": result.mu_upper,
        "slack": head_slack,
        "eps_head": result.eps_head,
        "precision": precision,
        "residual": result.residual,
        "guarantee": bound("mu", Side.PESSIMISTIC),
        "lower_guarantee": lower,
        "method": method,
    }


def _clip_range(text: str | None) -> tuple[float, float] | None:
    """--rectify LOW,HIGH: two finite numbers, LOW < HIGH (None when not given)."""
    if text is None:
        return None
    values = options.parse_values(text, "--rectify") if ":" not in text else []
    if len(values) != 2 or not all(math.isfinite(v) for v in values) or not values[0] < values[1]:
        raise InputError(
            f"--rectify: {text!r} is not a range LOW,HIGH", "two finite numbers, LOW < HIGH, e.g. 0,1"
        )
    return values[0], values[1]


def _rectified(
    result: GdptResult, upper: PrivacyProfile, clip: tuple[float, float], precision: float
) -> dict[str, float]:
    """The --rectify columns: the clipping range, the Laplace scale (HIGH - LOW) / eps_head and the mu of the
    clipped and rectified mechanism (gdpt_input.rectified_mu, GDPT Thm 4.7)."""
    from gdpcli.accounting.gdpt_input import rectified_mu

    low, high = clip
    return {
        "rectify_low": low,
        "rectify_high": high,
        "laplace_b": (high - low) / result.eps_head,
        "rectified_mu_upper": rectified_mu(result, upper, precision),
    }


def _tangents(tangents: tuple[Any, Any] | None, notes: list[str]) -> dict[str, float]:
    """Columns tangent_epsilon_k, tangent_delta_k (k = 1, 2, ...) of a refined profile (GDPT App. B)."""
    if tangents is None:
        return {}
    if not len(tangents[0]):
        notes.append("--refine found no tangent point: the refinement leaves the profile unchanged")
    columns: dict[str, float] = {}
    for k, (epsilon, delta) in enumerate(zip(*tangents, strict=True), start=1):
        columns |= {f"tangent_epsilon_{k}": float(epsilon), f"tangent_delta_{k}": float(delta)}
    return columns


def _explain(result: GdptResult, mu_upper: float) -> list[str]:
    """What the figures mean, for the notes under a table."""
    head = (
        f"on [0, {result.eps_head:.6g}] delta(eps) <= delta_mu(eps) with mu = head_mu_upper; beyond, "
        "delta <= residual"
    )
    if result.verdict == "not_gdp":
        return [head, "not GDP for any mu (GDPT Thm 4.3): the head interval is a head guarantee only"]
    if result.verdict == "undetermined":
        return [head, "the tail is unknown beyond the head: GDP is not decided (GDPT Thm 4.3)"]
    notes = [head]
    if math.isfinite(mu_upper) and mu_upper > result.mu_upper:
        notes.append(
            "mu_upper comes from a bound on G valid at every eps (it exceeds the head's): G may grow beyond "
            "the head"
        )
    return notes


DELTA_ONE = "the profile's upper bound reaches delta = 1 there, and no mu-GDP guarantee allows that"
NOT_GDP = "not GDP for any mu, its tail limit is infinite (GDPT Thm 4.3)"
WHY_INFINITE = {
    "mu_upper": "nothing gdpcli knows bounds G beyond eps_head, so no mu is certified for the whole "
    "mechanism (only the head interval and the residual)",
    "head_mu_upper": f"G is unbounded on the head: {DELTA_ONE}",
    "slack": "the head interval is unbounded above",
    "rectified_mu_upper": "the rectified profile comes so close to delta = 1 that no finite mu is certified "
    "(mu above 7 there): a smaller --eps-head adds more Laplace noise",
}


def _reason(row: dict[str, Any]) -> dict[str, str]:
    """{"reason": why the row's infinite figures are infinite}, or {} (the renderer writes it beside them)."""
    infinite = [key for key, value in row.items() if value == math.inf]
    if not infinite:
        return {}
    own = [key for key in infinite if key == "rectified_mu_upper" or row["verdict"] != "not_gdp"]
    lumped = [key for key in infinite if key not in own]  # not GDP, unlike the rectified mechanism
    why = [f"{', '.join(lumped)} = inf: {NOT_GDP}"] if lumped else []
    why += [f"{key} = inf: {WHY_INFINITE.get(key, 'no finite bound is known')}" for key in own]
    return {"reason": "; ".join(why)}


def _staircase(result: GdptResult, lower_guarantee: Guarantee, method: str) -> list[dict[str, Any]]:
    """--table: per cell [epsilon, epsilon_end], mu_lower <= G(eps) <= mu_upper (GDPT Thm 4.6)."""
    starts, lower, upper = result.coarse_staircase(TABLE_ROWS)
    ends = [*starts[1:], result.eps_head]
    return [
        {
            "epsilon": float(start),
            "epsilon_end": float(end),
            "mu_lower": float(low),
            "mu_upper": float(high),
            "guarantee": bound("mu", Side.PESSIMISTIC),
            "lower_guarantee": lower_guarantee,
            "method": method,
            **({"reason": f"mu_upper = inf: {DELTA_ONE}"} if high == math.inf else {}),
        }
        for start, end, low, high in zip(starts, ends, lower, upper, strict=True)
    ]
