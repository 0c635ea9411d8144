"""Central limit theorems for composition (Dong, Roth and Su, "Gaussian Differential Privacy", JRSS-B 2022).

For a symmetric trade-off function f = T(P, Q) let L = log|f'(U)| with U uniform on [0, 1]; equivalently L
is the privacy loss log(q/p)(X) with X ~ P. The functionals of Sec. 3.2 are its moments:

    kl(f) = -E L,  kappa2(f) = E L^2,  kappa3(f) = E |L|^3,  kappa3bar(f) = E |L + kl(f)|^3,

and variance(f) = kappa2(f) - kl(f)^2 = Var L, kept as a field of its own because the difference cancels
catastrophically for large losses. From them:

- Theorem 5 (Berry-Esseen): mu = 2 sum kl / sqrt(sum variance), gamma = 0.56 sum kappa3bar /
  (sum variance)^(3/2), and the composition is bounded below by the band max(0, G_mu(alpha + gamma) - gamma).
  The band is rigorous; mu alone is an approximation.
- Theorem 6: the limit is G_{2K/s} with K = sum kl, s^2 = sum kappa2 (an approximation at finite n).
- Theorem 7: (eps_i, delta_i)-DP compose to about G_mu (x) f_{0, delta0}, mu = sqrt(sum eps_i^2).
- Theorem 11: T steps of a mechanism subsampled at rate p ~ nu / sqrt(T) tend to G_mu, with mu from nu and
  the chi-square functionals of the mechanism's f (fixed-size batches; Poisson sampling by the same CLT).
- NoisySGD: Cor. 4 (fixed-size sampling) and the Poisson formula of Su (2024) are approximations;
  Lemma 4 + Cor. 5 give the rigorous Berry-Esseen band for fixed-size sampling.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from gdpcli.core import gdp
from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.normal import Phi, Phi_inv, phi
from gdpcli.core.roots import bracketed_newton
from gdpcli.core.rounding import elementwise, to_safe_side
from gdpcli.errors import ComputationError, parameter

Expectation = Callable[[Callable[[np.ndarray], np.ndarray]], tuple[float, float]]

BERRY_ESSEEN_CONSTANT = 0.56
_SQRT2 = math.sqrt(2.0)
# Relative rounding slack for closed forms and float sums (a few ulps times the terms summed);
# rigorous figures are moved outward by it.
_FLOAT_SLACK = 1e-14
# Relative error allowed for the Laplace closed forms: a few ulps, times the cancellation (at most a
# factor 20) in the alternating sums over the pieces of the continuous part.
_LAPLACE_SLACK = 1e-13
# Safety margins on a delta upper bound from the band (cover rounding in its closed form).
_DELTA_MARGIN = 1e-12
_DELTA_ABSOLUTE = 1e-15
_LOG_MAX = math.log(np.finfo(float).max)  # e^x overflows beyond it (_expm1)
# Quadrature must reach this relative accuracy (estimated by QUADPACK) or a ComputationError is raised.
_QUAD_RTOL = 1e-11
_QUAD_MAX_REL_ERROR = 1e-8


@dataclass(frozen=True)
class Functionals:
    """kl, kappa2, kappa3, kappa3bar and variance = kappa2 - kl^2 of one trade-off function (Sec. 3.2).

    Fields are floats, or arrays for the vectorized closed forms. `rel_error` bounds their relative error
    and `rigorous` says whether that bound is proven: closed forms (exact up to rounding, rel_error the
    rounding allowance) are rigorous; QUADPACK integrals are not (rel_error is its estimate, not a bound).
    """

    kl: ArrayLike
    kappa2: ArrayLike
    kappa3: ArrayLike
    kappa3bar: ArrayLike
    variance: ArrayLike
    rel_error: float = 0.0
    rigorous: bool = True


@dataclass(frozen=True)
class BerryEsseen:
    """mu and gamma of Theorem 5, both rounded up so that the band built from them stays a lower bound.

    The theorem needs gamma < 1/2 (`valid`); for gamma >= 1/2 the band is identically 0 and says nothing.
    `rigorous` is False when some functional came from quadrature without a proven error bound: the band
    is then an approximation, not a bound.
    """

    mu: float
    gamma: float
    rigorous: bool = True

    @property
    def valid(self) -> bool:
        return self.gamma < 0.5


def _arrays(*values: ArrayLike) -> list[np.ndarray]:
    """The arguments as broadcast float arrays."""
    return np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in values))


# ---------------------------------------------------------------------------------------------------
# Functionals: closed forms


def _normal_abs_third_moment(mean: ArrayLike, scale: ArrayLike) -> ArrayLike:
    """E|mean + scale Z|^3 for Z ~ N(0, 1): s^3 ((u^3 + 3u)(2 Phi(u) - 1) + 2 phi(u)(u^2 + 2)), u = mean/s."""
    u = mean / scale
    return scale**3 * ((u**3 + 3.0 * u) * (1.0 - 2.0 * Phi(-u)) + 2.0 * phi(u) * (u * u + 2.0))


def gaussian_functionals(mu: ArrayLike) -> Functionals:
    """Functionals of G_mu (GDP paper Sec. 3.2), exact: the privacy loss under P is N(-mu^2/2, mu^2).

    kl = mu^2/2, kappa2 = mu^2 + mu^4/4, variance = mu^2, kappa3bar = 2 sqrt(2/pi) mu^3 and
    kappa3 = E|N(-mu^2/2, mu^2)|^3 (closed form of the absolute third moment of a normal).
    """
    mu = np.asarray(mu, dtype=float)
    safe_mu = np.where(mu > 0, mu, 1.0)
    kappa3 = np.where(mu > 0, _normal_abs_third_moment(-0.5 * safe_mu**2, safe_mu), 0.0)
    return Functionals(
        kl=as_output(0.5 * mu**2),
        kappa2=as_output(mu**2 + 0.25 * mu**4),
        kappa3=as_output(kappa3),
        kappa3bar=as_output(2.0 * math.sqrt(2.0 / math.pi) * mu**3),
        variance=as_output(mu**2),
    )


def pure_dp_functionals(epsilon: ArrayLike) -> Functionals:
    """Functionals of f_{eps,0} (pure eps-DP, randomized response), exact (GDP paper Sec. 3.2-3.3).

    The loss is -eps with probability e^eps/(1+e^eps) and +eps otherwise, so with t = tanh(eps/2):
    kl = eps t, kappa2 = eps^2, kappa3 = eps^3, variance = eps^2 / cosh^2(eps/2) and
    kappa3bar = eps^3 (1 - t^4) = eps^3 (1 + t^2) / cosh^2(eps/2).
    """
    epsilon = np.asarray(epsilon, dtype=float)
    t = np.tanh(0.5 * epsilon)
    sech2 = 1.0 / np.cosh(0.5 * epsilon) ** 2
    return Functionals(
        kl=as_output(epsilon * t),
        kappa2=as_output(epsilon**2),
        kappa3=as_output(epsilon**3),
        kappa3bar=as_output(epsilon**3 * (1.0 + t * t) * sech2),
        variance=as_output(epsilon**2 * sech2),
    )


@dataclass(frozen=True)
class Divergences:
    """KL(P || Q), chi2(P || Q) and the squared Hellinger distance of a symmetric dominating pair (P, Q) of
    trade-off function f = T(P, Q), as functionals of f (|f'| = q/p at the test's threshold, X ~ P):

        kl = -int_0^1 log|f'(x)| dx (GDP paper Sec. 3.2),   chi2 = int_0^1 |f'(x)|^{-1} dx - 1 = e^{D_2} - 1,
        hellinger = 1 - int_0^1 |f'(x)|^{1/2} dx = 1/2 int (sqrt p - sqrt q)^2 (the convention with 1/2).

    `exact` says whether they are closed forms (else a quadrature, an approximation); `finite` whether kl
    and chi2 are (then an inf is one beyond the float range, e.g. chi2 = e^{mu^2} - 1 at mu 2e5)."""

    kl: float
    chi2: float
    hellinger: float
    exact: bool = True
    finite: bool = True

    def composed(self, times: int) -> Divergences:
        """Of the `times`-fold product pair: kl adds, 1 + chi2 and 1 - hellinger multiply (a product beyond
        the floats is inf, and hellinger 1 stays 1)."""
        with np.errstate(over="ignore", divide="ignore"):
            return Divergences(
                times * self.kl,
                float(np.expm1(times * np.log1p(self.chi2))),
                float(-np.expm1(times * np.log1p(-self.hellinger))),
                self.exact,
                self.finite,
            )


def _expm1(x: float) -> float:
    """e^x - 1, +inf where it passes the floats (math.expm1 raises OverflowError there: chi2 of mu 2e5)."""
    return math.expm1(x) if x < _LOG_MAX else math.inf


def gaussian_divergences(mu: float) -> Divergences:
    """(N(0, 1), N(mu, 1)): kl = mu^2 / 2, chi2 = e^{mu^2} - 1, hellinger = 1 - e^{-mu^2 / 8}."""
    return Divergences(0.5 * mu * mu, _expm1(mu * mu), -math.expm1(-mu * mu / 8.0))


def eps_delta_divergences(epsilon: float, delta: float) -> Divergences:
    """The pair of f_{eps,delta} (GDP paper eq. 4): P = (delta, (1-delta) e^eps/(1+e^eps),
    (1-delta)/(1+e^eps), 0), Q its mirror image. kl = eps tanh(eps/2) and chi2 = 4 sinh^2(eps/2) when
    delta = 0 (the atom of P where Q has none makes both infinite otherwise);
    hellinger = 1 - (1 - delta) / cosh(eps/2)."""
    half = 0.5 * epsilon
    cosh = math.cosh(half) if half < _LOG_MAX else math.inf
    if delta > 0.0:
        return Divergences(math.inf, math.inf, 1.0 - (1.0 - delta) / cosh, finite=False)
    sinh_squared = math.sinh(half) ** 2 if half < 0.5 * _LOG_MAX else math.inf
    return Divergences(epsilon * math.tanh(half), 4.0 * sinh_squared, 1.0 - 1.0 / cosh)


def laplace_divergences(epsilon: float) -> Divergences:
    """(Lap(0, 1), Lap(eps, 1)): kl = eps + e^{-eps} - 1, chi2 = e^{D_2} - 1 = 2/3 e^eps + 1/3 e^{-2 eps} - 1
    (Mironov 2017 Table II at order 2), hellinger = 1 - (1 + eps/2) e^{-eps/2} (int sqrt(pq) piecewise)."""
    return Divergences(
        epsilon + math.expm1(-epsilon),
        (2.0 * _expm1(epsilon) + math.expm1(-2.0 * epsilon)) / 3.0,
        1.0 - (1.0 + 0.5 * epsilon) * math.exp(-0.5 * epsilon),
    )


# ---------------------------------------------------------------------------------------------------
# Functionals: quadrature


def _quad(
    integrand: Callable[[float], float], lo: float, hi: float, points: Sequence[float] = ()
) -> tuple[float, float]:
    """QUADPACK integral of a scalar integrand with its error estimate (points only on finite ranges)."""
    kwargs = {"points": [x for x in points if lo < x < hi]} if np.isfinite(hi) and points else {}
    from scipy import integrate

    with warnings.catch_warnings():  # the callers judge the error estimate themselves
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        value, error = integrate.quad(integrand, lo, hi, epsabs=0.0, epsrel=_QUAD_RTOL, limit=400, **kwargs)
    return value, error


def _from_moments(expect: Expectation) -> Functionals:
    """The five functionals from expect(g) = (E g(L), error estimate) for the privacy loss L."""
    kl, kl_err = expect(lambda x: x)
    kl = max(-kl, 0.0)  # kl >= 0 mathematically (a KL divergence); clip rounding-level negatives
    results = [
        expect(np.square),
        expect(lambda x: np.abs(x) ** 3),
        expect(lambda x: np.abs(x + kl) ** 3),
        expect(lambda x: np.square(x + kl)),
    ]
    values = [kl] + [value for value, _ in results]
    errors = [kl_err] + [error for _, error in results]
    rel_error = max(
        (e / v if v > 0 else (0.0 if e == 0 else math.inf)) for v, e in zip(values, errors, strict=True)
    )
    if rel_error > _QUAD_MAX_REL_ERROR:
        raise ComputationError(
            f"quadrature of the CLT functionals did not converge (relative error {rel_error:.1e})",
            f"the trade-off function may be too irregular; try {parameter('method')} pld",
        )
    kappa2, kappa3, kappa3bar, variance = values[1:]
    floats = (float(v) for v in (kl, kappa2, kappa3, kappa3bar, variance))
    return Functionals(*floats, rel_error=float(rel_error), rigorous=False)


def _exponential_moments(order: int, width: float) -> list[float]:
    """J_j = int_0^width s^j e^{-s/2} ds = 2^{j+1} j! P(j + 1, width/2) for j = 0..order (P the regularized
    lower incomplete gamma function, accurate to a few ulps relative even for tiny widths)."""
    return [
        2.0 ** (j + 1) * math.factorial(j) * float(special.gammainc(j + 1, 0.5 * width))
        for j in range(order + 1)
    ]


def _laplace_piece(power: int, shift: float, lo: float, hi: float, epsilon: float, absolute: bool) -> float:
    """int_lo^hi (l + shift)^power e^{-(l + eps)/2} / 4 dl (|l + shift| if absolute; the sign of l + shift
    must be constant on [lo, hi]), exactly: with l = lo + s and c = lo + shift, expand (c + s)^power
    binomially over the moments J_j of _exponential_moments."""
    if hi <= lo:
        return 0.0
    c = lo + shift
    moments = _exponential_moments(power, hi - lo)
    value = math.fsum(math.comb(power, j) * c ** (power - j) * moments[j] for j in range(power + 1))
    value *= 0.25 * math.exp(-0.5 * (lo + epsilon))
    return abs(value) if absolute else value


def _laplace_expectation(power: int, shift: float, epsilon: float, absolute: bool) -> float:
    """E (L + shift)^power (or E |L + shift|^power) for the Laplace privacy loss L (see laplace_functionals):
    the two atoms plus the continuous part split where l + shift changes sign."""

    def g(x: float) -> float:
        return abs(x + shift) ** power if absolute else (x + shift) ** power

    atoms = 0.5 * g(-epsilon) + 0.5 * math.exp(-epsilon) * g(epsilon)
    kink = min(max(-shift, -epsilon), epsilon) if absolute else -epsilon
    pieces = _laplace_piece(power, shift, -epsilon, kink, epsilon, absolute) + _laplace_piece(
        power, shift, kink, epsilon, epsilon, absolute
    )
    return math.fsum((atoms, pieces))


def laplace_functionals(epsilon: float) -> Functionals:
    """Functionals of T(Lap(0, 1), Lap(eps, 1)), the Laplace mechanism with sens/b = eps, in closed form.

    Under P = Lap(0, 1) the loss |x| - |x - eps| is -eps with probability 1/2, +eps with probability
    e^-eps / 2, and 2x - eps for x in (0, eps), i.e. density e^{-(l + eps)/2} / 4 on (-eps, eps). Every
    functional is E h(L) with h(l) = (l + k)^n or |l + k|^n (n <= 3, k = 0 or kl): the atoms give two
    terms, and on each piece of (-eps, eps) where l + k keeps its sign, h times the density is a
    polynomial times an exponential, integrated exactly through incomplete gamma functions. kl = eps - 1 +
    e^-eps (its series for eps < 1, where the closed form cancels). Exact up to rounding: rigorous,
    with rel_error the rounding allowance _LAPLACE_SLACK.
    """
    if epsilon < 1.0:  # eps - 1 + e^-eps = sum_{j >= 2} (-eps)^j / j!, terms below 1e-25 after j = 25
        kl = math.fsum((-epsilon) ** j / math.factorial(j) for j in range(2, 26))
    else:
        kl = epsilon + math.expm1(-epsilon)
    return Functionals(
        kl=kl,
        kappa2=_laplace_expectation(2, 0.0, epsilon, absolute=False),
        kappa3=_laplace_expectation(3, 0.0, epsilon, absolute=True),
        kappa3bar=_laplace_expectation(3, kl, epsilon, absolute=True),
        variance=_laplace_expectation(2, kl, epsilon, absolute=False),
        rel_error=_LAPLACE_SLACK,
    )


def _log_subsampled_ratio(x: np.ndarray, sampling_rate: float, mu: float) -> np.ndarray:
    """Z(x) = log(p e^{mu x - mu^2/2} + 1 - p) of GDP paper Lemma 4, overflow-free."""
    exponent = mu * x - 0.5 * mu * mu
    small = np.log1p(sampling_rate * np.expm1(np.minimum(exponent, 30.0)))
    large = np.logaddexp(np.log(sampling_rate) + exponent, np.log1p(-sampling_rate))
    return np.where(exponent < 30.0, small, large)


def subsampled_gaussian_functionals(sampling_rate: float, mu: float) -> Functionals:
    """Functionals of C_p(G_mu), the p-subsampled mu-GDP mechanism (GDP paper Lemma 4).

    C_p(G_mu) has three pieces (eq. 13): f_p = p G_mu + (1 - p) Id on [0, x*] with x* = Phi(-mu/2), where
    log|f'| = Z(t) at alpha = Phi(-t), t >= mu/2; its inverse, where log|f'| = -Z(t) with weight
    (1 - p) phi(t) + p phi(t - mu); and a segment of slope -1 (log|f'| = 0) of length
    (1 - p)(Phi(mu/2) - Phi(-mu/2)). Lemma 4 omits that segment; it adds kl^3 (1 - p)(2 Phi(mu/2) - 1) to
    kappa3bar, which is included here. Numerical: `rel_error` is QUADPACK's error estimate.
    """
    if sampling_rate == 0.0 or mu == 0.0:
        return gaussian_functionals(0.0)
    if sampling_rate == 1.0:
        return gaussian_functionals(mu)
    start = 0.5 * mu
    segment = (1.0 - sampling_rate) * (Phi(start) - Phi(-start))

    def expect(g: Callable[[np.ndarray], np.ndarray]) -> tuple[float, float]:
        def integrand(t: float) -> float:
            z = _log_subsampled_ratio(t, sampling_rate, mu)
            weight_inverse = (1.0 - sampling_rate) * phi(t) + sampling_rate * phi(t - mu)
            return float(g(z) * phi(t) + g(-z) * weight_inverse)

        value, error = _quad(integrand, start, math.inf)
        return value + segment * float(g(0.0)), error

    return _from_moments(expect)


# ---------------------------------------------------------------------------------------------------
# Theorems 5, 6, 7


def _totals(functionals: Sequence[Functionals], times: Sequence[int] | None, *names: str) -> list[float]:
    """sum_i times_i * field_i for each named field, summed exactly (math.fsum)."""
    counts = [1] * len(functionals) if times is None else list(times)
    return [
        math.fsum(
            x
            for f, count in zip(functionals, counts, strict=True)
            for x in np.ravel(count * np.asarray(getattr(f, name), dtype=float)).tolist()
        )
        for name in names
    ]


def composed(functionals: Sequence[Functionals], times: Sequence[int] | None = None) -> Functionals:
    """The functionals summed over the composition, sum_i times_i * functional(f_i) (the ||.||_1 of Theorem
    5; Theorem 6's K and s^2 are the sums of kl and kappa2), with the largest relative error among them."""
    return Functionals(
        *_totals(functionals, times, "kl", "kappa2", "kappa3", "kappa3bar", "variance"),
        rel_error=max((f.rel_error for f in functionals), default=0.0),
        rigorous=all(f.rigorous for f in functionals),
    )


def berry_esseen(functionals: Sequence[Functionals], times: Sequence[int] | None = None) -> BerryEsseen:
    """Theorem 5 of the GDP paper for f_1 (x) ... (x) f_n (symmetric f_i, kappa3(f_i) < infinity).

        mu = 2 ||kl||_1 / sqrt(||kappa2||_1 - ||kl||_2^2),  gamma = 0.56 ||kappa3bar||_1 / (...)^(3/2),

    with ||kappa2||_1 - ||kl||_2^2 = sum variance. `times[i]` repeats f_i (self-composition). Each
    functional is moved outward by its relative error bound (plus float slack for the sums) so that mu and
    gamma are upper bounds and the band max(0, G_mu(alpha + gamma) - gamma) a lower bound on the
    composition. That is a proof only when every functional is rigorous (closed forms); with a quadrature
    among them the result says `rigorous=False` and the band is an approximation.
    """
    slack = max((f.rel_error for f in functionals), default=0.0) + _FLOAT_SLACK
    rigorous = all(f.rigorous for f in functionals)
    kl, variance, kappa3bar = _totals(functionals, times, "kl", "variance", "kappa3bar")
    if variance == 0.0 and kl == 0.0:
        return BerryEsseen(0.0, 0.0, rigorous)
    variance_low = variance * (1.0 - slack)
    if not variance_low > 0.0:
        raise ComputationError("the privacy-loss variance underflows", "Theorem 5 does not apply")
    mu = 2.0 * kl * (1.0 + slack) / math.sqrt(variance_low)
    gamma = BERRY_ESSEEN_CONSTANT * kappa3bar * (1.0 + slack) / variance_low**1.5
    return BerryEsseen(float(mu * (1.0 + _FLOAT_SLACK)), float(gamma * (1.0 + _FLOAT_SLACK)), rigorous)


def limit_mu(functionals: Sequence[Functionals], times: Sequence[int] | None = None) -> float:
    """Theorem 6 of the GDP paper: the composition tends to G_{2K/s}, K = sum kl, s^2 = sum kappa2.

    An approximation at finite n (the limit statement gives no error bound; Theorem 5 does).
    """
    total = composed(functionals, times)
    return 2.0 * total.kl / math.sqrt(total.kappa2) if total.kappa2 > 0 else 0.0


def dp_composition(epsilons: ArrayLike, deltas: ArrayLike) -> tuple[float, float]:
    """Theorem 7 of the GDP paper: (eps_i, delta_i)-DP mechanisms compose to about G_mu (x) f_{0, delta0}.

    mu = sqrt(sum eps_i^2) is the CLT approximation of the eps part f_{eps_1,0} (x) ... (x) f_{eps_n,0};
    the delta part is exact at finite n, delta0 = 1 - prod(1 - delta_i) (eq. 11), which is no smaller
    than the limit 1 - exp(-sum delta_i) of the theorem.
    """
    epsilons, deltas = _arrays(epsilons, deltas)
    delta0 = -math.expm1(math.fsum(np.log1p(-deltas).ravel().tolist()))
    return gdp.compose(epsilons), delta0


def _with_uniform(delta_f: ArrayLike, delta0: ArrayLike) -> ArrayLike:
    """delta(eps) of f (x) f_{0, delta0} from delta_f(eps) of f: delta0 + (1 - delta0) delta_f (eq. 12)."""
    return delta0 + (1.0 - delta0) * delta_f


def _without_uniform(delta: ArrayLike, delta0: ArrayLike) -> ArrayLike:
    """The delta_f that f itself must reach for f (x) f_{0, delta0} to reach delta (inverse of eq. 12)."""
    return (delta - delta0) / (1.0 - delta0)


def uniform_delta(epsilon: ArrayLike, mu: ArrayLike, delta0: ArrayLike = 0.0) -> ArrayLike:
    """delta(eps) of G_mu (x) f_{0, delta0}, the Theorem 7 approximation (eq. 12 with Cor. 1)."""
    return as_output(np.asarray(_with_uniform(gdp.delta(epsilon, mu), delta0)))


def uniform_epsilon(delta: ArrayLike, mu: ArrayLike, delta0: ArrayLike = 0.0) -> ArrayLike:
    """The smallest eps >= 0 with delta(eps) of G_mu (x) f_{0, delta0} <= delta; inf if delta <= delta0."""
    delta, mu, delta0 = _arrays(delta, mu, delta0)
    reachable = delta > delta0
    target = np.where(reachable, _without_uniform(delta, delta0), 0.5)
    eps = np.asarray(gdp.epsilon(target, mu), dtype=float)

    def met(
        epsilon: np.ndarray, m: np.ndarray, d: np.ndarray, d0: np.ndarray, skip: np.ndarray
    ) -> np.ndarray:
        return skip | (np.asarray(uniform_delta(epsilon, m, d0)) <= d)

    holds = elementwise(met, mu, delta, delta0, ~reachable)
    eps = to_safe_side(eps, holds, "up", what="uniform_epsilon")  # the target's own rounding
    return as_output(np.where(reachable, eps, np.inf))


# ---------------------------------------------------------------------------------------------------
# The Berry-Esseen band and its (eps, delta) conversions


def band_tradeoff(alpha: ArrayLike, mu: ArrayLike, gamma: ArrayLike, delta0: ArrayLike = 0.0) -> ArrayLike:
    """Rigorous lower bound on the composed trade-off function: (1 - delta0) b(alpha / (1 - delta0)).

    b(a) = max(0, G_mu(a + gamma) - gamma) is Theorem 5 / Cor. 5 of the GDP paper, with G_mu = 0 beyond 1.
    The factor for delta0 > 0 tensors the band with f_{0, delta0} (eq. 12), which keeps it a lower bound
    because (x) is monotone; the (eps_i, delta_i) lists of Sec. 3.3 use it.
    """
    alpha, mu, gamma, delta0 = _arrays(alpha, mu, gamma, delta0)
    shifted = np.minimum(alpha / (1.0 - delta0) + gamma, 1.0)
    return as_output((1.0 - delta0) * np.maximum(gdp.tradeoff(shifted, mu) - gamma, 0.0))


def band_delta(epsilon: ArrayLike, mu: ArrayLike, gamma: ArrayLike, delta0: ArrayLike = 0.0) -> ArrayLike:
    """Rigorous upper bound on delta(eps) of the composition: the convex conjugate of the band.

    With u = alpha + gamma, sup_alpha 1 - e^eps alpha - b(alpha) = gamma (1 + e^eps) + max of the concave
    1 - e^eps u - G_mu(u) over u in [gamma, G_mu(gamma)] (where b > 0; beyond it b = 0 and the objective
    only decreases). The unconstrained maximiser is u* = Phi(-eps/mu - mu/2) with value delta_mu(eps)
    (GDP paper Cor. 1), so, clipping u*, the conjugate is exactly
        u* in range:      gamma (1 + e^eps) + delta_mu(eps)
        u* < gamma:       1 - b(0) = gamma + Phi(Phi^-1(gamma) + mu)    (its floor for large eps)
        u* > G_mu(gamma): 1 - e^eps (G_mu(gamma) - gamma)
    and 1 when b = 0 everywhere. It is raised by a relative 1e-12 (plus 1e-15 in the last case, whose
    form cancels) for rounding, and capped at 1.
    """
    epsilon, mu, gamma, delta0 = _arrays(epsilon, mu, gamma, delta0)
    upper = gdp.tradeoff(np.minimum(gamma, 1.0), mu)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        u_star = np.where(mu > 0, Phi(-epsilon / mu - 0.5 * mu), np.where(epsilon > 0, 0.0, 1.0))
        growth = np.exp(epsilon)
        interior = np.where(gamma > 0, gamma * (1.0 + growth), 0.0) + gdp.delta(epsilon, mu)
        left = u_star > upper
        delta_band = np.select(
            [upper <= gamma, u_star < gamma, left],
            [1.0, gamma + Phi(Phi_inv(np.minimum(gamma, 1.0)) + mu), 1.0 - growth * (upper - gamma)],
            interior,
        )
    # 1 - growth (upper - gamma) >= gamma carries an absolute rounding error of a few 1e-16
    bound = _with_uniform(delta_band, delta0) * (1.0 + _DELTA_MARGIN) + np.where(left, _DELTA_ABSOLUTE, 0.0)
    return as_output(np.minimum(bound, 1.0))


def band_epsilon(delta: ArrayLike, mu: ArrayLike, gamma: ArrayLike, delta0: ArrayLike = 0.0) -> ArrayLike:
    """Rigorous upper bound on eps(delta) of the composition: the smallest eps >= 0 with band_delta <= delta.

    band_delta is non-increasing in eps with floor delta0 + (1 - delta0)(1 + gamma - G_mu(gamma)) reached at
    eps_c = mu (Phi^-1(1 - gamma) - mu/2); below the floor no finite eps is certified and inf is returned
    (the band is vacuous there). Safeguarded Newton on [0, eps_c] with slope -e^eps (u* - gamma), then the
    root is moved up to the nearest float at which band_delta(eps) <= delta holds as computed
    (core.rounding). For gamma = 0 (the
    band is G_mu) the bracket is mu (mu/2 - Phi^-1(delta')) as in gdp.epsilon, delta' the target of G_mu.
    """
    delta, mu, gamma, delta0 = _arrays(delta, mu, gamma, delta0)
    floor = band_delta(np.inf, mu, gamma, delta0)
    at_zero = band_delta(0.0, mu, gamma, delta0)
    solve = (delta >= floor) & (at_zero > delta)
    safe_mu = np.where(solve, mu, 1.0)
    safe_gamma = np.where(solve, gamma, 0.1)
    gaussian_target = np.clip(_without_uniform(delta / (1.0 + _DELTA_MARGIN), delta0), 1e-300, 1.0)
    hi = np.where(
        safe_gamma > 0,
        safe_mu * (Phi_inv(1.0 - safe_gamma) - 0.5 * safe_mu),
        safe_mu * (0.5 * safe_mu - Phi_inv(gaussian_target)),
    )
    hi = np.where(solve, np.maximum(hi, 0.0), 1.0)

    def gap(eps: np.ndarray) -> np.ndarray:
        return np.where(solve, band_delta(eps, safe_mu, safe_gamma, delta0) - delta, -eps - 1.0)

    def slope(eps: np.ndarray) -> np.ndarray:
        u_star = Phi(-eps / safe_mu - 0.5 * safe_mu)
        return -(1.0 - delta0) * np.exp(eps) * np.maximum(u_star - safe_gamma, 0.0)

    def met(epsilon: np.ndarray, m: np.ndarray, g: np.ndarray, d0: np.ndarray, d: np.ndarray) -> np.ndarray:
        return np.asarray(band_delta(epsilon, m, g, d0)) <= d

    eps = bracketed_newton(gap, slope, np.zeros_like(hi), hi)
    holds = elementwise(met, safe_mu, safe_gamma, delta0, np.where(solve, delta, 1.0))
    eps = to_safe_side(eps, holds, "up", what="band_epsilon")
    eps = np.where(delta < floor, np.inf, np.where(at_zero <= delta, 0.0, eps))
    return as_output(eps)


# ---------------------------------------------------------------------------------------------------
# Subsampling: Theorem 11 (GDP paper Sec. 5.2)


@dataclass(frozen=True)
class ChiSquare:
    """The chi-square functionals of a symmetric trade-off function f with f(0) = 1 (GDP paper Sec. 5.2):

        chi2(f) = int_0^1 (|f'(x)| - 1)^2 dx,    chi2_plus(f) = int_0^1 (|f'(x)| - 1)_+^2 dx  (Theorem 11).

    For f = T(P, Q), |f'| is the likelihood ratio L = q/p at the test's threshold, so chi2(f) = E_P (L - 1)^2
    is the chi-square divergence of Q from P and chi2_plus(f) = E_P (L - 1)_+^2 its part where L > 1.
    `rel_error` is QUADPACK's error estimate where they come from quadrature (not a bound), else 0.
    """

    chi2: ArrayLike
    chi2_plus: ArrayLike
    rel_error: float = 0.0


def _chi2_plus_gaussian(mu: ArrayLike) -> ArrayLike:
    """chi^2_+(G_mu) = e^{mu^2} Phi(3mu/2) + 3 Phi(-mu/2) - 2 (GDP paper Lemma 3), cancellation-free form:

    expm1(mu^2) Phi(3mu/2) + (erf(3mu/(2 sqrt 2)) - 3 erf(mu/(2 sqrt 2))) / 2.
    """
    mu = np.asarray(mu, dtype=float)
    half_erf_difference = 0.5 * (special.erf(1.5 * mu / _SQRT2) - 3.0 * special.erf(0.5 * mu / _SQRT2))
    with np.errstate(over="ignore"):  # (inf beyond the floats, mu > 26.6: the value's limit)
        return np.expm1(mu * mu) * Phi(1.5 * mu) + half_erf_difference


def gaussian_chi_square(mu: ArrayLike) -> ChiSquare:
    """chi2(G_mu) = e^{mu^2} - 1 (the chi-square divergence of N(mu, 1) from N(0, 1)) and chi2_plus(G_mu) of
    GDP paper Lemma 3, in closed form."""
    mu = np.asarray(mu, dtype=float)
    with np.errstate(over="ignore"):  # (inf beyond the floats, as in _chi2_plus_gaussian)
        chi2 = np.expm1(mu * mu)
    return ChiSquare(as_output(chi2), as_output(_chi2_plus_gaussian(mu)))


_PROFILE_LEVELS = np.array([1e-1, 1e-2, 1e-4, 1e-8, 1e-16, 1e-32, 1e-64, 1e-128, 1e-300])
"""delta levels whose epsilons split the chi-square integrals (the profile's scale); the last ends them."""
_PROFILE_END = 700.0  # e^eps overflows beyond ~709
_CHI_SQUARE_MAX_REL_ERROR = 1e-3
"""The quadrature error (estimate) accepted for the chi-square functionals: they feed a CLT limit only,
whose own error at finite T is far larger (kinked profiles, e.g. the discrete Gaussian's, reach ~1e-5)."""


def chi_square_from_profile(profile: Callable[[ArrayLike], ArrayLike], end: float | None = None) -> ChiSquare:
    """chi2(f) and chi2_plus(f) of a symmetric f with f(0) = 1 from its privacy profile, by quadrature.

    The profile is the hockey-stick divergence delta(eps) = E_P (L - e^eps)_+ (GDP paper Prop. 5/6), and
    (L - 1)_+^2 = 2 int_1^inf (L - g)_+ dg, so with g = e^eps
        chi2_plus(f) = 2 int_0^inf e^eps delta(eps) deps;
    for g < 1, E_P (g - L)_+ = g H_{1/g}(P || Q) = g delta(-log g) (f symmetric), so
        chi2(f) - chi2_plus(f) = E_P (1 - L)_+^2 = 2 int_0^inf e^{-2 eps} delta(eps) deps,
    both sums of positive terms. The integrals stop at `end` (a pure eps-DP profile vanishes beyond its
    eps), else where delta falls below 1e-300, split where it crosses 1e-1, 1e-2, 1e-4, ... .
    ComputationError when delta stays above 1e-300 up to eps = 700 (f(0) < 1, or chi2 overflows) or the
    quadrature does not reach _CHI_SQUARE_MAX_REL_ERROR.
    """
    from gdpcli.core.tradeoff import epsilon_from_profile

    levels = _PROFILE_LEVELS[_PROFILE_LEVELS < float(profile(0.0))]  # those crossed at some eps > 0
    marks = np.asarray(epsilon_from_profile(profile, levels, ceiling=_PROFILE_END), dtype=float)
    stop = end if end is not None else (float(marks[-1]) if marks.size else 0.0)
    if not math.isfinite(stop) or stop >= _PROFILE_END:
        raise ComputationError(
            "the chi-square functionals of Theorem 11 are infinite or overflow for this mechanism",
            "they need f(0) = 1 and a privacy profile that falls faster than e^-eps; use "
            f"{parameter('method')} pld",
        )
    splits = [float(x) for x in marks[:-1]]

    def integral(weight: Callable[[float], float]) -> tuple[float, float]:
        value, error = _quad(lambda e: 2.0 * weight(e) * float(profile(e)), 0.0, stop, splits)
        return value, (error / value if value > 0 else 0.0)

    plus, plus_error = integral(math.exp)
    minus, minus_error = integral(lambda e: math.exp(-2.0 * e))
    rel_error = max(plus_error, minus_error)
    if rel_error > _CHI_SQUARE_MAX_REL_ERROR:
        raise ComputationError(
            f"quadrature of the chi-square functionals did not converge (relative error {rel_error:.1e})",
            f"use {parameter('method')} pld",
        )
    return ChiSquare(plus + minus, plus, rel_error)


def subsampling_limit_mu(
    sampling_rate: ArrayLike, steps: ArrayLike, chi_square: ChiSquare, *, fixed: bool
) -> ArrayLike:
    """The mu that T steps of an f-DP mechanism on samples at rate p tend to as T -> inf with p sqrt(T) -> nu.

    fixed=True, fixed-size batches (C_p(f) per step, Thm 9): GDP paper Theorem 11,
        C_p(f)^{(x)T} -> G_mu,  mu = p sqrt(T) sqrt(2 chi2_plus(f)).
    fixed=False, Poisson sampling (f_p = p f + (1 - p) Id in the remove direction, its inverse in the add
    direction): mu = p sqrt(T chi2(f)), Su (2024, DP-SGD section) for f = G_{1/sigma}, where chi2 =
    e^{1/sigma^2} - 1. For a general f it follows as there: log|f_p'| = log(1 + p g) with g = |f'| - 1 and
    int g = f(0) - 1 - f(1) = 0, so the summed privacy loss under P has mean -T p^2 chi2 / 2 + O(T p^3)
    and variance T p^2 chi2 + O(T p^3), and the CLT behind Theorem 6 gives G_{nu sqrt(chi2)} (the inverse
    of G_mu is G_mu, so both directions agree). Both are approximations with no rigorous direction.
    Vectorized over p and T.
    """
    p, steps = _arrays(sampling_rate, steps)
    if fixed:
        return as_output(math.sqrt(2.0) * p * np.sqrt(steps * chi_square.chi2_plus))
    return as_output(p * np.sqrt(steps * chi_square.chi2))


# ---------------------------------------------------------------------------------------------------
# NoisySGD (GDP paper Sec. 5)


def sgd_mu_fixed(sampling_rate: ArrayLike, steps: ArrayLike, noise_multiplier: ArrayLike) -> ArrayLike:
    """Cor. 4 of the GDP paper (fixed-size batches, p = m/n): NoisySGD is asymptotically mu-GDP with

        mu = sqrt(2) p sqrt(T) sqrt(e^{sigma^-2} Phi(1.5/sigma) + 3 Phi(-0.5/sigma) - 2).

    An approximation (a limit as p sqrt(T) -> c) with no reliable direction: for the GDP paper's MNIST run
    (sigma 1.1, T = 14063) it gives epsilon 3.0868 at delta 1e-5, above the rigorous interval [3.0684,
    3.0693] for Thm 10's C_p(G_{1/sigma})^{(x)T}, while the Poisson formula is below its interval.
    `noise_multiplier` is the noise in units of the step's sensitivity (the paper's sigma).
    """
    p, steps, sigma = _arrays(sampling_rate, steps, noise_multiplier)
    return subsampling_limit_mu(p, steps, gaussian_chi_square(1.0 / sigma), fixed=True)


def sgd_mu_poisson(sampling_rate: ArrayLike, steps: ArrayLike, noise_multiplier: ArrayLike) -> ArrayLike:
    """Poisson-sampled DP-SGD is approximately mu-GDP, mu = p sqrt(T (e^{1/sigma^2} - 1)).

    Su, "A Statistical Viewpoint on Differential Privacy" (2024), Sec. on DP-SGD (Bu et al. 2020): a CLT
    approximation with no rigorous direction.
    """
    p, steps, sigma = _arrays(sampling_rate, steps, noise_multiplier)
    return subsampling_limit_mu(p, steps, gaussian_chi_square(1.0 / sigma), fixed=False)


def sgd_berry_esseen(sampling_rate: float, steps: int, noise_multiplier: float) -> BerryEsseen:
    """Cor. 5 of the GDP paper: NoisySGD with fixed-size batches is max(0, G_mu~(alpha + gamma) - gamma)-DP.

    mu~ = 2 sqrt(T) kl / sqrt(kappa2 - kl^2), gamma = 0.56 kappa3bar / (sqrt(T) (kappa2 - kl^2)^(3/2)),
    the functionals of C_p(G_{1/sigma}) from Lemma 4 (per step). The band is rigorous, but for DP-SGD it is
    usually vacuous at small delta: band_delta >= 2 gamma for every eps.
    """
    functionals = subsampled_gaussian_functionals(sampling_rate, 1.0 / noise_multiplier)
    return berry_esseen([functionals], [steps])


__all__ = [
    "BERRY_ESSEEN_CONSTANT",
    "BerryEsseen",
    "ChiSquare",
    "Functionals",
    "band_delta",
    "band_epsilon",
    "band_tradeoff",
    "berry_esseen",
    "chi_square_from_profile",
    "composed",
    "dp_composition",
    "gaussian_chi_square",
    "gaussian_functionals",
    "laplace_functionals",
    "limit_mu",
    "pure_dp_functionals",
    "sgd_berry_esseen",
    "sgd_mu_fixed",
    "sgd_mu_poisson",
    "subsampled_gaussian_functionals",
    "subsampling_limit_mu",
    "uniform_delta",
    "uniform_epsilon",
]
