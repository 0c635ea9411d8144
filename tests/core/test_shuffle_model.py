"""Shuffled eps0-LDP reports (core/shuffle_model.py): the clone pair of [FMT22]/[FMT23] against an independent
mpmath enumeration, the randomized-response lower bound against mpmath and Monte Carlo, and the review's
Tables 2 and 3 (Su 2024, Sec. 4.3) with the set-up n = 10^4, eps0 = 4.444 (see the README)."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from gdpcli.core import pld
from gdpcli.core.shuffle_model import CloneReduction, ShuffledRR, check_parameters
from gdpcli.errors import InputError
from tests.conftest import at_least_digits


@at_least_digits(40)
def _clone_pair(n: int, eps0: float, randomizer: str) -> tuple[dict, dict]:
    """P and Q of [FMT23] Thm 3.2 / [FMT22] Thm 3.2 by enumerating (C, A, Delta) in mpmath:
    P = (A + D, C - A + 1 - D), Q = (A + 1 - D, C - A + D), keyed by (C, first coordinate)."""
    e = mp.e ** mp.mpf(eps0)
    q = 2 / (e + 1) if randomizer == "rr" else 1 / e
    keep = e / (e + 1)
    p_mass: dict = {}
    q_mass: dict = {}
    for c in range(n):
        w = mp.binomial(n - 1, c) * q**c * (1 - q) ** (n - 1 - c)
        for a in range(c + 1):
            base = w * mp.binomial(c, a) / mp.mpf(2) ** c
            for d, pd in ((1, keep), (0, 1 - keep)):
                p_mass[(c, a + d)] = p_mass.get((c, a + d), 0) + base * pd
                q_mass[(c, a + 1 - d)] = q_mass.get((c, a + 1 - d), 0) + base * pd
    return p_mass, q_mass


@at_least_digits(40)
def _hockey(p_mass: dict, q_mass: dict, eps: float) -> mp.mpf:
    x = mp.e ** mp.mpf(eps)
    keys = set(p_mass) | set(q_mass)
    return sum(max(p_mass.get(k, 0) - x * q_mass.get(k, 0), 0) for k in keys)


@at_least_digits(40)
def _rr_pair(n: int, eps0: float) -> tuple[list, list]:
    """Shuffled binary RR, D0 = (0,...,0) against D1 = (1,0,...,0): the law of the number of ones,
    by convolution (independent of the closed form Q = P (e^2 y + n - y) / (e n))."""
    e = mp.e ** mp.mpf(eps0)
    r = 1 / (e + 1)
    others = [mp.binomial(n - 1, y) * r**y * (1 - r) ** (n - 1 - y) for y in range(n)] + [mp.mpf(0)]
    under_d0 = [others[y] * (1 - r) + (others[y - 1] * r if y else 0) for y in range(n + 1)]
    under_d1 = [others[y] * r + (others[y - 1] * (1 - r) if y else 0) for y in range(n + 1)]
    return under_d0, under_d1


@pytest.mark.parametrize(
    ("n", "eps0", "randomizer"), [(10, 1.0, "rr"), (50, 2.0, "rr"), (50, 1.5, "general")]
)
def test_clone_profile_matches_mpmath(n: int, eps0: float, randomizer: str) -> None:
    p_mass, q_mass = _clone_pair(n, eps0, randomizer)
    pair = CloneReduction(eps0, n, randomizer)
    eps = np.array([-0.7, 0.0, 0.2, 0.6, 0.95 * eps0, eps0, 3.0 * eps0])
    ours = pair.profile(eps)
    with mp.workdps(40):
        for value, e in zip(ours, eps, strict=True):
            exact = _hockey(p_mass, q_mass, float(e))
            reverse = _hockey(q_mass, p_mass, float(e))  # the pair is symmetric
            assert value >= exact * (1 - 1e-15) - 1e-35  # mpmath leaves ~1e-42 at eps = eps0, where it is 0
            assert float(abs(value - exact)) <= 1e-9 * float(exact) + 1e-35
            assert float(abs(reverse - exact)) <= 1e-30


@pytest.mark.slow
def test_clone_profile_windowed_sum_matches_a_full_float_sum() -> None:
    """n = 3000: the window over C and the Hoeffding-bounded k tails against a plain float64 sum of
    (P_c(k) - x Q_c(k))_+ over every c and k (scipy's binomial pmf; delta is not small: no cancellation)."""
    from scipy import stats

    n, eps0 = 3000, 1.0
    e = math.exp(eps0)
    c = np.arange(n)[:, None]
    k = np.arange(n + 1)[None, :]
    weights = stats.binom.pmf(c, n - 1, 2.0 / (e + 1.0))
    halves = stats.binom.pmf(k - 1, c, 0.5), stats.binom.pmf(k, c, 0.5)
    keep = e / (e + 1.0)
    p_c = keep * halves[0] + (1 - keep) * halves[1]
    q_c = (1 - keep) * halves[0] + keep * halves[1]
    pair = CloneReduction(eps0, n)
    assert pair._weights.counts.size < n  # the window is in use
    for eps in (0.02, 0.1, 0.2):
        plain = float(np.sum(weights * np.maximum(p_c - math.exp(eps) * q_c, 0.0)))
        assert plain <= pair.profile(eps) <= plain * (1 + 1e-8)


def test_clone_rdp_is_an_upper_bound_close_to_mpmath() -> None:
    n, eps0 = 10, 1.0
    p_mass, q_mass = _clone_pair(n, eps0, "rr")
    ours = CloneReduction(eps0, n).rdp(np.array([2.0, 5.0]))
    with mp.workdps(40):
        for value, order in zip(ours, (2, 5), strict=True):
            moment = sum(p_mass[k] ** order * q_mass[k] ** (1 - order) for k in p_mass)
            exact = float(mp.log(moment) / (order - 1))
            assert exact <= value <= exact * (1 + 1e-9)


@pytest.mark.slow
def test_clone_rdp_at_many_orders_is_each_order_alone() -> None:
    """Orders asked together share the binomial terms (within each coarsening of the mixture: at eps0 1,
    n 50 000 the order 255 is coarsened in runs of 3, the others in runs of 2) and sum each its own window
    of them: the values are those of each order asked alone, to the last bit."""
    pair = CloneReduction(1.0, 50_000)
    orders = np.array([1.01, 2.0, 50.0, 255.0])
    together = pair.rdp(orders)
    alone = np.array([pair.rdp(np.array([order]))[0] for order in orders])
    assert np.array_equal(together, alone) and np.all(np.isfinite(together))


def test_tradeoff_is_a_lower_bound_of_the_exact_one() -> None:
    n, eps0 = 10, 1.0
    p_mass, q_mass = _clone_pair(n, eps0, "rr")
    keys = sorted(p_mass, key=lambda k: p_mass[k] / q_mass[k])  # Neyman-Pearson order, Q-likely first
    alpha = np.linspace(0.0, 1.0, 21)
    ours = CloneReduction(eps0, n).tradeoff(alpha)
    with mp.workdps(40):
        for a, f in zip(alpha, ours, strict=True):
            beta, spent = mp.mpf(1), mp.mpf(0)  # reject on the most Q-likely outcomes first (alpha: P-mass)
            for k in keys:
                take = min(p_mass[k], mp.mpf(a) - spent)
                if take <= 0:
                    break
                beta -= q_mass[k] * take / p_mass[k]
                spent += take
            assert f <= float(beta) + 1e-12
            assert f >= float(beta) - 0.02  # the dual over a grid of 401 epsilons is close
    assert np.all(np.diff(ours) <= 1e-15)


@pytest.mark.parametrize(("n", "eps0"), [(10, 1.0), (50, 2.0)])
def test_rr_lower_bound_matches_mpmath_and_lies_below_the_clone_bound(n: int, eps0: float) -> None:
    under_d0, under_d1 = _rr_pair(n, eps0)
    lower, upper = ShuffledRR(eps0, n), CloneReduction(eps0, n)
    eps = np.array([-0.3, 0.0, 0.3, 0.8 * eps0])
    rows = zip(eps, lower.remove_profile(eps), lower.add_profile(eps), upper.profile(eps), strict=True)
    with mp.workdps(40):
        for e, remove, add, bound in rows:
            x = mp.e ** mp.mpf(float(e))
            exact_remove = sum(max(p - x * q, 0) for p, q in zip(under_d0, under_d1, strict=True))
            exact_add = sum(max(q - x * p, 0) for p, q in zip(under_d0, under_d1, strict=True))
            assert remove <= exact_remove and float(exact_remove - remove) <= 1e-9 * float(exact_remove)
            assert add <= exact_add and float(exact_add - add) <= 1e-9 * float(exact_add) + 1e-300
            assert max(remove, add) <= bound


def test_rr_lower_bound_monte_carlo() -> None:
    """H_x(P || Q) = E_P[(1 - x Q/P)_+] and H_x(Q || P) = E_Q[(1 - x P/Q)_+] from 200000 samples each: the
    computed profiles lie within 5 standard errors."""
    pair = ShuffledRR(1.0, 200)
    under_d0, under_d1 = pair.sample(np.random.default_rng(15), 200_000)
    for eps in (0.05, 0.15):
        x = math.exp(eps)
        samples = {
            "remove": np.maximum(1.0 - x * np.exp(pair.log_likelihood_ratio(under_d0)), 0.0),
            "add": np.maximum(1.0 - x * np.exp(-pair.log_likelihood_ratio(under_d1)), 0.0),
        }
        computed = {"remove": pair.remove_profile(eps), "add": pair.add_profile(eps)}
        for name, values in samples.items():
            error = values.std(ddof=1) / math.sqrt(values.size)
            assert abs(values.mean() - computed[name]) <= 5.0 * error, name


REVIEW_SETUP = {"eps0": 4.444, "n": 10_000}
"""[FMT23]'s set-up as the review's Tables 2 and 3 use it: n = 10^4 reports of randomized response (the
stronger clone), eps0 = 4.444 (the "trivial bound" of Table 3: the shuffled output is eps0-DP)."""


def test_review_table_3_fdp_row() -> None:
    """eps at delta 5e-5, 3e-6, 1e-7, 4e-9, 9e-11 rounds to the printed 0.4, 0.5, 0.6, 0.7, 0.8."""
    pair = CloneReduction(**REVIEW_SETUP)
    eps = pair.epsilon(np.array([5e-5, 3e-6, 1e-7, 4e-9, 9e-11]))
    assert np.array_equal(np.round(eps, 1), [0.4, 0.5, 0.6, 0.7, 0.8])


def test_review_table_2_fdp_row() -> None:
    """delta at eps 0.5 and 0.6 rounds to the printed 3e-6 and 1e-7. At 0.7 ... 1.0 the exact clone-pair
    profile (3.0e-9, 6.2e-11, 1.0e-12, 1.4e-14) lies below the printed 4e-9, 9e-11, 2e-12, 2e-14 by a factor
    1.3 to 2: the printed ones are valid but looser (see the README)."""
    pair = CloneReduction(**REVIEW_SETUP)
    ours = pair.profile(np.array([0.5, 0.6, 0.7, 0.8, 0.9, 1.0]))
    printed = np.array([3e-6, 1e-7, 4e-9, 9e-11, 2e-12, 2e-14])
    mantissa = ours / 10.0 ** np.floor(np.log10(ours))
    assert np.array_equal(np.round(mantissa[:2]), [3, 1])
    assert np.all(ours[2:] <= printed[2:]) and np.all(ours >= printed / 2.0)
    np.testing.assert_allclose(ours[2:], [3.0215e-9, 6.2431e-11, 1.0155e-12, 1.3746e-14], rtol=1e-4)


def test_dominating_pair_composes_in_the_pld_engine() -> None:
    pair = CloneReduction(**REVIEW_SETUP)
    bounds = pld.delta_bounds([(pair.dominating_pair(), 1)], np.array([0.5]))
    assert bounds.lower[0] <= pair.profile(0.5) <= bounds.upper[0] * (1 + 1e-9)
    lower = pld.epsilon_bounds([(ShuffledRR(**REVIEW_SETUP).dominating_pair(), 2)], 1e-6).lower
    upper = pld.epsilon_bounds([(pair.dominating_pair(), 2)], 1e-6).upper
    assert lower < upper


@pytest.mark.parametrize(
    ("eps0", "n", "word"),
    [(0.0, 10, "eps0"), (-1.0, 10, "eps0"), (math.nan, 10, "eps0"), (1.0, 1, "n"), (1.0, 2.5, "n")],
)
def test_bad_parameters_raise_one_line(eps0: float, n: float, word: str) -> None:
    with pytest.raises(InputError) as caught:
        check_parameters(eps0, n)
    assert word in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(InputError):
        CloneReduction(eps0, n)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="randomizer"):
        CloneReduction(1.0, 10, "laplace")
