"""`Mechanism`: one step with a trade-off function, and the representations every event answers for
(trade-off function, privacy profile, dominating pair, CLT functionals, RDP curve, ...), each refused with a
hint where the kind has none."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from gdpcli.errors import ComputationError, InputError, parameter
from gdpcli.events.sampling import Sampling
from gdpcli.events.spec_values import SpecValues

if TYPE_CHECKING:
    from gdpcli.core.arrays import ArrayLike
    from gdpcli.core.canonical import NoiseDistribution
    from gdpcli.core.clt import Divergences, Functionals
    from gdpcli.core.edgeworth import LossPair
    from gdpcli.core.gdpt import PrivacyProfile
    from gdpcli.core.pld import DominatingPair


RdpCurve = Callable[["ArrayLike"], "ArrayLike"]


class Mechanism:
    """One step with a closed-form trade-off function (the default representations use it).

    A mechanism kind declares its spec word in its class statement (`class GDP(_GaussianLike, kind="gdp",
    keys=("mu",), spec_help="gdp (mu)")`) and builds itself from it (`from_spec`);
    gdpcli.events.kinds.MECHANISMS lists the kinds the spec language knows.
    """

    kind: ClassVar[str]
    keys: ClassVar[tuple[str, ...]]
    spec_help: ClassVar[str]
    repeatable: ClassVar[tuple[str, ...]] = ()
    """Keys that may be given more than once (rdp's alpha=..,eps=.. pairs)."""

    def __init_subclass__(
        cls,
        kind: str | None = None,
        keys: tuple[str, ...] = (),
        spec_help: str = "",
        repeatable: tuple[str, ...] = (),
    ) -> None:
        """A kind's spec word: its name, keys (repeatable: those that may come more than once), one-line help.
        Intermediate classes (_GaussianLike) name no kind."""
        super().__init_subclass__()
        if kind is not None:
            cls.kind, cls.keys, cls.spec_help, cls.repeatable = kind, keys, spec_help, repeatable

    @classmethod
    def from_spec(cls, values: SpecValues) -> Mechanism:
        """The mechanism of a spec word's key=value pairs (validated, InputError otherwise)."""
        raise NotImplementedError

    gdp_mu: float | None = None
    """mu when the mechanism is exactly mu-GDP (GDP paper Def. 2), else None."""
    pure_epsilon: float | None = None
    """eps when the mechanism is pure eps-DP (its profile vanishes beyond eps), else None."""
    eps_delta: tuple[float, float] | None = None
    """(eps, delta) when the mechanism is the (eps, delta)-DP guarantee f_{eps,delta} itself, else None."""
    delta_part: float = 0.0
    """delta0 when the mechanism factors as (the rest) (x) f_{0,delta0} (GDP paper eq. 10-11), else 0."""
    zcdp_rho: float | None = None
    """rho when the mechanism is rho-zCDP (RDP eps(alpha) <= alpha rho), else None."""
    zcdp_statement: tuple[float, float] | None = None
    """(rho, xi) when the mechanism is a (xi, rho)-zCDP guarantee as stated, else None."""
    exact_rdp: ClassVar[bool] = False
    """Whether `rdp_curve` is the mechanism's own Renyi divergence (a closed form, or a stated guarantee),
    not an upper bound on it."""
    profile_is_exact: ClassVar[bool] = True
    """Whether `profile` is the mechanism's own (else an upper bound, whose PLD lower figure bounds nothing
    of the mechanism: `lower_pair` gives what does)."""
    has_tradeoff = True
    rdp_points: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    """(orders, epsilons) of an RDP guarantee given at listed orders only, else None."""
    sampling_rate: float | None = None  # a mechanism is a step on the whole data
    scheme: Sampling | None = None

    @property
    def mechanism(self) -> Mechanism:
        """The mechanism behind a step: itself (a Sampled step names its own)."""
        return self

    def describe(self) -> str:
        """The mechanism in the spec language."""
        raise NotImplementedError

    def tradeoff(self, alpha: ArrayLike) -> ArrayLike:
        """beta = f(alpha), the mechanism's trade-off function."""
        raise NotImplementedError

    def profile(self, epsilon: ArrayLike) -> ArrayLike:
        """delta(eps) = sup_alpha (1 - f(alpha) - e^eps alpha) for all real eps (GDP paper Prop. 6)."""
        raise NotImplementedError

    def dominating_pair(self) -> DominatingPair:
        """The symmetric mechanism as a dominating pair for the PLD engine."""
        from gdpcli.core.pld import DominatingPair

        return DominatingPair(self.profile)

    def lower_pair(self) -> DominatingPair | None:
        """A pair the mechanism dominates, whose PLD lower bounds are the mechanism's: the dominating pair
        itself when the profile is exact; None when no such pair is known."""
        return self.dominating_pair() if self.profile_is_exact else None

    def clt_functionals(self) -> Functionals:
        """kl, kappa2, kappa3 of the trade-off function (GDP paper Sec. 3.2), for the CLT and Thm 5."""
        raise NotImplementedError

    def rdp_curve(self) -> RdpCurve:
        """order -> Renyi divergence of one step (vectorized), for RDP accounting."""
        raise ComputationError(f"{self.describe()}: no RDP curve", f"use {parameter('method')} pld")

    def divergences(self) -> Divergences:
        """KL, chi2 and squared Hellinger of the dominating pair (clt.Divergences): closed forms where the
        kind has them, else by quadrature of the trade-off function (zcdp.divergences_from_tradeoff)."""
        from gdpcli.core import clt, zcdp

        if not self.has_tradeoff:
            raise InputError(
                f"{self.describe()}: no trade-off function, so no divergences", f"use {parameter('to')} rdp"
            )
        found = zcdp.divergences_from_tradeoff(self.tradeoff)
        if found is None:
            raise InputError(
                f"{self.describe()}: f(0) < 1, so KL and chi2 are infinite",
                f"use {parameter('to')} tv or {parameter('delta')}",
            )
        return clt.Divergences(*found, exact=False)

    def edgeworth_pair(self) -> tuple[LossPair, bool]:
        """The cumulants of one step's privacy loss under both hypotheses for the Edgeworth accountant
        (gdpcli.core.edgeworth), and whether the add direction is the same pair (symmetric)."""
        raise ComputationError(
            f"{self.describe()}: no privacy-loss cumulants for the Edgeworth accountant",
            f"use {parameter('method')} pld or rdp",
        )

    def without_delta_part(self) -> Mechanism | None:
        """The mechanism with its delta part taken out (None when nothing is left)."""
        return self

    def group(self, group_size: int) -> Mechanism | None:
        """The same mechanism for groups of group_size records, exactly, where its noise is added to a query
        of bounded sensitivity (a group moves the query by up to group_size times as much); None where
        only the general group bound applies (GDP paper Thm 3)."""
        return None

    def subsampled_tradeoff(self, alpha: ArrayLike, sampling_rate: float) -> ArrayLike | None:
        """C_p(f)(alpha) in closed form (GDP paper Def. 6), or None where none is implemented."""
        return None

    def gdpt_profile(self) -> PrivacyProfile:
        """The closed-form profile in the GDPT engine's log form, with its tail limit (GDPT Thm 4.4)."""
        raise NotImplementedError

    def canonical_noise(self, recursive: bool = False) -> NoiseDistribution:
        """A canonical noise distribution N of the mechanism's trade-off function f, T(N, N + 1) = f (Awan and
        Vadhan 2023; gdpcli.core.canonical): the closed form, or with `recursive` (and where there is none)
        the recursive construction from f. A mechanism's f is symmetric (one profile serves both orders)."""
        if not self.has_tradeoff:
            raise InputError(
                f"{self.describe()}: no trade-off function, so no canonical noise distribution",
                "give a mechanism with one, e.g. gdp:mu=1 or dp:eps=1,delta=1e-6",
            )
        from gdpcli.core.canonical import Recursive

        closed = None if recursive else self.closed_canonical_noise()
        return closed or Recursive.of(self.tradeoff)

    def closed_canonical_noise(self) -> NoiseDistribution | None:
        """The canonical noise distribution in closed form (gdpcli.core.canonical), or None."""
        return None


class RdpOnly(Mechanism):
    """A mechanism known by its Renyi divergences alone (an RDP or zCDP guarantee, the best of a random
    number of runs): with no trade-off function, every representation built on one is refused, saying why
    (`rdp_only`), with the hint to account it in RDP."""

    has_tradeoff = False
    rdp_only: ClassVar[str]
    """Why the mechanism has RDP only, said after its spec in every refusal."""

    def refused(self, what: str, hint: str = f"use {parameter('method')} rdp") -> ComputationError:
        """The error of a representation the mechanism has not: `what` it has no (e.g. a privacy profile)."""
        return ComputationError(f"{self.describe()}: {self.rdp_only}; it has no {what}", hint)

    def tradeoff(self, alpha: ArrayLike) -> ArrayLike:
        raise self.refused("trade-off function")

    def profile(self, epsilon: ArrayLike) -> ArrayLike:
        raise self.refused("privacy profile")

    def dominating_pair(self) -> DominatingPair:
        raise self.refused("privacy profile")

    def clt_functionals(self) -> Functionals:
        raise self.refused("trade-off function")

    def gdpt_profile(self) -> PrivacyProfile:
        raise self.refused("privacy profile")
