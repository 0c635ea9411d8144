"""A --target-epsilon that not even one step meets: the row has no epsilon, and its reason says why in every
format (the output contract: a missing or infinite figure comes with a reason)."""

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
