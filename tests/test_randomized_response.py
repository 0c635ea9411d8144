"""Randomized response (events.RandomizedResponse), a mechanism kind added in one class: checked end to end
against the two Bernoulli distributions themselves (Neyman-Pearson and the hockey-stick divergence)."""

from __future__ import annotations

import mpmath as mp
import pytest

KEEP = 0.75


def hockey_stick(keep: float, times: int, epsilon: float) -> mp.mpf:
    """delta(eps) = sum over outcomes of max(0, P(x) - e^eps Q(x)) for `times` independent bits, each
    P = Bern(keep), Q = Bern(1 - keep); only the number k of ones matters. mpmath at 50 digits (the two
    terms cancel to many digits where delta is small)."""
    with mp.workdps(50):
        keep_, eps = mp.mpf(keep), mp.mpf(epsilon)
        total = mp.mpf(0)
        for k in range(times + 1):
            p = mp.binomial(times, k) * keep_**k * (1 - keep_) ** (times - k)
            q = mp.binomial(times, k) * (1 - keep_) ** k * keep_ ** (times - k)
            total += max(mp.mpf(0), p - mp.exp(eps) * q)
        return total


def neyman_pearson(keep: float, alpha: float) -> float:
    """beta(alpha) of the most powerful test of Bern(keep) against Bern(1 - keep): reject on the outcome 0
    first (likelihood ratio keep / (1 - keep) > 1), randomizing on it, then on the outcome 1."""
    if alpha <= 1 - keep:
        return 1.0 - (alpha / (1 - keep)) * keep
    return (1.0 - (alpha - (1 - keep)) / keep) * (1 - keep)


def rows(outcome) -> list[dict]:
    assert outcome.code == 0, outcome.stderr
    return outcome.json()["rows"]


@pytest.mark.parametrize("alpha", [0.0, 0.1, 0.25, 0.5, 0.9, 1.0])
def test_tradeoff_is_neyman_pearson(gdpcli, alpha: float) -> None:
    [row] = rows(gdpcli("convert", f"rr:keep={KEEP}", "--alpha", repr(alpha), "-f", "json"))
    assert (row["guarantee"], row["method"]) == ("exact", "closed-form")
    assert row["beta"] == pytest.approx(neyman_pearson(KEEP, alpha), abs=1e-15)


@pytest.mark.parametrize(("times", "epsilon"), [(1, 0.5), (1, 1.0), (10, 3.0), (10, 8.0)])
def test_profile_is_the_hockey_stick_divergence(gdpcli, times: int, epsilon: float) -> None:
    spec = f"rr:keep={KEEP}x{times}"
    [row] = rows(gdpcli("compose", spec, "--epsilon", repr(epsilon), "-f", "json"))
    assert row["guarantee"] == "exact"
    assert row["delta"] == pytest.approx(float(hockey_stick(KEEP, times, epsilon)), rel=1e-12)


def test_every_route_brackets_the_exact_composition(gdpcli) -> None:
    """Every representation is that of pure log(3)-DP: at delta 1e-5, ten steps' exact (binomial) epsilon
    lies in the PLD bounds and below the RDP bounds; a subsampled spec round-trips through its description."""
    from gdpcli.events import parse

    assert parse(parse("rr:keep=0.75,p=0.1x10").describe()) == parse("rr:keep=0.75,p=0.1x10")
    figures = rows(gdpcli("compose", "rr:keep=0.75x10", "--delta", "1e-5", "--method", "all", "-f", "json"))
    [exact] = [r["epsilon"] for r in figures if r["method"] == "binomial"]
    assert hockey_stick(KEEP, 10, exact * (1 - 1e-9)) > 1e-5  # not far below the true epsilon
    pld = {r["guarantee"]: r["epsilon"] for r in figures if r["method"] == "pld"}
    assert pld["lower_bound"] <= exact <= pld["upper_bound"]
    assert all(exact <= r["epsilon"] for r in figures if r["method"].startswith("rdp"))


@pytest.mark.parametrize(("times", "delta"), [(10, 1e-5), (10, 1e-2), (200, 1e-9), (3, 0.3)])
def test_binomial_epsilon_is_on_the_safe_side(gdpcli, times: int, delta: float) -> None:
    """Found with this mechanism: the binomial accountant's exact epsilon sat below the true root (true delta
    1.0000000000119e-5 at delta 1e-5, ten steps) before it was checked term by term."""
    [row] = rows(gdpcli("compose", f"rr:keep=0.75x{times}", "--delta", repr(delta), "-f", "json"))
    assert row["method"] == "binomial"
    assert hockey_stick(KEEP, times, row["epsilon"]) <= delta
    assert hockey_stick(KEEP, times, row["epsilon"] * (1 - 1e-9)) > delta  # and tight


def test_keep_out_of_range_is_a_usage_error(gdpcli) -> None:
    outcome = gdpcli("convert", "rr:keep=0.4", "--delta", "1e-5")
    assert outcome.code == 2 and "keep=0.4 is out of range" in outcome.stderr
