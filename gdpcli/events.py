"""Privacy events: immutable descriptions of what touches the data, each knowing its own mathematics.

A mechanism (GDP, Gaussian, Laplace, (eps, delta)-DP, an RDP curve) is one step; `Sampled` runs a
mechanism on a random sample (a scheme, a rate and the neighbouring relation it implies); `Repeated` runs a
step `times` times (what the spec suffix xN means). The accountants (gdpcli.accounting) ask an event for
its representations (trade-off function, privacy profile, dominating pair for the PLD engine, CLT
functionals, RDP curve, ...) and never look at its type: a representation an event does not have raises
ComputationError with a hint. Adding a mechanism means adding one class here (and its spec keys in
gdpcli.mechanisms). Representations import the numerics lazily, so building events imports no numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, ClassVar

from gdpcli.errors import ComputationError, InputError

if TYPE_CHECKING:
    from gdpcli.core.arrays import ArrayLike
    from gdpcli.core.canonical import NoiseDistribution
    from gdpcli.core.clt import Divergences, Functionals
    from gdpcli.core.edgeworth import LossPair
    from gdpcli.core.gdpt import PrivacyProfile
    from gdpcli.core.pld import DominatingPair
    from gdpcli.core.shuffle_model import CloneReduction

RdpCurve = Callable[["ArrayLike"], "ArrayLike"]


class _Word(str, Enum):
    """An enumeration of words: a member prints as its word."""

    def __str__(self) -> str:
        return self.value


class Sampling(_Word):
    """How the batches are drawn: the batch schemes of gdpcli, one member each (`facts` holds the rest).

    poisson and fixed draw each step's sample on its own (a run of them is a composition of `Sampled`
    steps); shuffle, balls-in-bins and truncated-poisson draw the batches of a whole run together, so that
    their runs are no such composition (gdpcli.accounting.dpsgd accounts them by their own bounds).
    """

    POISSON = "poisson"
    FIXED = "fixed"
    SHUFFLE = "shuffle"
    BALLS_IN_BINS = "balls-in-bins"
    TRUNCATED_POISSON = "truncated-poisson"

    @property
    def facts(self) -> Scheme:
        """What gdpcli knows of the scheme: its relation, its epochs, its help text."""
        return SCHEMES[self]

    @property
    def neighbouring(self) -> Neighbouring:
        """The neighbouring relation the scheme is accounted under (GDP paper Sec. 4, Thm 9 / 10)."""
        return self.facts.relation

    @property
    def per_step(self) -> bool:
        """Whether each step's sample is drawn on its own, so that a run is a composition of sampled steps."""
        return self.facts.per_step

    def steps_per_epoch(self, sampling_rate: float) -> float:
        """Steps in one pass over the data: b = ceil(N / B) where each example is used once an epoch
        (shuffle, balls-in-bins), else 1 / q in expectation."""
        if self.facts.epochs_of_batches:
            return batches_per_epoch(sampling_rate)
        return 1 / sampling_rate


class Neighbouring(_Word):
    """Which datasets are neighbours: one record added or removed, or one record replaced."""

    ADD_REMOVE = "add/remove"
    REPLACE_ONE = "replace-one"

    @property
    def sensitivity(self) -> float:
        """One DP-SGD step's L2 sensitivity in units of the clipping norm C: adding or removing an example
        changes the sum of clipped gradients by at most C, replacing one by at most 2C."""
        return 1.0 if self is Neighbouring.ADD_REMOVE else 2.0


@dataclass(frozen=True)
class Scheme:
    """One batch scheme's entry (Sampling.facts).

    relation: the neighbouring relation its guarantees refer to.
    help: what it means, in the words of the --sampling help.
    per_step: each step's sample is drawn on its own (a run is a composition of `Sampled` steps).
    epochs_of_batches: an epoch is b = ceil(N / B) steps (each example used once an epoch), not 1 / q steps
        in expectation.
    requires: the run's parameters the scheme needs besides the rate, each with its command-line option.
    """

    relation: Neighbouring
    help: str
    per_step: bool = False
    epochs_of_batches: bool = False
    requires: tuple[tuple[str, str], ...] = ()


