"""Tests of the balls-in-bins (random allocation) bounds (gdpcli.core.allocation, accounting.allocation).

Expected numbers come from mpmath (b = 2: a one-dimensional integral, recipe in _mp_profile) or from Monte
Carlo estimates of the exact pair (1/b) sum_t N(s e_t, I) vs N(0, I) with a confidence interval, fixed
seed; never from the code under test.
"""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from gdpcli.accounting import balls_in_bins as accounting
from gdpcli.accounting.dpsgd import Run
from gdpcli.core import allocation

ACCURACY = 0.02  # coarser lattices than the CLI's default keep the file fast; the bounds stay rigorous


def _mp_profile(shift: float, epsilon: float, direction: str) -> mp.mpf:
    """The exact b = 2 profile at 30 digits: with Y = e^{s z - s^2/2} (E[(Y - c)_+] = Phi(d1) - c Phi(d2),
    E[(c - Y)_+] = c Phi(-d2) - Phi(-d1), d1 = (s^2/2 - log c) / s, d2 = d1 - s), integrate over z1:
    remove = E[(Y1 + Y2)/2 - x)_+] = E_z1[E[(Y2 - c)_+] / 2], c = 2x - Y1 (E Y2 - c when c <= 0);
    add = E[(1 - x (Y1 + Y2)/2)_+] = E_z1[(x/2) E[(c - Y2)_+]], c = 2/x - Y1 (0 when c <= 0)."""
    with mp.workdps(30):
        s, x = mp.mpf(shift), mp.exp(mp.mpf(epsilon))

        def call(c: mp.mpf) -> mp.mpf:
            d1 = (s * s / 2 - mp.log(c)) / s
            return mp.ncdf(d1) - c * mp.ncdf(d1 - s)

        def inner(z: mp.mpf) -> mp.mpf:
            y1 = mp.exp(s * z - s * s / 2)
            if direction == "remove":
                c = 2 * x - y1
                return (1 - c) / 2 if c <= 0 else call(c) / 2
            c = 2 / x - y1
            return 0 if c <= 0 else x / 2 * (call(c) - 1 + c)  # E(c - Y)_+ = E(Y - c)_+ - 1 + c

        if direction == "remove":
            kink = (mp.log(2 * x) + s * s / 2) / s
        else:
            kink = (mp.log(2 / x) + s * s / 2) / s
        return mp.quad(lambda z: inner(z) * mp.npdf(z), [-mp.inf, kink - 1, kink, kink + 1, mp.inf])


def _monte_carlo(shift: float, batches: int, epsilons: np.ndarray, samples: int = 400_000):
    """(low, high) 99.9999 % confidence limits (5 standard errors) of both profiles of the exact pair, from
    S/b = mean_t e^{s x_t - s^2/2}, x ~ N(0, I_b) (remove: E(S/b - x)_+; add: E(1 - x S/b)_+)."""
    rng = np.random.default_rng(20250214)
    ratio = np.exp(shift * rng.standard_normal((samples, batches)) - 0.5 * shift * shift).mean(axis=1)
    x = np.exp(epsilons)[:, None]
    limits = {}
    for name, terms in (
        ("remove", np.maximum(ratio[None, :] - x, 0.0)),
        ("add", np.maximum(1.0 - x * ratio[None, :], 0.0)),
    ):
        mean, error = terms.mean(axis=1), 5.0 * terms.std(axis=1) / np.sqrt(samples)
        limits[name] = (mean - error, mean + error)
    return limits


@pytest.mark.parametrize(
    "shift", [pytest.param(0.5, marks=pytest.mark.slow), 1.0, pytest.param(2.0, marks=pytest.mark.slow)]
)
def test_profiles_bracket_mpmath_for_two_batches(shift: float) -> None:
    upper, _ = allocation.upper_pair(shift, 2, ACCURACY)
    lower, _ = allocation.lower_pair(shift, 2, ACCURACY)
    epsilons = np.array([-0.5, 0.0, 0.3, 1.0, 2.0])
    for direction in ("remove", "add"):
        exact = np.array([float(_mp_profile(shift, e, direction)) for e in epsilons])
        high = getattr(upper, direction)(epsilons)
        low = getattr(lower, direction)(epsilons)
        assert np.all(high >= exact), (direction, high, exact)
        assert np.all(low <= exact), (direction, low, exact)
        # close where the lattice resolves the values of S that matter (s <= 1 here): not far in the tail,
        # nor (add direction, where S / b < e^-eps counts) at S / b of a few lattice spacings
        if shift <= 1.0:
            body = (exact > 1e-3) & ((direction == "remove") | (epsilons <= 1.0))
            np.testing.assert_allclose(high[body], exact[body], rtol=0.02)
            np.testing.assert_allclose(low[body], exact[body], rtol=0.02)


