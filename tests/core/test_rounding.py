"""gdpcli.core.rounding: the nearest float at which the inequality was seen to hold, and only such floats."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gdpcli.core.rounding import elementwise, to_safe_side
from gdpcli.errors import ComputationError


def _at_least(candidate: np.ndarray, bound: np.ndarray) -> np.ndarray:
    return candidate >= bound


def test_values_that_hold_are_returned_unchanged() -> None:
    x = np.array([1.0, 2.0, 3.0])
    out = to_safe_side(x, elementwise(_at_least, np.array([0.5, 2.0, -1.0])), "up", what="t")
    assert np.array_equal(out, x)
    assert out is not x


@given(
    st.floats(min_value=-1e300, max_value=1e300, allow_nan=False),
    st.floats(min_value=-1e300, max_value=1e300, allow_nan=False),
)
def test_up_reaches_the_smallest_passing_float(start: float, bound: float) -> None:
    (out,) = to_safe_side(np.array([start]), elementwise(_at_least, np.array([bound])), "up", what="t")
    assert out >= bound
    assert out == max(start, bound) or np.nextafter(out, -np.inf) < bound


@given(
    st.floats(min_value=-1e300, max_value=1e300, allow_nan=False),
    st.floats(min_value=-1e300, max_value=1e300, allow_nan=False),
)
def test_down_reaches_the_largest_passing_float(start: float, bound: float) -> None:
    def at_most(candidate: np.ndarray, limit: np.ndarray) -> np.ndarray:
        return candidate <= limit

    (out,) = to_safe_side(np.array([start]), elementwise(at_most, np.array([bound])), "down", what="t")
    assert out <= bound
    assert out == min(start, bound) or np.nextafter(out, np.inf) > bound


def test_a_noisy_inequality_returns_only_checked_values() -> None:
    """x^2 >= 2 in floating point is not monotone at the ulp level everywhere; every result passes it."""
    rng = np.random.default_rng(1)
    target = rng.uniform(1.0, 1e6, 10_000)
    start = np.sqrt(target) * (1 - 1e-13)

    def square_at_least(candidate: np.ndarray, bound: np.ndarray) -> np.ndarray:
        return candidate * candidate >= bound

    out = to_safe_side(start, elementwise(square_at_least, target), "up", what="t")
    assert np.all(out * out >= target)
    assert np.all(out >= start)


def test_no_passing_float_raises() -> None:
    never = elementwise(lambda candidate, _: np.zeros(candidate.shape, dtype=bool), np.array([0.0]))
    with pytest.raises(ComputationError, match="t: no float"):
        to_safe_side(np.array([1.0]), never, "up", what="t")


def test_nan_raises() -> None:
    with pytest.raises(ComputationError, match="NaN"):
        to_safe_side(np.array([np.nan]), elementwise(_at_least, np.array([0.0])), "up", what="t")
