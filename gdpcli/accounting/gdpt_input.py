"""Inputs of `gdpcli gdpt-identify` as privacy profiles: mechanism specs, the GDPT paper's built-ins, CSV.

A function input becomes `Profiles`: an upper profile (>= the mechanism's delta(eps) everywhere) and a
lower one (<=); both are the same object when the profile is known exactly (closed form, binomial, the
built-ins as stated). The staircase bounds of the GDPT (gdpcli.core.gdpt.identify) on the upper profile
give a rigorous mu_upper, on the lower profile a rigorous mu_lower. A CSV input becomes a
`SampledProfile` for gdpcli.core.gdpt.identify_sampled.

Which profile, by input (GDPT paper Sec. 2, 3, 4; GDP paper Cor. 1, 2, eq. 10-12):
- gdp/gaussian, any times: exactly mu-GDP with mu = sqrt(times) mu_1 (GDP paper Cor. 2);
- laplace, dp (times 1): closed forms; dp:eps=E,delta=D composed: binomial formula (exact);
- anything else (subsampled, composed Laplace): the PLD engine's pessimistic and optimistic profiles
  (gdpcli.core.pld), widened by its round-off estimate, so both are rigorous;
- family:A=..,B=..,sigma=.. and icea:m=..,n=..: the paper's naive profiles, optionally refined (App. B).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from gdpcli import accounting
from gdpcli.accounting.accountants import Binomial, ExactGDP, ExactSingle
from gdpcli.core import gdp, gdpt, pld
from gdpcli.core.gdpt import GdptResult, PrivacyProfile
from gdpcli.errors import InputError, parameter
from gdpcli.events import Repeated
from gdpcli.events.spec import parse_spec
from gdpcli.guarantees import Guarantee, Side, bound
from gdpcli.textfiles import read_text

BUILTINS: dict[str, tuple[str, ...]] = {"family": ("a", "b", "sigma"), "icea": ("m", "n")}
BUILTIN_HELP = "built-ins: family:A=2,B=1,sigma=2 (delta = B exp(-(sigma eps / A)^2)), icea:m=20,n=4"
DEFAULT_EPS_HEAD = 100.0
RIGOROUS = ("exact", "upper_bound")
GUARANTEES = ("exact", "upper_bound", "lower_bound", "approximation")
_PLD_EPS_HEAD_LEVEL = 1e-9  # PLD inputs: the head ends where the upper profile falls to this (or 1e3 x floor)
PLD_ACCURACY = 1e-4  # relative accuracy of the first PLD grid (pld.initial_interval)
MAX_HALVINGS = 4  # PLD inputs: halve the grid interval at most this often to reach --precision
_UNDERFLOW = 1e-300  # a zero right after a delta below this may be a floating-point underflow


@dataclass(frozen=True)
class Profiles:
    """Upper and lower privacy profiles of one input (the same object when exact).

    source: closed-form | binomial | pld | builtin | refined. tail_method overrides the label of the
    profile's tail limit (e.g. "upper_bound" when only a bound on it is known). eps_head is the head
    to measure when the user gives none. finer: the same input on a finer grid (PLD), else None.
    sup_bound: a bound on the GDPT G(eps) valid at every eps (see _sup_bound), or None.
    vanishes_beyond: an eps beyond which the true profile is 0 (pure DP), or None.
    """

    name: str
    upper: PrivacyProfile
    lower: PrivacyProfile
    source: str
    eps_head: float = DEFAULT_EPS_HEAD
    tail_method: str | None = None
    notes: tuple[str, ...] = ()
    finer: Callable[[], Profiles] | None = None
    sup_bound: float | None = None
    vanishes_beyond: float | None = None
    bound_only: bool = False
    """The upper profile bounds a mechanism known through a bound only: its tail can show GDP, not its
    absence (a "not GDP" verdict from it becomes undetermined)."""

    @property
    def exact(self) -> bool:
        return self.upper is self.lower


@dataclass(frozen=True)
class SampledProfile:
    """(epsilon, delta) samples read from a CSV: strictly increasing epsilons, deltas upper bounds.

    guarantee is "exact" when every used row was exact (or the CSV has no guarantee column),
    else "upper_bound"; lower holds (epsilon, delta) lower-bound samples when the CSV has them.
    """

    epsilon: np.ndarray
    delta: np.ndarray
    guarantee: str
    lower: tuple[np.ndarray, np.ndarray] | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def upper(self) -> PrivacyProfile:
        """The samples' safe upper profile between them (gdpt.sampled_profile)."""
        return gdpt.sampled_profile(self.epsilon, self.delta)

    @property
    def staircase_guarantee(self) -> Guarantee:
        """The label of the staircase's mu_lower cells: a lower bound from exact samples, else an
        approximation (upper-bound samples give it no rigorous direction)."""
        return bound("mu", Side.OPTIMISTIC if self.guarantee == "exact" else Side.APPROXIMATE)