@pytest.mark.parametrize(
    ("shift", "batches", "epsilons"),
    [(1.0, 10, (0.0, 0.1, 0.3, 0.6)), pytest.param(0.5, 100, (0.0, 0.05, 0.1), marks=pytest.mark.slow)],
)
def test_profiles_bracket_monte_carlo(shift: float, batches: int, epsilons: tuple[float, ...]) -> None:
    """At epsilons where each profile is far above 1 / samples (a confidence interval means something)."""
    epsilons = np.array(epsilons)
    limits = _monte_carlo(shift, batches, epsilons)
    upper, _ = allocation.upper_pair(shift, batches, ACCURACY)
    lower, _ = allocation.lower_pair(shift, batches, ACCURACY)
    for direction in ("remove", "add"):
        low_limit, high_limit = limits[direction]
        assert np.all(getattr(upper, direction)(epsilons) >= low_limit), direction
        assert np.all(getattr(lower, direction)(epsilons) <= high_limit), direction


@pytest.mark.parametrize(
    ("shift", "batches"),
    [
        *((shift, 2) for shift in (0.5, 1.0, 5.0)),
        *((shift, 30) for shift in (0.5, 1.0)),
        pytest.param(2.5, 2, marks=pytest.mark.slow),  # 1.6 s, between 1.0 and 5.0
        *(pytest.param(shift, 30, marks=pytest.mark.slow) for shift in (2.5, 5.0)),  # 2 s and 5 s
        *(pytest.param(shift, 1000, marks=pytest.mark.slow) for shift in (0.5, 1.0, 2.5, 5.0)),
    ],
)
def test_upper_profile_above_lower_profile(shift: float, batches: int) -> None:
    upper, _ = allocation.upper_pair(shift, batches, ACCURACY)
    lower, _ = allocation.lower_pair(shift, batches, ACCURACY)
    epsilons = np.linspace(-2.0, 12.0, 57)
    for direction in ("remove", "add"):
        assert np.all(getattr(upper, direction)(epsilons) >= getattr(lower, direction)(epsilons))


def _run(shift: float, batches: int, steps: int) -> Run:
    return Run(1.0 / batches, steps, 1.0 / shift, sampling="poisson", sensitivity=1.0)


@pytest.mark.parametrize(
    ("shift", "batches", "epochs"),
    [
        (0.5, 1000, 10),
        (1.0, 30, 3),
        *(pytest.param(*run, marks=pytest.mark.slow) for run in ((2.0, 2, 1), (5.0, 10, 2))),  # 1.5 s, 4 s
    ],
)
def test_epsilon_upper_above_lower(shift: float, batches: int, epochs: int) -> None:
    run, deltas = _run(shift, batches, epochs * batches), np.array([1e-3, 1e-6])
    high = accounting.upper(run, deltas, ACCURACY).values
    low = accounting.lower(run, deltas, ACCURACY).values
    assert np.all(high >= low) and np.all(low > 0.0)


def test_partial_epoch_counts_whole_above_and_not_below() -> None:
    run = _run(1.0, 10, 21)  # two epochs and one step
    [upper] = accounting.upper(run, np.array([1e-5]), ACCURACY).details
    [lower] = accounting.lower(run, np.array([1e-5]), ACCURACY).details
    assert (upper["epochs_counted"], lower["epochs_counted"]) == (3, 2)


def test_mnist_figures_labelled_and_ordered() -> None:
    run = _run(1.0 / 1.1, 235, 60 * 235)
    upper, lower, poisson = accounting.figures(run, 1e-5, 0.005)
    assert (upper.method, lower.method, poisson.method) == (
        accounting.UPPER_METHOD,
        accounting.LOWER_METHOD,
        accounting.POISSON_METHOD,
    )
    assert str(upper.guarantee) != str(lower.guarantee)
    assert 2.2 < lower.values[0] <= upper.values[0] < 1.01 * lower.values[0]