SCHEMES: dict[Sampling, Scheme] = {
    Sampling.POISSON: Scheme(Neighbouring.ADD_REMOVE, "add/remove neighbours", per_step=True),
    Sampling.FIXED: Scheme(
        Neighbouring.REPLACE_ONE, "batches of exactly B, replace-one neighbours", per_step=True
    ),
    Sampling.SHUFFLE: Scheme(
        Neighbouring.REPLACE_ONE,
        "each epoch a random permutation cut into batches, replace-one neighbours: a rigorous upper bound "
        "without amplification and a rigorous lower bound, Chua et al. 2024",
        epochs_of_batches=True,
    ),
    Sampling.BALLS_IN_BINS: Scheme(
        Neighbouring.ADD_REMOVE,
        "each epoch every example in one uniformly random batch, add/remove neighbours: rigorous upper and "
        "lower bounds, Chua et al. 2025, Feldman and Shenfeld 2025",
        epochs_of_batches=True,
    ),
    Sampling.TRUNCATED_POISSON: Scheme(
        Neighbouring.ADD_REMOVE,  # the dataset that holds the example has N examples
        "Poisson batches cut to at most --max-batch-size examples, add/remove neighbours: rigorous upper "
        "and lower bounds, Chua et al. 2025, arXiv:2508.15089",
        requires=(("dataset_size", "--dataset-size"), ("max_batch_size", "--max-batch-size")),
    ),
}
"""Every batch scheme's entry, in the order --sampling lists them."""


def batches_per_epoch(sampling_rate: float) -> int:
    """b = ceil(N / B) steps per epoch, from q = B / N as the user gave it (0.01 is exactly 1/100)."""
    from fractions import Fraction

    inverse = 1 / Fraction(repr(float(sampling_rate)))
    nearest = round(inverse)
    return int(nearest) if abs(inverse - nearest) <= Fraction(1, 10**9) else math.ceil(inverse)


@dataclass(frozen=True)
class Interval:
    """The values a spec key allows: low < value < high, each end closed when its flag says so."""

    low: float
    high: float = math.inf
    low_closed: bool = False
    high_closed: bool = False

    def contains(self, value: float) -> bool:
        above = value >= self.low if self.low_closed else value > self.low
        below = value <= self.high if self.high_closed else value < self.high
        return above and below

    def describe(self, key: str) -> str:
        """The rule in words, e.g. 'sigma > 0' or '0 <= delta < 1'."""
        if self.high == math.inf:
            return f"{key} {'>=' if self.low_closed else '>'} {_number(self.low)}"
        low, high = ("<=" if self.low_closed else "<"), ("<=" if self.high_closed else "<")
        return f"{_number(self.low)} {low} {key} {high} {_number(self.high)}"


POSITIVE = Interval(0.0)
NON_NEGATIVE = Interval(0.0, low_closed=True)


class SpecValues:
    """The key=value pairs of one spec word (gdpcli.mechanisms), for a mechanism's `from_spec`: each check
    raises InputError (exit 2) naming the spec and the key."""

    def __init__(self, spec: str, kind: str, pairs: list[tuple[str, float]], help_text: str) -> None:
        self.spec, self.kind, self.pairs, self.help_text = spec, kind, pairs, help_text
        self.values = dict(pairs)

    def has(self, key: str) -> bool:
        return key in self.values

    def get(self, key: str, default: float) -> float:
        return self.values.get(key, default)

    def need(self, key: str) -> float:
        if key not in self.values:
            raise InputError(f"spec {self.spec!r}: {self.kind} needs {key}=...", self.help_text)
        return self.values[key]

    def listed(self, key: str) -> list[float]:
        """Every value of a key that may repeat (rdp's alpha and eps), in order."""
        return [value for k, value in self.pairs if k == key]

    def require(self, key: str, value: float, allowed: Interval) -> float:
        if not allowed.contains(value):
            raise InputError(
                f"spec {self.spec!r}: {key}={value!r} is out of range", f"allowed: {allowed.describe(key)}"
            )
        return value

    def number(self, key: str, allowed: Interval, default: float | None = None) -> float:
        """The key's value (or the default when it is optional and absent), checked against `allowed`."""
        value = self.need(key) if default is None else self.get(key, default)
        return self.require(key, value, allowed)

    def error(self, message: str, hint: str | None = None) -> InputError:
        return InputError(f"spec {self.spec!r}: {message}", hint)

    def file_text(self, hint: str) -> str:
        """The text of file= (a path, or - for stdin), read and refused as every input file is."""
        from gdpcli.textfiles import read_text

        return read_text(str(self.values["file"]), f"spec {self.spec!r}", hint)


