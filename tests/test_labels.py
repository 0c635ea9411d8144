"""Every label true on every path: the harness that guards the bound directions of every spec kind.

It enumerates every mechanism kind of the spec language x every wrapper (one step, N-fold, Poisson and
fixed-size subsampling, a mixed composition, a group) x every query (--delta, --epsilon, --alpha, risk's
TPR / advantage / Bayes success, --to equal-error, --to mu, --implies), runs the real command and checks
each answer:

1. no `lower_bound` lies above an `upper_bound` (or exact figure) of the same quantity at the same query;
2. every rigorous figure lies on its side of a reference, where one exists: a witness mechanism W that
   the spec admits, whose figures are known independently (closed forms for the Gaussian, a much finer
   grid of the same accountant otherwise). For a kind that is W itself (gdp, gaussian, laplace, dp, rr,
   dgauss) both sides are checked; for a kind given by a curve (tradeoff:file, profile:file) W = G_1 is
   one mechanism through its samples, so both sides are too (a figure about "the" mechanism holds for
   every mechanism through them); for a guarantee whose worst case W need not reach (rdp, zcdp,
   rdp:file, the shuffle model) only the pessimistic side is: the worst case is at least as lossy as W;
3. a refused combination is refused with the expected reason (REFUSED), and only those are refused.

Every curve kind is sampled from G_1 (and rdp:alpha=8,eps=4 and zcdp:rho=0.5 are G_1's Renyi divergence at
order 8 and its zCDP rho), so G_1 is their witness and its closed forms (scipy's normal distribution,
written out here) are the reference. A new kind gets a line in KINDS and is checked the day it lands.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import norm

from gdpcli.cli.app import run

ROOT = Path(__file__).resolve().parents[1]
ACCURACY = "0.05"  # coarse: each run answers fast; the bounds are as rigorous as at any accuracy
FINE = "0.01"  # the reference grid: five times finer
DELTA, EPSILON, ALPHA, FPR, PRIOR = 1e-5, 0.5, 0.1, 0.1, 0.3
IMPLIED = (1.0, 0.2)  # --implies EPSILON,DELTA: G_1 has delta(1) = 0.1269 (implied), G_sqrt(3) 0.35 (not)
TOLERANCE = 1e-9  # relative slack of exact figures against a closed form (both are floats)


@dataclass(frozen=True)
class Kind:
    """A spec of one kind, its witness W (a spec gdpcli accounts, or "G_1" for the closed form), and
    whether W is the mechanism itself or any mechanism the spec admits ("both" sides checked) or only
    one the worst case dominates ("pessimistic" side only)."""

    spec: str
    witness: str
    sides: str


def _rdp_file() -> str:
    """G_1's Renyi curve D_alpha = alpha / 2 as a CSV (an rdp:file= input)."""
    path = Path(__file__).parent / "data" / "rdp_g1.csv"
    return f"rdp:file={path}"


KINDS = {
    "gdp": Kind("gdp:mu=1", "G_1", "both"),
    "gaussian": Kind("gaussian:sigma=1", "G_1", "both"),
    "laplace": Kind("laplace:b=1", "laplace:b=1", "both"),
    "dp": Kind("dp:eps=1,delta=1e-6", "dp:eps=1,delta=1e-6", "both"),
    "rr": Kind("rr:keep=0.75", "rr:keep=0.75", "both"),
    "rdp": Kind("rdp:alpha=8,eps=4", "G_1", "pessimistic"),
    "zcdp": Kind("zcdp:rho=0.5", "G_1", "pessimistic"),
    "dgauss": Kind("dgauss:sigma=1", "dgauss:sigma=1", "both"),
    "shuffle": Kind("shuffle:eps0=1,n=1000", "shuffle:eps0=1,n=1000", "pessimistic"),
    "shuffle-rr": Kind("shuffle-rr:eps0=1,n=1000", "shuffle-rr:eps0=1,n=1000", "pessimistic"),
    "tradeoff-file": Kind(f"tradeoff:file={ROOT / 'examples' / 'tradeoff_g1.csv'}", "G_1", "both"),
    "profile-file": Kind(f"profile:file={ROOT / 'examples' / 'profile_g1.csv'}", "G_1", "both"),
    "rdp-file": Kind(_rdp_file(), "G_1", "pessimistic"),
}

