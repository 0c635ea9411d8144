"""`gdpcli gdpt-identify` end to end: the issue's must-holds, labels, formats and exit codes."""

from __future__ import annotations

import csv
import io
import itertools
import math
import subprocess
import sys

import mpmath as mp
import pytest

from tests.conftest import REFERENCE, infinite, one_line_error

CONSTANTS = REFERENCE["gdpt_profile_refinement_constants"]
TAILS = REFERENCE["gdpt_tail_limits"]
PURE_DP = {float(case["epsilon"]): float(case["mu"]) for case in REFERENCE["pure_dp_to_gdp_gdpt_thm_5_1"]}


def one_row(outcome) -> dict:
    assert outcome.code == 0, outcome.stderr
    rows = outcome.json()["rows"]
    assert len(rows) == 1
    return rows[0]


def number(value: float | str | None) -> float:
    """A JSON or CSV figure as a float (JSON writes infinity as null, CSV as "inf")."""
    return math.inf if value is None else float(value)


def assert_interval(row: dict, value: float, width: float = 1e-3) -> None:
    """The head's certified interval holds value within --precision, and the mechanism's interval holds it."""
    assert row["head_mu_lower"] <= value <= row["head_mu_upper"]
    assert row["head_mu_upper"] - row["head_mu_lower"] == pytest.approx(row["slack"])
    assert row["slack"] <= width
    assert number(row["mu_lower"]) <= value <= number(row["mu_upper"])


def test_gdp(gdpcli) -> None:
    row = one_row(gdpcli("gdpt-identify", "gdp:mu=1.5", "-f", "json"))
    assert_interval(row, 1.5)
    assert (row["verdict"], row["tail_limit"], row["tail_method"]) == ("gdp", 1.5, "closed_form")
    assert (row["guarantee"], row["lower_guarantee"], row["profile"]) == (
        "upper_bound",
        "lower_bound",
        "closed-form",
    )
    assert (row["eps_head"], row["precision"]) == (100.0, 1e-3)
    assert 0 < row["residual"] < 1e-300  # delta_mu_upper(100) ~ e^-2181, rounded up to the smallest float


def test_pure_dp_is_theorem_5_1(gdpcli) -> None:
    row = one_row(gdpcli("gdpt-identify", "dp:eps=1", "-f", "json"))
    assert_interval(row, PURE_DP[1.0])  # 1.2320353853449009729
    assert (row["verdict"], row["tail_limit"], row["residual"]) == ("gdp", 0.0, 0.0)


def test_gaussian_and_composed_gdp_are_exact(gdpcli) -> None:
    row = one_row(gdpcli("gdpt-identify", "gaussian:sigma=2x4", "--precision", "1e-4", "-f", "json"))
    assert_interval(row, 1.0, 1e-4)  # sqrt(4) / 2 (GDP paper Cor. 2)


def test_noise_family_raw_and_refined(gdpcli) -> None:
    raw = one_row(gdpcli("gdpt-identify", "family:A=2,B=1,sigma=2", "-f", "json"))
    assert raw["tail_limit"] == pytest.approx(float(TAILS["sgd_family"]), abs=1e-12)  # 1/sqrt(2)
    assert raw["verdict"] == "gdp"
    assert infinite(raw, "mu_upper")  # delta(0) = B = 1: the naive profile gives no mu on the head
    assert infinite(raw, "head_mu_upper") and "delta = 1" in raw["reason"]
    row = one_row(gdpcli("gdpt-identify", "family:A=2,B=1,sigma=2", "--refine", "-f", "json"))
    assert row["profile"] == "refined"
    assert row["tangent_epsilon_1"] == pytest.approx(float(CONSTANTS["sgd_family_c2"]), abs=1e-9)  # 1.18785
    assert row["tangent_delta_1"] == pytest.approx(float(CONSTANTS["sgd_family_delta2"]), abs=1e-9)  # 0.24390
    assert "tangent_epsilon_2" not in row
    # Recipe (sup at eps = 0): c2 solves -2c e^{-c^2}(1 + e^c) + (1 - e^{-c^2}) e^c = 0, d2 = e^{-c2^2},
    # delta(0) = d2 + (1 - d2)(e^c2 - 1)/(1 + e^c2) (Thm 3.1), mu = 2 sqrt(2) erfinv(delta(0)).
    with mp.workdps(30):
        c2 = mp.findroot(
            lambda c: -2 * c * mp.exp(-(c**2)) * (1 + mp.exp(c)) + (1 - mp.exp(-(c**2))) * mp.exp(c), 1.2
        )
        d2 = mp.exp(-(c2**2))
        expected = float(2 * mp.sqrt(2) * mp.erfinv(d2 + (1 - d2) * (mp.exp(c2) - 1) / (1 + mp.exp(c2))))
        assert expected == pytest.approx(1.8563573, abs=1e-7)
        assert_interval(row, expected)
        assert row["verdict"] == "gdp"


