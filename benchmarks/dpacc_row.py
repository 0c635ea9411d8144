"""dp-accounting's pessimistic PLD epsilon for one DP-SGD row, as one process (a yardstick for farm-bench).

    python benchmarks/dpacc_row.py Q SIGMA T DELTA

composes `from_gaussian_mechanism(SIGMA, sampling_prob=Q, value_discretization_interval=1e-4,
pessimistic_estimate=True, use_connect_dots=True)` T times and prints `get_epsilon_for_delta(DELTA)`.
"""

from __future__ import annotations

import sys

from dp_accounting.pld import privacy_loss_distribution


def epsilon(q: float, sigma: float, steps: int, delta: float, pessimistic: bool = True) -> float:
    """dp-accounting's epsilon at delta of T Poisson-subsampled Gaussian steps, its PLD discretized at 1e-4
    (pessimistic with connect-the-dots, or optimistic)."""
    step = privacy_loss_distribution.from_gaussian_mechanism(
        sigma,
        sampling_prob=q,
        value_discretization_interval=1e-4,
        pessimistic_estimate=pessimistic,
        use_connect_dots=pessimistic,
    )
    return step.self_compose(steps).get_epsilon_for_delta(delta)


def main() -> None:
    q, sigma, delta = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[4])
    print(epsilon(q, sigma, int(float(sys.argv[3])), delta))


if __name__ == "__main__":
    main()
