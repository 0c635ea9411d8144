"""A hyper-parameter search over DP-SGD runs: a random number K of runs of one run, the best released
(events.RepeatAndSelect; Papernot and Steinke, ICLR 2022), accounted in RDP, and the longest run whose
search stays within a target epsilon."""

from __future__ import annotations

import math

import numpy as np

from gdpcli.accounting.accountants import RenyiAccountant
from gdpcli.accounting.dpsgd import Budget
from gdpcli.accounting.figures import Figures
from gdpcli.accounting.run import MAX_STEPS
from gdpcli.core.roots import SearchLimitReached, largest_integer_where
from gdpcli.errors import InputError, parameter
from gdpcli.events import RepeatAndSelect, Repeated, Run, RunsDistribution

_FIRST_GUESS = 1000
"""Where the step budget's bracket starts (it doubles or halves from there)."""


def searched(run: Run, runs: RunsDistribution) -> list[Repeated]:
    """The search as events: the run (a composition of its sampled steps) selected among K ~ runs."""
    return [Repeated(RepeatAndSelect((run.spec(),), runs))]


def largest_steps(
    run: Run, runs: RunsDistribution, delta: float, target_epsilon: float, conversion: str
) -> Budget:
    """The largest number of steps T whose search (K ~ runs runs of T steps, the best released) has an RDP
    epsilon at delta, by the named conversion (an upper bound), within target_epsilon; 0 when one step is
    above it already. The bound grows with T (each step adds to the base curve, and Thm 2 and Thm 6 grow
    with it), so a bracket and a bisection over T find it (core.roots.largest_integer_where)."""
    figures: dict[int, Figures] = {}

    def figure(steps: int) -> Figures:
        if steps not in figures:
            accountant = RenyiAccountant(searched(run.with_steps(steps), runs), (conversion,))
            figures[steps] = accountant.epsilon(np.array([delta]))[0]
        return figures[steps]

    def epsilon(steps: int) -> float:
        return float(np.atleast_1d(figure(steps).values)[0])

    try:
        steps = largest_integer_where(
            lambda t: epsilon(t) <= target_epsilon, guess=_FIRST_GUESS, limit=MAX_STEPS
        )
    except SearchLimitReached:
        raise InputError(
            f"{parameter('target_epsilon')} {target_epsilon:g} allows a search over runs of more than "
            f"{MAX_STEPS:.0e} steps, the most gdpcli searches",
            "give a smaller target",
        ) from None
    label = figure(max(steps, 1))
    epsilon_at = epsilon(steps) if steps else math.nan
    return Budget(run.with_steps(steps), target_epsilon, steps, epsilon_at, label.guarantee, label.method)
