"""Group privacy of whole compositions: every event for groups of K records (K records per user).

Each step is replaced by its group version (gdpcli.events.group) and the list is composed as usual (a
group of K records is a pair of datasets on which every step's pair is dominated by its group version, and
composition keeps domination, GDP paper Sec. 3):

- a mechanism that adds noise to a query of bounded sensitivity: the same mechanism at K times the
  sensitivity (Mechanism.group: Gaussian, Laplace, discrete Gaussian), exact;
- a mu-GDP guarantee: (K mu)-GDP (GDP paper Thm 3), exact;
- a Poisson-subsampled Gaussian step whose K records are each sampled at rate q: the binomial mixture
  sum_j C(K, j) q^j (1 - q)^{K - j} N(j mu, 1) against N(0, 1) (gdpcli.core.group), composed by the PLD
  engine with rigorous upper and lower bounds (the pair is attained, so its lower bounds are the group's).

Anything else (fixed-size batches, subsampled non-Gaussian steps, RDP curves) is refused with the reason;
a single unsampled mechanism without a closed form keeps the general bound 1 - (1 - f)^{o K} of Thm 3
(`gdpcli convert SPEC --group K`, accounting.group_accountant).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from gdpcli.errors import InputError, parameter
from gdpcli.events import Repeated
from gdpcli.events.group import group_step

MAX_GROUP = 10**6
"""The largest group gdpcli accepts (the closed forms scale a parameter; the mixture pair allows less)."""


def check_group(group_size: int, option: str = parameter("group")) -> int:
    """K as a whole number in [1, MAX_GROUP]; InputError (exit 2) otherwise."""
    if isinstance(group_size, bool) or int(group_size) != group_size or not 1 <= group_size <= MAX_GROUP:
        raise InputError(f"{option}: {group_size!r} is out of range", f"allowed: 1 <= K <= {MAX_GROUP}")
    return int(group_size)


def group_specs(specs: Sequence[Repeated], group_size: int) -> list[Repeated]:
    """Every spec for groups of K records (K = 1: the specs themselves), each repeated as often."""
    check_group(group_size)
    if group_size == 1:
        return list(specs)
    return [Repeated(group_step(spec.step, group_size), spec.times) for spec in specs]


def naive_mu(mu: float, group_size: int) -> float:
    """K mu: a mu-GDP guarantee for groups of K (GDP paper Thm 3)."""
    return mu * group_size if math.isfinite(mu) else mu


__all__ = ["MAX_GROUP", "check_group", "group_specs", "naive_mu"]
