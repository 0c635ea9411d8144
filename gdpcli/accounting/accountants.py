"""The accountants: each answers epsilon(delta), delta(epsilon) and beta(alpha) for a list of events, every
figure labelled with its guarantee and method (gdpcli.accounting.figures)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from gdpcli.accounting.figures import (
    APPROXIMATE,
    EXACT,
    OPTIMISTIC,
    PESSIMISTIC,
    Accountant,
    Figures,
    no_loss,
)
from gdpcli.core import gdp
from gdpcli.defaults import EPSILON_SCALE, STEP_SCALE
from gdpcli.errors import ComputationError, parameter
from gdpcli.events import Mechanism, Repeated
from gdpcli.guarantees import Side, by_side

if TYPE_CHECKING:
    from gdpcli.core.pld import Bounds, Components, Compositions, ProfileFn


class ExactGDP:
    """Lists of GDP / Gaussian specs: mu = sqrt(sum times_i mu_i^2) exactly (GDP paper Cor. 2)."""

    method = "gdp"
    closed_form = True  # answers delta = 0 too

    def __init__(self, mu: float) -> None:
        self.mu_total = mu

    @property
    def context(self) -> dict[str, float]:
        return {"mu": self.mu_total}

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(gdp.epsilon(deltas, self.mu_total)), EXACT, self.method, "epsilon")]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(gdp.delta(epsilons, self.mu_total)), EXACT, self.method, "delta")]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(gdp.tradeoff(alphas, self.mu_total)), EXACT, self.method, "beta")]

    def mu(self) -> list[Figures]:
        return [Figures(np.asarray([self.mu_total]), EXACT, self.method, "mu")]

    def equal_error(self) -> list[Figures]:
        """The fixed point G_mu(alpha*) = alpha* = Phi(-mu/2) in closed form (accounting.equal_error)."""
        return [Figures(np.asarray([gdp.symmetric_point(self.mu_total)]), EXACT, self.method, "equal_error")]


class ExactSingle:
    """One mechanism with a closed-form trade-off f and profile (Laplace, (eps, delta)-DP): exact figures.

    epsilon(delta) inverts the closed-form profile by bisection to the last ulp (rounded to the safe side).
    """

    method = "closed-form"
    closed_form = True  # answers delta = 0 too

    def __init__(self, mechanism: Mechanism) -> None:
        self.mechanism = mechanism

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core.tradeoff import epsilon_from_profile

        ceiling = max(1e4, self.mechanism.pure_epsilon or 0.0)  # a pure eps0-DP profile is 0 from eps0 on
        values = epsilon_from_profile(self.mechanism.profile, deltas, ceiling=ceiling)
        return [Figures(np.asarray(values), EXACT, self.method, "epsilon")]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(self.mechanism.profile(epsilons)), EXACT, self.method, "delta")]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(self.mechanism.tradeoff(alphas)), EXACT, self.method, "beta")]


class BoundedSingle:
    """One mechanism known through an upper-bound profile (Mechanism.profile_is_exact false: the shuffle
    model's clone reduction): its profile, its inverse and its trade-off function bound the truth (upper,
    upper and lower), and its lower pair, where it has one, bounds it from the other side."""

    method = "profile-bound"
    closed_form = True  # answers delta = 0 too

    def __init__(self, mechanism: Mechanism) -> None:
        self.mechanism = mechanism
        self.lower_pair = mechanism.lower_pair()
        self.ceiling = max(1e4, mechanism.pure_epsilon or 0.0)

    def _lower_profile(self, epsilons: np.ndarray) -> np.ndarray:
        """The lower pair's profile in its worst direction, moved down by 1e-12 relative (rounding)."""
        assert self.lower_pair is not None
        remove, add = self.lower_pair.remove, self.lower_pair.add or self.lower_pair.remove
        return np.maximum(remove(epsilons), add(epsilons)) * (1.0 - _BOUND_MARGIN)

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core.tradeoff import epsilon_from_profile

        upper = epsilon_from_profile(self.mechanism.profile, deltas, ceiling=self.ceiling)
        found = [Figures(np.asarray(upper), PESSIMISTIC, self.method, "epsilon")]
        if self.lower_pair is not None:
            lower = epsilon_from_profile(self._lower_profile, deltas, ceiling=self.ceiling)
            found.append(
                Figures(np.asarray(lower) * (1.0 - _BOUND_MARGIN), OPTIMISTIC, self.method, "epsilon")
            )
        return found

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        epsilons = np.asarray(epsilons, dtype=float)
        found = [Figures(np.asarray(self.mechanism.profile(epsilons)), PESSIMISTIC, self.method, "delta")]
        if self.lower_pair is not None:
            found.append(Figures(self._lower_profile(epsilons), OPTIMISTIC, self.method, "delta"))
        return found

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        """The trade-off function of an upper-bound profile: pessimistic (a lower bound on beta)."""
        return [Figures(np.asarray(self.mechanism.tradeoff(alphas)), PESSIMISTIC, self.method, "beta")]


_BOUND_MARGIN = 1e-12
"""Relative margin by which BoundedSingle moves its lower figures down (their profiles' rounding)."""


