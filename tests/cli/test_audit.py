"""`gdpcli audit`: rigorous lower bounds on epsilon and mu from an attack's hits.

Independent routes: the Clopper-Pearson bounds against scipy.stats.binomtest's exact interval; coverage by
simulation (1000 audits of a Gaussian mechanism with known mu, at 95 % confidence); the claim it is compared
with is the GDP closed form (mpmath).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from gdpcli.core import audit


def rows_of(outcome) -> list[dict]:
    assert outcome.code in (0, 3), outcome.stderr
    return outcome.json()["rows"]


@pytest.mark.parametrize(("hits", "trials"), [(0, 10), (3, 10), (620, 1000), (1000, 1000), (17, 5000)])
def test_clopper_pearson_matches_scipy_exact_interval(hits: int, trials: int) -> None:
    """One-sided at level 0.975 each = the two-sided 95 % exact interval's ends."""
    lower, upper = audit.clopper_pearson(hits, trials, 0.975)
    interval = stats.binomtest(hits, trials).proportion_ci(0.95, method="exact")
    assert lower == pytest.approx(interval.low, abs=1e-12)
    assert upper == pytest.approx(interval.high, abs=1e-12)


def test_audits_cover_the_truth() -> None:
    """1000 simulated audits of a mu = 1 Gaussian mechanism by the optimal test at FPR 5 %, 1000 trials
    each: the 95 % lower bounds on mu and on epsilon(1e-5) exceed the truth in at most ~5 % of audits."""
    mu, fpr, trials = 1.0, 0.05, 1000
    tpr = stats.norm.cdf(mu - stats.norm.ppf(1 - fpr))
    true_epsilon = _gdp_epsilon(mu, 1e-5)
    rng = np.random.default_rng(11)
    misses_mu = misses_epsilon = 0
    for _ in range(1000):
        low, high = audit.rates(int(rng.binomial(trials, tpr)), int(rng.binomial(trials, fpr)), trials, 0.95)
        misses_mu += audit.mu_lower(low, high) > mu
        misses_epsilon += audit.epsilon_lower(low, high, 1e-5) > true_epsilon
    assert misses_mu <= 65 and misses_epsilon <= 65  # 5 % of 1000 plus 2 standard deviations


def _gdp_epsilon(mu: float, delta: float) -> float:
    """epsilon of mu-GDP at delta by bisection on GDP paper Cor. 1 (decreasing in epsilon)."""
    low, high = 0.0, 50.0
    for _ in range(200):
        middle = (low + high) / 2
        gap = stats.norm.cdf(-middle / mu + mu / 2) - math.exp(middle) * stats.norm.cdf(-middle / mu - mu / 2)
        low, high = (middle, high) if gap > delta else (low, middle)
    return high


def test_an_audit_above_the_claim_exits_3(gdpcli) -> None:
    hits = ("audit", "--tpr-hits", "620", "--fpr-hits", "40", "--trials", "1000", "--delta", "1e-5")
    within = gdpcli(*hits, "gaussian:sigma=1x4", "-f", "json")
    assert within.code == 0
    proven, _, claimed = rows_of(within)
    assert claimed["value"] == pytest.approx(_gdp_epsilon(2.0, 1e-5), rel=1e-9)
    assert claimed["gap"] == pytest.approx(claimed["value"] - proven["value"])
    beyond = gdpcli(*hits, "gaussian:sigma=3", "-f", "json")
    assert beyond.code == 3 and "leaks more than it was accounted for" in beyond.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--tpr-hits", "1200", "--fpr-hits", "4", "--trials", "1000"), "--tpr-hits"),
        (("--tpr-hits", "12", "--fpr-hits", "-1", "--trials", "1000"), "--fpr-hits"),
        (("--tpr-hits", "12", "--fpr-hits", "4", "--trials", "0"), "--trials"),
        (("--tpr-hits", "12", "--fpr-hits", "4", "--trials", "100", "--confidence", "1"), "--confidence"),
    ],
)
def test_bad_input_exits_2(gdpcli, args: tuple[str, ...], words: str) -> None:
    outcome = gdpcli("audit", *args)
    assert outcome.code == 2 and words in outcome.stderr, outcome.stderr
