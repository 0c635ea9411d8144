"""`gdpcli convert`'s gaps: --to equal-error, --implies EPSILON,DELTA and epsilon = 0
(convert and calibrate gaussian). Expected values: mpmath recipes next to them, the reference file, or
dp-accounting (recipe given)."""

from __future__ import annotations

import mpmath as mp
import pytest

from tests.conftest import REFERENCE, at_least_digits, rows_of

E = mp.e


def one_row(outcome) -> dict:
    rows = rows_of(outcome)
    assert len(rows) == 1
    return rows[0]


def one_line_error(outcome, code: int = 2) -> str:
    """The outcome failed with `code` and exactly one stderr line `gdpcli: error: ...`."""
    assert outcome.code == code, (outcome.stdout, outcome.stderr)
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gdpcli: error: "), outcome.stderr
    return lines[0]


def by_label(rows: list[dict]) -> dict[str, dict]:
    return {row["guarantee"]: row for row in rows}


# ---------------------------------------------------------------------------------------------------------
# --to equal-error: alpha* = f(alpha*)
# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", REFERENCE["gdp_symmetric_point"])
def test_equal_error_of_gdp_is_the_reference_symmetric_point(gdpcli, case: dict) -> None:
    row = one_row(gdpcli("convert", f"gdp:mu={case['mu']}", "--to", "equal-error", "-f", "json"))
    assert row["equal_error"] == pytest.approx(float(case["alpha"]), rel=1e-14)
    assert (row["guarantee"], row["method"]) == ("exact", "gdp")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        # f_{eps,delta}: the steep piece 1 - delta - e^eps a = a at a = (1 - delta) / (1 + e^eps)
        ("dp:eps=1,delta=0.01", (1 - mp.mpf("0.01")) / (1 + E)),
        ("dp:eps=3", 1 / (1 + mp.exp(3))),
        ("dp:eps=700", 1 / (1 + mp.exp(700))),  # 9.9e-305: the search keeps relative digits (normal quantile)
        ("dp:eps=0,delta=0.5", mp.mpf("0.25")),  # f = 1/2 - a
        # Laplace, eps0 = 1: the middle piece e^-eps0 / (4 a) = a at a = e^(-eps0/2) / 2
        ("laplace:b=1", mp.exp(-mp.mpf("0.5")) / 2),
        # Laplace at sensitivity 3 (eps0 = 3 / 2): e^(-3/4) / 2
        ("laplace:b=2,sens=3", mp.exp(-mp.mpf("0.75")) / 2),
        ("laplace:eps=100", mp.exp(-50) / 2),
        # 3-fold randomized response (binomial accountant): with q = 1/(1 + e), ones ~ Bin(3, q) under P and
        # Bin(3, 1 - q) under Q; rejecting at >= 2 ones gives alpha = P(X >= 2) = 3 q^2 (1 - q) + q^3 and
        # beta = Q(X <= 1) = q^3 + 3 q^2 (1 - q), equal: the equal-error point, without randomization
        ("dp:eps=1x3", 3 * (1 / (1 + E)) ** 2 * (E / (1 + E)) + (1 / (1 + E)) ** 3),
    ],
)
def test_equal_error_closed_forms(gdpcli, spec: str, expected: mp.mpf) -> None:
    row = one_row(gdpcli("convert", spec, "--to", "equal-error", "-f", "json"))
    assert row["equal_error"] == pytest.approx(float(expected), rel=1e-13)
    assert row["guarantee"] == "exact"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("gdp:mu=0.5", mp.ncdf(-mp.mpf("0.75"))),  # (3 mu)-GDP (GDP paper Thm 3): Phi(-3 mu / 2)
        ("gaussian:sigma=1", mp.ncdf(-mp.mpf("1.5"))),  # sensitivity 3: (3 / sigma)-GDP
    ],
)
def test_equal_error_of_group_is_that_of_k_mu(gdpcli, spec: str, expected: mp.mpf) -> None:
    row = one_row(gdpcli("convert", spec, "--group", "3", "--to", "equal-error", "-f", "json"))
    assert row["equal_error"] == pytest.approx(float(expected), rel=1e-14)
    assert row["group"] == 3