_BINOMIAL_MARGIN = 1e-12
"""Relative margin on the binomial accountant's delta check: the pmf (core.binomial) and the sum round by a
few ulps where the masses carry the profile (far-tail masses near 1e-285 are within 1e-12 themselves)."""


class Binomial:
    """k-fold composition of (eps0, delta_i)-DP with one eps0: exact.

    The eps part is f_{eps0,0}^{(x)k} = T(B(k, 1/(1+e^eps0)), B(k, e^eps0/(1+e^eps0))) (Kairouz et al.,
    quoted in GDP paper Sec. 3.3): losses (2j - k) eps0 with binomial P-masses; the delta part is
    f_{0, 1 - prod(1 - delta_i)} (eq. 10-11), whose tensor product scales the P-masses by prod(1 - delta_i)
    and puts the rest at infinite loss (eq. 12). The profile and its inverse are then exact sums.
    """

    method = "binomial"
    closed_form = True  # answers delta = 0 too

    def __init__(self, epsilon0: float, times: int, delta0: float) -> None:
        from gdpcli.core.binomial import binomial_pmf
        from gdpcli.core.pld import DiscretePLD

        plus = np.exp(-np.logaddexp(0.0, -epsilon0))  # e^eps0 / (1 + e^eps0), the P-probability of +eps0
        minus = np.exp(-np.logaddexp(0.0, epsilon0))  # 1 / (1 + e^eps0), without the cancellation of 1 - plus
        masses = np.zeros(2 * times + 1)
        masses[::2] = (1.0 - delta0) * binomial_pmf(times, float(plus), float(minus))
        self.pld = DiscretePLD(-times, epsilon0, masses, delta0)

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        """The exact epsilon, moved up to the float at which delta(eps) (1 + _BINOMIAL_MARGIN) <= delta holds
        with delta summed term by term (DiscretePLD.delta_by_terms: the suffix sums cancel where delta is
        small, and the root they give can sit below the true one); the margin covers the rounding of the
        binomial masses and of the sum."""
        from gdpcli.core.rounding import elementwise, to_safe_side

        deltas = np.asarray(deltas, dtype=float)
        values = np.maximum(np.asarray(self.pld.epsilon(deltas), dtype=float), 0.0)

        def holds(epsilons: np.ndarray, targets: np.ndarray) -> np.ndarray:
            exact = [self.pld.delta_by_terms(float(e)) for e in np.ravel(epsilons)]
            met = np.asarray(exact) * (1.0 + _BINOMIAL_MARGIN) <= np.ravel(targets)
            return met | ~np.isfinite(np.ravel(epsilons))

        values = to_safe_side(values, elementwise(holds, deltas), "up", what="binomial epsilon")
        return [Figures(values, EXACT, self.method, "epsilon")]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(self.pld.delta(epsilons)), EXACT, self.method, "delta")]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        from gdpcli.core.pld import tradeoff_of

        return [Figures(np.asarray(tradeoff_of([self.pld], alphas)), EXACT, self.method, "beta")]


