"""Placeholder: being written (registered in app.py so the CLI imports)."""

from __future__ import annotations

import typer

app = typer.Typer(help="The least noise that meets a privacy budget.", no_args_is_help=True)
