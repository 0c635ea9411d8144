"""Canonical noise distributions (Awan and Vadhan, "Canonical noise distributions and private hypothesis
tests", Ann. Statist. 51(2), 2023, [AV23]; Su 2024, "A Statistical Viewpoint on Differential Privacy",
Sec. 3.2).

For a symmetric (f = f^-1) nontrivial (f(alpha) < 1 - alpha for some alpha) trade-off function f, a canonical
noise distribution (CND) N has ([AV23] Def. 3.1; Su 2024 Sec. 3.2)
  (1) T(N, N + d) >= f for 0 <= d <= 1, with equality at d = 1;
  (2) T(N, N + 1)(alpha) = F(F^-1(1 - alpha) - 1), F the CDF of N: the most powerful test of N against
      N + 1 rejects for large values;
  (3) N is symmetric about 0.
Adding sens x N to a statistic of sensitivity sens is then exactly f-DP: the whole budget is used.

Every CND has F(-1/2) = c, the fixed point f(c) = c: the test rejecting above 1/2 has type I error
1 - F(1/2) = F(-1/2) by (3), type II error F(1/2 - 1) = F(-1/2), and it is most powerful by (2).

The recursive construction ([AV23] Thm 3.9), derived from (2) and (3). At threshold t, alpha = 1 - F(t) and
beta = F(t - 1), so F(t - 1) = f(1 - F(t)) for every t; with S = 1 - F and (3), S(-x) = F(x):

    S(x) = f(1 - S(x - 1))          (outwards: S on (k - 1/2, k + 1/2] from S on (k - 3/2, k - 1/2]),
    S(x - 1) = 1 - f(S(x))          (inwards, f = f^-1 where f is strictly decreasing),

and F is linear on [-1/2, 1/2], from c to 1 - c. A tail probability s < c thus goes back to the linear piece
in n inward steps, s_n in [c, 1 - c], and its quantile is n + (1/2 - s_n) / (1 - 2c). The construction is
exact (no discretization); what it loses is round-off: about 1e-16 absolute in a probability per step, so
probabilities below about 1e-16 come out as 0 (a survival) and a tail probability s carries a relative error
of about 1e-16 / s into its quantile.

Closed forms, each a CND of its f by (1)-(3) (checked against mpmath in tests/core/test_canonical.py):
  - G_mu: N(0, 1/mu^2) (the Gaussian mechanism, GDP paper Thm 1; Su 2024 Sec. 3.2);
  - the Laplace trade-off T(Lap(0, 1), Lap(eps, 1)): Lap(0, 1/eps) itself (its likelihood ratio is monotone,
    so (2) holds, and T(N, N + d) is the Laplace trade-off at eps d >= f, so (1));
  - f_{eps,delta}, eps > 0: Tulap(0, b = e^-eps, q = 2 delta b / (1 - b + 2 delta b)) ([AV23]; q is what
    makes F(-1/2) = c = (1 - delta) / (1 + e^eps));
  - f_{0,delta}: Uniform(-1/(2 delta), 1/(2 delta)) (the recursion with f(alpha) = 1 - delta - alpha).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.normal import Phi, Phi_inv
from gdpcli.errors import ComputationError, InputError

Tradeoff = Callable[[np.ndarray], ArrayLike]

MAX_STEPS = 100_000
"""Most unit steps the recursion takes from the linear piece (a tail that long needs f close to 1 - alpha)."""


class NoiseDistribution:
    """A distribution symmetric about 0, given by its survival function and tail quantile on x >= 0. A kind
    names itself in its class statement: `class Gaussian(NoiseDistribution, name="gaussian")`."""

    name: ClassVar[str]
    closed_form: ClassVar[bool]

    def __init_subclass__(cls, name: str = "", closed_form: bool = True) -> None:
        super().__init_subclass__()
        cls.name, cls.closed_form = name, closed_form

    @property
    def fixed_point(self) -> float:
        """c = f(c) = F(-1/2) = S(1/2), the equal-error point of f (every CND has it; module docstring)."""
        return float(self.survival(np.asarray(0.5)))

    def survival(self, x: np.ndarray) -> np.ndarray:
        """P(N > x) for x >= 0."""
        raise NotImplementedError

    def tail_quantile(self, s: np.ndarray) -> np.ndarray:
        """The x >= 0 with P(N > x) = s, for s in (0, 1/2]."""
        raise NotImplementedError

    def parameters(self, sensitivity: float) -> dict[str, float]:
        """The parameters of sensitivity x N, by name."""
        raise NotImplementedError

    def cdf(self, x: ArrayLike) -> ArrayLike:
        """F(x) = P(N <= x); the lower tail is S(-x), so it keeps its relative digits."""
        x = np.asarray(x, dtype=float)
        tail = self.survival(np.abs(x))
        return as_output(np.where(x < 0, tail, 1.0 - tail))

    def quantile(self, u: ArrayLike) -> ArrayLike:
        """F^-1(u) for u in (0, 1): the tail quantile of min(u, 1 - u) (1 - u is exact for u >= 1/2), and the
        median 0 by symmetry."""
        u = np.asarray(u, dtype=float)
        if np.any(~((u > 0.0) & (u < 1.0))):
            raise InputError("a quantile needs a probability strictly between 0 and 1")
        x = self.tail_quantile(np.minimum(u, 1.0 - u))
        return as_output(np.where(u < 0.5, -x, np.where(u == 0.5, 0.0, x)))

    def sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """size draws by inversion: a random sign times the tail quantile of s uniform on (0, 1/2]."""
        tail = 0.5 * (1.0 - rng.random(size))
        sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
        return sign * self.tail_quantile(tail)


@dataclass(frozen=True)
class Gaussian(NoiseDistribution, name="gaussian"):
    """N(0, 1/mu^2), the CND of G_mu (Su 2024 Sec. 3.2)."""

    mu: float

    def survival(self, x: np.ndarray) -> np.ndarray:
        return np.asarray(Phi(-self.mu * np.asarray(x, dtype=float)))

    def tail_quantile(self, s: np.ndarray) -> np.ndarray:
        return -np.asarray(Phi_inv(s)) / self.mu

    def parameters(self, sensitivity: float) -> dict[str, float]:
        return {"sigma": sensitivity / self.mu}


@dataclass(frozen=True)
class Laplace(NoiseDistribution, name="laplace"):
    """Lap(0, 1/eps), a CND of the Laplace trade-off T(Lap(0, 1), Lap(eps, 1)) (GDP paper Sec. 2.5)."""

    epsilon: float

    def survival(self, x: np.ndarray) -> np.ndarray:
        return 0.5 * np.exp(-self.epsilon * np.asarray(x, dtype=float))

    def tail_quantile(self, s: np.ndarray) -> np.ndarray:
        return -np.log(2.0 * np.asarray(s, dtype=float)) / self.epsilon

    def parameters(self, sensitivity: float) -> dict[str, float]:
        return {"scale": sensitivity / self.epsilon}


@dataclass(frozen=True)
class Tulap(NoiseDistribution, name="tulap"):
    """Tulap(0, b, q) with b = e^-eps, q = 2 delta b / (1 - b + 2 delta b) = 2 delta / (e^eps - 1 + 2 delta),
    the CND of f_{eps,delta} for eps > 0 ([AV23]; Awan and Slavkovic 2018 for the Tulap).

    N0 = G1 - G2 + U with G_i iid P(G = k) = (1 - b) b^k and U ~ U(-1/2, 1/2) has, for x >= 0 and m the
    integer nearest x, S0(x) = b^m (b + (m + 1/2 - x)(1 - b)) / (1 + b); the Tulap is N0 conditioned on
    S0(N0) in [q/2, 1 - q/2]: S = (S0 - q/2) / (1 - q) clipped at 0. Written with eps (b^m = e^{-eps m}) so
    that no power of b underflows.
    """

    epsilon: float
    delta: float

    @property
    def b(self) -> float:
        return math.exp(-self.epsilon)

    @property
    def q(self) -> float:
        return 2.0 * self.delta / (math.expm1(self.epsilon) + 2.0 * self.delta)

    def survival(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        b, q = self.b, self.q
        m = np.floor(x + 0.5)
        with np.errstate(under="ignore"):
            untruncated = (
                np.exp(-self.epsilon * m) * (b + (m + 0.5 - x) * -math.expm1(-self.epsilon)) / (1 + b)
            )
        return np.maximum(0.0, (untruncated - 0.5 * q) / (1.0 - q))

    def tail_quantile(self, s: np.ndarray) -> np.ndarray:
        b, q = self.b, self.q
        level = np.log((0.5 * q + (1.0 - q) * np.asarray(s, dtype=float)) * (1.0 + b))  # log((1 + b) S0)
        m = np.floor(level / -self.epsilon)
        with np.errstate(under="ignore"):
            into = (np.exp(level + self.epsilon * m) - b) / -math.expm1(-self.epsilon)
        return np.maximum(0.0, m + 0.5 - np.clip(into, 0.0, 1.0))

    def parameters(self, sensitivity: float) -> dict[str, float]:
        return {"b": self.b, "q": self.q, "scale": sensitivity}


@dataclass(frozen=True)
class Uniform(NoiseDistribution, name="uniform"):
    """Uniform(-1/(2 delta), 1/(2 delta)), the CND of f_{0,delta}(alpha) = max(0, 1 - delta - alpha)."""

    delta: float

    def survival(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(0.0, 0.5 - self.delta * np.asarray(x, dtype=float))

    def tail_quantile(self, s: np.ndarray) -> np.ndarray:
        return (0.5 - np.asarray(s, dtype=float)) / self.delta

    def parameters(self, sensitivity: float) -> dict[str, float]:
        return {"half_width": sensitivity / (2.0 * self.delta)}


def eps_delta(epsilon: float, delta: float) -> NoiseDistribution:
    """The CND of f_{eps,delta}: the Tulap for eps > 0, the uniform for eps = 0."""
    return Tulap(epsilon, delta) if epsilon > 0.0 else Uniform(delta)


def fixed_point(tradeoff: Tradeoff) -> float:
    """The c in [0, 1/2) with f(c) = c, by bisection to adjacent floats (f(alpha) - alpha is strictly
    decreasing); InputError when f is trivial (f(1/2) = 1/2 forces f(alpha) = 1 - alpha: perfect privacy)."""
    low, high = 0.0, 0.5
    if float(tradeoff(np.asarray(high))) >= high:
        raise InputError(
            "the trade-off function is 1 - alpha (perfect privacy): no noise distribution has it",
            "a canonical noise needs f(alpha) < 1 - alpha somewhere",
        )
    while True:
        middle = 0.5 * (low + high)
        if middle in (low, high):
            return middle
        if float(tradeoff(np.asarray(middle))) >= middle:
            low = middle
        else:
            high = middle


@dataclass(frozen=True)
class Recursive(NoiseDistribution, name="recursive", closed_form=False):
    """The CND of a symmetric nontrivial trade-off function by [AV23] Thm 3.9 (see the module docstring)."""

    tradeoff: Tradeoff
    c: float

    @classmethod
    def of(cls, tradeoff: Tradeoff) -> Recursive:
        """The construction for a vectorized symmetric trade-off function alpha -> f(alpha)."""
        return cls(tradeoff, fixed_point(tradeoff))

    @property
    def fixed_point(self) -> float:
        """c itself, as found (S(1/2) would round it once more)."""
        return self.c

    def _f(self, alpha: np.ndarray) -> np.ndarray:
        return np.asarray(self.tradeoff(alpha), dtype=float)

    def survival(self, x: np.ndarray) -> np.ndarray:
        """S on the linear piece at x - n, then n outward steps s -> f(1 - s); a tail that is 0 stays 0."""
        x = np.asarray(x, dtype=float)
        steps = np.maximum(np.ceil(x - 0.5), 0.0)
        tail = (0.5 - (1.0 - 2.0 * self.c) * (x - steps)).ravel()
        remaining = steps.ravel()
        active = np.flatnonzero(remaining > 0)
        for _ in range(MAX_STEPS):
            if active.size == 0:
                return tail.reshape(x.shape)
            tail[active] = self._f(1.0 - tail[active])
            remaining[active] -= 1
            active = active[(remaining[active] > 0) & (tail[active] > 0.0)]
        raise self._too_long()

    def tail_quantile(self, s: np.ndarray) -> np.ndarray:
        """n inward steps s -> 1 - f(s) until s >= c, then the linear piece."""
        tail = np.array(s, dtype=float).ravel()
        steps = np.zeros_like(tail)
        active = np.flatnonzero(tail < self.c)
        for _ in range(MAX_STEPS):
            if active.size == 0:
                return (steps + (0.5 - tail) / (1.0 - 2.0 * self.c)).reshape(np.shape(s))
            inward = 1.0 - self._f(tail[active])
            if np.any(inward <= tail[active]):
                raise ComputationError(
                    f"the tail probability {float(np.min(tail[active])):.3g} is below what double precision "
                    "resolves for this trade-off function",
                    "ask for probabilities further from 0 and 1",
                )
            tail[active] = inward
            steps[active] += 1
            active = active[tail[active] < self.c]
        raise self._too_long()

    def parameters(self, sensitivity: float) -> dict[str, float]:
        return {"scale": sensitivity}

    def _too_long(self) -> ComputationError:
        return ComputationError(
            f"the recursive construction needs more than {MAX_STEPS} unit steps",
            "the trade-off function is close to 1 - alpha, so the noise is very wide; ask for probabilities "
            "closer to 1/2",
        )


__all__ = [
    "Gaussian",
    "Laplace",
    "NoiseDistribution",
    "Recursive",
    "Tulap",
    "Uniform",
    "eps_delta",
    "fixed_point",
]