class NumericalPLD:
    """The privacy-loss-distribution accountant (gdpcli.core.pld): rigorous upper and lower bounds."""

    method = "pld"
    optimistic_method = "pld"  # the method named on the optimistic figures

    def __init__(self, specs: Sequence[Repeated], accuracy: float) -> None:
        self.specs: Sequence[Repeated] | None = specs
        self.components = [(spec.step.dominating_pair(), spec.times) for spec in specs]
        self.lower_components = self.components
        if not all(spec.step.profile_is_exact for spec in specs):
            lower = [(spec.step.lower_pair(), spec.times) for spec in specs]
            self.lower_components = None if any(pair is None for pair, _ in lower) else lower
        self.accuracy = accuracy

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core import pld

        return self._answer(pld.epsilon_bounds, np.asarray(deltas, dtype=float), "epsilon", relative=True)

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        from gdpcli.core import pld

        return self._answer(pld.delta_bounds, np.asarray(epsilons, dtype=float), "delta", relative=True)

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        from gdpcli.core import pld

        return self._answer(pld.tradeoff_bounds, alphas, "beta", relative=False)

    def _answer(
        self, bounds_of: Callable[..., Bounds], queries: np.ndarray, name: str, *, relative: bool
    ) -> list[Figures]:
        """The pessimistic figure from the dominating pairs' composition; the optimistic one from the same
        composition when every pair is the mechanism's own (Mechanism.lower_pair), from the lower pairs'
        composition when they differ, and that of no privacy loss (figures.no_loss), with a note, when
        some mechanism has none (a bound on its privacy loss only). Which of a composition's bounds
        [lower, upper] is on which side is the quantity's (guarantees.by_side): for beta the pessimistic
        composition gives the lower bound."""
        bounds = bounds_of(self.components, queries, accuracy=self.accuracy, compositions=self._compositions)
        note = self._note(bounds, name, relative=relative)
        pessimistic, optimistic = by_side(name, bounds.upper, bounds.lower)
        other_note = note
        if self.lower_components is None:
            optimistic, other_note = no_loss(name, queries), _NO_LOWER_PAIR
        elif self.lower_components is not self.components:
            lower = bounds_of(
                self.lower_components, queries, accuracy=self.accuracy, compositions=self._lower_compositions
            )
            optimistic = by_side(name, lower.upper, lower.lower)[1]
            other_note = self._note(lower, name, relative=relative)
        figures = [
            Figures(np.atleast_1d(pessimistic), PESSIMISTIC, self.method, name, note=note),
            Figures(np.atleast_1d(optimistic), OPTIMISTIC, self.optimistic_method, name, note=other_note),
        ]
        swallowed = np.atleast_1d(bounds.swallowed)
        if np.any(swallowed):
            reasons = tuple({"reason": _SWALLOWED} if gone else {} for gone in swallowed)
            figures[0] = replace(figures[0], details=reasons)
        if np.any(swallowed) or np.any(bounds.rescued):
            figures += self._stand_in(queries)
        return figures

    def _stand_in(self, deltas: np.ndarray) -> list[Figures]:
        """Where the round-off swallows a delta's upper bound, or widens it (Bounds.rescued): RDP's optimal
        conversion at every delta asked, rigorous at any delta and often looser than the PLD's (nothing
        where RDP does not apply)."""
        if self.specs is None:
            return []
        try:
            found = RenyiAccountant(self.specs, ("optimal",)).epsilon(deltas)
        except ComputationError:
            return []
        return [replace(figure, note=_STAND_IN) for figure in found]

    @cached_property
    def _compositions(self) -> Compositions:
        """The dominating pairs' compositions, kept across questions (core.pld.Compositions)."""
        from gdpcli.core.pld import Compositions

        return Compositions(self.components)

    @cached_property
    def _lower_compositions(self) -> Compositions:
        """The lower pairs' compositions, kept across questions."""
        from gdpcli.core.pld import Compositions

        return Compositions(self.lower_components)

    def _note(self, bounds: Bounds, name: str, *, relative: bool) -> str | None:
        """Where the refinement stopped at its budget (Bounds.reached), or met the rule only but for the
        round-off the bounds carry (Bounds.carried), a note saying so, with the width and the rule."""
        upper, lower = np.atleast_1d(bounds.upper), np.atleast_1d(bounds.lower)
        note = None
        rule = _RULES[name].format(accuracy=self.accuracy, scale=EPSILON_SCALE, step_scale=STEP_SCALE)
        if bounds.carried > 0.0:
            note = (
                f"pld: the {name} bounds are up to {bounds.carried:.2g} wider than {parameter('accuracy')} "
                f"{self.accuracy:g} asks ({rule}): that is the FFT round-off they carry, which no finer grid "
                "removes; they are rigorous"
            )
        elif not bounds.reached:
            from gdpcli.core.pld import MAX_WORK, work_budget

            width = _width(upper, lower, relative) or "no finite width"
            note = (
                f"pld: the {name} bounds stopped at the work/size budget with {width} "
                f"({parameter('accuracy')} {self.accuracy:g} asks {rule} and allows "
                f"{work_budget(self.accuracy):.2g} "
                "units of grid work, FFT lengths n log2 n and profile evaluations: counted, not timed, so a "
                f"busy machine stops at the same grid as an idle one; a smaller {parameter('accuracy')} "
                "allows more, up to "
                f"{MAX_WORK:.2g}); they are rigorous, only wider"
            )
        return note


class PairsPLD(NumericalPLD):
    """The PLD accountant of pairs given directly, with times: `upper`, pairs that dominate the mechanism
    (its pessimistic figures), and `lower`, pairs the mechanism dominates (its optimistic figures; None
    where none is known). A batch scheme's run, which is no composition of one step, is accounted so; each
    side's figures are named by its own method."""

    def __init__(
        self, upper: Components, lower: Components | None, accuracy: float, methods: tuple[str, str]
    ) -> None:
        self.components, self.lower_components, self.accuracy = upper, lower, accuracy
        self.method, self.optimistic_method = methods
        self.specs = None  # no RDP stands in: the pairs are no composition of events


_SWALLOWED = (
    "epsilon = inf: the round-off of the PLD composition swallows this delta (it would take half of it), so "
    "the PLD gives no upper bound here, only its lower bound"
)
_STAND_IN = (
    "rdp: where the PLD's round-off swallows a delta or widens its bounds, RDP's optimal conversion "
    "(rigorous at any delta, often looser) gives an upper bound too, in rows of its own"
)

_NO_LOWER_PAIR = (
    "pld: some mechanism is known through a bound on its privacy loss only; the optimistic figure is that "
    "of no privacy loss (epsilon 0, delta 0, beta 1 - alpha)"
)


_RULES = {
    "epsilon": "upper - lower <= {accuracy:g} x min(lower + {scale:g}, {step_scale:g} x steps)",
    "delta": "upper <= (1 + {accuracy:g}) lower + 1e-15",
    "beta": "upper - lower <= {accuracy:g}",
}
"""The width each PLD figure is refined to (epsilon_bounds, delta_bounds, tradeoff_bounds in core.pld)."""


