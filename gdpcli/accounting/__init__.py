"""The accounting layer, between the events (gdpcli.events) and the numerics core (gdpcli.core): which method
answers a question, and with which label.

An accountant answers epsilon(delta), delta(epsilon), beta(alpha) and mu for a list of specs and labels
every figure with its `guarantee` (exact | upper_bound | lower_bound | approximation) and `method`.
`select` picks exact where possible, rigorous otherwise, approximate only on request (README, "Which
method should I trust?").
"""

from gdpcli.accounting.accountants import (  # the ones the commands build themselves (plots)
    ApproximateGDP,
    CentralLimit,
    ExactGDP,
    NumericalPLD,
    RenyiAccountant,
    split_uniform_delta,
)
from gdpcli.accounting.equal_error import equal_error
from gdpcli.accounting.figures import (
    QUESTIONS,
    Accountant,
    Answer,
    Figures,
    ask,
    check_budget,
    check_implication,
    implication,
)
from gdpcli.accounting.methods import (
    describe,
    exact_accountant,
    group_accountant,
    mu_accountant,
    mu_figures,
    select,
    step_budgets,
)
from gdpcli.vocabulary import CONVERSIONS, METHODS

__all__ = [
    "CONVERSIONS",
    "METHODS",
    "QUESTIONS",
    "Accountant",
    "Answer",
    "ApproximateGDP",
    "CentralLimit",
    "ExactGDP",
    "Figures",
    "NumericalPLD",
    "RenyiAccountant",
    "ask",
    "check_budget",
    "check_implication",
    "describe",
    "equal_error",
    "exact_accountant",
    "group_accountant",
    "implication",
    "mu_accountant",
    "mu_figures",
    "select",
    "split_uniform_delta",
    "step_budgets",
]