def test_icea_raw_and_refined(gdpcli) -> None:
    raw = one_row(gdpcli("gdpt-identify", "icea:m=20,n=4", "-f", "json"))
    assert raw["verdict"] == "not_gdp" and number(raw["tail_limit"]) == float(TAILS["icea"])  # inf
    row = one_row(gdpcli("gdpt-identify", "icea:m=20,n=4", "--refine", "-f", "json"))
    assert row["verdict"] == "not_gdp" and infinite(row, "tail_limit") and "not GDP" in row["reason"]
    assert row["tangent_epsilon_1"] == pytest.approx(float(CONSTANTS["icea_c3"]), abs=1e-9)  # 1.15661
    assert row["tangent_delta_1"] == pytest.approx(float(CONSTANTS["icea_delta3"]), abs=1e-9)  # 0.46804
    short = one_row(gdpcli("gdpt-identify", "icea:m=20,n=4", "--refine", "--eps-head", "10", "-f", "json"))
    assert short["head_mu_upper"] < row["head_mu_lower"]  # the GDPT grows without bound
    assert infinite(row, "mu_lower") and infinite(row, "mu_upper")  # not GDP: no finite mu


@pytest.mark.parametrize("b", ["0.2", "1", "3"])
def test_laplace_is_gdp_with_tail_limit_zero(gdpcli, b: str) -> None:
    row = one_row(gdpcli("gdpt-identify", f"laplace:b={b}", "-f", "json"))
    assert (row["verdict"], row["tail_limit"]) == ("gdp", TAILS["laplace"])
    # Thm 5.1: eps0-DP (eps0 = 1/b) implies at most this mu; Laplace is eps0-DP and strictly better.
    with mp.workdps(30):
        eps0 = 1 / mp.mpf(b)
        assert row["mu_upper"] <= float(-2 * mp.sqrt(2) * mp.erfinv(2 / (1 + mp.exp(eps0)) - 1)) + 1e-3
        assert row["slack"] <= 1e-3


def test_composed_pure_dp_is_binomial_and_exact(gdpcli) -> None:
    row = one_row(gdpcli("gdpt-identify", "dp:eps=0.5x10", "-f", "json"))
    assert (row["profile"], row["verdict"], row["tail_limit"]) == ("binomial", "gdp", 0.0)
    # Recipe: the exact profile of 10-fold 0.5-DP at eps = 0 is TV = sum_j |P_j - Q_j| / 2 over the binomial
    # losses (Kairouz et al.), and G(0) = 2 sqrt(2) erfinv(TV) <= sup G.
    with mp.workdps(30):
        q = 1 / (1 + mp.exp(mp.mpf("0.5")))
        tv = sum(
            abs(mp.binomial(10, j) * ((1 - q) ** j * q ** (10 - j) - q**j * (1 - q) ** (10 - j)))
            for j in range(11)
        )
        assert row["mu_upper"] >= float(2 * mp.sqrt(2) * mp.erfinv(tv / 2))
        assert row["slack"] <= 1e-3
        approx = one_row(gdpcli("gdpt-identify", "dp:eps=0.5,delta=1e-6x10", "-f", "json"))
        assert approx["verdict"] == "not_gdp" and infinite(approx, "tail_limit")


def test_subsampled_uses_rigorous_pld_bounds(gdpcli) -> None:
    row = one_row(gdpcli("gdpt-identify", "dp:eps=0.5,p=0.1x10", "-f", "json"))
    assert (row["profile"], row["guarantee"], row["lower_guarantee"]) == ("pld", "upper_bound", "lower_bound")
    assert (row["verdict"], row["tail_limit"]) == ("gdp", 0.0)
    assert row["slack"] <= 1e-3
    # Subsampling never hurts: the mechanism is at least as private as 10-fold 0.5-DP (binomial row above).
    assert row["mu_upper"] <= one_row(gdpcli("gdpt-identify", "dp:eps=0.5x10", "-f", "json"))["mu_lower"]
    gaussian = one_row(gdpcli("gdpt-identify", "gaussian:sigma=2,p=0.5", "-f", "json"))
    assert (gaussian["verdict"], gaussian["tail_limit"], gaussian["tail_method"]) == (
        "gdp",
        0.5,
        "upper_bound",
    )
    assert gaussian["mu_upper"] <= 0.5 + 1e-3  # C_p(G_0.5) >= G_0.5


