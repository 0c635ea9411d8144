"""The sweep: `gdpcli sgd` (default options) against dp-accounting's PLD accountant on the grid
q in {1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1} x sigma in {0.3, 0.5, 0.8, 1.1, 2, 5, 20} x T in {1, 1e2, 1e4,
1e6, 1e7} at delta 1e-5 (and the q = 1e-3 rows at 1e-10), each tool as a whole process, taking turns.

    PYTHONPATH=. python benchmarks/bench_sweep.py [--quick | --issue | --steps T ... --rates Q ...] > sweep.md
    PYTHONPATH=. python benchmarks/bench_sweep.py --quick --versus OLD --repeat 3 > versus.md

--issue runs only bench_grid.py's settings: the slow ones, and MNIST at small deltas.
--versus DIR times gdpcli against the gdpcli of another checkout (a git worktree of an earlier commit)
instead of dp-accounting, each run from its own tree; --repeat N runs each pair N times in turn and
takes the median time of each side (the machine's load drifts; the ratio of medians is what to quote).

For each setting: gdpcli's certified [lower, upper], wall time and peak memory (ru_maxrss of the child);
dp-accounting's [optimistic, pessimistic] at value_discretization_interval 1e-4 (connect-the-dots for the
pessimistic one, privacy buckets for the optimistic one), the time and peak memory of one process running
both. Rows are printed as measured (progress), then the whole table again sorted by the time ratio, worst
first, with a verdict per row: `ok` when gdpcli is no slower, no wider than dp-accounting's gap and under
1 GB; otherwise what fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial

RATES = (1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0)
SIGMAS = (0.3, 0.5, 0.8, 1.1, 2.0, 5.0, 20.0)
STEPS = (1, 100, 10_000, 1_000_000, 10_000_000)
TIMEOUT = 300.0

DP_ACCOUNTING = """
import json, sys
from dp_accounting.pld import privacy_loss_distribution as plds
rate, sigma, steps, delta = json.loads(sys.argv[1])
values = []
for pessimistic in (False, True):
    pld = plds.from_gaussian_mechanism(sigma, sampling_prob=rate, value_discretization_interval=1e-4,
                                       pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)
    values.append(pld.self_compose(steps).get_epsilon_for_delta(delta))
print(json.dumps(values))
"""


@dataclass
class Run:
    """One process: its bounds (lower, upper), wall seconds, peak memory in MB, and a failure, if any."""

    lower: float = float("nan")
    upper: float = float("nan")
    seconds: float = float("nan")
    megabytes: float = float("nan")
    failure: str = ""
    budget: bool = False


def gdpcli(rate: float, sigma: float, steps: int, delta: float, tree: str | None = None) -> Run:
    """gdpcli of this checkout, or of the checkout `tree` (run from there, with PYTHONPATH=tree)."""
    args = ["--sampling-rate", repr(rate), "--noise-multiplier", repr(sigma), "--steps", str(steps)]
    command = [sys.executable, "-m", "gdpcli", "sgd", *args, "--delta", repr(delta), "-f", "json"]
    stdout, stderr, code, seconds, peak = _timed(command, tree)
    if code:
        return Run(seconds=seconds, megabytes=peak, failure=f"exit {code}: {stderr.strip()[:70]}")
    result = json.loads(stdout)
    bounds = {row["guarantee"]: row["epsilon"] for row in result["rows"]}
    upper = bounds.get("upper_bound", bounds.get("exact"))
    lower = bounds.get("lower_bound", bounds.get("exact"))
    budget = any("budget" in note for note in result.get("notes", []))
    return Run(_float(lower), _float(upper), seconds, peak, budget=budget)


def dp_accounting(rate: float, sigma: float, steps: int, delta: float) -> Run:
    command = [sys.executable, "-c", DP_ACCOUNTING, json.dumps([rate, sigma, steps, delta])]
    stdout, stderr, code, seconds, peak = _timed(command)
    if code:
        return Run(seconds=seconds, megabytes=peak, failure=f"exit {code}: ...{stderr.strip()[-60:]}")
    optimistic, pessimistic = json.loads(stdout)
    return Run(optimistic, pessimistic, seconds, peak)


def _float(value: float | None) -> float:
    return float("inf") if value is None else float(value)


def _timed(command: list[str], tree: str | None = None) -> tuple[str, str, int, float, float]:
    """A child's stdout, stderr, exit code, wall seconds and peak resident MB (GNU time's %M), run in the
    checkout `tree` if given (`python -m` imports from the working directory first)."""
    environment = None if tree is None else dict(os.environ, PYTHONPATH=tree)
    start = time.perf_counter()
    try:
        done = subprocess.run(
            ["/usr/bin/time", "-f", "%M", *command],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=environment,
            cwd=tree,
        )
    except subprocess.TimeoutExpired:
        return "", f"timeout after {TIMEOUT:g} s", -9, time.perf_counter() - start, float("nan")
    seconds = time.perf_counter() - start
    *lines, peak = done.stderr.strip().splitlines() or ["nan"]
    message = " ".join(line for line in lines if not line.startswith("Command exited")).replace("|", "/")
    return done.stdout, message, done.returncode, seconds, float(peak.split()[-1]) / 1024


def verdict(ours: Run, theirs: Run) -> str:
    problems = []
    if ours.failure:
        return "both fail" if theirs.failure else "gdpcli fails"
    if not theirs.failure:
        if ours.seconds > theirs.seconds:
            problems.append("slower")
        if ours.upper - ours.lower > theirs.upper - theirs.lower + 1e-9:  # (outward rounding: 1e-12)
            problems.append("wider")
    if ours.megabytes > 1024:
        problems.append("over 1 GB")
    return ", ".join(problems) or "ok"


def row(setting: tuple[float, float, int, float], ours: Run, theirs: Run) -> str:
    rate, sigma, steps, delta = setting

    def interval(run: Run) -> str:
        if run.failure:
            return run.failure
        return f"[{run.lower:.5g}, {run.upper:.5g}] ({run.upper - run.lower:.2g}){' budget' * run.budget}"

    ratio = ours.seconds / theirs.seconds
    return (
        f"| {rate:g}, {sigma:g}, {steps:.0e}, {delta:g} | {interval(ours)} | "
        f"{ours.seconds:.2f} s, {ours.megabytes:.0f} MB | {interval(theirs)} | "
        f"{theirs.seconds:.2f} s, {theirs.megabytes:.0f} MB | {ratio:.2f} | {verdict(ours, theirs)} |"
    )


def header(theirs: str) -> str:
    """The table's header, `theirs` naming what gdpcli is timed against."""
    return (
        "| q, sigma, T, delta | gdpcli [lower, upper] (width) | gdpcli time, peak | "
        f"{theirs} | {theirs.split(' [')[0]} time, peak | time ratio | verdict |\n"
        "|---|---|---|---|---|---|---|"
    )


