"""Privacy events: immutable descriptions of what touches the data, each knowing its own mathematics.

A mechanism (GDP, Gaussian, Laplace, (eps, delta)-DP, an RDP curve) is one step; `Sampled` runs a
mechanism on a random sample (a scheme, a rate and the neighbouring relation it implies); `Repeated` runs a
step `times` times (what the spec suffix xN means). The accountants (gdpcli.accounting) ask an event for
its representations (trade-off function, privacy profile, dominating pair for the PLD engine, CLT
functionals, RDP curve, ...) and never look at its type: a representation an event does not have raises
ComputationError with a hint. Representations import the numerics lazily, so building events imports no
numpy.

The modules of this package: `sampling` (batch schemes and neighbouring relations), `mechanism` (the base
class and its representations), one module per family of mechanisms (`gaussian`, `epsilon_delta`,
`renyi`, `shuffled_reports`, `tabulated`), `sampled`, `repeated`, `group` (a step for groups of records),
`dpsgd` (a DP-SGD run as an event), `kinds` (the kinds the spec language knows) and `spec` (the spec
language's parser, `spec_values` its key=value reader). Adding a mechanism means adding one class to a
family module and listing it in `kinds`.
"""

from __future__ import annotations

from gdpcli.events.dpsgd import Run, dpsgd
from gdpcli.events.epsilon_delta import ApproxDP, Laplace, RandomizedResponse
from gdpcli.events.gaussian import GDP, DiscreteGaussian, Gaussian
from gdpcli.events.kinds import MECHANISMS
from gdpcli.events.mechanism import Mechanism, RdpCurve
from gdpcli.events.renyi import Renyi, RenyiCurve, ZeroConcentrated
from gdpcli.events.repeated import Repeated
from gdpcli.events.sampled import Sampled, Step
from gdpcli.events.sampling import SCHEMES, Neighbouring, Sampling, Scheme, batches_per_epoch
from gdpcli.events.shuffled_reports import Shuffle, ShuffleRR
from gdpcli.events.spec import parse_spec
from gdpcli.events.spec_values import SpecValues
from gdpcli.events.tabulated import ProfileCurve, TradeoffCurve

__all__ = [
    "GDP",
    "MECHANISMS",
    "SCHEMES",
    "ApproxDP",
    "DiscreteGaussian",
    "Gaussian",
    "Laplace",
    "Mechanism",
    "Neighbouring",
    "ProfileCurve",
    "RandomizedResponse",
    "RdpCurve",
    "Renyi",
    "RenyiCurve",
    "Repeated",
    "Run",
    "Sampled",
    "Sampling",
    "Scheme",
    "Shuffle",
    "ShuffleRR",
    "SpecValues",
    "Step",
    "TradeoffCurve",
    "ZeroConcentrated",
    "batches_per_epoch",
    "dpsgd",
    "parse",
]


def parse(spec: str) -> Repeated:
    """An event from one word of the spec language (`gdpcli.events.spec`), e.g. "gaussian:sigma=2x10"."""
    return parse_spec(spec)
