"""Placeholder: being written (registered in app.py so the CLI imports)."""

from __future__ import annotations

EPILOG = ""


def command() -> None:
    """Not implemented yet."""
    from gdpcli.errors import ComputationError

    raise ComputationError("not implemented yet")
