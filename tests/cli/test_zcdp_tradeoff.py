"""zCDP and RDP -> trade-off function: `convert zcdp:rho=R --alpha ...` prints a rigorous
lower bound on beta, the most the RDP curve says about any test (core.rdp.tradeoff_from_curve).

Independent checks: an mpmath recipe (the binary Renyi divergences of a test's outcomes, their roots in
beta by a bracketing solver, maximised over the order by golden section), and the exact G_mu of the
Gaussian mechanism from scipy.stats.norm (a rho-zCDP bound can never exceed the curve of the Gaussian,
which is exactly rho-zCDP with rho = 1 / (2 sigma^2)).
"""

from __future__ import annotations

import functools
import math

import mpmath as mp
import numpy as np
import pytest
from scipy.stats import norm

SWEEP = "0:1:41"
SMALL = "1e-8,1e-6,1e-4,1e-3,0.005"


def betas(outcome) -> dict[float, float]:
    """{alpha: beta} of a convert/compose JSON answer, every row a lower bound from rdp-tradeoff."""
    assert outcome.code == 0, outcome.stderr
    rows = outcome.json()["rows"]
    assert {(row["guarantee"], row["method"]) for row in rows} == {("lower_bound", "rdp-tradeoff")}
    return {row["alpha"]: row["beta"] for row in rows}


def mp_root(decreasing, high: mp.mpf) -> mp.mpf:
    """The root of a function decreasing on [0, high], <= 0 at high: 56 bisections (to 2^-56 high)."""
    low = mp.mpf(0)
    for _ in range(56):
        middle = (low + high) / 2
        low, high = (middle, high) if decreasing(middle) > 0 else (low, middle)
    return low


def mp_beta_at_order(alpha: float, order: mp.mpf, rdp_epsilon: mp.mpf) -> mp.mpf:
    """mpmath recipe: the least beta in [0, 1 - alpha] with both binary divergences <= rdp_epsilon at this
    order, D_a(P'||Q') and D_a(Q'||P') for P' = (alpha, 1 - alpha), Q' = (1 - beta, beta); each the root of
    (a - 1) D_a - (a - 1) rdp_epsilon, which decreases in beta on [0, 1 - alpha] (mp_root, rounded down)."""
    x, a, limit = mp.mpf(alpha), order, (order - 1) * rdp_epsilon

    def forward(y: mp.mpf) -> mp.mpf:
        return mp.log(x**a * (1 - y) ** (1 - a) + (1 - x) ** a * y ** (1 - a)) - limit

    def backward(y: mp.mpf) -> mp.mpf:
        return mp.log((1 - y) ** a * x ** (1 - a) + y**a * (1 - x) ** (1 - a)) - limit

    return max(mp_root(divergence, 1 - x) for divergence in (forward, backward))


@functools.cache
@mp.workdps(25)
def mp_zcdp_beta(alpha: float, rho: float) -> float:
    """mpmath recipe: the sup over orders a > 1 of mp_beta_at_order with rdp_epsilon = a rho: a scan of
    t = log(a - 1) on [-8, 8], then golden section (40 steps) around the best point."""
    rho = mp.mpf(rho)

    def at(t: mp.mpf) -> mp.mpf:
        order = 1 + mp.exp(t)
        return mp_beta_at_order(alpha, order, order * rho)

    grid = [mp.mpf(-8) + k * mp.mpf(16) / 32 for k in range(33)]
    values = [at(t) for t in grid]
    k = max(range(len(grid)), key=lambda i: values[i])
    low, high = grid[max(k - 1, 0)], grid[min(k + 1, len(grid) - 1)]
    ratio = (mp.sqrt(5) - 1) / 2
    left, right = high - ratio * (high - low), low + ratio * (high - low)
    at_left, at_right = at(left), at(right)
    for _ in range(40):
        if at_left >= at_right:
            high, right, at_right = right, left, at_left
            left = high - ratio * (high - low)
            at_left = at(left)
        else:
            low, left, at_left = left, right, at_right
            right = low + ratio * (high - low)
            at_right = at(right)
    return float(max(at_left, at_right, values[k]))


@pytest.mark.parametrize(("rho", "alpha"), [(0.5, 0.1), (0.5, 0.01), (0.125, 0.3), (2.0, 0.02)])
def test_zcdp_beta_is_the_supremum_over_orders(gdpcli, rho: float, alpha: float) -> None:
    """The printed beta equals the mpmath recipe's to 1e-8: no larger (rigour) and not looser."""
    beta = betas(gdpcli("convert", f"zcdp:rho={rho}", "--alpha", str(alpha), "-f", "json"))[alpha]
    expected = mp_zcdp_beta(alpha, rho)
    assert expected - 1e-8 <= beta <= expected + 1e-12


@pytest.mark.parametrize("sigma", [1.0, 2.0, 0.5])
def test_zcdp_beta_lies_below_the_gaussians_exact_curve(gdpcli, sigma: float) -> None:
    """gaussian:sigma=S is exactly (1 / (2 S^2))-zCDP, so the bound never exceeds its G_mu, mu = 1 / S
    (scipy.stats.norm); measured largest gap: 0.0504 (mu = 0.5), 0.0997 (mu = 1), 0.188 (mu = 2)."""
    mu, rho = 1.0 / sigma, 1.0 / (2.0 * sigma**2)
    found = {}
    for alphas in (SWEEP, SMALL):
        found |= betas(gdpcli("convert", f"zcdp:rho={rho!r}", "--alpha", alphas, "-f", "json"))
    alpha = np.array(list(found))
    exact = norm.cdf(norm.ppf(1.0 - alpha) - mu)
    beta = np.array(list(found.values()))
    assert np.all(beta <= exact + 1e-15)
    assert np.max(exact - beta) <= {1.0: 0.1, 2.0: 0.051, 0.5: 0.19}[sigma]
    assert np.max(exact - beta) >= {1.0: 0.099, 2.0: 0.050, 0.5: 0.18}[sigma]  # the gap is zCDP's own


