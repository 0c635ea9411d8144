"""The spec language: what parses, what it means, and precise errors for everything else."""

from __future__ import annotations

import pytest

from gdpcli.errors import InputError
from gdpcli.events import GDP, ApproxDP, Gaussian, Laplace, Renyi
from gdpcli.events.spec import parse_spec


@pytest.mark.parametrize(
    ("text", "mechanism", "times", "rate", "sampling"),
    [
        ("gdp:mu=0.5", GDP(0.5), 1, None, None),
        ("gdp:mu=0.1x100", GDP(0.1), 100, None, None),
        ("GDP:mu=0.1,times=7", GDP(0.1), 7, None, None),
        ("gaussian:sigma=2", Gaussian(2.0, 1.0), 1, None, None),
        ("gaussian:sigma=2,sens=3,p=0.01", Gaussian(2.0, 3.0), 1, 0.01, "poisson"),
        ("gaussian:sigma=1.1,p=0.004,sampling=fixedx10", Gaussian(1.1), 10, 0.004, "fixed"),
        ("laplace:b=2", Laplace(0.5), 1, None, None),
        ("laplace:b=2,sens=3", Laplace(1.5), 1, None, None),
        ("laplace:eps=0.7", Laplace(0.7), 1, None, None),
        ("dp:eps=0.31622776601683794x10", ApproxDP(0.31622776601683794, 0.0), 10, None, None),
        ("dp:eps=1,delta=1e-6", ApproxDP(1.0, 1e-6), 1, None, None),
        ("rdp:alpha=8,eps=1,alpha=2,eps=0.5", Renyi((8.0, 2.0), (1.0, 0.5)), 1, None, None),
    ],
)
def test_parse(text: str, mechanism: object, times: int, rate: float | None, sampling: str | None) -> None:
    spec = parse_spec(text)
    assert spec.mechanism == mechanism
    assert (spec.times, spec.sampling_rate, spec.sampling) == (times, rate, sampling)


def test_exact_mu() -> None:
    assert parse_spec("gdp:mu=0.1x100").exact_mu == pytest.approx(1.0)
    assert parse_spec("gaussian:sigma=2,sens=1").exact_mu == 0.5
    assert parse_spec("gaussian:sigma=2,p=0.1").exact_mu is None
    assert parse_spec("laplace:b=1").exact_mu is None


@pytest.mark.parametrize(
    "text",
    [
        "gdp:mu=0.5",
        "gaussian:sigma=2,sens=3,p=0.01x7",
        "gaussian:sigma=1.1,p=0.004,sampling=fixedx10",
        "laplace:b=2,sens=3",
        "dp:eps=0.31622776601683794,delta=1e-06x10",
        "rdp:alpha=8,eps=1,alpha=2,eps=0.5",
    ],
)
def test_describe_is_the_spec_language(text: str) -> None:
    """An event describes itself as a spec that parses back to the same event (the spec's own text is
    not kept)."""
    event = parse_spec(text)
    assert parse_spec(event.describe()) == event


def test_sampled_events_carry_their_neighbouring_relation() -> None:
    assert str(parse_spec("gdp:mu=1,p=0.1").step.neighbouring) == "add/remove"
    assert str(parse_spec("gdp:mu=1,p=0.1,sampling=fixed").step.neighbouring) == "replace-one"


def test_specs_are_immutable() -> None:
    spec = parse_spec("gdp:mu=1")
    with pytest.raises(AttributeError):
        spec.times = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("gdp:mu=-1", "mu=-1.0 is out of range"),
        ("gdp:nu=1", "unknown key 'nu'"),
        ("foo:mu=1", "unknown mechanism kind 'foo'"),
        ("gdp", "has no ':'"),
        ("gdp:", "is not key=value"),
        ("gdp:mu=abc", "is not a number"),
        ("gdp:mu=inf", "must be finite"),
        ("gdp:mu=nan", "must be finite"),
        ("gdp:mu=1,mu=2", "given twice"),
        ("gdp:mu=1x0", "times=0 is out of range"),
        ("gdp:mu=1,times=2.5", "whole number"),
        ("gdp:mu=1,times=3x4", "not both"),
        ("gaussian:sens=1", "needs sigma"),
        ("gaussian:sigma=0", "out of range"),
        ("laplace:b=1,eps=1", "exactly one of b"),
        ("laplace:eps=1,sens=2", "sens only goes with b"),
        ("dp:eps=1,delta=1", "delta=1.0 is out of range"),
        ("dp:eps=0", "perfect privacy"),
        ("dp:delta=0.1", "needs eps"),
        ("rdp:alpha=8", "pairs"),
        ("rdp:alpha=0.5,eps=1", "alpha=0.5 is out of range"),
        ("rdp:alpha=2,eps=1,alpha=2,eps=3", "given twice"),
        ("gdp:mu=1,p=0", "p=0.0 is out of range"),
        ("gdp:mu=1,p=0.1,sampling=shuffle", "unknown sampling"),
        ("gdp:mu=1,sampling=fixed", "needs a rate"),
    ],
)
def test_errors_name_the_problem(text: str, fragment: str) -> None:
    with pytest.raises(InputError) as error:
        parse_spec(text)
    assert fragment in str(error.value)
    assert "\n" not in str(error.value)
