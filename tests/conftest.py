"""Shared fixtures: the reference values (a copy of ../shared/reference/values.json) and a CLI runner."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gdpcli.core.tradeoff import Grid, eps_delta_tradeoff, grid_from_tradeoff

REFERENCE = json.loads((Path(__file__).parent / "data" / "values.json").read_text())


def eps_delta_grid(epsilon0: float, delta0: float) -> Grid:
    """f_{eps0,delta0} with its kinks as knots, the grid of the piecewise-linear function itself.

    f vanishes at 1 - delta0; at the float nearest it, eps_delta_tradeoff correctly gives the rounding
    error 1 - delta0 - fl(1 - delta0) (up to 1e-16, either sign clipped to 0), so that knot is set to its
    exact value 0, or the grid's inverse would jump from 1 - delta0 to 1 at alpha = 0.
    """
    kinks = np.array([(1 - delta0) / (1 + np.exp(epsilon0)), 1 - delta0])
    grid = grid_from_tradeoff(lambda a: eps_delta_tradeoff(a, epsilon0, delta0), kinks)
    return Grid(grid.alpha, np.where(grid.alpha == kinks[-1], 0.0, grid.beta))


def safe_side_of(exact: str, value: float, side: str, rel: float = 1e-12) -> bool:
    """value is on the safe side of the exact figure (a decimal string, e.g. 60-digit mpmath) and within
    `rel` of it: exact <= value <= exact (1 + rel) for side "above" (an upper bound such as epsilon),
    exact (1 - rel) <= value <= exact for "below" (a lower bound, or the largest mu)."""
    import mpmath as mp

    truth, computed = mp.mpf(exact), mp.mpf(float(value))
    if side == "above":
        return truth <= computed <= truth * (1 + mp.mpf(rel))
    return truth * (1 - mp.mpf(rel)) <= computed <= truth


def infinite(row: dict[str, Any], key: str) -> bool:
    """A JSON row states `key` = inf as the output contract says: null, and a reason that names it."""
    return row[key] is None and f"{key}" in row.get("reason", "") and "inf" in row["reason"]


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
