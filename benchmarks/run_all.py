"""Every gdpcli benchmark in one run, printed as one table of ratios.

    PYTHONPATH=. python benchmarks/run_all.py [--quick]     # from the repository root

Rows: startup (bench_startup.py), kernel throughput (bench_kernels.py), the DP-SGD accountant against
dp-accounting and prv-accountant at equal accuracy (below), and the GDPT head measurement against the
uniform-grid baseline (bench_gdpt.py). The table goes to stdout as Markdown; progress goes to stderr.

Equal accuracy: a tool's accuracy is the width of the interval it certifies for epsilon at delta = 1e-5
of Poisson DP-SGD on MNIST (q = 256/60000, sigma = 1.1): gdpcli upper - lower (pld.epsilon_bounds at a
fixed `accuracy`, the exact method of `gdpcli sgd`), prv-accountant upper - lower (set by eps_error, with
delta_error = delta / 1000 as its docs advise), dp-accounting pessimistic - optimistic at the same
value_discretization_interval (connect-the-dots for the pessimistic PLD; dp-accounting 0.6 has only
privacy buckets for the optimistic one). gdpcli's width is the target. Each peer's parameter is tuned on
its own runs (width ~ parameter^k, k fitted from the last two runs, k = 1 at first) until its width is
within a factor 1.5 of the target; the run at that parameter is the one timed. When the parameter it
would need is finer than this run allows (dp-accounting at 60 epochs: the gap of its optimistic
estimate grows like steps x interval), the row keeps the last run and says what it would need.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version

import bench_kernels
import bench_startup
from bench_gdpt import baseline_head, timed
from bench_startup import Comparison, table
from dp_accounting.pld import privacy_loss_distribution as dpa
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism

from gdpcli import accounting
from gdpcli.accounting.dpsgd import Run
from gdpcli.core import gdpt, pld

DELTA = 1e-5
SAMPLING_RATE, NOISE_MULTIPLIER = 256 / 60000, 1.1
WORKLOADS = ((235, "1 epoch"), (14063, "60 epochs"))
TOLERANCE = 1.5
"""Widths count as equal within this factor."""
USUAL_INTERVAL = 1e-4
"""dp-accounting's default value_discretization_interval, where its tuning starts."""
FINEST_INTERVAL = 5e-6
"""Finest dp-accounting interval tried: at 60 epochs one run at 1e-5 already takes ~20 s and 400 MB."""
PRECISION = 1e-4
"""Width of the certified GDPT head interval [mu_lower, mu_upper]."""


@dataclass(frozen=True)
class Interval:
    """A certified interval [lower, upper] for epsilon, the tool parameter it came from, its wall time."""

    lower: float
    upper: float
    parameter: float
    seconds: float

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def describe(self, parameter: str) -> str:
        return (
            f"[{self.lower:.5f}, {self.upper:.5f}], width {self.width:.2g} ({parameter}={self.parameter:.2g})"
        )


def gdpcli_interval(steps: int, accuracy: float, repeat: int) -> Interval:
    """gdpcli's rigorous PLD bounds (the exact method of `gdpcli sgd`), best of `repeat` runs."""
    pair = accounting.dominating_pair(Run(SAMPLING_RATE, steps, NOISE_MULTIPLIER).spec())
    seconds, bounds = timed(lambda: pld.epsilon_bounds([(pair, steps)], DELTA, accuracy=accuracy), repeat)
    return Interval(bounds.lower, bounds.upper, accuracy, seconds)


def prv_interval(steps: int, eps_error: float) -> Interval:
    """prv-accountant's (lower, upper) epsilon, one run including its set-up."""

    def run() -> tuple[float, float, float]:
        mechanism = PoissonSubsampledGaussianMechanism(SAMPLING_RATE, NOISE_MULTIPLIER)
        accountant = PRVAccountant(
            [mechanism], eps_error=eps_error, delta_error=DELTA / 1000, max_self_compositions=[steps]
        )
        return accountant.compute_epsilon(DELTA, [steps])

    seconds, (lower, _, upper) = timed(run, 1)
    return Interval(lower, upper, eps_error, seconds)


def dp_accounting_epsilon(steps: int, interval: float, pessimistic: bool) -> float:
    """dp-accounting's epsilon from its pessimistic (connect-the-dots) or optimistic PLD."""
    distribution = dpa.from_gaussian_mechanism(
        NOISE_MULTIPLIER,
        sampling_prob=SAMPLING_RATE,
        value_discretization_interval=interval,
        pessimistic_estimate=pessimistic,
        use_connect_dots=pessimistic,
    )
    return distribution.self_compose(steps).get_epsilon_for_delta(DELTA)