def _number(value: float) -> str:
    """A float as the spec language writes it: shortest round-trip form, integers without '.0'."""
    return repr(int(value)) if float(value).is_integer() and abs(value) < 1e16 else repr(float(value))


class Mechanism:
    """One step with a closed-form trade-off function (the default representations use it).

    A mechanism kind declares its spec word in its class statement (`class GDP(_GaussianLike, kind="gdp",
    keys=("mu",), spec_help="gdp (mu)")`) and builds itself from it (`from_spec`); MECHANISMS at the end
    of this module lists the kinds the spec language knows.
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
        raise ComputationError(f"{self.describe()}: no RDP curve", "use --method pld")

    def divergences(self) -> Divergences:
        """KL, chi2 and squared Hellinger of the dominating pair (clt.Divergences): closed forms where the
        kind has them, else by quadrature of the trade-off function (zcdp.divergences_from_tradeoff)."""
        from gdpcli.core import clt, zcdp

        if not self.has_tradeoff:
            raise InputError(f"{self.describe()}: no trade-off function, so no divergences", "use --to rdp")
        found = zcdp.divergences_from_tradeoff(self.tradeoff)
        if found is None:
            raise InputError(
                f"{self.describe()}: f(0) < 1, so KL and chi2 are infinite", "use --to tv or --delta"
            )
        return clt.Divergences(*found, exact=False)

    def edgeworth_pair(self) -> tuple[LossPair, bool]:
        """The cumulants of one step's privacy loss under both hypotheses for the Edgeworth accountant
        (gdpcli.core.edgeworth), and whether the add direction is the same pair (symmetric)."""
        raise ComputationError(
            f"{self.describe()}: no privacy-loss cumulants for the Edgeworth accountant",
            "use --method pld or rdp",
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


class _GaussianLike(Mechanism):
    """Exactly mu-GDP: G_mu and its profile (GDP paper Cor. 1), functionals and RDP in closed form."""

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
        return f"gdp:mu={_number(self.mu)}"


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
        return f"gaussian:sigma={_number(self.sigma)},sens={_number(self.sens)}"


@dataclass(frozen=True)
class Laplace(Mechanism, kind="laplace", keys=("b", "eps", "sens"), spec_help="laplace (b[,sens] | eps)"):
    """The Laplace mechanism Lap(b) with sensitivity sens, eps0 = sens / b: T(Lap(0,b), Lap(sens,b))."""

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
        return f"laplace:eps={_number(self.epsilon)}"

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

    epsilon: float
    delta: float

    @classmethod
    def from_spec(cls, values: SpecValues) -> ApproxDP:
        eps = values.number("eps", NON_NEGATIVE)
        delta = values.number("delta", Interval(0.0, 1.0, low_closed=True), 0.0)
        if eps == 0 and delta == 0:
            raise values.error("eps=0 and delta=0 is perfect privacy; nothing to account")
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
        delta = f",delta={_number(self.delta)}" if self.delta else ""
        return f"dp:eps={_number(self.epsilon)}{delta}"

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
class Renyi(
    Mechanism,
    kind="rdp",
    keys=("alpha", "eps"),
    spec_help="rdp (alpha,eps[,alpha,eps...])",
    repeatable=("alpha", "eps"),
):
    """Renyi DP: D_alpha <= eps at each listed order alpha (Mironov 2017). No single trade-off function."""

    orders: tuple[float, ...]
    epsilons: tuple[float, ...]
    has_tradeoff = False

    @classmethod
    def from_spec(cls, values: SpecValues) -> Renyi:
        orders, epsilons = values.listed("alpha"), values.listed("eps")
        if not orders or len(orders) != len(epsilons):
            raise values.error("rdp needs alpha=...,eps=... pairs", "e.g. rdp:alpha=8,eps=0.5")
        for order, eps in zip(orders, epsilons, strict=True):
            values.require("alpha", order, Interval(1.0))
            values.require("eps", eps, NON_NEGATIVE)
        if len(set(orders)) != len(orders):
            raise values.error("an order alpha is given twice")
        return cls(tuple(orders), tuple(epsilons))

    @property
    def rdp_points(self) -> tuple[tuple[float, ...], tuple[float, ...]]:  # type: ignore[override]
        return self.orders, self.epsilons

    def describe(self) -> str:
        return "rdp:" + ",".join(
            f"alpha={_number(a)},eps={_number(e)}" for a, e in zip(self.orders, self.epsilons, strict=True)
        )

    def _none(self, what: str, hint: str = "use --method rdp") -> ComputationError:
        return ComputationError(f"{self.describe()}: an RDP guarantee has no {what}", hint)

    def tradeoff(self, alpha: ArrayLike) -> ArrayLike:
        raise self._none("trade-off function")

    def profile(self, epsilon: ArrayLike) -> ArrayLike:
        raise self._none("privacy profile")

    def dominating_pair(self) -> DominatingPair:
        raise self._none("privacy profile")

    def clt_functionals(self) -> Functionals:
        raise self._none("trade-off function")

    def rdp_curve(self) -> RdpCurve:
        raise self._none("curve beyond its listed orders")

    def gdpt_profile(self) -> PrivacyProfile:
        raise self._none(
            "privacy profile",
            "convert it to (eps, delta) first (gdpcli convert --epsilon RANGE -f csv) and pipe the CSV in",
        )


@dataclass(frozen=True)
class RandomizedResponse(
    Mechanism, kind="rr", keys=("keep",), spec_help="rr (keep: the chance of the true bit)"
):
    """Randomized response on one bit (Warner 1965): report the true bit with probability keep > 1/2, the
    other one otherwise. Its trade-off function is T(Bern(keep), Bern(1 - keep)) = f_{eps,0} with
    eps = log(keep / (1 - keep)) (GDP paper eq. 4: the pair behind pure eps-DP), so every representation
    is that of the pure eps-DP guarantee."""

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
        return f"rr:keep={_number(self.keep)}"

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
        return f"{self.mechanism.describe()},p={_number(self.sampling_rate)},sampling={self.scheme.value}"

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
            "use --method pld (rigorous), or gdpcli subsample SPEC --rate P --method clt (Theorem 11)",
        )

    def divergences(self) -> Divergences:
        """None here: a Poisson-subsampled pair is asymmetric (D(P || Q) != D(Q || P)), not implemented."""
        raise InputError(
            f"{self.describe()}: KL, chi2 and Hellinger of a subsampled mechanism are not implemented",
            "use --to tv (the profile at 0, both directions), or --to rdp",
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
                "use --method pld (rigorous), or sampling=poisson",
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
                "use --method pld",
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
            "SPEC --alpha 0:1:1001 -f csv > f.csv` and give tradeoff:file=f.csv",
        )


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
        return f"dgauss:sigma={_number(self.sigma)},sens={self.sens}"

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


Step = Mechanism | Sampled


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
        return f"{self.kind}:eps0={_number(self.eps0)},n={self.n}"

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
            f"{self.describe()}: no CLT functionals for a shuffled mechanism", "use --method pld"
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


@dataclass(frozen=True)
class ZeroConcentrated(Renyi, kind="zcdp", keys=("rho", "xi"), spec_help="zcdp (rho[,xi])"):
    """(xi, rho)-zCDP (Bun and Steinke 2016, Def. 1.1): D_alpha <= xi + alpha rho at EVERY order alpha > 1,
    a whole RDP curve (rho and xi add under composition, their Lemma 1.7). Like rdp:, no trade-off
    function of its own: accounted in RDP (--method rdp, every conversion, the optimal one included)."""

    rho: float = 0.0
    xi: float = 0.0

    @classmethod
    def from_spec(cls, values: SpecValues) -> ZeroConcentrated:
        rho, xi = values.number("rho", NON_NEGATIVE), values.number("xi", NON_NEGATIVE, 0.0)
        if rho == 0.0 and xi == 0.0:
            raise values.error("rho=0 and xi=0 is perfect privacy; nothing to account")
        return cls((), (), rho, xi)

    @property
    def rdp_points(self) -> None:  # type: ignore[override]
        return None

    @property
    def zcdp_rho(self) -> float | None:  # type: ignore[override]
        return self.rho if self.xi == 0.0 else None

    def describe(self) -> str:
        xi = f",xi={_number(self.xi)}" if self.xi else ""
        return f"zcdp:rho={_number(self.rho)}{xi}"

    def rdp_curve(self) -> RdpCurve:
        from gdpcli.core import zcdp

        rho, xi = self.rho, self.xi
        return lambda order: zcdp.rdp(order, rho, xi)


@dataclass(frozen=True)
class RenyiCurve(
    Renyi,
    kind="rdp",
    keys=("alpha", "eps", "file"),
    spec_help="rdp (file=F.csv: a curve, columns alpha,eps)",
    repeatable=("alpha", "eps"),
):
    """The rdp kind with a whole curve from a CSV file (columns alpha,eps, or order,rdp_epsilon as `gdpcli
    convert SPEC --to rdp -f csv` writes them): an RDP guarantee at each listed order (events.Renyi), named
    by its file in messages."""

    source: str = ""

    @classmethod
    def from_spec(cls, values: SpecValues) -> Renyi:
        if not values.has("file"):
            return Renyi.from_spec(values)
        if values.listed("alpha") or values.listed("eps"):
            raise values.error("give alpha=...,eps=... pairs or file=..., not both")
        source = str(values.values["file"])
        orders, epsilons = cls.read(source, values)
        return cls(orders, epsilons, source)

    def describe(self) -> str:
        return f"rdp:file={self.source}"

    @classmethod
    def read(cls, path: str, values: SpecValues) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(orders, epsilons) of a CSV file; InputError naming the line and column of a bad entry."""
        lines = cls._lines(values)
        header = [cell.strip().lower() for cell in lines[0][1]]
        known = (("alpha", "eps"), ("order", "rdp_epsilon"))
        columns = next((c for c in known if set(c) <= set(header)), None)
        if columns is None:
            raise values.error(
                f"{path} line 1: the header needs columns alpha,eps", "got " + ",".join(header)
            )
        at = [header.index(c) for c in columns]
        points = [cls._row(path, n, row, at, columns, values) for n, row in lines[1:]]
        if not points:
            raise values.error(f"{path}: no rows after the header")
        cls._check_order(path, [n for n, _ in lines[1:]], [o for o, _ in points], values)
        return tuple(o for o, _ in points), tuple(e for _, e in points)

    @staticmethod
    def _lines(values: SpecValues) -> list[tuple[int, list[str]]]:
        """The file's non-blank CSV rows with their line numbers (1 = the header)."""
        import csv
        import io

        text = values.file_text("give a CSV: header alpha,eps, then one row per order")
        rows = enumerate(csv.reader(io.StringIO(text)), 1)
        return [(n, row) for n, row in rows if any(cell.strip() for cell in row)]

    @staticmethod
    def _row(
        path: str, line: int, row: list[str], at: list[int], columns: tuple[str, str], values: SpecValues
    ) -> tuple[float, float]:
        """One (order, eps) row: a number in each column, order > 1, eps >= 0 and finite."""
        numbers = []
        for index, column, allowed in zip(at, columns, (Interval(1.0), NON_NEGATIVE), strict=True):
            text = row[index].strip() if index < len(row) else ""
            try:
                value = float(text)
            except ValueError:
                raise values.error(f"{path} line {line}, column {column}: {text!r} is not a number") from None
            if not (math.isfinite(value) and allowed.contains(value)):
                raise values.error(
                    f"{path} line {line}, column {column}: {text!r} is out of range",
                    f"allowed: {allowed.describe(column)}",
                )
            numbers.append(value)
        return numbers[0], numbers[1]

    @staticmethod
    def _check_order(path: str, lines: list[int], orders: list[float], values: SpecValues) -> None:
        """Orders strictly increasing: a repeated or unsorted order names its line."""
        for line, previous, order in zip(lines[1:], orders, orders[1:], strict=False):
            if order == previous:
                raise values.error(f"{path} line {line}, column alpha: order {order!r} is given twice")
            if order < previous:
                raise values.error(f"{path} line {line}, column alpha: orders must be sorted increasing")


