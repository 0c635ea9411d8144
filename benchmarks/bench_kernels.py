"""Kernel throughput: gdpcli.core.gdp on large arrays against the scipy.special ufuncs it is built on.

    PYTHONPATH=. python benchmarks/bench_kernels.py [--quick]     # from the repository root

- gdp.delta(eps; mu) (GDP paper Cor. 1, in log space) on 10^6 points against one scipy.special.ndtr call
  on the same array (the floor: the formula needs two normal CDFs), and against the textbook formula
  ndtr(a) - e^eps ndtr(b) (two ndtr calls and an exp), which is faster but cancels to 0 or below for
  large eps: the row says at how many points it is off by more than 1e-6 relative.
- gdp.epsilon and gdp.mu (safeguarded Newton) against vectorized bisection on gdp.log_delta to an
  absolute width of 1e-12 (bench_gdpt.bisection, GDPT Algorithm 1, for mu).
Times are the best of 3 runs in one process (bench_gdpt.timed).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from bench_gdpt import bisection, timed
from bench_startup import Comparison, table
from scipy import special

from gdpcli.core import gdp, normal

WIDTH = 1e-12
"""Absolute width to which the bisection baselines bracket their roots."""


def delta_inputs(points: int) -> tuple[np.ndarray, np.ndarray]:
    """eps uniform on [0, 40] and mu uniform on [0.2, 5] (fixed seed)."""
    rng = np.random.default_rng(0)
    return rng.uniform(0.0, 40.0, points), rng.uniform(0.2, 5.0, points)


def textbook_delta(epsilon: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) as written (GDP paper Cor. 1): cancels."""
    with np.errstate(over="ignore", invalid="ignore"):
        return special.ndtr(-epsilon / mu + mu / 2) - np.exp(epsilon) * special.ndtr(-epsilon / mu - mu / 2)


def bisection_epsilon(delta: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Vectorized bisection for delta(eps; mu) = delta on [0, mu (mu/2 - Phi^-1(delta))] (the bracket of
    gdp.epsilon) to width WIDTH; returns the upper end (the safe side)."""
    log_target = np.log(delta)
    lower, upper = np.zeros_like(mu), mu * (0.5 * mu - normal.Phi_inv(delta))
    while np.max(upper - lower) > WIDTH:
        middle = 0.5 * (lower + upper)
        above = np.asarray(gdp.log_delta(middle, mu)) > log_target
        lower, upper = np.where(above, middle, lower), np.where(above, upper, middle)
    return upper


def delta_rows(points: int, repeat: int) -> list[Comparison]:
    """gdp.delta against one ndtr call and against the textbook formula, on the same arrays."""
    epsilon, mu = delta_inputs(points)
    ours, values = timed(lambda: gdp.delta(epsilon, mu), repeat)
    floor, _ = timed(lambda: special.ndtr(epsilon), repeat)
    textbook, naive = timed(lambda: textbook_delta(epsilon, mu), repeat)
    with np.errstate(divide="ignore", invalid="ignore"):
        wrong = ~(np.abs(naive / values - 1.0) <= 1e-6)
    name = f"kernel: `gdp.delta(eps, mu)`, {points:.0e} points (eps in [0, 40], mu in [0.2, 5])"
    return [
        Comparison(
            name, "log space, accurate to 1e-300", ours, "`scipy.special.ndtr` on the eps array", floor
        ),
        Comparison(
            name,
            "log space, accurate to 1e-300",
            ours,
            f"textbook `ndtr(a) - exp(eps) ndtr(b)`, wrong (> 1e-6 relative) at {wrong.mean():.0%} of points",
            textbook,
        ),
    ]


def newton_row(
    name: str,
    newton: Callable[[], np.ndarray],
    bisection: Callable[[], np.ndarray],
    repeat: int,
    truth: np.ndarray | None = None,
    source: str = "",
) -> Comparison:
    """A safeguarded-Newton kernel timed against vectorized bisection to WIDTH, with its largest distance
    from the truth where it is known (max error), else from the bisection's answer (max difference)."""
    ours, found = timed(newton, repeat)
    theirs, bisected = timed(bisection, repeat)
    distance = "max difference" if truth is None else "max error"
    error = float(np.max(np.abs(found - (bisected if truth is None else truth))))
    return Comparison(
        name,
        f"safeguarded Newton ({distance} {error:.0e})",
        ours,
        f"vectorized bisection to {WIDTH:g}{source}",
        theirs,
    )


def epsilon_row(points: int, repeat: int) -> Comparison:
    """gdp.epsilon against vectorized bisection on delta in [1e-12, 1e-2], mu in [0.2, 5]."""
    rng = np.random.default_rng(1)
    mu, delta = rng.uniform(0.2, 5.0, points), 10.0 ** rng.uniform(-12.0, -2.0, points)
    return newton_row(
        f"kernel: `gdp.epsilon(delta, mu)`, {points:.0e} points",
        lambda: gdp.epsilon(delta, mu),
        lambda: bisection_epsilon(delta, mu),
        repeat,
    )


def mu_row(points: int, repeat: int) -> Comparison:
    """gdp.mu against bench_gdpt.bisection on pairs with known mu (eps in [0, 20], mu in [0.2, 5])."""
    rng = np.random.default_rng(2)
    epsilon, mu = rng.uniform(0.0, 20.0, points), rng.uniform(0.2, 5.0, points)
    log_delta = np.asarray(gdp.log_delta(epsilon, mu))
    keep = log_delta > -700.0  # gdp.mu takes delta itself
    epsilon, mu, log_delta = epsilon[keep], mu[keep], log_delta[keep]
    delta = np.exp(log_delta)
    return newton_row(
        f"kernel: `gdp.mu(eps, delta)`, {mu.size:.0e} points",
        lambda: gdp.mu(epsilon, delta),
        lambda: bisection(epsilon, log_delta, 10.0, WIDTH),
        repeat,
        truth=mu,
        source=" (GDPT Alg. 1)",
    )


def measure(quick: bool) -> list[Comparison]:
    """All kernel rows: 10^6 points for delta; 10^4 (quick) or 10^5 points for epsilon and mu."""
    repeat, points = 3, 10**4 if quick else 10**5
    return [*delta_rows(10**6, repeat), epsilon_row(points, repeat), mu_row(points, repeat)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^4 points for epsilon and mu instead of 10^5")
    print(table(measure(parser.parse_args().quick)))


if __name__ == "__main__":
    main()
