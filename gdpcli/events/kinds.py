"""The mechanism kinds of the spec language, in the order help texts list them."""

from __future__ import annotations

from gdpcli.events.epsilon_delta import ApproxDP, Laplace, RandomizedResponse
from gdpcli.events.gaussian import GDP, DiscreteGaussian, Gaussian
from gdpcli.events.mechanism import Mechanism
from gdpcli.events.renyi import RenyiCurve, ZeroConcentrated
from gdpcli.events.shuffled_reports import Shuffle, ShuffleRR
from gdpcli.events.tabulated import ProfileCurve, TradeoffCurve

MECHANISMS: tuple[type[Mechanism], ...] = (
    GDP,
    Gaussian,
    Laplace,
    ApproxDP,
    RandomizedResponse,
    DiscreteGaussian,
    Shuffle,
    ShuffleRR,
    ZeroConcentrated,
    RenyiCurve,
    TradeoffCurve,
    ProfileCurve,
)
"""The mechanism kinds of the spec language, in the order help texts list them."""
