"""The equal-error point of an accountant's trade-off curves (`convert --to equal-error`).

For a trade-off function f (GDP paper Def. 2.1: convex, non-increasing, f(alpha) <= 1 - alpha) the
equal-error point is the alpha* with f(alpha*) = alpha*: the type I error that equals the type II error of
the most powerful test at that level, the equal error rate of the best attack. For G_mu it is Phi(-mu/2)
(gdp.symmetric_point). It is the same point for f and its inverse f^-1 (the graph of f^-1 is the mirror
image of the graph of f in the diagonal), so it does not depend on the direction of the neighbours.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gdpcli.accounting.figures import OPTIMISTIC, PESSIMISTIC, Accountant, Figures

_Z_FLOOR = -38.0
"""The smallest normal quantile z = Phi^-1(alpha) probed: Phi(-38) = 2.9e-317. An alpha* below it is bracketed
by [0, Phi(-38 + ...)]; 0 itself is never probed, as f(0) >= 0 = alpha holds for every f."""
_PROBES = 7
"""Probes per figure and round, spaced evenly in z inside the current bracket (few: a numerical trade-off
function may cost milliseconds per point, and each round costs a call of accountant.beta too)."""
_ROUNDS = 20
"""Rounds: each shrinks a bracket by the factor _PROBES + 1, from 38 in z to 38 / 8^20 < 1e-16."""


def equal_error(accountant: Accountant) -> list[Figures]:
    """alpha* with f(alpha*) = alpha* for each trade-off figure of the accountant, with that figure's label.

    g(alpha) = f(alpha) - alpha is strictly decreasing, g(0) = f(0) >= 0 and g(1/2) <= 0 (as f(alpha) <=
    1 - alpha), so alpha* is unique and lies in [0, 1/2]. The side carries over: a pessimistic f_L <= f
    has f_L(a) >= a => f(a) >= a => a <= alpha*, so the largest probe a with f_L(a) >= a is a pessimistic
    alpha* (a lower bound: alpha* shrinks with the privacy loss); likewise the smallest probe a with
    f_U(a) <= a is an optimistic alpha* for an optimistic f_U >= f. Those probes are returned for bounds
    (each a point at which the figure was evaluated, so the statement holds as computed), the bracket's
    middle for exact figures (to about 1e-16 in z, i.e. float precision) and approximations.

    Accountants with a closed form (equal_error method, e.g. G_mu) answer directly. Otherwise each round
    puts _PROBES probes per figure, spaced in z = Phi^-1(alpha) so that a tiny alpha* keeps its relative
    digits, to one call of accountant.beta, and every bracket keeps the last probe on each side.
    """
    closed_form = getattr(accountant, "equal_error", None)
    if closed_form is not None:
        return closed_form()
    from gdpcli.core.normal import Phi

    low_z, high_z = np.array([_Z_FLOOR]), np.array([0.0])  # one bracket until the figures are known
    low, high = np.array([0.0]), np.array([0.5])  # alpha at the ends: certified without a probe
    fractions = np.arange(1, _PROBES + 1) / (_PROBES + 1)
    figures: list[Figures] = []
    for _ in range(_ROUNDS):
        z = low_z[:, None] + (high_z - low_z)[:, None] * fractions
        alphas = np.asarray(Phi(z), dtype=float)
        figures = accountant.beta(alphas.ravel())
        if low.size == 1:
            count = len(figures)
            low_z, high_z, low, high = (np.repeat(v, count) for v in (low_z, high_z, low, high))
        for k, figure in enumerate(figures):
            row = min(k, alphas.shape[0] - 1)
            beta = np.asarray(figure.values, dtype=float).reshape(alphas.shape)[row]
            above, below = beta >= alphas[row], beta <= alphas[row]
            if np.any(above) and alphas[row][above].max() > low[k]:
                low[k], low_z[k] = alphas[row][above].max(), z[row][above].max()
            if np.any(below) and alphas[row][below].min() < high[k]:
                high[k], high_z[k] = alphas[row][below].min(), z[row][below].min()
    return [_figure(f, low[k], high[k], Phi(0.5 * (low_z[k] + high_z[k]))) for k, f in enumerate(figures)]


def _figure(figure: Figures, low: float, high: float, middle: float) -> Figures:
    """The equal-error figure of one trade-off figure: its certified end for a bound, else the middle."""
    value = low if figure.side is PESSIMISTIC else high if figure.side is OPTIMISTIC else middle
    return replace(figure.as_quantity("equal_error", np.array([float(value)])), details=None)