def _width(upper: np.ndarray, lower: np.ndarray, relative: bool) -> str:
    """The widest of the finite bounds [lower, upper], in words ("" if none is finite): relative where
    asked and the lower bound is positive, else absolute."""
    finite = np.isfinite(upper) & np.isfinite(lower)
    upper, lower = upper[finite], lower[finite]
    if not upper.size:
        return ""
    if not relative:
        return f"absolute width up to {float(np.max(upper - lower)):.2g}"
    positive = lower > 0
    parts = []
    if np.any(positive):
        relative_width = (upper[positive] - lower[positive]) / lower[positive]
        parts.append(
            f"width up to {float(np.max(upper - lower)):.2g}, relative {float(np.max(relative_width)):.2g}"
        )
    if not np.all(positive):
        parts.append(f"upper bounds up to {float(np.max(upper[~positive])):.2g} where the lower bound is 0")
    return " and ".join(parts)


class PureDPToGDP:
    """The tightest mu implied by a single pure eps-DP guarantee, -2 Phi^-1(1/(1+e^eps)) (GDPT Thm 5.1).

    Only a mu statement: the mechanism itself is f_{eps,0}, whose other figures come from its exact form.
    """

    method = "gdpt-thm-5.1"

    def __init__(self, epsilon: float) -> None:
        self.epsilon0 = epsilon

    def mu(self) -> list[Figures]:
        return [Figures(np.asarray([gdp.pure_dp_mu(self.epsilon0)]), EXACT, self.method, "mu")]


def split_uniform_delta(specs: Sequence[Repeated]) -> tuple[list[Repeated], float]:
    """The list without the delta parts of its unsampled (eps, delta)-DP specs, and what those parts
    compose to: f_{eps,delta} = f_{eps,0} (x) f_{0,delta} and f_{0,d1} (x) f_{0,d2} = f_{0,1-(1-d1)(1-d2)}
    (GDP paper eq. 10-11), so the whole list is (rest) (x) f_{0, delta0}. Specs with eps = 0 vanish from
    the rest; subsampled specs stay whole."""
    rest = []
    for spec in specs:
        step = spec.step.without_delta_part()
        if step is not None:
            rest.append(Repeated(step, spec.times))
    return rest, uniform_delta(specs)


class WithUniformDelta:
    """An accountant of a list tensored with f_{0, delta0} (GDP paper eq. 12), in closed form:

        delta(eps) = delta0 + (1 - delta0) delta_rest(eps),
        beta(alpha) = (1 - delta0) beta_rest(alpha / (1 - delta0)) for alpha <= 1 - delta0, else 0,
        eps(delta) = eps_rest((delta - delta0) / (1 - delta0)), and inf for delta < delta0.

    Each figure keeps the inner figure's label: the maps are increasing, so bounds stay bounds. The inner
    target delta' is rounded down for exact and upper-bound epsilons and up for lower bounds, each to the
    nearest float at which delta0 + (1 - delta0) delta' <= delta (>= delta) holds as computed.
    """

    def __init__(self, inner: Accountant, delta0: float) -> None:
        self.inner, self.delta0, self.method = inner, delta0, inner.method

    def _inner_target(self, deltas: np.ndarray, direction: str) -> np.ndarray:
        from gdpcli.core.rounding import elementwise, to_safe_side

        d0 = self.delta0

        def safe(target: np.ndarray, delta: np.ndarray) -> np.ndarray:
            composed = d0 + (1.0 - d0) * target
            return composed <= delta if direction == "down" else composed >= delta

        start = np.maximum((deltas - d0) / (1.0 - d0), 0.0)
        target = to_safe_side(start, elementwise(safe, deltas), direction, what="delta part")
        return np.maximum(target, 0.0)

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        deltas = np.asarray(deltas, dtype=float)
        upper, lower = self._inner_target(deltas, "down"), self._inner_target(deltas, "up")
        exact_at_zero = getattr(self.inner, "closed_form", False)
        answerable = (upper > 0.0) | exact_at_zero  # PLD and RDP answer delta > 0 only
        query = np.concatenate((np.where(answerable, upper, 0.5), np.where(lower > 0.0, lower, 0.5)))
        figures = []
        for figure in self.inner.epsilon(query):
            above, below = np.split(np.asarray(figure.values, dtype=float), 2)
            if figure.side is OPTIMISTIC:  # at delta = delta0 only eps >= 0 is known from below
                values = np.where(deltas < self.delta0, np.inf, np.where(lower > 0.0, below, 0.0))
            else:
                values = np.where(answerable & (deltas >= self.delta0), above, np.inf)
            details = figure.details[: deltas.size] if figure.details else None
            figures.append(replace(figure, values=values, details=details))
        return figures

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return [
            replace(f, values=self.delta0 + (1.0 - self.delta0) * np.asarray(f.values))
            for f in self.inner.delta(epsilons)
        ]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        alphas = np.asarray(alphas, dtype=float)
        keep = 1.0 - self.delta0
        inside = alphas <= keep
        figures = self.inner.beta(np.where(inside, np.minimum(alphas / keep, 1.0), 1.0))
        return [replace(f, values=np.where(inside, keep * np.asarray(f.values), 0.0)) for f in figures]


