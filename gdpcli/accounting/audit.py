"""The audit bridge: an empirical attack's rigorous lower bounds on epsilon and mu
(gdpcli.core.audit), beside what the accountant guarantees for the mechanism or run that was audited."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gdpcli.accounting.figures import OPTIMISTIC, Figures, smallest

if TYPE_CHECKING:
    from gdpcli.events import Repeated, Run

METHOD = "clopper-pearson"
"""The audit's method: Clopper-Pearson intervals on the attack's TPR and FPR, jointly at the confidence."""


def lower_bounds(
    true_hits: int, false_hits: int, trials: int, confidence: float, delta: float
) -> list[Figures]:
    """Lower bounds on epsilon at delta and on mu, each holding with probability >= confidence: an attack
    shows at least this much privacy loss (optimistic about it)."""
    from gdpcli.core import audit

    tpr_low, fpr_high = audit.rates(true_hits, false_hits, trials, confidence)
    details = ({"tpr_lower": tpr_low, "fpr_upper": fpr_high, "confidence": confidence},)
    epsilon = audit.epsilon_lower(tpr_low, fpr_high, delta)
    return [
        Figures(np.asarray([epsilon]), OPTIMISTIC, METHOD, "epsilon", details=details),
        Figures(np.asarray([audit.mu_lower(tpr_low, fpr_high)]), OPTIMISTIC, METHOD, "mu", details=details),
    ]


def claimed_epsilon(subject: Sequence[Repeated] | Run, delta: float, accuracy: float) -> Figures:
    """The accountant's smallest rigorous upper bound (or exact value) on epsilon at delta for the
    mechanisms or run (accounting.risk.accountants_for, the accountant risk asks)."""
    from gdpcli.accounting.risk import accountants_for

    [accountant], _ = accountants_for(subject, "auto", accuracy)
    return smallest(accountant.epsilon(np.asarray([delta])))