# ---------------------------------------------------------------------------------------------------------
# Functions: specs and built-ins


def is_sampled(source: str) -> bool:
    """Whether INPUT names a CSV (a path or `-`) rather than a spec or built-in (KIND:key=value)."""
    from pathlib import Path

    return source == "-" or Path(source).is_file() or ":" not in source


def from_text(text: str, refine: bool = False) -> Profiles:
    """Profiles of a spec (gdpcli.events.spec) or a built-in (family:..., icea:...); --refine: built-ins."""
    kind = text.strip().partition(":")[0].strip().lower()
    if kind in BUILTINS:
        return builtin(text, refine)
    if refine:
        raise InputError(
            f"{parameter('refine')} applies to the built-in families family: and icea:",
            "a mechanism's own privacy profile already satisfies every implication of Thm 3.1",
        )
    return from_spec(parse_spec(text))


def builtin(text: str, refine: bool = False) -> Profiles:
    """The GDPT paper's naive profiles (Sec. 2): the noise family and ICEA; refined by App. B on request."""
    kind, _, body = text.strip().partition(":")
    kind = kind.strip().lower()
    allowed = BUILTINS[kind]
    values: dict[str, float] = {}
    for item in body.split(","):
        key, sep, raw = (part.strip() for part in item.partition("="))
        key = key.lower()
        if not sep or key not in allowed or key in values:
            problem = "repeated" if key in values else "unknown or malformed"
            raise InputError(
                f"{text!r}: {problem} entry {item.strip()!r}", f"{kind} takes {', '.join(allowed)}"
            )
        try:
            values[key] = float(raw)
        except ValueError:
            raise InputError(f"{text!r}: {key}={raw!r} is not a number") from None
        if not (math.isfinite(values[key]) and values[key] > 0):
            raise InputError(f"{text!r}: {key}={raw} is out of range", "allowed: a positive finite number")
    missing = [key for key in allowed if key not in values]
    if missing:
        raise InputError(f"{text!r}: missing {', '.join(missing)}", BUILTIN_HELP)
    if kind == "family":
        profile = gdpt.noise_family_profile(values["a"], values["b"], values["sigma"])
    else:
        profile = gdpt.icea_profile(values["m"], values["n"])
    if refine:
        profile = gdpt.refined(profile)
    return Profiles(text, profile, profile, "refined" if refine else "builtin")


def from_spec(spec: Repeated) -> Profiles:
    """Exact profiles where accounting has a closed form (gdpcli.accounting.exact_accountant), else the
    PLD engine's rigorous upper and lower profiles."""
    if not spec.mechanism.has_tradeoff:
        spec.mechanism.gdpt_profile()  # raises, with a hint
    exact = accounting.exact_accountant([spec])
    if exact is not None and exact.method == ExactGDP.method:
        return _exact(spec, gdpt.gdp_profile(exact.mu_total), "closed-form")
    if exact is not None and exact.method == ExactSingle.method:
        return _exact(spec, spec.mechanism.gdpt_profile(), "closed-form")
    if exact is not None and exact.method == Binomial.method:
        return _exact(spec, _binomial_profile(spec.describe(), exact.pld), "binomial")
    components = [(spec.step.dominating_pair(), spec.times)]
    # gdpt refines by halving only (MAX_HALVINGS), so it starts on the model's own interval
    return _pld_profiles(spec, components, pld.initial_interval(components, PLD_ACCURACY, cheap=False))


