"""`--accumulation-steps A`: A micro-batches of --batch-size B make one logical batch of A x B examples,
with one noise draw per logical step. The run is then the run of batch A x B, step for step: its figures
must be those of --batch-size A B exactly, with the steps counted as logical steps and physical_steps
A times as many.
"""

from __future__ import annotations

import math

import pytest

from tests.conftest import one_line_error, rows_of

DATA = ("--dataset-size", "60000", "--noise-multiplier", "1.1", "--delta", "1e-5")


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_micro_batches_of_64_times_4_are_batches_of_256(gdpcli, sampling: str) -> None:
    logical = rows_of(
        gdpcli("sgd", *DATA, "--batch-size", "256", "--epochs", "2", "--sampling", sampling, "-f", "json")
    )
    micro = ("--batch-size", "64", "--accumulation-steps", "4", "--epochs", "2", "--sampling", sampling)
    accumulated = rows_of(gdpcli("sgd", *DATA, *micro, "-f", "json"))
    steps = math.ceil(2 * 60000 / 256)  # logical steps: T = ceil(E N / (A B))
    assert [r["epsilon"] for r in accumulated] == [r["epsilon"] for r in logical]
    assert all(r["steps"] == steps and r["physical_steps"] == 4 * steps for r in accumulated)
    assert all(r["sampling_rate"] == 256 / 60000 for r in accumulated)
    assert "physical_steps" not in logical[0]


def test_note_says_noise_is_drawn_once_per_logical_step(gdpcli) -> None:
    outcome = gdpcli("sgd", *DATA, "--batch-size", "64", "--accumulation-steps", "4", "--steps", "100")
    assert outcome.code == 0
    assert "ONE noise draw per logical step" in outcome.stderr
    assert "one Poisson sample at rate q, split into the micro-batches" in outcome.stderr


def test_budget_counts_logical_and_physical_steps(gdpcli) -> None:
    budget = ("--delta", "1e-5", "--target-epsilon", "1", "--accuracy", "0.05", "-f", "json")
    [logical] = rows_of(gdpcli("sgd", *DATA[:4], "--batch-size", "256", *budget))
    [micro] = rows_of(gdpcli("sgd", *DATA[:4], "--batch-size", "64", "--accumulation-steps", "4", *budget))
    assert micro["steps"] == logical["steps"] and micro["physical_steps"] == 4 * logical["steps"]
    assert micro["epsilon"] == logical["epsilon"]


def test_calibrated_noise_is_that_of_the_logical_batch(gdpcli) -> None:
    query = ("calibrate", "sgd", *DATA[:2], "--epochs", "2", "--epsilon", "1", "--delta", "1e-5")
    [logical] = rows_of(gdpcli(*query, "--batch-size", "256", "-f", "json"))
    [micro] = rows_of(gdpcli(*query, "--batch-size", "64", "--accumulation-steps", "4", "-f", "json"))
    assert micro["noise_multiplier"] == logical["noise_multiplier"] and micro["steps"] == logical["steps"]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (("--batch-size", "64", "--accumulation-steps", "0"), "--accumulation-steps: must be a whole number"),
        (("--batch-size", "64", "--accumulation-steps", "1000"), "exceeds --dataset-size 60000"),
        (("--accumulation-steps", "4"), "--accumulation-steps multiplies --batch-size"),
    ],
)
def test_bad_accumulation_exits_2_in_one_line(gdpcli, options: tuple[str, ...], named: str) -> None:
    one_line_error(gdpcli("sgd", *DATA, "--steps", "10", *options), 2, named)


def test_accumulation_needs_the_micro_batch_not_a_rate(gdpcli) -> None:
    rate = ("--sampling-rate", "0.01", "--accumulation-steps", "2")
    outcome = gdpcli("sgd", *rate, "--noise-multiplier", "1", "--steps", "10", "--delta", "1e-5")
    assert outcome.code == 2 and "a --sampling-rate is already the logical batch's" in outcome.stderr
