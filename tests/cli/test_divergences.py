"""`gdpcli convert SPEC --to kl|tv|hellinger|chi2`: divergences of the dominating pair.

Every expected value is an mpmath recipe from the pair's densities (not the closed forms under test):
KL(P||Q) = int p log(p/q), chi2(P||Q) = int p^2/q - 1, squared Hellinger 1 - int sqrt(pq), TV = int |p-q|/2;
a k-fold composition is the product pair: KL adds, 1 + chi2 and the Bhattacharyya coefficient multiply.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable

import mpmath as mp
import pytest

from tests.conftest import at_least_digits, infinite


@mp.workdps(30)
def divergences_of(p, q, lo, hi, points=()) -> dict[str, mp.mpf]:
    """KL, chi2, hellinger and TV of two densities on [lo, hi] by mpmath quadrature (split at `points`)."""
    nodes = [lo, *points, hi]

    def integral(g):
        return mp.quad(lambda x: g(p(x), q(x)), nodes)

    return {
        "kl": integral(lambda a, b: a * mp.log(a / b)),
        "chi2": integral(lambda a, b: a * a / b) - 1,
        "hellinger": 1 - integral(lambda a, b: mp.sqrt(a * b)),
        "tv": integral(lambda a, b: abs(a - b)) / 2,
    }


@mp.workdps(30)
def sums_of(p: list, q: list) -> dict[str, mp.mpf]:
    """The same divergences of two distributions on finitely many points (q > 0 where p > 0)."""
    pairs = list(zip(p, q, strict=True))
    return {
        "kl": mp.fsum((a * mp.log(a / b) if b > 0 else mp.inf) for a, b in pairs if a > 0),
        "chi2": mp.fsum((a * a / b if b > 0 else mp.inf) for a, b in pairs if a > 0) - 1,
        "hellinger": 1 - mp.fsum(mp.sqrt(a * b) for a, b in pairs),
        "tv": mp.fsum(abs(a - b) for a, b in pairs) / 2,
    }


@at_least_digits(30)
def composed(values: dict[str, mp.mpf], times: int) -> dict[str, mp.mpf]:
    """Of the times-fold product pair."""
    return {
        "kl": times * values["kl"],
        "chi2": (1 + values["chi2"]) ** times - 1,
        "hellinger": 1 - (1 - values["hellinger"]) ** times,
    }


@functools.cache
def gaussian(mu: float) -> dict[str, mp.mpf]:
    return divergences_of(lambda x: mp.npdf(x), lambda x: mp.npdf(x, mu), -mp.inf, mp.inf, [0, mu / 2, mu])


@functools.cache
def laplace(epsilon: float) -> dict[str, mp.mpf]:
    def density(center):
        return lambda x: mp.exp(-abs(x - center)) / 2

    return divergences_of(density(0), density(epsilon), -mp.inf, mp.inf, [0, epsilon / 2, epsilon])


@functools.cache
@at_least_digits(30)
def randomized_response(keep: float) -> dict[str, mp.mpf]:
    keep = mp.mpf(keep)
    return sums_of([keep, 1 - keep], [1 - keep, keep])


def the(gdpcli, spec: str, to: str, *extra: str) -> dict:
    outcome = gdpcli("convert", spec, "--to", to, *extra, "-f", "json")
    assert outcome.code == 0, outcome.stderr
    rows = outcome.json()["rows"]
    assert len(rows) == 1, rows
    return rows[0]


# (spec, times, recipe, its argument): the recipes run when a test asks (quadratures: 0.2-0.5 s each), once
CLOSED_FORMS = [
    ("gdp:mu=1.3", 1, gaussian, 1.3),
    ("gaussian:sigma=2,sens=3", 1, gaussian, 1.5),
    ("gdp:mu=0.4x5", 5, gaussian, 0.4),
    ("laplace:eps=0.7", 1, laplace, 0.7),
    ("laplace:b=2,sens=3x4", 4, laplace, 1.5),
    ("rr:keep=0.8", 1, randomized_response, 0.8),
    ("dp:eps=2x3", 3, randomized_response, math.exp(2) / (1 + math.exp(2))),
]


@pytest.mark.parametrize(("spec", "times", "recipe", "argument"), CLOSED_FORMS)
@pytest.mark.parametrize("to", ["kl", "chi2", "hellinger"])
def test_closed_forms(gdpcli, spec: str, times: int, recipe: Callable, argument: float, to: str) -> None:
    row = the(gdpcli, spec, to)
    assert row[to] == pytest.approx(float(composed(recipe(argument), times)[to]), rel=1e-12)
    assert (row["guarantee"], row["method"]) == ("exact", "closed-form")


def test_eps_delta_atom(gdpcli) -> None:
    """dp:eps,delta > 0: P's atom where Q has none makes KL and chi2 infinite; Hellinger is finite."""
    with mp.workdps(30):
        epsilon, delta = mp.mpf(1), mp.mpf("1e-3")
        keep = (1 - delta) * mp.e**epsilon / (1 + mp.e**epsilon)
        expected = sums_of([delta, keep, 1 - delta - keep, 0], [0, 1 - delta - keep, keep, delta])
        row = the(gdpcli, "dp:eps=1,delta=1e-3", "hellinger")
        assert row["hellinger"] == pytest.approx(float(expected["hellinger"]), rel=1e-12)
        for to in ("kl", "chi2"):
            assert expected[to] == mp.inf
            row = the(gdpcli, "dp:eps=1,delta=1e-3", to)
            assert row[to] is None  # JSON has no inf: null with the reason
            assert row["reason"] == f"{to} = inf: the true {to} is infinite"


