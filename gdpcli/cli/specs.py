"""`gdpcli specs`: the spec language, from the parser's own tables (gdpcli.events.spec), so it cannot drift.

Prints the grammar of a mechanism spec, the keys every kind takes and a table of every kind the parser
accepts with its keys and meaning. The man page gdpcli-specs(1) renders the same tables
(tools/generate_docs.py reads `examples`, `common_keys` and `kinds`).
"""

from __future__ import annotations

import shutil
import textwrap

import typer

from gdpcli.events.spec import COMMON_KEYS, COMMON_MEANINGS, KIND_KEYS, MEANINGS

GRAMMAR = (
    "A mechanism spec is one shell word, KIND:key=value,key=value,... with the keys of its KIND (in any "
    "order; numbers as 0.5 or 1e-5; file= takes a path). convert, compose, subsample, gdpt-identify, risk, "
    "audit and calibrate canonical take specs as arguments; compose --specs FILE reads one per line."
)
EXAMPLES = (
    ("gaussian:sigma=2", "the Gaussian mechanism with noise std 2, sensitivity 1"),
    ("gaussian:sigma=2,sens=4", "the same on a query of sensitivity 4"),
    ("gdp:mu=0.1x100", "100 runs of a 0.1-GDP mechanism on the same data"),
    ("laplace:b=1,p=0.01,sampling=fixed,times=1000", "1000 Laplace steps, each on a fixed-size batch"),
    ("dp:eps=1,delta=1e-6", "a (1, 1e-6)-DP guarantee"),
)
"""(spec, what it means): the examples `gdpcli specs` shows (each one parses)."""
MAX_WIDTH = 80
EPILOG = """\b
Examples:
  # the grammar, the keys every kind takes, and every kind with its keys
  gdpcli specs
"""


def common_keys() -> list[tuple[str, str]]:
    """(form, meaning) of every key that all kinds take, e.g. ("times=N", "N runs on the same data...")."""
    return [tuple(COMMON_MEANINGS[key].split(": ", 1)) for key in COMMON_KEYS]  # type: ignore[misc]


def kinds() -> list[tuple[str, str, str]]:
    """(kind, its keys, its meaning) for every kind the spec parser accepts, in the parser's order."""
    return [(kind, ", ".join(keys), MEANINGS[kind]) for kind, keys in KIND_KEYS.items()]


def _columns(rows: list[tuple[str, ...]], width: int, indent: int = 2) -> list[str]:
    """Rows as aligned columns; the last one wrapped at `width` (never inside a word). A cell wider than
    its column (at most a third of the width) moves the rest of its row to the next line."""
    widths = [min(max(len(row[i]) for row in rows), width // 3) for i in range(len(rows[0]) - 1)]
    starts = [indent + sum(widths[:i]) + 2 * i for i in range(len(widths) + 1)]
    lines: list[str] = []
    for row in rows:
        line = " " * indent
        for start, cell in zip(starts[:-1], row[:-1], strict=True):
            if len(line) > start:
                lines.append(line.rstrip())
                line = ""
            line = line.ljust(start) + cell
        last = starts[-1]
        if len(line) > last - 2:
            lines.append(line.rstrip())
            line = ""
        body = textwrap.wrap(row[-1], max(width - last, 20), break_long_words=False, break_on_hyphens=False)
        lines.append(line.ljust(last) + body[0])
        lines += [" " * last + text for text in body[1:]]
    return lines


def topic(width: int = MAX_WIDTH) -> str:
    """The whole text `gdpcli specs` prints, wrapped at `width` columns."""
    wrap = textwrap.fill(GRAMMAR, width, break_long_words=False, break_on_hyphens=False)
    return "\n".join(
        [
            wrap,
            "",
            "Examples:",
            *_columns(list(EXAMPLES), width),
            "",
            "Keys every kind takes:",
            *_columns(common_keys(), width),
            "",
            "Kinds:",
            *_columns([("KIND", "KEYS", "MEANING"), *kinds()], width),
        ]
    )


def command() -> None:
    """The spec language: its grammar, the keys every kind takes, and every mechanism kind with its keys."""
    typer.echo(topic(min(MAX_WIDTH, shutil.get_terminal_size((MAX_WIDTH, 24)).columns)))
