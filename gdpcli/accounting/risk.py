"""Privacy as attack risk: f-DP's hypothesis-testing meaning as the numbers an attacker achieves.

A membership-inference attack on one record is a test of "the record was used" against "it was not". With
the mechanism f-DP, every test with false-positive rate alpha has true-positive rate at most 1 - f(alpha)
(GDP paper Sec. 2, Def. 3; the statistical-viewpoint paper Sec. 2.2). So, from the accountants' answers:

- TPR at FPR alpha: 1 - beta(alpha).
- Advantage, max over tests of TPR - FPR: sup_alpha (1 - f(alpha) - alpha) = delta(0), the hockey-stick
  divergence at eps = 0 (GDP paper Prop. 5 at eps = 0).
- Bayes success rate of the best attack when the record is a member with prior probability pi: the best
  test minimizes pi beta + (1 - pi) alpha, and min_alpha (pi f(alpha) + (1 - pi) alpha)
  = pi (1 - delta(log((1 - pi) / pi))) (the conjugate, GDP paper Prop. 6), so the success rate is
  1 - pi + pi delta(log((1 - pi) / pi)), never below max(pi, 1 - pi) (guessing).

Each risk figure is the accountant's figure stated as another quantity (Figures.as_quantity): it keeps the
side of the privacy loss its computation errs on, and its label follows from that (guarantees.bound): a
pessimistic beta, a lower bound, becomes a pessimistic TPR, an upper bound.

The worst direction of an asymmetric pair (Poisson subsampling) is what the accountants' profiles and
trade-off bounds already report, so these hold for an attacker testing either way.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from gdpcli.accounting.figures import Accountant, Figures
from gdpcli.errors import InputError, parameter
from gdpcli.guarantees import Guarantee

if TYPE_CHECKING:
    from gdpcli.events import Repeated, Run


@dataclasses.dataclass(frozen=True)
class Risk:
    """One risk figure: what (`tpr`, `advantage`, `bayes_success`), at which FPR or prior, labelled, with
    the caveat of the figure it comes from (e.g. the PLD's width not reached), if any."""

    measure: str
    at: float | None
    value: float
    guarantee: Guarantee
    method: str
    note: str | None = None


def check_probabilities(values: Sequence[float], option: str) -> None:
    """InputError unless every value is in (0, 1) (an FPR or a prior)."""
    for value in values:
        if not 0.0 < value < 1.0:
            raise InputError(f"{option}: {value!r} is not in (0, 1)")


def tpr_figures(accountant: Accountant, fprs: np.ndarray) -> list[Figures]:
    """The TPR 1 - beta(alpha) at each FPR alpha, one figure per trade-off figure of the accountant."""
    fprs = np.asarray(fprs, dtype=float)
    return [f.as_quantity("tpr", 1.0 - np.atleast_1d(f.values)) for f in accountant.beta(fprs)]


def true_positive_rates(accountant: Accountant, fprs: Sequence[float]) -> list[Risk]:
    """1 - beta(alpha) at each FPR alpha."""
    return _risks(tpr_figures(accountant, np.asarray(fprs, dtype=float)), fprs)


def advantages(accountant: Accountant) -> list[Risk]:
    """max TPR - FPR = delta(0), one per figure of the accountant."""
    return _risks([f.as_quantity("advantage", f.values) for f in accountant.delta(np.zeros(1))], [None])


def bayes_success(accountant: Accountant, priors: Sequence[float]) -> list[Risk]:
    """1 - pi + pi delta(log((1 - pi) / pi)) for each prior pi of membership."""
    priors = np.asarray(priors, dtype=float)
    epsilons = np.log1p(-priors) - np.log(priors)
    found = [
        f.as_quantity("bayes_success", np.minimum(1.0 - priors + priors * np.atleast_1d(f.values), 1.0))
        for f in accountant.delta(epsilons)
    ]
    return _risks(found, priors)


def _risks(found: Sequence[Figures], at: Sequence[float | None]) -> list[Risk]:
    """One Risk per figure and point (an FPR, a prior, or None), labelled as its figure."""
    return [
        Risk(f.quantity, None if point is None else float(point), float(value), f.guarantee, f.method, f.note)
        for f in found
        for point, value in zip(at, np.atleast_1d(f.values), strict=True)
    ]


def events_of(subject: Sequence[Repeated] | Run, group: int | None = None) -> list[Repeated] | None:
    """The events mechanisms or a DP-SGD run stand for (Run.spec), for groups of K records when group is
    given (accounting.group); None for a run whose batch scheme is no composition of sampled steps."""
    from gdpcli.events import Run

    if isinstance(subject, Run):
        run = _grouped(subject, group)
        return [run.spec()] if run.sampling.per_step else None
    if group is None:
        return list(subject)
    from gdpcli.accounting.group import group_specs

    return group_specs(subject, group)


def _grouped(run: Run, group: int | None) -> Run:
    """The run for groups of K records (its steps' group versions, Run.group), checked (dpsgd.check_run:
    ComputationError for a group under a scheme with no rigorous group analysis)."""
    from gdpcli.accounting.run import check_run

    if group is not None:
        run = dataclasses.replace(run, group=group)
    check_run(run)
    return run


def accountants_for(
    subject: Sequence[Repeated] | Run, method: str, accuracy: float, group: int | None = None
) -> tuple[list[Accountant], list[str]]:
    """Who answers for mechanisms (accounting.select) or a DP-SGD run (dpsgd.tradeoff_plan: the methods
    `gdpcli sgd` plans for the run, with its reasons), and the notes on methods skipped."""
    from gdpcli import accounting
    from gdpcli.accounting import dpsgd
    from gdpcli.accounting.methods import answers
    from gdpcli.events import Run

    if not isinstance(subject, Run):
        return accounting.select(events_of(subject, group) or [], method, accuracy=accuracy)
    return answers(dpsgd.tradeoff_plan(_grouped(subject, group), method, accuracy=accuracy))


def certified(subject: Sequence[Repeated] | Run, measure: str, at: float | None, accuracy: float) -> Risk:
    """The smallest exact or upper-bound figure of a measure ("tpr" at FPR `at`, or "advantage") for the
    mechanisms or run, by the default accountant (exact where a closed form exists, else the PLD bounds):
    what a risk target rests on."""
    [accountant], _ = accountants_for(subject, "auto", accuracy)
    found = (
        true_positive_rates(accountant, [at])
        if measure == "tpr" and at is not None
        else advantages(accountant)
    )
    return min((r for r in found if r.guarantee.certifies_at_most), key=lambda r: r.value)


def gaussian_mu(max_tpr: float | None, at_fpr: float | None, max_advantage: float | None) -> float:
    """The largest mu whose G_mu meets the risk target (GDP paper Def. 2): TPR(alpha) = Phi(mu - z),
    z = Phi^-1(1 - alpha), so mu = Phi^-1(T) + z; advantage 2 Phi(mu / 2) - 1 = A, so
    mu = 2 Phi^-1((1 + A) / 2).
    InputError for a target no mechanism with mu > 0 can meet (TPR <= FPR)."""
    from gdpcli.core.normal import Phi_inv

    if max_advantage is not None:
        return float(2.0 * Phi_inv((1.0 + max_advantage) / 2.0))
    assert max_tpr is not None and at_fpr is not None  # check_target's
    if max_tpr <= at_fpr:
        raise InputError(
            f"{parameter('max_tpr')} {max_tpr:g} is at most {parameter('at_fpr')} {at_fpr:g}: guessing "
            "already has TPR = FPR",
            "no noise gets below it",
        )
    return float(Phi_inv(max_tpr) + Phi_inv(1.0 - at_fpr))


def check_target(max_tpr: float | None, at_fpr: float | None, max_advantage: float | None) -> None:
    """InputError unless the target is --max-tpr with --at-fpr, or --max-advantage, each in (0, 1)."""
    if (max_tpr is None) != (at_fpr is None):
        raise InputError(
            f"{parameter('max_tpr')} and {parameter('at_fpr')} go together",
            f"e.g. {parameter('max_tpr')} 0.05 {parameter('at_fpr')} 0.01",
        )
    if (max_tpr is None) == (max_advantage is None):
        raise InputError(
            f"give {parameter('max_tpr')} with {parameter('at_fpr')}, or {parameter('max_advantage')}",
            "one risk target",
        )
    for option, value in (
        (parameter("max_tpr"), max_tpr),
        (parameter("at_fpr"), at_fpr),
        (parameter("max_advantage"), max_advantage),
    ):
        if value is not None:
            check_probabilities([value], option)
