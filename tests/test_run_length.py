"""accounting.run.RunLength: the rate and length of a run as given, counted by each scheme (closed forms)."""

from __future__ import annotations

import numpy as np
import pytest

from gdpcli.accounting import cyclic_poisson
from gdpcli.accounting import matrix_mechanism as mf
from gdpcli.accounting.run import RunLength, schedule
from gdpcli.errors import InputError


def test_cyclic_poisson_counts_epochs_of_the_whole_data() -> None:
    # p = b B / N = 4 * 256 / 60000; T = ceil(E N / B) = ceil(2 * 60000 / 256) = ceil(468.75)
    assert cyclic_poisson.schedule(RunLength(60000, 256, epochs=2), 4) == (4 * 256 / 60000, 469)
    # with a rate p an epoch is b / p steps: ceil(2 * 4 / 0.02) = 400
    assert cyclic_poisson.schedule(RunLength(sampling_rate=0.02, epochs=2), 4) == (0.02, 400)
    assert cyclic_poisson.schedule(RunLength(sampling_rate=0.02, steps=77), 4) == (0.02, 77)


def test_tree_epochs_are_ceil_one_over_q_steps() -> None:
    # q = 0.01: an epoch of ceil(1 / q) = 100 steps, 2.5 epochs are 250 steps
    assert mf.tree(5.0, RunLength(sampling_rate=0.01, epochs=2.5)).steps == 250


def test_a_strategy_matrix_gives_the_steps() -> None:
    # a 6 x 6 identity is a 1-banded strategy for 6 steps when neither epochs nor steps are given
    assert mf.banded(2.0, 1, RunLength(sampling_rate=0.5), strategy=np.eye(6)).steps == 6


@pytest.mark.parametrize(
    ("count", "message"),
    [
        (lambda: schedule(RunLength(60000, 256)), "exactly one of epochs and steps (T = ceil(epochs N / B)"),
        (lambda: mf.tree(1.0, RunLength(sampling_rate=0.01, epochs=1, steps=3)), "an epoch is 100 steps"),
        (lambda: mf.banded(1.0, 4, RunLength(), amplified=False), "an epoch is 4 steps"),
        (lambda: schedule(RunLength(sampling_rate=1e-9, epochs=1e4)), "the run has 10000000000000 steps"),
    ],
)
def test_a_missing_doubled_or_too_long_length_is_refused(count, message: str) -> None:
    with pytest.raises(InputError) as refused:
        count()
    assert message in str(refused.value)
