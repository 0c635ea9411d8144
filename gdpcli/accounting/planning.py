"""The one planning path: who answers for a subject under a method.

`plan(subject, method)` gives [(method, its accountant or the ComputationError saying why it cannot)] for
a composition of events (methods.plan: the accountants `compose` uses, exact where a closed form exists,
else the rigorous PLD bounds) or for a DP-SGD run (dpsgd.plan: the run's own accountants, and its batch
scheme's bounds where the run is no composition of sampled steps); `answering` keeps the accountants and
raises the reason of a single method that cannot answer. Commands render what the plan answers.
"""

from __future__ import annotations

from collections.abc import Sequence

from gdpcli.accounting import dpsgd, methods
from gdpcli.accounting.methods import Plan, answering
from gdpcli.defaults import DEFAULT_ACCURACY
from gdpcli.events import Repeated, Run
from gdpcli.vocabulary import CONVERSIONS

__all__ = ["Plan", "answering", "plan"]


def plan(
    subject: Sequence[Repeated] | Run,
    method: str,
    *,
    accuracy: float = DEFAULT_ACCURACY,
    conversion: str = "optimal",
) -> Plan:
    """Who answers for the events' composition or the run under `method` (a METHODS word), with the RDP
    conversion (a CONVERSIONS word, or all)."""
    if isinstance(subject, Run):
        return dpsgd.plan(subject, method, accuracy=accuracy, conversion=conversion)
    conversions = CONVERSIONS if conversion == "all" else (conversion,)
    return methods.plan(list(subject), method, accuracy=accuracy, conversions=conversions)
