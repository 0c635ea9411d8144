"""The safe-side rounding contract on a million points: how often does a rounded result fail the
inequality it promises, checked exactly in floating point, and how often is it not tight?

    PYTHONPATH=. python benchmarks/rounding_contract.py [--points N] [--seed S]

Points are log-uniform over the magnitudes the kernels promise: mu in [1e-8, 40], delta in [1e-300, 0.5],
epsilon in [1e-12, 1e3] (and 5 % exactly 0). The kernels check delta with the margin
gdp.DELTA_RELATIVE_ERROR (the verified error of gdp.delta), so that the inequality holds for the exact delta.
Counted, each must be 0:
- delta(epsilon(d, mu), mu) > d and delta(eps, mu(eps, d)) > d (the contract, exact float comparison);
- the same with the margin, delta (1 + DELTA_RELATIVE_ERROR) > d;
- not tight: one float below epsilon(d, mu) (where epsilon > 0), or one float above mu(eps, d), the margin
  check still passes (a float nearer the unsafe side would also have met the target).
The unit test (tests/core/test_kernel_accuracy.py) runs the same check on 1e4 points.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gdpcli.core import gdp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=2026)
    arguments = parser.parse_args()
    size = arguments.points
    rng = np.random.default_rng(arguments.seed)
    mu = 10.0 ** rng.uniform(-8, np.log10(40), size)
    delta = 10.0 ** rng.uniform(-300, np.log10(0.5), size)
    eps = np.where(rng.random(size) < 0.05, 0.0, 10.0 ** rng.uniform(-12, 3, size))

    start = time.perf_counter()
    epsilons = np.asarray(gdp.epsilon(delta, mu))
    middle = time.perf_counter()
    mus = np.asarray(gdp.mu(eps, delta))
    end = time.perf_counter()
    checks = time.perf_counter()
    margin = 1.0 + gdp.DELTA_RELATIVE_ERROR
    failures_epsilon = int(np.count_nonzero(gdp.delta(epsilons, mu) > delta))
    failures_mu = int(np.count_nonzero(gdp.delta(eps, mus) > delta))
    margin_epsilon = int(np.count_nonzero(gdp.delta(epsilons, mu) * margin > delta))
    margin_mu = int(np.count_nonzero(gdp.delta(eps, mus) * margin > delta))
    inner = epsilons > 0
    below = gdp.delta(np.nextafter(epsilons, -1.0), mu) * margin <= delta
    loose_epsilon = int(np.count_nonzero(below[inner]))
    loose_mu = int(np.count_nonzero(gdp.delta(eps, np.nextafter(mus, np.inf)) * margin <= delta))
    checked = time.perf_counter()

    ranges = "mu in [1e-8, 40], delta in [1e-300, 0.5], eps in [0, 1e3]"
    print(f"{size:,} points (seed {arguments.seed}), {ranges}")
    counts = "{} failures, {} with the margin, {} not tight"
    print("delta(epsilon(d, mu), mu) > d: ", counts.format(failures_epsilon, margin_epsilon, loose_epsilon))
    print(f"  gdp.epsilon: {middle - start:.2f} s, {np.count_nonzero(~inner):,} results eps = 0")
    print("delta(eps, mu(eps, d)) > d:    ", counts.format(failures_mu, margin_mu, loose_mu))
    print(f"  gdp.mu: {end - middle:.2f} s")
    print(f"checking both: {checked - checks:.2f} s")


if __name__ == "__main__":
    main()
