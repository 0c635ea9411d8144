"""Shuffled reports at large n: wall time and peak memory of whole gdpcli processes, against a baseline
checkout of gdpcli (an older commit) run the same way in the same script.

    python benchmarks/bench_shuffle.py --baseline /path/to/older/checkout

Each command runs in a fresh process under an intermediate Python that reports the peak resident set size
of its only child (ru_maxrss, KiB on Linux); runs alternate between the two checkouts. A baseline run that
fails (a MemoryError under the address-space cap, exit 1) is reported with its time and peak.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = [
    "convert shuffle:eps0=0.02007,n=491681,times=458 --epsilon 1 -f csv",
    "convert shuffle:eps0=0.02007,n=491681,times=458 --delta 1e-6 -f csv",
    "convert shuffle-rr:eps0=4.444,n=10000 --delta 5e-5,3e-6,1e-7,4e-9,9e-11 -f csv",
    "convert shuffle:eps0=0.5,n=100000 --delta 1e-6 -f csv",
]

_PEAK = """
import resource, subprocess, sys
run = subprocess.run([sys.executable, "-m", "gdpcli", *sys.argv[2:]], capture_output=True, text=True,
                     preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]),) * 2))
print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def measure(checkout: Path, command: str, cap_bytes: int) -> tuple[float, int, int]:
    """(wall seconds, peak KiB, exit code) of one run of `gdpcli command` from `checkout`."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as cwd:  # not the checkout: its gdpcli would shadow PYTHONPATH's
        done = subprocess.run(
            [sys.executable, "-c", _PEAK, str(cap_bytes), *command.split()],
            capture_output=True, text=True, env=env, cwd=cwd, check=True,
        )  # fmt: skip
    wall = time.perf_counter() - start
    code, peak = (int(word) for word in done.stdout.split())
    return wall, peak, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="an older gdpcli checkout")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cap-gb", type=float, default=4.0, help="address-space cap of each run (GB)")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent.parent
    cap = int(args.cap_gb * 1e9)
    print(f"| command | this checkout | baseline ({args.baseline.name}) | time ratio |")
    print("|---|---|---|---|")
    for command in COMMANDS:
        runs: dict[str, list[tuple[float, int, int]]] = {"new": [], "old": []}
        for _ in range(args.repeats):
            runs["new"].append(measure(here, command, cap))
            runs["old"].append(measure(args.baseline, command, cap))
        cells = []
        for name in ("new", "old"):
            wall = statistics.median(r[0] for r in runs[name])
            peak = max(r[1] for r in runs[name]) / 1024
            codes = sorted({r[2] for r in runs[name]})
            cells.append((wall, f"{wall:.2f} s, {peak:.0f} MiB, exit {','.join(map(str, codes))}"))
        print(f"| `gdpcli {command}` | {cells[0][1]} | {cells[1][1]} | {cells[0][0] / cells[1][0]:.3f} |")


if __name__ == "__main__":
    main()