def _exact(spec: Repeated, profile: PrivacyProfile, source: str) -> Profiles:
    return Profiles(spec.describe(), profile, profile, source, **_beyond_the_head(spec))


def _pure_epsilon(spec: Repeated) -> float | None:
    """The pure-DP epsilon of the whole event when every step is pure DP (events.Repeated.pure_epsilon),
    raised by 1e-12 relative to cover its rounding. None otherwise."""
    pure = spec.pure_epsilon
    return None if pure is None else pure * (1.0 + 1e-12)


def _beyond_the_head(spec: Repeated) -> dict[str, float | None]:
    """What is known about G beyond any head, for gdpt.mechanism_interval:

    - sup_bound, a bound on G at every eps: GDP / Gaussian composed times-fold is exactly sqrt(times)
      mu-GDP (GDP paper Cor. 2), and subsampling never hurts (C_p(f) >= f, Sec. 4); pure eps-DP implies
      mu-GDP with GDPT Thm 5.1's mu; (eps, delta)-DP with delta > 0 is not GDP (none);
    - vanishes_beyond: a pure eps-DP mechanism's profile is 0 for every eps >= its eps.
    """
    pure = _pure_epsilon(spec)
    if pure is not None:
        return {"sup_bound": float(gdp.pure_dp_mu(pure)), "vanishes_beyond": pure}
    mu = spec.mechanism.gdp_mu
    return {"sup_bound": None if mu is None else mu * math.sqrt(spec.times), "vanishes_beyond": None}


def _log(values: np.ndarray) -> np.ndarray:
    """log with log(0) = -inf and no warning."""
    with np.errstate(divide="ignore"):
        return np.log(values)


def _binomial_profile(name: str, discrete: pld.DiscretePLD) -> PrivacyProfile:
    """The exact profile of k-fold (eps0, delta0)-DP (accounting.Binomial): 0 beyond k eps0 for pure DP
    (tail limit 0), at least the delta part 1 - (1 - delta0)^k > 0 otherwise (not GDP, Thm 4.3)."""
    tail = 0.0 if discrete.infinity_mass == 0.0 else math.inf
    return PrivacyProfile(name, lambda eps: _log(np.asarray(discrete.delta(eps))), tail_limit=tail)


def _lower_composition(spec: Repeated, composed: pld.Composed, interval: float) -> pld.Composed | None:
    """The composition whose optimistic PLDs bound the mechanism from below: the same one when the step's
    profile is its own, its lower pair's when it has one (Mechanism.lower_pair), else None."""
    if spec.step.profile_is_exact:
        return composed
    pair = spec.step.lower_pair()
    return None if pair is None else pld.compose_all([(pair, spec.times)], interval, pld.MAX_POINTS)


def _pld_profiles(spec: Repeated, components: pld.Components, interval: float) -> Profiles:
    """The PLD engine's composed pessimistic / optimistic profiles, widened by the FFT round-off estimate
    (both rigorous), max over the add/remove directions. The default head ends where the upper profile
    falls to max(1e-9, 1e3 x its floor) (mass at infinity from truncation plus round-off): beyond that
    the upper profile is dominated by the engine's own error, and its GDPT would grow without meaning."""
    composed = pld.compose_all(components, interval, pld.MAX_POINTS)
    round_off = composed.round_off()
    bottom = _lower_composition(spec, composed, interval)

    def upper(eps: np.ndarray) -> np.ndarray:
        values = np.max([np.asarray(p.delta(eps)) for p in composed.upper], axis=0) + round_off
        return _log(np.minimum(values, 1.0))

    def lower(eps: np.ndarray) -> np.ndarray:
        if bottom is None:  # the mechanism is known through an upper bound only: nothing from below
            return _log(np.zeros(np.shape(eps)))
        values = np.max([np.asarray(p.delta(eps)) for p in bottom.lower], axis=0) - bottom.round_off()
        return _log(np.maximum(values, 0.0))

    tail_limit, tail_method = spec.tail_limit()
    floor = max(p.infinity_mass for p in composed.upper) + round_off
    level = max(_PLD_EPS_HEAD_LEVEL, 1e3 * floor)
    eps_head = min(max(float(p.epsilon(level)) for p in composed.upper), DEFAULT_EPS_HEAD)
    if not eps_head > 0.0:
        eps_head = max(float(max(p.losses[-1] for p in composed.upper)), interval)
    return Profiles(
        spec.describe(),
        PrivacyProfile(f"upper {spec.describe()}", upper, tail_limit),
        PrivacyProfile(f"lower {spec.describe()}", lower, tail_limit),
        "pld",
        eps_head,
        tail_method,
        (
            f"pld: no closed form for {spec.describe()}: mu_upper from the engine's rigorous upper profile, "
            f"mu_lower from its rigorous lower profile (grid interval {interval:.3g})",
        ),
        lambda: _pld_profiles(spec, components, interval / 2),
        bound_only=not spec.step.profile_is_exact,
        **_beyond_the_head(spec),
    )


