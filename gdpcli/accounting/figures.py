"""Labelled figures, the questions they answer, and budget checks on them (never on rendered rows)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from gdpcli.errors import BudgetExceeded, ComputationError, parameter
from gdpcli.guarantees import Guarantee, Side, bound

EXACT, PESSIMISTIC, OPTIMISTIC, APPROXIMATE = Side.EXACT, Side.PESSIMISTIC, Side.OPTIMISTIC, Side.APPROXIMATE


@dataclass(frozen=True)
class Figures:
    """One kind of answer (e.g. epsilon at several deltas) from one method: values of `quantity` computed
    on `side` of the privacy loss. The label is not stored but derived (`guarantee`, guarantees.bound), so
    a figure turned into another quantity (`as_quantity`) is labelled right without a second decision."""

    values: np.ndarray
    side: Side
    method: str
    quantity: str
    details: tuple[dict, ...] | None = None  # extra columns per value, e.g. the RDP order used
    note: str | None = None  # a caveat that goes with the values, e.g. an accuracy not reached

    @property
    def guarantee(self) -> Guarantee:
        """exact | upper_bound | lower_bound | approximation: what the values are to the true quantity."""
        return bound(self.quantity, self.side)

    def at(self, index: int) -> Figures:
        """The figure at the index-th query alone (one value, its details)."""
        details = self.details[index : index + 1] if self.details else None
        return replace(self, values=np.atleast_1d(self.values)[index : index + 1], details=details)

    def as_quantity(self, quantity: str, values: np.ndarray) -> Figures:
        """The same computation stated as another quantity (e.g. TPR = 1 - beta): same side, same method."""
        return replace(self, quantity=quantity, values=values)


def split_by_query(found: Sequence[Figures], queries: np.ndarray) -> list[tuple[float, list[Figures]]]:
    """(query, its figures, one value each) for each query of figures answered at all of them."""
    return [(float(query), [figure.at(index) for figure in found]) for index, query in enumerate(queries)]


def by_delta(accountant: Accountant, deltas: np.ndarray) -> list[tuple[float, list[Figures]]]:
    """(delta, its figures, one value each) for each delta, all asked at once: the accountant's own
    by_delta where it has one (a DP-SGD run, whose batch scheme may answer delta by delta), else its
    epsilon at every delta, split."""
    own = getattr(accountant, "by_delta", None)
    if own is not None:
        return own(deltas)
    return split_by_query(accountant.epsilon(deltas), deltas)


def smallest(found: Sequence[Figures], kind: Callable[[Guarantee], bool] | None = None) -> Figures:
    """The smallest first value among the figures whose label is of the kind (by default exact or
    upper_bound: what a budget or a claim may rest on); ComputationError when there is none."""
    kind = kind or (lambda guarantee: guarantee.certifies_at_most)
    candidates = [f for f in found if kind(f.guarantee)]
    if not candidates:
        raise ComputationError("no figure of the kind asked for (an exact value or an upper bound)")
    return min(candidates, key=lambda f: float(np.atleast_1d(f.values)[0]))


def no_loss(quantity: str, queries: np.ndarray) -> np.ndarray:
    """The epsilon (at deltas), delta (at epsilons) or beta (at alphas) of a mechanism without privacy
    loss (P = Q): the optimistic end of every answer, where nothing better is known. delta(eps) = max(0,
    1 - e^eps) and beta(alpha) = 1 - alpha (GDP paper Def. 2's identity trade-off function)."""
    queries = np.atleast_1d(np.asarray(queries, dtype=float))
    if quantity == "epsilon":
        return np.zeros(queries.shape)
    if quantity == "delta":
        return np.maximum(-np.expm1(queries), 0.0)
    if quantity == "beta":
        return 1.0 - queries
    raise KeyError(f"no value without privacy loss is defined for {quantity!r}")


QUESTIONS = {"delta": "epsilon", "epsilon": "delta", "alpha": "beta"}
"""What each question asks for: epsilon at a delta, delta at an epsilon, beta at an alpha."""


@dataclass(frozen=True)
class Answer:
    """A labelled figure with the question it answers: figure.values[i] is the QUESTIONS[given] at
    queries[i] (e.g. given "delta": the epsilon at each delta)."""

    given: str
    queries: np.ndarray
    figure: Figures


def ask(
    accountant: Accountant,
    *,
    deltas: Sequence[float] | None = None,
    epsilons: Sequence[float] | None = None,
    alphas: Sequence[float] | None = None,
    skip_unanswerable: bool = False,
) -> list[Answer]:
    """Every requested question put to one accountant, as labelled answers. With skip_unanswerable (one
    method among several, --method all), a question the method cannot answer (ComputationError) gives an
    answer with no values and a note saying why, instead of failing the whole command."""
    answers: list[Answer] = []
    for given, queries, question in (
        ("delta", deltas, accountant.epsilon),
        ("epsilon", epsilons, accountant.delta),
        ("alpha", alphas, accountant.beta),
    ):
        if queries:
            values = np.asarray(queries, dtype=float)
            try:
                answers += [Answer(given, values, figure) for figure in question(values)]
            except ComputationError as error:
                if not skip_unanswerable:
                    raise
                note = f"skipped {accountant.method} for {QUESTIONS[given]}: {error.text}"
                empty = np.empty(0)
                skipped = Figures(empty, APPROXIMATE, accountant.method, QUESTIONS[given], note=note)
                answers.append(Answer(given, empty, skipped))
    return answers


def check_budget(
    answers: Sequence[Answer], *, max_epsilon: float | None = None, max_delta: float | None = None
) -> None:
    """BudgetExceeded (exit 3) when the certified figure exceeds its budget.

    For each queried delta (epsilon), the certified epsilon (delta) is the smallest figure that bounds it
    from above (label exact or upper_bound, Guarantee.certifies_at_most) among the answers; lower bounds
    and approximations never count. ComputationError when a queried point has no such figure.
    """
    for limit, given, name in (
        (max_epsilon, "delta", parameter("max_epsilon")),
        (max_delta, "epsilon", parameter("max_delta")),
    ):
        if limit is None:
            continue
        figure_name = QUESTIONS[given]
        certified: dict[float, float] = {}
        asked: set[float] = set()
        for answer in (a for a in answers if a.given == given):
            asked.update(answer.queries.tolist())
            if not answer.figure.guarantee.certifies_at_most:
                continue
            for query, value in zip(
                answer.queries.tolist(), np.ravel(answer.figure.values).tolist(), strict=True
            ):
                certified[query] = min(certified.get(query, np.inf), value)
        missing = sorted(asked - set(certified))
        if not certified or missing:
            where = f" at {given} {missing[0]:g}" if missing else ""
            raise ComputationError(
                f"{name}: no rigorous upper bound on {figure_name} was computed{where}",
                "approximations never pass a budget check, nor do lower bounds; use a rigorous method",
            )
        worst = max(certified.values())
        if worst > limit:
            raise BudgetExceeded(f"{figure_name} {worst:.6g} exceeds {name} {limit:g}")


IMPLIED, NOT_IMPLIED, UNDECIDED = "yes", "no", "undecided"


def _delta_bounds(answers: Sequence[Answer]) -> tuple[float, float]:
    """The tightest rigorous bounds [lower, upper] on delta at the one epsilon the answers are about (0 and 1
    where no figure bounds it from that side); ComputationError when no figure is rigorous."""
    found = [
        (float(np.ravel(a.figure.values)[0]), a.figure.guarantee) for a in answers if a.given == "epsilon"
    ]
    if not any(guarantee.rigorous for _, guarantee in found):
        raise ComputationError(
            "no rigorous figure of delta was computed", "approximations decide nothing; use a rigorous method"
        )
    lower = max((value for value, guarantee in found if guarantee.certifies_at_least), default=0.0)
    upper = min((value for value, guarantee in found if guarantee.certifies_at_most), default=1.0)
    return lower, upper


def implication(answers: Sequence[Answer], delta: float) -> str:
    """Whether the answers (delta at one epsilon E) prove that the mechanism is (E, delta)-DP.

    IMPLIED when an exact or upper-bound figure is <= delta (the true delta(E) is no larger, so the
    mechanism is (E, delta)-DP), NOT_IMPLIED when an exact or lower-bound figure is > delta (the smallest
    delta at E is the privacy profile, GDP paper Prop. 6; for an (eps0, delta0) guarantee this is GDPT
    Thm 3.1's exact order), UNDECIDED when the rigorous figures straddle delta. Approximations decide
    nothing (ComputationError when there is no other figure).
    """
    return _verdict(*_delta_bounds(answers), delta)


def _verdict(lower: float, upper: float, delta: float) -> str:
    """IMPLIED if upper <= delta, NOT_IMPLIED if lower > delta, else UNDECIDED."""
    if upper <= delta:
        return IMPLIED
    return NOT_IMPLIED if lower > delta else UNDECIDED


def check_implication(answers: Sequence[Answer], epsilon: float, delta: float, what: str) -> None:
    """BudgetExceeded (exit 3) when the answers prove `what` is not (epsilon, delta)-DP, ComputationError
    (exit 1) when they decide neither way (see implication); nothing when it is (epsilon, delta)-DP."""
    lower, upper = _delta_bounds(answers)
    verdict = _verdict(lower, upper, delta)
    claim, where = f"({epsilon:g}, {delta:g})-DP", f"its delta at epsilon {epsilon:g}"
    if verdict == NOT_IMPLIED:
        raise BudgetExceeded(f"{what} does not imply {claim}: {where} is at least {lower:.6g}")
    if verdict == UNDECIDED:
        raise ComputationError(
            f"undecided whether {what} implies {claim}: {where} lies in [{lower:.6g}, {upper:.6g}]",
            "the rigorous bounds are not tight enough to tell",
        )


class Accountant(Protocol):
    """Answers the three questions for a fixed list of specs, each answer labelled."""

    method: str

    def epsilon(self, deltas: np.ndarray) -> list[Figures]: ...

    def delta(self, epsilons: np.ndarray) -> list[Figures]: ...

    def beta(self, alphas: np.ndarray) -> list[Figures]: ...


def curve_alphas(uniform: int, quantile: int, *, smallest: float) -> np.ndarray:
    """An alpha grid for drawing a trade-off curve: `uniform` points on [0, 1] and `quantile`
    normal-quantile knots down to `smallest` (core.tradeoff.alpha_grid), where the curves are steep."""
    from gdpcli.core.tradeoff import alpha_grid

    return np.unique(
        np.concatenate((np.linspace(0.0, 1.0, uniform), alpha_grid(quantile, smallest=smallest)))
    )
