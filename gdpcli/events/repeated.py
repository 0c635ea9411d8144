"""`Repeated`: a step run `times` times on the same data (self-composition)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gdpcli.events.mechanism import Mechanism
from gdpcli.events.sampled import Step
from gdpcli.events.sampling import Sampling


@dataclass(frozen=True)
class Repeated:
    """A step run `times` times on the same data (self-composition)."""

    step: Step
    times: int = 1

    @property
    def mechanism(self) -> Mechanism:
        """The mechanism behind the step (without its sampling)."""
        return self.step.mechanism

    @property
    def sampling_rate(self) -> float | None:
        return self.step.sampling_rate

    @property
    def sampling(self) -> Sampling | None:
        return self.step.scheme

    @property
    def exact_mu(self) -> float | None:
        """mu when the event is exactly GDP: sqrt(times) mu (GDP paper Cor. 2), else None."""
        mu = self.step.gdp_mu
        return None if mu is None else mu * math.sqrt(self.times)

    @property
    def pure_epsilon(self) -> float | None:
        """times x the step's pure epsilon (basic composition of pure DP), or None."""
        step = self.step.pure_epsilon
        return None if step is None else self.times * step

    def describe(self) -> str:
        return self.step.describe() + (f"x{self.times}" if self.times > 1 else "")

    def with_times(self, times: int) -> Repeated:
        return Repeated(self.step, times)

    def tail_limit(self) -> tuple[float | None, str]:
        """The GDPT tail limit (GDPT Thm 4.4) of the event, and how it is known:

        - pure DP steps: delta vanishes beyond a finite eps: 0 (closed form);
        - an (eps, delta)-DP part with delta > 0 (scaled by p when subsampled) stays: inf;
        - GDP / Gaussian subsampled: subsampling never hurts (C_p(f) >= f, GDP paper Sec. 4), so G <=
          sqrt(times) mu everywhere: the tail limit is at most that (an upper bound);
        - rho-zCDP (discrete Gaussian): delta <= exp(-(eps - rho)^2 / (4 rho)), so G <= sqrt(2 rho times)
          in the limit (an upper bound; subsampling does not change it);
        - anything else: not known here (None: gdpt-identify estimates it from the profile, a heuristic
          labelled numerical_estimate; an infinite upper bound would prove nothing).
        """
        mechanism = self.mechanism
        if mechanism.delta_part > 0.0:
            return math.inf, "closed_form"
        if mechanism.gdp_mu is not None:
            return mechanism.gdp_mu * math.sqrt(self.times), "upper_bound"
        if mechanism.zcdp_rho is not None:
            return math.sqrt(2.0 * mechanism.zcdp_rho * self.times), "upper_bound"
        if mechanism.pure_epsilon is not None:
            return 0.0, "closed_form"
        return None, "numerical_estimate"
