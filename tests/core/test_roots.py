"""core.roots: the one integer search (step budgets in sgd and compose)."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.core.roots import largest_integer_at_most, largest_integer_where
from gdpcli.errors import ComputationError


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 10**9), st.integers(1, 10**9))
def test_largest_integer_where_finds_the_boundary(boundary: int, guess: int) -> None:
    assert largest_integer_where(lambda t: t <= boundary, guess=guess, step=0.02) == boundary
    assert largest_integer_where(lambda t: t <= boundary, guess=guess) == boundary


def test_largest_integer_where_fails_loudly_at_its_limit() -> None:
    with pytest.raises(ComputationError, match="search limit"):
        largest_integer_where(lambda t: True, limit=1000)
    assert largest_integer_where(lambda t: False, guess=50) == 0


def _counted(value: Callable[[int], float]) -> tuple[Callable[[int], float], list[int]]:
    """value, and the list of the points it was evaluated at."""
    calls: list[int] = []

    def counted(n: int) -> float:
        calls.append(n)
        return value(n)

    return counted, calls


@settings(max_examples=100, deadline=None)
@given(
    st.floats(1.0, 1e7),
    st.floats(0.2, 3.0),
    st.floats(0.0, 1e-3),
    st.integers(1, 10**8),
    st.integers(0, 10**6),
)
def test_largest_integer_at_most_finds_a_boundary(
    scale: float, power: float, jitter: float, guess: int, seed: int
) -> None:
    """For a growing value (a power of n, with a deterministic jitter of relative size `jitter` as the PLD
    grid gives the certified epsilon), the answer n has value(n) <= target < value(n + 1), as the bisection
    of largest_integer_where has it: with no jitter, the same n."""

    def value(n: int) -> float:
        wobble = jitter * math.sin(1e3 * n + seed)
        return (n / scale) ** power * (1.0 + wobble)

    n = largest_integer_at_most(value, 1.0, guess=guess, step=0.002)
    assert value(n) <= 1.0 < value(n + 1) if n else value(1) > 1.0
    if jitter == 0.0:
        assert n == largest_integer_where(lambda t: value(t) <= 1.0, guess=guess, step=0.002)


def test_largest_integer_at_most_interpolates_a_smooth_value() -> None:
    """epsilon ~ sqrt(T) near a budget of 8e6 steps, bracketed within 0.2 % (what dpsgd.largest_steps
    hands it): interpolation needs fewer than half the evaluations bisection needs."""
    value, calls = _counted(lambda n: math.sqrt(n / 8_133_295.5))
    assert largest_integer_at_most(value, 1.0, guess=8_100_000, step=0.002) == 8_133_295
    bisection, bisected = _counted(lambda n: math.sqrt(n / 8_133_295.5))
    largest_integer_where(lambda n: bisection(n) <= 1.0, guess=8_100_000, step=0.002)
    assert len(set(calls)) < 0.5 * len(bisected)


def test_largest_integer_at_most_survives_inf_and_nan() -> None:
    """A value that is inf (no finite bound) or nan beyond the boundary is not interpolated through."""
    assert largest_integer_at_most(lambda n: 0.5 if n <= 1234 else math.inf, 1.0, guess=1000) == 1234
    assert largest_integer_at_most(lambda n: 0.5 if n <= 777 else math.nan, 1.0, guess=1000) == 777
