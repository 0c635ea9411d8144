"""`gdpcli sgd --schedule` and `--runs`, `calibrate sgd --schedule --scale`.

Must hold: a one-phase schedule equals the plain command to the last digit; K identical phases equal the
K-times-longer run; bad schedules exit 2 naming row and column. A two-phase composition is checked against
dp-accounting's PLD of the same events (an independent implementation).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import one_line_error, rows_of

PLAIN = ("sgd", "--sampling-rate", "0.01", "--noise-multiplier", "1.1", "--delta", "1e-5")


def epsilons(outcome) -> list[tuple[float, str]]:
    return [(row["epsilon"], row["guarantee"]) for row in rows_of(outcome)]


def write(tmp_path: Path, text: str, name: str = "phases.csv") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_one_phase_is_the_plain_run_to_the_last_digit(gdpcli, tmp_path: Path, sampling: str) -> None:
    schedule = write(tmp_path, f"steps,sampling_rate,noise_multiplier,sampling\n3000,0.01,1.1,{sampling}\n")
    plain = gdpcli(*PLAIN, "--steps", "3000", "--sampling", sampling, "-f", "json")
    scheduled = gdpcli("sgd", "--schedule", schedule, "--delta", "1e-5", "-f", "json")
    assert epsilons(scheduled) == epsilons(plain)


def test_k_identical_phases_are_the_k_times_longer_run(gdpcli, tmp_path: Path) -> None:
    schedule = write(tmp_path, "epochs,sampling_rate,noise_multiplier\n" + "10,0.01,1.1\n" * 3)
    longer = epsilons(gdpcli(*PLAIN, "--epochs", "30", "-f", "json"))
    assert epsilons(gdpcli("sgd", "--schedule", schedule, "--delta", "1e-5", "-f", "json")) == longer
    single = write(tmp_path, "epochs,sampling_rate,noise_multiplier\n10,0.01,1.1\n", "one.csv")
    assert (
        epsilons(gdpcli("sgd", "--schedule", single, "--delta", "1e-5", "--runs", "3", "-f", "json"))
        == longer
    )
    assert epsilons(gdpcli(*PLAIN, "--epochs", "10", "--runs", "3", "-f", "json")) == longer


def test_json_opacus_history_and_dp_accounting_events_read_alike(gdpcli, tmp_path: Path) -> None:
    """The same two phases as CSV, JSON objects, an Opacus history and dp_accounting events (to_named_tuple,
    written out as dicts) give the same figures."""
    dp_event = pytest.importorskip("dp_accounting").dp_event

    def as_dict(value):
        if hasattr(value, "_asdict"):
            return {key: as_dict(inner) for key, inner in value._asdict().items()}
        return [as_dict(inner) for inner in value] if isinstance(value, (list, tuple)) else value

    csv_text = "steps,sampling_rate,noise_multiplier\n1000,0.01,1.1\n500,0.02,0.9\n"
    objects = [
        {"steps": 1000, "sampling_rate": 0.01, "noise_multiplier": 1.1},
        {"steps": 500, "sampling_rate": 0.02, "noise_multiplier": 0.9},
    ]
    opacus = [[1.1, 0.01, 1000], [0.9, 0.02, 500]]
    event = dp_event.ComposedDpEvent(
        [
            dp_event.SelfComposedDpEvent(
                dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1)), 1000
            ),
            dp_event.SelfComposedDpEvent(
                dp_event.PoissonSampledDpEvent(0.02, dp_event.GaussianDpEvent(0.9)), 500
            ),
        ]
    )
    texts = [csv_text, json.dumps(objects), json.dumps(opacus), json.dumps(as_dict(event.to_named_tuple()))]
    found = [
        epsilons(gdpcli("sgd", "--schedule", write(tmp_path, text, f"s{i}"), "--delta", "1e-5", "-f", "json"))
        for i, text in enumerate(texts)
    ]
    assert found[1:] == found[:1] * 3


def test_two_phases_agree_with_dp_accounting(gdpcli, tmp_path: Path) -> None:
    """dp-accounting's pessimistic PLD of the same events is an upper bound on the truth, its optimistic one
    a lower bound: each must be consistent with gdpcli's rigorous interval."""
    dp_accounting = pytest.importorskip("dp_accounting")
    schedule = write(tmp_path, "steps,sampling_rate,noise_multiplier\n1000,0.01,1.1\n500,0.02,0.9\n")
    [(upper, _), (lower, _)] = epsilons(
        gdpcli("sgd", "--schedule", schedule, "--delta", "1e-5", "-f", "json")
    )
    event = dp_accounting.dp_event.ComposedDpEvent(
        [
            dp_accounting.dp_event.SelfComposedDpEvent(
                dp_accounting.dp_event.PoissonSampledDpEvent(q, dp_accounting.dp_event.GaussianDpEvent(s)), t
            )
            for q, s, t in ((0.01, 1.1, 1000), (0.02, 0.9, 500))
        ]
    )
    pessimistic = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-3).compose(event)
    pessimistic = pessimistic.get_epsilon(1e-5)
    assert lower <= pessimistic  # lower <= truth <= dp-accounting's pessimistic bound
    assert pessimistic <= upper + 0.01  # and dp-accounting's grid of 1e-3 costs it at most this much more


