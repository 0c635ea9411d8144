"""gdpcli.accounting: budget checks decide on labelled answers; the delta part composes in closed form."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from gdpcli.accounting import Answer, Figures, check_budget, select, split_uniform_delta
from gdpcli.errors import BudgetExceeded, ComputationError
from gdpcli.events.spec import parse_spec
from gdpcli.guarantees import Guarantee, Side


def _answer(values: list[float], side: Side, deltas: tuple[float, ...] = (1e-5, 1e-6)) -> Answer:
    """Epsilons at the deltas, computed on that side (pessimistic: upper bounds)."""
    return Answer("delta", np.array(deltas), Figures(np.array(values), side, "test", "epsilon"))


def test_budget_uses_the_smallest_upper_bound_per_query() -> None:
    answers = [_answer([2.0, 3.0], Side.PESSIMISTIC), _answer([2.5, 2.9], Side.PESSIMISTIC)]
    check_budget(answers, max_epsilon=2.9)  # 2.0 at 1e-5, 2.9 at 1e-6
    with pytest.raises(BudgetExceeded, match=r"epsilon 2\.9 exceeds max_epsilon 2\.8"):
        check_budget(answers, max_epsilon=2.8)


@pytest.mark.parametrize("label", [Side.APPROXIMATE, Side.OPTIMISTIC])
def test_budget_never_rests_on_approximations_or_lower_bounds(label: Side) -> None:
    below_the_limit = [_answer([1.0, 1.0], label), _answer([5.0, 5.0], Side.PESSIMISTIC)]
    with pytest.raises(BudgetExceeded):
        check_budget(below_the_limit, max_epsilon=2.0)
    with pytest.raises(ComputationError, match="no rigorous upper bound"):
        check_budget([_answer([1.0, 1.0], label)], max_epsilon=2.0)


def test_budget_needs_a_bound_at_every_queried_point() -> None:
    partial = [_answer([1.0], Side.EXACT, (1e-5,)), _answer([1.0], Side.APPROXIMATE, (1e-6,))]
    with pytest.raises(ComputationError, match="at delta 1e-06"):
        check_budget(partial, max_epsilon=2.0)


def test_max_delta_checks_delta_at_epsilon() -> None:
    answers = [Answer("epsilon", np.array([1.0]), Figures(np.array([1e-3]), Side.EXACT, "t", "delta"))]
    check_budget(answers, max_delta=1e-3)
    with pytest.raises(BudgetExceeded, match="delta"):
        check_budget(answers, max_delta=9e-4)


def test_split_uniform_delta() -> None:
    specs = [
        parse_spec(s) for s in ("gdp:mu=1", "dp:eps=0.5,delta=1e-3x2", "dp:eps=0,delta=0.01", "dp:eps=1")
    ]
    rest, delta0 = split_uniform_delta(specs)
    assert [s.mechanism for s in rest] == [
        specs[0].mechanism,
        parse_spec("dp:eps=0.5").mechanism,
        specs[3].mechanism,
    ]
    assert rest[1].times == 2
    with mp.workdps(30):
        assert delta0 == pytest.approx(float(1 - (1 - mp.mpf("1e-3")) ** 2 * (1 - mp.mpf("0.01"))), rel=1e-15)


def test_uniform_delta_at_its_own_level() -> None:
    """At delta = delta0 a Laplace rest needs eps = eps0 exactly (its profile reaches 0 there); below
    delta0 no epsilon works (delta(eps) >= delta0 everywhere)."""
    specs = [parse_spec("laplace:eps=1"), parse_spec("dp:eps=0,delta=0.01")]
    [accountant], _ = select(specs, "auto")
    [figure] = accountant.epsilon(np.array([0.01, 0.005]))
    assert figure.guarantee is Guarantee.EXACT
    assert figure.values.tolist() == [1.0, np.inf]