GENERAL_GROUP = ("dp:eps=1,delta=1e-6", "rr:keep=0.75", "shuffle:eps0=1,n=1000", "shuffle-rr:eps0=1,n=1000")
"""Witnesses whose group gdpcli bounds by GDP paper Thm 3 only (convert --group; compose refuses)."""

WRAPPERS = ("single", "times", "long", "poisson", "fixed", "mixed", "group", "select")
"""single: one step; times: 3-fold; long: 20-fold (composed by one FFT power, core/pld/power.py);
poisson / fixed: 3 steps subsampled at 0.1; mixed: with gaussian:sigma=2 composed; group: --group 2;
select: the 3-fold run repeated a geometric number of times (mean 2), the best run released (RDP only; no
witness: the best of K runs need not lose more than one run, so only consistency and refusals are
checked)."""
SELECT_UNTRIED = ("shuffle", "shuffle-rr")
"""Kinds the select wrapper leaves out: their RDP curve costs 0.1 s an order, and a selection evaluates
some 300 orders a command (minutes for the five queries)."""

MIXED_WITH = "gaussian:sigma=2"


def wrapped(spec: str, wrapper: str) -> tuple[list[str], list[str]]:
    """(specs, extra options) of a spec under a wrapper."""
    if wrapper == "times":
        return [f"{spec},times=3"], []
    if wrapper == "long":
        return [f"{spec},times=20"], []
    if wrapper in ("poisson", "fixed"):
        return [f"{spec},p=0.1,sampling={wrapper},times=3"], []
    if wrapper == "mixed":
        return [spec, MIXED_WITH], []
    if wrapper == "group":
        return [spec], ["--group", "2"]
    if wrapper == "select":
        return [f"{spec},times=3,select=geometric:mean=2"], []
    return [spec], []


# --------------------------------------------------------------------------------------------------------
# Running the real command
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str

    def rows(self) -> list[dict[str, Any]]:
        """The JSON rows printed (a budget exceeded, exit 3, and an undecided --implies, exit 1, print
        them too)."""
        return json.loads(self.stdout)["rows"] if self.stdout.strip() else []


