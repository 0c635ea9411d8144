"""Privacy amplification by subsampling (GDP paper Sec. 4; Dong, Roth and Su, JRSS-B 2022).

Notation: f = T(A, B) is the trade-off function of the mechanism without / with the individual, p the
sampling rate, f_p = p f + (1 - p) Id = T(A, (1 - p) A + p B) and C_p(f) = min(f_p, f_p^-1)** (Def. 6).
Profiles follow gdpcli.core.tradeoff: the profile of f = T(P, Q) is delta(eps) = H_{e^eps}(Q || P).
"""

from __future__ import annotations

import numpy as np

from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.gdp import symmetric_point, tradeoff
from gdpcli.core.normal import Phi, Phi_inv, log_Phi
from gdpcli.core.roots import bracketed_newton
from gdpcli.core.tradeoff import Grid, ProfileFn, eps_delta_profile, eps_delta_tradeoff, symmetrize
from gdpcli.errors import InputError

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


def _check_rate(sampling_rate: float) -> float:
    """Validate 0 < p <= 1."""
    if not 0.0 < sampling_rate <= 1.0:
        raise InputError(f"sampling rate must be in (0, 1], got {sampling_rate}")
    return float(sampling_rate)


def mix(grid: Grid, sampling_rate: float) -> Grid:
    """f_p = p f + (1 - p) Id on the same knots (GDP paper Sec. 4.1): the Poisson remove-direction pair."""
    p = _check_rate(sampling_rate)
    return Grid(grid.alpha, p * grid.beta + (1.0 - p) * (1.0 - grid.alpha))


def subsample_grid(grid: Grid, sampling_rate: float) -> Grid:
    """C_p(f) = min(f_p, f_p^-1)** (GDP paper Def. 6, Thm 9), exact for the piecewise-linear interpolant."""
    return symmetrize(mix(grid, sampling_rate))


def _mixture_quantile(alpha: np.ndarray, mu: float, p: float) -> np.ndarray:
    """The c with (1 - p) Phi(-c) + p Phi(mu - c) = 1 - alpha, for alpha in (0, 1).

    Newton on the log of the left side (accurate for alpha near 1), bracketed by
    [Phi^-1(alpha), Phi^-1(alpha) + mu] since Phi(-c) <= left side <= Phi(mu - c).
    """
    log_target = np.log1p(-alpha)

    def log_tail(c: np.ndarray) -> np.ndarray:
        return np.logaddexp(np.log1p(-p) + log_Phi(-c), np.log(p) + log_Phi(mu - c))

    def slope(c: np.ndarray) -> np.ndarray:
        log_density = (
            np.logaddexp(np.log1p(-p) - 0.5 * c * c, np.log(p) - 0.5 * (mu - c) ** 2) - _LOG_SQRT_2PI
        )
        return -np.exp(log_density - log_tail(c))

    lo = Phi_inv(alpha)
    with np.errstate(divide="ignore"):
        return bracketed_newton(lambda c: log_tail(c) - log_target, slope, lo, lo + mu)


def subsampled_gdp_tradeoff(alpha: ArrayLike, mu: float, sampling_rate: float) -> ArrayLike:
    """C_p(G_mu) in closed form, GDP paper eq. (13) with x* = Phi(-mu/2), the fixed point of G_mu:

        f_p(x)                  for x <= x*,
        x* + f_p(x*) - x        for x* <= x <= f_p(x*),
        f_p^-1(x) = Phi(-c)     for x >= f_p(x*), where (1 - p) Phi(c) + p Phi(c - mu) = x.

    The last piece: f_p = T(N(0,1), M) with M = (1 - p) N(0,1) + p N(mu,1), so f_p^-1 = T(M, N(0,1)),
    whose Neyman-Pearson test rejects M when the draw is <= c. That mixture quantile has no closed form;
    it is solved to full precision by bracketed Newton.
    """
    p = _check_rate(sampling_rate)
    alpha = np.asarray(alpha, dtype=float)
    x_star = float(symmetric_point(mu))
    fp_star = p * x_star + (1.0 - p) * (1.0 - x_star)
    mirror = (alpha >= fp_star) & (alpha < 1.0)
    beta_mirror = Phi(-_mixture_quantile(np.where(mirror, alpha, fp_star), mu, p))
    beta = np.where(
        alpha <= x_star, p * tradeoff(alpha, mu) + (1.0 - p) * (1.0 - alpha), x_star + fp_star - alpha
    )
    beta = np.where(alpha >= fp_star, np.where(mirror, beta_mirror, 0.0), beta)
    return as_output(beta)


def subsampled_eps_delta(epsilon: float, delta: float, sampling_rate: float) -> tuple[float, float]:
    """Classical amplification (GDP paper Lemma 2, Ullman 2017).

    eps' = log(1 - p + p e^eps) (log1p(p expm1(eps)) for small eps, logaddexp beyond, where expm1 would
    overflow) and delta' = p delta.
    """
    p = _check_rate(sampling_rate)
    if epsilon < 1.0:
        return float(np.log1p(p * np.expm1(epsilon))), p * delta
    return float(np.logaddexp(np.log1p(-p) if p < 1 else -np.inf, np.log(p) + epsilon)), p * delta


