"""Gaussian mechanisms: a mu-GDP guarantee, Gaussian noise on a query of bounded L2 sensitivity, and the
discrete Gaussian on the integers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gdpcli.events.mechanism import Mechanism, RdpCurve
from gdpcli.events.spec_values import POSITIVE, Interval, SpecValues, spec_number

if TYPE_CHECKING:
    from gdpcli.core.arrays import ArrayLike
    from gdpcli.core.canonical import NoiseDistribution
    from gdpcli.core.clt import Divergences, Functionals
    from gdpcli.core.edgeworth import LossPair
    from gdpcli.core.gdpt import PrivacyProfile


class _GaussianLike(Mechanism):
    """Exactly mu-GDP: G_mu and its profile (GDP paper Cor. 1), functionals and RDP in closed form."""

    exact_rdp = True

    def tradeoff(self, alpha: ArrayLike) -> ArrayLike:
        from gdpcli.core import gdp

        return gdp.tradeoff(alpha, self.gdp_mu)

    def profile(self, epsilon: ArrayLike) -> ArrayLike:
        from gdpcli.core import gdp

        return gdp.delta(epsilon, self.gdp_mu)

    def clt_functionals(self) -> Functionals:
        from gdpcli.core import clt

        return clt.gaussian_functionals(self.gdp_mu)

    def divergences(self) -> Divergences:
        from gdpcli.core import clt

        return clt.gaussian_divergences(self.gdp_mu)

    def rdp_curve(self) -> RdpCurve:
        from gdpcli.core import gdp

        mu = self.gdp_mu
        return lambda order: gdp.rdp(order, mu)

    def subsampled_tradeoff(self, alpha: ArrayLike, sampling_rate: float) -> ArrayLike:
        from gdpcli.core import subsample

        return subsample.subsampled_gdp_tradeoff(alpha, self.gdp_mu, sampling_rate)

    def edgeworth_pair(self) -> tuple[LossPair, bool]:
        from gdpcli.core import edgeworth

        return edgeworth.gaussian_pair(self.gdp_mu), True

    def gdpt_profile(self) -> PrivacyProfile:
        from gdpcli.core import gdpt

        return gdpt.gdp_profile(self.gdp_mu)

    def closed_canonical_noise(self) -> NoiseDistribution:
        """N(0, 1/mu^2) (Su 2024 Sec. 3.2)."""
        from gdpcli.core import canonical

        return canonical.Gaussian(self.gdp_mu)


@dataclass(frozen=True)
class GDP(_GaussianLike, kind="gdp", keys=("mu",), spec_help="gdp (mu)"):
    """A mu-GDP guarantee (GDP paper Def. 2)."""

    mu: float

    @classmethod
    def from_spec(cls, values: SpecValues) -> GDP:
        return cls(values.number("mu", POSITIVE))

    @property
    def gdp_mu(self) -> float:  # type: ignore[override]
        return self.mu

    def describe(self) -> str:
        return f"gdp:mu={spec_number(self.mu)}"


@dataclass(frozen=True)
class Gaussian(_GaussianLike, kind="gaussian", keys=("sigma", "sens"), spec_help="gaussian (sigma[,sens])"):
    """The Gaussian mechanism with noise sigma and sensitivity sens: exactly (sens/sigma)-GDP (Thm 1)."""

    sigma: float
    sens: float = 1.0

    @classmethod
    def from_spec(cls, values: SpecValues) -> Gaussian:
        return cls(values.number("sigma", POSITIVE), values.number("sens", POSITIVE, 1.0))

    @property
    def gdp_mu(self) -> float:  # type: ignore[override]
        return self.sens / self.sigma

    def group(self, group_size: int) -> Gaussian:
        return Gaussian(self.sigma, self.sens * group_size)

    def describe(self) -> str:
        return f"gaussian:sigma={spec_number(self.sigma)},sens={spec_number(self.sens)}"


@dataclass(frozen=True)
class DiscreteGaussian(Mechanism, kind="dgauss", keys=("sigma", "sens"), spec_help="dgauss (sigma[,sens])"):
    """The discrete Gaussian mechanism N_Z(0, sigma^2) on a query of integer sensitivity sens (Canonne, Kamath
    and Steinke 2020, [CKS20]; the 2020 US Census TopDown algorithm's noise): exact profile and trade-off
    function by sums over the integers with bounded tails (gdpcli.core.discrete_gaussian), and its
    (sens^2 / (2 sigma^2))-zCDP RDP curve ([CKS20] Prop. 5). Not exactly GDP: composed by the PLD engine."""

    sigma: float
    sens: int = 1

    @classmethod
    def from_spec(cls, values: SpecValues) -> DiscreteGaussian:
        sigma = values.number("sigma", POSITIVE)
        sens = values.number("sens", Interval(1.0, low_closed=True), 1.0)
        if not float(sens).is_integer():
            raise values.error(
                f"sens={sens!r} is not a whole number", "the discrete Gaussian needs sens = 1, 2, ..."
            )
        return cls(sigma, int(sens))

    @property
    def zcdp_rho(self) -> float:
        """rho = sens^2 / (2 sigma^2): the mechanism is rho-zCDP ([CKS20] Prop. 5)."""
        return self.sens * self.sens / (2.0 * self.sigma * self.sigma)

    def describe(self) -> str:
        return f"dgauss:sigma={spec_number(self.sigma)},sens={self.sens}"

    def group(self, group_size: int) -> DiscreteGaussian:
        return DiscreteGaussian(self.sigma, self.sens * group_size)

    def tradeoff(self, alpha: ArrayLike) -> ArrayLike:
        from gdpcli.core import discrete_gaussian

        return discrete_gaussian.tradeoff(alpha, self.sigma, self.sens)

    def profile(self, epsilon: ArrayLike) -> ArrayLike:
        from gdpcli.core import discrete_gaussian

        return discrete_gaussian.profile(epsilon, self.sigma, self.sens)

    def clt_functionals(self) -> Functionals:
        from gdpcli.core import discrete_gaussian
        from gdpcli.core.clt import Functionals

        moments = discrete_gaussian.moments(self.sigma, self.sens)
        return Functionals(
            moments.kl, moments.kappa2, moments.kappa3, moments.kappa3bar, moments.variance, rel_error=1e-13
        )

    def rdp_curve(self) -> RdpCurve:
        from gdpcli.core import discrete_gaussian

        sigma, sens = self.sigma, self.sens
        return lambda order: discrete_gaussian.rdp(order, sigma, sens)

    def gdpt_profile(self) -> PrivacyProfile:
        """The exact profile in log space; its tail limit is sens / sigma (the log-profile falls like
        -(sigma eps / sens)^2 / 2, as for the Gaussian mechanism; GDPT Thm 4.4)."""
        from gdpcli.core import discrete_gaussian
        from gdpcli.core.gdpt import PrivacyProfile

        sigma, sens = self.sigma, self.sens
        return PrivacyProfile(
            self.describe(),
            lambda eps: discrete_gaussian.log_profile(eps, sigma, sens),
            tail_limit=sens / sigma,
        )
