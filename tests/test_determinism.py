"""Same input, same output: a command prints the same bytes however loaded the machine is.

The PLD accountant refines its grid within a budget of counted work (grid sizes), never of seconds, so
where it stops depends on the input only. Under a time budget, four concurrent runs of the census
composition printed four different upper bounds (2.3196224, 2.3196247, 2.3196148, 2.3196164; 2.3196146
alone), and a --max-epsilon check near its threshold could pass on one machine and fail on another.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = {
    "census": ("compose", "--specs", "examples/census_us_level.csv", "--delta", "1e-11"),
    "budget": (
        *("sgd", "--dataset-size", "60000", "--batch-size", "256", "--noise-multiplier", "1.1"),
        *("--steps", "10000000", "--delta", "1e-5"),
    ),
}
"""Refining commands: the census composition refines four grids; the 1e7-step MNIST run stops at the
budget after its first grid, with a note that states the width reached."""


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_concurrent_runs_print_the_same_bytes(name: str) -> None:
    """A run alone, then four at once on a machine of two cores, each slowed down by the others: all
    print the same figures and notes."""
    command = [sys.executable, "-m", "gdpcli", *COMMANDS[name], "-f", "csv"]
    alone = subprocess.run(command, cwd=ROOT, capture_output=True, timeout=600, check=True)
    runs = [
        subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)
    ]
    outputs = [run.communicate(timeout=600) for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0, 0]
    assert set(outputs) == {(alone.stdout, alone.stderr)}
    assert b"upper_bound" in alone.stdout
