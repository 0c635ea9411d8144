"""risk and audit of DP-SGD runs under batch schemes that are no composition of sampled steps (shuffled,
balls-in-bins and truncated Poisson batches): each scheme's pairs answer every question, with its
pessimistic pair's figures as upper bounds on the TPR and its dominated pair's as lower bounds."""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm

RUN = ("--dataset-size", "60000", "--batch-size", "256", "--noise-multiplier", "1.1", "--epochs", "3")
FPRS = (0.001, 0.01, 0.1)


def _bracket(rows: list[dict], measure: str, at: float | None = None) -> tuple[float, float, dict]:
    """(lower, upper) of a measure at an FPR, and the methods that gave them."""
    found = {
        row["guarantee"]: row
        for row in rows
        if row["measure"] == measure and (at is None or row.get("fpr") == at)
    }
    return found["lower_bound"]["value"], found["upper_bound"]["value"], found


@pytest.mark.parametrize("sampling", ["shuffle", "balls-in-bins", "truncated-poisson"])
def test_every_scheme_brackets_the_attack(gdpcli, sampling: str) -> None:
    extra = ("--max-batch-size", "300") if sampling == "truncated-poisson" else ()
    outcome = gdpcli("risk", *RUN, "--sampling", sampling, *extra, "-f", "json")
    assert outcome.code == 0, outcome.stderr
    rows = outcome.json()["rows"]
    for fpr in FPRS:
        lower, upper, _ = _bracket(rows, "tpr", fpr)
        assert fpr <= lower <= upper <= 1.0
    lower, upper, _ = _bracket(rows, "advantage")
    assert 0.0 < lower <= upper


def test_shuffled_batches_are_bounded_by_their_gdp_guarantee(gdpcli) -> None:
    """The upper bound is that of (sqrt(E) s)-GDP, E = 3 epochs touched and s = 2C / sigma (replace-one):
    TPR Phi(mu - Phi^-1(1 - alpha)) (GDP paper Def. 2), which the PLD's pessimistic figure may exceed by
    its width only; the lower bound is the max test's (Chua et al.), far below it."""
    rows = gdpcli("risk", *RUN, "--sampling", "shuffle", "-f", "json").json()["rows"]
    mu = math.sqrt(3) * 2.0 / 1.1
    for fpr in FPRS:
        lower, upper, methods = _bracket(rows, "tpr", fpr)
        exact = float(norm.cdf(mu - norm.ppf(1 - fpr)))
        assert exact <= upper <= exact + 5e-3
        assert lower < exact / 2
        assert methods["upper_bound"]["method"] == "shuffle-gdp"
        assert methods["lower_bound"]["method"] == "shuffle-max-test"


def test_truncated_batches_that_are_never_cut_are_poisson(gdpcli) -> None:
    """With B_max >= N no batch is cut: the scheme's bracket and the Poisson run's must overlap."""
    cut = gdpcli("risk", *RUN, "--sampling", "truncated-poisson", "--max-batch-size", "60000", "-f", "json")
    plain = gdpcli("risk", *RUN, "-f", "json")
    for measure, at in (("tpr", 0.01), ("advantage", None)):
        low, high, _ = _bracket(cut.json()["rows"], measure, at)
        poisson_low, poisson_high, _ = _bracket(plain.json()["rows"], measure, at)
        assert low <= poisson_high and poisson_low <= high


def test_audit_claims_the_schemes_upper_bound(gdpcli) -> None:
    """audit compares an attack with the accountant's upper bound on epsilon: for shuffled batches the
    scheme's, at least sgd's rigorous lower bound and close to its (exact GDP) upper bound."""
    run = (*RUN, "--sampling", "shuffle")
    audit = gdpcli("audit", *run, "--tpr-hits", "60", "--fpr-hits", "5", "--trials", "100", "-f", "json")
    sgd = gdpcli("sgd", *run, "--delta", "1e-5", "-f", "json").json()["rows"]
    claimed = [row for row in audit.json()["rows"] if row["guarantee"] == "upper_bound"]
    assert audit.code == 0, audit.stderr
    bounds = {row["guarantee"]: row["epsilon"] for row in sgd}
    assert bounds["lower_bound"] <= claimed[0]["value"] <= bounds["upper_bound"] * 1.01


@pytest.mark.parametrize(
    "options",
    [
        ("--sampling", "shuffle", "--method", "rdp"),
        ("--sampling", "fixed", "--method", "rdp"),
        ("--sampling", "balls-in-bins", "--group", "2"),
    ],
)
def test_risk_refuses_what_sgd_refuses_for_its_reason(gdpcli, options: tuple[str, ...]) -> None:
    """risk asks the run's plan (the one sgd asks): the same refusal, word for word."""
    risk = gdpcli("risk", *RUN, *options)
    sgd = gdpcli("sgd", *RUN, *options, "--delta", "1e-5")
    assert risk.code == sgd.code == 1 and risk.stderr == sgd.stderr
    assert risk.stderr.startswith("gdpcli: error:") and risk.stderr.count("\n") == 1
