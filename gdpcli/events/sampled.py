"""`Sampled`: a mechanism run on a random sample of the data (GDP paper Sec. 4), and `Step`, what one
step of a composition is."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from gdpcli.errors import ComputationError, InputError, parameter
from gdpcli.events.mechanism import Mechanism, RdpCurve
from gdpcli.events.sampling import Neighbouring, Sampling
from gdpcli.events.spec_values import spec_number

if TYPE_CHECKING:
    from gdpcli.core.canonical import NoiseDistribution
    from gdpcli.core.clt import Divergences, Functionals
    from gdpcli.core.edgeworth import LossPair
    from gdpcli.core.pld import DominatingPair


@dataclass(frozen=True)
class Sampled:
    """A mechanism run on a random sample at `sampling_rate` by `scheme` (GDP paper Sec. 4)."""

    mechanism: Mechanism
    sampling_rate: float
    scheme: Sampling = Sampling.POISSON

    gdp_mu = None  # subsampled Gaussians are not exactly GDP
    eps_delta = None
    delta_part = 0.0  # a sampled step stays whole

    def __post_init__(self) -> None:
        if not self.scheme.per_step:
            raise InputError(
                f"sampling {self.scheme} draws the batches of a whole run, not one step's sample",
                "a step is sampled by " + " or ".join(s.value for s in Sampling if s.per_step),
            )

    @property
    def has_tradeoff(self) -> bool:
        return self.mechanism.has_tradeoff

    @property
    def rdp_points(self) -> None:
        return None

    @property
    def neighbouring(self) -> Neighbouring:
        return self.scheme.neighbouring

    @property
    def pure_epsilon(self) -> float | None:
        """eps' = log(1 + p (e^eps - 1)) for a pure eps-DP step (GDP paper Lemma 2; the same amplification
        holds for Poisson sampling with add/remove neighbours), None otherwise."""
        base = self.mechanism.pure_epsilon
        return None if base is None else math.log1p(self.sampling_rate * math.expm1(base))

    def describe(self) -> str:
        return f"{self.mechanism.describe()},p={spec_number(self.sampling_rate)},sampling={self.scheme.value}"

    def dominating_pair(self) -> DominatingPair:
        """Poisson: the remove and add directions differ (profiles of f_p and f_p^-1, GDP paper Sec. 4);
        fixed-size: the symmetric C_p(f) (Thm 10)."""
        from gdpcli.core import subsample
        from gdpcli.core.pld import DominatingPair

        if not self.mechanism.has_tradeoff:
            return self.mechanism.dominating_pair()  # raises, naming the mechanism
        profile, p = self.mechanism.profile, self.sampling_rate
        if self.scheme is Sampling.FIXED:
            return DominatingPair(subsample.fixed_size_profile(profile, p))
        return DominatingPair(
            subsample.poisson_remove_profile(profile, p),
            subsample.poisson_add_profile(profile, p),
            kink=math.log1p(-p) if p < 1.0 else None,
        )

    @property
    def profile_is_exact(self) -> bool:
        """Whether the subsampled pair is built from the mechanism's own profile."""
        return self.mechanism.profile_is_exact

    def lower_pair(self) -> DominatingPair | None:
        """The dominating pair when it is the subsampled mechanism's own (an exact profile), else None."""
        return self.dominating_pair() if self.profile_is_exact else None

    def clt_functionals(self) -> Functionals:
        """C_p(G_mu) for fixed-size batches (GDP paper Thm 10 / Lemma 4); the others have none here."""
        from gdpcli.core import clt

        mu = self.mechanism.gdp_mu
        if self.scheme is Sampling.FIXED and mu is not None:
            return clt.subsampled_gaussian_functionals(self.sampling_rate, mu)
        raise ComputationError(
            f"{self.describe()}: the CLT of Theorem 5 needs a symmetric trade-off function per step",
            f"use {parameter('method')} pld (rigorous), or gdpcli subsample SPEC --rate P --method clt "
            "(Theorem 11)",
        )

    def divergences(self) -> Divergences:
        """None here: a Poisson-subsampled pair is asymmetric (D(P || Q) != D(Q || P)), not implemented."""
        raise InputError(
            f"{self.describe()}: KL, chi2 and Hellinger of a subsampled mechanism are not implemented",
            f"use {parameter('to')} tv (the profile at 0, both directions), or {parameter('to')} rdp",
        )

    def rdp_curve(self) -> RdpCurve:
        """Poisson sampling: the subsampled Gaussian exactly (Mironov et al. 2019); any other mechanism with
        an RDP curve by Zhu and Wang 2019 Thm 6 (an upper bound), capped for a pure eps-DP mechanism by the
        amplified eps' (`pure_epsilon`: D_alpha <= eps' at every order). Fixed-size batches: none here."""
        import numpy as np

        from gdpcli.core import rdp

        mu, p = self.mechanism.gdp_mu, self.sampling_rate
        if self.scheme is Sampling.POISSON and mu is not None:
            return lambda order: rdp.subsampled_gaussian(order, p, 1.0 / mu)
        if self.scheme is not Sampling.POISSON:
            raise ComputationError(
                f"{self.describe()}: RDP of fixed-size batches is implemented for no mechanism",
                f"use {parameter('method')} pld (rigorous), or sampling=poisson",
            )
        base, cap = self.mechanism.rdp_curve(), self.pure_epsilon
        if cap is None:
            return lambda order: rdp.poisson_subsampled(order, p, base)
        return lambda order: np.minimum(rdp.poisson_subsampled(order, p, base), cap)

    def edgeworth_pair(self) -> tuple[LossPair, bool]:
        """Subsampled Gaussian/GDP steps: the Poisson pair (asymmetric) or C_p(G_mu) (symmetric)."""
        from gdpcli.core import edgeworth

        mu, p = self.mechanism.gdp_mu, self.sampling_rate
        if mu is None:
            raise ComputationError(
                f"{self.describe()}: the Edgeworth accountant handles subsampled Gaussian/GDP steps only",
                f"use {parameter('method')} pld",
            )
        if self.scheme is Sampling.FIXED:
            return edgeworth.fixed_gaussian_law(p, mu).pair(), True
        return edgeworth.poisson_gaussian_law(p, mu).pair(), False

    def without_delta_part(self) -> Sampled:
        return self

    def canonical_noise(self, recursive: bool = False) -> NoiseDistribution:
        """Fixed-size batches: the recursive construction from C_p(f) = min(f_p, f_p^-1)** (GDP paper Def. 6,
        symmetric) where the mechanism has it in closed form. Refused otherwise, with the way round; Poisson
        sampling has two trade-off functions, f_p removing a record, f_p^-1 adding one (GDP paper Sec. 4)."""
        mechanism, p = self.mechanism, self.sampling_rate
        if self.scheme is Sampling.FIXED and mechanism.subsampled_tradeoff(0.5, p) is not None:
            from gdpcli.core.canonical import Recursive

            return Recursive.of(lambda alpha: mechanism.subsampled_tradeoff(alpha, p))
        if self.scheme is Sampling.POISSON:
            problem = "Poisson sampling has f_p removing a record and f_p^-1 adding one, not one symmetric f"
        else:
            problem = "fixed-size sampling's C_p(f) is in closed form for gdp, gaussian, dp and rr steps only"
        raise InputError(
            f"{self.describe()}: {problem}",
            "symmetrize: C_p(f) = min(f_p, f_p^-1)** is the usual route; tabulate it with `gdpcli convert "
            f"SPEC {parameter('alpha')} 0:1:1001 -f csv > f.csv` and give tradeoff:file=f.csv",
        )


