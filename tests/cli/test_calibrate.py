"""`gdpcli calibrate` end to end: what it must hold, the achieved-privacy columns, round trips, errors."""

from __future__ import annotations

import csv
import io

import mpmath as mp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli.test_convert import _modules_after
from tests.conftest import REFERENCE, one_line_error
from tests.core.test_gdp import mp_delta

ANALYTIC = REFERENCE["calibrate_gaussian_analytic"]
REFINEMENT = REFERENCE["gdpt_utility_refinement_sec_5_2"]
MNIST = ("--dataset-size", "60000", "--batch-size", "256", "--epochs", "60")


def rows(outcome) -> list[dict]:
    assert outcome.code == 0, outcome.stderr
    return outcome.json()["rows"]


def by_method(result: list[dict]) -> dict[str, dict]:
    return {row["method"]: row for row in result}


# --- gaussian -----------------------------------------------------------------------------------------


def test_gaussian_analytic_epsilon_1(gdpcli) -> None:
    case = ANALYTIC[0]
    result = by_method(
        rows(gdpcli("calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "-f", "json"))
    )
    analytic = result["analytic"]
    assert analytic["sigma"] == pytest.approx(3.7306316348, rel=1e-10)
    # rounded up, never below the reference (mpmath, 60 digits), and by no more than a few ulps
    assert case["sigma_analytic"] <= analytic["sigma"] <= case["sigma_analytic"] * (1 + 1e-13)
    assert (analytic["guarantee"], analytic["valid"]) == ("exact", True)
    # the achieved privacy, recomputed with mpmath (GDP paper Cor. 1 at mu = sens / sigma): within target
    with mp.workdps(40):
        assert mp_delta(1.0, 1.0 / analytic["sigma"]) <= mp.mpf("1e-5")
        assert analytic["achieved_delta"] == pytest.approx(1e-5, rel=1e-9)
        assert analytic["achieved_delta"] <= 1e-5 and analytic["achieved_epsilon"] <= 1.0
        assert analytic["mu"] == pytest.approx(1.0 / analytic["sigma"], rel=1e-15)


def test_gaussian_classical_flagged_invalid_at_epsilon_1(gdpcli) -> None:
    outcome = gdpcli("calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "-f", "json")
    classical = by_method(rows(outcome))["classical"]
    assert classical["valid"] is False
    # recipe: sqrt(2 ln(1.25/delta)) / eps at 30 digits
    with mp.workdps(40):
        assert classical["sigma"] == pytest.approx(
            float(mp.sqrt(2 * mp.log(mp.mpf("1.25") / mp.mpf("1e-5"))))
        )
        table = gdpcli("calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "-f", "table").stdout
        assert "proven only for epsilon < 1" in " ".join(table.split())


def test_gaussian_analytic_beside_classical(gdpcli) -> None:
    case = ANALYTIC[1]
    args = ("calibrate", "gaussian", "--epsilon", "0.1", "--delta", "1e-6", "--sens", "2", "-f", "json")
    result = by_method(rows(gdpcli(*args)))
    assert result["analytic"]["sigma"] == pytest.approx(72.609380852, rel=1e-10)
    assert result["analytic"]["sigma"] >= case["sigma_analytic"]
    assert result["classical"]["sigma"] == pytest.approx(105.97605054, rel=1e-10)
    assert result["classical"]["sigma"] == pytest.approx(case["sigma_classic"], rel=1e-14)
    assert result["classical"]["valid"] is True
    with mp.workdps(40):
        for row in result.values():
            assert row["sens"] == 2.0 and row["mu"] == pytest.approx(2.0 / row["sigma"], rel=1e-15)
            assert mp_delta(0.1, row["mu"]) <= mp.mpf("1e-6")
        # the slack of the classical sigma is visible: far below the target delta
        assert result["classical"]["achieved_delta"] < 1e-8


def test_gaussian_mu(gdpcli) -> None:
    [row] = rows(gdpcli("calibrate", "gaussian", "--mu", "0.5", "-f", "json"))
    assert row["sigma"] == 2.0 and row["achieved_mu"] == 0.5
    assert (row["guarantee"], row["method"]) == ("exact", "gdp")


def test_gaussian_list_of_targets_csv(gdpcli) -> None:
    outcome = gdpcli("calibrate", "gaussian", "--epsilon", "0.5,1,2", "--delta", "1e-5,1e-6", "-f", "csv")
    assert outcome.code == 0
    table = list(csv.DictReader(io.StringIO(outcome.stdout)))
    assert len(table) == 12  # 3 epsilons x 2 deltas x (analytic, classical)
    for row in table:
        if row["method"] == "analytic":
            assert float(row["achieved_epsilon"]) <= float(row["epsilon"])
            assert float(row["achieved_delta"]) <= float(row["delta"])
        assert row["valid"] == (
            "true" if row["method"] == "analytic" or float(row["epsilon"]) < 1 else "false"
        )


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    epsilon=st.floats(1e-3, 30.0),
    log10_delta=st.floats(-15.0, -1.0),
    sens=st.floats(1e-3, 1e3),
)
def test_gaussian_meets_every_target(gdpcli, epsilon: float, log10_delta: float, sens: float) -> None:
    delta = 10.0**log10_delta
    args = ("--epsilon", repr(epsilon), "--delta", repr(delta), "--sens", repr(sens), "-f", "json")
    analytic = by_method(rows(gdpcli("calibrate", "gaussian", *args)))["analytic"]
    with mp.workdps(40):
        assert mp_delta(epsilon, mp.mpf(sens) / mp.mpf(analytic["sigma"])) <= mp.mpf(delta)
    assert analytic["achieved_delta"] <= delta and analytic["achieved_epsilon"] <= epsilon


# --- laplace ------------------------------------------------------------------------------------------


def test_laplace(gdpcli) -> None:
    [row] = rows(gdpcli("calibrate", "laplace", "--epsilon", "0.5", "--sens", "3", "-f", "json"))
    assert row["b"] == 6.0 and row["achieved_epsilon"] == 0.5 and row["achieved_delta"] == 0.0
    assert (row["guarantee"], row["method"]) == ("exact", "laplace")


# --- family -------------------------------------------------------------------------------------------


def mp_refined_sigma(epsilon: str, delta: mp.mpf) -> tuple[mp.mpf, mp.mpf, mp.mpf]:
    """Recipe (GDPT Sec. 5.2, App. C) at 40 digits for sigma = -log(delta)/eps: minimize over eps0 the
    sigma(eps0) = -log(delta0)/eps0 with delta0 = (D - c)/(1 - c), c = (e^eps0 - e^E)/(1 + e^eps0)."""
    with mp.workdps(40):
        e = mp.mpf(epsilon)

        def weakest(e0: mp.mpf) -> mp.mpf:
            c = (mp.exp(e0) - mp.exp(e)) / (1 + mp.exp(e0))
            return (delta - c) / (1 - c)

        def sigma(e0: mp.mpf) -> mp.mpf:
            return -mp.log(weakest(e0)) / e0

        e0 = mp.findroot(lambda x: mp.diff(sigma, x), (mp.mpf("0.3"), mp.mpf("0.37")), solver="anderson")
        return sigma(e0), e0, weakest(e0)


def test_family_refinement(gdpcli) -> None:
    delta = "0.1353352832366127"  # e^-2
    args = ("calibrate", "family", "--noise", "-log(delta)/eps", "--epsilon", "0.2", "--delta", delta)
    result = by_method(rows(gdpcli(*args, "-f", "json")))
    naive, refined = result["naive"], result["gdpt-refined"]
    assert naive["sigma"] == pytest.approx(10.0, rel=1e-12)
    assert refined["sigma"] == pytest.approx(8.0857179, rel=1e-7)
    assert refined["sigma"] == pytest.approx(float(REFINEMENT["sigma_over_C"]), rel=1e-9)
    assert refined["epsilon0"] == pytest.approx(0.33389, abs=5e-6)
    assert refined["delta0"] == pytest.approx(0.067222, abs=5e-7)
    with mp.workdps(40):
        sigma, e0, d0 = mp_refined_sigma("0.2", mp.mpf(delta))
        assert refined["sigma"] == pytest.approx(float(sigma), rel=1e-9)
        assert (refined["epsilon0"], refined["delta0"]) == pytest.approx((float(e0), float(d0)), rel=1e-6)
        # what refined uses really implies the target (GDPT Thm 3.1, at 40 digits)
        c = (mp.exp(refined["epsilon0"]) - mp.exp(mp.mpf("0.2"))) / (1 + mp.exp(refined["epsilon0"]))
        assert refined["delta0"] + (1 - refined["delta0"]) * c <= mp.mpf(delta)
        assert refined["achieved_delta"] <= float(delta)
        assert {row["guarantee"] for row in result.values()} == {"upper_bound"}


def test_family_never_worse_than_naive(gdpcli) -> None:
    args = ("calibrate", "family", "--noise", "sqrt(2*log(1.25/delta))/eps", "--epsilon", "0.1:1:4")
    result = rows(gdpcli(*args, "--delta", "1e-5", "-f", "json"))
    assert len(result) == 8
    for naive, refined in zip(result[::2], result[1::2], strict=True):
        assert refined["sigma"] <= naive["sigma"]
        assert refined["achieved_delta"] <= 1e-5


# --- sgd ----------------------------------------------------------------------------------------------


def test_sgd_mnist_round_trip(gdpcli) -> None:
    args = ("calibrate", "sgd", *MNIST, "--epsilon", "3", "--delta", "1e-5", "--sampling", "poisson")
    [row] = rows(gdpcli(*args, "-f", "json"))
    noise = row["noise_multiplier"]
    assert 0.962 <= noise <= 0.975  # independent PLD (dp-accounting): 0.9684
    assert row["achieved_epsilon"] <= 3.0
    assert (row["guarantee"], row["method"]) == ("upper_bound", "pld")
    # round trip: the same run, fed back to `gdpcli sgd` with the same method, is within the target
    back = rows(
        gdpcli(
            "sgd",
            *MNIST,
            "--noise-multiplier",
            repr(noise),
            "--delta",
            "1e-5",
            "--sampling",
            "poisson",
            "--method",
            "auto",
            "-f",
            "json",
        )
    )
    rigorous = [r["epsilon"] for r in back if r["guarantee"] == "upper_bound"]
    assert rigorous and max(rigorous) <= 3.0


def sgd_epsilon(gdpcli, run: tuple[str, ...], noise: float, method: str) -> float:
    """epsilon at delta 1e-5 that `gdpcli sgd` reports for the run (the figure a budget relies on)."""
    args = ("sgd", *run, "--noise-multiplier", repr(noise), "--delta", "1e-5", "--method", method)
    found = rows(gdpcli(*args, "-f", "json"))
    allowed = ("approximation",) if method == "clt" else ("exact", "upper_bound")
    return min(r["epsilon"] for r in found if r["guarantee"] in allowed)


@pytest.mark.parametrize(
    ("run", "method", "label"),
    [
        (("--sampling-rate", "0.01", "--steps", "1000"), "rdp", ("upper_bound", "rdp-optimal")),
        (("--sampling-rate", "0.01", "--steps", "1000"), "clt", ("approximation", "clt")),
        (("--sampling-rate", "0.01", "--steps", "1000"), "auto", ("upper_bound", "pld")),
        (("--sampling-rate", "0.01", "--steps", "1000"), "pld", ("upper_bound", "pld")),
        (("--sampling-rate", "1", "--steps", "10"), "exact", ("exact", "gdp")),
    ],
)
def test_sgd_round_trip_and_tolerance(gdpcli, run: tuple[str, ...], method: str, label: tuple) -> None:
    args = ("calibrate", "sgd", *run, "--epsilon", "2", "--delta", "1e-5", "--method", method)
    [row] = rows(gdpcli(*args, "--tolerance", "1e-3", "-f", "json"))
    assert (row["guarantee"], row["method"]) == label
    assert sgd_epsilon(gdpcli, run, row["noise_multiplier"], method) == row["achieved_epsilon"] <= 2.0
    # within the tolerance of the least noise: a noise 0.1 % smaller misses the target
    assert sgd_epsilon(gdpcli, run, row["noise_multiplier"] / 1.001, method) > 2.0


@pytest.mark.slow
def test_sgd_every_conversion_gets_a_row(gdpcli) -> None:
    """--conversion all printed one row (the minimum); now one calibration per conversion, each
    labelled with its own method and meeting the target when fed back to `gdpcli sgd`."""
    run = ("--sampling-rate", "0.01", "--steps", "1000")
    args = ("calibrate", "sgd", *run, "--epsilon", "2", "--delta", "1e-5", "--method", "rdp")
    found = rows(gdpcli(*args, "--conversion", "all", "-f", "json"))
    names = ["classic", "improved", "lemma1", "lemma2", "optimal"]
    assert [row["method"] for row in found] == [f"rdp-{name}" for name in names]
    for name, row in zip(names, found, strict=True):
        assert row["guarantee"] == "upper_bound" and row["achieved_epsilon"] <= 2.0
        [single] = rows(gdpcli(*args, "--conversion", name, "-f", "json"))
        assert single["noise_multiplier"] == row["noise_multiplier"]
    classic = found[0]["noise_multiplier"]
    assert all(row["noise_multiplier"] <= classic for row in found)  # classic is the loosest conversion


def test_sgd_fixed_sampling_round_trip_uses_replace_one_sensitivity(gdpcli) -> None:
    """calibrate and sgd share the convention: fixed-size batches (replace-one) have sensitivity 2C, and
    --sensitivity 1 (the GDP paper's sigma) needs exactly half the noise multiplier at q = 1."""
    run = ("--sampling-rate", "1", "--steps", "10", "--sampling", "fixed")
    [ecosystem] = rows(gdpcli("calibrate", "sgd", *run, "--epsilon", "2", "--delta", "1e-5", "-f", "json"))
    [paper] = rows(
        gdpcli(
            "calibrate", "sgd", *run, "--sensitivity", "1", "--epsilon", "2", "--delta", "1e-5", "-f", "json"
        )
    )
    assert (ecosystem["sensitivity"], paper["sensitivity"]) == (2.0, 1.0)
    assert ecosystem["noise_multiplier"] == pytest.approx(2 * paper["noise_multiplier"], rel=2e-3)
    back = ("sgd", *run, "--noise-multiplier", repr(ecosystem["noise_multiplier"]), "--delta", "1e-5")
    [row] = rows(gdpcli(*back, "-f", "json"))
    assert row["guarantee"] == "exact" and row["epsilon"] <= 2.0


def test_sgd_clt_mu(gdpcli) -> None:
    [row] = rows(
        gdpcli("calibrate", "sgd", *MNIST, "--mu", "0.5736014703922835", "--method", "clt", "-f", "json")
    )
    # the reference run (sigma = 1.1) has Poisson CLT mu 0.5736...: the inverse gives sigma back
    assert row["noise_multiplier"] == pytest.approx(1.1, rel=1e-3)
    assert row["noise_multiplier"] >= 1.1 * (1 - 1e-12) and row["achieved_mu"] <= row["mu"]
    assert row["guarantee"] == "approximation"


def test_sgd_full_batch_mu_is_exact(gdpcli) -> None:
    [row] = rows(
        gdpcli("calibrate", "sgd", "--sampling-rate", "1", "--steps", "100", "--mu", "2", "-f", "json")
    )
    assert row["noise_multiplier"] == 5.0  # sqrt(T) / mu, GDP paper Cor. 2
    assert (row["guarantee"], row["method"]) == ("exact", "gdp")


def test_sgd_exact_mu_is_not_supported(gdpcli) -> None:
    outcome = gdpcli("calibrate", "sgd", *MNIST, "--mu", "0.5")
    assert outcome.code == 1
    assert "only asymptotically GDP" in outcome.stderr and outcome.stderr.count("\n") == 1


# --- errors and formats -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("calibrate", "family", "--noise", "__import__('os')", "--epsilon", "0.2", "--delta", "0.1"),
        ("calibrate", "family", "--noise", "eps.__class__", "--epsilon", "0.2", "--delta", "0.1"),
        ("calibrate", "family", "--noise", "open('x')", "--epsilon", "0.2", "--delta", "0.1"),
        ("calibrate", "family", "--noise", "1/eps;2", "--epsilon", "0.2", "--delta", "0.1"),
        ("calibrate", "family", "--noise", "", "--epsilon", "0.2", "--delta", "0.1"),
        ("calibrate", "family", "--noise", "log(delta)/eps", "--epsilon", "0.2", "--delta", "0.1"),
        ("calibrate", "family", "--noise", "1/eps", "--epsilon", "0.2"),
        ("calibrate", "gaussian", "--epsilon", "1"),
        ("calibrate", "gaussian", "--epsilon", "nan", "--delta", "1e-5"),
        ("calibrate", "gaussian", "--epsilon", "1", "--delta", "1"),
        ("calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--sens", "-1"),
        ("calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--sens", "inf"),
        ("calibrate", "gaussian", "--mu", "0.5", "--epsilon", "1"),
        ("calibrate", "gaussian", "--mu", "-1"),
        ("calibrate", "gaussian", "--mu", "0.5", "-f", "xml"),
        ("calibrate", "laplace"),
        ("calibrate", "laplace", "--epsilon", "abc"),
        ("calibrate", "sgd", *MNIST, "--epsilon", "3", "--delta", "1e-5", "--method", "berry-esseen"),
        ("calibrate", "sgd", *MNIST, "--epsilon", "3", "--delta", "1e-5", "--tolerance", "0"),
        ("calibrate", "sgd", *MNIST, "--mu", "1", "--epsilon", "3"),
        ("calibrate", "no-such-kind"),
    ],
)
def test_bad_input_exits_2_with_one_line(gdpcli, args: tuple[str, ...]) -> None:
    one_line_error(gdpcli(*args), 2)


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
@pytest.mark.parametrize(
    "args",
    [
        ("gaussian", "--epsilon", "1", "--delta", "1e-5"),
        ("gaussian", "--mu", "0.5"),
        ("laplace", "--epsilon", "1"),
        ("family", "--noise", "-log(delta)/eps", "--epsilon", "0.2", "--delta", "0.1"),
        ("sgd", "--sampling-rate", "0.01", "--steps", "100", "--mu", "1", "--method", "clt"),
    ],
)
def test_every_format(gdpcli, args: tuple[str, ...], fmt: str) -> None:
    outcome = gdpcli("calibrate", *args, "-f", fmt)
    assert outcome.code == 0, outcome.stderr
    assert outcome.stdout.strip()


@pytest.mark.parametrize("args", [["calibrate", "--help"], ["calibrate", "sgd", "--help"]])
def test_help_imports_neither_numpy_nor_scipy(args: list[str]) -> None:
    assert _modules_after(args) == set()


@pytest.mark.parametrize("kind", ["gaussian", "laplace", "sgd", "family"])
def test_help_has_examples(gdpcli, kind: str) -> None:
    outcome = gdpcli("calibrate", kind, "--help")
    assert outcome.code == 0
    assert "Examples:" in outcome.stdout and f"gdpcli calibrate {kind}" in outcome.stdout
