"""The numerics kernels against mpmath over every order of magnitude.

Reference data: tests/data/kernels/*.json, written by tools/reference/generate_kernels.py (its docstring says
how): mpmath at 60 digits, more where a formula cancels, checked at two precisions; inputs are float64 written
exactly, so each reference value is the exact value at exactly the input. Ranges: mu in [1e-8, 40],
epsilon in [0, 1e3], delta in [1e-300, 0.5], alpha in [1e-300, 1], epsilon0 of the closed forms in [1e-8, 1e3]
(and 0), log-uniform where a range spans decades, with edge points and the places where a formula cancels or
switches form. No number in this module comes from the code under test.

The rules (v the true value, c the computed one, NORMAL = 2^-1022 the smallest normal float):

1. Forward kernels (gdp.delta, gdp.tradeoff and the Laplace and (eps, delta) closed forms of core.tradeoff):
   where v >= NORMAL, |c - v| <= 1e-12 v (for gdp.delta the bound is gdp.DELTA_RELATIVE_ERROR, which
   calibrate relies on). Where v < NORMAL (v = 0 included): 0 <= c <= NORMAL, and gdp.delta is positive
   wherever v is (a delta below the float range comes back as the smallest subnormal, never as 0).
   One kernel has an exception, and the reason is conditioning, not the code: eps_delta_tradeoff's steep
   piece 1 - delta0 - e^eps0 alpha cancels near the kink alpha = (1 - delta0) / (1 + e^eps0), where the
   rounding of e^eps0 (which no double-precision evaluation avoids) is amplified by kappa = max(1, eps0)
   |E d beta/dE| / beta, E = e^eps0, up to about eps0 e^eps0. The generator stores kappa; the bound is
   |c - v| <= max(1e-12, 2^-52 kappa) v, which is 1e-12 away from the kink (kappa < 4500 there).
2. Inverse kernels (gdp.epsilon, gdp.mu): a kernel that evaluates delta to a relative backward error e can
   place the root only to about e kappa, kappa = |delta / (x d delta/dx)| the relative condition number of
   the problem at the point (stored by the generator). Where the true root r is positive,
   |c - r| <= max(1e-12, (1e-14 + 2 DELTA_RELATIVE_ERROR) kappa) r (the margin below moves the root by up
   to DELTA_RELATIVE_ERROR kappa): 1e-12 wherever kappa <= 0.5, 2e-12 kappa beyond (most of the data has
   kappa <= 100; the ill-conditioned points are delta just below delta(0; mu) and eps near 0, kappa up
   to 1e16). Where r = 0 (eps = 0 is the answer) only the backward contract applies.
   And the direction, against the exact root: gdp.epsilon >= r and gdp.mu <= r at every reference point
   (the kernels check delta with the margin gdp.DELTA_RELATIVE_ERROR, which rule 1 verifies).
3. The backward contract, on every reference point and on random points, independent of the reference: the
   defining inequality holds exactly in floating point (delta(eps; mu) <= target), even with the margin
   (delta(eps; mu) (1 + DELTA_RELATIVE_ERROR) <= target, so it holds for the exact delta), and it is tight:
   one float further on the unsafe side (a smaller eps, a larger mu) the margin check fails, except at the
   end point eps = 0.

The Hypothesis properties state the inequalities themselves. gdp.delta (like any floating-point evaluation
that is not built for it) is monotone only up to its rounding: for neighbouring floats the order reverses at
about 0.5 % of random points, by at most 6e-14 relative. So "delta is non-increasing in eps and non-decreasing
in mu" is asserted as delta(larger eps) <= delta(eps) (1 + 2 DELTA_RELATIVE_ERROR), which is what rule 1
implies; the closed-form trade-off functions are asserted monotone exactly.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gdpcli.core import gdp
from gdpcli.core import tradeoff as closed

DATA = Path(__file__).resolve().parents[1] / "data" / "kernels"
TOLERANCE = 1e-12
NORMAL = float(np.finfo(float).tiny)  # 2^-1022
ULP = 2.0**-52


@cache
def reference(name: str) -> tuple[tuple[str, ...], list[list]]:
    document = json.loads((DATA / f"{name}.json").read_text())
    return tuple(document["columns"]), document["rows"]


def column(name: str, key: str) -> np.ndarray:
    columns, rows = reference(name)
    index = columns.index(key)
    return np.array([float(row[index]) for row in rows])


def positive(name: str, key: str) -> np.ndarray:
    """Whether the true value is positive (it may be below the float range: then it parses to 0.0)."""
    columns, rows = reference(name)
    index = columns.index(key)
    return np.array([row[index] != "0" for row in rows])


# name: (kernel, input columns, output column, relative tolerance)
FORWARD = {
    "gdp_delta": (gdp.delta, ("epsilon", "mu"), "delta", gdp.DELTA_RELATIVE_ERROR),
    "gdp_tradeoff": (gdp.tradeoff, ("alpha", "mu"), "beta", TOLERANCE),
    "eps_delta_tradeoff": (closed.eps_delta_tradeoff, ("alpha", "epsilon0", "delta0"), "beta", TOLERANCE),
    "eps_delta_profile": (closed.eps_delta_profile, ("epsilon", "epsilon0", "delta0"), "delta", TOLERANCE),
    "laplace_tradeoff": (closed.laplace_tradeoff, ("alpha", "epsilon0"), "beta", TOLERANCE),
    "laplace_profile": (closed.laplace_profile, ("epsilon", "epsilon0"), "delta", TOLERANCE),
}


def test_delta_relative_error_is_the_verified_figure() -> None:
    assert gdp.DELTA_RELATIVE_ERROR <= TOLERANCE  # what calibrate adds is what this module verifies


@pytest.mark.parametrize("name", list(FORWARD))
def test_forward_kernel_against_mpmath(name: str) -> None:
    kernel, inputs, output, tolerance = FORWARD[name]
    arguments = [column(name, key) for key in inputs]
    truth = column(name, output)
    computed = np.asarray(kernel(*arguments), dtype=float)
    columns, rows = reference(name)
    allowed = np.full(truth.shape, tolerance)
    if "kappa" in columns:  # rule 1's exception: eps_delta_tradeoff at its kink
        allowed = np.maximum(tolerance, ULP * column(name, "kappa"))
    normal = truth >= NORMAL
    error = np.abs(computed - truth) / np.where(normal, truth, 1.0)
    worst = int(np.argmax(np.where(normal, error / allowed, 0.0)))
    assert error[worst] <= allowed[worst], (name, rows[worst], computed[worst])
    tiny = ~normal
    assert np.all((computed[tiny] >= 0.0) & (computed[tiny] <= NORMAL)), (name, np.flatnonzero(tiny))
    if name == "gdp_delta":
        assert np.all(computed[positive(name, output)] > 0.0)


@pytest.mark.parametrize("name", list(FORWARD))
def test_forward_kernel_vectorized_equals_scalar(name: str) -> None:
    kernel, inputs, _, _ = FORWARD[name]
    arguments = [column(name, key) for key in inputs]
    computed = np.asarray(kernel(*arguments), dtype=float)
    for index in range(0, computed.size, 17):
        assert float(kernel(*(float(a[index]) for a in arguments))) == computed[index]


def test_reference_data_spans_the_promised_magnitudes() -> None:
    """The data covers what the module docstring claims (so a shrunken file cannot pass silently)."""
    mu, eps = column("gdp_delta", "mu"), column("gdp_delta", "epsilon")
    assert mu.min() <= 1e-8 and mu.max() >= 40 and np.any(eps == 0) and eps.max() >= 1e3
    delta = column("gdp_delta", "delta")
    assert delta[delta > 0].min() < 1e-300 and np.sum(delta < 1e-250) >= 50
    targets = column("gdp_epsilon", "delta")
    assert targets.min() <= 1e-300 and targets.max() >= 0.5
    assert column("gdp_mu", "epsilon").max() >= 1e3 and np.any(column("gdp_mu", "epsilon") == 0)
    alpha = column("gdp_tradeoff", "alpha")
    assert (
        alpha[alpha > 0].min() <= 1e-300 and np.any(alpha == 1) and np.any((alpha > 1 - 1e-15) & (alpha < 1))
    )
    for name in ("eps_delta_tradeoff", "laplace_tradeoff"):
        assert column(name, "epsilon0").max() >= 1e3
    assert np.max(column("eps_delta_tradeoff", "kappa")) > 1e20  # the kink of a large eps0 is there


INVERSE = {
    "gdp_epsilon": (gdp.epsilon, ("delta", "mu"), "epsilon"),
    "gdp_mu": (gdp.mu, ("epsilon", "delta"), "mu"),
}


@pytest.mark.parametrize("name", list(INVERSE))
def test_inverse_kernel_against_mpmath(name: str) -> None:
    kernel, inputs, output = INVERSE[name]
    computed = np.asarray(kernel(*(column(name, key) for key in inputs)))
    truth, kappa = column(name, output), column(name, "kappa")
    root = truth > 0
    error = np.abs(computed[root] - truth[root]) / truth[root]
    allowed = np.maximum(TOLERANCE, (1e-14 + 2.0 * gdp.DELTA_RELATIVE_ERROR) * kappa[root])
    worst = int(np.argmax(error / allowed))
    assert error[worst] <= allowed[worst], (name, reference(name)[1][np.flatnonzero(root)[worst]])
    assert np.mean(kappa[root] <= 100) > 0.75  # most of the data is held to 2e-10 or better
    if name == "gdp_epsilon":
        assert np.max(kappa) > 1e12 and np.any(~root)  # the ill-conditioned corner and eps = 0 are covered


@pytest.mark.parametrize(("name", "side"), [("gdp_epsilon", 1), ("gdp_mu", -1)])
def test_inverse_kernel_is_on_the_safe_side_of_the_exact_root(name: str, side: int) -> None:
    """Rule 2's direction, against the exact root (the reference text at full precision, not its float):
    gdp.epsilon is at or above it, gdp.mu at or below, at every reference point."""
    kernel, inputs, output = INVERSE[name]
    computed = np.asarray(kernel(*(column(name, key) for key in inputs)))
    columns, rows = reference(name)
    index = columns.index(output)
    wrong = [
        row
        for c, row in zip(computed, rows, strict=True)
        if side * (mp.mpf(float(c)) - mp.mpf(row[index])) < 0
    ]
    assert not wrong, wrong[:3]


def below_target(eps: np.ndarray, mu: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The defining inequality with the margin the kernels keep: delta(eps; mu) (1 + DELTA_RELATIVE_ERROR)
    <= target, as computed. It implies delta(eps; mu) <= target as computed, and for the exact delta."""
    return np.asarray(gdp.delta(eps, mu)) * (1.0 + gdp.DELTA_RELATIVE_ERROR) <= target


