"""The Edgeworth accountant (Wang, Gao, Zhang, Shen and Su, "Analytical composition of differential privacy
via the Edgeworth accountant", arXiv:2206.04236, 2022 [WGZ+22]; Su, "A Statistical Viewpoint on
Differential Privacy" (2024), Prop. 3.2 and Sec. 4.1).

For f_i = T(P_i, Q_i) let X_i be the privacy-loss log-likelihood ratio (PLLR) log(dQ_i/dP_i) under P_i and
Y_i the same under Q_i. The composition f_1 (x) ... (x) f_m then has (Prop. 3.2)

    delta(eps) = 1 - F_Y(eps) - e^eps (1 - F_X(eps)) = P[sum Y_i > eps] - e^eps P[sum X_i > eps],

with F_X, F_Y the CDFs of sum X_i and sum Y_i. [WGZ+22] approximate both by first-order Edgeworth
expansions in the cumulants of the sums, which are sums of the per-step cumulants (heterogeneous
compositions too). Here the per-step cumulants come in closed form (Gaussian, pure DP) or from a
composite Gauss-Legendre quadrature of the step's loss law (subsampled Gaussians, Laplace):

    1 - F(x) ~ Phi(-z) + phi(z) [lambda3/6 He2(z)]                                   (order 1)
                       + phi(z) [lambda4/24 He3(z) + lambda3^2/72 He5(z)]            (order 2)

with z = (x - K1)/sqrt(K2), lambda3 = K3/K2^(3/2), lambda4 = K4/K2^2 and He_k the probabilists' Hermite
polynomials (Hall, "The Bootstrap and Edgeworth Expansion", eq. 2.17). Everything here is an
approximation with no rigorous direction: for a pure Gaussian composition (K3 = K4 = 0) it is exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.errors import ComputationError, parameter

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(20)
_TAIL = 40.0  # standard normal densities beyond 40 sigma are below 1e-347: nothing is lost
_PANEL = 0.25  # panel width in units of the Gaussian scale, and of 1/mu where the loss bends faster
_MAX_PANELS = 200_000
_EPSILON_CEILING = 1e4


@dataclass(frozen=True)
class Cumulants:
    """The first four cumulants of a privacy loss under one hypothesis."""

    k1: float
    k2: float
    k3: float
    k4: float

    def __add__(self, other: Cumulants) -> Cumulants:
        return Cumulants(self.k1 + other.k1, self.k2 + other.k2, self.k3 + other.k3, self.k4 + other.k4)

    def times(self, count: int) -> Cumulants:
        """The cumulants of the sum of `count` independent copies (cumulants add)."""
        return Cumulants(count * self.k1, count * self.k2, count * self.k3, count * self.k4)

    def negated(self) -> Cumulants:
        """The cumulants of -L: the odd ones change sign."""
        return Cumulants(-self.k1, self.k2, -self.k3, self.k4)


@dataclass(frozen=True)
class LossPair:
    """Cumulants of the PLLR L = log dQ/dP of one pair (P, Q): under P (X of [WGZ+22]) and under Q (Y)."""

    under_p: Cumulants
    under_q: Cumulants

    def __add__(self, other: LossPair) -> LossPair:
        return LossPair(self.under_p + other.under_p, self.under_q + other.under_q)

    def times(self, count: int) -> LossPair:
        return LossPair(self.under_p.times(count), self.under_q.times(count))

    def reversed(self) -> LossPair:
        """The pair (Q, P), i.e. f^-1: its loss is -L, so X' = -Y and Y' = -X ([WGZ+22], review Sec. 4.1)."""
        return LossPair(self.under_q.negated(), self.under_p.negated())


ZERO = LossPair(Cumulants(0.0, 0.0, 0.0, 0.0), Cumulants(0.0, 0.0, 0.0, 0.0))


# ---------------------------------------------------------------------------------------------------
# Per-step cumulants


def gaussian_pair(mu: float) -> LossPair:
    """G_mu = T(N(0, 1), N(mu, 1)): X ~ N(-mu^2/2, mu^2) and Y ~ N(mu^2/2, mu^2) exactly (GDP paper
    Sec. 2), so every cumulant beyond the second vanishes and the expansion is the exact GDP profile."""
    half = 0.5 * mu * mu
    return LossPair(Cumulants(-half, mu * mu, 0.0, 0.0), Cumulants(half, mu * mu, 0.0, 0.0))


def pure_dp_pair(epsilon: float) -> LossPair:
    """f_{eps,0} = T(B(1, 1/(1+e^eps)), B(1, e^eps/(1+e^eps))) (randomized response): the loss is -eps with
    P-probability e^eps/(1+e^eps) and +eps otherwise; under Q the probabilities swap. Closed form: with
    t = tanh(eps/2), mean -eps t, variance eps^2 (1 - t^2), third cumulant 2 eps^3 t (1 - t^2), fourth
    2 eps^4 (1 - t^2)(3 t^2 - 1) (the cumulants of eps (2B - 1), B Bernoulli)."""
    t = math.tanh(0.5 * epsilon)
    s = 1.0 - t * t
    under_p = Cumulants(
        -epsilon * t, epsilon**2 * s, 2.0 * epsilon**3 * t * s, 2.0 * epsilon**4 * s * (3.0 * t * t - 1.0)
    )
    return LossPair(under_p, under_p.negated())


@dataclass(frozen=True)
class LossLaw:
    """A discretised loss law: values l_j with P-masses w_j given as log w_j (quadrature nodes and atoms).

    The Q-masses are w_j e^{l_j} (dQ = e^L dP, for pairs with Q << P)."""

    values: np.ndarray
    log_masses: np.ndarray

    def cumulants(self, hypothesis: str) -> Cumulants:
        """The first four cumulants under P or Q, from the central moments of the normalised masses."""
        log_masses = self.log_masses + (self.values if hypothesis == "Q" else 0.0)
        masses = np.exp(log_masses - np.max(log_masses))
        masses /= math.fsum(masses.tolist())
        mean = math.fsum((masses * self.values).tolist())
        centred = self.values - mean
        m2, m3, m4 = (math.fsum((masses * centred**k).tolist()) for k in (2, 3, 4))
        return Cumulants(mean, m2, m3, m4 - 3.0 * m2 * m2)

    def pair(self) -> LossPair:
        return LossPair(self.cumulants("P"), self.cumulants("Q"))


def _gauss_legendre(lo: float, hi: float, panel: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of a composite 20-point Gauss-Legendre rule on [lo, hi] with panels <= `panel`."""
    count = math.ceil((hi - lo) / panel)
    if count > _MAX_PANELS:
        raise ComputationError(
            "the Edgeworth quadrature would need too many panels",
            f"the step's loss is too steep; use {parameter('method')} pld",
        )
    edges = np.linspace(lo, hi, count + 1)
    half = 0.5 * np.diff(edges)[:, None]
    nodes = (0.5 * (edges[:-1] + edges[1:]))[:, None] + half * _GL_NODES
    return nodes.ravel(), (half * _GL_WEIGHTS).ravel()


