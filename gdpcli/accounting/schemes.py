"""What the accounting knows of each batch scheme, one entry per scheme, so that no accounting decision
branches on the scheme itself. What the scheme is (its word, neighbouring relation, epochs, parameters) is
its `events.Sampling` entry.

- A scheme that samples each step on its own (poisson, fixed) has its `StepAnalysis` in STEPS: which CLT
  formula approximates its runs, which methods have no analysis of its subsampled step and why, whether a
  group of records has a rigorous pair.
- A scheme whose runs are no composition of independently sampled steps (shuffled, balls-in-bins,
  truncated Poisson batches) declares its bounds as `SchemeBounds` in a module of its own;
  gdpcli.accounting.dpsgd collects them (dpsgd.BOUNDS).
- A scheme whose run is accounted as another scheme's run (cyclic Poisson batches: the worst example's
  Poisson run) declares that as its `SchemeReduction`, collected in dpsgd.REDUCTIONS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from gdpcli.core import clt
from gdpcli.errors import parameter
from gdpcli.events import Sampling

if TYPE_CHECKING:
    from collections.abc import Mapping

    from gdpcli.accounting.figures import Accountant, Figures
    from gdpcli.events import Run


@dataclass(frozen=True)
class SchemeBounds:
    """What dpsgd needs of a batch scheme.

    sampling: the scheme (its events.Sampling member).
    figures(run, delta, accuracy): epsilon at delta, every figure labelled (rigorous upper and lower bounds
        and comparisons).
    budget_figure(run, delta, accuracy): the rigorous upper bound a budget or calibration rests on.
    accountant(run, accuracy): the run's pairs as a PLD accountant (accountants.PairsPLD: a dominating pair
        for the pessimistic figures, a dominated one for the optimistic), for every question (risk, audit).
    """

    sampling: Sampling
    figures: Callable[[Run, float, float], list[Figures]]
    budget_figure: Callable[[Run, float, float], Figures]
    accountant: Callable[[Run, float], Accountant]


@dataclass(frozen=True)
class SchemeReduction:
    """A batch scheme whose run's privacy loss is that of another scheme's run, which the methods of that
    scheme answer.

    sampling: the scheme (its events.Sampling member).
    reduced(run): that run (cyclic Poisson: its worst example's Poisson run).
    """

    sampling: Sampling
    reduced: Callable[[Run], Run]


@dataclass(frozen=True)
class StepAnalysis:
    """What the methods know of a scheme that samples each step on its own.

    clt_mu(q, T, sigma): the CLT mu of T steps at rate q and noise sigma (in units of the sensitivity):
        an approximation with no rigorous direction.
    refused: the methods with no analysis of the scheme's subsampled step, each with the reason.
    groups: a group of K records has a rigorous pair under the scheme (each record sampled on its own:
        accounting.group's binomial mixture), at any rate.
    """

    clt_mu: Callable[[float, int, float], float]
    refused: Mapping[str, str]
    groups: bool


_ALTERNATIVE = f"use {parameter('method')} auto or pld"
STEPS: dict[Sampling, StepAnalysis] = {
    Sampling.POISSON: StepAnalysis(
        clt.sgd_mu_poisson,  # q sqrt(T (e^{1/sigma^2} - 1)), Bu et al. 2020
        MappingProxyType(
            {
                "berry-esseen": "the Berry-Esseen band (GDP paper Cor. 5) needs a symmetric per-step "
                f"trade-off function; Poisson subsampling is asymmetric ({_ALTERNATIVE})"
            }
        ),
        groups=True,
    ),
    Sampling.FIXED: StepAnalysis(
        clt.sgd_mu_fixed,  # GDP paper Cor. 4
        MappingProxyType(
            {
                "rdp": "the moments accountant's subsampled-Gaussian RDP is for Poisson sampling "
                "(add/remove); no RDP bound for fixed-size replace-one sampling is implemented "
                f"({_ALTERNATIVE})"
            }
        ),
        groups=False,
    ),
}
"""The analysis of every scheme whose run is a composition of independently sampled steps."""