@functools.cache
def gdpcli(*args: str) -> Outcome:
    """The real CLI in-process (cached: the harness and its references ask some runs twice)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run([*args, "-f", "json"])
    return Outcome(code, out.getvalue(), err.getvalue())


# --------------------------------------------------------------------------------------------------------
# References: [low, high] around the witness's value of a quantity at a query
# --------------------------------------------------------------------------------------------------------

Interval = tuple[float, float]


def _exact(value: float) -> Interval:
    return float(value) * (1 - TOLERANCE) - 1e-300, float(value) * (1 + TOLERANCE) + 1e-300


class Gaussian:
    """G_mu in closed form (GDP paper Cor. 1, Def. 2): delta(eps) = Phi(-eps/mu + mu/2) - e^eps
    Phi(-eps/mu - mu/2), beta(alpha) = Phi(Phi^-1(1 - alpha) - mu), alpha* = Phi(-mu/2), written with
    scipy's normal distribution, independently of gdpcli's kernels."""

    def __init__(self, mu: float) -> None:
        self.mu = mu

    def delta(self, epsilon: float) -> Interval:
        mu = self.mu
        return _exact(norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2))

    def epsilon(self, delta: float) -> Interval:
        from scipy.optimize import brentq

        root = brentq(lambda e: self.delta(e)[0] / (1 - TOLERANCE) - delta, 0.0, 100.0, xtol=1e-14)
        return _exact(root)

    def beta(self, alpha: float) -> Interval:
        return _exact(norm.cdf(norm.ppf(1 - alpha) - self.mu))

    def equal_error(self) -> Interval:
        return _exact(norm.cdf(-self.mu / 2))

    def mu_value(self) -> Interval:
        return _exact(self.mu)


class Fine:
    """A witness accounted by gdpcli itself on a much finer grid (FINE): the bracket it certifies at every
    point the harness needs, from one compose run (`prepare`)."""

    def __init__(self, specs: tuple[str, ...], options: tuple[str, ...]) -> None:
        self.specs, self.options = specs, options
        self.known: dict[tuple[str, float], Interval] = {}

    def prepare(self, points: dict[str, set[float]]) -> None:
        """Account the witness at every point ({"delta": deltas, "epsilon": ..., "alpha": ...})."""
        asked = [
            part for given, values in points.items() if values for part in (f"--{given}", _listed(values))
        ]
        if not asked:
            return
        outcome = gdpcli("compose", *self.specs, *self.options, *asked, "--accuracy", FINE)
        assert outcome.code == 0, f"reference compose {self.specs} {asked}: {outcome.stderr}"
        for row in outcome.rows():
            given = next(key for key in row if key in ANSWERS)
            value = row[ANSWERS[given]]
            low, high = self.known.get((given, row[given]), (-math.inf, math.inf))
            low = max(low, _low(value, row["guarantee"]))
            self.known[(given, row[given])] = (low, min(high, _high(value, row["guarantee"])))

    def delta(self, epsilon: float) -> Interval:
        return self.known[("epsilon", epsilon)]

    def epsilon(self, delta: float) -> Interval:
        return self.known[("delta", delta)]

    def beta(self, alpha: float) -> Interval:
        return self.known[("alpha", alpha)]

    def equal_error(self) -> None:
        return None  # checked through beta at the figure (equal_error_holds)

    def mu_value(self) -> None:
        return None


def _listed(values: set[float]) -> str:
    return ",".join(repr(v) for v in sorted(values))


def _low(value: float | None, guarantee: str) -> float:
    """What a reference row says the value is at least (an exact figure up to TOLERANCE)."""
    value = math.inf if value is None else value
    return {"exact": _exact(value)[0], "lower_bound": value}.get(guarantee, -math.inf)


def _high(value: float | None, guarantee: str) -> float:
    """What a reference row says the value is at most."""
    value = math.inf if value is None else value
    return {"exact": _exact(value)[1], "upper_bound": value}.get(guarantee, math.inf)


def witness(kind: Kind, wrapper: str) -> Gaussian | Fine | None:
    """The reference of a kind under a wrapper: G_1's closed forms composed, or W on a fine grid; none for
    the group of a mechanism without a closed-form group version (GDP paper Thm 3's bound is all there
    is: gdpcli's own, on its own grid)."""
    if (kind.witness in GENERAL_GROUP and wrapper == "group") or wrapper == "select":
        return None
    if kind.witness == "G_1" and wrapper in ("single", "times", "long", "mixed", "group"):
        mu = {"single": 1.0, "times": math.sqrt(3.0), "long": math.sqrt(20.0), "mixed": math.sqrt(1.25)}.get(
            wrapper, 2.0
        )
        return Gaussian(mu)
    spec = "gaussian:sigma=1" if kind.witness == "G_1" else kind.witness
    specs, options = wrapped(spec, wrapper)
    return Fine(tuple(specs), tuple(options))


# --------------------------------------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------------------------------------

GROWS = {"epsilon", "delta", "tpr", "advantage", "bayes_success", "mu"}
"""Quantities a less private mechanism makes larger (the rest, beta and equal_error, smaller)."""


@dataclass(frozen=True)
class Figure:
    """One labelled answer of a run: quantity at query (a point such as ("delta", 1e-5)) = value."""

    quantity: str
    query: tuple[str, float | None]
    value: float
    guarantee: str
    method: str
    where: str


def consistent(figures: list[Figure]) -> list[str]:
    """Problems of kind 1: at each (quantity, query), every lower bound (or exact figure) is at most every
    upper bound (or exact figure), up to TOLERANCE."""
    problems = []
    for key in {(f.quantity, f.query) for f in figures}:
        same = [f for f in figures if (f.quantity, f.query) == key]
        lows = [f for f in same if f.guarantee in ("lower_bound", "exact")]
        highs = [f for f in same if f.guarantee in ("upper_bound", "exact")]
        for low in lows:
            for high in highs:
                if low.value > high.value * (1 + TOLERANCE) + 1e-15:
                    problems.append(
                        f"{low.where}: {key[0]} at {key[1]}: {low.guarantee} {low.value!r} ({low.method}) "
                        f"above {high.guarantee} {high.value!r} ({high.method})"
                    )
    return problems


def on_its_side(figure: Figure, reference: Interval, sides: str) -> str | None:
    """Problem of kind 2, if any: the figure is on the wrong side of the witness's interval."""
    low, high = reference
    grows = figure.quantity in GROWS
    pessimistic = (figure.guarantee == "upper_bound") == grows
    if figure.guarantee == "approximation" or (sides == "pessimistic" and not pessimistic):
        return None
    what = f"{figure.where}: {figure.guarantee} {figure.quantity} {figure.value!r}"
    if figure.guarantee in ("upper_bound", "exact") and figure.value < low:
        return f"{what} below the witness's {low!r}"
    if figure.guarantee in ("lower_bound", "exact") and figure.value > high:
        return f"{what} above the witness's {high!r}"
    return None


def figures_of(outcome: Outcome, where: str) -> list[Figure]:
    """The labelled figures of a compose / convert / risk run."""
    found = []
    for row in outcome.rows():
        if "measure" in row:  # risk
            query = {"tpr": ("fpr", row.get("fpr")), "bayes_success": ("prior", row.get("prior"))}.get(
                row["measure"], ("", None)
            )
            found.append(Figure(row["measure"], query, row["value"], row["guarantee"], row["method"], where))
            continue
        labels = (row["guarantee"], row["method"], where)
        given = next((key for key in row if key in ANSWERS), None)  # the query column comes first
        if given is not None:
            quantity = ANSWERS[given]
            value = math.inf if row[quantity] is None else row[quantity]
            found.append(Figure(quantity, (given, row[given]), value, *labels))
        for quantity in ("equal_error", "mu"):
            if quantity in row:
                found.append(Figure(quantity, ("", None), row[quantity], *labels))
    return found


ANSWERS = {"delta": "epsilon", "epsilon": "delta", "alpha": "beta"}
"""The answer of each query column (compose and convert rows put the query first)."""


def reference_of(figure: Figure, ref: Gaussian | Fine) -> Interval | None:
    """The witness's interval for the figure's quantity at its query (None where none is known)."""
    at = figure.query[1]
    if figure.quantity == "epsilon":
        return ref.epsilon(at)
    if figure.quantity == "delta":
        return ref.delta(at)
    if figure.quantity == "beta":
        return ref.beta(at)
    if figure.quantity == "tpr":
        low, high = ref.beta(at)
        return 1 - high, 1 - low
    if figure.quantity == "advantage":
        return ref.delta(0.0)
    if figure.quantity == "bayes_success":
        low, high = ref.delta(math.log((1 - at) / at))
        return 1 - at + at * low, 1 - at + at * high
    if figure.quantity == "equal_error":
        return ref.equal_error()
    if figure.quantity == "mu":
        return ref.mu_value()
    raise AssertionError(f"no reference for {figure.quantity}")


def equal_error_holds(figure: Figure, ref: Gaussian | Fine) -> str | None:
    """A bound a on alpha* = f(alpha*) against the witness's f: a lower bound needs f(a) >= a possible
    (beta's upper end at a is >= a), an upper bound f(a) <= a possible (beta's lower end <= a)."""
    if not isinstance(ref, Fine) or figure.guarantee == "approximation" or figure.value <= 0:
        return None
    low, high = ref.beta(figure.value)
    at_most, at_least = _exact(figure.value)
    if figure.guarantee in ("lower_bound", "exact") and high < at_most:
        return f"{figure.where}: alpha* {figure.guarantee} {figure.value!r}, but W's f there is <= {high!r}"
    if figure.guarantee in ("upper_bound", "exact") and low > at_least:
        return f"{figure.where}: alpha* {figure.guarantee} {figure.value!r}, but W's f there is >= {low!r}"
    return None


# --------------------------------------------------------------------------------------------------------
# Queries, and the combinations that are refused (and why)
# --------------------------------------------------------------------------------------------------------

QUERIES = ("compose", "risk", "equal-error", "mu", "implies")


def commands(specs: list[str], options: list[str], query: str) -> list[str] | None:
    """The command line of a query (None where the command takes one spec and there are several)."""
    accuracy = ["--accuracy", ACCURACY]
    if query == "compose":
        asked = ["--delta", repr(DELTA), "--epsilon", repr(EPSILON), "--alpha", repr(ALPHA)]
        return ["compose", *specs, *options, *asked, *accuracy]
    if query == "risk":
        return ["risk", *specs, *options, "--fpr", repr(FPR), "--prior", repr(PRIOR), *accuracy]
    if query == "mu":
        return ["compose", *specs, *options, "--to", "mu"]
    if len(specs) > 1:
        return None
    if query == "equal-error":
        return ["convert", specs[0], *options, "--to", "equal-error", *accuracy]
    return ["convert", specs[0], *options, "--implies", f"{IMPLIED[0]},{IMPLIED[1]}", *accuracy]


REFUSED: dict[tuple[str, str, str], str] = {}
"""(kind, wrapper, query) -> a phrase of the one-line refusal expected (exit 1 or 2), where gdpcli has no
answer; filled in below by rule, one rule a reason."""


def _refusals() -> None:
    """The rules of REFUSED, one a reason."""
    renyi = ("rdp", "zcdp", "rdp-file")
    no_group = ("dp", "rr", *renyi, "shuffle", "shuffle-rr", "tradeoff-file", "profile-file")
    for kind in renyi:  # fixed-size batches need an RDP bound of C_p; Thm 3 needs a trade-off function
        for query in QUERIES:
            REFUSED[(kind, "fixed", query)] = "RDP of fixed-size batches"
        for query in ("equal-error", "implies"):
            REFUSED[(kind, "group", query)] = "group privacy needs a single closed-form mechanism"
    for kind in ("rdp", "rdp-file"):  # amplification needs the curve at every order
        for query in QUERIES:
            REFUSED[(kind, "poisson", query)] = "no curve beyond its listed orders"
    for kind in KINDS:  # a mu is stated where it is exact: GDP, and GDPT Thm 5.1 for one pure-DP step
        for wrapper in WRAPPERS:
            if kind == "dp" and wrapper not in ("mixed", "group"):
                REFUSED[(kind, wrapper, "mu")] = "no finite mu"
            elif kind not in ("gdp", "gaussian") or wrapper in ("poisson", "fixed"):
                REFUSED[(kind, wrapper, "mu")] = "not exactly GDP"
    del REFUSED[("rr", "single", "mu")]
    for kind in KINDS:  # a selection is accounted in RDP only: no mu, and no curve no answer
        REFUSED[(kind, "select", "mu")] = "not exactly GDP"
        if kind in ("dp", "tradeoff-file", "profile-file"):
            for query in (q for q in QUERIES if q != "mu"):  # mu: not exactly GDP, above
                REFUSED[(kind, "select", query)] = "no RDP curve"
    for kind in no_group:  # compose composes closed-form group versions only (convert --group: Thm 3)
        for query in ("compose", "risk", "mu"):
            REFUSED[(kind, "group", query)] = "no closed-form group version"


_refusals()


def _refused(outcome: Outcome, expected: str | None, where: str) -> list[str]:
    """Problems with a refusal: one that was not expected, an expected one that did not happen, or one
    that is not a clean one-line message with the documented exit code."""
    if outcome.code in (0, 3) or "error: undecided whether" in outcome.stderr:
        return (
            [f"{where}: expected a refusal naming {expected!r}, got exit {outcome.code}"] if expected else []
        )
    message = outcome.stderr.strip()
    problems = []
    if outcome.code not in (1, 2) or "\n" in message or not message.startswith("gdpcli: error:"):
        problems.append(f"{where}: not a clean refusal (exit {outcome.code}): {message[:300]}")
    if expected is None:
        problems.append(f"{where}: refused unexpectedly: {message[:300]}")
    elif expected.lower() not in message.lower():
        problems.append(f"{where}: refused for another reason than {expected!r}: {message[:300]}")
    return problems


def implication_holds(outcome: Outcome, ref: Gaussian | Fine, sides: str, where: str) -> list[str]:
    """--implies E,D: "yes" claims delta(E) <= D (pessimistic: W's delta(E) must be <= D), "no" claims
    delta(E) > D (optimistic: checked where W is the mechanism or any it admits)."""
    rows = outcome.rows()
    if not rows:
        return []
    verdict = rows[0]["implied"]
    low, high = ref.delta(IMPLIED[0])
    if verdict == "yes" and low > IMPLIED[1]:
        return [f"{where}: proven (E, D)-DP, but the witness has delta(E) >= {low!r} > {IMPLIED[1]}"]
    if verdict == "no" and sides == "both" and high <= IMPLIED[1]:
        return [f"{where}: disproven (E, D)-DP, but the witness has delta(E) <= {high!r} <= {IMPLIED[1]}"]
    return []


def _points(figures: list[Figure]) -> dict[str, set[float]]:
    """The points at which the witness must be known to check the figures (and the --implies epsilon)."""
    points: dict[str, set[float]] = {"delta": set(), "epsilon": {IMPLIED[0]}, "alpha": set()}
    for figure in figures:
        given, at = figure.query
        if figure.quantity in ("epsilon", "delta", "beta"):
            points[given].add(at)
        elif figure.quantity == "tpr":
            points["alpha"].add(at)
        elif figure.quantity == "advantage":
            points["epsilon"].add(0.0)
        elif figure.quantity == "bayes_success":
            points["epsilon"].add(math.log((1 - at) / at))
        elif figure.quantity == "equal_error" and figure.value > 0:
            points["alpha"].add(figure.value)
    return points


def _against(figures: list[Figure], ref: Gaussian | Fine, sides: str) -> list[str]:
    """Problems of kind 2 among the figures."""
    problems = []
    for figure in figures:
        if figure.quantity == "equal_error":
            problem = equal_error_holds(figure, ref)
        else:
            interval = reference_of(figure, ref)
            problem = None if interval is None else on_its_side(figure, interval, sides)
        if problem:
            problems.append(problem)
    return problems


@pytest.mark.parametrize(
    "wrapper", [pytest.param(w, marks=pytest.mark.slow) if w == "select" else w for w in WRAPPERS]
)
@pytest.mark.parametrize("kind", KINDS)
def test_every_label_is_true(kind: str, wrapper: str) -> None:
    if wrapper == "select" and kind in SELECT_UNTRIED:
        pytest.skip(f"{kind}: too slow under select (SELECT_UNTRIED)")
    spec = KINDS[kind]
    specs, options = wrapped(spec.spec, wrapper)
    problems: list[str] = []
    answered: list[tuple[str, Outcome, list[Figure], str]] = []
    for query in QUERIES:
        line = commands(specs, options, query)
        if line is None:
            continue
        where = "gdpcli " + " ".join(line)
        outcome = gdpcli(*line)
        problems += _refused(outcome, REFUSED.get((kind, wrapper, query)), where)
        found = figures_of(outcome, where)
        problems += consistent(found)
        answered.append((query, outcome, found, where))
    ref = witness(spec, wrapper)
    if ref is not None:
        if isinstance(ref, Fine):
            ref.prepare(_points([figure for _, _, found, _ in answered for figure in found]))
        for query, outcome, found, where in answered:
            problems += _against(found, ref, spec.sides)
            if query == "implies":
                problems += implication_holds(outcome, ref, spec.sides, where)
    assert not problems, "\n".join(problems)


def test_the_harness_sees_a_swap() -> None:
    """The checks are not vacuous: a lower bound above an upper bound, an upper bound on beta below the
    witness's beta, and a disproven refusal are reported; the same figures labelled the right way are not."""
    swapped = [
        Figure("beta", ("alpha", 0.2), 0.763, "upper_bound", "pld", "x"),
        Figure("beta", ("alpha", 0.2), 0.769, "lower_bound", "pld", "x"),
    ]
    assert consistent(swapped)
    assert not consistent(
        [replace(swapped[0], guarantee="lower_bound"), replace(swapped[1], guarantee="upper_bound")]
    )
    g1 = Gaussian(1.0).beta(0.2)  # G_1(0.2) = 0.43708
    assert on_its_side(Figure("beta", ("alpha", 0.2), 0.437, "upper_bound", "pld", "x"), g1, "both")
    assert not on_its_side(Figure("beta", ("alpha", 0.2), 0.437, "lower_bound", "pld", "x"), g1, "both")
    assert not on_its_side(Figure("beta", ("alpha", 0.2), 0.4371, "upper_bound", "pld", "x"), g1, "both")
    assert on_its_side(
        Figure("tpr", ("fpr", 0.2), 0.562, "upper_bound", "pld", "x"), (0.56292, 0.56292), "both"
    )
    refused = Outcome(1, "", "gdpcli: error: the composition is not exactly GDP (use --method clt)\n")
    assert _refused(refused, None, "x") and not _refused(refused, "not exactly GDP", "x")
    assert _refused(Outcome(0, '{"rows": []}', ""), "not exactly GDP", "x")