def test_csv_pipe_in_process(gdpcli, monkeypatch: pytest.MonkeyPatch) -> None:
    profile = gdpcli("convert", "gdp:mu=1", "--epsilon", "0:40:4001", "-f", "csv").stdout
    monkeypatch.setattr(sys, "stdin", io.StringIO(profile))
    row = one_row(gdpcli("gdpt-identify", "-", "-f", "json"))
    assert row["head_mu_lower"] - row["slack"] <= 1.0 <= row["head_mu_upper"]
    assert infinite(row, "mu_upper")  # nothing is known beyond the last row
    assert row["mu_lower"] <= 1.0 + 1e-9  # exact rows: mu_lower is a rigorous lower bound
    assert 0 < row["slack"] <= 1.2534 * 0.01  # <= sqrt(pi/2) x spacing (GDPT Thm 4.5)
    assert (row["profile"], row["method"], row["precision"]) == ("csv", "gdpt-sampled", None)
    assert row["verdict"] == "undetermined"  # deltas that underflow to 0 are not taken as a true zero


def test_csv_real_subprocess_pipe() -> None:
    convert = subprocess.run(
        [sys.executable, "-m", "gdpcli", "convert", "gdp:mu=1", "--epsilon", "0:40:4001", "-f", "csv"],
        capture_output=True,
        check=True,
    )
    identify = subprocess.run(
        [sys.executable, "-m", "gdpcli", "gdpt-identify", "-"], input=convert.stdout, capture_output=True
    )
    assert identify.returncode == 0, identify.stderr
    row = next(csv.DictReader(io.StringIO(identify.stdout.decode())))
    assert float(row["head_mu_lower"]) - float(row["slack"]) <= 1.0 <= float(row["head_mu_upper"])


def test_csv_pure_dp_file_with_true_zero(gdpcli, tmp_path) -> None:
    path = tmp_path / "dp.csv"
    path.write_text(gdpcli("convert", "dp:eps=1", "--epsilon", "0:3:3001", "-f", "csv").stdout)
    row = one_row(gdpcli("gdpt-identify", str(path), "-f", "json"))
    assert row["mu_lower"] - row["slack"] <= PURE_DP[1.0] <= row["mu_upper"]
    assert (row["verdict"], row["tail_limit"], row["residual"]) == ("gdp", 0.0, 0.0)


def test_csv_from_pld_uses_upper_rows_and_lower_rows(gdpcli, tmp_path) -> None:
    path = tmp_path / "pld.csv"
    path.write_text(gdpcli("compose", "laplace:b=1x3", "--epsilon", "0:2.5:51", "-f", "csv").stdout)
    row = one_row(gdpcli("gdpt-identify", str(path), "-f", "json"))
    assert (row["guarantee"], row["lower_guarantee"]) == ("upper_bound", "lower_bound")
    exact = one_row(gdpcli("gdpt-identify", "laplace:b=1x3", "-f", "json"))
    assert row["head_mu_lower"] <= exact["mu_upper"] and exact["mu_lower"] <= row["head_mu_upper"]


def test_csv_without_guarantee_column_and_eps_head(gdpcli, tmp_path) -> None:
    path = tmp_path / "plain.csv"
    path.write_text("delta,epsilon\n0.5,0\n0.2,1\n0.05,2\n0.0,3\n")
    row = one_row(gdpcli("gdpt-identify", str(path), "--eps-head", "2", "-f", "json"))
    assert row["eps_head"] == 2.0
    assert row["verdict"] == "undetermined"  # the zero at eps = 3 lies beyond the head


