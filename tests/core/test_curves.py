"""Mechanisms given as sampled curves (gdpcli.core.curves): the safe rules between samples against mpmath
G_1 (GDP paper Def. 2: G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)), and the validation of Prop. 1 / 6."""

from __future__ import annotations

import functools

import mpmath as mp
import numpy as np
import pytest

from gdpcli.core import curves, gdp
from gdpcli.errors import InputError
from tests.conftest import at_least_digits


@at_least_digits(40)
def mp_g1(alpha: float) -> mp.mpf:
    """G_1(alpha) at 40 digits: Phi(sqrt(2) erfinv(1 - 2 alpha) - 1)."""
    return mp.ncdf(mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(alpha)) - 1)


@at_least_digits(40)
def mp_delta(eps: float) -> mp.mpf:
    """delta(eps) of 1-GDP (GDP paper Cor. 1) at 40 digits."""
    eps = mp.mpf(eps)
    return mp.ncdf(-eps + mp.mpf(1) / 2) - mp.exp(eps) * mp.ncdf(-eps - mp.mpf(1) / 2)


def csv_text(x: np.ndarray, y: np.ndarray, columns: str = "alpha,beta", label: str = "exact") -> str:
    rows = "".join(f"{float(a)!r},{float(b)!r},{label}\n" for a, b in zip(x, y, strict=True))
    return f"{columns},guarantee\n" + rows


def g1_samples(alpha: np.ndarray, label: str = "exact") -> curves.Samples:
    text = csv_text(alpha, np.asarray(gdp.tradeoff(alpha, 1.0)), label=label)
    return curves.read_samples(text, "g1.csv", curves.TRADEOFF_COLUMNS)


LOG_GRID = np.unique(
    np.concatenate([np.logspace(-12, -1, 45), np.linspace(0, 1, 21), 1 - np.logspace(-12, -1, 45)])
)
PROBES = np.concatenate([np.linspace(0, 1, 997), np.logspace(-14, -0.5, 60), 1 - np.logspace(-14, -0.5, 60)])


@functools.cache
def g1_at_probes() -> np.ndarray:
    """G_1 at PROBES (mp_g1), computed once for every test that checks a curve below it."""
    truth = np.array([float(mp_g1(a)) for a in PROBES])
    truth.setflags(write=False)
    return truth


@pytest.mark.parametrize(
    "alpha", [np.linspace(0, 1, 101), np.linspace(0, 1, 11), LOG_GRID], ids=["101", "11", "log"]
)
def test_secant_rule_is_below_g1(alpha: np.ndarray) -> None:
    """F_S <= G_1 everywhere (against mpmath)."""
    bound = curves.tradeoff_bound(g1_samples(alpha))
    assert np.all(bound(PROBES) <= g1_at_probes())


def test_log_grid_read_back_is_close() -> None:
    """110 alphas dense near 0 and 1: delta of F_S >= mpmath's 1-GDP delta and within 12 % up to eps = 4.
    (F_S is below the samples themselves: the hull of the zigzag g; the conjugate loses nothing by it.)"""
    bound = curves.tradeoff_bound(g1_samples(LOG_GRID))
    eps = np.linspace(0.0, 4.0, 9)
    with mp.workdps(40):
        truth = np.array([float(mp_delta(e)) for e in eps])
        upper = np.asarray(curves.profile(bound, eps))
        assert np.all(upper >= truth)
        assert np.all(upper <= 1.12 * truth)


def test_chord_interpolation_would_not_be_safe() -> None:
    """The reason for the secant rule: the chords of a convex f lie above it between samples."""
    alpha = np.linspace(0, 1, 11)
    chord = np.interp(0.05, alpha, np.asarray(gdp.tradeoff(alpha, 1.0)))
    with mp.workdps(40):
        assert chord > float(mp_g1(0.05))
        assert curves.tradeoff_bound(g1_samples(alpha))(0.05) < float(mp_g1(0.05))


def test_secant_rule_is_tight_for_a_piecewise_linear_curve() -> None:
    """Samples at the kinks of f_{1,0.01} and the ends give back f_{1,0.01} itself, and its profile."""
    from gdpcli.core.tradeoff import eps_delta_profile, eps_delta_tradeoff

    alpha = np.array([0.0, 0.99 / (1 + np.e), 0.5, 0.99, 1.0])
    samples = curves.read_samples(
        csv_text(alpha, eps_delta_tradeoff(alpha, 1.0, 0.01)), "f.csv", curves.TRADEOFF_COLUMNS
    )
    bound = curves.tradeoff_bound(samples)
    probes = np.linspace(0, 1, 1001)
    assert np.allclose(bound(probes), eps_delta_tradeoff(probes, 1.0, 0.01), atol=1e-11)
    eps = np.array([0.0, 0.5, 1.0, 3.0])
    assert np.allclose(curves.profile(bound, eps), eps_delta_profile(eps, 1.0, 0.01), atol=1e-11)


def test_profile_bound_is_above_the_exact_profile() -> None:
    """Read back of 1-GDP's profile at 51 epsilons: delta bound >= mpmath's delta everywhere, close."""
    eps = np.linspace(0, 5, 51)
    text = csv_text(eps, np.asarray(gdp.delta(eps, 1.0)), "epsilon,delta")
    bound = curves.profile_bound(curves.read_samples(text, "p.csv", curves.PROFILE_COLUMNS))
    probes = np.linspace(0, 5, 203)
    with mp.workdps(40):
        truth = np.array([float(mp_delta(e)) for e in probes])
        upper = np.asarray(curves.profile(bound, probes))
        assert np.all(upper >= truth)
        assert np.max(upper - truth) < 2e-3
        assert curves.atom(bound) == pytest.approx(float(mp_delta(5.0)), abs=2e-12)


