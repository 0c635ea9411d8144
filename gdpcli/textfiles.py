"""Text that commands read from a file or stdin (spec lists, schedules, sampled curves and profiles, RDP
curves): one reader, so that a missing file, a directory, a binary file, an empty one or a closed stdin is
refused alike by every command, in one line with exit code 2.
"""

from __future__ import annotations

import csv
import sys

from gdpcli.errors import InputError

MAX_CHARACTERS = 64 * 2**20
"""The longest text read; a few thousand rows is all any of these inputs needs. A longer one is refused
once that much is read, so an endless source (a device, a pipe that never closes) cannot fill memory."""

csv.field_size_limit(MAX_CHARACTERS)  # a long cell is then a bad number (exit 2), not a csv.Error


def read_text(source: str, what: str, hint: str) -> str:
    """The text of `source`, a path or `-` for stdin, read for the input `what` (an option, a spec), with
    every line ending as "\\n".

    InputError (exit 2), `what: <problem> (hint)`, when it cannot be read (missing, a directory, no
    permission, stdin closed), is not UTF-8 text (a binary file; a NUL character counts as binary), holds
    nothing but white space, or is longer than MAX_CHARACTERS; `hint` says what the input should hold.
    """
    name = "stdin" if source == "-" else repr(source)
    if source == "-" and sys.stdin is None:  # started with stdin closed (<&-)
        raise InputError(f"{what}: stdin is closed, there is nothing to read from -", "give a path")
    try:
        text = _read(source)
    except OSError as error:
        raise InputError(f"{what}: cannot read {name}: {error.strerror or error}", hint) from None
    except UnicodeDecodeError:
        raise InputError(f"{what}: {name} is not a text file", hint) from None
    if not _is_text(text):
        raise InputError(f"{what}: {name} is not a text file", hint)
    if len(text) > MAX_CHARACTERS:
        raise InputError(
            f"{what}: {name} is longer than {MAX_CHARACTERS:,} characters, the most read",
            "a few thousand rows is all any input needs",
        )
    if not text.strip():
        raise InputError(f"{what}: {name} is empty", hint)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read(source: str) -> str:
    """At most MAX_CHARACTERS + 1 characters of the path or of stdin."""
    if source == "-":
        return sys.stdin.read(MAX_CHARACTERS + 1)
    with open(source, encoding="utf-8", newline="") as handle:
        return handle.read(MAX_CHARACTERS + 1)


def _is_text(text: str) -> bool:
    """No NUL character and no undecodable byte (stdin decodes them to lone surrogates, not an error)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text
