"""Rows for the questions every accounting command answers: --delta, --epsilon, --alpha, --to mu.

convert, compose and subsample share this, so one flag produces the same columns everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from gdpcli.accounting import QUESTIONS, Answer, Figures, ask
from gdpcli.cli.options import Queries
from gdpcli.guarantees import Guarantee

if TYPE_CHECKING:
    from gdpcli.accounting.planning import Plan

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
    accountants: Sequence[Any], queries: Queries, context: Callable[[Any], Row] | None = None
) -> tuple[list[Row], list[Answer]]:
    """All rows for the requested queries, accountant by accountant (so --method all reads in blocks), and
    the labelled answers behind them (budget checks decide on those, never on rows)."""
    rows: list[Row] = []
    answers: list[Answer] = []
    for accountant in accountants:
        extra = context(accountant) if context else None
        asked = ask(
            accountant,
            deltas=queries.deltas,
            epsilons=queries.epsilons,
            alphas=queries.alphas,
            skip_unanswerable=len(accountants) > 1,
        )
        rows += [
            row
            for a in asked
            for row in figure_rows(a.given, a.queries, QUESTIONS[a.given], [a.figure], extra)
        ]
        answers += asked
    return _explain_vacuous(rows, answers), answers


def _explain_vacuous(rows: list[Row], answers: Sequence[Answer]) -> list[Row]:
    """The rows, where an upper bound is inf at a query whose lower bound or exact figure is inf too, with
    a reason that says so: that upper bound is not vacuous but exact (no finite answer exists)."""
    proof: dict[tuple[str, float], str] = {}  # (given, query) -> the first figure that proves it
    for a in answers:
        if a.figure.guarantee in (Guarantee.LOWER_BOUND, Guarantee.EXACT):
            for query, value in zip(a.queries, np.atleast_1d(a.figure.values), strict=True):
                if value == np.inf:
                    proof.setdefault((a.given, float(query)), f"{a.figure.method} {a.figure.guarantee}")
    for row in rows:
        for given, figure in QUESTIONS.items():
            proven = proof.get((given, row.get(given, np.nan)))
            if proven and row.get(figure) == np.inf and row["guarantee"] == Guarantee.UPPER_BOUND:
                row["reason"] = f"{figure} = inf: no finite {figure} exists at this {given} ({proven} is inf)"
    return rows


def notes_of(answers: Sequence[Answer]) -> list[str]:
    """The caveats the answers carry (Figures.note), each once, in order."""
    return list(dict.fromkeys(a.figure.note for a in answers if a.figure.note))


def mu_rows(figures: list[Figures], context: Row | None = None) -> list[Row]:
    """Rows stating mu (with the figure's details, e.g. the CLT functionals of -v)."""
    return [
        {
            **(context or {}),
            "mu": float(np.atleast_1d(f.values)[0]),
            "guarantee": f.guarantee,
            "method": f.method,
            **(f.details[0] if f.details else {}),
        }
        for f in figures
    ]


def skipped(entries: Plan) -> list[str]:
    """Notes on the methods that --method all leaves out (a plan's entries that cannot answer)."""
    from gdpcli.errors import ComputationError

    if len(entries) == 1:
        return []
    return [f"skipped {name}: {found.hint}" for name, found in entries if isinstance(found, ComputationError)]


def epsilon_answers(entries: Plan, deltas: list[float], notes: list[str]) -> list[Answer]:
    """Every (delta, figure) of a plan's method(s) (sgd, mf), labelled; they become the rows and decide the
    budget check. Each method answers the whole list at once; where that fails, delta by delta, so that a
    delta it cannot answer costs no other delta its row. With --method all a method that fails is skipped
    with a note (alone it is an error)."""
    from gdpcli.accounting import planning
    from gdpcli.accounting.figures import by_delta
    from gdpcli.errors import ComputationError

    answers = []
    for found in planning.answering(entries):
        try:
            answered = by_delta(found, np.array(deltas))
        except ComputationError:
            answered = []
            for delta in deltas:
                try:
                    answered += by_delta(found, np.array([delta]))
                except ComputationError as error:
                    if len(entries) == 1:
                        raise
                    notes.append(f"skipped {found.method} at delta {delta:g}: {error.text}")
        answers += [
            Answer("delta", np.array([delta]), figure) for delta, figures in answered for figure in figures
        ]
    notes += notes_of(answers)
    return answers
