"""`gdpcli sgd --sampling balls-in-bins --participations K`: each example in K distinct batches of every
round of t = ceil(K N / B) steps. The bounds themselves are checked against a Monte Carlo of the exact
pair in tests/core/test_allocation_participations.py; here: the command line, its rows and errors, and
that the library's events.dpsgd(..., participations=K) gives the same figures.
"""

from __future__ import annotations

import pytest

from gdpcli import account, events
from tests.conftest import calibrated_round_trip, one_line_error, rows_of

# --accuracy 0.05: coarser lattices than the default keep the file fast; the bounds stay rigorous
RUN = ("sgd", "--dataset-size", "1000", "--noise-multiplier", "1", "--delta", "1e-5", "--accuracy", "0.05")


def test_rows_print_participations_and_rounds(gdpcli) -> None:
    """B = 100, K = 2: rounds of t = ceil(2 x 1000 / 100) = 20 steps; 60 steps are 3 rounds (6 epochs)."""
    query = (*RUN, "--batch-size", "100", "--steps", "60", "--sampling", "balls-in-bins")
    upper, lower, poisson = rows_of(gdpcli(*query, "--participations", "2", "-f", "json"))
    assert [r["guarantee"] for r in (upper, lower, poisson)] == [
        "upper_bound",
        "lower_bound",
        "approximation",
    ]
    assert {r["participations"] for r in (upper, lower, poisson)} == {2}
    assert (upper["rounds_counted"], upper["round_steps"], upper["epochs"]) == (3, 20, 6.0)
    assert 0 < lower["epsilon"] <= upper["epsilon"]
    [one] = [r for r in rows_of(gdpcli(*query, "-f", "json")) if r["guarantee"] == "upper_bound"]
    assert "participations" not in one and one["epochs_counted"] == 6
    assert upper["epsilon"] == one["epsilon"]  # each round's parts are two 1-out-of-10 allocations


def test_participations_one_is_the_default(gdpcli) -> None:
    query = (*RUN, "--batch-size", "100", "--steps", "25", "--sampling", "balls-in-bins", "-f", "csv")
    assert gdpcli(*query, "--participations", "1").stdout == gdpcli(*query).stdout


def test_more_participations_in_the_same_round_cost_more(gdpcli) -> None:
    """t = 10 steps a round (B = 100 K): K = 1, 2, 5 participations, two rounds."""
    figures = []
    for k in (1, 2, 5):
        query = (*RUN, "--batch-size", str(100 * k), "--steps", "20", "--sampling", "balls-in-bins")
        rows = rows_of(gdpcli(*query, "--participations", str(k), "-f", "json"))
        assert rows[0]["steps"] == 20 and rows[0].get("round_steps", 10) == 10
        figures.append([rows[0]["epsilon"], rows[1]["epsilon"]])
    uppers, lowers = zip(*figures, strict=True)
    assert list(uppers) == sorted(uppers) and list(lowers) == sorted(lowers)


def test_library_gives_the_command_lines_figures(gdpcli) -> None:
    query = (
        *RUN,
        "--batch-size",
        "100",
        "--steps",
        "30",
        "--sampling",
        "balls-in-bins",
        "--participations",
        "3",
    )
    rows = rows_of(gdpcli(*query, "-f", "json"))
    run = events.dpsgd(1.0, 0.1, 30, sampling="balls-in-bins", participations=3)
    found = account.epsilon(run, delta=1e-5, accuracy=0.05)
    assert [(f.value, str(f.guarantee)) for f in found] == [(r["epsilon"], r["guarantee"]) for r in rows]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (
            ("--sampling", "balls-in-bins", "--participations", "0"),
            "--participations: must be a whole number",
        ),
        (
            ("--sampling", "balls-in-bins", "--participations", "-2"),
            "--participations: must be a whole number",
        ),
        (("--sampling", "shuffle", "--participations", "2"), "--participations 2 counts the batches"),
        (("--participations", "2"), "not poisson"),
        (("--sampling", "balls-in-bins", "--participations", "2", "--runs", "2"), "needs whole rounds of 20"),
    ],
)
def test_bad_participations_exit_2_in_one_line(gdpcli, options: tuple[str, ...], named: str) -> None:
    one_line_error(gdpcli(*RUN, "--batch-size", "100", "--steps", "25", *options), 2, named)


def test_participations_cannot_go_with_a_schedule(gdpcli) -> None:
    outcome = gdpcli("sgd", "--schedule", "-", "--participations", "2", "--delta", "1e-5")
    assert outcome.code == 2 and "--participations cannot go with it" in outcome.stderr


def test_library_refuses_participations_of_another_scheme() -> None:
    from gdpcli.errors import InputError

    with pytest.raises(InputError, match="participations"):
        events.dpsgd(1.0, 0.1, 30, sampling="shuffle", participations=2)


def test_calibrated_noise_round_trips(gdpcli) -> None:
    """calibrate sgd rests on the rigorous upper bound of the K-participation run: fed back, its noise gives
    epsilon <= the target."""
    data = ("--dataset-size", "1000", "--batch-size", "100", "--steps", "40", "--sampling", "balls-in-bins")
    data += ("--participations", "2", "--accuracy", "0.05")
    assert calibrated_round_trip(gdpcli, *data)["participations"] == 2