def identify(profiles: Profiles, eps_head: float | None, precision: float) -> tuple[GdptResult, Profiles]:
    """gdpt.identify (GDPT Thm 4.3-4.6) on the input: for an inexact one on the upper and lower profiles
    (see _bracket), on finer PLD grids (at most MAX_HALVINGS halvings) until the width is <= precision.
    Returns the result and the profiles it used (their notes say which grid)."""
    head = profiles.eps_head if eps_head is None else eps_head
    result = _bracket(profiles, head, precision)
    for _ in range(MAX_HALVINGS):
        if result.slack <= precision or profiles.finer is None:
            break
        profiles = profiles.finer()
        result = _bracket(profiles, head, precision)
    return result, profiles


def _bracket(profiles: Profiles, eps_head: float, precision: float) -> GdptResult:
    """gdpt.identify on the upper profile; for an inexact input the mu_lower and the lower staircase come
    from the lower profile (mu_lower from its own run over the same head, the staircase's lower bounds
    on the upper run's cells as mu_GDP(left, delta_lower(right)), Thm 4.6). Inexact inputs run the
    staircase at half the precision, leaving the other half to the gap between the two profiles."""
    if profiles.exact:
        return _with_tail(gdpt.identify(profiles.upper, eps_head=eps_head, precision=precision), profiles)
    result = _with_tail(gdpt.identify(profiles.upper, eps_head=eps_head, precision=precision / 2), profiles)
    if profiles.bound_only and result.verdict == "not_gdp":
        result = replace(result, verdict="undetermined", tail_limit=None)
    from_lower = gdpt.identify(profiles.lower, eps_head=eps_head, precision=precision / 2)
    cells = result.staircase_eps
    right = np.append(cells[1:], result.eps_head)
    staircase_lower = gdpt.mu_bound(cells, profiles.lower.log_delta(right), "lower")
    return replace(result, mu_lower=from_lower.mu_lower, staircase_lower=staircase_lower)


def _with_tail(result: GdptResult, profiles: Profiles) -> GdptResult:
    """The result with the input's own label for its tail limit, if it has one."""
    return result if profiles.tail_method is None else replace(result, tail_method=profiles.tail_method)


# ---------------------------------------------------------------------------------------------------------
# CSV


def load_csv(source: str, eps_head: float | None = None) -> SampledProfile:
    """Read a privacy profile CSV from a path or `-` (stdin); see read_csv."""
    hint = "give a CSV with columns epsilon,delta, - for stdin, or a spec KIND:key=value"
    text = read_text(source, "gdpt-identify", hint)
    return read_csv(text, "stdin" if source == "-" else source, eps_head)