@mp.workdps(30)
def discrete_gaussian(sigma: float) -> dict[str, mp.mpf]:
    """Of (N_Z(0, sigma^2), N_Z(1, sigma^2)) by sums over the integers (|k| <= 60 sigma)."""
    support = range(-int(60 * sigma) - 1, int(60 * sigma) + 2)
    weights = [mp.exp(-(mp.mpf(k) ** 2) / (2 * sigma**2)) for k in support]
    total = mp.fsum(weights)
    p = [w / total for w in weights]
    return sums_of(p[1:], p[:-1])  # q(k) = p(k - 1)


def test_infinite_divergences_in_the_recipe() -> None:
    """The recipe's own check: an atom of P where Q has none gives inf."""
    assert sums_of([mp.mpf(1) / 2, mp.mpf(1) / 2], [0, 1])["kl"] == mp.inf


@pytest.mark.parametrize("to", ["kl", "chi2", "hellinger"])
def test_quadrature_of_the_tradeoff(gdpcli, to: str) -> None:
    """dgauss has no closed form here: the trade-off quadrature, labelled approximation, near the sums."""
    row = the(gdpcli, "dgauss:sigma=1", to)
    assert row[to] == pytest.approx(float(discrete_gaussian(1.0)[to]), rel=1e-3)
    assert (row["guarantee"], row["method"]) == ("approximation", "tradeoff-quadrature")


@pytest.mark.parametrize(
    ("spec", "recipe", "argument"),
    [
        ("gdp:mu=1", gaussian, 1.0),
        ("laplace:eps=0.7", laplace, 0.7),
        ("rr:keep=0.8", randomized_response, 0.8),
    ],
)
def test_total_variation(gdpcli, spec: str, recipe: Callable, argument: float) -> None:
    """TV = delta(0): the profile at 0, exact for these."""
    row = the(gdpcli, spec, "tv")
    assert row["tv"] == pytest.approx(float(recipe(argument)["tv"]), rel=1e-12)
    assert row["guarantee"] == "exact"


