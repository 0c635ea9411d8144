"""Vectorized standard-normal kernels over scipy.special ufuncs.

Phi is the standard normal CDF, Phi^-1 its quantile function. Every function
accepts scalars or numpy arrays and broadcasts; scalars in give floats out.
"""

from __future__ import annotations

import numpy as np
from scipy import special

ArrayLike = float | np.ndarray


def Phi(x: ArrayLike) -> ArrayLike:
    """Standard normal CDF Phi(x)."""
    return special.ndtr(x)


def log_Phi(x: ArrayLike) -> ArrayLike:
    """log Phi(x), accurate far into the lower tail (x down to about -1e150)."""
    return special.log_ndtr(x)


def Phi_inv(p: ArrayLike) -> ArrayLike:
    """Quantile Phi^-1(p) for p in [0, 1]."""
    return special.ndtri(p)


def Phi_inv_exp(log_p: ArrayLike) -> ArrayLike:
    """Phi^-1(exp(log_p)) for log_p <= 0, accurate when exp(log_p) underflows."""
    return special.ndtri_exp(log_p)


def phi(x: ArrayLike) -> ArrayLike:
    """Standard normal density."""
    return np.exp(-0.5 * np.square(x)) / np.sqrt(2.0 * np.pi)


def erfcx(x: ArrayLike) -> ArrayLike:
    """Scaled complementary error function exp(x^2) erfc(x)."""
    return special.erfcx(x)