class GroupTradeoff:
    """Group privacy of one f-DP mechanism: 1 - (1 - f)^{o k} (GDP paper Thm 3).

    beta is exact (the closed-form f iterated pointwise); delta(eps) and eps(delta) come from the
    conjugate of the group trade-off on a fine grid, as rigorous upper and lower bounds. For a mechanism
    known through a bound on its trade-off function only (Mechanism.profile_is_exact false), the iterate
    of that bound is a bound on the group's (the map is monotone in f): beta and the grid's upper profile
    are pessimistic, and nothing optimistic is known.
    """

    method = "group"

    def __init__(self, mechanism: Mechanism, group_size: int) -> None:
        from gdpcli.core.tradeoff import alpha_grid, grid_from_tradeoff

        self.mechanism, self.group_size = mechanism, group_size
        self.grid = grid_from_tradeoff(self._tradeoff, alpha_grid(20001))
        self.sides = (PESSIMISTIC, OPTIMISTIC) if mechanism.profile_is_exact else (PESSIMISTIC,)

    def _tradeoff(self, alpha: np.ndarray) -> np.ndarray:
        from gdpcli.core.tradeoff import group_tradeoff

        return np.asarray(group_tradeoff(self.mechanism.tradeoff, alpha, self.group_size))

    def _profile(self, side: Side) -> ProfileFn:
        """The grid's profile on that side: the upper one (pessimistic) or the lower one."""
        from gdpcli.core.tradeoff import profile_from_grid

        return lambda epsilon: profile_from_grid(self.grid, epsilon, upper=side is PESSIMISTIC)

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        side = EXACT if self.mechanism.profile_is_exact else PESSIMISTIC
        return [Figures(self._tradeoff(alphas), side, self.method, "beta")]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return [
            Figures(np.asarray(self._profile(side)(epsilons)), side, self.method, "delta")
            for side in self.sides
        ]

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core.tradeoff import epsilon_from_profile

        return [
            Figures(
                np.asarray(epsilon_from_profile(self._profile(side), deltas)), side, self.method, "epsilon"
            )
            for side in self.sides
        ]


def uniform_delta(specs: Sequence[Repeated]) -> float:
    """The delta part of the composition: 1 - prod (1 - delta_i)^{times_i} (GDP paper eq. 10-11), summed in
    log space (log1p, fsum, expm1) so that a million tiny deltas keep their digits."""
    import math

    logs = [spec.times * math.log1p(-spec.step.delta_part) for spec in specs]
    return -math.expm1(math.fsum(logs))


class ApproximateGDP:
    """A composition approximated by G_mu (x) f_{0,delta0} (GDP paper eq. 10-12): figures labelled
    `approximation`, no rigorous direction. Built by the CLT (Thm 5) or a DP-SGD CLT formula (Cor. 4)."""

    method = "clt"

    def __init__(self, mu: float, delta0: float = 0.0) -> None:
        self.mu_total, self.delta0 = mu, delta0

    @property
    def context(self) -> dict[str, float]:
        return {"mu": self.mu_total}

    def _approximate(self, values: np.ndarray | list[float], quantity: str) -> list[Figures]:
        return [Figures(np.asarray(values), APPROXIMATE, self.method, quantity)]

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        return self._approximate(clt.uniform_epsilon(deltas, self.mu_total, self.delta0), "epsilon")

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        return self._approximate(clt.uniform_delta(epsilons, self.mu_total, self.delta0), "delta")

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        return self._approximate(clt.band_tradeoff(alphas, self.mu_total, 0.0, self.delta0), "beta")

    def mu(self) -> list[Figures]:
        return self._approximate([self.mu_total], "mu")


class CentralLimit(ApproximateGDP):
    """GDP paper Theorem 5's mu for the composition (with eq. 10-12 for the delta part): an approximation.

    Its `details` (-v) are the functionals summed over the composition and the limits of Theorem 6 (2K/s,
    K = sum kl, s^2 = sum kappa2) and, for lists of (eps, delta)-DP specs, Theorem 7 (sqrt(sum eps_i^2)).
    """

    details_note = (
        "clt -v: kl, kappa2, kappa3 are the functionals of GDP paper Sec. 3.2 summed over the composition; "
        "mu is Theorem 5's 2 kl / sqrt(kappa2 - sum_i kl_i^2), mu_theorem6 Theorem 6's limit 2 kl / "
        "sqrt(kappa2), mu_theorem7 Theorem 7's sqrt(sum eps_i^2) (lists of (eps, delta)-DP specs; their "
        "delta part 1 - prod(1 - delta_i) goes with each): all approximations with no rigorous direction"
    )

    def __init__(self, specs: Sequence[Repeated]) -> None:
        from gdpcli.core import clt

        functionals, times = [s.step.clt_functionals() for s in specs], [s.times for s in specs]
        self.theorem5 = clt.berry_esseen(functionals, times)
        self.total = clt.composed(functionals, times)
        self.theorem6 = clt.limit_mu(functionals, times)
        self.theorem7 = _theorem7_mu(specs)
        super().__init__(self.theorem5.mu, uniform_delta(specs))

    @property
    def details(self) -> dict[str, float]:
        found = {"kl": self.total.kl, "kappa2": self.total.kappa2, "kappa3": self.total.kappa3}
        found["mu_theorem6"] = self.theorem6
        return found if self.theorem7 is None else {**found, "mu_theorem7": self.theorem7}


