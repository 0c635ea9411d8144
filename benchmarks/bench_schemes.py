"""The MNIST run under every batch scheme, whole-process wall time (the goal: under 2 s each).

    PYTHONPATH=. python benchmarks/bench_schemes.py [--repetitions 5]     # from the repository root

`gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 --epochs 60 --delta 1e-5` with
each --sampling (truncated-poisson capped at 300), and a 60-phase schedule of the same run (one phase an
epoch), interleaved so that drifts in machine load hit all alike; the median counts, and the ratio is
against the Poisson run in the same loop.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from bench_sgd import timed

GDPCLI = [
    sys.executable,
    "-c",
    "import sys; from gdpcli.__main__ import main; sys.argv[0] = 'gdpcli'; main()",
]
MNIST = "sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 --delta 1e-5".split()
SCHEMES = {
    "poisson": ["--sampling", "poisson"],
    "fixed": ["--sampling", "fixed"],
    "shuffle": ["--sampling", "shuffle"],
    "balls-in-bins": ["--sampling", "balls-in-bins"],
    "truncated-poisson (cap 300)": ["--sampling", "truncated-poisson", "--max-batch-size", "300"],
}


def commands(schedule: Path) -> dict[str, list[str]]:
    """Each scheme's command line, and the schedule's."""
    found = {
        name: [*GDPCLI, *MNIST, "--epochs", "60", *extra, "-f", "csv"] for name, extra in SCHEMES.items()
    }
    data = ["sgd", "--dataset-size", "60000", "--delta", "1e-5"]
    found["schedule, 60 phases"] = [*GDPCLI, *data, "--schedule", str(schedule), "-f", "csv"]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=5)
    repetitions = parser.parse_args().repetitions
    with tempfile.TemporaryDirectory() as folder:
        schedule = Path(folder) / "phases.csv"
        rows = "".join(f"1,256,{1.1 + 0.001 * i!r}\n" for i in range(60))  # 60 distinct phases: no merging
        schedule.write_text("epochs,batch_size,noise_multiplier\n" + rows)
        runs = commands(schedule)
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(repetitions):
            for name, command in runs.items():
                times[name].append(timed(command)[0])
    base = statistics.median(times["poisson"])
    print(f"| scheme | median wall time | ratio to poisson | ({repetitions} repetitions, whole processes)")
    print("|---|---|---|")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(f"| {name} | {median:.2f} s | {median / base:.2f} |")


if __name__ == "__main__":
    main()