def test_total_variation_of_a_composition_is_bracketed(gdpcli) -> None:
    """laplace x3 by the PLD: an upper and a lower bound, close, and strictly between the one-step TV
    and 1 - (1 - TV_1)^3 (TV of a product of three pairs lies there: sub-additivity of 1 - TV fails in
    general, but max(TV_i) <= TV <= 1 - prod(1 - TV_i) holds for product pairs)."""
    outcome = gdpcli("convert", "laplace:eps=0.7x3", "--to", "tv", "-f", "json")
    assert outcome.code == 0, outcome.stderr
    rows = {row["guarantee"]: row["tv"] for row in outcome.json()["rows"]}
    one = float(laplace(0.7)["tv"])
    assert one < rows["lower_bound"] <= rows["upper_bound"] < 1 - (1 - one) ** 3
    assert rows["upper_bound"] - rows["lower_bound"] < 1e-2


def test_subsampled_total_variation(gdpcli) -> None:
    """Poisson subsampling at rate p: TV(P, Q) = p TV of the mechanism (P = (1-p) Q + p Q')."""
    outcome = gdpcli("convert", "laplace:eps=0.7,p=0.1", "--to", "tv", "-f", "json")
    assert outcome.code == 0, outcome.stderr
    expected = float(0.1 * laplace(0.7)["tv"])
    for row in outcome.json()["rows"]:
        assert row["tv"] == pytest.approx(expected, rel=1e-3)


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        (("laplace:eps=1,p=0.1", "--to", "kl"), "subsampled mechanism are not implemented"),
        (("gdp:mu=1", "--to", "chi2", "--group", "2"), "--to chi2 with --group"),
        (("rdp:alpha=2,eps=1", "--to", "hellinger"), "no trade-off function"),
        (("gdp:mu=1", "--to", "renyi"), "renyi"),
    ],
)
def test_bad_input(gdpcli, arguments: tuple[str, ...], words: str) -> None:
    outcome = gdpcli("convert", *arguments)
    assert outcome.code == 2
    assert words in outcome.stderr
    assert "Traceback" not in outcome.stderr


def test_total_variation_with_group(gdpcli) -> None:
    """--group 2 of gdp:mu=1 is G_2 (GDP paper Thm 3, exact for GDP): TV = 2 Phi(1) - 1."""
    row = the(gdpcli, "gdp:mu=1", "tv", "--group", "2")
    with mp.workdps(30):
        assert row["tv"] == pytest.approx(float(2 * mp.ncdf(1) - 1), rel=1e-12)
        assert (row["guarantee"], row["group"]) == ("exact", 2)


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("gaussian:sigma=1e-5,sens=2,times=10", "finite but beyond the float range"),  # e^{4e11} - 1
        ("dp:eps=1500", "finite but beyond the float range"),  # 4 sinh^2(750)
        ("gaussian:sigma=0.01,times=100000000", "finite but beyond the float range"),  # (1 + chi2)^1e8 - 1
        ("dp:eps=1500,delta=0.1", "the true chi2 is infinite"),  # P has an atom where Q has none
    ],
)
def test_chi2_beyond_the_floats_is_inf_with_the_reason_why(gdpcli, spec: str, reason: str) -> None:
    """chi2 = e^{mu^2} - 1 at mu = 2e5 passes the floats (math.expm1 raised OverflowError: an internal
    error a fuzz walk found), as 4 sinh^2(eps / 2) does at eps 1500 and a product (1 + chi2)^T at T 1e8:
    inf, with a reason that says the true value is finite; (eps, delta)-DP with delta > 0 has a truly
    infinite chi2. No warning reaches stderr; the squared Hellinger distance there is 1 to the float."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = gdpcli("convert", spec, "--to", "chi2", "-f", "json")
        hellinger = gdpcli("convert", spec, "--to", "hellinger", "-f", "json")
    assert outcome.code == 0 and hellinger.code == 0 and not caught
    [row] = outcome.json()["rows"]
    assert infinite(row, "chi2") and reason in row["reason"]
    assert hellinger.json()["rows"][0]["hellinger"] == 1.0
