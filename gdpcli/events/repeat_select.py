"""`RepeatAndSelect`: a mechanism run a random number K of times on the same data, only the best run released
(a hyper-parameter search; Papernot and Steinke, ICLR 2022), and `RunsDistribution`, the law of K.

The selected mechanism is accounted in RDP only: its RDP curve comes from the base mechanism's by the
paper's Thm 2 (K truncated negative binomial, geometric or logarithmic) or Thm 6 (K Poisson)
(gdpcli.core.repeat_select). It has no trade-off function or privacy profile of its own here, so every
other representation is refused, saying so.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from gdpcli.errors import ComputationError, InputError
from gdpcli.events.mechanism import Mechanism, RdpCurve, RdpOnly
from gdpcli.events.repeated import Repeated
from gdpcli.events.sampled import Sampled
from gdpcli.events.spec_values import spec_number

if TYPE_CHECKING:
    from gdpcli.core.arrays import ArrayLike
    from gdpcli.core.canonical import NoiseDistribution
    from gdpcli.core.clt import Divergences
    from gdpcli.core.edgeworth import LossPair
    from gdpcli.core.pld import DominatingPair

_FIXED_SHAPES = {"poisson": math.inf, "geometric": 1.0}
"""The shape each named distribution stands for (dp_accounting's RepeatAndSelectDpEvent shape)."""
MAX_MEAN = 1e9
"""The largest mean number of runs taken (as many as the spec language's times=N allows)."""
RDP_ONLY = "repeat-and-select is accounted by RDP only (Papernot and Steinke 2022)"
"""Why every method but rdp refuses a selected mechanism."""


@dataclass(frozen=True)
class RunsDistribution:
    """The law of the number of runs K: `poisson` (mean mu, the paper's Thm 6), `geometric` (mean 1/gamma)
    or `negative-binomial` (the truncated negative binomial D_{eta,gamma} of the paper's Def. 1 with shape
    eta > -1; shape 0 is the logarithmic distribution, 1 the geometric one; Thm 2), given by its mean
    E[K] >= 1. K must be drawn independently of the data."""

    name: str
    mean: float
    shape: float
    """eta of the truncated negative binomial; inf for Poisson (dp_accounting's convention), 1 geometric."""

    NAMES: ClassVar[tuple[str, ...]] = ("poisson", "geometric", "negative-binomial")
    FORM: ClassVar[str] = "poisson:mean=M | geometric:mean=M | negative-binomial:mean=M,shape=S"

    def __post_init__(self) -> None:
        if self.name not in self.NAMES:
            raise InputError(f"unknown distribution of runs {self.name!r}", "allowed: " + self.FORM)
        if not 1.0 <= self.mean <= MAX_MEAN:
            raise InputError(
                f"{self.name}: the mean number of runs must be in [1, {MAX_MEAN:.0e}], got {self.mean!r}",
                "e.g. geometric:mean=10",
            )
        if self.name in _FIXED_SHAPES and self.shape != _FIXED_SHAPES[self.name]:
            raise InputError(
                f"a {self.name} distribution has no shape", "give negative-binomial:mean=M,shape=S"
            )
        if not (math.isfinite(self.shape) and self.shape > -1.0) and self.name not in _FIXED_SHAPES:
            raise InputError(
                f"negative-binomial: the shape must be a finite number > -1, got {self.shape!r}",
                "0 is the logarithmic distribution, 1 the geometric one",
            )

    @classmethod
    def of(cls, name: str, mean: float, shape: float | None = None) -> RunsDistribution:
        """The distribution by name; a shape only for negative-binomial, which requires one."""
        if name == "negative-binomial" and shape is None:
            raise InputError("negative-binomial needs shape=S", "e.g. negative-binomial:mean=10,shape=0.5")
        if name in _FIXED_SHAPES and shape is not None:
            raise InputError(f"a {name} distribution has no shape", "give negative-binomial:mean=M,shape=S")
        return cls(name, mean, _FIXED_SHAPES.get(name, math.nan) if shape is None else shape)

    @classmethod
    def parse(cls, text: str) -> RunsDistribution:
        """From its words DIST:mean=M[,shape=S], e.g. geometric:mean=10 (InputError naming what is wrong)."""
        name, colon, body = text.strip().partition(":")
        values: dict[str, float] = {}
        for item in body.split(",") if colon else []:
            key, sep, value = (part.strip().lower() for part in item.partition("="))
            if not sep or key not in ("mean", "shape") or key in values:
                raise InputError(f"{text!r}: {item.strip()!r} is not mean=M or shape=S (once each)", cls.FORM)
            try:
                values[key] = float(value)
            except ValueError:
                raise InputError(f"{text!r}: {key}={value!r} is not a number", cls.FORM) from None
        if "mean" not in values:
            raise InputError(f"{text!r}: a distribution of runs needs DIST:mean=M", cls.FORM)
        return cls.of(name.strip().lower(), values["mean"], values.get("shape"))

    @classmethod
    def of_dp_shape(cls, mean: float, shape: float) -> RunsDistribution:
        """From dp_accounting's RepeatAndSelectDpEvent parameters: shape inf is Poisson, 1 geometric."""
        name = next((n for n, fixed in _FIXED_SHAPES.items() if fixed == shape), "negative-binomial")
        return cls(name, mean, shape)

    @property
    def theorem(self) -> str:
        """The theorem of Papernot and Steinke (ICLR 2022) that bounds the selection."""
        return "Thm 6" if self.name == "poisson" else "Thm 2"

    def describe(self) -> str:
        """poisson:mean=10, geometric:mean=10 or negative-binomial:mean=10,shape=0.5."""
        shape = f",shape={spec_number(self.shape)}" if self.name == "negative-binomial" else ""
        return f"{self.name}:mean={spec_number(self.mean)}{shape}"


@dataclass(frozen=True)
class RepeatAndSelect(RdpOnly):
    """The composition `events` (one training run, say) run K ~ `runs` times on the same data, only the best
    run released (its score may be any function of the run's own output). RDP from the base's curve by
    Papernot and Steinke's Thm 2 or Thm 6 (gdpcli.core.repeat_select): a rigorous upper bound."""

    events: tuple[Repeated, ...]
    runs: RunsDistribution

    rdp_only = RDP_ONLY

    def __post_init__(self) -> None:
        """The events as a tuple of Repeated (a mechanism or a sampled step is run once); InputError for
        anything else (a DP-SGD run under a whole-run batch scheme has no RDP curve) or none."""
        given = self.events if isinstance(self.events, (tuple, list)) else (self.events,)
        for item in given:
            if not isinstance(item, (Repeated, Mechanism, Sampled)):
                raise InputError(
                    f"repeat-and-select takes events with an RDP curve, got {type(item).__name__}",
                    "a composition of steps, e.g. events.dpsgd(...) with Poisson batches",
                )
        if not given:
            raise InputError("repeat-and-select needs the events of one run", "e.g. gaussian:sigma=1x100")
        object.__setattr__(
            self, "events", tuple(i if isinstance(i, Repeated) else Repeated(i) for i in given)
        )

    def describe(self) -> str:
        inner = " ".join(event.describe() for event in self.events)
        return f"{inner},select={self.runs.describe()}"

    @functools.cached_property
    def rdp_points(self) -> tuple[tuple[float, ...], tuple[float, ...]] | None:  # type: ignore[override]
        """Where a base event has an RDP guarantee at listed orders only: the selection's RDP at the orders
        they share (each minimisation of the theorem over those orders), else None. Computed once."""
        listed = [event for event in self.events if event.step.rdp_points is not None]
        if not listed:
            return None
        import numpy as np

        from gdpcli.core import repeat_select

        orders = sorted(set.intersection(*(set(event.step.rdp_points[0]) for event in listed)))
        if not orders:
            raise ComputationError("the rdp: specs share no order alpha", "give them a common order")
        base = self._base(np.array(orders, dtype=float))
        selected = repeat_select.on_orders(np.array(orders), base, self.runs.mean, self.runs.shape)
        return tuple(orders), tuple(float(value) for value in selected)

    def _base(self, orders: ArrayLike) -> ArrayLike:
        """The base composition's RDP at the orders: the sum of times x each step's (Mironov 2017 Prop. 1)."""
        import numpy as np

        total = np.zeros(np.shape(orders))
        for event in self.events:
            points = event.step.rdp_points
            if points is None:
                values = np.asarray(event.step.rdp_curve()(orders), dtype=float)
            else:
                lookup = dict(zip(*points, strict=True))
                values = np.array([lookup[float(order)] for order in np.ravel(orders)]).reshape(
                    np.shape(orders)
                )
            total = total + event.times * values
        return total

    def rdp_curve(self) -> RdpCurve:
        """The selection's RDP curve from the base composition's (Thm 2, or Thm 6 for Poisson)."""
        if self.rdp_points is not None:
            raise self.refused("RDP curve beyond the orders its rdp: specs list")
        return self._curve

    @functools.cached_property
    def _curve(self) -> RdpCurve:
        """The curve, built once (its minimisations evaluate the base at some 160 orders)."""
        from gdpcli.core import repeat_select

        return repeat_select.curve(self._base, self.runs.mean, self.runs.shape)

    def lower_pair(self) -> DominatingPair | None:
        return None

    def divergences(self) -> Divergences:
        raise self.refused("divergences but its RDP curve")

    def edgeworth_pair(self) -> tuple[LossPair, bool]:
        raise self.refused("privacy-loss cumulants")

    def canonical_noise(self, recursive: bool = False) -> NoiseDistribution:
        raise self.refused("trade-off function")
