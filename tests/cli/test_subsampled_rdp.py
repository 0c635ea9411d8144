"""RDP of Poisson-subsampled non-Gaussian mechanisms: Zhu and Wang 2019 Thm 6 and the
joint-convexity bound, an upper bound for both directions.

Expected values are mpmath recipes: the theorem's sum with mpmath binomials and the base mechanism's RDP
by quadrature of its densities (not gdpcli's closed form); rigor checks compare with the exact Renyi
divergences of the subsampled pair (mpmath quadrature, both directions), with gdpcli's exact subsampled
Gaussian RDP, and with the PLD lower bound of the same composition.
"""

from __future__ import annotations

import functools
import math

import mpmath as mp
import numpy as np
import pytest

ORDERS = [2.0, 2.5, 4.0, 8.0, 12.0]


def laplace_density(center: mp.mpf):
    return lambda x: mp.exp(-abs(x - center)) / 2


@mp.workdps(20)
def renyi(p, q, order: float, points) -> mp.mpf:
    """D_order(P || Q) of two densities on the line by quadrature (split at the kinks `points`)."""
    integral = mp.quad(lambda x: p(x) ** order * q(x) ** (1 - order), [-mp.inf, *points, mp.inf])
    return mp.log(integral) / (order - 1)


@functools.cache
def laplace_rdp(order: float, epsilon: float) -> mp.mpf:
    return renyi(laplace_density(0), laplace_density(epsilon), order, [0, epsilon])


@mp.workdps(20)
def theorem6(order: int, rate: float, base) -> mp.mpf:
    """Zhu and Wang 2019 Thm 6 at an integer order, base(j) the mechanism's RDP at order j."""
    gamma = mp.mpf(rate)
    total = (1 - gamma) ** (order - 1) * (order * gamma - gamma + 1)
    total += mp.binomial(order, 2) * gamma**2 * (1 - gamma) ** (order - 2) * mp.e ** base(2)
    for j in range(3, order + 1):
        total += (
            3 * mp.binomial(order, j) * gamma**j * (1 - gamma) ** (order - j) * mp.e ** ((j - 1) * base(j))
        )
    return mp.log(total) / (order - 1)


@mp.workdps(20)
def convexity(order: float, rate: float, base) -> mp.mpf:
    """log(1 - gamma + gamma e^{(alpha-1) eps(alpha)}) / (alpha - 1)."""
    return mp.log(1 - rate + rate * mp.e ** ((order - 1) * base(order))) / (order - 1)


@mp.workdps(20)
def expected_laplace(order: float, epsilon: float, rate: float) -> mp.mpf:
    """The smallest of Thm 6 at ceil(order), the convexity bound and the amplified pure eps'."""

    def base(j):
        return laplace_rdp(j, epsilon)

    amplified = mp.log(1 + rate * (mp.e**epsilon - 1))
    return min(theorem6(max(math.ceil(order), 2), rate, base), convexity(order, rate, base), amplified)


def rdp_rows(gdpcli, spec: str, orders: list[float]) -> list[dict]:
    outcome = gdpcli("convert", spec, "--to", "rdp", "--order", ",".join(map(str, orders)), "-f", "json")
    assert outcome.code == 0, outcome.stderr
    return outcome.json()["rows"]


@pytest.mark.parametrize(("epsilon", "rate"), [(1.0, 0.05), (3.0, 0.3), (0.5, 0.5)])
def test_laplace_against_the_recipe(gdpcli, epsilon: float, rate: float) -> None:
    rows = rdp_rows(gdpcli, f"laplace:eps={epsilon},p={rate}", ORDERS)
    for row, order in zip(rows, ORDERS, strict=True):
        assert row["rdp_epsilon"] == pytest.approx(float(expected_laplace(order, epsilon, rate)), rel=1e-9)
        assert (row["guarantee"], row["method"]) == ("upper_bound", "rdp-curve")


def test_the_recipe_takes_each_bound_somewhere() -> None:
    """The recipe's own check: at eps = 0.5, rate 0.5 Thm 6 wins at order 2, the convexity bound at 4 and
    the amplified eps' at 8 (so the CLI test below exercises all three)."""

    def base(j):
        return laplace_rdp(j, 0.5)

    with mp.workdps(20):
        amplified = mp.log(1 + mp.mpf(0.5) * (mp.e**0.5 - 1))
        assert theorem6(2, 0.5, base) < min(convexity(2.0, 0.5, base), amplified)
        assert convexity(4.0, 0.5, base) < min(theorem6(4, 0.5, base), amplified)
        assert amplified < min(theorem6(8, 0.5, base), convexity(8.0, 0.5, base))


