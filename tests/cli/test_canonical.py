"""`gdpcli calibrate canonical SPEC` end to end: the canonical noise distribution's parameters, fixed point
and quantiles against mpmath recipes (tests/core/test_canonical.py), draws against scipy's CDFs, every format,
and bad input (exit 2, one line)."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import mpmath as mp
import pytest
from scipy import stats

from tests.conftest import one_line_error
from tests.core.test_canonical import (
    mp_laplace_tradeoff,
    mp_quantile,
    mp_recursive_quantile,
    mp_tulap_cdf,
)

QUANTILES = "0.5,0.75,0.9,0.99,0.999,0.999999"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def rows(outcome) -> list[dict]:
    assert outcome.code == 0, outcome.stderr
    return outcome.json()["rows"]


def canonical(gdpcli, *args: str) -> list[dict]:
    return rows(gdpcli("calibrate", "canonical", *args, "-f", "json"))


def mp_tulap_quantile(u: float, epsilon: float, delta: float) -> float:
    return float(mp_quantile(lambda x: mp_tulap_cdf(x, epsilon, delta), u, width=30 / epsilon + 5))


def test_gdp_is_gaussian(gdpcli) -> None:
    found = canonical(gdpcli, "gdp:mu=0.5")
    assert [row["probability"] for row in found] == [float(u) for u in QUANTILES.split(",")]
    with mp.workdps(30):
        for row in found:
            assert (row["distribution"], row["guarantee"], row["method"]) == (
                "gaussian",
                "exact",
                "closed-form",
            )
            assert row["sigma"] == 2.0  # sens / mu
            assert row["fixed_point"] == pytest.approx(float(mp.ncdf(-0.25)), rel=1e-14)  # G_mu(c) = c
            with mp.workdps(30):  # the quantile of N(0, 2^2)
                expected = 2 * mp.sqrt(2) * mp.erfinv(2 * mp.mpf(row["probability"]) - 1)
            assert row["quantile"] == pytest.approx(float(expected), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize(("spec", "sigma"), [("gdp:mu=0.5x4", 1.0), ("gaussian:sigma=3", 3.0)])
def test_composed_gdp_and_gaussian(gdpcli, spec: str, sigma: float) -> None:
    """gdp:mu=0.5x4 is G_1 (GDP paper Cor. 2); gaussian:sigma=3 is G_{1/3}: N(0, sigma^2) either way."""
    row = canonical(gdpcli, spec, "--quantiles", "0.9")[0]
    assert row["sigma"] == pytest.approx(sigma, rel=1e-15)
    with mp.workdps(30):
        assert row["quantile"] == pytest.approx(
            sigma * float(mp.sqrt(2) * mp.erfinv(mp.mpf("0.8"))), rel=1e-12
        )


def test_eps_delta_is_tulap(gdpcli) -> None:
    found = canonical(gdpcli, "dp:eps=1,delta=1e-5")
    with mp.workdps(30):
        b = mp.exp(-1)
        for row in found:
            assert (row["distribution"], row["guarantee"], row["method"]) == ("tulap", "exact", "closed-form")
            assert row["b"] == pytest.approx(float(b), rel=1e-15)
            assert row["q"] == pytest.approx(
                float(2 * mp.mpf("1e-5") * b / (1 - b + 2 * mp.mpf("1e-5") * b)), rel=1e-14
            )
            assert row["fixed_point"] == pytest.approx(float((1 - mp.mpf("1e-5")) / (1 + mp.e)), rel=1e-14)
            expected = mp_tulap_quantile(row["probability"], 1.0, 1e-5)
            assert row["quantile"] == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_sensitivity_scales_the_noise(gdpcli) -> None:
    """--sens 3: 3 x Tulap(0, e^-1, 0), i.e. pure 1-DP noise for a statistic of sensitivity 3."""
    found = canonical(gdpcli, "dp:eps=1", "--sens", "3", "--quantiles", "0.1,0.9,0.99")
    with mp.workdps(30):
        for row in found:
            assert (row["scale"], row["q"]) == (3.0, 0.0)
            expected = 3 * mp_tulap_quantile(row["probability"], 1.0, 0.0)
            assert row["quantile"] == pytest.approx(expected, rel=1e-10)


def test_randomized_response_is_pure_dp(gdpcli) -> None:
    row = canonical(gdpcli, "rr:keep=0.75", "--quantiles", "0.99")[0]  # eps = log 3
    assert row["b"] == pytest.approx(1 / 3, rel=1e-14)
    with mp.workdps(30):
        assert row["quantile"] == pytest.approx(mp_tulap_quantile(0.99, math.log(3), 0.0), rel=1e-12)


def test_laplace_is_laplace(gdpcli) -> None:
    found = canonical(gdpcli, "laplace:b=2", "--quantiles", "0.6,0.99,0.999999")
    with mp.workdps(30):
        for row in found:
            assert (row["distribution"], row["scale"]) == ("laplace", 2.0)
            assert row["quantile"] == pytest.approx(
                float(-2 * mp.log(2 * (1 - mp.mpf(row["probability"])))), rel=1e-12
            )
            assert row["fixed_point"] == pytest.approx(float(mp.exp(-0.25) / 2), rel=1e-14)


def test_recursive_laplace(gdpcli) -> None:
    outcome = gdpcli("calibrate", "canonical", "laplace:b=1", "--recursive", "-f", "json")
    with mp.workdps(30):
        for row in rows(outcome):
            assert (row["distribution"], row["guarantee"], row["method"]) == (
                "recursive",
                "exact",
                "recursive",
            )
            assert row["fixed_point"] == pytest.approx(
                float(mp.exp(-0.5) / 2), rel=1e-14
            )  # f(c) = c, middle piece
            if row["probability"] > 0.5:
                expected = mp_recursive_quantile(lambda a: mp_laplace_tradeoff(a, 1.0), row["probability"])
                assert row["quantile"] == pytest.approx(float(expected), rel=1e-10)
        assert any("Thm 3.9" in note for note in outcome.json()["notes"])


def test_uniform_for_eps_zero(gdpcli) -> None:
    found = canonical(gdpcli, "dp:eps=0,delta=0.1", "--quantiles", "0.25,0.9")
    assert [row["half_width"] for row in found] == [5.0, 5.0]  # 1 / (2 delta)
    assert [row["quantile"] for row in found] == pytest.approx([-2.5, 4.0], rel=1e-14)  # (u - 1/2) / delta


def test_tradeoff_file_of_f_eps_delta_is_tulap(gdpcli, tmp_path: Path) -> None:
    """A file with f_{1,0.01} sampled on each of its linear pieces reads back as f itself (the secant rule),
    whose CND is Tulap(0, e^-1, q): the recursion from the file against the mpmath recipe."""
    epsilon, delta = 1.0, 0.01
    c = (1 - delta) / (1 + math.e)
    alphas = [0.0, c / 2, c, (c + 1 - delta) / 2, 1 - delta, 1.0]
    lines = [f"{a!r},{float(max(0, 1 - delta - math.e * a, (1 - delta - a) / math.e))!r}" for a in alphas]
    path = tmp_path / "f.csv"
    path.write_text("alpha,beta\n" + "\n".join(lines) + "\n")
    outcome = gdpcli("calibrate", "canonical", f"tradeoff:file={path}", "-f", "json")
    with mp.workdps(30):
        for row in rows(outcome):
            assert row["method"] == "recursive"
            assert row["fixed_point"] == pytest.approx(c, abs=1e-11)
            assert row["quantile"] == pytest.approx(
                mp_tulap_quantile(row["probability"], epsilon, delta), abs=1e-9
            )
        assert any("lower bound" in note for note in outcome.json()["notes"])


def test_fixed_size_subsampled_gdp(gdpcli) -> None:
    """C_p(G_1) at p = 0.1 (GDP paper eq. 13): its fixed point is the middle of x* = Phi(-1/2) and f_p(x*)."""
    row = canonical(gdpcli, "gdp:mu=1,p=0.1,sampling=fixed", "--quantiles", "0.9")[0]
    with mp.workdps(30):
        x_star = mp.ncdf(-0.5)
        assert row["fixed_point"] == pytest.approx(
            float((x_star + 0.1 * x_star + 0.9 * (1 - x_star)) / 2), rel=1e-13
        )
        assert row["method"] == "recursive"


def test_example_curve_is_below_the_recursive_g1(gdpcli) -> None:
    """examples/tradeoff_g1.csv samples G_1, read as a lower bound F_S <= G_1. The recursion is monotone in f
    (c and every step S(x) = f(1 - S(x - 1)) grow with f), so F_S's noise is a little narrower than the
    recursive CND of G_1, quantile by quantile: it buys F_S-DP, not G_1-DP."""
    probabilities = "0.6,0.75,0.9,0.99,0.999"
    from_file = canonical(
        gdpcli, f"tradeoff:file={EXAMPLES / 'tradeoff_g1.csv'}", "--quantiles", probabilities
    )
    recursive = canonical(gdpcli, "gdp:mu=1", "--recursive", "--quantiles", probabilities)
    for mine, theirs in zip(from_file, recursive, strict=True):
        assert theirs["quantile"] * 0.98 <= mine["quantile"] <= theirs["quantile"]
    with mp.workdps(30):
        assert from_file[0]["fixed_point"] <= float(mp.ncdf(-0.5))


def test_draws_match_the_distribution(gdpcli) -> None:
    args = ("calibrate", "canonical", "gdp:mu=0.5", "--sample", "3000", "--seed", "3", "-f", "csv")
    outcome = gdpcli(*args)
    assert outcome.code == 0, outcome.stderr
    table = list(csv.DictReader(io.StringIO(outcome.stdout)))
    assert [int(row["sample"]) for row in table] == list(range(1, 3001))
    draws = [float(row["noise"]) for row in table]
    assert stats.kstest(draws, stats.norm(scale=2.0).cdf).pvalue > 1e-3  # scipy's N(0, 2^2)
    assert gdpcli(*args).stdout == outcome.stdout  # reproducible
    assert gdpcli(*args[:-4], "--seed", "4", "-f", "csv").stdout != outcome.stdout
    assert "never use a fixed seed" in outcome.stderr and "not for releases" in outcome.stderr


def test_draws_scale_with_sensitivity(gdpcli) -> None:
    base = canonical(gdpcli, "dp:eps=1,delta=1e-3", "--sample", "50", "--seed", "1")
    scaled = canonical(gdpcli, "dp:eps=1,delta=1e-3", "--sample", "50", "--seed", "1", "--sens", "2.5")
    assert [2.5 * row["noise"] for row in base] == pytest.approx([row["noise"] for row in scaled], rel=1e-15)


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_formats(gdpcli, fmt: str) -> None:
    outcome = gdpcli("calibrate", "canonical", "dp:eps=1,delta=1e-5", "-f", fmt)
    assert outcome.code == 0, outcome.stderr
    if fmt == "table":
        text = " ".join(outcome.stdout.split())
        assert "distribution = tulap" in text and "b = 0.36787944" in text and "note:" in text
    elif fmt == "csv":
        header = outcome.stdout.splitlines()[0]
        assert header == "probability,quantile,distribution,b,q,scale,fixed_point,guarantee,method"
        assert "gdpcli: note:" in outcome.stderr
    else:
        document = outcome.json()
        assert document["command"] == "calibrate canonical"
        assert (
            document["inputs"]["spec"] == "dp:eps=1,delta=1e-5" and document["inputs"]["recursive"] is False
        )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("gdp:mu=1,p=0.1",), "min(f_p, f_p^-1)**"),
        (("laplace:b=1,p=0.1,sampling=fixed",), "tradeoff:file"),
        (("rdp:alpha=2,eps=1",), "no trade-off function"),
        (("zcdp:rho=0.1",), "no trade-off function"),
        (("dp:eps=1x3",), "gdpcli compose"),
        (("gdp:mu=1", "--quantiles", "0"), "--quantiles"),
        (("gdp:mu=1", "--quantiles", "1"), "--quantiles"),
        (("gdp:mu=1", "--quantiles", "0.5,1.5"), "--quantiles"),
        (("gdp:mu=1", "--quantiles", "abc"), "--quantiles"),
        (("gdp:mu=1", "--sample", "0"), "--sample"),
        (("gdp:mu=1", "--sample", "2000000"), "--sample"),
        (("gdp:mu=1", "--sample", "5", "--quantiles", "0.5"), "not both"),
        (("gdp:mu=1", "--seed", "3"), "--seed"),
        (("gdp:mu=1", "--sample", "5", "--seed", "-1"), "--seed"),
        (("gdp:mu=1", "--sens", "0"), "--sens"),
        (("gdp:mu=1", "--sens", "-1"), "--sens"),
        (("gdp:mu=1", "--sens", "inf"), "--sens"),
        (("tradeoff:file=/no/such/file.csv",), "cannot read"),
        (("nope:x=1",), "unknown mechanism kind"),
        (("gdp:mu=1", "-f", "xml"), ""),
    ],
)
def test_bad_input_exits_2_with_one_line(gdpcli, args: tuple[str, ...], says: str) -> None:
    one_line_error(gdpcli("calibrate", "canonical", *args), 2, says)


def test_perfect_privacy_curve_is_refused(gdpcli, tmp_path: Path) -> None:
    path = tmp_path / "trivial.csv"
    path.write_text("alpha,beta\n0,1\n0.5,0.5\n1,0\n")
    outcome = gdpcli("calibrate", "canonical", f"tradeoff:file={path},tol=0")
    assert outcome.code == 2 and "perfect privacy" in outcome.stderr and outcome.stderr.count("\n") == 1


def test_deep_recursive_tails_are_labelled_approximation(gdpcli) -> None:
    """A recursive quantile in a tail below 1e-9 carries the steps' rounding (1e-16 absolute in probability)
    into more than its last digits: labelled approximation there, exact elsewhere; closed forms exact."""
    args = ("calibrate", "canonical", "dp:eps=1", "--quantiles", "0.99,0.9999999999999", "-f", "json")
    recursive = {row["probability"]: row["guarantee"] for row in gdpcli(*args, "--recursive").json()["rows"]}
    assert recursive == {0.99: "exact", 0.9999999999999: "approximation"}
    closed = {row["probability"]: row["guarantee"] for row in gdpcli(*args).json()["rows"]}
    assert set(closed.values()) == {"exact"}