def subsampled_eps_delta_tradeoff(
    alpha: ArrayLike, epsilon: float, delta: float, sampling_rate: float
) -> ArrayLike:
    """C_p(f_{eps,delta}) = max(f_{eps',delta'}(alpha), 1 - p delta(0) - alpha) (GDP paper Cor. 3, fixed).

    delta(0) = delta + (1 - delta) tanh(eps/2) is the profile of f_{eps,delta} at 0. From eq. (13): the
    fixed point is x* = (1 - delta) / (1 + e^eps) and the middle piece x* + f_p(x*) - alpha =
    1 - p + 2 p x* - alpha = 1 - p delta(0) - alpha. Eq. (14) as printed has 1 - p delta - p tanh(eps/2)
    instead, smaller by p delta tanh(eps/2): a valid but loose bound that is not C_p(f_{eps,delta}) (the
    dual route confirms the form here: Lemma 2 at eps = 0 gives exactly the line 1 - p delta(0) - alpha).
    """
    p = _check_rate(sampling_rate)
    epsilon_p, delta_p = subsampled_eps_delta(epsilon, delta, p)
    alpha = np.asarray(alpha, dtype=float)
    line = 1.0 - p * eps_delta_profile(0.0, epsilon, delta) - alpha
    return as_output(np.maximum(eps_delta_tradeoff(alpha, epsilon_p, delta_p), line))


def poisson_remove_profile(profile: ProfileFn, sampling_rate: float) -> ProfileFn:
    """Profile of the Poisson remove direction ((1 - p) A + p B vs A), all real eps.

    profile(eps) = H_{e^eps}(B || A) for all real eps. Then
    H_{e^eps}((1 - p) A + p B || A) = sup_S p B(S) - (e^eps - 1 + p) A(S)
      = p delta(eps')  with e^eps' = 1 + (e^eps - 1)/p   when e^eps > 1 - p,
        (eps' taken in log space for eps >= 1, so it never overflows)
      = 1 - e^eps                                          otherwise (S = everything).
    Its trade-off function is f_p = p f + (1 - p) Id (GDP paper Sec. 4).
    """
    p = _check_rate(sampling_rate)

    def remove(epsilon: ArrayLike) -> ArrayLike:
        epsilon = np.asarray(epsilon, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            above = epsilon > np.log1p(-p)
            small = np.log1p(np.expm1(np.minimum(epsilon, 1.0)) / p)
            large = epsilon - np.log(p) + np.log1p(-(1.0 - p) * np.exp(-np.maximum(epsilon, 1.0)))
            epsilon_base = np.where(above, np.where(epsilon < 1.0, small, large), 0.0)
        with np.errstate(over="ignore"):
            below = -np.expm1(epsilon)
        return as_output(np.where(above, p * np.asarray(profile(epsilon_base), dtype=float), below))

    return remove


def poisson_add_profile(reverse_profile: ProfileFn, sampling_rate: float) -> ProfileFn:
    """Profile of the Poisson add direction (A vs (1 - p) A + p B), all real eps.

    reverse_profile(eps) = H_{e^eps}(A || B) for all real eps. With r = 1 - e^eps (1 - p):
    H_{e^eps}(A || (1 - p) A + p B) = sup_S r A(S) - e^eps p B(S)
      = r delta_rev(eps'')  with e^eps'' = e^eps p / r   when r > 0,   and 0 otherwise.
    Its trade-off function is f_p^-1.
    """
    p = _check_rate(sampling_rate)

    def add(epsilon: ArrayLike) -> ArrayLike:
        epsilon = np.asarray(epsilon, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            shifted = epsilon + np.log1p(-p)
            below = shifted < 0
            weight = np.where(below, -np.expm1(shifted), 0.0)
            epsilon_base = np.where(below, epsilon + np.log(p) - np.log(weight), 0.0)
        return as_output(weight * np.asarray(reverse_profile(epsilon_base), dtype=float))

    return add


def fixed_size_profile(profile: ProfileFn, sampling_rate: float) -> ProfileFn:
    """Profile of C_p(f) for symmetric f (fixed-size sampling, GDP paper Thm 9/10), all real eps.

    The conjugate of a biconjugate h** is h*, and (min(g, h))* = max(g*, h*); so the profile of
    C_p(f) = min(f_p, f_p^-1)** is the larger of the two Poisson directions, for every real eps.
    """
    remove = poisson_remove_profile(profile, sampling_rate)
    add = poisson_add_profile(profile, sampling_rate)
    return lambda epsilon: as_output(np.maximum(remove(epsilon), add(epsilon)))


__all__ = [
    "fixed_size_profile",
    "mix",
    "poisson_add_profile",
    "poisson_remove_profile",
    "subsample_grid",
    "subsampled_eps_delta",
    "subsampled_eps_delta_tradeoff",
    "subsampled_gdp_tradeoff",
]
