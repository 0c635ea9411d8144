"""Group privacy of one step: the step for groups of K records (K records per user).

- a mechanism that adds noise to a query of bounded sensitivity: the same mechanism at K times the
  sensitivity (Mechanism.group: Gaussian, Laplace, discrete Gaussian), exact;
- a mu-GDP guarantee: (K mu)-GDP (GDP paper Thm 3), exact;
- a Poisson-subsampled Gaussian step whose K records are each sampled at rate q: the binomial mixture
  sum_j C(K, j) q^j (1 - q)^{K - j} N(j mu, 1) against N(0, 1) (gdpcli.core.group), `PoissonGroupGaussian`.

Anything else (fixed-size batches, subsampled non-Gaussian steps, RDP curves) is refused with the reason.
Compositions for groups are gdpcli.accounting.group's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gdpcli.errors import ComputationError, InputError, parameter
from gdpcli.events.gaussian import GDP
from gdpcli.events.mechanism import Mechanism
from gdpcli.events.sampled import Sampled, Step
from gdpcli.events.sampling import Sampling

if TYPE_CHECKING:
    from gdpcli.core.clt import Functionals
    from gdpcli.core.edgeworth import LossPair
    from gdpcli.core.pld import DominatingPair
    from gdpcli.events.mechanism import RdpCurve
    from gdpcli.events.sampling import Neighbouring


@dataclass(frozen=True)
class PoissonGroupGaussian:
    """A Poisson-subsampled Gaussian step for a group of K records, each sampled at `sampling_rate`: the
    binomial-mixture pair (gdpcli.core.group). `base` is the record-level mechanism, a Gaussian on a query
    of bounded sensitivity (base.group(K) is again exactly GDP); `mechanism` is that group version, the
    group without sampling, which dominates this step (the tail limit and GDP references use it)."""

    base: Mechanism
    sampling_rate: float
    group_size: int

    scheme = Sampling.POISSON
    gdp_mu = None
    eps_delta = None
    pure_epsilon = None
    delta_part = 0.0
    has_tradeoff = True
    rdp_points = None
    profile_is_exact = True

    @property
    def mechanism(self) -> Mechanism:
        grouped = self.base.group(self.group_size)
        assert grouped is not None
        return grouped

    @property
    def neighbouring(self) -> Neighbouring:
        return self.scheme.neighbouring

    def describe(self) -> str:
        return f"{Sampled(self.base, self.sampling_rate).describe()},group={self.group_size}"

    def dominating_pair(self) -> DominatingPair:
        """The binomial mixture against N(0, 1) and its reverse (core.group.pair)."""
        from gdpcli.core import group

        return group.pair(self.base.gdp_mu, self.sampling_rate, self.group_size)

    def lower_pair(self) -> DominatingPair:
        """The pair itself: it is attained (the K records' contributions equal), so its PLD lower bounds
        bound the group from below."""
        return self.dominating_pair()

    def without_delta_part(self) -> PoissonGroupGaussian:
        return self

    def _refuse(self, what: str) -> ComputationError:
        return ComputationError(
            f"{self.describe()}: no {what} for a group of a subsampled step", f"use {parameter('method')} pld"
        )

    def clt_functionals(self) -> Functionals:
        raise self._refuse("CLT functionals")

    def rdp_curve(self) -> RdpCurve:
        raise self._refuse("RDP curve")

    def edgeworth_pair(self) -> tuple[LossPair, bool]:
        raise self._refuse("Edgeworth cumulants")


def group_step(step: Step, group_size: int) -> Step:
    """One step for groups of K records: exact closed forms, the mixture pair, or ComputationError."""
    if step.sampling_rate is None:
        return _unsampled(step, group_size)
    mechanism = step.mechanism
    grouped = mechanism.group(group_size)
    if step.scheme is not Sampling.POISSON or grouped is None or grouped.gdp_mu is None:
        raise ComputationError(
            f"{step.describe()}: no rigorous group bound for this subsampled step",
            f"{parameter('group')} covers Poisson-subsampled Gaussian steps (gaussian:...,p=Q) and "
            "unsampled mechanisms",
        )
    if step.sampling_rate == 1.0:
        return grouped
    from gdpcli.core.group import MAX_GROUP as MIXTURE_LIMIT

    if group_size > MIXTURE_LIMIT:
        raise InputError(
            f"{parameter('group')} {group_size} is above {MIXTURE_LIMIT} for the subsampled step "
            f"{step.describe()}",
            "the binomial-mixture pair has K + 1 components",
        )
    return PoissonGroupGaussian(mechanism, step.sampling_rate, group_size)


def _unsampled(mechanism: Mechanism, group_size: int) -> Mechanism:
    """An unsampled mechanism for groups: Mechanism.group (K times the sensitivity) or (K mu)-GDP."""
    grouped = mechanism.group(group_size)
    if grouped is not None:
        return grouped
    if mechanism.gdp_mu is not None:
        return GDP(mechanism.gdp_mu * group_size)  # GDP paper Thm 3
    raise ComputationError(
        f"{mechanism.describe()}: no closed-form group version to compose",
        "gdpcli convert SPEC --group K gives the general bound of GDP paper Thm 3 for one mechanism",
    )