def test_epsilon_contract_on_the_reference_points() -> None:
    target, mu = column("gdp_epsilon", "delta"), column("gdp_epsilon", "mu")
    eps = np.asarray(gdp.epsilon(target, mu))
    assert np.all(below_target(eps, mu, target))
    inner = eps > 0
    assert not np.any(below_target(np.nextafter(eps[inner], -np.inf), mu[inner], target[inner]))


def test_mu_contract_on_the_reference_points() -> None:
    eps, target = column("gdp_mu", "epsilon"), column("gdp_mu", "delta")
    mu = np.asarray(gdp.mu(eps, target))
    assert np.all(below_target(eps, mu, target))
    assert not np.any(below_target(eps, np.nextafter(mu, np.inf), target))


# --- the defining inequalities on random inputs ----------------------------------------------------------

MU = st.floats(1e-8, 40.0)
DELTA = st.floats(1e-300, 0.5)
EPSILON = st.one_of(st.just(0.0), st.floats(1e-12, 1e3))
EPSILON0 = st.one_of(st.just(0.0), st.floats(1e-8, 1e3))
SETTINGS = settings(max_examples=200, deadline=None)
MONOTONE_UP_TO = 1.0 + 2.0 * gdp.DELTA_RELATIVE_ERROR


@SETTINGS
@given(delta=DELTA, mu=MU)
def test_epsilon_meets_its_inequality_tightly(delta: float, mu: float) -> None:
    eps = gdp.epsilon(delta, mu)
    assert eps >= 0.0
    assert below_target(eps, mu, delta)
    if eps > 0.0:
        assert not below_target(np.nextafter(eps, -np.inf), mu, delta)


