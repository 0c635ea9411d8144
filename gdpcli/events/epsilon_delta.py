"""Mechanisms stated in (eps, delta): Laplace noise, an (eps, delta)-DP guarantee, randomized response."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gdpcli.events.mechanism import Mechanism, RdpCurve
from gdpcli.events.spec_values import NON_NEGATIVE, POSITIVE, Interval, SpecValues, spec_number

if TYPE_CHECKING:
    from gdpcli.core.arrays import ArrayLike
    from gdpcli.core.canonical import NoiseDistribution
    from gdpcli.core.clt import Divergences, Functionals
    from gdpcli.core.edgeworth import LossPair
    from gdpcli.core.gdpt import PrivacyProfile


@dataclass(frozen=True)
class Laplace(Mechanism, kind="laplace", keys=("b", "eps", "sens"), spec_help="laplace (b[,sens] | eps)"):
    """The Laplace mechanism Lap(b) with sensitivity sens, eps0 = sens / b: T(Lap(0,b), Lap(sens,b))."""

    exact_rdp = True

    epsilon: float

    @classmethod
    def from_spec(cls, values: SpecValues) -> Laplace:
        if values.has("b") == values.has("eps"):
            raise values.error("laplace needs exactly one of b=... or eps=...")
        if values.has("eps"):
            if values.has("sens"):
                raise values.error("sens only goes with b (eps = sens / b)")
            return cls(values.number("eps", POSITIVE))
        sens = values.number("sens", POSITIVE, 1.0)
        return cls(sens / values.number("b", POSITIVE))

    @property
    def pure_epsilon(self) -> float:  # type: ignore[override]
        return self.epsilon

    def describe(self) -> str:
        return f"laplace:eps={spec_number(self.epsilon)}"

    def group(self, group_size: int) -> Laplace:
        return Laplace(self.epsilon * group_size)  # sensitivity group_size sens, eps0 = group_size sens / b

    def divergences(self) -> Divergences:
        from gdpcli.core import clt

        return clt.laplace_divergences(self.epsilon)

    def tradeoff(self, alpha: ArrayLike) -> ArrayLike:
        from gdpcli.core.tradeoff import laplace_tradeoff

        return laplace_tradeoff(alpha, self.epsilon)

    def profile(self, epsilon: ArrayLike) -> ArrayLike:
        from gdpcli.core.tradeoff import laplace_profile

        return laplace_profile(epsilon, self.epsilon)

    def clt_functionals(self) -> Functionals:
        from gdpcli.core import clt

        return clt.laplace_functionals(self.epsilon)

    def rdp_curve(self) -> RdpCurve:
        from gdpcli.core import rdp

        epsilon = self.epsilon
        return lambda order: rdp.laplace(order, epsilon)

    def edgeworth_pair(self) -> tuple[LossPair, bool]:
        from gdpcli.core import edgeworth

        return edgeworth.laplace_law(self.epsilon).pair(), True

    def gdpt_profile(self) -> PrivacyProfile:
        from gdpcli.core import gdpt

        return gdpt.laplace_profile(1.0 / self.epsilon)

    def closed_canonical_noise(self) -> NoiseDistribution:
        """Lap(0, 1/eps0) itself: log-concave, so a canonical noise of its own trade-off function."""
        from gdpcli.core import canonical

        return canonical.Laplace(self.epsilon)


@dataclass(frozen=True)
class ApproxDP(Mechanism, kind="dp", keys=("eps", "delta"), spec_help="dp (eps[,delta])"):
    """An (eps, delta)-DP guarantee, i.e. f_{eps,delta}-DP (GDP paper eq. 4); delta = 0 is pure DP."""

    exact_rdp = True

    epsilon: float
    delta: float

    @classmethod
    def from_spec(cls, values: SpecValues) -> ApproxDP:
        eps = values.number("eps", NON_NEGATIVE)
        delta = values.number("delta", Interval(0.0, 1.0, low_closed=True), 0.0)
        values.refuse_perfect_privacy(eps=eps, delta=delta)
        return cls(eps, delta)

    @property
    def pure_epsilon(self) -> float | None:  # type: ignore[override]
        return self.epsilon if self.delta == 0.0 else None

    @property
    def eps_delta(self) -> tuple[float, float]:  # type: ignore[override]
        return self.epsilon, self.delta

    @property
    def delta_part(self) -> float:  # type: ignore[override]
        return self.delta

    def describe(self) -> str:
        delta = f",delta={spec_number(self.delta)}" if self.delta else ""
        return f"dp:eps={spec_number(self.epsilon)}{delta}"

    def tradeoff(self, alpha: ArrayLike) -> ArrayLike:
        from gdpcli.core.tradeoff import eps_delta_tradeoff

        return eps_delta_tradeoff(alpha, self.epsilon, self.delta)

    def profile(self, epsilon: ArrayLike) -> ArrayLike:
        from gdpcli.core.tradeoff import eps_delta_profile

        return eps_delta_profile(epsilon, self.epsilon, self.delta)

    def clt_functionals(self) -> Functionals:
        """Of f_{eps,0}: the delta part is accounted apart (GDP paper eq. 10-12)."""
        from gdpcli.core import clt

        return clt.pure_dp_functionals(self.epsilon)

    def divergences(self) -> Divergences:
        from gdpcli.core import clt

        return clt.eps_delta_divergences(self.epsilon, self.delta)

    def rdp_curve(self) -> RdpCurve:
        from gdpcli.core import rdp

        if self.delta > 0.0:
            return super().rdp_curve()
        epsilon = self.epsilon
        return lambda order: rdp.randomized_response(order, epsilon)

    def edgeworth_pair(self) -> tuple[LossPair, bool]:
        """Of f_{eps,0}; the delta part is accounted apart (GDP paper eq. 10-12)."""
        from gdpcli.core import edgeworth

        return edgeworth.pure_dp_pair(self.epsilon), True

    def without_delta_part(self) -> Mechanism | None:
        return ApproxDP(self.epsilon, 0.0) if self.epsilon > 0.0 else None

    def subsampled_tradeoff(self, alpha: ArrayLike, sampling_rate: float) -> ArrayLike:
        from gdpcli.core import subsample

        return subsample.subsampled_eps_delta_tradeoff(alpha, self.epsilon, self.delta, sampling_rate)

    def gdpt_profile(self) -> PrivacyProfile:
        from gdpcli.core import gdpt

        return gdpt.dp_profile(self.epsilon, self.delta)

    def closed_canonical_noise(self) -> NoiseDistribution:
        """Tulap(0, e^-eps, 2 delta / (e^eps - 1 + 2 delta)) (Awan and Vadhan 2023), uniform at eps = 0."""
        from gdpcli.core import canonical

        return canonical.eps_delta(self.epsilon, self.delta)


@dataclass(frozen=True)
class RandomizedResponse(
    Mechanism, kind="rr", keys=("keep",), spec_help="rr (keep: the chance of the true bit)"
):
    """Randomized response on one bit (Warner 1965): report the true bit with probability keep > 1/2, the
    other one otherwise. Its trade-off function is T(Bern(keep), Bern(1 - keep)) = f_{eps,0} with
    eps = log(keep / (1 - keep)) (GDP paper eq. 4: the pair behind pure eps-DP), so every representation
    is that of the pure eps-DP guarantee."""

    exact_rdp = True

    keep: float

    @classmethod
    def from_spec(cls, values: SpecValues) -> RandomizedResponse:
        return cls(values.number("keep", Interval(0.5, 1.0)))

    @property
    def epsilon(self) -> float:
        """log(keep / (1 - keep)) rounded up (two floats above the computed value, which is within 2 ulps):
        a larger eps is a weaker guarantee, so the mechanism's figures stay on the safe side."""
        computed = math.log(self.keep) - math.log1p(-self.keep)
        return math.nextafter(math.nextafter(computed, math.inf), math.inf)

    @property
    def pure_epsilon(self) -> float:  # type: ignore[override]
        return self.epsilon

    @property
    def eps_delta(self) -> tuple[float, float]:  # type: ignore[override]
        return self.epsilon, 0.0

    def _pure(self) -> ApproxDP:
        return ApproxDP(self.epsilon, 0.0)

    def describe(self) -> str:
        return f"rr:keep={spec_number(self.keep)}"

    def tradeoff(self, alpha: ArrayLike) -> ArrayLike:
        return self._pure().tradeoff(alpha)

    def profile(self, epsilon: ArrayLike) -> ArrayLike:
        return self._pure().profile(epsilon)

    def clt_functionals(self) -> Functionals:
        return self._pure().clt_functionals()

    def divergences(self) -> Divergences:
        return self._pure().divergences()

    def rdp_curve(self) -> RdpCurve:
        return self._pure().rdp_curve()

    def edgeworth_pair(self) -> tuple[LossPair, bool]:
        return self._pure().edgeworth_pair()

    def subsampled_tradeoff(self, alpha: ArrayLike, sampling_rate: float) -> ArrayLike:
        return self._pure().subsampled_tradeoff(alpha, sampling_rate)

    def gdpt_profile(self) -> PrivacyProfile:
        return self._pure().gdpt_profile()

    def closed_canonical_noise(self) -> NoiseDistribution:
        return self._pure().closed_canonical_noise()
