"""The CLT gaps: `--method clt -v` prints the functionals and the Theorem 6 / 7 mu, and
`gdpcli subsample --method clt` is the subsampling CLT (GDP paper Thm 11) for any mechanism with f(0) = 1.

Expected values are mpmath recipes from the mechanisms' distributions, written next to them, or the
reference file; the convergence test compares with the rigorous PLD bounds of the same composition.
"""

from __future__ import annotations

import math

import mpmath as mp
import pytest

from tests.conftest import REFERENCE, at_least_digits, one_line_error
from tests.core.test_clt_subsampling import (
    mp_gaussian_chi_square,
    mp_laplace_chi_square,
    mp_randomized_response_chi_square,
)

DETAILS = ("kl", "kappa2", "kappa3", "mu_theorem6")


def rows(outcome) -> list[dict]:
    assert outcome.code == 0, outcome.stderr
    return outcome.json()["rows"]


@mp.workdps(40)
def mp_gdp_delta(epsilon, mu) -> mp.mpf:
    """delta(eps) of G_mu: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (GDP paper Cor. 1)."""
    epsilon, mu = mp.mpf(epsilon), mp.mpf(mu)
    return mp.ncdf(-epsilon / mu + mu / 2) - mp.exp(epsilon) * mp.ncdf(-epsilon / mu - mu / 2)


@at_least_digits(40)
def mp_gdp_epsilon(delta, mu) -> mp.mpf:
    """The eps with delta(eps) of G_mu equal to delta: mpmath root of log delta(eps) = log delta (Cor. 1)."""
    target = mp.log(mp.mpf(delta))
    return mp.findroot(
        lambda e: mp.log(mp_gdp_delta(e, mu)) - target, (mp.mpf(0), mp.mpf(50)), solver="illinois"
    )


@mp.workdps(30)
def mp_loss_moments(loss, density, breaks) -> dict[str, mp.mpf]:
    """kl = -E L, kappa2 = E L^2, kappa3 = E |L|^3, variance and kappa3bar = E |L + kl|^3 of the privacy loss
    L = loss(X), X ~ P with this density (GDP paper Sec. 3.2), by mpmath quadrature split at `breaks`."""

    def expect(g):
        return mp.quad(lambda x: g(loss(x)) * density(x), breaks)

    kl = -expect(lambda v: v)
    return {
        "kl": kl,
        "kappa2": expect(lambda v: v**2),
        "kappa3": expect(lambda v: abs(v) ** 3),
        "variance": expect(lambda v: (v + kl) ** 2),
        "kappa3bar": expect(lambda v: abs(v + kl) ** 3),
    }


@mp.workdps(30)
def mp_pure_dp_moments(epsilon: float) -> dict[str, mp.mpf]:
    """f_{eps,0}: the loss is -eps with P-probability e^eps/(1+e^eps), +eps otherwise (two-point sums)."""
    e = mp.mpf(epsilon)
    low = mp.exp(e) / (1 + mp.exp(e))
    points = [(-e, low), (e, 1 - low)]
    kl = -mp.fsum(v * w for v, w in points)
    return {
        "kl": kl,
        "kappa2": mp.fsum(v**2 * w for v, w in points),
        "kappa3": mp.fsum(abs(v) ** 3 * w for v, w in points),
        "variance": mp.fsum((v + kl) ** 2 * w for v, w in points),
        "kappa3bar": mp.fsum(abs(v + kl) ** 3 * w for v, w in points),
    }


@at_least_digits(30)
def mp_laplace_moments(epsilon: float) -> dict[str, mp.mpf]:
    """Lap(0, 1) against Lap(eps, 1): loss |x| - |x - eps| under the density e^-|x| / 2."""
    e = mp.mpf(epsilon)
    return mp_loss_moments(
        lambda x: abs(x) - abs(x - e), lambda x: mp.exp(-abs(x)) / 2, [-mp.inf, 0, e, mp.inf]
    )


@at_least_digits(30)
def mp_gaussian_moments(mu: float) -> dict[str, mp.mpf]:
    """G_mu: the loss under P is N(-mu^2/2, mu^2)."""
    m = mp.mpf(mu)
    return mp_loss_moments(
        lambda x: x, lambda x: mp.npdf(x, -(m**2) / 2, m), [-mp.inf, -(m**2) / 2, 0, mp.inf]
    )


