"""The output contract of every command: infinities, caveats, -0.0, closed streams, 80 columns.

The numbers here are checked for how they are written, not for their value: where a value is asserted it
follows from the mechanism by a line of reasoning written next to it.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gdpcli import progress
from gdpcli.cli import output
from gdpcli.errors import ComputationError
from tests.conftest import infinite
from tests.test_readme import examples

GDPCLI = [sys.executable, "-m", "gdpcli"]

# Commands whose answers include infinities, each for a reason the row must state:
INFINITE = [
    # f_{1,0.01} has delta(eps) >= 0.01 at every eps: no finite epsilon at delta 1e-3 (exact)
    ("convert", "dp:eps=1,delta=0.01", "--delta", "1e-3"),
    # the Berry-Esseen band is vacuous at this delta (an upper bound of inf beside finite ones)
    ("compose", "gaussian:sigma=20x1000", "--delta", "1e-5", "--method", "all"),
    # not GDP (GDPT Thm 4.3): infinite tail limit and mu interval
    ("gdpt-identify", "icea:m=20,n=4", "--refine"),
    # delta(0) = B = 1 on the naive profile: the head's upper bound is infinite
    ("gdpt-identify", "family:A=2,B=1,sigma=2"),
]


def _no_constants(name: str) -> None:
    raise AssertionError(f"JSON holds the non-standard constant {name}")


def strict_json(text: str) -> dict[str, Any]:
    """The document, refusing NaN, Infinity and -Infinity (which Python's json would accept)."""
    return json.loads(text, parse_constant=_no_constants)


def words(text: str) -> str:
    """Text with line breaks and runs of spaces made single spaces (rich wraps notes at the width)."""
    return " ".join(text.split())


def csv_rows(text: str) -> list[dict[str, str]]:
    """Rows of a CSV text that must be pure CSV: every line has as many fields as the header."""
    lines = list(csv.reader(io.StringIO(text)))
    assert lines and all(len(line) == len(lines[0]) for line in lines), text
    return [dict(zip(lines[0], line, strict=True)) for line in lines[1:]]


# ---------------------------------------------------------------------------------------------------------
# 1. Infinities: JSON null + reason, CSV inf + reason, a table note
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", INFINITE)
def test_json_writes_infinity_as_null_with_a_reason(gdpcli, args: tuple[str, ...]) -> None:
    outcome = gdpcli(*args, "-f", "json")
    assert outcome.code == 0, outcome.stderr
    document = strict_json(outcome.stdout)
    assert not re.search(r'"-?(inf|nan)"', outcome.stdout, flags=re.IGNORECASE)
    table = csv_rows(gdpcli(*args, "-f", "csv").stdout)
    assert len(table) == len(document["rows"])
    found = 0
    for row, line in zip(document["rows"], table, strict=True):
        for key, text in line.items():
            if text == "inf":  # CSV keeps inf, a float to every CSV reader
                assert infinite(row, key), row
                assert line["reason"] == row["reason"]
                found += 1
    assert found


@pytest.mark.parametrize("args", INFINITE)
def test_table_explains_every_inf_in_a_note(gdpcli, args: tuple[str, ...]) -> None:
    outcome = gdpcli(*args, "-f", "table")
    assert outcome.code == 0, outcome.stderr
    reasons = {row["reason"] for row in gdpcli(*args, "-f", "json").json()["rows"] if "reason" in row}
    assert re.search(r"\binf\b", outcome.stdout)
    for reason in reasons:
        assert f"note: {reason}" in words(outcome.stdout)


def test_exact_infinite_epsilon_says_why(gdpcli) -> None:
    """f_{1,0.01} puts mass 0.01 at infinite privacy loss: at delta 1e-3 no epsilon is finite."""
    [row] = gdpcli("convert", "dp:eps=1,delta=0.01", "--delta", "1e-3", "-f", "json").json()["rows"]
    assert row["guarantee"] == "exact" and infinite(row, "epsilon")
    assert "mass at infinite privacy loss" in row["reason"]


def test_vacuous_upper_bound_is_not_passed_off_as_infinite(gdpcli) -> None:
    document = gdpcli("compose", "gaussian:sigma=20x1000", "--delta", "1e-5", "--method", "all", "-f", "json")
    [vacuous] = [row for row in document.json()["rows"] if row["epsilon"] is None]
    assert vacuous["guarantee"] == "upper_bound" and "vacuous" in vacuous["reason"]
    assert "may be finite" in vacuous["reason"]


def test_renderer_never_writes_nan(capsys: pytest.CaptureFixture[str]) -> None:
    """A NaN is refused with exit 1 in every format (the one renderer is the last line of defence)."""
    result = output.Result("x", {}, [{"epsilon": np.float64("nan"), "guarantee": "exact", "method": "m"}])
    for fmt in ("table", "csv", "json"):
        with pytest.raises(ComputationError, match="NaN"):
            output.emit(result, fmt)
    assert capsys.readouterr().out == ""


# ---------------------------------------------------------------------------------------------------------
# 2. Caveats: JSON "notes", CSV notes on stderr
# ---------------------------------------------------------------------------------------------------------

NOTED = [
    (
        "calibrate",
        "family",
        "--noise",
        "-log(delta)/eps",
        "--epsilon",
        "0.2",
        "--delta",
        "0.1353352832366127",
    ),
    ("gdpt-identify", "icea:m=20,n=4", "--refine"),
    ("compose", "gaussian:sigma=20x1000", "--delta", "1e-5", "--method", "all"),
]


@pytest.mark.parametrize("args", NOTED)
def test_json_and_csv_keep_the_table_notes(gdpcli, args: tuple[str, ...]) -> None:
    table = gdpcli(*args, "-f", "table")
    notes = [words(note) for note in words(table.stdout).split("note: ")[1:]]
    assert notes, table.stdout
    document = gdpcli(*args, "-f", "json").json()
    reasons = {row["reason"] for row in document["rows"] if "reason" in row}
    assert [n for n in notes if n not in reasons] == document["notes"]  # reasons sit in their rows
    as_csv = gdpcli(*args, "-f", "csv")
    assert as_csv.stderr.splitlines() == [f"gdpcli: note: {note}" for note in document["notes"]]
    assert not as_csv.stdout.startswith("gdpcli") and "note:" not in as_csv.stdout
    csv_rows(as_csv.stdout)


def test_json_notes_is_always_a_list(gdpcli) -> None:
    document = gdpcli("convert", "gdp:mu=1", "--delta", "1e-5", "-f", "json").json()
    assert document["notes"] == []


# ---------------------------------------------------------------------------------------------------------
# 3. No negative zero
# ---------------------------------------------------------------------------------------------------------

NEGATIVE_ZERO = re.compile(r"(?<![\w.])-0(\.0*)?(?![\w.])")


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_no_negative_zero(gdpcli, fmt: str) -> None:
    """10-fold 1-DP has privacy loss at most 10: delta(eps) = 0 exactly at eps = 10 and 12."""
    outcome = gdpcli("compose", "dp:eps=1x10", "--epsilon", "0:12:7", "-f", fmt)
    assert outcome.code == 0, outcome.stderr
    assert not NEGATIVE_ZERO.search(outcome.stdout), outcome.stdout
    if fmt == "json":
        zeros = [row["delta"] for row in outcome.json()["rows"] if row["epsilon"] >= 10]
        assert zeros == [0.0, 0.0] and all(math.copysign(1, z) == 1 for z in zeros)


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_renderer_turns_negative_zero_into_zero(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    row = {"epsilon": -0.0, "delta": np.float64(-0.0), "beta": [np.float32(-0.0)], "guarantee": "exact"}
    output.emit(output.Result("x", {"epsilon": [-0.0]}, [row]), fmt)
    printed = capsys.readouterr().out
    assert "0" in printed and not NEGATIVE_ZERO.search(printed), printed


# ---------------------------------------------------------------------------------------------------------
# 4. Closed streams and broken pipes (real processes)
# ---------------------------------------------------------------------------------------------------------


def shell(command: str) -> subprocess.CompletedProcess[str]:
    line = " ".join(shlex.quote(part) for part in GDPCLI) + " " + command
    return subprocess.run(line, shell=True, capture_output=True, text=True, timeout=120)


def one_error_line(stderr: str, text: str) -> None:
    assert stderr.startswith("gdpcli: error: ") and stderr.count("\n") == 1, stderr
    assert text in stderr and "Traceback" not in stderr


def test_closed_stdout_is_a_clean_error() -> None:
    for command in ("convert gdp:mu=1 --epsilon 1", "convert gdp:mu=1 --epsilon 1 -f table", "--help"):
        completed = shell(f"{command} >&-")
        assert completed.returncode == 1, completed.stderr
        one_error_line(completed.stderr, "stdout is closed")


def test_closed_stdin_matters_only_to_commands_that_read_it() -> None:
    completed = shell("convert gdp:mu=1 --epsilon 1 -f csv <&-")
    assert completed.returncode == 0 and completed.stderr == ""
    assert csv_rows(completed.stdout)[0]["delta"]
    identify = shell("gdpt-identify dp:eps=1 -f json <&-")
    assert identify.returncode == 0 and strict_json(identify.stdout)["rows"]
    reading = shell("gdpt-identify - <&-")
    assert reading.returncode == 2 and reading.stdout == ""
    one_error_line(reading.stderr, "stdin is closed")


def test_closed_stderr_keeps_the_exit_code() -> None:
    assert shell("convert gdp:mu=-1 --delta 1e-5 2>&-").returncode == 2


@pytest.mark.parametrize(
    "fmt",
    ["table", pytest.param("csv", marks=pytest.mark.slow), pytest.param("json", marks=pytest.mark.slow)],
)
def test_broken_pipe_ends_quietly(fmt: str) -> None:
    """The reader goes before gdpcli writes (`| head -1` on a long output): exit 1, nothing on stderr."""
    args = [*GDPCLI, "compose", "gdp:mu=1", "--epsilon", "0:10:2000", "-f", fmt]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 1
    assert stderr == ""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_unwritable_stdout_is_a_clean_error() -> None:
    with open("/dev/full", "w") as full:
        completed = subprocess.run(
            [*GDPCLI, "convert", "gdp:mu=1", "--epsilon", "0:10:5000", "-f", "csv"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert completed.returncode == 1
    one_error_line(completed.stderr, "cannot write the result")


# ---------------------------------------------------------------------------------------------------------
# 5. Tables at 80 (and 60) columns: every number whole
# ---------------------------------------------------------------------------------------------------------


def printed(value: Any) -> str:
    """A number as a table prints it (8 significant digits; integers in full)."""
    return f"{value:.8g}" if isinstance(value, float) else str(value)


def whole(number: str, text: str) -> bool:
    """The printed number stands in the text unbroken: not cut, not folded, not part of a longer one."""
    return re.search(rf"(?<![\w.…]){re.escape(number)}(?![\w.…])", text) is not None


def numbers(row: dict[str, Any]) -> dict[str, str]:
    return {
        key: printed(value)
        for key, value in row.items()
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value is not None
    }


def table_at(gdpcli, monkeypatch: pytest.MonkeyPatch, width: int, args: tuple[str, ...]) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    outcome = gdpcli(*args, "-f", "table")
    assert outcome.code in (0, 3), outcome.stderr
    assert "…" not in outcome.stdout, outcome.stdout
    assert max(len(line) for line in outcome.stdout.splitlines()) <= width, outcome.stdout
    return outcome.stdout


MNIST = ("--dataset-size", "60000", "--batch-size", "256")
NARROW = [
    # (command, the columns a user quotes: each must be printed whole, inside the table)
    (
        ("calibrate", "sgd", *MNIST, "--epochs", "60", "--epsilon", "3", "--delta", "1e-5"),
        ("noise_multiplier",),
    ),
    (
        (
            "sgd",
            "--sampling-rate",
            "0.01",
            "--noise-multiplier",
            "1",
            "--delta",
            "1e-5",
            "--target-epsilon",
            "2",
        ),
        ("steps", "epochs", "epsilon"),
    ),
    (
        ("calibrate", "family", "--noise", "2*log(1/delta)/eps", "--epsilon", "0.7", "--delta", "0.1"),
        ("sigma",),
    ),
    (("calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5"), ("sigma",)),
    (("gdpt-identify", "dp:eps=1"), ("mu_lower", "mu_upper", "head_mu_lower", "head_mu_upper", "residual")),
    (("gdpt-identify", "gaussian:sigma=1,p=0.1x10", "--eps-head", "2"), ("mu_lower", "mu_upper", "slack")),
    (("compose", "gaussian:sigma=20x100", "--delta", "1e-5", "--method", "all"), ("epsilon",)),
]


@pytest.mark.parametrize("width", [80, pytest.param(60, marks=pytest.mark.slow)])
@pytest.mark.parametrize(("args", "answers"), NARROW)
def test_answers_are_whole_in_narrow_tables(
    gdpcli, monkeypatch: pytest.MonkeyPatch, width: int, args: tuple[str, ...], answers: tuple[str, ...]
) -> None:
    document = gdpcli(*args, "-f", "json").json()
    text = table_at(gdpcli, monkeypatch, width, args)
    lines = [line for line in text.splitlines() if line.startswith("│")]  # the table's body
    for row in document["rows"]:
        for key in answers:
            if row.get(key) is not None:
                assert any(whole(printed(row[key]), line) for line in lines), (key, row[key], text)
        for key, number in numbers(row).items():
            assert whole(number, text), (key, number, text)


def test_calibrate_family_keeps_sigma_in_the_table(gdpcli, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both rows have the same sigma (no refinement gain at epsilon 0.7): it is the answer, so it stays a
    column instead of moving to the footer with the other constant columns."""
    args = ("calibrate", "family", "--noise", "2*log(1/delta)/eps", "--epsilon", "0.7", "--delta", "0.1")
    text = table_at(gdpcli, monkeypatch, 80, args)
    header = next(line for line in text.splitlines() if line.startswith("┃"))
    assert "sigma" in header
    footer = [line for line in text.splitlines() if "=" in line and not line.startswith("note")]
    assert not any("sigma =" in line for line in footer)


def help_examples() -> list[str]:
    """The examples of every command's --help, continued lines joined (tools/generate_docs.py's parser)."""
    from tools import generate_docs as generate

    return [
        example.command
        for command in generate.command_tree().walk()
        for example in generate.examples(command.epilog)
        if example.command
    ]


def runnable_as_table(line: str) -> tuple[str, ...] | None:
    """The example's arguments without -f, or None for a pipe, a redirection, a plot or a command that
    prints no table (completion, specs)."""
    args = shlex.split(line)[1:]
    if {"|", ">", "--plot"} & set(args) or args[0] in ("completion", "specs"):
        return None
    while "-f" in args:
        del args[args.index("-f") : args.index("-f") + 2]
    return tuple(args)


EXAMPLES = sorted({args for line in [*examples(), *help_examples()] if (args := runnable_as_table(line))})


@pytest.mark.slow
@pytest.mark.parametrize("width", [80, 60])
@pytest.mark.parametrize("args", EXAMPLES, ids=" ".join)
def test_examples_fit_narrow_terminals(
    gdpcli, monkeypatch: pytest.MonkeyPatch, width: int, args: tuple[str, ...]
) -> None:
    """Every README and --help example, as a table at 80 and 60 columns: every number whole."""
    text = table_at(gdpcli, monkeypatch, width, args)
    for row in gdpcli(*args, "-f", "json").json()["rows"]:
        for key, number in numbers(row).items():
            assert whole(number, text), (key, number, text)


@pytest.mark.parametrize("width", [80, 60])
def test_titles_break_between_words_only(gdpcli, monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    """A long command line as a title is wrapped at the terminal's width between words: every spec and
    option stays whole on one line."""
    specs = ("gaussian:sigma=3,p=0.01,sampling=poisson,times=10", "laplace:b=2", "dp:eps=0.5,delta=1e-6")
    text = table_at(gdpcli, monkeypatch, width, ("compose", *specs, "--delta", "1e-5"))
    title = text.split("┏")[0]
    assert title.split() == ["gdpcli", "compose", *specs]
    for word in specs:
        assert any(word in line.split() for line in title.splitlines()), (word, title)


def test_stacked_layout_keeps_every_row(gdpcli, monkeypatch: pytest.MonkeyPatch) -> None:
    """Eight rows too wide for 60 columns are stacked in several tables; every row is numbered once."""
    text = table_at(
        gdpcli, monkeypatch, 60, ("calibrate", "gaussian", "--epsilon", "0.5,1,2,4", "--delta", "1e-5")
    )
    assert [int(n) for n in re.findall(r"row (\d+)", text)] == list(range(1, 9))


# ---------------------------------------------------------------------------------------------------------
# Progress on long work
# ---------------------------------------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _shown(stderr: io.StringIO, monkeypatch: pytest.MonkeyPatch, reports: int) -> str:
    """What progress_shown writes to `stderr` while up to `reports` reports are made inside it, 0.1 s
    apart (stopping at the first that shows)."""
    monkeypatch.setattr(sys, "stderr", stderr)
    with output.progress_shown(delay=0.0):
        for _ in range(reports):
            progress.report("PLD accountant: a long refinement")
            if "a long refinement" in stderr.getvalue():
                break
            time.sleep(0.1)
    return stderr.getvalue()


def test_progress_is_shown_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "PLD accountant: a long refinement" in _shown(_Terminal(), monkeypatch, reports=100)


def test_progress_is_silent_in_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _shown(io.StringIO(), monkeypatch, reports=3) == ""


def test_long_refinement_reports_its_grid(gdpcli) -> None:
    """The PLD refinement reports each grid (what a terminal shows after 2 s of work)."""
    reports: list[str] = []
    with progress.listening(reports.append):
        assert gdpcli("compose", "gaussian:sigma=2x10", "--epsilon", "1", "--method", "pld").code == 0
    assert reports and all(r.startswith("PLD accountant: ") and "-point grid" in r for r in reports)
