"""Sensitivities of matrix-factorization mechanisms (DP-FTRL's tree aggregation, banded strategies).

A matrix mechanism releases C x + Z for the T x d matrix x of the steps' summed clipped gradients, the
strategy C (T x T, lower triangular) and Gaussian noise Z of standard deviation sigma C_clip per entry.
One example changes the rows of x it participates in by at most C_clip each, so the mechanism is a
Gaussian mechanism whose sensitivity (in units of C_clip) is the largest ||sum_{i in P} c_i g_i||_F over
the participation patterns P the scheme allows (c_i the columns of C, ||g_i|| <= 1). Pure numerics.
"""

from __future__ import annotations

import numpy as np


def tree_height(leaves: int) -> int:
    """The nodes from a leaf to the root that hold it in the online binary tree over `leaves` steps,
    ceil(log2(leaves + 1)) (0 for no steps): the nodes one step's gradient is added to (Kairouz et al.,
    ICML 2021, arXiv:2103.00039, Sec. 3 and App. D; dp_accounting's SingleEpochTreeAggregationDpEvent)."""
    return int(leaves).bit_length()  # == ceil(log2(n + 1)) for n >= 0, exactly


def tree_squared_sensitivity(steps: int, steps_per_epoch: int) -> int:
    """The squared sensitivity of tree aggregation restarted every epoch of n steps: each example is in one
    leaf of each tree, so it is added to the h(n) nodes of each complete epoch's tree and h(T mod n) of the
    last one (DP-FTRL, arXiv:2103.00039, App. D); the trees' noise is independent, so the squares add."""
    complete, rest = divmod(steps, steps_per_epoch)
    return complete * tree_height(steps_per_epoch) + tree_height(rest)


def band_violations(strategy: np.ndarray, bands: int) -> np.ndarray:
    """The (row, column) indices of the nonzero entries outside the b bands of a lower-triangular matrix,
    i.e. where column > row or row - column >= b."""
    rows, columns = np.nonzero(strategy)
    outside = (columns > rows) | (rows - columns >= bands)
    return np.stack([rows[outside], columns[outside]], axis=1)


def column_norms(strategy: np.ndarray) -> np.ndarray:
    """||c_i||_2 of every column: one participation's sensitivity at step i."""
    return np.linalg.norm(strategy, axis=0)


def min_sep_squared_sensitivity(norms: np.ndarray, bands: int) -> float:
    """max over patterns P with gaps of at least b of sum_{i in P} ||c_i||^2, the squared sensitivity of a
    b-banded strategy under b-min-sep participation: columns b or more apart have disjoint rows, so the
    sum over P has squared norm sum ||c_i||^2 ||g_i||^2 (Choquette-Choo et al., NeurIPS 2023,
    arXiv:2306.08153, Sec. 3, Algorithm 3 VecSens). Dynamic programme over the participations:
    f_k(i) = max(f_k(i + 1), w_i + f_{k-1}(i + b)), vectorized as a reversed running maximum."""
    weights = np.asarray(norms, dtype=float) ** 2
    steps = len(weights)
    best = np.zeros(steps + bands)
    for _ in range(-(-steps // bands)):
        taken = best.copy()
        taken[:steps] = weights + best[bands:]
        best = np.maximum.accumulate(taken[::-1])[::-1]
    return float(best[0])


NEAR_TOP = 1e-6
"""Columns within this relative distance of the largest norm form the top level (a file's rounding)."""


def cyclic_lower_levels(norms: np.ndarray, bands: int) -> list[tuple[float, int]]:
    """The steps of one example with the most participations under cyclic participation (part j at steps
    j, j + b, ...; the parts j < T mod b, or all when b divides T, have ceil(T / b)) as (norm, count)
    levels its columns' norms are at least: the columns near the largest norm of the strategy (NEAR_TOP)
    at the least of theirs, the others at the least of theirs (columns of norm 0 left out). Of those
    parts, the one with the most columns near the largest norm, then the largest least norm."""
    steps, top = len(norms), float(np.max(norms))
    most = -(-steps // bands)
    best: list[tuple[float, int]] = []
    best_key = (-1, -1.0)
    for part in range(bands):
        columns = np.asarray(norms[part::bands], dtype=float)
        if len(columns) < most:
            continue
        near = columns >= top * (1 - NEAR_TOP)
        rest = columns[~near & (columns > 0)]
        groups = [group for group in (columns[near], rest) if len(group)]
        key = (int(np.sum(near)), float(np.min(rest)) if len(rest) else 0.0)
        if key > best_key:
            best_key, best = key, [(float(np.min(group)), len(group)) for group in groups]
    return best