def paired(ours: Callable[[], Run], theirs: Callable[[], Run], repeat: int) -> tuple[Run, Run]:
    """Both sides run `repeat` times in turn; each side's first run, with the median of its wall times."""
    runs = [(ours(), theirs()) for _ in range(repeat)]
    return _median([mine for mine, _ in runs]), _median([other for _, other in runs])


def _median(runs: list[Run]) -> Run:
    return replace(runs[0], seconds=statistics.median(run.seconds for run in runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T in {1, 1e2, 1e4}, sigma in {0.5, 1.1, 5}")
    parser.add_argument("--steps", type=float, nargs="+", help="only these T (e.g. --steps 1e6)")
    parser.add_argument("--rates", type=float, nargs="+", help="only these q (e.g. --rates 1e-5 1e-4)")
    parser.add_argument("--issue", action="store_true", help="bench_grid.py's settings only")
    parser.add_argument("--versus", metavar="DIR", help="time against the gdpcli of the checkout DIR")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side per setting (median)")
    arguments = parser.parse_args()
    steps = (1, 100, 10_000) if arguments.quick else STEPS
    steps = tuple(int(t) for t in arguments.steps) if arguments.steps else steps
    sigmas = (0.5, 1.1, 5.0) if arguments.quick else SIGMAS
    rates = tuple(arguments.rates) if arguments.rates else RATES
    settings = [(q, s, t, 1e-5) for q in rates for s in sigmas for t in steps]
    settings += [(1e-3, s, t, 1e-10) for s in sigmas for t in steps if 1e-3 in rates]
    if arguments.issue:
        from bench_grid import SETTINGS  # the slow settings and the MNIST small deltas

        settings = SETTINGS
    versus = arguments.versus and os.path.abspath(arguments.versus)
    table = header(
        f"gdpcli of {versus} [lower, upper] (width)" if versus else "dp-accounting [opt, pess] (gap)"
    )
    rows = []
    print(table, file=sys.stderr)
    for setting in settings:
        other = partial(gdpcli, *setting, tree=versus) if versus else partial(dp_accounting, *setting)
        ours, theirs = paired(partial(gdpcli, *setting), other, arguments.repeat)
        line = row(setting, ours, theirs)
        print(line, file=sys.stderr, flush=True)
        rows.append((ours.seconds / theirs.seconds, line))
    print(table)
    for _, line in sorted(rows, reverse=True):
        print(line)


if __name__ == "__main__":
    main()
