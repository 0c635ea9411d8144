"""`gdpcli sgd --sampling truncated-poisson`: Poisson batches cut at --max-batch-size.

The bounds themselves are checked against mpmath, Monte Carlo and dp-accounting in
tests/core/test_truncated.py; here: the command line, its errors, and that a cap no batch reaches gives
the plain Poisson figures of `gdpcli sgd` (whose figures tests/cli/test_sgd.py checks against
dp-accounting).
"""

from __future__ import annotations

import pytest

from tests.conftest import calibrated_round_trip, one_line_error, rows_of

MNIST = ("sgd", "--dataset-size", "60000", "--batch-size", "256", "--noise-multiplier", "1.1")


def test_a_cap_no_batch_reaches_is_plain_poisson(gdpcli) -> None:
    """B_max = N never cuts a batch: the bounds are the Poisson run's, to rounding."""
    query = (*MNIST, "--epochs", "1", "--delta", "1e-5", "-f", "json")
    capped = rows_of(gdpcli(*query, "--sampling", "truncated-poisson", "--max-batch-size", "60000"))
    plain = rows_of(gdpcli(*query))
    assert [row["guarantee"] for row in capped] == ["upper_bound", "lower_bound"]
    assert capped[0]["neighbouring"] == "add/remove" and capped[0]["max_batch_size"] == 60000
    assert capped[0]["epsilon"] == pytest.approx(plain[0]["epsilon"], rel=1e-12)
    assert capped[1]["epsilon"] == pytest.approx(plain[1]["epsilon"], rel=1e-12)


def test_a_tight_cap_costs_privacy(gdpcli) -> None:
    """Cutting at 300 (0.39 % of the batches): upper bound above plain Poisson, the lower bound below it."""
    query = (*MNIST, "--epochs", "60", "--delta", "1e-5", "-f", "json")
    capped = rows_of(gdpcli(*query, "--sampling", "truncated-poisson", "--max-batch-size", "300"))
    plain = rows_of(gdpcli(*query))
    upper, lower = capped[0]["epsilon"], capped[1]["epsilon"]
    assert lower <= plain[0]["epsilon"] < upper
    assert capped[0]["truncation_probability"] == pytest.approx(0.00387, rel=0.01)


@pytest.mark.slow
def test_step_budget_rests_on_the_upper_bound(gdpcli) -> None:
    """--target-epsilon: the largest T whose rigorous upper bound stays within the target; T + 1 does not.
    Slow: MNIST-sized runs (2 s of CPU); the search and the round trip are those of Poisson sampling."""
    query = (*MNIST, "--sampling", "truncated-poisson", "--max-batch-size", "300", "--delta", "1e-5")
    [budget] = rows_of(gdpcli(*query, "--target-epsilon", "1", "-f", "json"))
    assert budget["guarantee"] == "upper_bound" and budget["epsilon"] <= 1.0
    steps = budget["steps"]
    within = rows_of(gdpcli(*query, "--steps", str(steps), "-f", "json"))[0]["epsilon"]
    beyond = rows_of(gdpcli(*query, "--steps", str(steps + 1), "-f", "json"))[0]["epsilon"]
    assert within <= 1.0 < beyond


@pytest.mark.parametrize(
    ("extra", "code", "message"),
    [
        (("--sampling", "truncated-poisson"), 2, "needs --max-batch-size"),
        (("--max-batch-size", "300"), 2, "--max-batch-size caps the batches"),
        (("--sampling", "truncated-poisson", "--max-batch-size", "0"), 2, "maximum batch size"),
        (("--sampling", "truncated-poisson", "--max-batch-size", "300", "--plot", "x.png"), 2, "--plot"),
        (
            ("--sampling", "truncated-poisson", "--max-batch-size", "300", "--method", "rdp"),
            1,
            "no closed form",
        ),
    ],
)
def test_bad_input_is_refused(gdpcli, extra: tuple[str, ...], code: int, message: str) -> None:
    """Bad input exits 2; a method that cannot answer for the scheme exits 1, as for shuffle; one line."""
    one_line_error(gdpcli(*MNIST, "--epochs", "1", "--delta", "1e-5", *extra), code, message)


@pytest.mark.slow
def test_calibrated_noise_round_trips(gdpcli) -> None:
    """calibrate sgd rests on the rigorous upper bound: fed back, its noise gives epsilon <= the target.
    Slow: MNIST-sized runs (2 s of CPU); the search and the round trip are those of Poisson sampling."""
    data = ("--dataset-size", "60000", "--batch-size", "256", "--epochs", "60")
    data += ("--sampling", "truncated-poisson", "--max-batch-size", "300")
    calibrated_round_trip(gdpcli, *data)