def test_table_rows(gdpcli) -> None:
    document = gdpcli("gdpt-identify", "laplace:b=1", "--table", "-f", "json").json()
    rows = document["rows"]
    assert 1 < len(rows) <= 1000
    assert rows[0]["epsilon"] == 0.0 and rows[-1]["epsilon_end"] == 100.0
    assert all(r["mu_lower"] <= r["mu_upper"] for r in rows)
    assert all(a["epsilon_end"] == b["epsilon"] for a, b in itertools.pairwise(rows))
    assert {r["guarantee"] for r in rows} == {"upper_bound"}
    assert document["inputs"] == {"input": "laplace:b=1", "precision": 1e-3, "table": True}


def test_every_format(gdpcli) -> None:
    table = gdpcli("gdpt-identify", "dp:eps=1", "-f", "table")
    assert table.code == 0 and "gdpt-identify" in table.stdout and "note:" in table.stdout
    piped = gdpcli("gdpt-identify", "dp:eps=1")
    header = (
        "input,profile,verdict,tail_limit,tail_method,mu_lower,mu_upper,head_mu_lower,head_mu_upper,slack,"
    )
    assert piped.stdout.startswith(header)
    assert len(piped.stdout.splitlines()) == 2


@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        (("gdp:mu=1", "--precision", "0"), None),
        (("gdp:mu=1", "--precision", "1.5"), None),
        (("gdp:mu=1", "--precision", "nan"), None),
        (("gdp:mu=1", "--eps-head", "-1"), None),
        (("gdp:mu=1", "--eps-head", "inf"), None),
        (("gdp:mu=1", "-f", "xml"), None),
        (("gdp:mu=-1",), None),
        (("gdp:mu=1", "--refine"), None),
        (("family:A=2,B=1",), None),
        (("family:A=2,B=1,sigma=-2",), None),
        (("family:A=2,B=1,sigma=x",), None),
        (("icea:m=20,n=4,k=1",), None),
        (("no-such-file.csv",), None),
        (("-", "--refine"), "epsilon,delta\n0,0.5\n1,0.1\n"),
        (("-",), ""),
        (("-",), "epsilon,foo\n0,0.5\n"),
        (("-",), "epsilon,delta\n0,0.5\n1,abc\n"),
        (("-",), "epsilon,delta\n0,0.5\n1,-0.1\n"),
        (("-",), "epsilon,delta\n0,0.5\n1,1.5\n"),
        (("-",), "epsilon,delta\n-1,0.5\n1,0.1\n"),
        (("-",), "epsilon,delta\n0,0.5\n2,0.1\n1,0.05\n"),
        (("-",), "epsilon,delta\n0,0.5\n1,nan\n"),
        (("-",), "epsilon,delta\n0,0.5\n"),
        (("-",), "epsilon,delta,guarantee\n0,0.5,approximation\n1,0.1,approximation\n"),
        (("-",), "epsilon,delta,guarantee\n0,0.5,exact\n1,0.1,maybe\n"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    gdpcli, monkeypatch, args: tuple[str, ...], stdin: str | None
) -> None:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    one_line_error(gdpcli("gdpt-identify", *args), 2)


def test_bad_csv_names_the_line(gdpcli, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("epsilon,delta\n0,0.5\n\n1,abc\n"))
    assert "stdin line 4" in gdpcli("gdpt-identify", "-").stderr


def test_rdp_has_no_profile(gdpcli) -> None:
    outcome = gdpcli("gdpt-identify", "rdp:alpha=8,eps=0.5")
    assert outcome.code == 1 and "no privacy profile" in outcome.stderr


def test_help_has_examples(gdpcli) -> None:
    outcome = gdpcli("gdpt-identify", "--help")
    assert outcome.code == 0 and "Examples:" in outcome.stdout and "--refine" in outcome.stdout


# --- the mechanism's mu agrees with its tail; profiles read from CSV are validated ------------


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_subsampled_gaussian_mu_covers_its_tail(gdpcli, fmt: str) -> None:
    """gdp:mu=1,p=0.1 printed verdict gdp with mu_upper 0.594 (the head's) while its tail limit is 1: the
    mechanism is not 0.594-GDP. C_p(G_1) >= G_1 bounds G by 1 at every eps, so mu lies in
    [head_mu_lower, 1]; the head's own interval keeps its name."""
    outcome = gdpcli("gdpt-identify", "gdp:mu=1,p=0.1", "-f", fmt)
    assert outcome.code == 0, outcome.stderr
    row = outcome.json()["rows"][0] if fmt == "json" else next(csv.DictReader(io.StringIO(outcome.stdout)))
    assert (row["verdict"], number(row["tail_limit"]), row["tail_method"]) == ("gdp", 1.0, "upper_bound")
    assert number(row["mu_upper"]) == 1.0 >= number(row["tail_limit"])
    assert number(row["head_mu_upper"]) < 0.6 and number(row["mu_lower"]) == number(row["head_mu_lower"])


