"""The canonical noise of a spec (`gdpcli calibrate canonical`): the distribution N with T(N, N + 1) = f for
the spec's trade-off function f (Awan and Vadhan 2023; gdpcli.core.canonical), its quantiles as labelled
rows, and draws. Noise for sensitivity sens is sens x N."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gdpcli.core.canonical import NoiseDistribution
from gdpcli.errors import InputError, parameter
from gdpcli.events import GDP, Repeated
from gdpcli.guarantees import Guarantee

Row = dict[str, object]


def distribution(event: Repeated, recursive: bool) -> NoiseDistribution:
    """The canonical noise of the event's trade-off function: its step's, or for a composition of exactly
    GDP steps that of G_{sqrt(times) mu} (GDP paper Cor. 2); other compositions are refused with the way
    round (their trade-off function is known numerically only)."""
    if event.times == 1:
        return event.step.canonical_noise(recursive)
    if event.exact_mu is None:
        raise InputError(
            f"{event.describe()}: a composition's trade-off function is in closed form for GDP steps only",
            "tabulate it: `gdpcli compose SPEC --alpha 0:1:1001 -f csv > f.csv`, then tradeoff:file=f.csv",
        )
    return GDP(event.exact_mu).canonical_noise(recursive)


def quantile_rows(noise: NoiseDistribution, probabilities: Sequence[float], sensitivity: float) -> list[Row]:
    """One row per probability u: the quantile sens x F^-1(u), the distribution's parameters and fixed point.

    Labelled exact: the closed forms are exact, and the recursive construction is exact up to floating-point
    rounding (no discretization: each unit step is one evaluation of f; gdpcli.core.canonical), except in
    tails beyond RECURSIVE_TAIL, where the rounding of the steps (about 1e-16 absolute in a probability)
    moves the quantile by more than its last digits (1.8e-6 relative at a tail of 1e-13 for dp:eps=1):
    labelled approximation there."""
    quantiles = sensitivity * np.atleast_1d(noise.quantile(np.asarray(probabilities, dtype=float)))
    context = {"distribution": noise.name, **noise.parameters(sensitivity), "fixed_point": noise.fixed_point}
    method = "closed-form" if noise.closed_form else "recursive"

    def label(u: float) -> Guarantee:
        deep = not noise.closed_form and min(u, 1.0 - u) < RECURSIVE_TAIL
        return Guarantee.APPROXIMATION if deep else Guarantee.EXACT

    return [
        {"probability": u, "quantile": float(x), **context, "guarantee": label(u), "method": method}
        for u, x in zip(probabilities, quantiles, strict=True)
    ]


RECURSIVE_TAIL = 1e-9
"""Tail probability below which a recursive quantile is labelled approximation (quantile_rows)."""


def sample_rows(noise: NoiseDistribution, size: int, sensitivity: float, seed: int | None) -> list[Row]:
    """size draws of sens x N by inversion, from numpy's default generator (seeded when seed is given)."""
    draws = sensitivity * noise.sample(size, np.random.default_rng(seed))
    return [{"sample": k, "noise": float(x)} for k, x in enumerate(draws, start=1)]


def notes(event: Repeated, noise: NoiseDistribution, sampled: bool, seeded: bool) -> list[str]:
    """What the rows mean, and the caveats of bounds, the recursion and the draws."""
    spec = event.describe()
    found = [
        f"adding sens x N to a statistic of sensitivity sens is exactly f-DP for the trade-off function f of "
        f"{spec}: T(N, N + 1) = f, N symmetric (Awan and Vadhan 2023); fixed_point c = f(c) = P(N <= -1/2)"
    ]
    if not noise.closed_form:
        found.append(
            "recursive: F linear on [-1/2, 1/2] from c to 1 - c, then 1 - F(x) = f(F(x - 1)) (Awan and "
            "Vadhan 2023, Thm 3.9); exact up to floating-point rounding (about 1e-16 in probability a step), "
            f"labelled approximation in tails below {RECURSIVE_TAIL:g}, where that rounding moves quantiles"
        )
    if not event.step.profile_is_exact:
        found.append(
            f"{spec} is known through a lower bound on its trade-off function: N is canonical for that bound "
            "(exactly f-DP for it), which the mechanism itself may beat"
        )
    if sampled:
        found.append(
            "draws by inversion from numpy's PCG64: for simulations and tests, not for releases "
            "(floating-point noise can leak, Mironov 2012; use a vetted DP library)"
        )
    if seeded:
        found.append(
            f"{parameter('seed')} makes the draws reproducible: never use a fixed seed for noise that "
            "protects data"
        )
    return found
