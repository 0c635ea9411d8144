"""gdpcli's PLD accountant vs dp-accounting's PLD accountant on the same compositions, in one process.

Run from the repository root:  python benchmarks/bench_pld.py
gdpcli refines its grid until upper/lower <= 1.005 and reports both rigorous bounds; dp-accounting runs
its pessimistic connect-the-dots PLD at value_discretization_interval 1e-4 (its usual setting).
"""

from __future__ import annotations

import time

from dp_accounting.pld import privacy_loss_distribution as dpa

from gdpcli.core import pld
from gdpcli.events.spec import parse_spec


def gaussian(mu: float) -> pld.DominatingPair:
    """The dominating pair gdpcli itself builds for gdp:mu=MU."""
    return parse_spec(f"gdp:mu={mu!r}").step.dominating_pair()


def poisson_gaussian(mu: float, p: float) -> pld.DominatingPair:
    """The pair gdpcli builds for the Poisson-subsampled Gaussian (remove and add directions)."""
    return parse_spec(f"gdp:mu={mu!r},p={p!r},sampling=poisson").step.dominating_pair()


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