def _theorem7_mu(specs: Sequence[Repeated]) -> float | None:
    """sqrt(sum_i times_i eps_i^2), GDP paper Theorem 7's mu, when every spec is an unsampled (eps, delta)-DP
    guarantee f_{eps,delta}; else None."""
    if not all(s.sampling_rate is None and s.mechanism.eps_delta is not None for s in specs):
        return None
    return gdp.compose(np.array([s.mechanism.eps_delta[0] * np.sqrt(s.times) for s in specs]))


class BerryEsseenBand(CentralLimit):
    """The Berry-Esseen band of Theorem 5, max(0, G_mu(alpha + gamma) - gamma): a rigorous lower bound on
    the composed trade-off, hence rigorous upper bounds on delta(eps) and eps(delta), when every functional
    behind mu and gamma is rigorous (closed forms); with a quadrature among them (subsampled steps) the same
    figures are labelled approximation. Vacuous when gamma >= 1/2 or when the requested delta is below
    the band's floor (then eps = inf)."""

    method = "berry-esseen"
    details_note = (
        "berry-esseen -v: kl, kappa2 and kappa3bar are the functionals of GDP paper Sec. 3.2 summed over the "
        "composition, from which Theorem 5's mu and gamma come"
    )

    @property
    def context(self) -> dict[str, float]:
        return {"mu": self.mu_total, "gamma": self.theorem5.gamma}

    @property
    def details(self) -> dict[str, float]:
        return {"kl": self.total.kl, "kappa2": self.total.kappa2, "kappa3bar": self.total.kappa3bar}

    @property
    def side(self) -> Side:
        """The band lies below the composed trade-off function (pessimistic) when it is proven."""
        return PESSIMISTIC if self.theorem5.rigorous else APPROXIMATE

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        values = clt.band_epsilon(deltas, self.mu_total, self.theorem5.gamma, self.delta0)
        return [Figures(np.asarray(values), self.side, self.method, "epsilon")]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        values = clt.band_delta(epsilons, self.mu_total, self.theorem5.gamma, self.delta0)
        return [Figures(np.asarray(values), self.side, self.method, "delta")]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        from gdpcli.core import clt

        values = clt.band_tradeoff(alphas, self.mu_total, self.theorem5.gamma, self.delta0)
        return [Figures(np.asarray(values), self.side, self.method, "beta")]

    def mu(self) -> list[Figures]:
        raise ComputationError(
            "the Berry-Esseen band is not a GDP guarantee", f"use {parameter('method')} clt for its mu"
        )


class Restated:
    """An accountant that answers by an inner one (`inner`), each of its figures restated (`restate`)."""

    inner: Accountant

    def restate(self, figures: list[Figures]) -> list[Figures]:
        """The inner accountant's figures as this accountant states them."""
        raise NotImplementedError

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        return self.restate(self.inner.epsilon(deltas))

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return self.restate(self.inner.delta(epsilons))

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        return self.restate(self.inner.beta(alphas))


class Detailed(Restated):
    """-v/--verbose: an accountant whose figures also carry what they rest on, the inner accountant's
    `details` (e.g. the summed CLT functionals), as extra columns in every row, and its `details_note`
    saying what they are. Labels, values and context are the inner accountant's."""

    def __init__(self, inner: Accountant) -> None:
        self.inner, self.method = inner, inner.method

    @property
    def context(self) -> dict[str, float]:
        return dict(getattr(self.inner, "context", {}))

    def restate(self, figures: list[Figures]) -> list[Figures]:
        """The figures with the inner accountant's details and their note."""
        extra, note = self.inner.details, self.inner.details_note
        return [
            replace(
                figure,
                details=tuple({**d, **extra} for d in figure.details or ({},) * np.size(figure.values)),
                note=" ".join(n for n in (figure.note, note) if n) or None,
            )
            for figure in figures
        ]

    def mu(self) -> list[Figures]:
        return self.restate(self.inner.mu())


def detailed(accountants: Sequence[Accountant], verbose: bool) -> list[Accountant]:
    """The accountants, each with its details shown (Detailed) when verbose (-v) and it has any."""
    return [Detailed(a) if verbose and hasattr(a, "details") else a for a in accountants]


