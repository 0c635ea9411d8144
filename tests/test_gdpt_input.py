"""gdpcli.accounting.gdpt_input: inputs of gdpt-identify as privacy profiles (specs, built-ins, CSV)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.accounting import gdpt_input as profiles
from gdpcli.errors import ComputationError, InputError
from gdpcli.events.spec import parse_spec


def test_is_sampled(tmp_path) -> None:
    path = tmp_path / "a:b.csv"
    path.write_text("epsilon,delta\n")
    assert profiles.is_sampled("-") and profiles.is_sampled("profile.csv") and profiles.is_sampled(str(path))
    assert not profiles.is_sampled("gdp:mu=1") and not profiles.is_sampled("family:A=2,B=1,sigma=2")


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("gdp:mu=1", "closed-form"),
        ("gaussian:sigma=2x9", "closed-form"),
        ("laplace:b=2", "closed-form"),
        ("dp:eps=1,delta=1e-3", "closed-form"),
        ("dp:eps=0.3x20", "binomial"),
        ("laplace:b=1x2", "pld"),
        ("gaussian:sigma=1,p=0.1", "pld"),
    ],
)
def test_sources(text: str, source: str) -> None:
    given_profiles = profiles.from_text(text)
    assert given_profiles.source == source
    assert given_profiles.exact == (source != "pld")


def test_pld_bracket_contains_the_exact_mu() -> None:
    # p = 1 sends the 4-fold Gaussian through the PLD engine; it is exactly 2-GDP, so G = 2 everywhere.
    given_profiles = profiles.from_spec(parse_spec("gaussian:sigma=1,p=1x4"))
    assert given_profiles.source == "pld"
    result, _ = profiles.identify(given_profiles, None, 1e-3)
    assert result.mu_lower <= 2.0 <= result.mu_upper
    assert result.slack <= 1e-3
    assert np.all(result.staircase_lower <= 2.0) and np.all(result.staircase_upper >= 2.0)
    assert (result.tail_limit, result.tail_method) == (2.0, "upper_bound")


def test_pld_profiles_bracket_the_true_profile() -> None:
    given_profiles = profiles.from_spec(parse_spec("gaussian:sigma=1,p=1x4"))
    eps = np.linspace(0, given_profiles.eps_head, 200)
    from gdpcli.core import gdp

    truth = np.log(gdp.delta(eps, 2.0))
    assert np.all(given_profiles.lower.log_delta(eps) <= truth + 1e-12)
    assert np.all(truth <= given_profiles.upper.log_delta(eps) + 1e-12)


def test_builtins_and_refinement() -> None:
    raw = profiles.from_text("family:A=2,B=1,sigma=2")
    assert raw.source == "builtin" and raw.upper.tangents is None
    refined = profiles.from_text("FAMILY: a=2, b=1, sigma=2", refine=True)
    assert refined.source == "refined" and refined.upper.tangents is not None
    for bad in ("family:A=2,B=1", "family:A=2,B=1,sigma=0", "icea:m=20,n=4,m=3", "icea:m=20;n=4"):
        with pytest.raises(InputError):
            profiles.from_text(bad)
    with pytest.raises(InputError):
        profiles.from_text("gdp:mu=1", refine=True)
    with pytest.raises(ComputationError):
        profiles.from_text("rdp:alpha=2,eps=1")


def test_csv_merges_blocks_and_skips_non_rigorous_rows() -> None:
    text = (
        "epsilon,delta,guarantee,method\n"
        "0,0.5,upper_bound,pld\n1,0.2,upper_bound,pld\n2,0.1,upper_bound,pld\n"
        "0,0.4,lower_bound,pld\n1,0.1,lower_bound,pld\n2,0.05,lower_bound,pld\n"
        "0,0.45,upper_bound,other\n1.5,0.15,upper_bound,other\n"
        "1,0.01,approximation,clt\n"
    )
    sampled = profiles.read_csv(text, "test")
    np.testing.assert_array_equal(sampled.epsilon, [0, 1, 1.5, 2])
    np.testing.assert_array_equal(sampled.delta, [0.45, 0.2, 0.15, 0.1])  # smallest bound per epsilon
    assert sampled.guarantee == "upper_bound"
    assert sampled.lower is not None
    np.testing.assert_array_equal(sampled.lower[1], [0.4, 0.1, 0.05])
    assert any("skipped 4" in note for note in sampled.notes)
    result, label = profiles.identify_sampled(sampled)
    assert label == "lower_bound"
    assert result.mu_lower <= result.mu_upper


def test_csv_of_upper_bounds_only_has_no_rigorous_mu_lower() -> None:
    sampled = profiles.read_csv("epsilon,delta,guarantee\n0,0.5,upper_bound\n1,0.2,upper_bound\n", "t")
    assert profiles.identify_sampled(sampled)[1] == "approximation"


def test_csv_underflow_rules() -> None:
    true_zero = profiles.read_csv("epsilon,delta\n0,0.5\n1,0.1\n2,0\n3,0\n", "t")
    assert true_zero.epsilon.size == 4 and not true_zero.notes
    underflow = profiles.read_csv("epsilon,delta\n0,0.5\n1,1e-200\n2,1e-310\n3,0\n", "t")
    np.testing.assert_array_equal(underflow.epsilon, [0, 1])
    assert "below 1e-300" in underflow.notes[0]


def test_csv_eps_head_and_errors() -> None:
    sampled = profiles.read_csv("epsilon,delta\n0,0.5\n1,0.2\n2,0.1\n", "t", eps_head=1.5)
    np.testing.assert_array_equal(sampled.epsilon, [0, 1])
    for text, fragment in [
        ("", "empty"),
        ("epsilon\n0\n", "no delta column"),
        ("epsilon,delta\n0,0.5,1\n", "line 2: 3 fields"),
        ("epsilon,delta\n0,0.5\n0,0.4\n", "line 3: epsilon 0.0 does not increase"),
        ("epsilon,delta\n0,inf\n1,0.1\n", "line 2: delta must be finite"),
    ]:
        with pytest.raises(InputError, match=fragment):
            profiles.read_csv(text, "t")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=30))
def test_csv_round_trip(deltas: list[float]) -> None:
    delta = np.concatenate([[1.0], np.sort(np.asarray(deltas))[::-1]])
    delta = np.where(delta < 1e-300, 0.0, delta)  # a 0 after a delta >= 1e-300 is a true zero
    epsilon = np.arange(delta.size) * 0.25
    text = "epsilon,delta\n" + "".join(
        f"{float(e)!r},{float(d)!r}\n" for e, d in zip(epsilon, delta, strict=True)
    )
    sampled = profiles.read_csv(text, "t")
    np.testing.assert_array_equal(sampled.epsilon, epsilon)
    np.testing.assert_array_equal(sampled.delta, delta)
    assert not sampled.notes


def test_a_csv_over_the_size_limit_is_refused_before_reading_on(tmp_path, monkeypatch) -> None:
    """A 10M-row CSV (3.8 GB) ran without end; the limit is stated in the error (exit 2)."""
    from gdpcli import textfiles
    from gdpcli.errors import InputError

    monkeypatch.setattr(textfiles, "MAX_CHARACTERS", 1000)
    path = tmp_path / "profile.csv"
    path.write_text("epsilon,delta\n" + "".join(f"{k / 100},{0.5 / (k + 1)}\n" for k in range(200)))
    with pytest.raises(InputError, match="longer than 1,000 characters, the most read"):
        profiles.load_csv(str(path))
    path.write_text("epsilon,delta\n0,0.5\n1,0.1\n2,0.01\n")
    assert profiles.load_csv(str(path)) is not None
