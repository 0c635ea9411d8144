"""gdpcli: a privacy calculator built on f-DP and Gaussian differential privacy.

The public Python API: `gdp` (GDP conversions on numbers and arrays), `events` (what touches the data:
mechanisms, sampling, repetition, DP-SGD runs) and `account` (labelled answers for events):

    >>> from gdpcli import gdp
    >>> round(gdp.epsilon(1e-5, 1.0), 6)
    4.377178
    >>> from gdpcli import account, events
    >>> round(account.certified_epsilon(events.dpsgd(1.1, 256 / 60000, 14063), delta=1e-5), 3)
    2.382

For a training script, `Accountant` and `get_noise_multiplier` have Opacus's interface and answer with
certified figures (gdpcli.training); `dp_events` reads dp_accounting's DpEvents as events and writes
events back in their form.

They are loaded lazily so that `gdpcli --version` never imports numpy or scipy.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"
__all__ = ["Accountant", "__version__", "account", "dp_events", "events", "gdp", "get_noise_multiplier"]
_MODULES = {
    "gdp": "gdpcli.gdp",
    "events": "gdpcli.events",
    "account": "gdpcli.account",
    "dp_events": "gdpcli.dp_events",
}
_NAMES = {"Accountant": "gdpcli.training", "get_noise_multiplier": "gdpcli.training"}


def __getattr__(name: str) -> object:
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    if name in _NAMES:
        return getattr(importlib.import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'gdpcli' has no attribute {name!r}")