class RenyiAccountant:
    """RDP accounting: per-step RDP curves add up under composition (Mironov 2017), then a conversion to
    (eps, delta) optimised over the order alpha (Asoodeh et al.: classic eq. 3-4 (for the Gaussian this is
    the moments accountant, eq. 23), improved (Balle et al. 2020), lemma1 (Lemma 1 closed form), lemma2
    (Lemma 1 on the paper's order grid of Fig. 2: for the Gaussian that is Lemma 2 as the paper evaluated
    it), optimal (Thm 3)). Every conversion is a rigorous upper bound; the order used is reported.

    rdp: specs give values at their listed orders only; the other specs' curves are evaluated there.
    """

    method = "rdp"

    def __init__(self, specs: Sequence[Repeated], conversions: Sequence[str]) -> None:
        points = [s for s in specs if s.step.rdp_points is not None]
        self.curves = [(s.step.rdp_curve(), s.times) for s in specs if s.step.rdp_points is None]
        self._composed: dict[float, float] = {}  # the curves' sum at each order met (curve)
        self.points = points
        self.conversions = list(conversions)
        self.orders = self._common_orders(points) if points else None

    @staticmethod
    def _common_orders(points: Sequence[Repeated]) -> np.ndarray:
        common = set(points[0].step.rdp_points[0])
        for spec in points[1:]:
            common &= set(spec.step.rdp_points[0])
        if not common:
            raise ComputationError("the rdp: specs share no order alpha", "give them a common order")
        return np.array(sorted(common))

    def curve(self, order: np.ndarray) -> np.ndarray:
        """The composed RDP curve (sum over specs of times x per-step curve). Each order's value is kept:
        every query's search over the orders starts on the same grid, and some curves cost 0.4 s an
        evaluation (the shuffle model's: a compose of two shuffled mechanisms and a zCDP one at five
        epsilons took 22 s)."""
        order = np.asarray(order, dtype=float)
        new = np.array([a for a in dict.fromkeys(order.ravel().tolist()) if a not in self._composed])
        if new.size and self.curves:
            values = sum(times * np.asarray(curve(new), dtype=float) for curve, times in self.curves)
            self._composed.update(zip(new.tolist(), np.broadcast_to(values, new.shape).tolist(), strict=True))
        total = np.array([self._composed.get(a, 0.0) for a in order.ravel().tolist()]).reshape(order.shape)
        for spec in self.points:
            lookup = dict(zip(*spec.step.rdp_points, strict=True))
            total = total + spec.times * np.array([lookup[a] for a in np.atleast_1d(order)]).reshape(
                order.shape
            )
        return total

    def _convert(self, queries: np.ndarray, name: str, direction: str) -> Figures:
        """The named conversion at each query: epsilon at deltas (direction "epsilon") or delta at
        epsilons, with the order each used; pessimistic (every conversion bounds the profile from above)."""
        from gdpcli.core import rdp

        results = []
        for query in queries:
            if name == "lemma2":
                orders = self._paper_orders(float(query)) if self.orders is None else self.orders
                results.append(rdp.epsilon_from_points(orders, self.curve(orders), float(query), "lemma1"))
            elif self.orders is not None:
                convert = rdp.epsilon_from_points if direction == "epsilon" else rdp.delta_from_points
                results.append(convert(self.orders, self.curve(self.orders), float(query), name))
            else:
                convert = rdp.epsilon_from_curve if direction == "epsilon" else rdp.delta_from_curve
                results.append(convert(self.curve, float(query), name))
        values = np.array([r.value for r in results])
        details = tuple({"order": r.order} for r in results)
        return Figures(values, PESSIMISTIC, f"rdp-{name}", direction, details)

    def _paper_orders(self, delta: float) -> np.ndarray:
        """lemma2: Lemma 1's closed form on the paper's order grid (its Fig. 2, Lemma 2), restricted to the
        grid points within a factor 8 (in alpha - 1) of the continuous minimiser, and always the grid point
        nearest to it (the window is empty when the minimiser is below the grid's first order 1.5). Any set
        of orders gives a valid bound, so the restriction keeps the figure rigorous; it keeps subsampled
        curves, which are costly at large orders, cheap."""
        from gdpcli.core import rdp

        best = rdp.epsilon_from_curve(self.curve, delta, "lemma1").order - 1.0
        grid = rdp.PAPER_ORDER_GRID
        nearest = np.zeros(grid.size, dtype=bool)
        nearest[min(int(np.searchsorted(grid - 1.0, best)), grid.size - 1)] = True
        return grid[((grid - 1.0 >= best / 8.0) & (grid - 1.0 <= best * 8.0)) | nearest]

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        return [self._convert(deltas, name, "epsilon") for name in self.conversions]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        from gdpcli.core import rdp

        names = [n for n in self.conversions if n in rdp.DELTA_METHODS]
        if not names:
            raise ComputationError(
                "the lemma1/lemma2 conversions give epsilon only", f"use {parameter('conversion')} optimal"
            )
        return [self._convert(epsilons, name, "delta") for name in names]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        """The trade-off lower bound every mechanism with this RDP curve obeys (rdp.tradeoff_from_curve:
        the test's binary outcome, data processing, maximised over the orders; tight for the curve, so
        it equals the f_{eps,delta} envelope of the optimal conversion's profile)."""
        from gdpcli.core import rdp

        alphas = np.asarray(alphas, dtype=float)
        if self.orders is None:
            values = rdp.tradeoff_from_curve(self.curve, alphas)
        else:
            values = rdp.tradeoff_from_points(self.orders, self.curve(self.orders), alphas)
        return [Figures(values, PESSIMISTIC, "rdp-tradeoff", "beta")]


