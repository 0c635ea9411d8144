"""`gdpcli sgd` on chosen (q, sigma, T, delta) rows from one or more checkouts, each as a whole process, the
checkouts taking turns on every row: the bounds each prints (with their method) and its best wall time.

    PYTHONPATH=. python benchmarks/bench_rows.py --trees OLD . --repeat 2 [--rows q,sigma,T,delta ...]

OLD is another checkout (`git worktree add /tmp/old <commit>`); each tree's gdpcli runs from that tree
(PYTHONPATH). Without --rows: the settings of the PLD round-off changes (tiny deltas at low noise, long
runs whose bounds carried round-off, the rows the round-off floor did not limit). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROWS = (
    (6.4e-5, 0.9, 156_250, 1e-9),
    (1e-4, 0.7, 100_000, 1e-12),
    (1e-5, 1.1, 10_000_000, 1e-15),
    (1e-3, 2.0, 1_000_000, 1e-12),
    (1e-4, 2.0, 100_000, 1e-12),
    (0.00033, 4.0, 10_000, 1e-10),
    (1e-4, 1.1, 1_000_000, 1e-5),
    (0.003, 0.7, 200_000, 1e-5),
    (256 / 60000, 1.1, 14_063, 1e-5),
    (1e-3, 0.5, 10_000, 1e-12),
    (0.3, 0.4, 1000, 1e-15),
)


def _number(value: float | None) -> str:
    """A JSON epsilon as printed: null is inf (no upper bound)."""
    return "inf" if value is None else f"{value:.6g}"


def run(tree: str, q: float, sigma: float, steps: int, delta: float) -> tuple[str, float]:
    """One whole `gdpcli sgd` process from `tree`: its rows as 'value label (method)' and wall seconds."""
    args = ["--sampling-rate", repr(q), "--noise-multiplier", repr(sigma), "--steps", str(steps)]
    command = [sys.executable, "-m", "gdpcli", "sgd", *args, "--delta", repr(delta), "-f", "json"]
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree))
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd="/", check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        return f"exit {done.returncode}: {done.stderr.strip()[:80]}", seconds
    rows = json.loads(done.stdout)["rows"]
    shown = [f"{_number(row['epsilon'])} {row['guarantee']} ({row['method']})" for row in rows]
    return ", ".join(shown), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", nargs="+", default=["."], help="checkouts to run gdpcli from")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each tree per row (best time)")
    parser.add_argument("--rows", nargs="+", help="q,sigma,T,delta rows (default: ROWS)")
    options = parser.parse_args()
    rows = ROWS
    if options.rows:
        fields = (row.split(",") for row in options.rows)
        rows = tuple((float(q), float(s), int(float(t)), float(d)) for q, s, t, d in fields)
    print("| q | sigma | T | delta | " + " | ".join(options.trees) + " |")
    print("|---|---|---|---|" + "---|" * len(options.trees))
    for q, sigma, steps, delta in rows:
        results: dict[str, list[tuple[str, float]]] = {tree: [] for tree in options.trees}
        for _ in range(options.repeat):  # the trees take turns
            for tree in options.trees:
                results[tree].append(run(tree, q, sigma, steps, delta))
        cells = [f"{runs[0][0]} ({min(s for _, s in runs):.2f} s)" for runs in results.values()]
        print(f"| {q:g} | {sigma:g} | {steps:g} | {delta:g} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