@SETTINGS
@given(epsilon=EPSILON, delta=DELTA)
def test_mu_meets_its_inequality_tightly(epsilon: float, delta: float) -> None:
    mu = gdp.mu(epsilon, delta)
    assert mu > 0.0
    assert below_target(epsilon, mu, delta)
    assert not below_target(epsilon, np.nextafter(mu, np.inf), delta)


@SETTINGS
@given(eps=st.floats(0.0, 1e3), step=st.floats(0.0, 10.0), mu=MU)
def test_delta_is_non_increasing_in_epsilon(eps: float, step: float, mu: float) -> None:
    assert gdp.delta(eps + step, mu) <= gdp.delta(eps, mu) * MONOTONE_UP_TO


@SETTINGS
@given(eps=EPSILON, mu=MU, factor=st.floats(1.0, 10.0))
def test_delta_is_non_decreasing_in_mu(eps: float, mu: float, factor: float) -> None:
    assert gdp.delta(eps, mu * factor) * MONOTONE_UP_TO >= gdp.delta(eps, mu)


@SETTINGS
@given(alpha=st.one_of(st.floats(0.0, 1.0), st.floats(1e-300, 1e-10)), mu=MU)
def test_tradeoff_is_a_tradeoff_value(alpha: float, mu: float) -> None:
    beta = gdp.tradeoff(alpha, mu)
    assert 0.0 <= beta <= 1.0 - alpha


