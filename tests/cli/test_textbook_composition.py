"""--method basic | advanced: the textbook composition theorems beside the exact answer.

The lecture slides' example: 10 x (1/sqrt(10))-DP at delta 1e-3 gives 4.893 by advanced composition
against 2.890 exact (Kairouz-Oh-Viswanath optimal composition, gdpcli's binomial accountant). Expected
values from the theorems' formulas in mpmath, written here.
"""

from __future__ import annotations

import mpmath as mp
import pytest

from tests.conftest import rows_of

EPS0 = "0.31622776601683794"  # 1 / sqrt(10)


def by_method(rows: list[dict]) -> dict[str, dict]:
    return {row["method"]: row for row in rows}


def test_advanced_and_basic_beside_exact(gdpcli) -> None:
    rows = by_method(
        rows_of(gdpcli("compose", f"dp:eps={EPS0}x10", "--delta", "1e-3", "--method", "all", "-f", "json"))
    )
    with mp.workdps(30):
        eps = mp.mpf(EPS0)
        advanced = mp.sqrt(2 * 10 * mp.log(1000)) * eps + 10 * eps * (
            mp.e**eps - 1
        )  # DRV Thm III.3, delta' = 1e-3
        assert rows["advanced"]["epsilon"] == pytest.approx(float(advanced), rel=1e-12)
        assert (
            rows["advanced"]["guarantee"] == "upper_bound" and round(rows["advanced"]["epsilon"], 3) == 4.893
        )
        assert rows["basic"]["epsilon"] == pytest.approx(float(10 * eps), rel=1e-15)
        assert round(rows["binomial"]["epsilon"], 3) == 2.890 and rows["binomial"]["guarantee"] == "exact"


def test_delta_direction_and_delta_parts(gdpcli) -> None:
    """5 x (0.5, 1e-6) and 5 x (0.2, 0): at eps 4, advanced gives sum delta_i + exp(-(4 - S1)^2 / (2 S2))."""
    specs = ("dp:eps=0.5,delta=1e-6x5", "dp:eps=0.2x5")
    rows = by_method(rows_of(gdpcli("compose", *specs, "--epsilon", "4", "--method", "all", "-f", "json")))
    with mp.workdps(30):
        s1 = 5 * mp.mpf("0.5") * mp.expm1(mp.mpf("0.5")) + 5 * mp.mpf("0.2") * mp.expm1(mp.mpf("0.2"))
        s2 = 5 * mp.mpf("0.25") + 5 * mp.mpf("0.04")
        expected = 5e-6 + mp.exp(-((4 - s1) ** 2) / (2 * s2))
        assert rows["advanced"]["delta"] == pytest.approx(float(expected), rel=1e-12)
        assert rows["basic"]["delta"] == pytest.approx(5e-6, rel=1e-12)  # 4 >= 5 x 0.5 + 5 x 0.2 = 3.5


def test_mechanisms_without_an_eps_delta_statement_are_skipped(gdpcli) -> None:
    outcome = gdpcli("compose", "gaussian:sigma=3x10", "--delta", "1e-5", "--method", "all", "-f", "json")
    methods = {row["method"] for row in rows_of(outcome)}
    assert not {"basic", "advanced"} & methods
    assert any("skipped advanced" in note for note in outcome.json()["notes"])
    alone = gdpcli("compose", "gaussian:sigma=3x10", "--delta", "1e-5", "--method", "advanced")
    assert alone.code == 1 and "takes (eps, delta)-DP mechanisms" in alone.stderr


def test_rdp_delta_beyond_a_pure_curve_is_tiny_not_an_error(gdpcli) -> None:
    """5 x 0.5-DP is 2.5-DP, so delta(4) = 0; the optimal RDP conversion found no bracket there and exited
    1 ("no bracket after 60 doublings"), which also took --method all down. Its delta is now the last
    delta the bracketing tried, still a valid bound."""
    [row] = rows_of(gdpcli("compose", "dp:eps=0.5x5", "--epsilon", "4", "--method", "rdp", "-f", "json"))
    assert row["guarantee"] == "upper_bound" and 0 <= row["delta"] < 1e-300
