"""core.roots: the one integer search (step budgets in sgd and compose)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.core.roots import largest_integer_where
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
