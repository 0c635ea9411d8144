"""The shuffle model: n users each send one eps0-LDP report, shuffled (not shuffled batches of DP-SGD,
which are a batch scheme: events.sampling)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from gdpcli.errors import ComputationError, parameter
from gdpcli.events.mechanism import Mechanism, RdpCurve
from gdpcli.events.spec_values import Interval, SpecValues, spec_number

if TYPE_CHECKING:
    from gdpcli.core.arrays import ArrayLike
    from gdpcli.core.clt import Functionals
    from gdpcli.core.gdpt import PrivacyProfile
    from gdpcli.core.pld import DominatingPair
    from gdpcli.core.shuffle_model import CloneReduction


@dataclass(frozen=True)
class Shuffle(Mechanism, kind="shuffle", keys=("eps0", "n"), spec_help="shuffle (eps0,n: shuffled LDP)"):
    """n users each send one report of an eps0-LDP local randomizer; the analyst sees them shuffled
    (core.shuffle_model). The figures are a rigorous UPPER bound from the clone reduction: [FMT22] Thm 3.2
    (q = e^-eps0, every eps0-LDP randomizer); the review's eq. (4.1) holds with equality on its mixture
    over the clone count. Not exact: the profile and the trade-off are bounds (profile_is_exact)."""

    eps0: float
    n: int
    randomizer: ClassVar[str] = "general"
    profile_is_exact: ClassVar[bool] = False

    @classmethod
    def from_spec(cls, values: SpecValues) -> Shuffle:
        eps0 = values.number("eps0", Interval(0.0, 300.0, high_closed=True))
        n = values.number("n", Interval(2.0, low_closed=True))
        if not float(n).is_integer():
            raise values.error(f"n={n!r} is not a whole number", "n counts the users: n = 2, 3, ...")
        return cls(eps0, int(n))

    @property
    def pure_epsilon(self) -> float:  # type: ignore[override]
        """eps0: one user's report changes the shuffled view as it changes the report (post-processing)."""
        return self.eps0

    def describe(self) -> str:
        return f"{self.kind}:eps0={spec_number(self.eps0)},n={self.n}"

    def _pair(self) -> CloneReduction:
        from gdpcli.core.shuffle_model import clone_reduction

        return clone_reduction(self.eps0, self.n, self.randomizer)

    def tradeoff(self, alpha: ArrayLike) -> ArrayLike:
        """A lower bound on f: the dual of the profile (review eq. 2.4)."""
        return self._pair().tradeoff(alpha)

    def profile(self, epsilon: ArrayLike) -> ArrayLike:
        """An upper bound on delta(eps), symmetric in add/remove."""
        return self._pair().profile(epsilon)

    def lower_pair(self) -> DominatingPair:
        """A rigorous LOWER-bound pair (shuffled binary randomized response on explicit neighbours):
        its PLD bounds the composition from below; the PLD 'lower' figure of dominating_pair() does not."""
        from gdpcli.core.shuffle_model import shuffled_rr

        return shuffled_rr(self.eps0, self.n).dominating_pair()

    def dominating_pair(self) -> DominatingPair:
        return self._pair().dominating_pair()

    def clt_functionals(self) -> Functionals:
        raise ComputationError(
            f"{self.describe()}: no CLT functionals for a shuffled mechanism",
            f"use {parameter('method')} pld",
        )

    def rdp_curve(self) -> RdpCurve:
        """Renyi divergence of the clone pair (an upper bound by data processing), capped at eps0."""
        pair = self._pair()
        return pair.rdp

    def gdpt_profile(self) -> PrivacyProfile:
        raise ComputationError(
            f"{self.describe()}: no closed-form profile for the GDPT engine",
            "convert it to (eps, delta) first (gdpcli convert --epsilon RANGE -f csv) and pipe the CSV in",
        )


@dataclass(frozen=True)
class ShuffleRR(Shuffle, kind="shuffle-rr", keys=("eps0", "n"), spec_help="shuffle-rr (eps0,n)"):
    """Shuffled randomized response (binary or k-ary, eps0-LDP): the stronger clone of [FMT23] Thm 3.2 with
    its errata (q = 2 / (e^eps0 + 1); valid for randomizers with R(x) >= (R(x^0) + R(x^1)) / (e^eps0 + 1)
    pointwise, which k-RR satisfies). The review's Tables 2 and 3 use it with n = 10^4, eps0 = 4.444."""

    randomizer: ClassVar[str] = "rr"
