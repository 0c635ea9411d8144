"""Curves given as samples in a file: a trade-off function or a privacy profile, held by their safe
side between samples."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from gdpcli.errors import ComputationError, parameter
from gdpcli.events.mechanism import Mechanism
from gdpcli.events.spec_values import Interval, SpecValues, spec_number

if TYPE_CHECKING:
    from gdpcli.core.arrays import ArrayLike
    from gdpcli.core.clt import Functionals
    from gdpcli.core.curves import Grid
    from gdpcli.core.gdpt import PrivacyProfile


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
        tol = "" if self.tol == 1e-12 else f",tol={spec_number(self.tol)}"
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
            f"{self.describe()}: no CLT functionals for a sampled curve", f"use {parameter('method')} pld"
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
