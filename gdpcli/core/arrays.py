"""Array conventions shared by the numerics core: scalars in -> Python floats out."""

from __future__ import annotations

import numpy as np

ArrayLike = float | np.ndarray


def as_output(x: np.ndarray) -> ArrayLike:
    """Return a Python float for 0-d results, the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x