@at_least_digits(30)
def total(parts: list[tuple[int, dict[str, mp.mpf]]], name: str) -> mp.mpf:
    """sum_i times_i * functional_i."""
    return mp.fsum(times * moments[name] for times, moments in parts)


@at_least_digits(30)
def theorem5_mu(parts: list[tuple[int, dict[str, mp.mpf]]]) -> mp.mpf:
    """2 ||kl||_1 / sqrt(||kappa2||_1 - ||kl||_2^2) = 2 sum kl / sqrt(sum variance) (GDP paper Thm 5)."""
    return 2 * total(parts, "kl") / mp.sqrt(total(parts, "variance"))


@at_least_digits(30)
def assert_details(row: dict, parts: list[tuple[int, dict[str, mp.mpf]]], rel: float) -> None:
    for name in ("kl", "kappa2", "kappa3"):
        assert row[name] == pytest.approx(float(total(parts, name)), rel=rel), name
    theorem6 = 2 * total(parts, "kl") / mp.sqrt(total(parts, "kappa2"))  # 2K/s
    assert row["mu_theorem6"] == pytest.approx(float(theorem6), rel=rel)
    assert row["mu"] == pytest.approx(float(theorem5_mu(parts)), rel=rel)


# ---------------------------------------------------------------------------------------------------
# --method clt -v


def test_clt_verbose_pure_dp_list(gdpcli) -> None:
    """100 x f_{0.1,0}: functionals, Theorem 5 (the figures' mu), 6 and 7 (sqrt(100 x 0.1^2) = 1)."""
    outcome = gdpcli("compose", "dp:eps=0.1x100", "--delta", "1e-5", "--method", "clt", "-v", "-f", "json")
    [row] = rows(outcome)
    parts = [(100, mp_pure_dp_moments(0.1))]
    assert (row["guarantee"], row["method"]) == ("approximation", "clt")
    assert_details(row, parts, rel=1e-12)
    assert row["mu_theorem7"] == pytest.approx(1.0, rel=1e-15)
    assert row["epsilon"] == pytest.approx(float(mp_gdp_epsilon("1e-5", theorem5_mu(parts))), rel=1e-10)
    [note] = outcome.json()["notes"]
    assert "mu_theorem6 Theorem 6" in note and "approximations" in note


def test_clt_verbose_mixed_list_has_no_theorem_7(gdpcli) -> None:
    """4 x G_0.5 and 3 x Laplace(eps 0.5): sums of the two kinds' functionals; Theorem 7 is for (eps,
    delta)-DP lists only, so no mu_theorem7 column."""
    args = ("gdp:mu=0.5x4", "laplace:eps=0.5x3", "--epsilon", "1", "--method", "clt", "-v", "-f", "json")
    [row] = rows(gdpcli("compose", *args))
    parts = [(4, mp_gaussian_moments(0.5)), (3, mp_laplace_moments(0.5))]
    assert_details(row, parts, rel=1e-10)
    assert "mu_theorem7" not in row
    assert row["delta"] == pytest.approx(float(mp_gdp_delta(1, theorem5_mu(parts))), rel=1e-9)


def test_clt_verbose_theorem_7_with_delta_part(gdpcli) -> None:
    """50 x f_{0.2,1e-6}: mu_theorem7 = sqrt(50 x 0.04) = sqrt(2); the figures carry the delta part
    delta0 = 1 - (1 - 1e-6)^50 (eq. 11-12): eps solves delta0 + (1 - delta0) delta_mu(eps) = 1e-4."""
    args = ("dp:eps=0.2,delta=1e-6x50", "--delta", "1e-4", "--method", "clt", "-v", "-f", "json")
    [row] = rows(gdpcli("compose", *args))
    parts = [(50, mp_pure_dp_moments(0.2))]
    assert_details(row, parts, rel=1e-12)
    with mp.workdps(30):
        assert row["mu_theorem7"] == pytest.approx(float(mp.sqrt(2)), rel=1e-15)
        delta0 = 1 - (1 - mp.mpf("1e-6")) ** 50
        target = (mp.mpf("1e-4") - delta0) / (1 - delta0)
        assert row["epsilon"] == pytest.approx(float(mp_gdp_epsilon(target, theorem5_mu(parts))), rel=1e-9)


