"""tradeoff:file= and profile:file= from the command line: gdpcli's own CSV reads back, the figures are
upper bounds on the privacy loss (gdpcli.core.curves), bad files exit 2 naming file, line and column."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Outcome, one_line_error

EXAMPLES = Path(__file__).parents[2] / "examples"
EXACT_EPS_1E5 = 4.377178095681458  # gdpcli convert gdp:mu=1 --delta 1e-5 (GDP paper Cor. 1, exact)


def rows(outcome: Outcome) -> list[dict[str, str]]:
    assert outcome.code == 0, outcome.stderr
    return list(csv.DictReader(io.StringIO(outcome.stdout)))


def epsilon(gdpcli: Callable[..., Outcome], *args: str) -> float:
    found = [
        r for r in rows(gdpcli(*args, "--delta", "1e-5", "-f", "csv")) if r["guarantee"] == "upper_bound"
    ]
    return float(found[0]["epsilon"])


def write(gdpcli: Callable[..., Outcome], path: Path, *args: str) -> Path:
    outcome = gdpcli("convert", "gdp:mu=1", *args, "-f", "csv")
    assert outcome.code == 0, outcome.stderr
    path.write_text(outcome.stdout)
    return path


def test_tradeoff_round_trip_dense_near_the_ends(gdpcli: Callable[..., Outcome]) -> None:
    """examples/tradeoff_g1.csv (110 alphas, log-spaced near 0 and 1): upper bound, within 0.03."""
    found = epsilon(gdpcli, "convert", f"tradeoff:file={EXAMPLES / 'tradeoff_g1.csv'}")
    assert EXACT_EPS_1E5 <= found <= EXACT_EPS_1E5 + 0.03


def test_tradeoff_round_trip_linear_grid(gdpcli: Callable[..., Outcome], tmp_path: Path) -> None:
    """101 linear alphas leave an atom 1 - F_S(0) of 3.6e-3: no finite epsilon at 1e-5 is certified
    (honest), and at delta = 1e-2 the bound is within 0.03 of the exact 2.3178."""
    path = write(gdpcli, tmp_path / "g.csv", "--alpha", "0:1:101")
    assert math.isinf(epsilon(gdpcli, "convert", f"tradeoff:file={path}"))
    found = rows(gdpcli("convert", f"tradeoff:file={path}", "--delta", "1e-2", "-f", "csv"))
    assert 2.3177890403044565 <= float(found[0]["epsilon"]) <= 2.3477890403044565


def test_profile_round_trip(gdpcli: Callable[..., Outcome], tmp_path: Path) -> None:
    """51 epsilons of the exact profile: the hull in e^eps gives an upper bound within 0.01."""
    path = write(gdpcli, tmp_path / "p.csv", "--epsilon", "0:5:51")
    found = epsilon(gdpcli, "convert", f"profile:file={path}")
    assert EXACT_EPS_1E5 <= found <= EXACT_EPS_1E5 + 0.01


def test_composition_and_subsampling(gdpcli: Callable[..., Outcome]) -> None:
    """With gdp:mu=1 (exact sqrt(2)-GDP: 6.57297) and Poisson-subsampled x10 (true value >= 2.8496)."""
    spec = f"tradeoff:file={EXAMPLES / 'tradeoff_g1.csv'}"
    assert 6.572970067030659 <= epsilon(gdpcli, "compose", spec, "gdp:mu=1") <= 6.65
    assert 2.8496 <= epsilon(gdpcli, "compose", spec + ",p=0.1x10") <= 2.95
    profile = f"profile:file={EXAMPLES / 'profile_g1.csv'}"
    assert 6.572970067030659 <= epsilon(gdpcli, "compose", profile, spec) <= 6.65


def test_trade_off_rows_are_lower_bounds(gdpcli: Callable[..., Outcome]) -> None:
    found = rows(
        gdpcli("convert", f"tradeoff:file={EXAMPLES / 'tradeoff_g1.csv'}", "--alpha", "0.5", "-f", "csv")
    )
    assert found[0]["guarantee"] == "lower_bound"
    assert float(found[0]["beta"]) <= 0.15865525393145707


def test_gdpt_identify_runs(gdpcli: Callable[..., Outcome]) -> None:
    assert gdpcli("gdpt-identify", f"profile:file={EXAMPLES / 'profile_g1.csv'}", "-f", "csv").code == 0


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("alpha,beta\n0.1,0.8\n0.2,0.75\n0.3,0.5\n", "line 3, column beta: not convex"),
        ("alpha,beta\n0.1,x\n", "line 2, column beta: 'x' is not a number"),
        ("alpha,beta\n0.5,0.7\n", "line 2, column beta: 0.7 > 1 - alpha"),
    ],
)
def test_bad_file_exits_2(gdpcli: Callable[..., Outcome], tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(text)
    one_line_error(gdpcli("convert", f"tradeoff:file={path}", "--delta", "1e-5"), 2, f"{path} {where}")


def test_missing_file_exits_2(gdpcli: Callable[..., Outcome], tmp_path: Path) -> None:
    outcome = gdpcli("convert", f"profile:file={tmp_path / 'none.csv'}", "--delta", "1e-5")
    assert outcome.code == 2 and "cannot read" in outcome.stderr and "none.csv" in outcome.stderr
