"""What `gdpcli convert --to kl | hellinger | chi2 | rdp | rho` states of one spec, each row labelled: the
divergences of its composed dominating pair, its Renyi curve and its zCDP rho (closed forms where the kind
has them, else bounds or the quadrature of its trade-off function, labelled as such)."""

from __future__ import annotations

import numpy as np

from gdpcli.core import zcdp
from gdpcli.errors import ComputationError, InputError
from gdpcli.events import Repeated, Step
from gdpcli.guarantees import Side, bound


def divergence_rows(parsed: Repeated, to: str) -> list[dict]:
    """--to kl | hellinger | chi2 of the composed pair (clt.Divergences.composed): closed forms (exact) for
    gdp, gaussian, laplace, dp and rr, else the quadrature of the trade-off function (approximation)."""
    divergences = parsed.step.divergences().composed(parsed.times)
    side, name = (
        (Side.EXACT, "closed-form") if divergences.exact else (Side.APPROXIMATE, "tradeoff-quadrature")
    )
    row = {to: getattr(divergences, to), "guarantee": bound(to, side), "method": name}
    if np.isinf(row[to]) and divergences.finite:
        row["reason"] = f"{to} = inf: the true {to} is finite but beyond the float range (about 1.8e308)"
    return [row]


def curve_rows(parsed: Repeated, to: str, orders: list[float], every: bool) -> list[dict]:
    """Rows of --to rdp (order, rdp_epsilon per curve) or --to rho."""
    if to == "rho":
        return _rho_rows(parsed, orders)
    curves = _curves(parsed, orders, every)
    return [
        {"order": a, "rdp_epsilon": float(v), "guarantee": bound("rdp", side), "method": name}
        for name, side, values in curves
        for a, v in zip(orders, values, strict=True)
    ]


def _curves(parsed: Repeated, orders: list[float], every: bool) -> list[tuple[str, Side, object]]:
    """(method, side, D_alpha at the orders) of the composed spec: its own RDP curve where it has one (the
    trade-off route beside it with --method all), else the review's Sec. 2.3 link from its trade-off."""

    step, times, grid = parsed.step, parsed.times, np.asarray(orders, dtype=float)
    found: list[tuple[str, Side, object]] = []
    try:
        own = times * np.asarray(_own_curve(step, grid), dtype=float)
        exact = step.sampling_rate is None and step.mechanism.exact_rdp
        found.append(("rdp-curve", Side.EXACT if exact else Side.PESSIMISTIC, own))
    except ComputationError:
        if step.sampling_rate is not None or not step.mechanism.has_tradeoff:
            raise
    if (every or not found) and step.sampling_rate is None and step.mechanism.has_tradeoff:
        quadrature = times * zcdp.rdp_from_tradeoff(step.mechanism.tradeoff, grid)
        found.append(("tradeoff-quadrature", Side.APPROXIMATE, quadrature))
    return found


def _own_curve(step: Step, grid: np.ndarray) -> object:
    """The step's own RDP curve at the orders; rdp: specs at their listed orders only."""
    if step.rdp_points is None:
        return step.rdp_curve()(grid)
    lookup = dict(zip(*step.rdp_points, strict=True))
    missing = [a for a in grid.tolist() if a not in lookup]
    if missing:
        raise InputError(
            f"{step.describe()} states no RDP at order {missing[0]!r}",
            "its orders: " + ",".join(f"{a:g}" for a in lookup),
        )
    return [lookup[a] for a in grid.tolist()]


def _rho_rows(parsed: Repeated, orders: list[float]) -> list[dict]:
    """--to rho: exact for GDP/Gaussian (mu^2 / 2, Bun and Steinke 2016 Prop. 1.6) and for zcdp: (its own
    rho, and xi); the discrete Gaussian's [CKS20] Prop. 5 rho (upper bound); else the smallest rho with
    D_alpha <= alpha rho at the orders given (a lower bound on the zCDP rho from an exact curve, else an
    approximation)."""
    mechanism, times = parsed.mechanism, parsed.times
    exact = bound("rho", Side.EXACT)
    if parsed.exact_mu is not None:
        return [{"rho": parsed.exact_mu**2 / 2.0, "guarantee": exact, "method": "gaussian"}]
    if parsed.sampling_rate is None and mechanism.zcdp_statement is not None:
        rho, xi = mechanism.zcdp_statement
        row = {"rho": times * rho, "guarantee": exact, "method": "zcdp"}
        return [{**row, "xi": times * xi} if xi else row]
    if parsed.sampling_rate is None and mechanism.zcdp_rho is not None:
        return [
            {"rho": times * mechanism.zcdp_rho, "guarantee": bound("rho", Side.PESSIMISTIC), "method": "zcdp"}
        ]
    rows = []
    for name, side, values in _curves(parsed, orders, every=False):
        rho = zcdp.smallest_rho(orders, values)
        best = orders[int(np.argmax(np.asarray(values) / np.asarray(orders)))]
        # a maximum over finitely many orders: at most the true rho, when the curve itself is exact
        guarantee = bound("rho", Side.OPTIMISTIC if side is Side.EXACT else Side.APPROXIMATE)
        rows.append({"rho": rho, "order": best, "guarantee": guarantee, "method": f"max-over-orders-{name}"})
    return rows
