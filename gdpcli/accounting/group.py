"""Group privacy of whole compositions: every event for groups of K records (K records per user).

Each step is replaced by its group version and the list is composed as usual (a group of K records is a
pair of datasets on which every step's pair is dominated by its group version, and composition keeps
domination, GDP paper Sec. 3):

- a mechanism that adds noise to a query of bounded sensitivity: the same mechanism at K times the
  sensitivity (Mechanism.group: Gaussian, Laplace, discrete Gaussian), exact;
- a mu-GDP guarantee: (K mu)-GDP (GDP paper Thm 3), exact;
- a Poisson-subsampled Gaussian step whose K records are each sampled at rate q: the binomial mixture
  sum_j C(K, j) q^j (1 - q)^{K - j} N(j mu, 1) against N(0, 1) (gdpcli.core.group), composed by the PLD
  engine with rigorous upper and lower bounds (the pair is attained, so its lower bounds are the group's).

Anything else (fixed-size batches, subsampled non-Gaussian steps, RDP curves) is refused with the reason;
a single unsampled mechanism without a closed form keeps the general bound 1 - (1 - f)^{o K} of Thm 3
(`gdpcli convert SPEC --group K`, accounting.group_accountant).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gdpcli.errors import ComputationError, InputError
from gdpcli.events import GDP, Mechanism, Repeated, Sampled, Sampling, Step

if TYPE_CHECKING:
    from gdpcli.core.clt import Functionals
    from gdpcli.core.edgeworth import LossPair
    from gdpcli.core.pld import DominatingPair
    from gdpcli.events import Neighbouring, RdpCurve

MAX_GROUP = 10**6
"""The largest group gdpcli accepts (the closed forms scale a parameter; the mixture pair allows less)."""


def check_group(group_size: int, option: str = "--group") -> int:
    """K as a whole number in [1, MAX_GROUP]; InputError (exit 2) otherwise."""
    if isinstance(group_size, bool) or int(group_size) != group_size or not 1 <= group_size <= MAX_GROUP:
        raise InputError(f"{option}: {group_size!r} is out of range", f"allowed: 1 <= K <= {MAX_GROUP}")
    return int(group_size)


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
            f"{self.describe()}: no {what} for a group of a subsampled step", "use --method pld"
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
            "--group covers Poisson-subsampled Gaussian steps (gaussian:...,p=Q) and unsampled mechanisms",
        )
    if step.sampling_rate == 1.0:
        return grouped
    from gdpcli.core.group import MAX_GROUP as MIXTURE_LIMIT

    if group_size > MIXTURE_LIMIT:
        raise InputError(
            f"--group {group_size} is above {MIXTURE_LIMIT} for the subsampled step {step.describe()}",
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


def group_specs(specs: Sequence[Repeated], group_size: int) -> list[Repeated]:
    """Every spec for groups of K records (K = 1: the specs themselves), each repeated as often."""
    check_group(group_size)
    if group_size == 1:
        return list(specs)
    return [Repeated(group_step(spec.step, group_size), spec.times) for spec in specs]


def naive_mu(mu: float, group_size: int) -> float:
    """K mu: a mu-GDP guarantee for groups of K (GDP paper Thm 3)."""
    return mu * group_size if math.isfinite(mu) else mu


__all__ = ["MAX_GROUP", "PoissonGroupGaussian", "check_group", "group_specs", "group_step", "naive_mu"]