def test_equal_error_of_group_of_pure_dp(gdpcli) -> None:
    """f_{1,0} for groups of 2, 1 - (1 - f)^{o 2} (GDP paper Thm 3): with g = 1 - f = min(1, e a,
    1 - e^-1 (1 - a)) (kink at a = 1 / (1 + e)), for e a beyond the kink g(g(a)) = 1 - e^-1 (1 - e a) =
    1 - e^-1 + a, so the group trade-off is e^-1 - a there, and e^-1 - a = a at a = e^-1 / 2 (where
    e a = e^0 / 2 = 0.5 > 1 / (1 + e) = 0.27 holds)."""
    row = one_row(gdpcli("convert", "dp:eps=1", "--group", "2", "--to", "equal-error", "-f", "json"))
    assert row["equal_error"] == pytest.approx(float(1 / (2 * E)), rel=1e-13)
    assert (row["guarantee"], row["method"]) == ("exact", "group")


def test_equal_error_bounds_bracket_the_truth_for_the_pld(gdpcli) -> None:
    """Two Laplace steps (b = 1, sens 1): the per-step loss is -1 (x <= 0, mass 1/2), 2x - 1 on (0, 1) and
    +1 (x >= 1, mass e^-1 / 2). The pair is symmetric, so the equal-error test is the likelihood-ratio test
    at loss 0 with ties split: alpha* = P(L > 0) + P(L = 0) / 2. P(L > 0) = e^-1/2 * 1/2 (first +1, second
    not -1) + int_0^1 e^-x / 2 * e^(x-1) / 2 dx (first continuous) = e^-1 / 4 + e^-1 / 4; P(L = 0) = 2 *
    1/2 * e^-1 / 2 (atoms -1 and +1). So alpha* = 3 e^-1 / 4."""
    truth = float(3 / (4 * E))
    rows = by_label(rows_of(gdpcli("convert", "laplace:b=1x2", "--to", "equal-error", "-f", "json")))
    assert rows["lower_bound"]["equal_error"] <= truth <= rows["upper_bound"]["equal_error"]
    assert rows["upper_bound"]["equal_error"] - rows["lower_bound"]["equal_error"] < 5e-3
    assert rows["upper_bound"]["method"] == "pld"


def test_equal_error_pld_of_gdp_brackets_phi(gdpcli) -> None:
    rows = by_label(
        rows_of(gdpcli("convert", "gdp:mu=1", "--method", "pld", "--to", "equal-error", "-f", "json"))
    )
    with mp.workdps(50):
        truth = float(mp.ncdf(-mp.mpf("0.5")))
        assert rows["lower_bound"]["equal_error"] <= truth <= rows["upper_bound"]["equal_error"]
        assert rows["upper_bound"]["equal_error"] - truth < 1e-3


def test_equal_error_of_the_clt_is_an_approximation(gdpcli) -> None:
    """Four Gaussian steps of mu = 1/2: the CLT mu is sqrt(4 / 4) = 1, so alpha* is about Phi(-1/2)."""
    row = one_row(
        gdpcli("convert", "gaussian:sigma=2x4", "--method", "clt", "--to", "equal-error", "-f", "json")
    )
    assert row["guarantee"] == "approximation"
    with mp.workdps(50):
        assert row["equal_error"] == pytest.approx(float(mp.ncdf(-mp.mpf("0.5"))), rel=1e-9)


def test_equal_error_formats(gdpcli) -> None:
    csv_out = gdpcli("convert", "dp:eps=1", "--to", "equal-error", "-f", "csv")
    assert csv_out.code == 0
    assert csv_out.stdout.splitlines()[0] == "equal_error,guarantee,method"
    table = gdpcli("convert", "dp:eps=1", "--to", "equal-error", "-f", "table")
    assert table.code == 0 and "equal_error" in table.stdout


def test_equal_error_needs_a_tradeoff_function(gdpcli) -> None:
    outcome = gdpcli("convert", "dp:eps=1", "--method", "basic", "--to", "equal-error")
    one_line_error(outcome, code=1)


# ---------------------------------------------------------------------------------------------------------
# --implies EPSILON,DELTA: GDPT Thm 3.1 for (eps0, delta0), the rigorous profile otherwise
# ---------------------------------------------------------------------------------------------------------