if TYPE_CHECKING:
    from gdpcli.core.tradeoff import Grid


@dataclass(frozen=True)
class _SampledCurve(Mechanism):
    """A mechanism given by a sampled curve in a CSV file (`file=-` reads stdin). Its trade-off function is
    taken to be F_S (gdpcli.core.curves): convex, piecewise linear, a rigorous LOWER bound on the true
    one between and beyond the samples (GDP paper Prop. 1, 2, 5, 6), so every figure is an upper bound on
    the privacy loss (profile_is_exact false). `tol`: the samples' absolute accuracy (default 1e-12)."""

    source: str
    tol: float
    alpha: tuple[float, ...]
    beta: tuple[float, ...]
    profile_is_exact: ClassVar[bool] = False

    @classmethod
    def from_spec(cls, values: SpecValues) -> _SampledCurve:
        from gdpcli.core import curves

        if not values.has("file"):
            raise values.error(f"{cls.kind} needs file=F.csv", cls.spec_help)
        source = str(values.values["file"])
        tol = values.number("tol", Interval(0.0, 1e-3, low_closed=True), curves.DEFAULT_TOL)
        text = values.file_text(f"give a CSV of the sampled {cls.kind}, e.g. gdpcli's own")
        grid = curves.bound(cls.kind, text, source, tol)
        return cls(source, tol, tuple(grid.alpha.tolist()), tuple(grid.beta.tolist()))

    def describe(self) -> str:
        tol = "" if self.tol == 1e-12 else f",tol={_number(self.tol)}"
        return f"{self.kind}:file={self.source}{tol}"

    def grid(self) -> Grid:
        from gdpcli.core.tradeoff import Grid

        return Grid(self.alpha, self.beta)

    def tradeoff(self, alpha: ArrayLike) -> ArrayLike:
        """F_S(alpha), a lower bound on beta."""
        return self.grid()(alpha)

    def profile(self, epsilon: ArrayLike) -> ArrayLike:
        """1 + F_S*(-e^eps) (GDP paper Prop. 6), an upper bound on delta; at eps = inf the atom 1 - F_S(0)."""
        from gdpcli.core import curves

        return curves.profile(self.grid(), epsilon)

    def clt_functionals(self) -> Functionals:
        raise ComputationError(
            f"{self.describe()}: no CLT functionals for a sampled curve", "use --method pld"
        )

    def gdpt_profile(self) -> PrivacyProfile:
        """The profile in log form; tail limit 0 when it vanishes beyond a finite eps (F_S(0) = 1, pure
        DP), else inf (delta keeps its atom 1 - F_S(0): not GDP, GDPT Thm 4.3)."""
        from gdpcli.core import curves
        from gdpcli.core.gdpt import PrivacyProfile

        grid = self.grid()
        tail = 0.0 if curves.atom(grid) == 0.0 else math.inf
        return PrivacyProfile(self.describe(), lambda eps: curves.log_profile(grid, eps), tail_limit=tail)