@pytest.mark.parametrize(("epsilon", "rate"), [(1.0, 0.05), (3.0, 0.3)])
def test_laplace_bound_covers_both_directions(gdpcli, epsilon: float, rate: float) -> None:
    """Rigor: above the exact D_alpha of the subsampled pair (mpmath), remove and add directions."""
    orders = [2.0, 4.0, 8.0, 32.0]
    rows = rdp_rows(gdpcli, f"laplace:eps={epsilon},p={rate}", orders)
    alone, moved = laplace_density(0), laplace_density(epsilon)

    def mixture(x):
        return (1 - rate) * alone(x) + rate * moved(x)

    for row, order in zip(rows, orders, strict=True):
        for p, q in ((mixture, alone), (alone, mixture)):
            assert row["rdp_epsilon"] >= float(renyi(p, q, order, [0, epsilon]))


def test_randomized_response_against_the_recipe(gdpcli) -> None:
    """rr:keep=0.9, p = 0.1; base RDP by the two-point sum of T(Bern(keep), Bern(1 - keep))."""
    with mp.workdps(20):
        keep = mp.mpf("0.9")

        def base(j):
            return mp.log(keep**j * (1 - keep) ** (1 - j) + (1 - keep) ** j * keep ** (1 - j)) / (j - 1)

        amplified = mp.log(1 + mp.mpf("0.1") * (keep / (1 - keep) - 1))
        rows = rdp_rows(gdpcli, "rr:keep=0.9,p=0.1", [2.0, 5.0])
        for row, order in zip(rows, [2, 5], strict=True):
            expected = min(theorem6(order, 0.1, base), convexity(order, 0.1, base), amplified)
            assert row["rdp_epsilon"] == pytest.approx(float(expected), rel=1e-9)


@pytest.mark.parametrize(("rate", "sigma"), [(0.01, 1.0), (0.1, 2.0), (0.5, 0.8)])
def test_gaussian_base_upper_bounds_the_exact_curve(rate: float, sigma: float) -> None:
    """With the Gaussian as base, the general bound stays above gdpcli's exact subsampled-Gaussian RDP
    (Mironov, Talwar, Zhang 2019) and equals the mpmath recipe of Thm 6 / convexity."""
    from gdpcli.core import rdp

    orders = np.array([2.0, 3.0, 6.0, 16.0, 64.0])
    general = rdp.poisson_subsampled(orders, rate, lambda a: rdp.gaussian(a, sigma))
    exact = rdp.subsampled_gaussian(orders, rate, sigma)
    assert np.all(general >= exact)
    assert general[0] == pytest.approx(exact[0], rel=1e-11)  # Thm 6 is attained at order 2

    with mp.workdps(20):

        def base(j):
            return mp.mpf(j) / (2 * mp.mpf(sigma) ** 2)

        for value, order in zip(general, orders, strict=True):
            expected = min(theorem6(int(order), rate, base), convexity(order, rate, base))
            assert value == pytest.approx(float(expected), rel=1e-9)


@pytest.mark.parametrize(
    "spec", ["laplace:eps=1,p=0.05x200", "laplace:eps=0.5,p=0.2x50", "rr:keep=0.9,p=0.01x1000"]
)
def test_rdp_epsilon_is_above_the_pld_lower_bound(gdpcli, spec: str) -> None:
    """Rigor: the RDP -> (eps, delta) figure from the bound is >= the PLD lower bound of the same run."""
    by_rdp = gdpcli("compose", spec, "--delta", "1e-5", "--method", "rdp", "-f", "json")
    by_pld = gdpcli("compose", spec, "--delta", "1e-5", "--method", "pld", "-f", "json")
    assert by_rdp.code == 0 and by_pld.code == 0, by_rdp.stderr + by_pld.stderr
    (upper,) = by_rdp.json()["rows"]
    lower = next(row for row in by_pld.json()["rows"] if row["guarantee"] == "lower_bound")
    assert upper["guarantee"] == "upper_bound"
    assert upper["epsilon"] >= lower["epsilon"]


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("gaussian:sigma=1,p=0.01,sampling=fixed", "fixed-size batches"),
        ("dp:eps=1,delta=1e-6,p=0.1", "no RDP curve"),
    ],
)
def test_without_a_bound(gdpcli, spec: str, words: str) -> None:
    """Fixed-size batches and bases without an RDP curve: exit 1 with a hint (no figure to give)."""
    outcome = gdpcli("convert", spec, "--to", "rdp")
    assert outcome.code == 1
    assert words in outcome.stderr and "Traceback" not in outcome.stderr