@at_least_digits(50)
def implied_delta(epsilon0: str, delta0: str, epsilon: str) -> mp.mpf:
    """GDPT Thm 3.1: (eps0, delta0)-DP implies (eps, delta)-DP iff delta >= delta0 + (1 - delta0)
    (e^eps0 - e^eps)_+ / (1 + e^eps0) (re-derived: sup_a 1 - f_{eps0,delta0}(a) - e^eps a, attained at the
    kink a = (1 - delta0) / (1 + e^eps0))."""
    e0, d0, e = mp.mpf(epsilon0), mp.mpf(delta0), mp.mpf(epsilon)
    return d0 + (1 - d0) * max(mp.exp(e0) - mp.exp(e), 0) / (1 + mp.exp(e0))


@pytest.mark.parametrize(
    ("epsilon0", "delta0", "epsilon"),
    [("1", "0", "0.5"), ("1", "0.01", "0.5"), ("1", "0", "0"), ("2", "1e-6", "0.25"), ("0.5", "0.1", "2")],
)
def test_implies_for_dp_is_gdpt_theorem_3_1(gdpcli, epsilon0: str, delta0: str, epsilon: str) -> None:
    spec = f"dp:eps={epsilon0},delta={delta0}" if delta0 != "0" else f"dp:eps={epsilon0}"
    threshold = implied_delta(epsilon0, delta0, epsilon)
    with mp.workdps(50):
        above, below = float(threshold * (1 + mp.mpf("1e-9"))), float(threshold * (1 - mp.mpf("1e-9")))
        yes = gdpcli("convert", spec, "--implies", f"{epsilon},{above!r}", "-f", "json")
        row = one_row(yes)
        assert (row["implied"], row["guarantee"]) == ("yes", "exact")
        assert row["delta"] == pytest.approx(float(threshold), rel=1e-13)
        assert (row["epsilon"], row["target_delta"]) == (float(epsilon), above)
        no = gdpcli("convert", spec, "--implies", f"{epsilon},{below!r}", "-f", "json")
        assert "does not imply" in one_line_error(no, code=3)
        assert no.json()["rows"][0]["implied"] == "no"


def test_implies_beyond_eps0_needs_delta0(gdpcli) -> None:
    """eps >= eps0: the smallest delta is delta0 itself (Thm 3.1 with (.)_+ = 0)."""
    assert gdpcli("convert", "dp:eps=1,delta=0.01", "--implies", "2,0.01").code == 0
    one_line_error(gdpcli("convert", "dp:eps=1,delta=0.01", "--implies", "2,0.0099"), code=3)


def test_pure_dp_implies_itself_with_delta_zero(gdpcli) -> None:
    row = one_row(gdpcli("convert", "dp:eps=1", "--implies", "1,0", "-f", "json"))
    assert (row["delta"], row["implied"]) == (0.0, "yes")


def test_implies_for_gdp(gdpcli) -> None:
    """delta(1; 1) = Phi(-1/2) - e Phi(-3/2) (GDP paper Cor. 1)."""
    with mp.workdps(50):
        truth = mp.ncdf(-mp.mpf("0.5")) - E * mp.ncdf(-mp.mpf("1.5"))
        assert (
            gdpcli("convert", "gdp:mu=1", "--implies", f"1,{float(truth * (1 + mp.mpf('1e-9')))!r}").code == 0
        )
        one_line_error(
            gdpcli("convert", "gdp:mu=1", "--implies", f"1,{float(truth * (1 - mp.mpf('1e-9')))!r}"), 3
        )
        grouped = one_row(
            gdpcli("convert", "gdp:mu=0.5", "--group", "2", "--implies", "1,0.127", "-f", "json")
        )
        assert grouped["delta"] == pytest.approx(float(truth), rel=1e-12)  # 2 x 0.5 = 1
        assert grouped["implied"] == "yes"


