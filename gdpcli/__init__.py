"""gdpcli: a privacy calculator built on f-DP and Gaussian differential privacy.

The small public Python API is the `gdp` module:

    >>> from gdpcli import gdp
    >>> round(gdp.epsilon(1e-5, 1.0), 6)
    4.377178

It is loaded lazily so that `gdpcli --version` never imports numpy or scipy.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__version__ = "0.1.0"
__all__ = ["__version__", "gdp"]


def __getattr__(name: str) -> ModuleType:
    if name == "gdp":
        return importlib.import_module("gdpcli.api")
    raise AttributeError(f"module 'gdpcli' has no attribute {name!r}")
