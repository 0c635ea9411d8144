"""RDP accounting from the command line: conversions, Gaussian composition comparison, budgets."""

from __future__ import annotations

import pytest

from tests.conftest import REFERENCE

ASOODEH = REFERENCE["asoodeh_gaussian_sigma20_delta1e-5"]


def rows(outcome) -> list[dict]:
    assert outcome.code == 0, outcome.stderr
    return outcome.json()["rows"]


@pytest.mark.parametrize("case", REFERENCE["rdp_to_dp_single_point"])
def test_single_point_conversions(gdpcli, case: dict) -> None:
    spec = f"rdp:alpha={case['alpha']},eps={case['rdp_eps']}"
    result = {
        r["method"]: r
        for r in rows(gdpcli("convert", spec, "--delta", "1e-5", "--method", "all", "-f", "json"))
    }
    assert result["rdp-optimal"]["epsilon"] == pytest.approx(case["eps_optimal"], rel=1e-9)
    assert result["rdp-classic"]["epsilon"] == pytest.approx(case["eps_classic"], rel=1e-12)
    assert all(r["guarantee"] == "upper_bound" for r in result.values())
    assert result["rdp-optimal"]["epsilon"] == min(r["epsilon"] for r in result.values())
    [optimal] = rows(gdpcli("convert", spec, "--delta", "1e-5", "--method", "optimal", "-f", "json"))
    assert optimal["epsilon"] == result["rdp-optimal"]["epsilon"]


EVERY_CONVERSION = ("--method", "all", "--conversion", "all", "-f", "json")


def test_gaussian_composition_comparison_at_T_1000(gdpcli) -> None:
    result = rows(gdpcli(*"compose gaussian:sigma=20x1000 --delta 1e-5".split(), *EVERY_CONVERSION))
    by_method = {r["method"]: r["epsilon"] for r in result}
    eps = ASOODEH["eps_T1000"]
    assert by_method["rdp-classic"] == pytest.approx(eps["eps_ma_T1000"], rel=1e-9)  # moments accountant
    assert by_method["rdp-lemma2"] == pytest.approx(eps["eps_lemma2_T1000"], rel=1e-9)
    assert by_method["rdp-optimal"] == pytest.approx(eps["eps_optimal_conversion_T1000"], rel=1e-9)
    assert by_method["gdp"] == pytest.approx(eps["eps_exact_gdp_T1000"], rel=1e-12)


def test_a_hundred_rounds(gdpcli) -> None:
    """Step budgets at epsilon 6 (sigma 20, delta 1e-5): MA 501, Lemma 2 602, exact GDP 685."""
    budget = "compose gaussian:sigma=20 --delta 1e-5 --target-epsilon 6"
    result = rows(gdpcli(*budget.split(), *EVERY_CONVERSION))
    steps = {r["method"]: r["repetitions"] for r in result}
    budgets = ASOODEH["max_steps_eps6"]
    assert steps["rdp-classic"] == budgets["ma"]
    assert steps["rdp-lemma2"] == budgets["lemma2"]
    assert steps["gdp"] == budgets["gdp_exact"]
    assert steps["rdp-lemma2"] <= steps["rdp-optimal"] <= steps["gdp"]
    for r in result:
        if r["repetitions"]:
            assert r["epsilon"] <= 6


def test_rdp_of_composed_specs_and_points(gdpcli) -> None:
    """rdp: specs compose with curves at their orders: rdp:alpha=8,eps=1 twice is rdp:alpha=8,eps=2."""
    twice = rows(gdpcli("compose", "rdp:alpha=8,eps=1x2", "--delta", "1e-5", "-f", "json"))
    once = rows(gdpcli("convert", "rdp:alpha=8,eps=2", "--delta", "1e-5", "-f", "json"))
    assert twice[0]["epsilon"] == once[0]["epsilon"]
    mixed = rows(gdpcli("compose", "rdp:alpha=8,eps=1", "gaussian:sigma=4", "--delta", "1e-5", "-f", "json"))
    alone = rows(gdpcli("convert", "rdp:alpha=8,eps=1.25", "--delta", "1e-5", "-f", "json"))  # 8/(2*16)=0.25
    assert mixed[0]["epsilon"] == pytest.approx(alone[0]["epsilon"], rel=1e-12)


def test_rdp_errors(gdpcli) -> None:
    assert gdpcli("compose", "rdp:alpha=8,eps=1", "rdp:alpha=4,eps=1", "--delta", "1e-5").code == 1
    assert gdpcli("convert", "rdp:alpha=8,eps=1", "--delta", "1e-5", "--conversion", "best").code == 2
    fixed = gdpcli(
        "compose", "gaussian:sigma=1,p=0.01,sampling=fixedx10", "--delta", "1e-5", "--method", "rdp"
    )
    assert fixed.code == 1 and "fixed-size batches" in fixed.stderr
