"""Every command that reads a file or stdin refuses an unreadable, binary or empty one alike: exit 2, one
line `gdpcli: error: <input>: <problem> (<hint>)` naming the input, nothing on stdout."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tests.conftest import one_line_error

READERS = {
    "rdp:file=": ("convert", "rdp:file={}", "--delta", "1e-5"),
    "tradeoff:file=": ("convert", "tradeoff:file={}", "--delta", "1e-5"),
    "profile:file=": ("convert", "profile:file={}", "--delta", "1e-5"),
    "--specs": ("compose", "--specs", "{}", "--delta", "1e-5"),
    "--schedule": ("sgd", "--dataset-size", "100", "--schedule", "{}", "--delta", "1e-5"),
    "calibrate --schedule": (
        "calibrate",
        "sgd",
        *("--dataset-size", "100", "--schedule", "{}", "--epsilon", "1", "--delta", "1e-5"),
    ),
    "gdpt-identify": ("gdpt-identify", "{}"),
}
"""Each reader's command line, {} where the path goes."""

NAMED = {
    "rdp:file=": "spec 'rdp:file=",
    "tradeoff:file=": "spec 'tradeoff:file=",
    "profile:file=": "spec 'profile:file=",
    "--specs": "--specs: ",
    "--schedule": "--schedule: ",
    "calibrate --schedule": "--schedule: ",
    "gdpt-identify": "gdpt-identify: ",
}
"""How each reader's error names the input."""

FILES = {
    "binary": (bytes(range(256)) * 8, "is not a text file"),
    "nul bytes": (b"\x00" * 64, "is not a text file"),
    "empty": (b"", "is empty"),
    "blank lines": (b"\n  \n\t\n", "is empty"),
    "missing": (None, "cannot read"),
    "a directory": ("dir", "Is a directory"),
}


def _path(tmp_path: Path, kind: str) -> str:
    content = FILES[kind][0]
    if content is None:
        return str(tmp_path / "missing.csv")
    if content == "dir":
        return str(tmp_path)
    path = tmp_path / "input.csv"
    path.write_bytes(content)
    return str(path)


def _one_error(outcome, reader: str, problem: str, *, named: bool = True) -> None:
    one_line_error(outcome, 2, problem)
    assert outcome.stderr.rstrip().endswith(")"), outcome.stderr  # a hint
    assert not named or outcome.stderr.startswith(f"gdpcli: error: {NAMED[reader]}"), outcome.stderr


@pytest.mark.parametrize("kind", list(FILES))
@pytest.mark.parametrize("reader", list(READERS))
def test_bad_files_are_refused_alike(gdpcli, tmp_path: Path, reader: str, kind: str) -> None:
    path = _path(tmp_path, kind)
    args = [word.format(path) for word in READERS[reader]]
    _one_error(gdpcli(*args), reader, FILES[kind][1])


STDIN = {
    "undecodable bytes": ("\udc99\udce3 header\n", "stdin is not a text file"),  # surrogateescape's decoding
    "nul": ("\x00\x00", "stdin is not a text file"),
    "empty": ("", "stdin is empty"),
    "closed": (None, "stdin is closed"),
}


@pytest.mark.parametrize("kind", list(STDIN))
@pytest.mark.parametrize("reader", list(READERS))
def test_bad_stdin_is_refused_alike(gdpcli, monkeypatch: pytest.MonkeyPatch, reader: str, kind: str) -> None:
    text, problem = STDIN[kind]
    monkeypatch.setattr(sys, "stdin", None if text is None else io.StringIO(text))
    args = [word.format("-") for word in READERS[reader]]
    _one_error(gdpcli(*args), reader, problem, named=text is not None)  # gdpt-identify checks it first


def test_old_mac_line_endings_read_like_any_other(gdpcli, tmp_path: Path) -> None:
    """Carriage returns alone end lines (csv would stop on them inside a field): the spec list reads."""
    path = tmp_path / "specs.txt"
    path.write_bytes(b"gdp:mu=0.3\rgdp:mu=0.4\r")
    outcome = gdpcli("compose", "--specs", str(path), "--to", "mu", "-f", "json")
    assert outcome.code == 0, outcome.stderr
    assert outcome.json()["rows"][0]["mu"] == pytest.approx(0.5, rel=1e-12)  # sqrt(0.3^2 + 0.4^2)


def test_a_cell_longer_than_csv_allows_is_a_bad_number(gdpcli, tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_text("alpha,beta\n" + "1" * 200_000 + ",0.5\n")
    outcome = gdpcli("convert", f"tradeoff:file={path}", "--delta", "1e-5")
    assert outcome.code == 2 and outcome.stderr.count("\n") == 1
    assert "line 2, column alpha" in outcome.stderr
