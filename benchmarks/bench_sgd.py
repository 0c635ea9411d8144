"""`gdpcli sgd` (exact Poisson MNIST run) vs dp-accounting's PLD accountant, each as a whole process.

Run from the repository root:  python benchmarks/bench_sgd.py [--repetitions N]
Both answer: epsilon at delta 1e-5 of DP-SGD with q = 256/60000, sigma = 1.1, T = 14063 (60 epochs),
Poisson sampling. gdpcli prints rigorous upper and lower bounds (upper/lower <= 1.005); dp-accounting runs
its pessimistic connect-the-dots PLD at value_discretization_interval 1e-4 (upper bound only). The time
includes interpreter start-up and imports, as a user would see it. Prints the median times and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

GDPCLI = [
    sys.executable, "-m", "gdpcli", "sgd", "--dataset-size", "60000", "--batch-size", "256",
    "--noise-multiplier", "1.1", "--epochs", "60", "--delta", "1e-5", "-f", "csv",
]  # fmt: skip
DP_ACCOUNTING = """
import dp_accounting
from dp_accounting.pld import pld_privacy_accountant
accountant = pld_privacy_accountant.PLDAccountant(
    dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-4
)
event = dp_accounting.PoissonSampledDpEvent(256 / 60000, dp_accounting.GaussianDpEvent(1.1))
accountant.compose(dp_accounting.SelfComposedDpEvent(event, 14063))
print(accountant.get_epsilon(1e-5))
"""


def timed(command: list[str]) -> tuple[float, str]:
    """Wall time of one whole process and its stdout."""
    start = time.perf_counter()
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - start, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=5)
    repetitions = parser.parse_args().repetitions
    ours, theirs = [], []
    for _ in range(repetitions):  # interleaved, so both see the same machine load
        seconds, gdpcli_out = timed(GDPCLI)
        ours.append(seconds)
        seconds, peer_out = timed([sys.executable, "-c", DP_ACCOUNTING])
        theirs.append(seconds)
    bounds = [line.split(",")[7] for line in gdpcli_out.splitlines()[1:]]
    print(f"gdpcli sgd      eps upper, lower = {', '.join(bounds)}   median {statistics.median(ours):.3f} s")
    print(f"dp-accounting   eps upper        = {peer_out.strip()}   median {statistics.median(theirs):.3f} s")
    print(f"ratio dp-accounting / gdpcli = {statistics.median(theirs) / statistics.median(ours):.2f}x "
          f"({repetitions} repetitions, whole processes)")  # fmt: skip


if __name__ == "__main__":
    main()
