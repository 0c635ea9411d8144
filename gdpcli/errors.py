"""Exceptions that carry gdpcli's exit codes (README, Conventions: 0 ok, 1 could not
compute, 2 bad input, 3 budget exceeded).

Pure Python, importable from gdpcli.core without pulling in the CLI.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntEnum


class ExitCode(IntEnum):
    """gdpcli's exit codes (README, Conventions)."""

    OK = 0
    COMPUTATION = 1  # could not compute or write the result (numerical failure, memory bound, stdout closed)
    USAGE = 2  # bad input: one line on stderr naming the problem
    BUDGET = 3  # a budget check (--max-epsilon, --max-delta) failed


MARK = "\x1f"
"""Around a parameter's name in a message (the unit separator: never typed, never printed)."""


def parameter(name: str) -> str:
    """A parameter named in a message raised below the command line: a library caller reads its name
    (noise_multiplier), the command line the option that sets it (--noise-multiplier; GdpcliError.render)."""
    return f"{MARK}{name}{MARK}"


def spelled(text: str, spell: Callable[[str], str] = str) -> str:
    """The text with each marked parameter name spelled by `spell` (by default: as its name)."""
    parts = text.split(MARK)
    return "".join(spell(part) if index % 2 else part for index, part in enumerate(parts))


class GdpcliError(Exception):
    """Base class: a one-line message and an optional hint, rendered as `gdpcli: error: <what> (<hint>)`.
    Parameters named in them (`parameter`) read as their names, or as the command line spells them."""

    exit_code = ExitCode.COMPUTATION

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return spelled(self.text)

    @property
    def text(self) -> str:
        """The message and hint with their parameters still marked: what a note quoting the error holds."""
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def render(self, spell: Callable[[str], str]) -> str:
        """The message and hint, each parameter's name spelled by `spell` (the command line: its option)."""
        return spelled(self.text, spell)


class InputError(GdpcliError):
    """Usage or input error: exit code 2."""

    exit_code = ExitCode.USAGE


class ComputationError(GdpcliError):
    """Could not compute or write the result (numerical failure, memory bound, stdout closed): exit code 1."""

    exit_code = ExitCode.COMPUTATION


class BudgetExceeded(GdpcliError):
    """A budget check (--max-epsilon, --max-delta, --max-mu) failed: exit code 3."""

    exit_code = ExitCode.BUDGET


class OutputError(ComputationError):
    """The result cannot be written (stdout closed, disk full): exit code 1, like any result not delivered."""


class OutputClosed(OutputError):
    """The reader of stdout went away (a broken pipe, e.g. `| head -1`): exit code 1, and no message, since
    the reader stopped on purpose."""
