"""`gdpcli sgd --sampling balls-in-bins`: each epoch every example lands in one uniformly
random batch (random allocation). The pairs themselves are checked against mpmath and Monte Carlo in
tests/core/test_allocation.py; here: the command line, the labels, the ordering of the figures against
independent closed forms (the no-amplification GDP bound, in mpmath), and the step budget's round trip.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from tests.conftest import at_least_digits, calibrated_round_trip, rows_of

MNIST = ("sgd", "--dataset-size", "60000", "--batch-size", "256", "--noise-multiplier", "1.1")


@at_least_digits(30)
def mp_gdp_epsilon(mu: float, delta: float) -> float:
    """epsilon of mu-GDP at delta (GDP paper Cor. 1), by mpmath root finding on the decreasing delta(eps)."""
    mu = mp.mpf(mu)
    gap = lambda eps: mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2) - delta  # noqa: E731
    return float(mp.findroot(gap, (mp.mpf(0), mp.mpf(60)), solver="anderson"))


def test_mnist_bounds_are_ordered_and_labelled(gdpcli) -> None:
    """upper >= lower > 0, both below the no-amplification bound sqrt(60) / 1.1-GDP, and the interval
    narrow (the lattice resolves MNIST's shift)."""
    rows = rows_of(
        gdpcli(*MNIST, "--epochs", "60", "--delta", "1e-5", "--sampling", "balls-in-bins", "-f", "json")
    )
    upper, lower, poisson = rows
    assert [r["guarantee"] for r in rows] == ["upper_bound", "lower_bound", "approximation"]
    assert {r["neighbouring"] for r in rows} == {"add/remove"} and rows[0]["steps"] == 60 * 235
    assert 0 < lower["epsilon"] <= upper["epsilon"] <= 1.01 * lower["epsilon"]
    assert upper["epsilon"] < mp_gdp_epsilon(math.sqrt(60) / 1.1, 1e-5)
    assert poisson["method"] == "as-if-poisson"


@pytest.mark.slow
def test_budget_round_trip(gdpcli) -> None:
    """--target-epsilon: the budget's upper bound is within the target, and one more step is not.
    Slow: MNIST-sized runs (2 s of CPU); the search and the round trip are those of Poisson sampling."""
    query = (*MNIST, "--sampling", "balls-in-bins", "--delta", "1e-5")
    [budget] = rows_of(gdpcli(*query, "--target-epsilon", "1", "-f", "json"))
    assert budget["guarantee"] == "upper_bound" and budget["epsilon"] <= 1.0
    within = rows_of(gdpcli(*query, "--steps", str(budget["steps"]), "-f", "json"))[0]["epsilon"]
    beyond = rows_of(gdpcli(*query, "--steps", str(budget["steps"] + 1), "-f", "json"))[0]["epsilon"]
    assert within <= 1.0 < beyond


@pytest.mark.parametrize("method", ["clt", "rdp", "exact"])
def test_methods_without_an_analysis_are_refused(gdpcli, method: str) -> None:
    outcome = gdpcli(
        *MNIST, "--epochs", "1", "--delta", "1e-5", "--sampling", "balls-in-bins", "--method", method
    )
    assert outcome.code == 1 and "balls-in-bins batches" in outcome.stderr
    assert len(outcome.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_calibrated_noise_round_trips(gdpcli) -> None:
    """calibrate sgd rests on the rigorous upper bound: fed back, its noise gives epsilon <= the target.
    Slow: MNIST-sized runs (2 s of CPU); the search and the round trip are those of Poisson sampling."""
    data = ("--dataset-size", "60000", "--batch-size", "256", "--epochs", "60", "--sampling", "balls-in-bins")
    calibrated_round_trip(gdpcli, *data)
