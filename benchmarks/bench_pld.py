"""gdpcli's PLD accountant vs dp-accounting's PLD accountant on the same compositions, in one process.

Run from the repository root:  python benchmarks/bench_pld.py
gdpcli refines its grid until upper/lower <= 1.005 and reports both rigorous bounds; dp-accounting runs
its pessimistic connect-the-dots PLD at value_discretization_interval 1e-4 (its usual setting).
"""

from __future__ import annotations

import time

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as dpa

from gdpcli.core import gdp, pld


def gaussian(mu: float) -> pld.DominatingPair:
    return pld.DominatingPair(lambda e: np.asarray(gdp.delta(e, mu)))


def poisson_gaussian(mu: float, p: float) -> pld.DominatingPair:
    """Poisson-subsampled Gaussian profiles: remove ((1-p) N(0,1) + p N(mu,1), N(0,1)) and add (reverse)."""

    def remove(e: np.ndarray) -> np.ndarray:
        e = np.asarray(e, dtype=float)
        active = np.exp(e) > 1 - p
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = np.where(active, np.log1p(np.expm1(e) / p), 0.0)
        return np.where(active, p * gdp.delta(inner, mu), -np.expm1(e))

    def add(e: np.ndarray) -> np.ndarray:
        e = np.asarray(e, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            weight = -np.expm1(e + np.log1p(-p))
            active = weight > 0
            inner = np.where(active, e + np.log(p) - np.log(np.where(active, weight, 1.0)), 0.0)
        return np.where(active, weight * gdp.delta(inner, mu), 0.0)

    return pld.DominatingPair(remove, add)


def timed(function):
    start = time.perf_counter()
    result = function()
    return result, time.perf_counter() - start


CASES = [
    (
        "MNIST DP-SGD, Poisson q=256/60000, sigma=1.1, T=14063, delta=1e-5",
        lambda: pld.epsilon_bounds([(poisson_gaussian(1 / 1.1, 256 / 60000), 14063)], 1e-5),
        lambda: (
            dpa.from_gaussian_mechanism(1.1, sampling_prob=256 / 60000, value_discretization_interval=1e-4)
            .self_compose(14063)
            .get_epsilon_for_delta(1e-5)
        ),
    ),
    (
        "Gaussian sigma=20 x1000, delta=1e-5 (exact 7.5112759)",
        lambda: pld.epsilon_bounds([(gaussian(1 / 20), 1000)], 1e-5),
        lambda: (
            dpa.from_gaussian_mechanism(20.0, value_discretization_interval=1e-4)
            .self_compose(1000)
            .get_epsilon_for_delta(1e-5)
        ),
    ),
]


def main() -> None:
    print(f"{'case':<70} {'gdpcli [lower, upper]':>24} {'s':>7} {'dp-acc eps':>11} {'s':>7} {'ratio':>6}")
    for name, ours, theirs in CASES:
        bounds, our_time = timed(ours)
        epsilon, their_time = timed(theirs)
        print(
            f"{name:<70} [{bounds.lower:.5f}, {bounds.upper:.5f}] {our_time:7.3f} {epsilon:11.5f} "
            f"{their_time:7.3f} {their_time / our_time:6.1f}"
        )


if __name__ == "__main__":
    main()
