"""Repeat and select: the RDP of running a mechanism a random number K of times and releasing only the best
run (Papernot and Steinke, "Hyperparameter tuning with Renyi differential privacy", ICLR 2022, called "the
paper" below).

K follows a truncated negative binomial distribution D_{eta,gamma} (the paper's Def. 1: shape eta > -1,
gamma in (0, 1); eta = 0 is the logarithmic distribution, eta = 1 the geometric one) or a Poisson
distribution of mean mu. From the base mechanism M's RDP curve eps(.):

- Thm 2 (truncated negative binomial): for lambda > 1 and any lambda_hat >= 1,
  eps'(lambda) <= eps(lambda) + (1 + eta) (1 - 1/lambda_hat) eps(lambda_hat)
                  + (1 + eta) log(1/gamma) / lambda_hat + log(E[K]) / (lambda - 1);
- Thm 6 (Poisson): if M is (eps_hat, delta_hat)-DP with e^eps_hat <= 1 + 1/(lambda - 1), then
  eps'(lambda) <= eps(lambda) + mu delta_hat + log(mu) / (lambda - 1); gdpcli takes the largest eps_hat
  allowed, log(lambda / (lambda - 1)), and bounds M's delta_hat there by RDP conversions of its curve.

Every lambda_hat (and every order a conversion uses) gives a valid bound, so minimising over a grid keeps
the result rigorous. An RDP bound at a larger order bounds every smaller one (Renyi divergences grow with
the order), so the curve is also replaced by its monotone envelope (`monotone_envelope`). The array
functions work on a finite set of orders (as dp_accounting's RDP accountant does); `curve` turns a base
curve into the selected mechanism's curve at any order.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from gdpcli.core import rdp
from gdpcli.core.arrays import ArrayLike

RdpCurve = Callable[[np.ndarray], np.ndarray]

POISSON = math.inf
"""The shape that stands for the Poisson distribution (the limit eta -> inf at a fixed mean, as in
dp_accounting's RepeatAndSelectDpEvent)."""
GRID = 1.0 + np.logspace(-4.0, 4.0, 129)
"""The orders (lambda_hat, and the orders of the delta_hat conversions) the bounds minimise over: lambda - 1
from 1e-4 to 1e4, 16 per decade."""
_ZOOM_POINTS = 33
TIGHT_DELTA_HAT = (1.01, 1001.0)
"""The orders lambda at which `curve` bounds Thm 6's delta_hat by the optimal conversion too (elsewhere by
the improved one alone): where the conversions of a selection's curve to (eps, delta) look for its best
order (rdp.epsilon_from_curve starts at 1.01 ... 1001), and the optimal conversion, slow, pays off."""
_ROUND_UP = 1e-14
"""Relative margin on each bound's sum of terms: above the rounding of its few floating-point operations."""
_COARSE = 8
"""delta_hat: the optimal conversion is tried at every _COARSE-th order, then next to the best of those."""


def truncated_negative_binomial_mean(gamma: float, shape: float) -> float:
    """E[K] for K ~ D_{eta,gamma} (the paper's Def. 1): eta (1 - gamma) / (gamma (1 - gamma^eta)), and
    (1 - gamma) / (gamma log(1/gamma)) at eta = 0; formed as (1 - gamma) / (gamma L E(-eta L)) with
    L = log(1/gamma) and E(x) = expm1(x) / x, stable at eta = 0 and gamma -> 1."""
    log_inverse = -math.log(gamma)
    if log_inverse == 0.0:
        return 1.0
    exponent = -shape * log_inverse
    relative = 1.0 if exponent == 0.0 else math.expm1(exponent) / exponent
    return (1.0 - gamma) / (gamma * log_inverse * relative)


def truncated_negative_binomial_gamma(mean: float, shape: float) -> float:
    """gamma of D_{eta,gamma} with E[K] = mean (mean >= 1): exactly 1 / mean for the geometric distribution,
    else by bisection (E[K] falls from inf to 1 as gamma rises from 0 to 1), ending below the true gamma.
    A smaller gamma only enlarges Thm 2's log(1/gamma) term, so the bound stays valid."""
    if mean <= 1.0:
        return 1.0
    if shape == 1.0:
        return 1.0 / mean
    low, high = 0.0, 1.0
    while True:
        middle = 0.5 * (low + high)
        if middle in (low, high):
            return low * (1.0 - 1e-12)
        if truncated_negative_binomial_mean(middle, shape) >= mean:
            low = middle
        else:
            high = middle


def _rounded_up(*terms: np.ndarray) -> np.ndarray:
    """The sum of the terms, raised by _ROUND_UP times the sum of their magnitudes."""
    total = sum(terms, np.float64(0.0))
    magnitude = sum((np.abs(term) for term in terms), np.float64(0.0))
    return total + _ROUND_UP * magnitude


def _log_inverse_gamma(mean: float, shape: float) -> float:
    """log(1/gamma) of D_{eta,gamma} with E[K] = mean (at least the true one)."""
    return math.log(mean) if shape == 1.0 else -math.log(truncated_negative_binomial_gamma(mean, shape))


def _hat_terms(hat_orders: np.ndarray, hat_rdp: np.ndarray, mean: float, shape: float) -> np.ndarray:
    """Thm 2's terms in lambda_hat without the factor 1 + eta: (1 - 1/lambda_hat) eps(lambda_hat)
    + log(1/gamma) / lambda_hat, at each lambda_hat."""
    return _rounded_up((1.0 - 1.0 / hat_orders) * hat_rdp, _log_inverse_gamma(mean, shape) / hat_orders)


def selection_cost(hat_orders: ArrayLike, hat_rdp: ArrayLike, mean: float, shape: float) -> float:
    """Thm 2's terms in lambda_hat, minimised over the given orders lambda_hat >= 1:
    (1 + eta) min [(1 - 1/lambda_hat) eps(lambda_hat) + log(1/gamma) / lambda_hat]."""
    hat_orders, hat_rdp = np.asarray(hat_orders, dtype=float), np.asarray(hat_rdp, dtype=float)
    return float((1.0 + shape) * np.min(_hat_terms(hat_orders, hat_rdp, mean, shape)))


def truncated_negative_binomial(
    orders: ArrayLike, rdp_epsilon: ArrayLike, mean: float, cost: float
) -> ArrayLike:
    """Thm 2 at each order lambda > 1: eps(lambda) + cost + log(E[K]) / (lambda - 1), cost the minimised
    lambda_hat terms (`selection_cost`)."""
    orders = np.asarray(orders, dtype=float)
    return _rounded_up(
        np.asarray(rdp_epsilon, dtype=float), np.float64(cost), math.log(mean) / (orders - 1.0)
    )


def poisson_epsilon_hat(orders: ArrayLike) -> ArrayLike:
    """Thm 6's largest eps_hat at order lambda: e^eps_hat = 1 + 1/(lambda - 1), i.e. -log(1 - 1/lambda)."""
    return -np.log1p(-1.0 / np.asarray(orders, dtype=float))


def poisson(orders: ArrayLike, rdp_epsilon: ArrayLike, mean: float, delta_hat: ArrayLike) -> ArrayLike:
    """Thm 6 at each order lambda > 1: eps(lambda) + mu delta_hat + log(mu) / (lambda - 1), delta_hat the
    base mechanism's delta at `poisson_epsilon_hat(lambda)` (or an upper bound on it)."""
    orders = np.asarray(orders, dtype=float)
    return _rounded_up(
        np.asarray(rdp_epsilon, dtype=float),
        mean * np.asarray(delta_hat, dtype=float),
        math.log(mean) / (orders - 1.0),
    )


def delta_hat(
    orders: ArrayLike, rdp_epsilon: ArrayLike, epsilon_hat: ArrayLike, tight: bool = True
) -> np.ndarray:
    """An upper bound on the base mechanism's delta at each eps_hat from its RDP at the given orders: the
    improved conversion (Balle et al. 2020) at every order; if tight, also the optimal one (Asoodeh et al.
    Thm 3) at every _COARSE-th order and then at the orders next to the best of those, the smallest of all
    (any set of orders gives a valid bound; the optimal conversion is costly)."""
    orders, rdp_epsilon = np.asarray(orders, dtype=float), np.asarray(rdp_epsilon, dtype=float)
    epsilon_hat = np.atleast_1d(np.asarray(epsilon_hat, dtype=float))[:, None]
    improved = np.asarray(rdp.delta(orders[None, :], rdp_epsilon[None, :], epsilon_hat, "improved")).min(
        axis=1
    )
    if not tight:
        return improved
    coarse = np.arange(0, orders.size, _COARSE)
    optimal = np.asarray(rdp.delta(orders[None, coarse], rdp_epsilon[None, coarse], epsilon_hat, "optimal"))
    best = coarse[np.argmin(optimal, axis=1)]
    near = np.clip(best[:, None] + np.arange(1 - _COARSE, _COARSE), 0, orders.size - 1)
    refined = np.asarray(rdp.delta(orders[near], rdp_epsilon[near], epsilon_hat, "optimal"))
    return np.minimum.reduce([improved, optimal.min(axis=1), refined.min(axis=1)])


def monotone_envelope(orders: ArrayLike, bounds: ArrayLike) -> np.ndarray:
    """At each order (increasing), the smallest bound at it or any larger order: D_lambda grows with lambda,
    so a bound at lambda' >= lambda bounds D_lambda too."""
    del orders  # the orders only fix the direction: they must be increasing
    return np.minimum.accumulate(np.asarray(bounds, dtype=float)[::-1])[::-1]


def on_orders(orders: ArrayLike, rdp_epsilon: ArrayLike, mean: float, shape: float) -> np.ndarray:
    """The selected mechanism's RDP at a finite set of increasing orders > 1, from the base mechanism's RDP
    there (every minimisation over these orders, then the monotone envelope): Thm 2, or Thm 6 when shape
    is POISSON."""
    orders, rdp_epsilon = np.asarray(orders, dtype=float), np.asarray(rdp_epsilon, dtype=float)
    if shape == POISSON:
        bounds = poisson(
            orders, rdp_epsilon, mean, delta_hat(orders, rdp_epsilon, poisson_epsilon_hat(orders))
        )
    else:
        bounds = truncated_negative_binomial(
            orders, rdp_epsilon, mean, selection_cost(orders, rdp_epsilon, mean, shape)
        )
    return monotone_envelope(orders, bounds)


def curve(base: RdpCurve, mean: float, shape: float, grid: np.ndarray = GRID) -> RdpCurve:
    """The selected mechanism's RDP curve at any orders > 1, from the base mechanism's curve.

    Thm 2: the lambda_hat terms are minimised over the grid, then zoomed into the cells next to the best
    grid order. Thm 6: delta_hat at an order between two grid orders is taken at the larger one (delta_hat
    grows with lambda, as eps_hat falls), beyond the grid at eps_hat = 0; by the optimal conversion too only
    within TIGHT_DELTA_HAT. Either bound at a query order is lowered to the smallest bound at the grid
    orders above it (the monotone envelope). The base curve is evaluated once on the grid, then at the
    orders asked.
    """
    base_on_grid = np.asarray(base(grid), dtype=float)
    if shape == POISSON:
        epsilon_hat = np.append(poisson_epsilon_hat(grid), 0.0)
        hats = delta_hat(grid, base_on_grid, epsilon_hat, tight=False)
        tight = np.append((grid >= TIGHT_DELTA_HAT[0]) & (grid <= TIGHT_DELTA_HAT[1]), False)
        hats[tight] = delta_hat(grid, base_on_grid, epsilon_hat[tight])

        def bound(order: np.ndarray, base_rdp: np.ndarray) -> np.ndarray:
            return np.asarray(poisson(order, base_rdp, mean, hats[np.searchsorted(grid, order, side="left")]))

    else:
        cost = selection_cost(grid, base_on_grid, mean, shape)
        best = int(np.argmin(_hat_terms(grid, base_on_grid, mean, shape)))
        zoom = np.linspace(grid[max(best - 1, 0)], grid[min(best + 1, grid.size - 1)], _ZOOM_POINTS)
        cost = min(cost, selection_cost(zoom, np.asarray(base(zoom), dtype=float), mean, shape))

        def bound(order: np.ndarray, base_rdp: np.ndarray) -> np.ndarray:
            return np.asarray(truncated_negative_binomial(order, base_rdp, mean, cost))

    envelope = np.append(monotone_envelope(grid, bound(grid, base_on_grid)), np.inf)

    def selected(order: np.ndarray) -> np.ndarray:
        order = np.asarray(order, dtype=float)
        below = bound(order, np.asarray(base(order), dtype=float))
        return np.minimum(below, envelope[np.searchsorted(grid, order, side="left")])

    return selected
