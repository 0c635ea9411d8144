"""The spec language: one shell word `KIND:key=value,...[xN]` -> an immutable event.

The kinds and their keys are the mechanisms' own (events.kinds.MECHANISMS; `gdpcli compose --help` lists
them), e.g. gdp:mu=0.5, gaussian:sigma=2[,sens=1], laplace:b=1[,sens=1] or laplace:eps=1,
dp:eps=1[,delta=1e-6], rdp:alpha=8,eps=0.5[,alpha=..,eps=..]. Common keys: times=N (or the suffix xN),
p=RATE with sampling=poisson|fixed. Parsing never imports numpy; the events compute their numerical
representations on demand.
"""

from __future__ import annotations

import math
import re

from gdpcli.errors import InputError
from gdpcli.events.kinds import MECHANISMS
from gdpcli.events.mechanism import Mechanism
from gdpcli.events.repeated import Repeated
from gdpcli.events.sampled import Sampled
from gdpcli.events.sampling import Sampling
from gdpcli.events.spec_values import SpecValues

KINDS: dict[str, type[Mechanism]] = {mechanism.kind: mechanism for mechanism in MECHANISMS}
KIND_KEYS: dict[str, tuple[str, ...]] = {kind: mechanism.keys for kind, mechanism in KINDS.items()}
COMMON_KEYS = ("times", "p", "sampling", "select")
MEANINGS: dict[str, str] = {
    "gdp": "a mu-GDP guarantee",
    "gaussian": "Gaussian noise of std sigma on a query of L2 sensitivity sens (default 1): exactly "
    "(sens/sigma)-GDP",
    "laplace": "Laplace noise of scale b on a query of L1 sensitivity sens (default 1), or eps = sens / b "
    "directly: its exact trade-off function",
    "dp": "an (eps, delta)-DP guarantee (delta default 0: pure DP)",
    "rr": "randomized response on one bit, keeping it with probability keep (> 1/2)",
    "dgauss": "discrete Gaussian N_Z(0, sigma^2) on the integers, on a query of whole sensitivity sens "
    "(default 1): exact",
    "shuffle": "n users each send one eps0-LDP report (any randomizer), shuffled: a rigorous upper bound",
    "shuffle-rr": "n users each send one eps0-LDP randomized-response report, shuffled: a tighter upper "
    "bound than shuffle's",
    "zcdp": "(xi, rho)-zCDP: Renyi DP xi + alpha rho at every order alpha (xi default 0)",
    "rdp": "Renyi DP eps at order alpha (repeat alpha=...,eps=... pairs for more orders), or a whole curve "
    "from file=F.csv (columns alpha,eps)",
    "tradeoff": "a trade-off function sampled as (alpha, beta) rows in file=F.csv; between samples its safe "
    "lower bound, so its figures are upper bounds (tol: the rows' absolute accuracy, default 1e-12)",
    "profile": "a privacy profile sampled as (epsilon, delta) rows in file=F.csv; between samples its safe "
    "upper bound, so its figures are upper bounds (tol: as for tradeoff)",
}
"""What each kind means, in one line that names every key of KIND_KEYS (`gdpcli specs` prints it)."""
COMMON_MEANINGS: dict[str, str] = {
    "times": "times=N: N runs on the same data, composed (the suffix xN says the same)",
    "p": "p=RATE: each run sees a random subsample of the data, at rate 0 < RATE <= 1",
    "sampling": "sampling=poisson|fixed: how the subsample is drawn: poisson (each record with probability "
    "RATE; add/remove neighbours; the default) or fixed (a fixed-size batch; replace-one neighbours)",
    "select": "select=DIST:mean=M[,shape=S]: last, after every other key: the whole spec run a random "
    "number K of times on the same data and only the best run released (a hyper-parameter search; K drawn "
    "independently of the data, of mean M >= 1): DIST poisson, geometric or negative-binomial (shape S > -1; "
    "0 logarithmic, 1 geometric). RDP only, a rigorous upper bound (Papernot and Steinke 2022, Thm 2; Thm 6 "
    "for poisson); a suffix xN after it composes N such searches",
}
"""What each key of COMMON_KEYS means, with its form."""
SAMPLING = tuple(scheme.value for scheme in Sampling if scheme.per_step)
"""The words of sampling=: the schemes that draw each step's sample on its own."""
TEXT_KEYS = ("file",)
"""Keys whose value is text (a path), passed to the mechanism as given."""
SPEC_HELP = (
    "KIND:key=value,... with KIND one of "
    + ", ".join(mechanism.spec_help for mechanism in MECHANISMS)
    + "; common keys times=N (or suffix xN), p=RATE, sampling=poisson|fixed; last, select=DIST:mean=M"
)
_SELECT = ",select="
"""Where the select wrapper starts: its value takes the rest of the word (its own keys have commas)."""


