"""From an empirical membership-inference attack to rigorous lower bounds on its privacy.

An attack run on `trials` members and `trials` non-members flags k1 members (true positives) and k0
non-members (false positives). Clopper and Pearson's exact binomial interval (1934) bounds the attack's
true rates: TPR >= tpr_low and FPR <= fpr_high, each at one-sided level 1 - (1 - confidence) / 2, so both
hold together with probability >= confidence (Bonferroni). Every (eps, delta)-DP mechanism has
TPR <= e^eps FPR + delta and 1 - FPR <= e^eps (1 - TPR) + delta for every test (GDP paper eq. 4, both
directions), and every mu-GDP one TPR <= Phi(mu - Phi^-1(1 - FPR)) (Def. 2), so with that confidence

    eps >= max(log((tpr_low - delta) / fpr_high), log((1 - fpr_high - delta) / (1 - tpr_low))),
    mu >= Phi^-1(tpr_low) + Phi^-1(1 - fpr_high),

each 0 where the attack shows nothing (the usual audit of Jagielski et al. 2020, Nasr et al. 2021).
"""

from __future__ import annotations

import math

from scipy import special

from gdpcli.errors import InputError, parameter


def clopper_pearson(hits: int, trials: int, level: float) -> tuple[float, float]:
    """(lower, upper) one-sided Clopper-Pearson bounds on a binomial rate, each at confidence `level`:
    lower = Beta^-1(1 - level; k, n - k + 1) (0 for k = 0), upper = Beta^-1(level; k + 1, n - k) (1 for
    k = n)."""
    lower = 0.0 if hits == 0 else float(special.betaincinv(hits, trials - hits + 1, 1.0 - level))
    upper = 1.0 if hits == trials else float(special.betaincinv(hits + 1, trials - hits, level))
    return lower, upper


def rates(true_hits: int, false_hits: int, trials: int, confidence: float) -> tuple[float, float]:
    """(tpr_low, fpr_high), jointly valid with probability >= confidence."""
    check(true_hits, false_hits, trials, confidence)
    level = 1.0 - (1.0 - confidence) / 2.0
    return clopper_pearson(true_hits, trials, level)[0], clopper_pearson(false_hits, trials, level)[1]


def epsilon_lower(tpr_low: float, fpr_high: float, delta: float) -> float:
    """The smallest eps consistent with the rates at delta (module docstring), >= 0."""
    candidates = [0.0]
    if tpr_low - delta > 0.0 and fpr_high > 0.0:
        candidates.append(math.log((tpr_low - delta) / fpr_high))
    if 1.0 - fpr_high - delta > 0.0 and tpr_low < 1.0:
        candidates.append(math.log((1.0 - fpr_high - delta) / (1.0 - tpr_low)))
    return max(candidates)


def mu_lower(tpr_low: float, fpr_high: float) -> float:
    """The smallest mu of a G_mu consistent with the rates, >= 0 (Phi^-1 of 0 or 1 gives 0 or inf)."""
    if tpr_low <= 0.0 or fpr_high >= 1.0:
        return 0.0
    return max(0.0, float(special.ndtri(tpr_low) + special.ndtri(1.0 - fpr_high)))


def check(true_hits: int, false_hits: int, trials: int, confidence: float) -> None:
    """InputError unless 0 <= hits <= trials, trials >= 1 and 0 < confidence < 1."""
    if trials < 1:
        raise InputError(f"{parameter('trials')}: must be >= 1, got {trials}")
    for name, hits in (("tpr_hits", true_hits), ("fpr_hits", false_hits)):
        if not 0 <= hits <= trials:
            raise InputError(f"{parameter(name)}: {hits} is not between 0 and {parameter('trials')} {trials}")
    if not 0.0 < confidence < 1.0:
        raise InputError(f"{parameter('confidence')}: {confidence!r} is not in (0, 1)")
