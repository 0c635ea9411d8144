"""The sweep: `gdpcli sgd` (default options) against dp-accounting's PLD accountant on the grid
q in {1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1} x sigma in {0.3, 0.5, 0.8, 1.1, 2, 5, 20} x T in {1, 1e2, 1e4,
1e6, 1e7} at delta 1e-5 (and the q = 1e-3 rows at 1e-10), each tool as a whole process, taking turns.

    PYTHONPATH=. python benchmarks/bench_sweep.py [--quick | --issue | --steps T ... --rates Q ...] > sweep.md
    PYTHONPATH=. python benchmarks/bench_sweep.py --quick --versus OLD --repeat 3 > versus.md
    PYTHONPATH=. python benchmarks/bench_sweep.py --range [--alone] [--steps 1e3 1e5] [--repeat 3] > range.md

--issue runs only bench_grid.py's settings: the slow ones, and MNIST at small deltas.
--range runs the range that tiny deltas, long runs and lists must cover instead: q in {1e-5, 1e-3, 0.3} x
sigma in {0.4, 1, 10} x T in {1e3, 1e5, 1e7}, one gdpcli process per setting answering the list
`--delta 1e-15,1e-12,1e-9,1e-5,0.1` and one dp-accounting process composing once (pessimistic
connect-the-dots, interval 1e-4) and answering each delta. A (setting, delta) is `ok` when gdpcli exits 0
with a PLD upper and lower bound and its upper bound is at most dp-accounting's figure x (1 + 2e-4); where
dp-accounting's figure is below gdpcli's rigorous lower bound, prv-accountant is asked (eps_error 1e-3,
else 1e-2, else 1e-1; delta_error delta / 1000, 300 s timeout) instead of comparing. A setting passes
when gdpcli's whole process is no slower than dp-accounting's and peaks under 1 GB. dp-accounting is not
run at T 1e7 with q >= 0.1 (it needs more than about 4 GB there); every child runs under an 8 GB
address-space cap. --alone also asks a gdpcli process for each delta alone (median of --repeat runs; a
single delta takes other first grids and tilts than a list), with the same verdicts, timed against the
setting's dp-accounting process (which composes once, whatever the deltas).
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
import hashlib
import json
import math
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TypeVar

Timed = TypeVar("Timed", "Run", "Deltas")  # a process's figures with its wall seconds
Other = TypeVar("Other", "Run", "Deltas")

RATES = (1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.5, 1.0)
SIGMAS = (0.3, 0.5, 0.8, 1.1, 2.0, 5.0, 20.0)
STEPS = (1, 100, 10_000, 1_000_000, 10_000_000)
TIMEOUT = 300.0
RANGE_RATES = (1e-5, 1e-3, 0.3)
RANGE_SIGMAS = (0.4, 1.0, 10.0)
RANGE_STEPS = (1_000, 100_000, 10_000_000)
RANGE_DELTAS = (1e-15, 1e-12, 1e-9, 1e-5, 0.1)
BELOW = "dp-accounting below a rigorous lower bound"
LOOSER = "looser"
TIGHTNESS = 2e-4  # gdpcli's upper bound may exceed dp-accounting's pessimistic figure by this factor
MEMORY_LIMIT_MB = 1024.0
CAP_BYTES = 8 * 2**30  # address-space cap of every child in --range (the machine is shared)

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

PRV = """
import json, sys
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
rate, sigma, steps, delta, eps_error = json.loads(sys.argv[1])
mechanism = PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=rate)
try:
    accountant = PRVAccountant(
        [mechanism], max_self_compositions=[steps], eps_error=eps_error, delta_error=delta / 1e3
    )
    low, _, high = accountant.compute_epsilon(delta=delta, num_self_compositions=[steps])
    print(json.dumps([low, high]))
except ValueError as error:
    print(json.dumps(str(error).split(".")[0]))
"""
PRV_EPS_ERRORS = (1e-3, 1e-2, 1e-1)  # the next is tried where prv-accountant gives no bracket

DP_ACCOUNTING_DELTAS = """
import json, sys
from dp_accounting.pld import privacy_loss_distribution as plds
rate, sigma, steps, deltas = json.loads(sys.argv[1])
pld = plds.from_gaussian_mechanism(sigma, sampling_prob=rate, value_discretization_interval=1e-4,
                                   pessimistic_estimate=True, use_connect_dots=True).self_compose(steps)
print(json.dumps([pld.get_epsilon_for_delta(delta) for delta in deltas]))
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