def test_implies_decides_on_rigorous_pld_bounds(gdpcli) -> None:
    """Poisson-subsampled Gaussian, q = 0.1, sigma = 1, 100 steps, delta at eps = 1. Independent:
    dp-accounting 0.6 pld.privacy_loss_distribution.from_gaussian_mechanism(1.0, sampling_prob=0.1,
    value_discretization_interval=1e-4).self_compose(100).get_delta_for_epsilon(1.0) = 0.20752687623376484
    (pessimistic; with pessimistic_estimate=False 0.20659346750491112)."""
    spec = "gaussian:sigma=1,p=0.1,times=100"
    yes = rows_of(gdpcli("convert", spec, "--implies", "1,0.4", "-f", "json"))
    assert {row["guarantee"] for row in yes} == {"upper_bound", "lower_bound"}
    assert all(row["implied"] == "yes" for row in yes)
    bounds = by_label(yes)
    assert bounds["lower_bound"]["delta"] <= 0.20752687623376484
    assert bounds["upper_bound"]["delta"] >= 0.20659346750491112
    no = gdpcli("convert", spec, "--implies", "1,0.1", "-f", "json")
    one_line_error(no, code=3)
    assert all(row["implied"] == "no" for row in no.json()["rows"])


def test_implies_from_an_rdp_statement(gdpcli) -> None:
    """rdp:alpha=8,eps=1 states no lower bound. Implied: the classic conversion already gives delta =
    exp(-(alpha - 1)(eps - D_alpha)) = exp(-14) = 8.3e-7 at eps = 3, and the optimal one is no larger.
    Undecided: N(0.5, 1) vs N(0, 1) has D_8 = 8 * 0.5^2 / 2 = 1, and its delta(1) = Phi(-1.75) - e Phi(-2.25)
    = 0.0069 (mpmath below) > 1e-10, so no rigorous upper bound is <= 1e-10, and no lower bound is > 0."""
    with mp.workdps(50):
        assert float(mp.exp(-14)) < 1e-6
        assert gdpcli("convert", "rdp:alpha=8,eps=1", "--implies", "3,1e-6").code == 0
        witness = mp.ncdf(-mp.mpf("1.75")) - E * mp.ncdf(-mp.mpf("2.25"))
        assert witness > mp.mpf("1e-10")
        outcome = gdpcli("convert", "rdp:alpha=8,eps=1", "--implies", "1,1e-10", "-f", "json")
        assert "undecided" in one_line_error(outcome, code=1)
        assert all(row["implied"] == "undecided" for row in outcome.json()["rows"])


def test_implies_never_rests_on_an_approximation(gdpcli) -> None:
    outcome = gdpcli("convert", "gaussian:sigma=2x4", "--method", "clt", "--implies", "1,0.5")
    assert "rigorous" in one_line_error(outcome, code=1)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("1", "EPSILON,DELTA"),
        ("-1,0.1", "--implies epsilon: -1.0 is out of range"),
        ("1,2", "--implies delta: 2.0 is out of range"),
        ("1,-0.1", "--implies delta"),
        ("a,0.1", "not a number"),
        ("1,0.1,2", "EPSILON,DELTA"),
        ("1,nan", "NaN"),
    ],
)
def test_implies_bad_input(gdpcli, value: str, words: str) -> None:
    assert words in one_line_error(gdpcli("convert", "dp:eps=1", "--implies", value))


# ---------------------------------------------------------------------------------------------------------
# epsilon = 0: delta(0; mu) = 2 Phi(mu/2) - 1, calibration mu = 2 Phi^-1((1 + delta)/2)
# ---------------------------------------------------------------------------------------------------------


@at_least_digits(50)
def delta_at_zero(mu: str) -> mp.mpf:
    """delta(0; mu) = Phi(mu/2) - Phi(-mu/2) = 2 Phi(mu/2) - 1 (GDP paper Cor. 1 at eps = 0; Balle and Wang
    2018 Thm 8 at eps = 0)."""
    return 2 * mp.ncdf(mp.mpf(mu) / 2) - 1


@pytest.mark.parametrize("spec", ["gaussian:sigma=1", "gdp:mu=1"])
def test_delta_at_epsilon_zero(gdpcli, spec: str) -> None:
    row = one_row(gdpcli("convert", spec, "--epsilon", "0", "-f", "json"))
    assert row["delta"] == pytest.approx(float(delta_at_zero("1")), rel=1e-14)
    assert row["guarantee"] == "exact"


@pytest.mark.parametrize("mu", ["1e-9", "0.1", "5"])
def test_delta_at_epsilon_zero_small_and_large_mu(gdpcli, mu: str) -> None:
    row = one_row(gdpcli("convert", f"gdp:mu={mu}", "--epsilon", "0", "-f", "json"))
    assert row["delta"] == pytest.approx(float(delta_at_zero(mu)), rel=1e-13)


