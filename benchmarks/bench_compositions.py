"""The PLD accountant keeps its compositions across questions (core.pld.Compositions): each command run
in-process with keeping switched off and on, taking turns, three times; prints the median time ratio
on / off and checks that the output is byte for byte the same.

    PYTHONPATH=. python benchmarks/bench_compositions.py
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time

import gdpcli.core.pld.composition as composition
from gdpcli.cli.app import run

COMMANDS = [
    ["convert", "shuffle-rr:eps0=1,n=1000x10", "--to", "equal-error"],
    ["convert", "gaussian:sigma=1,p=0.01x1000", "--to", "equal-error"],
    ["compose", "gaussian:sigma=1,p=0.01x1000", "--delta", "1e-5", "--epsilon", "1", "--alpha", "0.1"],
    ["risk", "gaussian:sigma=1,p=0.01x1000"],
    ["sgd", "--dataset-size", "60000", "--batch-size", "256", "--noise-multiplier", "1.1", "--epochs", "60"],
]


def once(command: list[str]) -> tuple[float, str]:
    """Wall seconds and stdout of one in-process run."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        start = time.perf_counter()
        run([*command, "-f", "csv"])
        return time.perf_counter() - start, out.getvalue()


def main() -> None:
    kept = composition._KEPT_POINTS
    for command in COMMANDS:
        ratios = []
        for turn in range(3):
            timed = {}
            for keep in (kept, -1) if turn % 2 else (-1, kept):
                composition._KEPT_POINTS = keep  # -1: no composition is kept
                timed[keep] = once(command)
            assert timed[kept][1] == timed[-1][1], command
            ratios.append(timed[kept][0] / timed[-1][0])
        composition._KEPT_POINTS = kept
        print(f"{statistics.median(ratios):.2f}  gdpcli {' '.join(command)}")


if __name__ == "__main__":
    main()
