"""The one renderer: a command's result rows -> table | csv | json (README, Conventions).

Every format renders the same prepared rows (`prepare`): numpy values become Python ones, -0.0 becomes 0.0,
a NaN is refused (exit 1: no answer is better than one that is not a number), and a row with an infinite
figure gets a `reason` column that says why (the command's own reason, else `why_infinite`).

- CSV: one header row (the union of row keys, in first-seen order), full float precision (repr); an
  infinite figure is written `inf` (a float to every CSV reader). The notes go to stderr as
  `gdpcli: note: ...`, so that stdout stays pure CSV.
- JSON: {"command", "gdpcli_version", "inputs", "rows", "notes"}; an infinite figure is `null` (JSON has
  no infinity) and the row's `reason` says why; `notes` lists the caveats a table prints as `note:` lines.
- Table: for humans; rounded, titled, coloured only on a terminal, NO_COLOR honoured (rich does that);
  `inf` is printed and explained by a `note:`. Numbers are never cut: a table wider than the terminal is
  printed stacked (one column per row, the fields down the side), as many rows per table as fit.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TextIO

from gdpcli import __version__, progress
from gdpcli.errors import MARK, ComputationError, OutputClosed, OutputError, spelled
from gdpcli.guarantees import Guarantee

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from gdpcli.events import Repeated

Row = dict[str, Any]

FIGURES = ("epsilon", "delta", "beta", "mu")
"""The columns a table keeps whole and in the table by default (the privacy figures rows state)."""


@dataclass
class Result:
    """What a command computed: its inputs echoed back, one dict per output row, caveats, and the columns
    that hold its answer (`answers`: never moved out of a table, even when every row has the same value)."""

    command: str
    inputs: dict[str, Any]
    rows: list[Row]
    title: str = ""
    notes: list[str] = field(default_factory=list)
    answers: tuple[str, ...] = FIGURES


def print_dp_event(found: Sequence[Repeated], figures_asked: bool, fmt: str | None) -> None:
    """--to dp-event: the composition as a dp_accounting event, JSON on stdout, with the notes on where
    dp_accounting's conventions differ on stderr (gdpcli.dp_events)."""
    from gdpcli import dp_events
    from gdpcli.errors import InputError

    if figures_asked:
        raise InputError(
            "--to dp-event prints the composition as an event, not figures",
            "ask for figures in a second command",
        )
    if fmt not in (None, "json"):
        raise InputError(f"--to dp-event writes JSON, not {fmt}", "leave out -f or give -f json")
    print(json.dumps(dp_events.write(found), indent=2), file=require_stdout())
    for note in dp_events.notes(found):
        print(f"gdpcli: note: {note}", file=sys.stderr)


def require_stdout() -> TextIO:
    """sys.stdout, or OutputError when it is closed (after `>&-` Python has no sys.stdout)."""
    if sys.stdout is None:
        raise OutputError("stdout is closed: the result has nowhere to go", "redirect it to a file instead")
    return sys.stdout


def resolve_format(requested: str | None) -> str:
    """The explicit format, or the default: `table` on a terminal, `csv` otherwise."""
    if requested:
        return requested
    return "table" if require_stdout().isatty() else "csv"


# ---------------------------------------------------------------------------------------------------------
# The prepared rows, the same for every format
# ---------------------------------------------------------------------------------------------------------


def _python(value: Any) -> Any:
    """Numpy scalars and arrays to Python values, tuples to lists, and -0.0 to 0.0, recursively."""
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    if isinstance(value, float):
        return 0.0 if value == 0.0 else value
    if isinstance(value, (list, tuple)):
        return [_python(v) for v in value]
    if isinstance(value, dict):
        return {k: _python(v) for k, v in value.items()}
    return value


def _is_infinite(value: Any) -> bool:
    return isinstance(value, float) and math.isinf(value)


_TRULY_INFINITE = {
    "epsilon": "no finite epsilon: delta is below the mass at infinite privacy loss (or epsilon is beyond "
    "the float range)",
    "mu": "no finite mu: the mechanism is not GDP",
}


