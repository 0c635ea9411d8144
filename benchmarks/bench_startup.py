"""Startup cost of the gdpcli process against the imports it builds on (subprocess wall time).

    PYTHONPATH=. python benchmarks/bench_startup.py [--quick]     # from the repository root

`gdpcli --version` against `python -c "import typer"` (the CLI framework every invocation needs), and
`gdpcli convert gdp:mu=1 --delta 1e-5` against `python -c "import numpy, scipy.special, typer"` (the
baseline: the numerics a GDP conversion needs and the CLI framework) and against the stricter
`import numpy, scipy.special`. gdpcli runs as its console script does (`gdpcli.__main__:main`) in a
`python -c` process, which imports gdpcli from the current directory first: the code in the tree. Each
command runs once to warm the file cache, then the commands alternate (interleaved, so drifts in machine
load hit all of them alike); the median wall time counts.

The tree is byte-compiled first and the processes may write bytecode (PYTHONDONTWRITEBYTECODE is
dropped): pip compiles an installed package, as numpy and scipy are, while a checkout read with
PYTHONDONTWRITEBYTECODE=1 would compile every gdpcli module on every run (about 40 ms here).

Also the home of `Comparison` and `table`, the result rows and their rendering shared by bench_kernels.py
and run_all.py.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import sys
from dataclasses import dataclass

from bench_sgd import timed

GDPCLI = ["-c", "import re, sys; from gdpcli.__main__ import main; sys.argv[0] = 'gdpcli'; main()"]
"""What the `gdpcli` console script that pip generates runs (its `import re` included)."""

BASELINE = ('python -c "import numpy, scipy.special, typer"', ["-c", "import numpy, scipy.special, typer"])
"""The baseline for `convert`: the numerics a GDP conversion needs and the CLI framework."""
CONVERT = ("gdpcli convert gdp:mu=1 --delta 1e-5", [*GDPCLI, "convert", "gdp:mu=1", "--delta", "1e-5"])
PAIRS = [
    (("gdpcli --version", [*GDPCLI, "--version"]), ('python -c "import typer"', ["-c", "import typer"])),
    (CONVERT, BASELINE),
    (CONVERT, ('python -c "import numpy, scipy.special"', ["-c", "import numpy, scipy.special"])),
]


@dataclass(frozen=True)
class Comparison:
    """One row of a benchmark table: gdpcli against a baseline doing the same job (or its floor)."""

    benchmark: str
    gdpcli: str
    gdpcli_seconds: float
    baseline: str
    baseline_seconds: float
    note: str = ""

    @property
    def ratio(self) -> str:
        """gdpcli time / baseline time, with the speed-up spelled out when gdpcli is faster."""
        ratio = self.gdpcli_seconds / self.baseline_seconds
        return f"{ratio:.2f}" if ratio >= 0.5 else f"{ratio:.3g} ({1 / ratio:.0f}x faster)"


def seconds(value: float) -> str:
    """A wall time in readable units."""
    return f"{value * 1e3:.1f} ms" if value < 1.0 else f"{value:.2f} s"


def table(comparisons: list[Comparison]) -> str:
    """The rows as a Markdown table (readable in a terminal, pasted as is into benchmarks/README.md)."""
    lines = ["| benchmark | gdpcli | baseline | gdpcli / baseline |", "|---|---|---|---|"]
    for row in comparisons:
        note = f" ({row.note})" if row.note else ""
        lines.append(
            f"| {row.benchmark} | {seconds(row.gdpcli_seconds)}: {row.gdpcli} "
            f"| {seconds(row.baseline_seconds)}: {row.baseline} | {row.ratio}{note} |"
        )
    return "\n".join(lines)


def median_wall_times(commands: list[list[str]], runs: int) -> list[float]:
    """Median wall time of each command over `runs` interleaved runs, after one warm-up run each."""
    for arguments in commands:
        timed([sys.executable, *arguments])
    samples: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for arguments, times in zip(commands, samples, strict=True):
            times.append(timed([sys.executable, *arguments])[0])
    return [statistics.median(times) for times in samples]


def measure(runs: int) -> list[Comparison]:
    """The startup comparisons, every process interleaved with every other, on the byte-compiled tree."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir("gdpcli", quiet=1)
    commands = [arguments for pair in PAIRS for _, arguments in pair]
    medians = iter(median_wall_times(commands, runs))
    return [
        Comparison(f"startup: `{ours}`", "console entry point", next(medians), f"`{theirs}`", next(medians))
        for (ours, _), (theirs, _) in PAIRS
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="median of 5 runs instead of 21")
    runs = 5 if parser.parse_args().quick else 21
    print(table(measure(runs)))
    print(f"\nmedian of {runs} interleaved runs per command")


if __name__ == "__main__":
    main()