_TIMES_SUFFIX = re.compile(r"^(?P<body>.*\S)x(?P<times>\d+)$")


def _number(spec: str, key: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(
            f"spec {spec!r}: {key}={text!r} is not a number", "e.g. mu=0.5 or delta=1e-6"
        ) from None
    if not math.isfinite(value):
        raise InputError(f"spec {spec!r}: {key} must be finite, got {text!r}")
    return value


def _pairs(spec: str, kind: str, body: str) -> list[tuple[str, str]]:
    pairs = []
    allowed = KIND_KEYS[kind] + COMMON_KEYS
    for item in body.split(","):
        key, sep, value = item.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not sep or not key or not value:
            raise InputError(f"spec {spec!r}: {item!r} is not key=value", SPEC_HELP)
        if key not in allowed:
            raise InputError(
                f"spec {spec!r}: unknown key {key!r} for {kind}", "allowed: " + ", ".join(allowed)
            )
        if key not in KINDS[kind].repeatable and any(k == key for k, _ in pairs):
            raise InputError(f"spec {spec!r}: key {key!r} given twice")
        pairs.append((key, value))
    return pairs


def _times(spec: str, suffix: str | None, text: str | None) -> int:
    if suffix is not None and text is not None:
        raise InputError(f"spec {spec!r}: give either times= or the xN suffix, not both")
    raw = suffix if suffix is not None else text
    if raw is None:
        return 1
    if not re.fullmatch(r"\d+", raw):
        raise InputError(f"spec {spec!r}: times must be a whole number, got {raw!r}")
    times = int(raw)
    if not 1 <= times <= 10**9:
        raise InputError(f"spec {spec!r}: times={times} is out of range", "allowed: 1 <= times <= 1e9")
    return times


def parse_spec(text: str) -> Repeated:
    """Parse one spec word into an event; InputError (exit 2) naming the offending part otherwise. A word
    ending in select=DIST:... is the rest of it, run a random number of times, the best run released."""
    spec = text.strip()
    at = spec.lower().find(_SELECT)
    if at < 0:
        return _parse_plain(spec)
    return _parse_select(spec, _parse_plain(spec[:at]), spec[at + len(_SELECT) :])


def _parse_select(spec: str, inner: Repeated, text: str) -> Repeated:
    """The select wrapper DIST:mean=M[,shape=S][xN] around the event parsed before it (events.RepeatAndSelect;
    xN composes N independent searches)."""
    from gdpcli.events.repeat_select import RepeatAndSelect, RunsDistribution

    suffix = None
    match = _TIMES_SUFFIX.match(text)
    if match and "=" in match.group("body"):
        text, suffix = match.group("body"), match.group("times")
    try:
        runs = RunsDistribution.parse(text)
    except InputError as error:
        raise InputError(f"spec {spec!r}: select: {error.message}", error.hint) from None
    return Repeated(RepeatAndSelect((inner,), runs), _times(spec, suffix, None))


def _parse_plain(text: str) -> Repeated:
    """One spec word without a select wrapper."""
    spec = text.strip()
    kind, colon, body = spec.partition(":")
    kind = kind.strip().lower()
    if not colon:
        raise InputError(f"spec {spec!r} has no ':'", SPEC_HELP)
    if kind not in KIND_KEYS:
        raise InputError(
            f"unknown mechanism kind {kind!r} in spec {spec!r}", "allowed: " + ", ".join(KIND_KEYS)
        )
    suffix = None
    match = _TIMES_SUFFIX.match(body)
    if match and "=" in match.group("body"):
        body, suffix = match.group("body"), match.group("times")
    pairs = _pairs(spec, kind, body)
    raw = dict(pairs)
    numbers = [
        (k, v if k in TEXT_KEYS else _number(spec, k, v)) for k, v in pairs if k not in ("times", "sampling")
    ]
    values = dict(numbers)
    own = [(k, v) for k, v in numbers if k in KIND_KEYS[kind]]
    mechanism = KINDS[kind].from_spec(SpecValues(spec, kind, own, SPEC_HELP))
    times = _times(spec, suffix, raw.get("times"))
    sampling_rate = values.get("p")
    if sampling_rate is not None and not 0 < sampling_rate <= 1:
        raise InputError(f"spec {spec!r}: p={sampling_rate!r} is out of range", "allowed: 0 < p <= 1")
    sampling = raw.get("sampling")
    if sampling is not None:
        if sampling not in SAMPLING:
            raise InputError(f"spec {spec!r}: unknown sampling {sampling!r}", "allowed: poisson, fixed")
        if sampling_rate is None:
            raise InputError(f"spec {spec!r}: sampling= needs a rate p=...")
    if sampling_rate is None:
        return Repeated(mechanism, times)
    return Repeated(Sampled(mechanism, sampling_rate, Sampling(sampling or "poisson")), times)