def _log_phi(x: np.ndarray) -> np.ndarray:
    return -0.5 * x * x - 0.5 * math.log(2.0 * math.pi)


def _log_mixture_ratio(x: np.ndarray, sampling_rate: float, mu: float) -> np.ndarray:
    """log(1 - p + p e^{mu x - mu^2/2}), the PLLR of ((1 - p) N(0,1) + p N(mu,1)) vs N(0,1) (review Sec. 4.1,
    X_i^(1)), overflow-free."""
    exponent = mu * x - 0.5 * mu * mu
    return np.logaddexp(math.log(sampling_rate) + exponent, _log_complement(sampling_rate))


def _log_complement(sampling_rate: float) -> float:
    """log(1 - p), -inf at p = 1 (every record in every batch: the plain Gaussian's loss)."""
    return math.log1p(-sampling_rate) if sampling_rate < 1.0 else -math.inf


def _panel(mu: float) -> float:
    return _PANEL / max(1.0, mu)


def poisson_gaussian_law(sampling_rate: float, mu: float) -> LossLaw:
    """The remove direction of the Poisson-subsampled Gaussian, f_p = p G_mu + (1 - p) Id = T(P, Q) with
    P = N(0, 1), Q = (1 - p) N(0, 1) + p N(mu, 1) (GDP paper Sec. 4, review Sec. 4.1): X^(1) =
    log(1 - p + p e^{mu xi - mu^2/2}), xi ~ P. The add direction f_p^-1 is LossPair.reversed()."""
    nodes, weights = _gauss_legendre(-_TAIL, mu + _TAIL, _panel(mu))
    values = _log_mixture_ratio(nodes, sampling_rate, mu)
    return LossLaw(values, np.log(weights) + _log_phi(nodes))