def test_clt_verbose_mu_rows(gdpcli) -> None:
    outcome = gdpcli("compose", "dp:eps=0.1x100", "--to", "mu", "--method", "clt", "-v", "-f", "json")
    [row] = rows(outcome)
    assert_details(row, [(100, mp_pure_dp_moments(0.1))], rel=1e-12)
    assert row["mu_theorem7"] == pytest.approx(1.0, rel=1e-15)
    assert any("kappa3" in note for note in outcome.json()["notes"])


def test_without_verbose_nothing_changes(gdpcli) -> None:
    for args in (("--delta", "1e-5"), ("--to", "mu")):
        [row] = rows(gdpcli("compose", "dp:eps=0.1x100", *args, "--method", "clt", "-f", "json"))
        assert not set(DETAILS) & set(row)


def test_verbose_with_other_methods_adds_nothing(gdpcli) -> None:
    """-v shows what a method rests on; the exact binomial and the PLD bounds rest on no functionals."""
    for method in ("auto", "pld"):
        for row in rows(
            gdpcli("compose", "dp:eps=0.1x100", "--delta", "1e-5", "--method", method, "-v", "-f", "json")
        ):
            assert not set(DETAILS) & set(row)


def test_verbose_berry_esseen_shows_what_gamma_rests_on(gdpcli) -> None:
    """The band is an upper bound: its rows carry the functionals behind mu and gamma (kappa3bar), not the
    Theorem 6/7 limits, which are approximations."""
    args = ("dp:eps=0.1x100", "--delta", "1e-5", "--method", "berry-esseen", "-v", "-f", "json")
    [row] = rows(gdpcli("compose", *args))
    parts = [(100, mp_pure_dp_moments(0.1))]
    assert row["guarantee"] == "upper_bound"
    assert row["kappa3bar"] == pytest.approx(float(total(parts, "kappa3bar")), rel=1e-12)
    assert row["kl"] == pytest.approx(float(total(parts, "kl")), rel=1e-12)
    assert "mu_theorem6" not in row and "mu_theorem7" not in row


def test_convert_verbose(gdpcli) -> None:
    """convert laplace:b=2 (eps = 0.5): the functionals of one Laplace step."""
    [row] = rows(gdpcli("convert", "laplace:b=2", "--epsilon", "1", "--method", "clt", "-v", "-f", "json"))
    parts = [(1, mp_laplace_moments(0.5))]
    assert_details(row, parts, rel=1e-10)
    assert row["delta"] == pytest.approx(float(mp_gdp_delta(1, theorem5_mu(parts))), rel=1e-9)
    [plain] = rows(gdpcli("convert", "laplace:b=2", "--epsilon", "1", "--method", "clt", "-f", "json"))
    assert not set(DETAILS) & set(plain)


def test_verbose_table_and_csv(gdpcli) -> None:
    args = ("compose", "dp:eps=0.1x100", "--delta", "1e-5", "--method", "clt", "-v")
    table = gdpcli(*args, "-f", "table")
    assert table.code == 0 and "mu_theorem7" in table.stdout and "note: clt -v" in table.stdout
    csv = gdpcli(*args, "-f", "csv")
    assert (
        csv.stdout.splitlines()[0]
        == "delta,epsilon,guarantee,method,kl,kappa2,kappa3,mu_theorem6,mu_theorem7,mu"
    )
    assert "gdpcli: note: clt -v" in csv.stderr


# ---------------------------------------------------------------------------------------------------
# subsample --method clt: the subsampling CLT (GDP paper Thm 11)


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_subsampled_laplace(gdpcli, sampling: str) -> None:
    """10^4 Laplace(eps 1) steps at p = 0.01 (nu = 1): mu = sqrt(chi2) (Poisson) or sqrt(2 chi2_plus)
    (fixed-size, Thm 11), chi2 and chi2_plus integrated from the densities."""
    args = ("laplace:b=1x10000", "--rate", "0.01", "--sampling", sampling, "--epsilon", "1")
    outcome = gdpcli("subsample", *args, "--method", "clt", "-v", "-f", "json")
    [row] = rows(outcome)
    chi2, chi2_plus = mp_laplace_chi_square(1.0)
    with mp.workdps(30):
        mu = mp.sqrt(2 * chi2_plus) if sampling == "fixed" else mp.sqrt(chi2)
        assert (row["guarantee"], row["method"]) == ("approximation", "clt")
        assert row["mu"] == pytest.approx(float(mu), rel=1e-9)
        assert row["delta"] == pytest.approx(float(mp_gdp_delta(1, mu)), rel=1e-8)
        assert row["nu"] == pytest.approx(1.0, rel=1e-15)
        functional = ("chi2_plus", chi2_plus) if sampling == "fixed" else ("chi2", chi2)
        assert row[functional[0]] == pytest.approx(float(functional[1]), rel=1e-9)
        assert outcome.json()["inputs"]["method"] == "clt"