def test_calibrated_scale_round_trips(gdpcli, tmp_path: Path) -> None:
    """The scaled noise multipliers fed back give epsilon <= the target (and the row says so)."""
    schedule = write(tmp_path, "steps,sampling_rate,noise_multiplier\n1000,0.01,1.1\n2000,0.02,0.9\n")
    for scale in ("all", "last"):
        query = ("--schedule", schedule, "--epsilon", "3", "--delta", "1e-5", "--scale", scale, "-f", "json")
        [row] = rows_of(gdpcli("calibrate", "sgd", *query))
        assert row["guarantee"] == "upper_bound" and row["achieved_epsilon"] <= 3.0
        first, last = row["noise_multipliers"]
        assert (first == 1.1) is (scale == "last")
        fed_back = write(
            tmp_path,
            f"steps,sampling_rate,noise_multiplier\n1000,0.01,{first!r}\n2000,0.02,{last!r}\n",
            "back.csv",
        )
        [(upper, _), _] = epsilons(gdpcli("sgd", "--schedule", fed_back, "--delta", "1e-5", "-f", "json"))
        assert upper <= 3.0


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "phases.csv' is empty"),
        ("steps,sampling_rate,noise_multiplier\n", "no phases"),
        ("steps,sampling_rate,noise_multiplier\n100,0.01,1\n-5,0.01,1\n", "row 2, column steps"),
        ("steps,sampling_rate,noise_multiplier\n100,1.5,1\n", "row 1, column sampling_rate"),
        ("steps,sampling_rate,noise_multiplier,sampling\n100,0.1,1,shuffle\n", "row 1, column sampling"),
        ("steps,sampling_rate\n100,0.1\n", "row 1: the column noise_multiplier is missing"),
        (
            "steps,noise_multiplier\n100,1\n",
            "row 1: give exactly one of the columns batch_size and sampling_rate",
        ),
        ("steps,sampling_rate,noise_multiplier,colour\n100,0.1,1,red\n", "unknown column 'colour'"),
        ("steps,sampling_rate,noise_multiplier\n100,0.1,abc\n", "row 1, column noise_multiplier"),
        ("steps,batch_size,noise_multiplier\n100,10,1\n", "row 1, column batch_size: needs --dataset-size"),
        ("[[1.1, 0.01]]", "row 1"),
        ('{"class_name": "LaplaceDpEvent", "parameter": 1}', "LaplaceDpEvent"),
        (
            "steps,sampling_rate,noise_multiplier,sampling\n100,0.1,1,poisson\n100,0.1,1,fixed\n",
            "mixes neighbouring relations",
        ),
    ],
)
def test_bad_schedules_exit_2_naming_row_and_column(gdpcli, tmp_path: Path, text: str, words: str) -> None:
    one_line_error(gdpcli("sgd", "--schedule", write(tmp_path, text), "--delta", "1e-5"), 2, words)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (("--epochs", "3"), "--epochs cannot go with it"),
        (("--noise-multiplier", "1"), "--noise-multiplier cannot go with --schedule"),
        (("--sampling", "fixed"), "--sampling cannot go with it"),
        (("--target-epsilon", "2"), "--target-epsilon cannot go with --schedule"),
    ],
)
def test_run_options_clash_with_a_schedule(
    gdpcli, tmp_path: Path, extra: tuple[str, ...], words: str
) -> None:
    schedule = write(tmp_path, "steps,sampling_rate,noise_multiplier\n100,0.1,1\n")
    outcome = gdpcli("sgd", "--schedule", schedule, "--delta", "1e-5", *extra)
    assert outcome.code == 2 and words in outcome.stderr, outcome.stderr


