"""Shared fixtures: the reference values (a copy of ../shared/reference/values.json) and a CLI runner."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REFERENCE = json.loads((Path(__file__).parent / "data" / "values.json").read_text())


@pytest.fixture(scope="session")
def reference() -> dict[str, Any]:
    """Reference values: mpmath at 60 digits and independent accountants (see its _about)."""
    return REFERENCE


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        return json.loads(self.stdout)


@pytest.fixture
def gdpcli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """Run the real CLI in-process: gdpcli("convert", "gdp:mu=1", "--delta", "1e-5") -> Outcome."""
    from gdpcli.cli.app import run

    def invoke(*args: str) -> Outcome:
        capsys.readouterr()
        code = run(list(args))
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return invoke