def test_subsampled_pure_dp_fixed(gdpcli) -> None:
    """400 steps of f_{0.5,0} at p = 0.05 (nu = 1), fixed-size: mu = sqrt(2 chi2_plus(f_{0.5,0}))."""
    args = ("dp:eps=0.5x400", "--rate", "0.05", "--sampling", "fixed", "--delta", "1e-5", "--method", "clt")
    [row] = rows(gdpcli("subsample", *args, "-f", "json"))
    with mp.workdps(30):
        mu = mp.sqrt(2 * mp_randomized_response_chi_square(0.5)[1])
        assert row["mu"] == pytest.approx(float(mu), rel=1e-10)
        assert row["epsilon"] == pytest.approx(float(mp_gdp_epsilon("1e-5", mu)), rel=1e-9)


@pytest.mark.parametrize(("sampling", "key"), [("fixed", "mu_clt_fixed"), ("poisson", "mu_clt_poisson")])
def test_gaussian_reduces_to_corollary_4_and_the_poisson_formula(gdpcli, sampling: str, key: str) -> None:
    """The MNIST run (p = 256/60000, T = 14063, sigma 1.1 in units of the step's sensitivity): Cor. 4 for
    fixed-size batches and the Poisson formula, from the reference file; the same as sgd --method clt."""
    mnist = REFERENCE["dp_sgd_mnist"]
    rate = mnist["batch"] / mnist["n"]
    args = (f"gaussian:sigma=1.1x{mnist['steps']}", "--rate", repr(rate), "--sampling", sampling)
    [row] = rows(gdpcli("subsample", *args, "--delta", "1e-5", "--method", "clt", "-f", "json"))
    assert row["mu"] == pytest.approx(mnist[key], rel=1e-13)
    sgd = ("--sampling-rate", repr(rate), "--steps", str(mnist["steps"]), "--noise-multiplier", "1.1")
    [reference] = rows(
        gdpcli(
            "sgd",
            *sgd,
            "--sensitivity",
            "1",
            "--sampling",
            sampling,
            "--delta",
            "1e-5",
            "--method",
            "clt",
            "-f",
            "json",
        )
    )
    assert row["mu"] == reference["mu"] and row["epsilon"] == reference["epsilon"]


def test_gaussian_chi_square_details(gdpcli) -> None:
    """gdp:mu=1, p = 0.001, 10^6 steps (nu = 1), fixed-size: chi2_plus(G_1) integrated from the densities."""
    args = (
        "gdp:mu=1x1000000",
        "--rate",
        "0.001",
        "--sampling",
        "fixed",
        "--delta",
        "1e-5",
        "--method",
        "clt",
        "-v",
    )
    [row] = rows(gdpcli("subsample", *args, "-f", "json"))
    chi2_plus = mp_gaussian_chi_square(1.0)[1]
    assert row["chi2_plus"] == pytest.approx(float(chi2_plus), rel=1e-12)
    with mp.workdps(30):
        assert row["mu"] == pytest.approx(float(mp.sqrt(2 * chi2_plus)), rel=1e-12)


