"""Between the spec language and the numerics core: which method answers a question, and with which label.

An accountant answers epsilon(delta), delta(epsilon), beta(alpha) and mu for a list of specs and labels
every figure with its `guarantee` (exact | upper_bound | lower_bound | approximation) and `method`.
`select` implements DESIGN.md principle 2: exact where possible, rigorous otherwise, approximate only
on request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gdpcli.core import gdp
from gdpcli.errors import ComputationError
from gdpcli.mechanisms import ApproxDP, Spec

METHODS = ("auto", "exact", "pld", "clt", "berry-esseen", "rdp", "all")


@dataclass(frozen=True)
class Figures:
    """One kind of answer (e.g. epsilon at several deltas) from one method, with its guarantee."""

    values: np.ndarray
    guarantee: str
    method: str


class ExactGDP:
    """Lists of GDP / Gaussian specs: mu = sqrt(sum times_i mu_i^2) exactly (GDP paper Cor. 2)."""

    method = "gdp"

    def __init__(self, mu: float) -> None:
        self.mu_total = mu

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(gdp.epsilon(deltas, self.mu_total)), "exact", self.method)]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(gdp.delta(epsilons, self.mu_total)), "exact", self.method)]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        return [Figures(np.asarray(gdp.tradeoff(alphas, self.mu_total)), "exact", self.method)]

    def mu(self) -> list[Figures]:
        return [Figures(np.asarray([self.mu_total]), "exact", self.method)]


class PureDPToGDP:
    """The tightest mu implied by a single pure eps-DP guarantee, -2 Phi^-1(1/(1+e^eps)) (GDPT Thm 5.1).

    Only a mu statement: the mechanism itself is f_{eps,0}, whose other figures come from its exact form.
    """

    method = "gdpt-thm-5.1"

    def __init__(self, epsilon: float) -> None:
        self.epsilon0 = epsilon

    def mu(self) -> list[Figures]:
        return [Figures(np.asarray([gdp.pure_dp_mu(self.epsilon0)]), "exact", self.method)]


def exact_gdp_mu(specs: Sequence[Spec]) -> float | None:
    """sqrt(sum mu_i^2) when every spec is exactly GDP, else None."""
    mus = [spec.exact_mu for spec in specs]
    if any(m is None for m in mus):
        return None
    return gdp.compose(np.asarray(mus, dtype=float))


def exact_accountant(specs: Sequence[Spec]) -> ExactGDP | None:
    """The closed-form accountant for the list, or None when no closed form applies."""
    mu = exact_gdp_mu(specs)
    return ExactGDP(mu) if mu is not None else None


def select(specs: Sequence[Spec], method: str) -> list[ExactGDP]:
    """The accountants that answer for `method` (one for a single method, several for `all`)."""
    exact = exact_accountant(specs)
    if method in ("auto", "exact", "all"):
        if exact is not None:
            return [exact]
        if method == "exact":
            raise ComputationError(
                "no closed form for this list of mechanisms", "use --method pld for rigorous bounds"
            )
    raise ComputationError(f"method {method!r} is not available for these mechanisms yet")


def mu_accountant(specs: Sequence[Spec]) -> ExactGDP | PureDPToGDP:
    """Who can state a mu for the list; ComputationError explaining why not otherwise."""
    exact = exact_accountant(specs)
    if exact is not None:
        return exact
    if len(specs) == 1:
        spec = specs[0]
        mechanism = spec.mechanism
        plain = spec.times == 1 and spec.sampling_rate is None
        if isinstance(mechanism, ApproxDP) and mechanism.delta == 0 and plain:
            return PureDPToGDP(mechanism.epsilon)
        if isinstance(mechanism, ApproxDP) and mechanism.delta > 0:
            raise ComputationError(
                f"{spec.text}: (eps, delta)-DP with delta > 0 implies mu-GDP for no finite mu",
                "it allows an event that reveals everything with probability delta",
            )
    raise ComputationError(
        "the composition is not exactly GDP, so no exact mu exists",
        "use --method clt for the CLT approximation, or --delta/--epsilon for rigorous figures",
    )


def group_spec(spec: Spec, group_size: int) -> Spec:
    """The guarantee for groups of k individuals (GDP paper Thm 3); for GDP simply (k mu)-GDP."""
    from gdpcli.mechanisms import GDP

    mu = spec.exact_mu
    if mu is not None:
        return Spec(GDP(gdp.group_mu(mu, group_size)), 1, None, None, f"group {group_size} of {spec.text}")
    raise ComputationError("group privacy is only implemented for GDP specs so far")


def describe(accountant: object) -> dict[str, float]:
    """Context columns for an accountant's rows: the exact mu when the result is GDP."""
    return {"mu": accountant.mu_total} if isinstance(accountant, ExactGDP) else {}
