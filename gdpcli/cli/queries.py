"""Rows for the questions every accounting command answers: --delta, --epsilon, --alpha, --to mu.

convert and compose (and later subsample) share this, so one flag produces the same columns everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gdpcli.accounting import Figures

Row = dict[str, Any]


def figure_rows(
    key: str, values: Sequence[float], answer_key: str, figures: list[Figures], context: Row | None = None
) -> list[Row]:
    """One row per (query value, figure): {key: query, answer_key: answer, guarantee, method, ...}."""
    rows = []
    for figure in figures:
        details = figure.details or ({},) * len(values)
        for query, answer, extra in zip(values, np.atleast_1d(figure.values), details, strict=True):
            rows.append(
                {
                    key: float(query),
                    answer_key: float(answer),
                    "guarantee": figure.guarantee,
                    "method": figure.method,
                    **extra,
                    **(context or {}),
                }
            )
    return rows


def answer(
    accountants: Sequence[Any],
    *,
    deltas: list[float] | None,
    epsilons: list[float] | None,
    alphas: list[float] | None,
    context: Callable[[Any], Row] | None = None,
) -> list[Row]:
    """All rows for the requested queries, accountant by accountant (so --method all reads in blocks)."""
    rows: list[Row] = []
    for accountant in accountants:
        extra = context(accountant) if context else None
        if deltas:
            rows += figure_rows("delta", deltas, "epsilon", accountant.epsilon(np.asarray(deltas)), extra)
        if epsilons:
            rows += figure_rows("epsilon", epsilons, "delta", accountant.delta(np.asarray(epsilons)), extra)
        if alphas:
            rows += figure_rows("alpha", alphas, "beta", accountant.beta(np.asarray(alphas)), extra)
    return rows


def mu_rows(figures: list[Figures], context: Row | None = None) -> list[Row]:
    """Rows stating mu."""
    return [
        {
            **(context or {}),
            "mu": float(np.atleast_1d(f.values)[0]),
            "guarantee": f.guarantee,
            "method": f.method,
        }
        for f in figures
    ]


RIGOROUS_ABOVE = ("exact", "upper_bound")


def check_budget(rows: list[Row], *, max_epsilon: float | None, max_delta: float | None) -> None:
    """Exit 3 (BudgetExceeded) when the rigorous figure exceeds the budget.

    For each queried delta (or epsilon), the certified figure is the smallest rigorous upper bound among
    the methods that ran; approximations never count. With no rigorous figure the check cannot pass.
    """
    from gdpcli.errors import BudgetExceeded, ComputationError

    for limit, query, figure, name in (
        (max_epsilon, "delta", "epsilon", "--max-epsilon"),
        (max_delta, "epsilon", "delta", "--max-delta"),
    ):
        if limit is None:
            continue
        by_query: dict[float, float] = {}
        for row in rows:
            if query in row and figure in row and row.get("guarantee") in RIGOROUS_ABOVE:
                by_query[row[query]] = min(by_query.get(row[query], float("inf")), row[figure])
        if not by_query:
            raise ComputationError(
                f"{name}: no rigorous {figure} was computed",
                "approximations never pass a budget check; use a rigorous method",
            )
        worst = max(by_query.values())
        if worst > limit:
            raise BudgetExceeded(f"{figure} {worst:.6g} exceeds {name} {limit:g}")