def _sgd(rate: float, sigma: float, steps: int, deltas: str) -> list[str]:
    """The `gdpcli sgd` command (default options, JSON) at the comma-separated `deltas`."""
    args = ["--sampling-rate", repr(rate), "--noise-multiplier", repr(sigma), "--steps", str(steps)]
    return [sys.executable, "-m", "gdpcli", "sgd", *args, "--delta", deltas, "-f", "json"]


def gdpcli(rate: float, sigma: float, steps: int, delta: float, tree: str | None = None) -> Run:
    """gdpcli of this checkout, or of the checkout `tree` (run from there, with PYTHONPATH=tree)."""
    stdout, stderr, code, seconds, peak = _timed(_sgd(rate, sigma, steps, repr(delta)), tree)
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


def _timed(
    command: list[str], tree: str | None = None, cap: int | None = None
) -> tuple[str, str, int, float, float]:
    """A child's stdout, stderr, exit code, wall seconds and peak resident MB (GNU time's %M), run in the
    checkout `tree` if given (`python -m` imports from the working directory first), its address space
    capped at `cap` bytes if given."""
    environment = None if tree is None else dict(os.environ, PYTHONPATH=tree)
    limit = None if cap is None else partial(resource.setrlimit, resource.RLIMIT_AS, (cap, cap))
    start = time.perf_counter()
    with subprocess.Popen(
        ["/usr/bin/time", "-f", "%M", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        cwd=tree,
        preexec_fn=limit,
        start_new_session=True,  # a timeout ends the measured process too, not only GNU time
    ) as child:
        try:
            stdout, stderr = child.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return "", f"timeout after {TIMEOUT:g} s", -9, time.perf_counter() - start, float("nan")
    seconds = time.perf_counter() - start
    *lines, peak = stderr.strip().splitlines() or ["nan"]
    message = " ".join(line for line in lines if not line.startswith("Command exited")).replace("|", "/")
    return stdout, message, child.returncode, seconds, float(peak.split()[-1]) / 1024


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


def paired(ours: Callable[[], Timed], theirs: Callable[[], Other], repeat: int) -> tuple[Timed, Other]:
    """Both sides run `repeat` times in turn; each side's first run, with the median of its wall times."""
    runs = [(ours(), theirs()) for _ in range(repeat)]
    return _median([mine for mine, _ in runs]), _median([other for _, other in runs])


def _median(runs: list[Timed]) -> Timed:
    return replace(runs[0], seconds=statistics.median(run.seconds for run in runs))


@dataclass
class Answer:
    """gdpcli's rows at one delta: each guarantee's (epsilon, method), and the reason of a row without one."""

    figures: dict[str, tuple[float, str]]
    reason: str = ""

    def method(self, side: str) -> str:
        """The method of the figure on `side` (said infinite if it is), or `none`."""
        epsilon, method = self.figures.get(side, (0.0, "none"))
        return method if epsilon is not None else f"{method}, infinite"

    def bound(self, side: str) -> float | None:
        """The rigorous PLD bound on `side` ("upper_bound", "lower_bound"; an exact figure is both)."""
        epsilon, method = self.figures.get(side, self.figures.get("exact", (None, "")))
        return epsilon if method == "pld" and epsilon is not None else None


@dataclass
class Deltas:
    """One process answering several deltas: gdpcli's answers or dp-accounting's pessimistic figures."""

    answers: dict[float, Answer] | None = None
    pessimistic: dict[float, float] | None = None
    seconds: float = float("nan")
    megabytes: float = float("nan")
    failure: str = ""
    budget: bool = False  # gdpcli's refinement stopped at its work budget (a note says so)


def gdpcli_deltas(rate: float, sigma: float, steps: int, deltas: tuple[float, ...]) -> Deltas:
    """One `gdpcli sgd` process asked for every delta of the list."""
    command = _sgd(rate, sigma, steps, ",".join(repr(delta) for delta in deltas))
    stdout, stderr, code, seconds, peak = _timed(command, cap=CAP_BYTES)
    run = Deltas(
        answers={}, seconds=seconds, megabytes=peak, failure=f"exit {code}: {stderr[:90]}" if code else ""
    )
    result = json.loads(stdout) if stdout else {"rows": []}
    for line in result["rows"]:
        answer = run.answers.setdefault(line["delta"], Answer({}))
        if answer.figures.get(line["guarantee"], (None, ""))[1] != "pld":  # RDP's stand-in beside a PLD
            answer.figures[line["guarantee"]] = (line["epsilon"], line["method"])  # bound keeps the PLD's
        answer.reason = answer.reason or line.get("reason", "")
    run.budget = any("budget" in note for note in result.get("notes", []))
    return run


def dp_accounting_deltas(rate: float, sigma: float, steps: int, deltas: tuple[float, ...]) -> Deltas:
    """One dp-accounting process: a pessimistic connect-the-dots composition, then each delta."""
    arguments = json.dumps([rate, sigma, steps, deltas])
    stdout, stderr, code, seconds, peak = _timed(
        [sys.executable, "-c", DP_ACCOUNTING_DELTAS, arguments], cap=CAP_BYTES
    )
    if code:
        return Deltas(seconds=seconds, megabytes=peak, failure=f"exit {code}: {_exception(stderr)}")
    return Deltas(
        pessimistic=dict(zip(deltas, json.loads(stdout), strict=True)), seconds=seconds, megabytes=peak
    )


def prv_bracket(rate: float, sigma: float, steps: int, delta: float) -> str:
    """prv-accountant's [lower, upper] (delta_error delta / 1000) at eps_error 1e-3, or at the first of
    PRV_EPS_ERRORS where it answers (a finer grid may not fit in memory, or be refused: "floating point
    errors will dominate"), saying why the finer ones gave none; or why none gave one."""
    tried = []
    for eps_error in PRV_EPS_ERRORS:
        command = [sys.executable, "-c", PRV, json.dumps([rate, sigma, steps, delta, eps_error])]
        stdout, stderr, code, seconds, _ = _timed(command, cap=CAP_BYTES)
        found = json.loads(stdout) if not code else _exception(stderr) or f"exit {code}"
        if isinstance(found, list):
            bracket = (
                f"prv-accountant [{found[0]:.6g}, {found[1]:.6g}] (eps_error {eps_error:g}, {seconds:.0f} s)"
            )
            return "; ".join([bracket, *tried])
        tried.append(f"eps_error {eps_error:g}: {found} ({seconds:.0f} s)")
    return "prv-accountant: " + "; ".join(tried)


def _exception(stderr: str) -> str:
    """The last exception a Python child printed, else its stderr's end; a MemoryError as `MemoryError
    under the 8 GB cap` and the size of the array it could not allocate, if it says."""
    found = re.findall(r"\w+(?:Error|Exception): [^/]*", stderr)
    last = found[-1].strip() if found else stderr.strip()[-80:]
    if "MemoryError" not in last:
        return last
    size = re.search(r"allocate ([\d.]+ \w+)", last)
    return f"MemoryError under the {CAP_BYTES / 2**30:g} GB cap" + (f" ({size[1]} array)" if size else "")


def range_verdict(answer: Answer, pessimistic: float | None) -> str:
    """`ok`, or what fails at one (setting, delta): rigorous PLD bounds from gdpcli, and its upper bound
    <= dp-accounting's pessimistic figure x (1 + TIGHTNESS); a pessimistic figure below gdpcli's rigorous
    lower bound is named instead of compared (prv-accountant is asked then)."""
    upper, lower = answer.bound("upper_bound"), answer.bound("lower_bound")
    if upper is None or lower is None:
        missing = [side for side, bound in (("upper_bound", upper), ("lower_bound", lower)) if bound is None]
        return "not rigorous: " + ", ".join(f"{side} by {answer.method(side)}" for side in missing)
    if pessimistic is None:
        return "no dp-accounting figure"
    if pessimistic < lower:
        return BELOW
    if upper > pessimistic * (1 + TIGHTNESS):
        return LOOSER
    return "ok (dp-accounting: inf)" if pessimistic == math.inf else "ok"


def figures(answer: Answer) -> str:
    """gdpcli's figures at one delta as `epsilon guarantee (method)`, then the row's reason."""
    shown = [
        f"{_float(epsilon):.6g} {guarantee} ({method})"
        for guarantee, (epsilon, method) in answer.figures.items()
    ]
    return ", ".join(shown + [answer.reason] * bool(answer.reason)) or "no row"


def excess(answer: Answer, pessimistic: float | None) -> str:
    """upper / pessimistic - 1, the figure the tightness criterion bounds by TIGHTNESS."""
    upper = answer.bound("upper_bound")
    if upper is None or pessimistic is None:
        return ""
    return f"{upper / pessimistic - 1:.2g}" if pessimistic > 0 else f"{upper:g} above 0"


@dataclass
class Setting:
    """One (q, sigma, T) of the range: both processes and, per delta, the verdict and prv's bracket."""

    rate: float
    sigma: float
    steps: int
    ours: Deltas
    theirs: Deltas
    verdicts: dict[float, str]
    brackets: dict[float, str]
    code: str
    alone: dict[float, Deltas] = field(default_factory=dict)  # --alone: a process for each delta

    def name(self) -> str:
        return f"{self.rate:g}, {self.sigma:g}, {self.steps:.0e}"

    def answer(self, delta: float) -> Answer:
        """gdpcli's answer at `delta` (empty, with the process's failure, if it printed none)."""
        return self.ours.answers.get(delta, Answer({}, self.ours.failure or "no row"))

    def pessimistic(self, delta: float) -> float | None:
        """dp-accounting's pessimistic epsilon at `delta`, if it gave one."""
        return (self.theirs.pessimistic or {}).get(delta)

    def ratio(self) -> float:
        return self.ours.seconds / self.theirs.seconds

    def process_failures(self) -> list[str]:
        """The whole-process criteria: no slower than dp-accounting, peak memory within the limit."""
        slower = ["slower"] * (not self.theirs.failure and self.ratio() > 1)
        return slower + [f"over {MEMORY_LIMIT_MB:g} MB"] * (self.ours.megabytes > MEMORY_LIMIT_MB)

    def gdpcli_cell(self) -> str:
        """gdpcli's time and peak, and whether its refinement stopped at the work budget."""
        budget = ", stopped at the work budget" * self.ours.budget
        return f"{self.ours.seconds:.2f} s, {self.ours.megabytes:.0f} MB{budget}"


def measure_setting(
    rate: float, sigma: float, steps: int, deltas: tuple[float, ...], repeat: int, alone: bool = False
) -> Setting:
    """gdpcli's and dp-accounting's processes in turn, the verdicts, and prv-accountant where needed;
    with `alone`, gdpcli's process for each delta alone too (median time of `repeat` runs)."""
    code, ask = _code(), partial(gdpcli_deltas, rate, sigma, steps, deltas)
    if steps >= 10_000_000 and rate >= 0.1:  # dp-accounting needs more than about 4 GB there
        ours, theirs = paired(ask, partial(Deltas, failure="not run: dp-accounting's memory"), repeat)
    else:
        ours, theirs = paired(ask, partial(dp_accounting_deltas, rate, sigma, steps, deltas), repeat)
    setting = Setting(rate, sigma, steps, ours, theirs, {}, {}, code)
    for delta in deltas:
        verdict = range_verdict(setting.answer(delta), setting.pessimistic(delta))
        setting.verdicts[delta] = f"not rigorous: {ours.failure}" if ours.failure else verdict
        if setting.verdicts[delta] == BELOW:
            setting.brackets[delta] = prv_bracket(rate, sigma, steps, delta)
    for delta in deltas if alone else ():
        runs = [gdpcli_deltas(rate, sigma, steps, (delta,)) for _ in range(repeat)]
        setting.alone[delta] = replace(runs[0], seconds=statistics.median(run.seconds for run in runs))
    return setting


def alone_line(setting: Setting, delta: float) -> str:
    """One delta asked alone: gdpcli's figures, time and peak, the ratio to dp-accounting's process, the
    verdict (dp-accounting's figure below a rigorous lower bound is named, as in the list's rows)."""
    run, pessimistic = setting.alone[delta], setting.pessimistic(delta)
    answer = run.answers.get(delta, Answer({}, run.failure or "no row"))
    verdict = f"not rigorous: {run.failure}" if run.failure else range_verdict(answer, pessimistic)
    ratio = "" if setting.theirs.failure else f"{run.seconds / setting.theirs.seconds:.2f}"
    budget = ", work budget" * run.budget
    return (
        f"| {setting.name()} | {delta:g} | {figures(answer)} | {run.seconds:.2f} s, {run.megabytes:.0f} MB"
        f"{budget} | {ratio} | {excess(answer, pessimistic)} | {verdict} |"
    )


def alone_summary(settings: list[Setting]) -> list[str]:
    """The counts of the deltas asked alone: verdicts, and time against dp-accounting's process."""
    lines = [alone_line(s, delta) for s in settings for delta in s.alone]
    verdicts = [line.rsplit("|", 2)[-2].strip() for line in lines]
    ratios = [
        (s.alone[delta].seconds / s.theirs.seconds, f"{s.name()} at {delta:g}")
        for s in settings
        if not s.theirs.failure
        for delta in s.alone
    ]
    worst = max(ratios, default=None)
    return [
        f"- each delta alone, rigorous PLD upper and lower bound: "
        f"{sum(not v.startswith('not rigorous') for v in verdicts)} of {len(verdicts)}; "
        f"upper <= dp-accounting's x (1 + {TIGHTNESS:g}): {sum(v.startswith('ok') for v in verdicts)}; "
        f"{LOOSER}: {verdicts.count(LOOSER)}; {BELOW}: {verdicts.count(BELOW)}; "
        f"no dp-accounting figure: {verdicts.count('no dp-accounting figure')}",
        f"- each delta alone no slower than dp-accounting's process: {sum(r <= 1 for r, _ in ratios)} of "
        f"{len(ratios)}; worst {worst[0]:.2f} ({worst[1]})"
        if worst
        else "- no delta alone compared",
    ]


def delta_line(setting: Setting, delta: float) -> str:
    """One (setting, delta) row: gdpcli's figures, dp-accounting's, the excess, the verdict (and prv's)."""
    answer, pessimistic = setting.answer(delta), setting.pessimistic(delta)
    theirs = setting.theirs.failure if pessimistic is None else f"{pessimistic:.6g}"
    verdict = "; ".join(filter(None, [setting.verdicts[delta], setting.brackets.get(delta)]))
    return (
        f"| {setting.name()} | {delta:g} | {figures(answer)} | {theirs} | "
        f"{excess(answer, pessimistic)} | {verdict} |"
    )


def setting_line(setting: Setting) -> str:
    """One setting: both processes' time and peak, the ratio, and each delta that does not pass, with
    figures (a delta without a dp-accounting figure only when gdpcli's answer there is not rigorous)."""
    failing = [
        failure(setting, delta)
        for delta, verdict in setting.verdicts.items()
        if not verdict.startswith("ok") and verdict != "no dp-accounting figure"
    ]
    theirs = setting.theirs.failure or f"{setting.theirs.seconds:.2f} s, {setting.theirs.megabytes:.0f} MB"
    return (
        f"| {setting.name()} | {setting.gdpcli_cell()} | {theirs} | "
        f"{setting.ratio():.2f} | {', '.join(setting.process_failures()) or 'ok'} | "
        f"{'; '.join(failing) or 'all pass'} | {setting.code} |"
    )


def failure(setting: Setting, delta: float) -> str:
    """What fails at `delta`, with gdpcli's [lower, upper], dp-accounting's figure and prv's bracket."""
    answer, pessimistic = setting.answer(delta), setting.pessimistic(delta)
    lower, upper = (
        _float(answer.figures.get(side, (None, ""))[0]) for side in ("lower_bound", "upper_bound")
    )
    ours = f"[{lower:.6g}, {upper:.6g}]"
    theirs = "none" if pessimistic is None else f"{pessimistic:.6g}"
    verdict = setting.verdicts[delta]
    if verdict == LOOSER:
        return f"{delta:g} looser: {ours} vs {theirs} ({excess(answer, pessimistic)})"
    if verdict == BELOW:
        return f"{delta:g} dp-accounting's {theirs} below {ours}, {setting.brackets[delta]}"
    return f"{delta:g} {verdict}: {ours} vs {theirs}"


def summary(settings: list[Setting]) -> list[str]:
    """How many (setting, delta) pairs pass each criterion, and how many settings pass the process ones."""
    verdicts = [verdict for setting in settings for verdict in setting.verdicts.values()]
    compared = [s for s in settings if not s.theirs.failure]
    rigorous = sum(not verdict.startswith("not rigorous") for verdict in verdicts)
    tight = sum(verdict.startswith("ok") for verdict in verdicts)
    at_zero = sum(
        verdict == LOOSER and setting.pessimistic(delta) == 0
        for setting in settings
        for delta, verdict in setting.verdicts.items()
    )
    worst = max(compared, key=Setting.ratio, default=None)
    return [
        f"- rigorous PLD upper and lower bound, exit 0: {rigorous} of {len(verdicts)} (setting, delta) pairs",
        f"- upper <= dp-accounting's pessimistic x (1 + {TIGHTNESS:g}): {tight} of {len(verdicts)} "
        f"({verdicts.count('ok (dp-accounting: inf)')} where dp-accounting says inf); {LOOSER}: "
        f"{verdicts.count(LOOSER)} ({at_zero} where dp-accounting says 0); {BELOW}: {verdicts.count(BELOW)}; "
        f"no dp-accounting figure: {verdicts.count('no dp-accounting figure')}",
        f"- no slower than dp-accounting: {sum(s.ratio() <= 1 for s in compared)} of {len(compared)} "
        f"settings; worst ratio {worst.ratio():.2f} ({worst.name()})"
        if worst
        else "- no setting compared",
        f"- peak memory <= {MEMORY_LIMIT_MB:g} MB: "
        f"{sum(s.ours.megabytes <= MEMORY_LIMIT_MB for s in settings)} of {len(settings)} settings",
    ]


def range_main(
    steps: tuple[int, ...] | None, rates: tuple[float, ...] | None, repeat: int, alone: bool = False
) -> None:
    """The range: q in RANGE_RATES x sigma in RANGE_SIGMAS x T in RANGE_STEPS, each setting asking one
    gdpcli process for RANGE_DELTAS (`--delta 1e-15,...,0.1`) and one dp-accounting process for the same
    deltas of one pessimistic composition (interval 1e-4); prints the commit, the date and the load at
    start and end, a row per (setting, delta), a row per setting, and the counts (with `alone`, also a
    row per delta asked alone, and their counts)."""
    print(f"start: {_state()}", flush=True)
    settings = []
    table = "| q, sigma, T | delta | gdpcli | dp-accounting pessimistic | upper / pess - 1 | verdict |"
    for rate in rates or RANGE_RATES:
        for sigma in RANGE_SIGMAS:
            for t in steps or RANGE_STEPS:
                settings.append(measure_setting(rate, sigma, t, RANGE_DELTAS, repeat, alone))
                lines = [delta_line(settings[-1], delta) for delta in RANGE_DELTAS]
                lines += [alone_line(settings[-1], delta) for delta in settings[-1].alone]
                print("\n".join([*lines, setting_line(settings[-1])]), file=sys.stderr, flush=True)
    print(f"end: {_state()}\n\n{table}\n|---|---|---|---|---|---|")
    print("\n".join(delta_line(s, delta) for s in settings for delta in RANGE_DELTAS))
    columns = ["q, sigma, T", "gdpcli time, peak", "dp-accounting time, peak", "time ratio", "process"]
    print(f"\n| {' | '.join([*columns, 'failing', 'code'])} |\n" + "|---" * 7 + "|")
    print("\n".join(setting_line(s) for s in settings))
    print("\n" + "\n".join(summary(settings)))
    if alone:
        columns = ["q, sigma, T", "delta alone", "gdpcli", "time, peak", "ratio", "upper / pess - 1"]
        print(f"\n| {' | '.join([*columns, 'verdict'])} |\n" + "|---" * 7 + "|")
        print("\n".join(alone_line(s, delta) for s in settings for delta in s.alone))
        print("\n" + "\n".join(alone_summary(settings)))


def _state() -> str:
    """The code gdpcli runs, the UTC date and the load average."""
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    return f"code {_code()}, {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}, load {load}"


def _code() -> str:
    """The commit, followed by `+` and a hash of the uncommitted diff to gdpcli/ if there is one (each gdpcli
    process runs the code on disk at its start)."""
    diff = _git("diff", "HEAD", "--", ":(top)gdpcli")
    return _git("log", "-1", "--format=%h") + f"+{hashlib.sha1(diff.encode()).hexdigest()[:7]}" * bool(diff)


def _git(*arguments: str) -> str:
    """The output of a git command run in this checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    return subprocess.run(["git", *arguments], capture_output=True, text=True, cwd=here).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="T in {1, 1e2, 1e4}, sigma in {0.5, 1.1, 5}")
    parser.add_argument("--steps", type=float, nargs="+", help="only these T (e.g. --steps 1e6)")
    parser.add_argument("--rates", type=float, nargs="+", help="only these q (e.g. --rates 1e-5 1e-4)")
    parser.add_argument("--issue", action="store_true", help="bench_grid.py's settings only")
    parser.add_argument("--versus", metavar="DIR", help="time against the gdpcli of the checkout DIR")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each side per setting (median)")
    parser.add_argument("--range", action="store_true", help="the range of tiny deltas, long runs, lists")
    parser.add_argument("--alone", action="store_true", help="--range: also each delta in its own process")
    arguments = parser.parse_args()
    if arguments.range:
        steps = arguments.steps and tuple(int(t) for t in arguments.steps)
        range_main(steps, arguments.rates and tuple(arguments.rates), arguments.repeat, arguments.alone)
        return
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