def dp_accounting_interval(steps: int, interval: float) -> Interval:
    """[optimistic, pessimistic] epsilon at one interval; the time is that of both runs."""
    upper_seconds, upper = timed(lambda: dp_accounting_epsilon(steps, interval, True), 1)
    lower_seconds, lower = timed(lambda: dp_accounting_epsilon(steps, interval, False), 1)
    return Interval(lower, upper, interval, upper_seconds + lower_seconds)


@dataclass(frozen=True)
class Tuned:
    """The last run of a tuning, whether its width matched the target, and the parameter to try next."""

    run: Interval
    matched: bool
    next_parameter: float


def equal_width(
    measure: Callable[[float], Interval], guess: float, target: float, finest: float = 0.0, tries: int = 4
) -> Tuned:
    """Tune a parameter (width grows with it) until the width is within TOLERANCE of the target."""
    runs: list[Interval] = []
    parameter = guess
    for _ in range(tries):
        runs.append(measure(parameter))
        ratio = runs[-1].width / target
        if 1 / TOLERANCE <= ratio <= TOLERANCE:
            return Tuned(runs[-1], True, parameter)
        exponent = 1.0
        if len(runs) > 1 and runs[-2].width > 0 < runs[-1].width and runs[-2].parameter != parameter:
            fitted = math.log(runs[-1].width / runs[-2].width) / math.log(parameter / runs[-2].parameter)
            exponent = min(max(fitted, 0.5), 2.0)
        parameter *= ratio ** (-1 / exponent) if ratio > 0 else 0.5
        if parameter < finest:
            break
    return Tuned(runs[-1], False, parameter)


def accountant_rows(accuracy: float, progress: Callable[[str], None]) -> list[Comparison]:
    """gdpcli against prv-accountant and dp-accounting, each tuned to gdpcli's certified width."""
    rows = []
    for steps, label in WORKLOADS:
        progress(f"accountants, {label}")
        ours = gdpcli_interval(steps, accuracy, 3)
        name = f"accountant: DP-SGD MNIST {label} (T={steps}), eps at delta=1e-5, equal certified width"
        peers = [
            (
                "prv-accountant",
                "eps_error",
                equal_width(lambda e, steps=steps: prv_interval(steps, e), ours.width / 2, ours.width),
            ),
            (
                "dp-accounting PLD, pessimistic + optimistic",
                "VDI",
                equal_width(
                    lambda v, steps=steps: dp_accounting_interval(steps, v),
                    USUAL_INTERVAL,
                    ours.width,
                    FINEST_INTERVAL,
                ),
            ),
        ]
        for peer, parameter, tuned in peers:
            note = (
                ""
                if tuned.matched
                else f"widths differ: equal width needs {parameter} ~ {tuned.next_parameter:.1g}"
            )
            rows.append(
                Comparison(
                    name,
                    ours.describe("accuracy"),
                    ours.seconds,
                    f"{peer} {tuned.run.describe(parameter)}",
                    tuned.run.seconds,
                    note,
                )
            )
    return rows


def gdpt_row(eps_head: float) -> Comparison:
    """GDPT head measurement: adaptive Algorithm 3 against Algorithm 2's uniform grid (bench_gdpt)."""
    profile = gdpt.refined(gdpt.noise_family_profile(2.0, 1.0, 2.0))
    ours, result = timed(lambda: gdpt.identify(profile, eps_head, PRECISION), 3)
    theirs, (lower, upper, cells) = timed(lambda: baseline_head(profile, eps_head, PRECISION), 1)
    return Comparison(
        f"gdpt-identify head: {profile.name}, eps_head={eps_head:g}, precision={PRECISION:g}",
        f"adaptive Alg. 3, [{result.mu_lower:.6f}, {result.mu_upper:.6f}], {result.staircase_eps.size} cells",
        ours,
        f"uniform grid (Alg. 2 + 1), [{lower:.6f}, {upper:.6f}], {cells} cells",
        theirs,
    )


def environment() -> str:
    """Versions and machine, for the record under the table."""
    packages = ", ".join(
        f"{name} {version(name)}" for name in ("numpy", "scipy", "dp-accounting", "prv-accountant")
    )
    return f"Python {platform.python_version()}, {packages}; {platform.machine()} with {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="5 startup runs, 10^4 kernel points, accuracy 0.02 (not 0.005), eps_head 20 (not 100)",
    )
    quick = parser.parse_args().quick
    runs, accuracy, eps_head = (5, 0.02, 20.0) if quick else (21, 0.005, 100.0)

    def progress(step: str) -> None:
        print(f"running: {step}", file=sys.stderr, flush=True)

    progress("startup")
    rows = bench_startup.measure(runs)
    progress("kernels")
    rows += bench_kernels.measure(quick)
    rows += accountant_rows(accuracy, progress)
    progress("gdpt head")
    rows.append(gdpt_row(eps_head))
    print(table(rows))
    print(f"\n{'--quick, ' if quick else ''}startup: median of {runs} interleaved runs; {environment()}")


if __name__ == "__main__":
    main()