def test_method_all_puts_the_clt_beside_the_rigorous_bounds(gdpcli) -> None:
    args = ("laplace:b=1x100", "--rate", "0.1", "--epsilon", "1", "--method", "all", "-f", "json")
    result = rows(gdpcli("subsample", *args))
    assert [(r["method"], r["guarantee"]) for r in result] == [
        ("pld", "upper_bound"),
        ("pld", "lower_bound"),
        ("clt", "approximation"),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("sampling", ["fixed", "poisson"])
def test_clt_approaches_the_pld_bounds_as_steps_grow(gdpcli, sampling: str) -> None:
    """Laplace(eps 1) with nu = p sqrt(T) = 1 held fixed, T = 100, 10^4, 10^6: the distance from the CLT's
    delta(1) to the rigorous PLD interval of the same composition (--accuracy 1e-3) shrinks like 1/sqrt(T),
    the size of the summed loss's skewness. Measured: fixed 0.0157, 0.0017, 0.00017; Poisson 0.0017,
    0.00017, 0.000011. The CLT stays above the interval (pessimistic here) at every T."""
    gaps = []
    for steps in (100, 10**4, 10**6):
        rate = repr(1.0 / steps**0.5)
        args = (f"laplace:b=1x{steps}", "--rate", rate, "--sampling", sampling, "--epsilon", "1")
        outcome = gdpcli("subsample", *args, "--method", "all", "--accuracy", "1e-3", "-f", "json")
        figures = {r["guarantee"]: r["delta"] for r in rows(outcome)}
        gaps.append(figures["approximation"] - figures["upper_bound"])
    assert gaps[0] > 5 * gaps[1] > 25 * gaps[2] > 0.0


# ---------------------------------------------------------------------------------------------------
# Where the subsampling CLT does not apply, and bad input


def test_delta_part_is_refused_and_skipped_by_all(gdpcli) -> None:
    """f_{eps,delta} with delta > 0 has f(0) = 1 - delta: Theorem 11 does not apply (exit 1); --method all
    gives the rigorous figures and says why the CLT is missing."""
    args = ("dp:eps=1,delta=1e-3x100", "--rate", "0.01", "--epsilon", "1")
    refused = gdpcli("subsample", *args, "--method", "clt")
    one_line_error(refused, 1, "f(0) = 1")
    assert refused.stdout == ""
    outcome = gdpcli("subsample", *args, "--method", "all", "-f", "json")
    assert {row["method"] for row in rows(outcome)} == {"pld"}
    assert any(note.startswith("skipped clt:") for note in outcome.json()["notes"])


@pytest.mark.parametrize(
    ("spec", "rate", "text"),
    [
        ("laplace:b=1x100", "1", "limit for p -> 0"),
        ("shuffle:eps0=1,n=1000x10", "0.1", "upper bound on its profile"),
        ("rdp:alpha=2,eps=0.1", "0.1", "no trade-off function"),
    ],
)
def test_unsupported_inputs_exit_1(gdpcli, spec: str, rate: str, text: str) -> None:
    one_line_error(gdpcli("subsample", spec, "--rate", rate, "--delta", "1e-5", "--method", "clt"), 1, text)


def test_budget_checks_never_rest_on_the_clt(gdpcli) -> None:
    """The approximation is printed (stdout), but a budget check cannot pass on it: exit 1, as in compose."""
    args = ("laplace:b=1x100", "--rate", "0.1", "--delta", "1e-5", "--method", "clt", "--max-epsilon", "50")
    outcome = gdpcli("subsample", *args, "-f", "csv")
    one_line_error(outcome, 1, "no rigorous upper bound")
    assert ",approximation,clt," in outcome.stdout


@pytest.mark.parametrize("method", ["pld", "CLT", ""])
def test_bad_method_exits_2(gdpcli, method: str) -> None:
    outcome = gdpcli("subsample", "laplace:b=1", "--rate", "0.1", "--delta", "1e-5", "--method", method)
    one_line_error(outcome, 2, "--method")


def test_verbose_takes_no_value(gdpcli) -> None:
    outcome = gdpcli("compose", "dp:eps=0.1x100", "--delta", "1e-5", "--verbose=yes")
    one_line_error(outcome, 2, "--verbose")


def test_convert_to_mu_verbose_carries_the_functionals(gdpcli) -> None:
    """`convert --to mu --method clt -v` prints the same functionals as compose: for 100 x (0.1)-DP,
    kl = 100 eps tanh(eps / 2) (the KL divergence of f_{eps,0}'s two-point pair) and Thm 7's
    mu = sqrt(100 eps^2) = 1."""
    outcome = gdpcli("convert", "dp:eps=0.1x100", "--to", "mu", "--method", "clt", "-v", "-f", "json")
    assert outcome.code == 0, outcome.stderr
    [row] = outcome.json()["rows"]
    assert row["guarantee"] == "approximation"
    assert row["kl"] == pytest.approx(100 * 0.1 * math.tanh(0.05), rel=1e-12)
    assert row["mu_theorem7"] == pytest.approx(1.0, rel=1e-12)