def test_runs_of_shuffled_batches_need_whole_epochs(gdpcli) -> None:
    """Each run's partial last epoch is a fresh epoch: K runs of 1.5 epochs touch 2K epochs, not 1.5K."""
    query = (
        "sgd",
        "--dataset-size",
        "1000",
        "--batch-size",
        "100",
        "--noise-multiplier",
        "2",
        "--delta",
        "1e-5",
    )
    outcome = gdpcli(*query, "--sampling", "shuffle", "--epochs", "1.5", "--runs", "2")
    assert outcome.code == 2 and "whole epochs" in outcome.stderr
    whole = rows_of(gdpcli(*query, "--sampling", "shuffle", "--epochs", "2", "--runs", "2", "-f", "json"))
    assert whole[0]["steps"] == 40


def _gaussian_steps(sampled: dict) -> str:
    """1000 steps of a dp_accounting sampled event of GaussianDpEvent(1.1), as JSON."""
    gaussian = {"class_name": "GaussianDpEvent", "noise_multiplier": 1.1}
    return json.dumps(
        {"class_name": "SelfComposedDpEvent", "event": sampled | {"event": gaussian}, "count": 1000}
    )


def test_replace_one_events_carry_the_note_compose_prints(gdpcli, tmp_path: Path) -> None:
    """dp_accounting events sampled without replacement are accounted at sensitivity 2C by sgd --schedule
    (and calibrate sgd --schedule) as by compose --specs, and all say so in the same note (CSV: on stderr);
    Poisson-sampled ones have none."""
    fixed = write(
        tmp_path,
        _gaussian_steps(
            {
                "class_name": "SampledWithoutReplacementDpEvent",
                "source_dataset_size": 60000,
                "sample_size": 256,
            }
        ),
        "fixed.json",
    )
    sgd = gdpcli("sgd", "--schedule", fixed, "--delta", "1e-5", "-f", "json")
    compose = gdpcli("compose", "--specs", fixed, "--delta", "1e-5", "-f", "json")
    [note] = [note for note in sgd.json()["notes"] if note.startswith("replace-one neighbours")]
    assert note in compose.json()["notes"] and "sensitivity 2" in note
    assert [row["epsilon"] for row in rows_of(sgd)] == [row["epsilon"] for row in rows_of(compose)]
    in_csv = gdpcli("sgd", "--schedule", fixed, "--delta", "1e-5", "-f", "csv")
    assert f"gdpcli: note: {note}\n" in in_csv.stderr
    calibrated = gdpcli(
        "calibrate", "sgd", "--schedule", fixed, "--epsilon", "8", "--delta", "1e-5", "-f", "json"
    )
    assert note in calibrated.json()["notes"]
    poisson = write(
        tmp_path,
        _gaussian_steps({"class_name": "PoissonSampledDpEvent", "sampling_probability": 0.01}),
        "p.json",
    )
    notes = gdpcli("sgd", "--schedule", poisson, "--delta", "1e-5", "-f", "json").json()["notes"]
    assert not any(note.startswith("replace-one neighbours") for note in notes)