def test_no_known_bound_beyond_the_head_means_no_certified_mu(gdpcli) -> None:
    """The refined noise family's G is measured on [0, 100] only: its mechanism mu_upper is not certified."""
    row = one_row(gdpcli("gdpt-identify", "family:A=2,B=1,sigma=2", "--refine", "-f", "json"))
    assert row["verdict"] == "gdp" and infinite(row, "mu_upper") and "beyond eps_head" in row["reason"]
    assert row["head_mu_upper"] - row["head_mu_lower"] <= 1e-3


def test_pure_dp_mechanism_interval_is_the_head_once_the_profile_vanishes(gdpcli) -> None:
    """dp:eps=0.5,p=0.1x10 is pure 10 log(1 + 0.1 (e^0.5 - 1))-DP (GDP paper Lemma 2): its profile is 0
    beyond 0.629, inside the measured head, so the head's certified interval is the mechanism's."""
    row = one_row(gdpcli("gdpt-identify", "dp:eps=0.5,p=0.1x10", "-f", "json"))
    with mp.workdps(30):
        assert row["eps_head"] >= float(10 * mp.log1p(mp.mpf("0.1") * mp.expm1(mp.mpf("0.5"))))
        assert (row["mu_lower"], row["mu_upper"]) == (row["head_mu_lower"], row["head_mu_upper"])


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("epsilon,delta\n0,0.5\n1,0.6\n2,0.1\n", 3, "exceeds the previous row's 0.5"),
        ("epsilon,delta\n0,0.5\n1,1.5\n2,0.1\n", 3, "out of range"),
        ("epsilon,delta\n0,0.5\n1,-0.1\n", 3, "out of range"),
        ("epsilon,delta\n0,0.5\n1,nan\n", 3, "must be finite"),
        ("epsilon,delta\n0,0.5\n1,inf\n", 3, "must be finite"),
        ("epsilon,delta\n0,0.5\n1,abc\n", 3, "not a number"),
        ("epsilon,delta\n0,0.5\n1,0.3\n1,0.2\n", 4, "does not increase"),
        ("epsilon,delta\n0,0.5\n", None, "need at least two"),
    ],
)
def test_invalid_profiles_are_rejected(gdpcli, monkeypatch, text: str, line: int | None, what: str) -> None:
    """A delta that increased with epsilon was silently lowered and accepted (exit 0)."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    outcome = gdpcli("gdpt-identify", "-", "-f", "json")
    assert outcome.code == 2 and outcome.stdout == ""
    assert outcome.stderr.count("\n") == 1 and what in outcome.stderr
    if line is not None:
        assert f"stdin line {line}:" in outcome.stderr


def test_sampled_profile_says_what_it_assumes_between_rows(gdpcli, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("epsilon,delta\n0,0.5\n1,0.2\n2,0.05\n"))
    outcome = gdpcli("gdpt-identify", "-", "-f", "table")
    assert outcome.code == 0 and "only known to be non-increasing" in " ".join(outcome.stdout.split())


def test_a_closed_form_wider_than_precision_is_not_blamed_on_the_pld(gdpcli) -> None:
    """Laplace at --precision 1e-9 comes out 1.001e-9 wide: the note says so, without the PLD engine's
    grid as the reason (it has a closed form and never uses the engine)."""
    outcome = gdpcli("gdpt-identify", "laplace:b=1", "--precision", "1e-9", "-f", "json")
    row = one_row(outcome)
    assert row["profile"] == "closed-form" and row["slack"] > 1e-9
    (note,) = [n for n in outcome.json()["notes"] if "wider than --precision" in n]
    assert "PLD" not in note


@pytest.mark.slow
def test_a_pld_input_wider_than_precision_names_the_engine(gdpcli) -> None:
    """A subsampled input (the PLD engine's profiles) 1.9e-3 wide at --precision 1e-3 keeps the reason."""
    outcome = gdpcli("gdpt-identify", "gaussian:sigma=1,p=0.01x30", "--eps-head", "2", "-f", "json")
    assert one_row(outcome)["slack"] > 1e-3
    assert any("PLD engine's grid" in n for n in outcome.json()["notes"])
