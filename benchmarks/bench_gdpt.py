"""GDPT speed: mu_GDP solvers and the head measurement (GDPT paper Algorithms 1-3).

    PYTHONPATH=. python benchmarks/bench_gdpt.py [--quick]

1. mu_GDP(eps, delta) on 10^4 pairs: gdp.mu (vectorized safeguarded Newton) and gdpt.mu_bound (log space,
   directed rounding) against the paper's Algorithm 1 (bisection on [0, mu_max] down to a width b), both as
   the paper's per-point loop and vectorized over all points.
2. identify(profile, eps_head=100, precision=1e-4) (adaptive vectorized Algorithm 3) against a
   straightforward baseline: Algorithm 2 of App. D, i.e. a uniform grid with spacing D chosen so that the
   Thm 4.6 gap sqrt(2 pi) D is precision / 2, and Algorithm 1 bisection (to precision / 2) for both
   staircases at every grid point, vectorized in chunks.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from gdpcli.core import gdp, gdpt


def timed(action: Callable[[], object], repeat: int = 3) -> tuple[float, object]:
    """Best wall time of `repeat` runs, and the result."""
    best, result = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - start)
    return best, result


def bisection(
    epsilon: np.ndarray, log_delta: np.ndarray, mu_max: float, width: float
) -> tuple[np.ndarray, ...]:
    """GDPT Algorithm 1, vectorized: bisection for delta_mu(eps) = delta on [0, mu_max] to the given width."""
    lower, upper = np.zeros_like(epsilon), np.full_like(epsilon, mu_max)
    while np.max(upper - lower) > width:
        middle = 0.5 * (lower + upper)
        above = np.asarray(gdp.log_delta(epsilon, middle)) > log_delta
        upper, lower = np.where(above, middle, upper), np.where(above, lower, middle)
    return lower, upper


def bisection_scalar(epsilon: float, delta: float, mu_max: float, width: float) -> float:
    """GDPT Algorithm 1 as written: one point at a time."""
    lower, upper = 0.0, mu_max
    while upper - lower > width:
        middle = 0.5 * (lower + upper)
        if gdp.delta(epsilon, middle) > delta:
            upper = middle
        else:
            lower = middle
    return upper


def bench_mu() -> None:
    """Part 1: mu_GDP solvers on 10^4 (eps, delta) pairs with known mu."""
    rng = np.random.default_rng(0)
    mu = rng.uniform(0.1, 6.0, 10_000)
    eps = rng.uniform(0.0, 30.0, 10_000)
    log_delta = np.asarray(gdp.log_delta(eps, mu))
    keep = log_delta > -700  # gdp.mu and the scalar loop take delta itself
    mu, eps, log_delta = mu[keep], eps[keep], log_delta[keep]
    delta = np.exp(log_delta)
    print(f"\n1. mu_GDP on {mu.size} pairs (eps in [0, 30], mu in [0.1, 6]); error = max |mu - true mu|")
    rows = [
        ("gdp.mu (vectorized Newton)", lambda: gdp.mu(eps, delta)),
        ("gdpt.mu_bound lower (log space)", lambda: gdpt.mu_bound(eps, log_delta, "lower")),
        ("Algorithm 1 vectorized, b=1e-12", lambda: bisection(eps, log_delta, 10.0, 1e-12)[1]),
    ]
    base = None
    for name, action in rows:
        seconds, result = timed(action)
        base = base or seconds
        error = float(np.max(np.abs(np.asarray(result) - mu)))
        print(f"   {name:36s} {seconds * 1e3:9.1f} ms   error {error:.1e}   x{seconds / base:.1f}")
    subset = slice(0, 300)
    seconds, _ = timed(
        lambda: [
            bisection_scalar(e, d, 10.0, 1e-12) for e, d in zip(eps[subset], delta[subset], strict=True)
        ],
        1,
    )
    per_point = seconds / 300
    print(
        f"   {'Algorithm 1 per-point loop, b=1e-12':36s} {per_point * mu.size * 1e3:9.1f} ms"
        "   (extrapolated from 300 points)"
    )


def baseline_head(
    profile: gdpt.PrivacyProfile, eps_head: float, precision: float
) -> tuple[float, float, int]:
    """GDPT Algorithm 2 + 1: uniform grid with sqrt(2 pi) D = precision / 2, bisection to precision / 2."""
    spacing = 0.5 * precision / np.sqrt(2.0 * np.pi)
    nodes = np.linspace(0.0, eps_head, int(np.ceil(eps_head / spacing)) + 1)
    mu_lower, mu_upper = 0.0, 0.0
    for start in range(0, nodes.size - 1, 500_000):
        left, right = nodes[start : start + 500_000], nodes[start + 1 : start + 500_001]
        left = left[: right.size]
        log_left, log_right = profile.log_delta(left), profile.log_delta(right)
        mu_upper = max(mu_upper, float(np.max(bisection(right, log_left, 10.0, 0.5 * precision)[1])))
        mu_lower = max(mu_lower, float(np.max(bisection(left, log_right, 10.0, 0.5 * precision)[0])))
    return mu_lower, mu_upper, nodes.size - 1


def bench_head(eps_head: float, precision: float, baseline_profiles: int) -> None:
    """Part 2: the certified head interval, adaptive Algorithm 3 against the uniform Algorithm 2 baseline."""
    print(f"\n2. identify(profile, eps_head={eps_head:g}, precision={precision:g})")
    profiles = [
        gdpt.refined(gdpt.noise_family_profile(2.0, 1.0, 2.0)),
        gdpt.laplace_profile(0.5),
        gdpt.dp_profile(1.0),
        gdpt.refined(gdpt.icea_profile(20, 4)),
        gdpt.gdp_profile(1.5),
        gdpt.gdp_profile(6.0),
    ]
    for index, profile in enumerate(profiles):
        seconds, result = timed(lambda profile=profile: gdpt.identify(profile, eps_head, precision))
        line = (
            f"   {profile.name:38s} {seconds:7.3f} s  [{result.mu_lower:.6f}, {result.mu_upper:.6f}]"
            f"  {result.staircase_eps.size:7d} cells"
        )
        if index < baseline_profiles:
            base_seconds, (low, high, cells) = timed(
                lambda p=profile: baseline_head(p, eps_head, precision), 1
            )
            line += f"   baseline {base_seconds:6.2f} s [{low:.6f}, {high:.6f}] {cells} cells"
            line += f": x{base_seconds / seconds:.0f}"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="eps_head 20 and one baseline run")
    quick = parser.parse_args().quick
    bench_mu()
    bench_head(20.0 if quick else 100.0, 1e-4, 1 if quick else 2)


if __name__ == "__main__":
    main()