def test_the_bound_is_attained_by_a_binary_mechanism() -> None:
    """The gap to G_mu is zCDP's, not the method's: the two-point pair P' = (alpha, 1 - alpha),
    Q' = (1 - beta, beta) with beta 1e-6 above the printed bound is itself 0.5-zCDP (both directions, mpmath,
    at 400 orders with a - 1 from 1e-4 to 1e4), and is a mechanism whose beta at alpha is that beta."""
    from gdpcli.core import rdp, zcdp

    with mp.workdps(30):
        rho, alpha = mp.mpf("0.5"), 0.2
        beta = float(rdp.tradeoff_from_curve(lambda a: zcdp.rdp(a, 0.5), np.array([alpha]))[0]) + 1e-6
        x, y = mp.mpf(alpha), mp.mpf(beta)
        for t in np.linspace(math.log(1e-4), math.log(1e4), 400):
            a = 1 + mp.exp(t)
            forward = mp.log(x**a * (1 - y) ** (1 - a) + (1 - x) ** a * y ** (1 - a)) / (a - 1)
            backward = mp.log((1 - y) ** a * x ** (1 - a) + y**a * (1 - x) ** (1 - a)) / (a - 1)
            assert max(forward, backward) <= a * rho


def test_rdp_points_use_their_own_orders(gdpcli) -> None:
    """rdp:alpha=2,eps=0.5,alpha=8,eps=2: the larger of the two single-order bounds (mpmath recipe)."""
    beta = betas(gdpcli("convert", "rdp:alpha=2,eps=0.5,alpha=8,eps=2", "--alpha", "0.1", "-f", "json"))[0.1]
    with mp.workdps(30):
        expected = max(mp_beta_at_order(0.1, mp.mpf(a), mp.mpf(e)) for a, e in ((2, "0.5"), (8, "2")))
        assert float(expected) - 1e-12 <= beta <= float(expected) + 1e-15


def test_gaussian_by_rdp_composed_equals_zcdp(gdpcli) -> None:
    """gaussian:sigma=4 x 16 in RDP is 16/32 = 0.5-zCDP: the same bound as zcdp:rho=0.5 (mpmath recipe)."""
    composed = betas(
        gdpcli("compose", "gaussian:sigma=4x16", "--alpha", "0.1", "--method", "rdp", "-f", "json")
    )
    assert composed[0.1] == pytest.approx(mp_zcdp_beta(0.1, 0.5), abs=1e-7)


def test_the_ends_of_the_curve(gdpcli) -> None:
    """beta(0) = 1 (finite divergences both ways leave no test that never errs under Q), beta(1) = 0."""
    found = betas(gdpcli("convert", "zcdp:rho=0.5", "--alpha", "0,1", "-f", "json"))
    assert found[0.0] == pytest.approx(1.0, abs=1e-15) and found[1.0] == 0.0


def test_table_and_csv(gdpcli) -> None:
    outcome = gdpcli("convert", "zcdp:rho=0.5", "--alpha", "0.1", "-f", "csv")
    assert outcome.code == 0
    header, row = outcome.stdout.strip().splitlines()
    assert header == "alpha,beta,guarantee,method" and row.endswith(",lower_bound,rdp-tradeoff")
    table = gdpcli("convert", "zcdp:rho=0.5", "--alpha", "0.1", "-f", "table")
    assert table.code == 0 and "lower_bound" in table.stdout


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("zcdp:rho=0.5", "--alpha", "1.5"), "--alpha"),
        (("zcdp:rho=0.5", "--alpha", "-0.1"), "--alpha"),
        (("zcdp:rho=0.5", "--alpha", "x"), "--alpha"),
        (("zcdp:rho=-1", "--alpha", "0.1"), "rho"),
        (("zcdp:rho=0.5,p=2", "--alpha", "0.1"), "p"),
    ],
)
def test_bad_inputs_exit_2(gdpcli, args: tuple[str, ...], names: str) -> None:
    outcome = gdpcli("convert", *args)
    assert outcome.code == 2
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gdpcli: error: ") and names in lines[0]


def test_the_bound_is_a_trade_off_function_and_vectorized_equals_scalar(gdpcli) -> None:
    """On a sweep the bound is non-increasing, at most 1 - alpha and convex (each order's feasible set of
    (alpha, beta) is convex, and a maximum of convex functions is convex); one alpha at a time gives the
    same numbers as the whole list."""
    found = betas(gdpcli("convert", "zcdp:rho=0.3", "--alpha", "0:1:201", "-f", "json"))
    alpha, beta = np.array(list(found)), np.array(list(found.values()))
    assert np.all(np.diff(beta) <= 0.0) and np.all(beta <= 1.0 - alpha + 1e-15)
    assert np.all(np.diff(beta, 2) >= -1e-9)
    for a in (0.05, 0.5, 0.9):  # equal up to the last bits of numpy's vectorized log
        alone = betas(gdpcli("convert", "zcdp:rho=0.3", "--alpha", repr(a), "-f", "json"))
        assert alone[a] == pytest.approx(found[a], rel=1e-14)