def test_tradeoff_profile_atom_of_a_linear_grid() -> None:
    """101 linear alphas cannot bound f near 0: the atom 1 - F_S(0) is about 3.6e-3 (measured), never 0."""
    bound = curves.tradeoff_bound(g1_samples(np.linspace(0, 1, 101)))
    assert 3e-3 < curves.atom(bound) < 4e-3
    log_bound = curves.tradeoff_bound(g1_samples(LOG_GRID))
    assert curves.atom(log_bound) < 1e-9


def test_ray_rule_for_lower_bound_rows() -> None:
    """gdpcli's lower_bound rows: only rays to (1, 0) hold; still below G_1, and weaker than exact rows."""
    alpha = np.linspace(0, 1, 101)
    lower = curves.tradeoff_bound(g1_samples(alpha, "lower_bound"))
    exact = curves.tradeoff_bound(g1_samples(alpha))
    assert np.all(lower(PROBES) <= g1_at_probes())
    assert np.all(lower(PROBES) <= exact(PROBES) + 1e-12)


def test_rows_of_other_labels_are_skipped() -> None:
    text = "alpha,beta,guarantee\n0.5,0.9,upper_bound\n0.5,0.1,lower_bound\n"
    samples = curves.read_samples(text, "m.csv", curves.TRADEOFF_COLUMNS)
    assert samples.x.tolist() == [0.5] and not samples.exact


SAMPLE_FILES = {
    "tradeoff": (curves.tradeoff_bound, "m.csv", curves.TRADEOFF_COLUMNS),
    "profile": (curves.profile_bound, "p.csv", curves.PROFILE_COLUMNS),
}
"""Each kind of sampled curve: its bound, the file name its messages show, its columns."""


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        ("tradeoff", "alpha,beta\n0.1,abc\n", "m.csv line 2, column beta: 'abc' is not a number"),
        ("tradeoff", "alpha,beta\n0.1,1.5\n", "m.csv line 2, column beta: 1.5 is outside [0, 1]"),
        ("tradeoff", "alpha,beta\n-0.1,0.5\n", "m.csv line 2, column alpha: -0.1 is outside [0, 1]"),
        ("tradeoff", "alpha,beta\n0.5,0.4\n0.2,0.6\n", "m.csv line 3, column alpha: 0.2 does not increase"),
        (
            "tradeoff",
            "alpha,beta\n0.2,0.3\n0.5,0.4\n",
            "m.csv line 3, column beta: 0.4 exceeds the previous row's 0.3",
        ),
        ("tradeoff", "alpha,beta\n0.5,0.6\n", "m.csv line 2, column beta: 0.6 > 1 - alpha"),
        ("tradeoff", "alpha,beta\n0.1,0.8\n0.2,0.75\n0.3,0.5\n", "m.csv line 3, column beta: not convex"),
        (
            "tradeoff",
            "alpha,beta\n0.1,0.88\n0.2,0.7\n",
            "m.csv line 2, column beta: the first two points' secant exceeds 1",
        ),
        ("tradeoff", "alpha,x\n0.1,0.8\n", "m.csv line 1: no beta column"),
        ("tradeoff", "alpha,beta,guarantee\n0.1,0.8,approximation\n", "m.csv: no usable (alpha, beta) rows"),
        ("profile", "epsilon,delta\n0,1.2\n", "p.csv line 2, column delta: 1.2 is outside [0, 1]"),
        (
            "profile",
            "epsilon,delta\n0,0.1\n1,0.2\n",
            "p.csv line 3, column delta: 0.2 exceeds the previous row's 0.1",
        ),
        (
            "profile",
            "epsilon,delta\n0,0.5\n1,0.45\n2,0.1\n",
            "p.csv line 3, column delta: not convex in e^epsilon",
        ),
        ("profile", "epsilon,delta\n-1,0.1\n", "p.csv line 2, column delta: below 1 - e^epsilon"),
        ("profile", "epsilon,delta\n1,0.1\n1,0.05\n", "p.csv line 3, column epsilon: 1.0 does not increase"),
    ],
)
def test_sample_validation(kind: str, text: str, message: str) -> None:
    bound, name, columns = SAMPLE_FILES[kind]
    with pytest.raises(InputError) as error:
        bound(curves.read_samples(text, name, columns))
    assert str(error.value).startswith(message)


def test_tol_admits_rounded_samples() -> None:
    """Samples rounded to 6 decimals: with tol=5e-7 the bound stays below G_1."""
    alpha = np.linspace(0.3, 0.7, 401)
    rounded = np.round(np.asarray(gdp.tradeoff(alpha, 1.0)), 6)
    samples = curves.read_samples(csv_text(alpha, rounded), "r.csv", curves.TRADEOFF_COLUMNS)
    bound = curves.tradeoff_bound(samples, tol=5e-7)
    probes = np.linspace(0.0, 1.0, 301)
    with mp.workdps(40):
        assert np.all(bound(probes) <= np.array([float(mp_g1(a)) for a in probes]))
