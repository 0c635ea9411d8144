"""A --target-epsilon that not even one step (sgd) or repetition (compose) meets: the row has no epsilon, and
its reason says why in every format (the output contract: a missing or infinite figure comes with a
reason)."""

from __future__ import annotations

import csv
import io

NO_STEP_FITS = (
    *("sgd", "--dataset-size", "60000", "--batch-size", "256", "--noise-multiplier", "0.3"),
    *("--delta", "1e-5", "--target-epsilon", "0.01"),
)
"""One step of this run has epsilon 8.8 (q = 256/60000, sigma = 0.3), far above the target 0.01."""


def test_a_target_no_step_fits_says_why_in_json(gdpcli) -> None:
    [row] = gdpcli(*NO_STEP_FITS, "-f", "json").json()["rows"]
    assert row["steps"] == 0 and row["epsilon"] is None
    assert row["next_step_exceeds"] is True and row["next_step_epsilon_lower"] > 0.01
    assert "epsilon is missing: not even one step is certified within the target 0.01" in row["reason"]
    assert f"{row['next_step_epsilon_lower']:.6g}" in row["reason"]


def test_a_target_no_step_fits_says_why_in_csv_and_table(gdpcli) -> None:
    [row] = list(csv.DictReader(io.StringIO(gdpcli(*NO_STEP_FITS, "-f", "csv").stdout)))
    assert row["epsilon"] == "" and "not even one step" in row["reason"]
    table = gdpcli(*NO_STEP_FITS, "-f", "table").stdout
    assert " ".join(table.split()).count("not even one step is certified") == 1  # the reason, as a note


def test_a_target_no_step_fits_under_rdp_names_the_method(gdpcli) -> None:
    [row] = gdpcli(*NO_STEP_FITS, "--method", "rdp", "-f", "json").json()["rows"]
    assert row["epsilon"] is None and row["reason"].endswith("by rdp-optimal")


def test_compose_target_no_repetition_fits_says_why(gdpcli) -> None:
    """compose --target-epsilon 0.3 of a list whose one run already has epsilon above it: repetitions 0."""
    args = ("compose", "rr:keep=0.75x10", "gdp:mu=0.5", "--delta", "1e-5", "--target-epsilon", "0.3")
    [row] = gdpcli(*args, "--accuracy", "0.5", "-f", "json").json()["rows"]
    assert row["repetitions"] == 0 and row["epsilon"] is None
    assert row["reason"] == (
        "epsilon is missing: not even one repetition is certified within the target 0.3 by pld"
    )
    [row] = list(csv.DictReader(io.StringIO(gdpcli(*args, "--accuracy", "0.5", "-f", "csv").stdout)))
    assert row["epsilon"] == "" and row["reason"].startswith("epsilon is missing")
