"""The one renderer: a command's result rows -> table | csv | json (DESIGN.md, CLI contract).

- CSV: one header row (the union of row keys, in first-seen order), full float precision (repr).
- JSON: {"command", "gdpcli_version", "inputs", "rows"}; non-finite floats are written as the strings
  "inf", "-inf" (JSON has no infinity).
- Table: for humans; rounded, titled, coloured only on a terminal, NO_COLOR honoured (rich does that).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from gdpcli import __version__
from gdpcli.guarantees import Guarantee


@dataclass
class Result:
    """What a command computed: its inputs echoed back, and one dict per output row."""

    command: str
    inputs: dict[str, Any]
    rows: list[dict[str, Any]]
    title: str = ""
    notes: list[str] = field(default_factory=list)


def resolve_format(requested: str | None) -> str:
    """The explicit format, or the default: `table` on a terminal, `csv` otherwise."""
    if requested:
        return requested
    return "table" if sys.stdout.isatty() else "csv"


def _plain(value: Any) -> Any:
    """Numpy scalars to Python, non-finite floats to strings (JSON-safe)."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def columns(rows: list[dict[str, Any]]) -> list[str]:
    """The union of the rows' keys in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            seen.setdefault(key, None)
    return list(seen)


def _csv_cell(value: Any) -> str:
    value = _plain(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def to_csv(result: Result) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    header = columns(result.rows)
    writer.writerow(header)
    for row in result.rows:
        writer.writerow([_csv_cell(row.get(key)) for key in header])
    return buffer.getvalue()


def to_json(result: Result) -> str:
    document = {
        "command": result.command,
        "gdpcli_version": __version__,
        "inputs": _plain(result.inputs),
        "rows": [_plain(row) for row in result.rows],
    }
    return json.dumps(document, indent=2) + "\n"


def _table_cell(value: Any) -> str:
    value = _plain(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.8g}"
    return str(value)


_GUARANTEE_STYLE = {
    Guarantee.EXACT: "green",
    Guarantee.UPPER_BOUND: "cyan",
    Guarantee.LOWER_BOUND: "blue",
    Guarantee.APPROXIMATION: "yellow",
}


_ALWAYS_SHOWN = ("guarantee", "method")


def _split_constant(rows: list[dict[str, Any]]) -> tuple[list[str], dict[str, Any]]:
    """Table columns, and the columns that hold one value in every row (shown once, as a caption).

    Only for several rows; the guarantee and method labels always stay in the table.
    """
    header = columns(rows)
    if len(rows) < 2:
        return header, {}
    constant = {
        key: rows[0].get(key)
        for key in header
        if key not in _ALWAYS_SHOWN and all(key in row and row[key] == rows[0][key] for row in rows)
    }
    return [key for key in header if key not in constant], constant


def print_table(result: Result) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(no_color="NO_COLOR" in os.environ or None, highlight=False)
    header, constant = _split_constant(result.rows)
    caption = ", ".join(f"{key} = {_table_cell(value)}" for key, value in constant.items()) or None
    table = Table(title=result.title or f"gdpcli {result.command}", title_justify="left")
    for key in header:
        table.add_column(key, justify="left" if key in ("guarantee", "method", "note") else "right")
    for row in result.rows:
        cells = []
        for key in header:
            text = _table_cell(row.get(key))
            style = _GUARANTEE_STYLE.get(text) if key == "guarantee" else None
            cells.append(f"[{style}]{text}[/{style}]" if style else text)
        table.add_row(*cells)
    console.print(table)
    if caption:
        console.print(caption, markup=False)
    for note in result.notes:
        console.print(f"note: {note}", markup=False)


def emit(result: Result, fmt: str | None) -> None:
    """Write the result to stdout in the requested (or default) format."""
    fmt = resolve_format(fmt)
    if fmt == "table":
        print_table(result)
    elif fmt == "csv":
        sys.stdout.write(to_csv(result))
    else:
        sys.stdout.write(to_json(result))
    sys.stdout.flush()