def why_infinite(key: str, row: Row) -> str:
    """Why `key` is infinite in this row, read from its guarantee label: the generic reason, for rows whose
    command gave none (a command that knows better puts its own `reason` in the row)."""
    label, method = row.get("guarantee"), row.get("method", "the method")
    if label == Guarantee.UPPER_BOUND:
        return f"vacuous upper bound: {method} certifies no finite {key} here (the true {key} may be finite)"
    if label == Guarantee.APPROXIMATION:
        return f"the {method} approximation is vacuous here: it gives no finite {key}"
    if label in (Guarantee.EXACT, Guarantee.LOWER_BOUND):
        return _TRULY_INFINITE.get(key, f"the true {key} is infinite")
    return f"{key} is infinite"


def _explained(row: Row) -> Row:
    """The row, with a `reason` when it has an infinite figure and none yet."""
    infinite = [key for key, value in row.items() if _is_infinite(value)]
    if not infinite or row.get("reason"):
        return row
    return {**row, "reason": "; ".join(f"{key} = {row[key]}: {why_infinite(key, row)}" for key in infinite)}


def _refuse_nan(rows: list[Row]) -> None:
    """ComputationError (exit 1) instead of a NaN in the output."""
    for number, row in enumerate(rows, start=1):
        bad = [key for key, value in row.items() if isinstance(value, float) and math.isnan(value)]
        if bad:
            raise ComputationError(
                f"{', '.join(bad)} came out as NaN (row {number})", "rerun with --debug and report it"
            )


def option_of(parameter: str) -> str:
    """The option that sets a parameter named in a message from below the command line (errors.parameter):
    noise_multiplier -> --noise-multiplier."""
    return "--" + parameter.replace("_", "-")


def _spelled(value: object) -> object:
    """A text that names parameters (errors.parameter) with the options that set them; anything else as is."""
    return spelled(value, option_of) if isinstance(value, str) and MARK in value else value


def prepare(result: Result) -> Result:
    """The result as every format renders it: Python numbers, no -0.0, no NaN, infinities explained, each
    note once, parameters named by their options."""
    rows = [{key: _spelled(value) for key, value in _python(row).items()} for row in result.rows]
    _refuse_nan(rows)
    return replace(
        result,
        inputs=_python(result.inputs),
        rows=[_explained(row) for row in rows],
        notes=[str(_spelled(note)) for note in dict.fromkeys(result.notes)],
    )


def columns(rows: list[Row]) -> list[str]:
    """The union of the rows' keys in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


# ---------------------------------------------------------------------------------------------------------
# CSV and JSON
# ---------------------------------------------------------------------------------------------------------


def _as_text(value: Any, booleans: tuple[str, str], real: Callable[[float], str]) -> str:
    """A value as text: None empty, a bool as one of (true word, false word), a float by `real`."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return booleans[0] if value else booleans[1]
    if isinstance(value, float):
        return real(value)
    return str(value)


def _csv_cell(value: Any) -> str:
    """Full precision (repr): the CSV is data for the next tool."""
    return _as_text(value, ("true", "false"), repr)