class Step(Protocol):
    """What one step of a composition is, and what the accountants ask of it: a `Mechanism`, a `Sampled`
    mechanism or a group's step (events.group.PoissonGroupGaussian). The closed-form facts are None (0 for
    delta_part) where the step has none; a representation the step has not raises ComputationError with a
    hint."""

    gdp_mu: float | None
    """mu when the step is exactly mu-GDP."""
    eps_delta: tuple[float, float] | None
    """(eps, delta) when the step is the (eps, delta)-DP guarantee itself."""
    pure_epsilon: float | None
    """eps when the step is pure eps-DP."""
    delta_part: float
    """delta0 when the step factors as (the rest) (x) f_{0,delta0} (GDP paper eq. 10-11)."""
    has_tradeoff: bool
    rdp_points: tuple[tuple[float, ...], tuple[float, ...]] | None
    profile_is_exact: bool
    sampling_rate: float | None
    """None for a step on the whole data."""
    scheme: Sampling | None

    @property
    def mechanism(self) -> Mechanism:
        """The mechanism behind the step, without its sampling."""

    def describe(self) -> str:
        """The step in the spec language."""

    def dominating_pair(self) -> DominatingPair:
        """The pair the PLD engine composes (both directions where they differ)."""

    def lower_pair(self) -> DominatingPair | None:
        """A pair the step dominates, for the PLD's lower bounds; None when none is known."""

    def clt_functionals(self) -> Functionals:
        """kl, kappa2, kappa3 of its trade-off function (GDP paper Sec. 3.2)."""

    def rdp_curve(self) -> RdpCurve:
        """order -> its Renyi divergence."""

    def edgeworth_pair(self) -> tuple[LossPair, bool]:
        """The privacy-loss pair of the Edgeworth accountant, and whether it is symmetric."""

    def without_delta_part(self) -> Step | None:
        """The step without its delta part (delta_part)."""
