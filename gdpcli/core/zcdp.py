"""Zero-concentrated DP (zCDP) and Renyi divergences of trade-off functions.

zCDP (Bun and Steinke 2016, "Concentrated differential privacy: simplifications, extensions, and lower
bounds", [BS16] Def. 1.1): a mechanism is (xi, rho)-zCDP when D_alpha(M(S) || M(S')) <= xi + alpha rho for
every order alpha > 1, i.e. it is an RDP curve (Mironov 2017) that is affine in alpha. Curves add under
composition ([BS16] Lemma 1.7), so rho and xi add. The Gaussian mechanism is exactly
(sens^2 / (2 sigma^2))-zCDP ([BS16] Prop. 1.6).

The Renyi divergence of a trade-off function f = T(P, Q) (Su, "A statistical viewpoint on differential
privacy", the review, Sec. 2.3, Theorem 3 with eq. (2.3)):

    D_gamma(P || Q) = d_gamma(f) = 1/(gamma - 1) log int_0^1 |f'(x)|^{1 - gamma} dx,

computed here by quadrature of f's derivative (`rdp_from_tradeoff`). Public API: `rdp`, `gaussian_rho`,
`classic_epsilon`, `smallest_rho`, `rdp_from_tradeoff`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.errors import InputError, parameter

Tradeoff = Callable[[np.ndarray], ArrayLike]

_GRID_POINTS = 100_001
"""Points of the log-spaced quadrature grid between the resolved floor and the fixed point of f."""
_RESOLVED = 1e-9
"""The smallest 1 - f(x) the quadrature resolves (differences of numbers near 1 lose digits below it)."""
_ATOM_TOLERANCE = 1e-12
"""f(0) below 1 - this means an atom of Q where P has no mass: an infinite divergence."""


def rdp(order: ArrayLike, rho: float, xi: float = 0.0) -> ArrayLike:
    """The RDP curve of (xi, rho)-zCDP: eps(alpha) = xi + alpha rho ([BS16] Def. 1.1)."""
    order = np.asarray(order, dtype=float)
    if not np.all(order > 1.0):
        raise InputError("Renyi orders must be greater than 1", f"e.g. {parameter('order')} 1.5,2,8")
    return as_output(xi + order * rho)


def gaussian_rho(sigma: float, sensitivity: float = 1.0) -> float:
    """rho = sens^2 / (2 sigma^2): the Gaussian mechanism is exactly rho-zCDP ([BS16] Prop. 1.6)."""
    return sensitivity * sensitivity / (2.0 * sigma * sigma)


def classic_epsilon(rho: float, delta: float, xi: float = 0.0) -> float:
    """(xi, rho)-zCDP implies (xi + rho + 2 sqrt(rho log(1/delta)), delta)-DP ([BS16] Prop. 1.3): Mironov's
    conversion (the hundred-rounds paper's eq. (3)) minimised over alpha in closed form, as its eq. (23)."""
    return xi + rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def smallest_rho(orders: ArrayLike, values: ArrayLike) -> float:
    """The smallest rho with D_alpha <= alpha rho at the given orders: max_alpha D_alpha / alpha.

    The zCDP parameter of the curve is the supremum over every alpha > 1, so over finitely many orders this
    is a lower bound on it (equal to it where D_alpha / alpha is largest among the orders given)."""
    orders, values = np.asarray(orders, dtype=float), np.asarray(values, dtype=float)
    return float(np.max(values / orders))


def fixed_point(tradeoff: Tradeoff) -> float:
    """The x with f(x) = x of a symmetric trade-off function (in [0, 1/2]), by bisection."""
    low, high = 0.0, 0.5
    for _ in range(80):
        middle = 0.5 * (low + high)
        if float(np.asarray(tradeoff(np.array([middle])))[0]) > middle:
            low = middle
        else:
            high = middle
    return 0.5 * (low + high)


def _floor(tradeoff: Tradeoff, top: float) -> float:
    """The smallest x on a log grid below `top` at which 1 - f(x) >= _RESOLVED."""
    grid = top * np.logspace(0.0, -300.0, 3001)
    resolved = 1.0 - np.asarray(tradeoff(grid), dtype=float) >= _RESOLVED
    return float(grid[resolved][-1]) if np.any(resolved) else top


def _bins(tradeoff: Tradeoff) -> tuple[np.ndarray, np.ndarray] | None:
    """P-masses (widths in x) and Q-masses (drops of f) of the bins of [0, x*] of a symmetric f: a log grid
    from the resolved floor up to the fixed point x*, and one bin [0, floor]. None when f(0) < 1."""
    if float(np.asarray(tradeoff(np.array([0.0])))[0]) < 1.0 - _ATOM_TOLERANCE:
        return None
    top = fixed_point(tradeoff)
    floor = _floor(tradeoff, top)
    x = np.concatenate(([0.0], np.geomspace(floor, top, _GRID_POINTS)))
    y = np.asarray(tradeoff(x), dtype=float)
    y[0] = 1.0
    widths, drops = np.diff(x), -np.diff(y)
    keep = (widths > 0.0) & (drops > 0.0)
    return widths[keep], drops[keep]


def rdp_from_tradeoff(tradeoff: Tradeoff, orders: ArrayLike) -> np.ndarray:
    """D_gamma of a SYMMETRIC trade-off function f (f = f^-1) at each order gamma > 1, by quadrature of
    the review's Sec. 2.3 link d_gamma(f) = 1/(gamma-1) log int_0^1 |f'(x)|^{1-gamma} dx (Thm 3, eq. 2.3).

    For symmetric f the part of the integral on [x*, 1] (x* = f(x*), where |f'| = 1) equals
    int_0^{x*} |f'|^gamma dx (substitute y = f(x)), so only small x are needed, where floats are fine:

        int_0^1 |f'|^{1-gamma} dx = int_0^{x*} (|f'(x)|^{1-gamma} + |f'(x)|^gamma) dx.

    Quadrature with the secant slopes of f on a log-spaced grid, i.e. the divergence of the two
    distributions binned (data processing: a lower bound up to rounding); the region where 1 - f(x) < 1e-9
    is one bin, so large orders, whose mass lies there, come out low. An approximation: no rigorous
    direction is claimed. f(0) < 1 (an atom, e.g. delta > 0) gives inf.
    """
    gammas = np.atleast_1d(np.asarray(orders, dtype=float))
    if not np.all(gammas > 1.0):
        raise InputError("Renyi orders must be greater than 1", f"e.g. {parameter('order')} 1.5,2,8")
    bins = _bins(tradeoff)
    if bins is None:
        return np.full(gammas.shape, math.inf)
    log_width, log_drop = np.log(bins[0]), np.log(bins[1])
    g = gammas[:, None]
    lower = g * log_width + (1.0 - g) * log_drop  # P^gamma Q^{1-gamma}: |f'|^{1-gamma} dx
    upper = g * log_drop + (1.0 - g) * log_width  # Q^gamma P^{1-gamma}: |f'|^gamma dx
    log_integral = np.logaddexp.reduce(np.concatenate((lower, upper), axis=1), axis=1)
    return np.maximum(log_integral, 0.0) / (gammas - 1.0)


def divergences_from_tradeoff(tradeoff: Tradeoff) -> tuple[float, float, float] | None:
    """(kl, chi2, hellinger) of a SYMMETRIC trade-off function f (see clt.Divergences) with the bins of
    `rdp_from_tradeoff`: P-masses w and Q-masses d on [0, x*], and their mirror images (d, w) on [x*, 1]:

        kl = sum (w - d) log(w / d),   chi2 = sum (w^2 / d + d^2 / w) - 1,   hellinger = 1 - 2 sum sqrt(w d).

    The distributions binned (data processing: lower bounds up to rounding); an approximation. None when
    f(0) < 1 (an atom: kl and chi2 are infinite)."""
    bins = _bins(tradeoff)
    if bins is None:
        return None
    widths, drops = bins
    log_ratio = np.log(widths) - np.log(drops)
    kl = float(np.sum((widths - drops) * log_ratio))
    chi2 = float(np.sum(widths * np.exp(log_ratio) + drops * np.exp(-log_ratio))) - 1.0
    hellinger = 1.0 - 2.0 * float(np.sum(np.sqrt(widths * drops)))
    return kl, max(chi2, 0.0), max(hellinger, 0.0)