def fixed_gaussian_law(sampling_rate: float, mu: float) -> LossLaw:
    """C_p(G_mu), fixed-size batches (GDP paper Thm 10, eq. 13), as the symmetric f = T(U[0,1], Q) with
    log|f'| as the loss: on alpha = Phi(-t), t >= mu/2, the f_p piece has loss Z(t) with P-mass phi(t)
    dt, its inverse has loss -Z(t) with P-mass ((1 - p) phi(t) + p phi(t - mu)) dt, and the segment of
    slope -1 has loss 0 with mass (1 - p)(Phi(mu/2) - Phi(-mu/2)); Z(t) = log(1 - p + p e^{mu t - mu^2/2})
    (GDP paper Lemma 4, with the segment)."""
    nodes, weights = _gauss_legendre(0.5 * mu, 0.5 * mu + mu + _TAIL, _panel(mu))
    z = _log_mixture_ratio(nodes, sampling_rate, mu)
    log_inverse = np.logaddexp(
        _log_complement(sampling_rate) + _log_phi(nodes), math.log(sampling_rate) + _log_phi(nodes - mu)
    )
    segment = (1.0 - sampling_rate) * (special.ndtr(0.5 * mu) - special.ndtr(-0.5 * mu))
    values = np.concatenate((z, -z, [0.0]))
    log_masses = np.concatenate(
        (np.log(weights) + _log_phi(nodes), np.log(weights) + log_inverse, [_log_segment(segment)])
    )
    return LossLaw(values, log_masses)


def _log_segment(mass: float) -> float:
    """log of the slope -1 segment's mass, -inf where it has none (p = 1)."""
    return math.log(mass) if mass > 0.0 else -math.inf


def laplace_law(epsilon: float) -> LossLaw:
    """T(Lap(0, 1), Lap(eps, 1)): under P the loss |x| - |x - eps| is -eps with mass 1/2, +eps with mass
    e^-eps/2, and has density e^{-(l + eps)/2}/4 on (-eps, eps) (as in clt.laplace_functionals)."""
    nodes, weights = _gauss_legendre(-epsilon, epsilon, min(_PANEL, epsilon))
    values = np.concatenate((nodes, [-epsilon, epsilon]))
    log_masses = np.concatenate(
        (np.log(0.25 * weights) - 0.5 * (nodes + epsilon), [math.log(0.5), math.log(0.5) - epsilon])
    )
    return LossLaw(values, log_masses)


# ---------------------------------------------------------------------------------------------------
# The Edgeworth expansion and (eps, delta)


def survival(x: ArrayLike, total: Cumulants, order: int = 1) -> ArrayLike:
    """P[S > x] for a sum S with cumulants `total`, by the Edgeworth expansion of the given order (1: the
    skewness term, as in [WGZ+22]; 2: with the kurtosis and squared-skewness terms; 0: the normal)."""
    x = np.asarray(x, dtype=float)
    scale = math.sqrt(total.k2)
    z = (x - total.k1) / scale
    lam3, lam4 = total.k3 / scale**3, total.k4 / scale**4
    correction = np.zeros_like(z)
    if order >= 1:
        correction = correction + lam3 / 6.0 * (z * z - 1.0)
    if order >= 2:
        he3, he5 = z**3 - 3.0 * z, z**5 - 10.0 * z**3 + 15.0 * z
        correction = correction + lam4 / 24.0 * he3 + lam3 * lam3 / 72.0 * he5
    density = np.exp(_log_phi(z))
    return as_output(special.ndtr(-z) + density * correction)


def direction_delta(epsilon: ArrayLike, pair: LossPair, order: int = 1) -> ArrayLike:
    """delta(eps) = P[sum Y > eps] - e^eps P[sum X > eps] (review Prop. 3.2) with both tails from
    `survival`; clipped to [0, 1] (a truncated expansion can leave it). e^eps P[sum X > eps] is taken in
    logs: a tail that underflowed to 0 contributes 0 at every eps, also beyond e^eps's overflow at 709.8
    (inf x 0 read as 0 there made delta 0 and put every epsilon past it at 709.78, where G_1e5's exact
    one is 5e10). Past eps ~ 600 that 0 understates the term (the tail is below 1e-308, e^eps above
    1e260): G_40 at 1e-8 gives 1024.48 where its exact epsilon is 1023.54 (an approximation's figure)."""
    epsilon = np.asarray(epsilon, dtype=float)
    if pair.under_p.k2 <= 0.0:  # no loss at all: the identity trade-off
        return as_output(np.zeros_like(epsilon))
    tail_q = np.asarray(survival(epsilon, pair.under_q, order))
    tail_p = np.asarray(survival(epsilon, pair.under_p, order))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        value = tail_q - np.exp(epsilon + np.log(tail_p))
    value = np.where(np.isnan(value), 0.0, value)
    return as_output(np.clip(value, 0.0, 1.0))