def test_profile_from_zero(gdpcli) -> None:
    """delta(eps; 1) = Phi(-eps + 1/2) - e^eps Phi(-eps - 1/2) (GDP paper Cor. 1)."""
    rows = rows_of(gdpcli("convert", "gdp:mu=1", "--epsilon", "0,1,2", "-f", "json"))
    with mp.workdps(50):
        for row, eps in zip(rows, (0, 1, 2), strict=True):
            truth = mp.ncdf(-eps + mp.mpf("0.5")) - mp.exp(eps) * mp.ncdf(-eps - mp.mpf("0.5"))
            assert row["epsilon"] == eps and row["delta"] == pytest.approx(float(truth), rel=1e-13)


def test_epsilon_is_zero_above_delta_at_zero(gdpcli) -> None:
    with mp.workdps(50):
        above = float(delta_at_zero("1") * (1 + mp.mpf("1e-6")))
        rows = rows_of(gdpcli("convert", "gdp:mu=1", "--delta", f"{above!r},0.5", "-f", "json"))
        assert [row["epsilon"] for row in rows] == [0.0, 0.0]


@pytest.mark.parametrize(("delta", "sens"), [("0.1", "1"), ("1e-5", "2"), ("0.9", "1")])
def test_calibrate_gaussian_at_epsilon_zero(gdpcli, delta: str, sens: str) -> None:
    """sigma = sens / mu with mu = 2 Phi^-1((1 + delta)/2), rounded up (the analytic Gaussian mechanism at
    eps = 0); the classical formula has no finite sigma there, so only the analytic row."""
    outcome = gdpcli(
        "calibrate", "gaussian", "--epsilon", "0", "--delta", delta, "--sens", sens, "-f", "json"
    )
    row = one_row(outcome)
    with mp.workdps(50):
        exact = mp.mpf(sens) / (
            2 * mp.sqrt(2) * mp.erfinv(mp.mpf(delta))
        )  # 2 Phi^-1((1+d)/2) = 2 sqrt2 erfinv(d)
        assert exact <= mp.mpf(row["sigma"]) <= exact * (1 + mp.mpf("1e-11"))
        assert (row["method"], row["guarantee"], row["valid"]) == ("analytic", "exact", True)
        assert row["achieved_epsilon"] == 0.0
        assert row["achieved_delta"] <= float(delta)


def test_calibrate_gaussian_epsilon_list_with_zero(gdpcli) -> None:
    rows = rows_of(gdpcli("calibrate", "gaussian", "--epsilon", "0,0.5", "--delta", "1e-5", "-f", "json"))
    assert [(row["epsilon"], row["method"]) for row in rows] == [
        (0.0, "analytic"),
        (0.5, "analytic"),
        (0.5, "classical"),
    ]


def test_calibrated_sigma_at_zero_round_trips(gdpcli) -> None:
    sigma = one_row(gdpcli("calibrate", "gaussian", "--epsilon", "0", "--delta", "0.1", "-f", "json"))[
        "sigma"
    ]
    row = one_row(gdpcli("convert", f"gaussian:sigma={sigma!r}", "--epsilon", "0", "-f", "json"))
    assert row["delta"] <= 0.1


def test_calibrate_still_refuses_negative_epsilon_and_laplace_at_zero(gdpcli) -> None:
    one_line_error(gdpcli("calibrate", "gaussian", "--epsilon", "-0.1", "--delta", "0.1"))
    one_line_error(gdpcli("calibrate", "laplace", "--epsilon", "0"))  # b = sens / 0: no finite scale


def test_analytic_sigma_at_zero_vectorized_equals_scalar() -> None:
    import numpy as np

    from gdpcli.core.calibrate import analytic_gaussian_sigma

    epsilons, deltas = np.array([0.0, 0.0, 1.0]), np.array([0.1, 1e-5, 1e-5])
    vector = analytic_gaussian_sigma(epsilons, deltas)
    assert vector.tolist() == [analytic_gaussian_sigma(e, d) for e, d in zip(epsilons, deltas, strict=True)]
    assert np.all(np.isfinite(vector))
