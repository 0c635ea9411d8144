"""zcdp: specs, rdp: curves from a file, convert --to rho / --to rdp."""

from __future__ import annotations

import math
from pathlib import Path

import mpmath
import pytest

from gdpcli.errors import InputError
from gdpcli.events import Renyi, RenyiCurve, SpecValues


def rows(outcome) -> list[dict]:
    assert outcome.code == 0, outcome.stderr
    return outcome.json()["rows"]


def by_method(outcome) -> dict[str, dict]:
    return {row["method"]: row for row in rows(outcome)}


def classic(rho: float, delta: float, xi: float = 0.0) -> float:
    """[BS16] Prop. 1.3 in mpmath: xi + rho + 2 sqrt(rho log(1/delta))."""
    return float(xi + rho + 2 * mpmath.sqrt(rho * mpmath.log(1 / mpmath.mpf(delta))))


def test_zcdp_composes_by_adding_rho_and_xi(gdpcli) -> None:
    """3 x (0.01, 0.02)-zCDP and 0.04-zCDP: (0.03, 0.1)-zCDP; auto is RDP; classic is the closed form."""
    specs = ("zcdp:rho=0.02,xi=0.01x3", "zcdp:rho=0.04")
    result = by_method(gdpcli("compose", *specs, "--delta", "1e-5", "--conversion", "all", "-f", "json"))
    assert result["rdp-classic"]["epsilon"] == pytest.approx(classic(0.1, 1e-5, 0.03), rel=1e-9)
    assert result["rdp-optimal"]["epsilon"] <= result["rdp-classic"]["epsilon"]
    assert all(row["guarantee"] == "upper_bound" for row in result.values())


def test_zcdp_equals_the_gaussian_in_rdp(gdpcli) -> None:
    """gaussian:sigma=4 is exactly 1/32-zCDP: the RDP accountant gives the same figures for both."""
    args = ("--delta", "1e-5", "--method", "rdp", "--conversion", "all", "-f", "json")
    zcdp = by_method(gdpcli("compose", "zcdp:rho=0.03125x100", *args))
    gaussian = by_method(gdpcli("compose", "gaussian:sigma=4x100", *args))
    for method, row in zcdp.items():
        assert row["epsilon"] == pytest.approx(gaussian[method]["epsilon"], rel=1e-12)


def test_zcdp_has_no_tradeoff_function(gdpcli) -> None:
    outcome = gdpcli("convert", "zcdp:rho=0.1", "--delta", "1e-5", "--method", "pld")
    assert outcome.code == 1
    assert "profile" in outcome.stderr or "trade-off" in outcome.stderr


@pytest.mark.parametrize("spec", ["zcdp:rho=-1", "zcdp:xi=0.1", "zcdp:rho=0", "zcdp:rho=0.1,eps=2"])
def test_bad_zcdp_specs_exit_2(gdpcli, spec: str) -> None:
    outcome = gdpcli("convert", spec, "--delta", "1e-5")
    assert outcome.code == 2 and "zcdp" in outcome.stderr


@pytest.mark.parametrize(("spec", "rho"), [("gaussian:sigma=4", 1 / 32), ("gaussian:sigma=2,sens=3", 9 / 8)])
def test_gaussian_rho_is_exact(gdpcli, spec: str, rho: float) -> None:
    [row] = rows(gdpcli("convert", spec, "--to", "rho", "-f", "json"))
    assert row["rho"] == pytest.approx(rho, rel=1e-15) and row["guarantee"] == "exact"


def test_rho_of_laplace_over_orders_is_a_lower_bound(gdpcli) -> None:
    """max D_alpha / alpha over orders near 1 approaches KL = eps + e^-eps - 1 (the sup as alpha -> 1)."""
    [row] = rows(gdpcli("convert", "laplace:eps=1", "--to", "rho", "-f", "json"))
    assert row["guarantee"] == "lower_bound"
    assert row["rho"] <= math.exp(-1) and row["rho"] == pytest.approx(math.exp(-1), rel=1e-3)


def test_rdp_curve_of_the_gaussian(gdpcli) -> None:
    result = rows(gdpcli("convert", "gaussian:sigma=2", "--to", "rdp", "--order", "2:10:5", "-f", "json"))
    assert [r["rdp_epsilon"] for r in result] == pytest.approx([a / 8 for a in (2, 4, 6, 8, 10)], rel=1e-15)
    assert {r["guarantee"] for r in result} == {"exact"}


def test_rdp_of_laplace_both_routes(gdpcli) -> None:
    """--method all: the closed form (exact) and the review's Sec. 2.3 quadrature (approximation) agree."""
    outcome = gdpcli(
        "convert", "laplace:eps=1", "--to", "rdp", "--order", "1.5,2,8", "--method", "all", "-f", "json"
    )
    result = rows(outcome)
    own = [r["rdp_epsilon"] for r in result if r["method"] == "rdp-curve"]
    quadrature = [r for r in result if r["method"] == "tradeoff-quadrature"]
    assert [r["rdp_epsilon"] for r in quadrature] == pytest.approx(own, rel=1e-6)
    assert {r["guarantee"] for r in quadrature} == {"approximation"}


def test_rdp_of_approximate_dp_is_infinite(gdpcli) -> None:
    result = rows(gdpcli("convert", "dp:eps=1,delta=1e-6", "--to", "rdp", "--order", "2", "-f", "json"))
    assert result[0]["rdp_epsilon"] is None or math.isinf(float(result[0]["rdp_epsilon"]))


@pytest.mark.parametrize("order", ["1", "0.5,2", "abc"])
def test_bad_orders_exit_2(gdpcli, order: str) -> None:
    outcome = gdpcli("convert", "gaussian:sigma=1", "--to", "rdp", "--order", order)
    assert outcome.code == 2 and "--order" in outcome.stderr


def _read(tmp_path: Path, text: str) -> Renyi:
    path = tmp_path / "curve.csv"
    path.write_text(text)
    values = SpecValues(f"rdp:file={path}", "rdp", [("file", str(path))], "")  # type: ignore[list-item]
    return RenyiCurve.from_spec(values)


def test_rdp_file_reads_a_curve(tmp_path: Path) -> None:
    curve = _read(tmp_path, "alpha,eps\n2,0.1\n4,0.3\n\n")
    assert curve.rdp_points == Renyi((2.0, 4.0), (0.1, 0.3)).rdp_points
    assert curve.describe().startswith("rdp:file=") and curve.describe().endswith("curve.csv")
    assert _read(tmp_path, "order,rdp_epsilon,guarantee\n1.5,0.2,exact\n").rdp_points == ((1.5,), (0.2,))


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("alpha,eps\n2,0.1\n1,0.3\n", "line 3, column alpha"),
        ("alpha,eps\n2,0.1\n4,-1\n", "line 3, column eps"),
        ("alpha,eps\n4,0.1\n2,0.3\n", "line 3, column alpha"),
        ("alpha,eps\n2,0.1\n2,0.3\n", "line 3, column alpha"),
        ("alpha,eps\n2,x\n", "line 2, column eps"),
        ("a,b\n2,1\n", "line 1"),
    ],
)
def test_bad_rdp_files_name_line_and_column(tmp_path: Path, text: str, where: str) -> None:
    with pytest.raises(InputError, match=where):
        _read(tmp_path, text)