def delta(epsilon: ArrayLike, pairs: Sequence[LossPair], order: int = 1) -> ArrayLike:
    """The Edgeworth delta(eps) of a composition that is dominated, for each neighbouring direction, by
    one of `pairs` (the composed pairs of the remove and add directions): the largest of them."""
    values = [np.asarray(direction_delta(epsilon, pair, order)) for pair in pairs]
    return as_output(np.max(values, axis=0))


def _root(gap: Callable[[float], float]) -> float:
    """The smallest eps >= 0 found with gap(eps) <= 0 by bracketing (doubling) then Brent's method."""
    from scipy import optimize

    if gap(0.0) <= 0.0:
        return 0.0
    hi = 1.0
    while gap(hi) > 0.0:
        hi *= 2.0
        if hi > _EPSILON_CEILING:
            return math.inf
    return float(optimize.brentq(gap, 0.0 if hi == 1.0 else 0.5 * hi, hi, xtol=1e-13, rtol=1e-13))


def _gap(pair: LossPair, target: float, order: int) -> Callable[[float], float]:
    """eps -> direction_delta(eps) - target."""
    return lambda eps: float(direction_delta(eps, pair, order)) - target


def epsilon(deltas: ArrayLike, pairs: Sequence[LossPair], order: int = 1) -> ArrayLike:
    """The Edgeworth eps(delta): for each direction the root of direction_delta(eps) = delta, then the
    largest over the directions (delta is their maximum, each decreasing in eps)."""
    deltas = np.asarray(deltas, dtype=float)
    out = np.empty(deltas.shape)
    for index, target in np.ndenumerate(deltas):
        roots = [_root(_gap(pair, float(target), order)) for pair in pairs]
        out[index] = max(roots)
    return as_output(out)


def _threshold(alpha: np.ndarray, under_p: Cumulants, order: int) -> np.ndarray:
    """The t with P[sum X > t] = alpha (Edgeworth), by vectorized bisection over K1 +- 40 sd."""
    scale = math.sqrt(under_p.k2)
    lo = np.full(alpha.shape, under_p.k1 - _TAIL * scale)
    hi = np.full(alpha.shape, under_p.k1 + _TAIL * scale)
    for _ in range(200):
        middle = 0.5 * (lo + hi)
        above = np.asarray(survival(middle, under_p, order)) > alpha
        lo, hi = np.where(above, middle, lo), np.where(above, hi, middle)
    return 0.5 * (lo + hi)


def direction_tradeoff(alpha: ArrayLike, pair: LossPair, order: int = 1) -> ArrayLike:
    """beta(alpha) of the likelihood-ratio test that rejects when the summed loss exceeds t: alpha =
    P[sum X > t], beta = 1 - P[sum Y > t] (Neyman-Pearson), both tails by `survival`, clipped to [0, 1]."""
    alpha = np.asarray(alpha, dtype=float)
    if pair.under_p.k2 <= 0.0:
        return as_output(1.0 - alpha)
    t = _threshold(alpha, pair.under_p, order)
    beta = 1.0 - np.asarray(survival(t, pair.under_q, order))
    return as_output(np.clip(np.where(alpha >= 1.0, 0.0, beta), 0.0, 1.0))


def tradeoff(alpha: ArrayLike, pairs: Sequence[LossPair], order: int = 1) -> ArrayLike:
    """The Edgeworth trade-off of the composition: the smallest over the directions' (the pointwise
    minimum of f and f^-1 for Poisson sampling; its convex hull is not taken)."""
    values = [np.asarray(direction_tradeoff(alpha, pair, order)) for pair in pairs]
    return as_output(np.min(values, axis=0))


__all__ = [
    "ZERO",
    "Cumulants",
    "LossLaw",
    "LossPair",
    "delta",
    "direction_delta",
    "direction_tradeoff",
    "epsilon",
    "fixed_gaussian_law",
    "gaussian_pair",
    "laplace_law",
    "poisson_gaussian_law",
    "pure_dp_pair",
    "survival",
    "tradeoff",
]