def _number(text: str, column: str, where: str, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"{where} line {line}: {column} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"{where} line {line}: {column} must be finite, got {text!r}")
    return value


def _rows(text: str, where: str) -> list[tuple[int, float, float, str, str]]:
    """(line, epsilon, delta, guarantee, method) per data row, every value checked."""
    reader = csv.reader(io.StringIO(text))
    header = next((row for row in reader if row), None)
    if header is None:
        raise InputError(f"{where} is empty", "need a CSV with columns epsilon,delta")
    names = [name.strip().lower() for name in header]
    for column in ("epsilon", "delta"):
        if column not in names:
            raise InputError(
                f"{where} line {reader.line_num}: no {column} column",
                "need columns epsilon,delta (others are ignored), e.g. from gdpcli convert --epsilon RANGE",
            )
    index = {name: names.index(name) for name in ("epsilon", "delta", "guarantee", "method") if name in names}
    rows = []
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        line = reader.line_num
        if len(row) != len(names):
            raise InputError(f"{where} line {line}: {len(row)} fields, the header has {len(names)}")
        epsilon = _number(row[index["epsilon"]], "epsilon", where, line)
        delta = _number(row[index["delta"]], "delta", where, line)
        if epsilon < 0:
            raise InputError(f"{where} line {line}: epsilon {epsilon!r} is negative", "need epsilon >= 0")
        if not 0.0 <= delta <= 1.0:
            raise InputError(f"{where} line {line}: delta {delta!r} is out of range", "allowed: [0, 1]")
        guarantee = row[index["guarantee"]].strip() if "guarantee" in index else "exact"
        if guarantee not in GUARANTEES:
            raise InputError(
                f"{where} line {line}: unknown guarantee {guarantee!r}", "allowed: " + ", ".join(GUARANTEES)
            )
        method = row[index["method"]].strip() if "method" in index else ""
        rows.append((line, epsilon, delta, guarantee, method))
    return rows


_ROUNDING = 1e-12  # a delta may exceed the previous row's by this much relative (floating-point noise)


def _check_increasing(rows: list[tuple[int, float, float, str, str]], where: str) -> None:
    """Within each (method, guarantee) block of a gdpcli CSV, epsilon must strictly increase and delta must
    not increase (a privacy profile is non-increasing, GDPT Sec. 2), beyond floating-point rounding."""
    last: dict[tuple[str, str], tuple[float, float]] = {}
    for line, epsilon, delta, guarantee, method in rows:
        key = (method, guarantee)
        if key in last:
            previous_epsilon, previous_delta = last[key]
            if epsilon <= previous_epsilon:
                raise InputError(
                    f"{where} line {line}: epsilon {epsilon!r} does not increase "
                    f"(previous {previous_epsilon!r})",
                    "a privacy profile lists strictly increasing epsilons",
                )
            if delta > previous_delta * (1.0 + _ROUNDING) + 1e-300:
                raise InputError(
                    f"{where} line {line}: delta {delta!r} at epsilon {epsilon!r} exceeds the previous row's "
                    f"{previous_delta!r}",
                    "a privacy profile is non-increasing in epsilon",
                )
        last[key] = (epsilon, delta)


def _merge(rows: list[tuple[int, float, float, str, str]]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct epsilons (sorted) and, per epsilon, the smallest delta (every row is a valid bound)."""
    epsilon = np.array([row[1] for row in rows])
    delta = np.array([row[2] for row in rows])
    distinct, where = np.unique(epsilon, return_inverse=True)
    smallest = np.full(distinct.size, np.inf)
    np.minimum.at(smallest, where, delta)
    return distinct, smallest


def _drop_underflow(epsilon: np.ndarray, delta: np.ndarray, notes: list[str]) -> tuple[np.ndarray, ...]:
    """Drop the rows from the first delta below 1e-300 on, unless it is a 0 right after a larger delta.

    Such a delta may have lost its digits to floating-point underflow (a subnormal, or exp(-800) written
    as 0): as a 0 it would claim a tail the profile does not have, as a subnormal it can put G above the
    truth and so spoil mu_lower. A 0 right after a delta >= 1e-300 is taken as a true zero.
    """
    tiny = np.flatnonzero(delta < _UNDERFLOW)
    if not tiny.size:
        return epsilon, delta
    cut = int(tiny[0])
    if delta[cut] == 0.0 and cut > 0:
        return epsilon, delta
    notes.append(
        f"dropped the rows from epsilon {float(epsilon[cut])!r} on: their deltas (from "
        f"{float(delta[cut]):.3g}) are below 1e-300, where floating-point underflow may have changed them"
    )
    return epsilon[:cut], delta[:cut]


def read_csv(text: str, where: str, eps_head: float | None = None) -> SampledProfile:
    """A privacy profile from CSV text with columns epsilon,delta (extra columns ignored).

    gdpcli's own CSV is accepted as is: rows labelled exact or upper_bound are used (several per epsilon:
    the smallest delta), lower_bound rows give a rigorous mu_lower, approximation rows are skipped; within
    each (method, guarantee) block epsilons must strictly increase. Without a guarantee column the rows
    are taken as the exact profile. eps_head drops the rows beyond it. InputError (with the line) for a
    missing column, a non-number, epsilon < 0, delta outside [0, 1], a non-increasing epsilon.
    """
    rows = _rows(text, where)
    _check_increasing(rows, where)
    notes: list[str] = []
    if eps_head is not None:
        beyond = sum(1 for row in rows if row[1] > eps_head)
        rows = [row for row in rows if row[1] <= eps_head]
        if beyond:
            notes.append(f"{parameter('eps_head')} {eps_head:g}: ignored {beyond} rows with a larger epsilon")
    used = [row for row in rows if row[3] in RIGOROUS]
    skipped = len(rows) - len(used)
    if not used:
        raise InputError(
            f"{where}: no rows labelled exact or upper_bound",
            "a GDP guarantee needs upper bounds on delta; compute the profile with a rigorous method",
        )
    if skipped:
        notes.append(
            f"skipped {skipped} lower_bound/approximation rows (only exact and upper_bound bound mu)"
        )
    epsilon, delta = _drop_underflow(*_merge(used), notes)
    if epsilon.size < 2:
        raise InputError(f"{where}: need at least two usable (epsilon, delta) rows, found {epsilon.size}")

    guarantee = "exact" if all(row[3] == "exact" for row in used) else "upper_bound"
    lower_rows = [row for row in rows if row[3] == "lower_bound" and row[1] <= epsilon[-1]]
    lower = _merge(lower_rows) if guarantee != "exact" and len(lower_rows) >= 2 else None
    return SampledProfile(epsilon, delta, guarantee, lower, notes)


def identify_sampled(profile: SampledProfile) -> tuple[GdptResult, Guarantee]:
    """gdpt.identify_sampled on the samples, and the label of its mu_lower for the mechanism.

    mu_lower = max_i mu_GDP(eps_i, delta_i) is a lower bound when the deltas are exact; from upper bounds
    it has no rigorous direction (label approximation) unless lower_bound samples give a rigorous one.
    """
    result = gdpt.identify_sampled(profile.epsilon, profile.delta)
    if profile.guarantee == "exact":
        return result, bound("mu", Side.OPTIMISTIC)
    if profile.lower is None:
        return result, bound("mu", Side.APPROXIMATE)
    mu_lower = gdpt.identify_sampled(*profile.lower).mu_lower
    return replace(result, mu_lower=mu_lower), bound("mu", Side.OPTIMISTIC)


def rectified_mu(result: GdptResult, upper: PrivacyProfile, precision: float) -> float:
    """mu of the clipped and rectified mechanism (GDPT Thm 4.7, Laplace scale (y+ - y-) / eps_head): the
    head's certified mu_upper as the theorem states, lowered to the certified mu_upper of the rectified
    profile (gdpt.rectified: vanishes at eps_head, so its head bound holds at every eps) where smaller."""
    rectified = gdpt.identify(gdpt.rectified(upper, result.eps_head), result.eps_head, precision)
    return min(result.mu_upper, rectified.mu_upper)


def mechanism_interval(result: GdptResult, given: Profiles | None) -> tuple[float, float]:
    """The mechanism's mu interval (gdpt.mechanism_interval) from the head's result and what the input
    knows beyond any head (sup_bound, vanishes_beyond; nothing for sampled CSV profiles)."""
    beyond = {} if given is None else {"sup_bound": given.sup_bound, "vanishes_beyond": given.vanishes_beyond}
    return gdpt.mechanism_interval(result, **beyond)