@SETTINGS
@given(
    alpha=st.one_of(st.floats(0.0, 1.0), st.floats(1e-300, 1e-10)),
    step=st.one_of(st.floats(0.0, 0.5), st.integers(1, 4)),
    e0=EPSILON0,
    d0=st.one_of(st.just(0.0), st.floats(1e-300, 0.5)),
)
def test_closed_form_tradeoffs_are_tradeoff_functions(
    alpha: float, step: float | int, e0: float, d0: float
) -> None:
    """0 <= f(alpha) <= 1 - alpha and f non-increasing, for steps of any size down to one float (an integer
    step counts floats)."""
    later = alpha
    for _ in range(step if isinstance(step, int) else 0):
        later = float(np.nextafter(later, 2.0))
    later = min(later if isinstance(step, int) else alpha + step, 1.0)
    functions = [lambda a: closed.eps_delta_tradeoff(a, e0, d0)]
    if e0 > 0:
        functions.append(lambda a: closed.laplace_tradeoff(a, e0))
    for f in functions:
        assert 0.0 <= f(alpha) <= 1.0 - alpha
        assert f(later) <= f(alpha)


POINTS = st.lists(st.tuples(DELTA, MU, EPSILON, st.floats(0.0, 1.0)), min_size=1, max_size=6)


@settings(max_examples=25, deadline=None)
@given(points=POINTS)
def test_kernels_vectorized_equal_scalar(points: list[tuple[float, float, float, float]]) -> None:
    delta, mu, eps, alpha = (np.array(values) for values in zip(*points, strict=True))
    vectors = gdp.epsilon(delta, mu), gdp.mu(eps, delta), gdp.delta(eps, mu), gdp.tradeoff(alpha, mu)
    for i, (d, m, e, a) in enumerate(points):
        scalars = gdp.epsilon(d, m), gdp.mu(e, d), gdp.delta(e, m), gdp.tradeoff(a, m)
        assert [float(s) for s in scalars] == [float(v[i]) for v in vectors]


def test_the_contract_on_ten_thousand_points() -> None:
    """0 failures of delta(epsilon(d, mu), mu) <= d and delta(eps, mu(eps, d)) <= d, exact float comparison,
    on 1e4 points log-uniform over the magnitudes above (benchmarks/rounding_contract.py runs 1e6); and both
    results are tight (one float further, the inequality fails)."""
    rng = np.random.default_rng(11)
    size = 10_000
    mu = 10.0 ** rng.uniform(-8, np.log10(40), size)
    delta = 10.0 ** rng.uniform(-300, np.log10(0.5), size)
    eps = np.where(rng.random(size) < 0.05, 0.0, 10.0 ** rng.uniform(-12, 3, size))
    epsilons = np.asarray(gdp.epsilon(delta, mu))
    assert np.count_nonzero(gdp.delta(epsilons, mu) > delta) == 0
    assert np.count_nonzero(~below_target(epsilons, mu, delta)) == 0
    inner = epsilons > 0
    assert np.count_nonzero(below_target(np.nextafter(epsilons, -1.0), mu, delta)[inner]) == 0
    mus = np.asarray(gdp.mu(eps, delta))
    assert np.count_nonzero(gdp.delta(eps, mus) > delta) == 0
    assert np.count_nonzero(~below_target(eps, mus, delta)) == 0
    assert np.count_nonzero(below_target(eps, np.nextafter(mus, np.inf), delta)) == 0
