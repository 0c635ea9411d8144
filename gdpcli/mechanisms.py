"""The spec language: one shell word `KIND:key=value,...[xN]` -> an immutable event (gdpcli.events).

| spec                          | meaning                                                  |
|-------------------------------|----------------------------------------------------------|
| gdp:mu=0.5                    | a mu-GDP guarantee                                       |
| gaussian:sigma=2[,sens=1]     | Gaussian mechanism, mu = sens / sigma                    |
| laplace:b=1[,sens=1], laplace:eps=1 | Laplace mechanism, eps0 = sens / b                 |
| dp:eps=1[,delta=1e-6]         | an (eps, delta)-DP guarantee, f_{eps,delta}              |
| rdp:alpha=8,eps=0.5[,alpha=..,eps=..] | Renyi DP at one or more orders                   |

Common keys: times=N (or the suffix xN), p=RATE with sampling=poisson|fixed.
Parsing never imports numpy; the events compute their numerical representations on demand.
"""

from __future__ import annotations

import math
import re

from gdpcli.errors import InputError
from gdpcli.events import GDP, ApproxDP, Gaussian, Laplace, Mechanism, Renyi, Repeated, Sampled, Sampling

KIND_KEYS: dict[str, tuple[str, ...]] = {
    "gdp": ("mu",),
    "gaussian": ("sigma", "sens"),
    "laplace": ("b", "eps", "sens"),
    "dp": ("eps", "delta"),
    "rdp": ("alpha", "eps"),
}
COMMON_KEYS = ("times", "p", "sampling")
SAMPLING_SCHEMES = tuple(scheme.value for scheme in Sampling)
SPEC_HELP = (
    "KIND:key=value,... with KIND one of gdp (mu), gaussian (sigma[,sens]), laplace (b[,sens] | eps), "
    "dp (eps[,delta]), rdp (alpha,eps[,alpha,eps...]); common keys times=N (or suffix xN), p=RATE, "
    "sampling=poisson|fixed"
)


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


def _require(spec: str, key: str, value: float, ok: bool, allowed: str) -> float:
    if not ok:
        raise InputError(f"spec {spec!r}: {key}={value!r} is out of range", f"allowed: {allowed}")
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
        if kind != "rdp" or key not in ("alpha", "eps"):
            if any(k == key for k, _ in pairs):
                raise InputError(f"spec {spec!r}: key {key!r} given twice")
        pairs.append((key, value))
    return pairs


def _mechanism(spec: str, kind: str, values: dict[str, float], pairs: list[tuple[str, str]]) -> Mechanism:
    def need(key: str) -> float:
        if key not in values:
            raise InputError(f"spec {spec!r}: {kind} needs {key}=...", SPEC_HELP)
        return values[key]

    sens = values.get("sens", 1.0)
    _require(spec, "sens", sens, sens > 0, "sens > 0")
    if kind == "gdp":
        mu = need("mu")
        return GDP(_require(spec, "mu", mu, mu > 0, "mu > 0"))
    if kind == "gaussian":
        sigma = need("sigma")
        return Gaussian(_require(spec, "sigma", sigma, sigma > 0, "sigma > 0"), sens)
    if kind == "laplace":
        if ("b" in values) == ("eps" in values):
            raise InputError(f"spec {spec!r}: laplace needs exactly one of b=... or eps=...")
        if "eps" in values:
            if "sens" in values:
                raise InputError(f"spec {spec!r}: sens only goes with b (eps = sens / b)")
            eps = values["eps"]
            return Laplace(_require(spec, "eps", eps, eps > 0, "eps > 0"))
        b = _require(spec, "b", values["b"], values["b"] > 0, "b > 0")
        return Laplace(sens / b)
    if kind == "dp":
        eps = need("eps")
        delta = values.get("delta", 0.0)
        _require(spec, "eps", eps, eps >= 0, "eps >= 0")
        _require(spec, "delta", delta, 0 <= delta < 1, "0 <= delta < 1")
        if eps == 0 and delta == 0:
            raise InputError(f"spec {spec!r}: eps=0 and delta=0 is perfect privacy; nothing to account")
        return ApproxDP(eps, delta)
    orders = [_number(spec, k, v) for k, v in pairs if k == "alpha"]
    epsilons = [_number(spec, k, v) for k, v in pairs if k == "eps"]
    if not orders or len(orders) != len(epsilons):
        raise InputError(f"spec {spec!r}: rdp needs alpha=...,eps=... pairs", "e.g. rdp:alpha=8,eps=0.5")
    for order, eps in zip(orders, epsilons, strict=True):
        _require(spec, "alpha", order, order > 1, "alpha > 1")
        _require(spec, "eps", eps, eps >= 0, "eps >= 0")
    if len(set(orders)) != len(orders):
        raise InputError(f"spec {spec!r}: an order alpha is given twice")
    return Renyi(tuple(orders), tuple(epsilons))


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
    """Parse one spec word into an event; InputError (exit 2) naming the offending part otherwise."""
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
    values = {k: _number(spec, k, v) for k, v in pairs if k not in ("times", "sampling")}
    mechanism = _mechanism(spec, kind, values, pairs)
    times = _times(spec, suffix, raw.get("times"))
    sampling_rate = values.get("p")
    if sampling_rate is not None:
        _require(spec, "p", sampling_rate, 0 < sampling_rate <= 1, "0 < p <= 1")
    sampling = raw.get("sampling")
    if sampling is not None:
        if sampling not in SAMPLING_SCHEMES:
            raise InputError(f"spec {spec!r}: unknown sampling {sampling!r}", "allowed: poisson, fixed")
        if sampling_rate is None:
            raise InputError(f"spec {spec!r}: sampling= needs a rate p=...")
    if sampling_rate is None:
        return Repeated(mechanism, times)
    return Repeated(Sampled(mechanism, sampling_rate, Sampling(sampling or "poisson")), times)