def to_csv(result: Result) -> str:
    """The prepared result as CSV (its notes are not part of it: emit writes them to stderr)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = columns(result.rows)
    writer.writerow(header)
    for row in result.rows:
        writer.writerow([_csv_cell(row.get(key)) for key in header])
    return buffer.getvalue()


def _json_value(value: Any) -> Any:
    """Infinite floats to None (JSON null; the row's reason says why), recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


def to_json(result: Result) -> str:
    """The prepared result as one JSON document."""
    document = {
        "command": result.command,
        "gdpcli_version": __version__,
        "inputs": _json_value(result.inputs),
        "rows": _json_value(result.rows),
        "notes": result.notes,
    }
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


# ---------------------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------------------


_GUARANTEE_STYLE = {
    Guarantee.EXACT: "green",
    Guarantee.UPPER_BOUND: "cyan",
    Guarantee.LOWER_BOUND: "blue",
    Guarantee.APPROXIMATION: "yellow",
}

_ALWAYS_SHOWN = ("guarantee", "method")


def _table_text(value: Any) -> str:
    """Rounded to 8 significant digits: the table is for people."""
    return _as_text(value, ("yes", "no"), lambda real: f"{real:.8g}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _cell(key: str, value: Any) -> Text:
    """One cell: a number is right-aligned and never wrapped; text folds rather than being cut."""
    from rich.text import Text

    text = _table_text(value)
    if _is_number(value):
        return Text(text, justify="right", no_wrap=True)
    style = _GUARANTEE_STYLE.get(text) if key == "guarantee" else None
    return Text(text, style=style or "", overflow="fold")


def _split_constant(rows: list[Row], keep: tuple[str, ...]) -> tuple[list[str], Row]:
    """Table columns, and the columns that hold one value in every row (shown once, as a caption).

    Only for several rows; the guarantee and method labels and the `keep` columns stay in the table.
    """
    header = columns(rows)
    if len(rows) < 2:
        return header, {}
    constant = {
        key: rows[0].get(key)
        for key in header
        if key not in keep and all(key in row and row[key] == rows[0][key] for row in rows)
    }
    return [key for key in header if key not in constant], constant


@dataclass
class _Grid:
    """A table's cells: its columns, one list of cells per row, which columns hold numbers, and the
    columns left out because every row has the same value (shown once, as a caption)."""

    header: list[str]
    cells: list[list[Text]]
    numeric: list[bool]
    constant: Row

    def width(self) -> int:
        """The width of the usual table with every cell whole."""
        return _span(
            [max([len(key)] + [row[i].cell_len for row in self.cells]) for i, key in enumerate(self.header)]
        )


def _grid(rows: list[Row], keep: tuple[str, ...]) -> _Grid:
    header, constant = _split_constant(rows, keep)
    cells = [[_cell(key, row.get(key)) for key in header] for row in rows]
    return _Grid(header, cells, [any(_is_number(row.get(key)) for row in rows) for key in header], constant)


def _span(widths: list[int]) -> int:
    """Width of a rich table (heavy-head box, one space of padding each side) with columns this wide."""
    return 1 + sum(width + 3 for width in widths)


def _wide(grid: _Grid) -> Table:
    """The usual table: a column per field, a line per row."""
    from rich.table import Table

    table = Table()
    for key, number in zip(grid.header, grid.numeric, strict=True):
        table.add_column(key, justify="right" if number else "left", no_wrap=number)
    for row in grid.cells:
        table.add_row(*row)
    return table


def _stacked(header: list[str], cells: list[list[Text]], first: int, numbered: bool) -> Table:
    """The transposed table: a line per field, a column per row (numbered from first + 1)."""
    from rich.table import Table

    table = Table(show_header=numbered)
    table.add_column("", overflow="fold")
    for number in range(first + 1, first + len(cells) + 1):
        table.add_column(f"row {number}")
    for index, key in enumerate(header):
        table.add_row(key, *(row[index] for row in cells))
    return table


def _stacked_tables(width: int, grid: _Grid) -> list[Table]:
    """Stacked tables, as many rows in each as fit in `width` (one at the least)."""
    numbered = len(grid.cells) > 1
    label = len(f"row {len(grid.cells)}") if numbered else 0
    field_width = max(len(key) for key in grid.header)
    row_widths = [max([label] + [cell.cell_len for cell in row]) for row in grid.cells]
    tables, first = [], 0
    while first < len(grid.cells):
        count = 1
        while (
            first + count < len(grid.cells)
            and _span([field_width, *row_widths[first : first + count + 1]]) <= width
        ):
            count += 1
        chunk = grid.cells[first : first + count]
        tables.append(_stacked(grid.header, chunk, first, numbered))
        first += count
    return tables


def _layout(width: int, rows: list[Row], answers: tuple[str, ...]) -> tuple[list[Table], Row]:
    """The tables and the caption's columns: the usual table if it fits in `width` with every cell whole,
    first with the guarantee and method columns, then with them in the caption where every row has the
    same; stacked tables otherwise. The answer columns never go to the caption."""
    for keep in ((*_ALWAYS_SHOWN, *answers), answers):
        grid = _grid(rows, keep)
        if grid.width() <= width:
            return [_wide(grid)], grid.constant
    return _stacked_tables(width, grid), grid.constant


def _reasons(rows: list[Row]) -> list[str]:
    """The rows' reasons (why a figure is infinite), each once: a table shows them as notes."""
    return list(dict.fromkeys(row["reason"] for row in rows if row.get("reason")))


def title_lines(title: str, width: int) -> list[str]:
    """The title (a command line) in lines of at most `width` characters, broken only between words: a spec
    or an option is never split, and a word longer than the width gets a line of its own."""
    import textwrap

    return textwrap.wrap(title, width, break_long_words=False, break_on_hyphens=False)


def print_table(result: Result, stdout: TextIO) -> None:
    """The prepared result as a table (or stacked tables), its constant columns as a caption, then notes.

    The answers kept in the table are the result's `answers` that are not among its inputs (a figure the
    user gave, such as --delta, is a question, not an answer)."""
    from rich.console import Console

    console: Console = Console(file=stdout, no_color="NO_COLOR" in os.environ or None, highlight=False)
    rows = [{key: value for key, value in row.items() if key != "reason"} for row in result.rows]
    answers = tuple(key for key in result.answers if key not in result.inputs)
    tables, constant = _layout(console.width, rows, answers)
    for line in title_lines(result.title or f"gdpcli {result.command}", console.width):
        console.print(line, style="table.title", markup=False, highlight=False, soft_wrap=True)
    for table in tables:
        console.print(table)
    if constant:
        console.print(
            ", ".join(f"{key} = {_table_text(value)}" for key, value in constant.items()), markup=False
        )
    for note in [*result.notes, *_reasons(result.rows)]:
        console.print(f"note: {note}", markup=False)


# ---------------------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------------------


def _discard(stream: TextIO) -> None:
    """Point the stream's file descriptor at /dev/null, so that Python's flush at exit of what is still
    buffered fails no second time (the Python docs' recipe for a broken pipe)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # an in-process capture has no file descriptor: nothing to discard
        pass


def _notes_to_stderr(notes: list[str]) -> None:
    """CSV's caveats, one `gdpcli: note: ...` line each on stderr (advisory: a closed stderr skips them)."""
    if sys.stderr is None:
        return
    try:
        sys.stderr.write("".join(f"gdpcli: note: {note}\n" for note in notes))
        sys.stderr.flush()
    except OSError:
        pass


def _write(shown: Result, fmt: str, stdout: TextIO) -> None:
    if fmt == "table":
        print_table(shown, stdout)
    else:
        stdout.write(to_csv(shown) if fmt == "csv" else to_json(shown))
    stdout.flush()


_PROGRESS_DELAY = 2.0  # seconds of work before a progress indicator appears


class _Spinner:
    """A transient rich status line on stderr with the latest progress report, started by a timer."""

    def __init__(self, stderr: TextIO, delay: float) -> None:
        from rich.console import Console

        self.status = Console(file=stderr).status("computing")
        self.timer = threading.Timer(delay, self.status.start)
        self.timer.daemon = True

    def update(self, message: str) -> None:
        self.status.update(message)

    def stop(self) -> None:
        self.timer.cancel()
        self.status.stop()


_spinners: list[_Spinner] = []


@contextmanager
def progress_shown(delay: float = _PROGRESS_DELAY) -> Iterator[None]:
    """Inside the block, work that runs longer than `delay` seconds shows a progress indicator on stderr
    with the numerics' latest gdpcli.progress report; only when stderr is a terminal (nothing in a pipe,
    a file or CI logs). It is gone before the result is written (emit)."""
    if sys.stderr is None or not sys.stderr.isatty():
        yield
        return
    spinner = _Spinner(sys.stderr, delay)
    _spinners.append(spinner)
    spinner.timer.start()
    try:
        with progress.listening(spinner.update):
            yield
    finally:
        _stop_progress()


def _stop_progress() -> None:
    while _spinners:
        _spinners.pop().stop()


def emit(result: Result, fmt: str | None) -> None:
    """Write the result to stdout in the requested (or default) format; OutputClosed when the reader has
    gone (a broken pipe), OutputError when stdout is closed or cannot be written."""
    _stop_progress()
    stdout = require_stdout()
    fmt = resolve_format(fmt)
    shown = prepare(result)
    try:
        _write(shown, fmt, stdout)
    except BrokenPipeError as error:
        _discard(stdout)
        raise OutputClosed("the reader of stdout has gone") from error
    except OSError as error:
        _discard(stdout)
        raise OutputError(
            f"cannot write the result: {error.strerror or error}", "check where stdout goes"
        ) from error
    if fmt == "csv":
        _notes_to_stderr(shown.notes)
