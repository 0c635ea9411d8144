"""Tiny deltas: `gdpcli sgd` (default options) beside dp-accounting's PLD accountant (pessimistic
connect-the-dots at value_discretization_interval 1e-4 and 2e-5) and prv-accountant (eps_error 1e-3,
delta_error delta / 1000, where it answers), each as a whole process, in one run, on the settings that
gdpcli refused before its steeper tilt and that federated and large-dataset runs quote.

    PYTHONPATH=. python benchmarks/bench_tiny_deltas.py > tiny.md

Prints one Markdown row per setting: each tool's figures and wall seconds (prv-accountant's bracket, or
the reason it gives none).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

SETTINGS = (
    (0.00033, 4.0, 10_000, 1e-10),
    (1e-4, 2.0, 100_000, 1e-12),
    (6.4e-5, 1.0, 156_250, 1e-9),
    (1e-3, 2.0, 1_000_000, 1e-12),
)

DP_ACCOUNTING = """
import json, sys
from dp_accounting.pld import privacy_loss_distribution as plds
rate, sigma, steps, delta, interval = json.loads(sys.argv[1])
pld = plds.from_gaussian_mechanism(sigma, sampling_prob=rate, value_discretization_interval=interval,
                                   pessimistic_estimate=True, use_connect_dots=True)
print(json.dumps(pld.self_compose(steps).get_epsilon_for_delta(delta)))
"""

PRV = """
import json, sys
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import PoissonSubsampledGaussianMechanism
rate, sigma, steps, delta = json.loads(sys.argv[1])
mechanism = PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=rate)
accountant = PRVAccountant(
    [mechanism], max_self_compositions=[steps], eps_error=1e-3, delta_error=delta / 1e3
)
try:
    low, _, high = accountant.compute_epsilon(delta=delta, num_self_compositions=[steps])
    print(json.dumps([low, high]))
except ValueError as error:
    print(json.dumps(str(error).split(".")[0]))
"""


def timed(command: list[str]) -> tuple[str, float]:
    """stdout and wall seconds of a whole process."""
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    return done.stdout, time.perf_counter() - start


def gdpcli(rate: float, sigma: float, steps: int, delta: float) -> tuple[str, float]:
    args = ["sgd", "--sampling-rate", repr(rate), "--noise-multiplier", repr(sigma), "--steps", str(steps)]
    out, seconds = timed([sys.executable, "-m", "gdpcli", *args, "--delta", repr(delta), "-f", "json"])
    rows = json.loads(out)["rows"]
    figures = ", ".join(f"{row['epsilon']:.6g} {row['guarantee']} ({row['method']})" for row in rows)
    return figures, seconds


def main() -> None:
    print("| q | sigma | T | delta | gdpcli | dp-accounting 1e-4 | dp-accounting 2e-5 | prv-accountant |")
    print("|---|---|---|---|---|---|---|---|")
    for rate, sigma, steps, delta in SETTINGS:
        ours, ours_s = gdpcli(rate, sigma, steps, delta)
        cells = [f"{ours} ({ours_s:.2f} s)"]
        for interval in (1e-4, 2e-5):
            arguments = json.dumps([rate, sigma, steps, delta, interval])
            out, seconds = timed([sys.executable, "-c", DP_ACCOUNTING, arguments])
            cells.append(f"{json.loads(out):.6g} ({seconds:.2f} s)")
        out, seconds = timed([sys.executable, "-c", PRV, json.dumps([rate, sigma, steps, delta])])
        found = json.loads(out)
        bracket = f"[{found[0]:.6g}, {found[1]:.6g}]" if isinstance(found, list) else found
        cells.append(f"{bracket} ({seconds:.2f} s)")
        print(f"| {rate:g} | {sigma:g} | {steps} | {delta:g} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