class EdgeworthAccountant:
    """The Edgeworth accountant ([WGZ+22]: Wang, Gao, Zhang, Shen, Su 2022; Su 2024, Prop. 3.2 and Sec.
    4.1): first-order Edgeworth expansions of the CDFs of the summed privacy-loss log-likelihood ratios
    under both hypotheses, delta(eps) = P[sum Y > eps] - e^eps P[sum X > eps] and eps(delta) by root
    finding (gdpcli.core.edgeworth). The per-step cumulants are exact for Gaussian and pure-DP steps and
    come from quadrature for Laplace and subsampled Gaussian steps; they add over steps. Poisson-
    subsampled steps make the remove and add directions differ (f_p and f_p^-1): both are expanded and
    the larger delta is reported. Labelled `approximation`: no error bound is proven at the deltas asked
    (the finite-sample bound of [WGZ+22] is not implemented; see the README)."""

    method = "edgeworth"

    def __init__(self, specs: Sequence[Repeated], order: int = 1) -> None:
        from gdpcli.core import edgeworth

        remove, add = edgeworth.ZERO, edgeworth.ZERO
        for spec in specs:
            pair, symmetric = spec.step.edgeworth_pair()
            remove = remove + pair.times(spec.times)
            add = add + (pair if symmetric else pair.reversed()).times(spec.times)
        self.pairs = [remove] if add == remove else [remove, add]
        self.order = order

    def _approximate(self, values: np.ndarray | float, quantity: str) -> list[Figures]:
        return [Figures(np.atleast_1d(np.asarray(values, dtype=float)), APPROXIMATE, self.method, quantity)]

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        from gdpcli.core import edgeworth

        deltas = np.asarray(deltas, dtype=float)
        return self._approximate(edgeworth.epsilon(deltas, self.pairs, self.order), "epsilon")

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        from gdpcli.core import edgeworth

        epsilons = np.asarray(epsilons, dtype=float)
        return self._approximate(edgeworth.delta(epsilons, self.pairs, self.order), "delta")

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        from gdpcli.core import edgeworth

        alphas = np.asarray(alphas, dtype=float)
        return self._approximate(edgeworth.tradeoff(alphas, self.pairs, self.order), "beta")


class TextbookComposition:
    """What the textbook composition theorems say for a list of (eps_i, delta_i)-DP mechanisms,
    labelled upper_bound: each is a valid but loose bound, shown so users see what the old tools
    would have said.

    basic: (sum k_i eps_i, sum k_i delta_i)-DP (Dwork and Roth, Thm 3.16).
    advanced: for every delta' > 0, (sqrt(2 ln(1/delta') S2) + S1, sum k_i delta_i + delta')-DP with
    S2 = sum k_i eps_i^2 and S1 = sum k_i eps_i (e^eps_i - 1) (Dwork, Rothblum and Vadhan 2010, Thm III.3;
    Dwork and Roth Thm 3.20, whose Azuma argument takes heterogeneous eps_i as they are). The optimal
    composition of Kairouz, Oh and Viswanath is gdpcli's exact answer (Binomial, GDP paper Sec. 3.3).
    sqrt(S2) is formed scaled by the largest eps_i, so tiny eps_i do not underflow it; with every eps_i = 0
    it is 0 and the bound holds for every delta' > 0: (0, sum k_i delta_i)-DP.
    """

    def __init__(self, specs: Sequence[Repeated], rule: str) -> None:
        pairs = [(spec.step.eps_delta, spec.times) for spec in specs]
        if any(pair is None for pair, _ in pairs):
            raise ComputationError(
                f"the {rule} composition theorem takes (eps, delta)-DP mechanisms",
                f"give dp:eps=...,delta=... or rr: specs, or use {parameter('method')} pld",
            )
        self.method = rule
        self.delta_sum = float(sum(k * d for (_, d), k in pairs))
        self.epsilon_sum = float(sum(k * e for (e, _), k in pairs))
        scale = max(e for (e, _), _ in pairs)
        self.root = scale * math.sqrt(sum(k * (e / scale) ** 2 for (e, _), k in pairs)) if scale else 0.0
        self.drift = float(sum(k * e * np.expm1(e) for (e, _), k in pairs))

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        deltas = np.asarray(deltas, dtype=float)
        spare = deltas - self.delta_sum
        if self.method == "basic":
            values = np.where(spare >= 0.0, self.epsilon_sum, np.inf)
        else:  # delta' = spare; with every eps_i = 0 (root 0) delta' = 0 will do
            usable = spare > 0.0 if self.root > 0.0 else spare >= 0.0
            width = np.sqrt(-2.0 * np.log(np.where(spare > 0.0, spare, 1.0))) * self.root
            values = np.where(usable, width + self.drift, np.inf)
        return [Figures(values, PESSIMISTIC, self.method, "epsilon")]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        epsilons = np.asarray(epsilons, dtype=float)
        if self.method == "basic":
            values = np.where(epsilons >= self.epsilon_sum, self.delta_sum, 1.0)
        else:
            excess = np.maximum(epsilons - self.drift, 0.0)
            if self.root > 0.0:  # the least delta': exp(-(eps - S1)^2 / (2 S2)), 1 for eps <= S1
                with np.errstate(over="ignore"):  # a ratio beyond the float range: delta' = e^-inf = 0
                    tail = np.exp(-0.5 * (excess / self.root) ** 2)
            else:
                tail = np.where(epsilons >= self.drift, 0.0, 1.0)
            values = np.minimum(self.delta_sum + tail, 1.0)
        return [Figures(values, PESSIMISTIC, self.method, "delta")]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        raise ComputationError(f"the {self.method} composition theorem states (eps, delta) pairs only")
