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
`repeat_select` (the best of a random number of runs, a hyper-parameter search),
`dpsgd_run` (a DP-SGD run as an event), `kinds` (the kinds the spec language knows) and `spec` (the spec
language's parser, `spec_values` its key=value reader). Adding a mechanism means adding one class to a
family module and listing it in `kinds`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gdpcli.events.repeated import Repeated

_HOMES = {
    "dpsgd_run": ("Run", "dpsgd"),
    "epsilon_delta": ("ApproxDP", "Laplace", "RandomizedResponse"),
    "gaussian": ("GDP", "DiscreteGaussian", "Gaussian"),
    "kinds": ("MECHANISMS",),
    "mechanism": ("Mechanism", "RdpCurve", "RdpOnly"),
    "renyi": ("Renyi", "RenyiCurve", "ZeroConcentrated"),
    "repeated": ("Repeated",),
    "repeat_select": ("RepeatAndSelect", "RunsDistribution"),
    "sampled": ("Sampled", "Step"),
    "sampling": ("SCHEMES", "Neighbouring", "Sampling", "Scheme", "batches_per_epoch", "taking"),
    "shuffled_reports": ("Shuffle", "ShuffleRR"),
    "spec_values": ("SpecValues",),
    "tabulated": ("ProfileCurve", "TradeoffCurve"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}
"""Each public name's module: a name is imported from it when first used, so that a command that needs
the batch schemes' words does not build every mechanism kind (start-up)."""
__all__ = sorted([*_HOME, "parse"])


def __getattr__(name: str) -> object:
    if name in _HOME:
        return getattr(importlib.import_module(f"gdpcli.events.{_HOME[name]}"), name)
    raise AttributeError(f"module 'gdpcli.events' has no attribute {name!r}")


def parse(spec: str) -> Repeated:
    """An event from one word of the spec language (`gdpcli.events.spec`), e.g. "gaussian:sigma=2x10"."""
    from gdpcli.events.spec import parse_spec

    return parse_spec(spec)