@dataclass(frozen=True)
class TradeoffCurve(
    _SampledCurve, kind="tradeoff", keys=("file", "tol"), spec_help="tradeoff (file=F.csv: alpha,beta[,tol])"
):
    """A trade-off function given by (alpha, beta) samples: exact ones (the secant rule) or lower bounds
    (gdpcli's lower_bound rows: the ray rule); see gdpcli.core.curves."""


@dataclass(frozen=True)
class ProfileCurve(
    _SampledCurve, kind="profile", keys=("file", "tol"), spec_help="profile (file=F.csv: epsilon,delta[,tol])"
):
    """A privacy profile given by (epsilon, delta) samples, exact or upper bounds (gdpcli's upper_bound
    rows), held in both orders of neighbours; between samples the hull in e^eps (gdpcli.core.curves)."""


MECHANISMS: tuple[type[Mechanism], ...] = (
    GDP,
    Gaussian,
    Laplace,
    ApproxDP,
    RandomizedResponse,
    DiscreteGaussian,
    Shuffle,
    ShuffleRR,
    ZeroConcentrated,
    RenyiCurve,
    TradeoffCurve,
    ProfileCurve,
)
"""The mechanism kinds of the spec language, in the order help texts list them."""


@dataclass(frozen=True)
class Repeated:
    """A step run `times` times on the same data (self-composition)."""

    step: Step
    times: int = 1

    @property
    def mechanism(self) -> Mechanism:
        """The mechanism behind the step (without its sampling)."""
        return self.step.mechanism

    @property
    def sampling_rate(self) -> float | None:
        return self.step.sampling_rate

    @property
    def sampling(self) -> Sampling | None:
        return self.step.scheme

    @property
    def exact_mu(self) -> float | None:
        """mu when the event is exactly GDP: sqrt(times) mu (GDP paper Cor. 2), else None."""
        mu = self.step.gdp_mu
        return None if mu is None else mu * math.sqrt(self.times)

    @property
    def pure_epsilon(self) -> float | None:
        """times x the step's pure epsilon (basic composition of pure DP), or None."""
        step = self.step.pure_epsilon
        return None if step is None else self.times * step

    def describe(self) -> str:
        return self.step.describe() + (f"x{self.times}" if self.times > 1 else "")

    def with_times(self, times: int) -> Repeated:
        return Repeated(self.step, times)

    def tail_limit(self) -> tuple[float | None, str]:
        """The GDPT tail limit (GDPT Thm 4.4) of the event, and how it is known:

        - pure DP steps: delta vanishes beyond a finite eps: 0 (closed form);
        - an (eps, delta)-DP part with delta > 0 (scaled by p when subsampled) stays: inf;
        - GDP / Gaussian subsampled: subsampling never hurts (C_p(f) >= f, GDP paper Sec. 4), so G <=
          sqrt(times) mu everywhere: the tail limit is at most that (an upper bound);
        - rho-zCDP (discrete Gaussian): delta <= exp(-(eps - rho)^2 / (4 rho)), so G <= sqrt(2 rho times)
          in the limit (an upper bound; subsampling does not change it);
        - anything else: not known here (None: gdpt-identify estimates it from the profile, a heuristic
          labelled numerical_estimate; an infinite upper bound would prove nothing).
        """
        mechanism = self.mechanism
        if mechanism.delta_part > 0.0:
            return math.inf, "closed_form"
        if mechanism.gdp_mu is not None:
            return mechanism.gdp_mu * math.sqrt(self.times), "upper_bound"
        if mechanism.zcdp_rho is not None:
            return math.sqrt(2.0 * mechanism.zcdp_rho * self.times), "upper_bound"
        if mechanism.pure_epsilon is not None:
            return 0.0, "closed_form"
        return None, "numerical_estimate"


def dpsgd(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    sampling: Sampling | str = Sampling.POISSON,
    sensitivity: float | None = None,
) -> Repeated:
    """A DP-SGD run as an event: `steps` Gaussian steps with noise std = noise_multiplier x C (the Opacus,
    TF Privacy and dp-accounting convention), each on a sample drawn by `sampling` at `sampling_rate`.
    The sensitivity (in units of C) follows from the scheme's neighbouring relation unless given (Poisson:
    add/remove, 1; fixed-size batches: replace-one, 2), as in `gdpcli sgd`; at rate 1 every step sees
    the whole data."""
    scheme = Sampling(sampling)
    own = scheme.neighbouring.sensitivity if sensitivity is None else sensitivity
    gaussian = Gaussian(noise_multiplier, own)
    step: Step = gaussian if sampling_rate == 1.0 else Sampled(gaussian, sampling_rate, scheme)
    return Repeated(step, steps)


def parse(spec: str) -> Repeated:
    """An event from one word of the spec language (`gdpcli.mechanisms`), e.g. "gaussian:sigma=2x10"."""
    from gdpcli.mechanisms import parse_spec

    return parse_spec(spec)
