"""`gdpcli compose` end to end: what it must hold, methods, budgets and errors."""

from __future__ import annotations

import json
import math

import mpmath as mp
import numpy as np
import pytest

from tests.conftest import infinite, one_line_error

EPS0 = "0.31622776601683794"  # 1/sqrt(10)


def rows(outcome) -> list[dict]:
    assert outcome.code == 0, outcome.stderr
    return outcome.json()["rows"]


def by_guarantee(result: list[dict], key: str = "epsilon") -> dict[str, float]:
    return {row["guarantee"]: row[key] for row in result}


def test_gdp_composition_is_exact(gdpcli) -> None:
    [row] = rows(gdpcli("compose", "gdp:mu=0.3", "gdp:mu=0.4", "--to", "mu", "-f", "json"))
    assert row["mu"] == pytest.approx(0.5, rel=1e-15)
    assert (row["guarantee"], row["method"]) == ("exact", "gdp")


def test_pure_dp_binomial_exact(gdpcli, reference) -> None:
    [row] = rows(gdpcli("compose", f"dp:eps={EPS0}x10", "--delta", "1e-3", "-f", "json"))
    expected = float(reference["pure_dp_exact_composition"][0]["epsilon"])
    assert row["epsilon"] == pytest.approx(expected, rel=1e-6)
    assert row["epsilon"] == pytest.approx(2.8896727393598, rel=1e-6)
    assert row["guarantee"] == "exact"


@mp.workdps(60)
def mp_binomial_beta(epsilon0: str, times: int, alpha: float) -> mp.mpf:
    """beta(alpha) of f_{eps0,0}^{(x)k} by Neyman-Pearson in mpmath: j heads of B(k, p) under P have loss
    (2j - k) eps0 (p = e^eps0 / (1 + e^eps0)), the same count has Q-probability with p and 1 - p swapped;
    the best test rejects the lowest losses first, randomizing on the atom where alpha runs out."""
    eps0 = mp.mpf(epsilon0)
    p = mp.exp(eps0) / (1 + mp.exp(eps0))
    spent, rejected_q = mp.mpf(0), mp.mpf(0)
    for heads in range(times + 1):
        count = mp.binomial(times, heads)
        p_mass = count * p**heads * (1 - p) ** (times - heads)
        q_mass = count * (1 - p) ** heads * p ** (times - heads)
        if spent + p_mass >= alpha:
            return 1 - rejected_q - q_mass * (alpha - spent) / p_mass
        spent, rejected_q = spent + p_mass, rejected_q + q_mass
    return mp.mpf(0)


@pytest.mark.parametrize("times", [1000, pytest.param(20000, marks=pytest.mark.slow)])
def test_pure_dp_tradeoff_exact_at_many_compositions(gdpcli, times: int) -> None:
    """The binomial trade-off printed 5.55e-16 (exact!) for a true 0.000788 at x1000 and nan at
    x70000; the Neyman-Pearson sums keep every digit."""
    alphas = [0.01, 0.5, 0.99]
    result = rows(gdpcli("convert", f"dp:eps=0.1x{times}", "--alpha", "0.01,0.5,0.99", "-f", "json"))
    for row, alpha in zip(result, alphas, strict=True):
        assert (row["guarantee"], row["method"]) == ("exact", "binomial")
        assert row["beta"] == pytest.approx(float(mp_binomial_beta("0.1", times, alpha)), rel=1e-9)


def test_clt_mu_of_pure_dp(gdpcli) -> None:
    [row] = rows(gdpcli("compose", f"dp:eps={EPS0}x10", "--method", "clt", "--to", "mu", "-f", "json"))
    with mp.workdps(40):
        expected = 2 * mp.sqrt(10) * mp.sinh(1 / (2 * mp.sqrt(10)))  # Theorem 5's mu for this list
        assert row["mu"] == pytest.approx(float(expected), rel=1e-10)
        assert row["guarantee"] == "approximation"


def test_composition_close_to_g1(gdpcli) -> None:
    """GDP paper Thm 8 discussion: f_{eps,0}^{(x)10} with eps = 1/sqrt(10) is within 0.013 of G_1."""
    result = rows(gdpcli("compose", f"dp:eps={EPS0}x10", "--alpha", "0:1:2001", "-f", "json"))
    alpha = np.array([r["alpha"] for r in result])
    beta = np.array([r["beta"] for r in result])
    with mp.workdps(40):
        g1 = np.array(
            [
                float(mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * mp.mpf(a) - 1) - 1)) if 0 < a < 1 else 1 - a
                for a in alpha
            ]
        )  # G_1(a) = Phi(Phi^-1(1 - a) - 1), mpmath
        assert np.max(np.abs(beta - g1)) < 0.013
        assert np.max(np.abs(beta - g1)) > 0.005  # the curves are not identical: the test can fail


def test_heterogeneous_bounds_bracket_and_tighten(gdpcli) -> None:
    specs = ("gaussian:sigma=3", "laplace:b=2", "dp:eps=0.5,delta=1e-6")
    coarse = by_guarantee(
        rows(gdpcli("compose", *specs, "--delta", "1e-5", "--accuracy", "0.05", "-f", "json"))
    )
    fine = by_guarantee(
        rows(gdpcli("compose", *specs, "--delta", "1e-5", "--accuracy", "0.001", "-f", "json"))
    )
    assert coarse["upper_bound"] >= coarse["lower_bound"]
    assert fine["upper_bound"] >= fine["lower_bound"]
    assert fine["upper_bound"] - fine["lower_bound"] < coarse["upper_bound"] - coarse["lower_bound"]
    assert fine["upper_bound"] <= coarse["upper_bound"] and fine["lower_bound"] >= coarse["lower_bound"]
    oracle = _oracle_epsilon(1e-5)
    assert fine["lower_bound"] <= oracle["upper"] and oracle["lower"] <= fine["upper_bound"]
    assert fine["lower_bound"] <= oracle["dp_accounting_upper"]


def _oracle_epsilon(delta: float) -> dict[str, float]:
    """Independent oracles for Gaussian(sigma 3) + Laplace(b 2) + (0.5, 1e-6)-DP: prv-accountant's
    [lower, upper] interval and dp-accounting's pessimistic PLD (an upper bound)."""
    from dp_accounting.pld import privacy_loss_distribution as pld
    from prv_accountant import PRVAccountant
    from prv_accountant import privacy_random_variables as prv

    mechanisms = [
        prv.GaussianMechanism(noise_multiplier=3.0),
        prv.LaplaceMechanism(mu=0.5),
        prv.ApproximateDPMechanism(epsilon=0.5, delta=1e-6),
    ]
    accountant = PRVAccountant(
        prvs=mechanisms, max_self_compositions=[1, 1, 1], eps_error=1e-3, delta_error=1e-10
    )
    lower, _, upper = accountant.compute_epsilon(delta=delta, num_self_compositions=[1, 1, 1])
    composed = pld.from_gaussian_mechanism(3.0, value_discretization_interval=1e-4)
    composed = composed.compose(pld.from_laplace_mechanism(2.0, value_discretization_interval=1e-4))
    composed = composed.compose(
        pld.from_privacy_parameters(pld.common.DifferentialPrivacyParameters(0.5, 1e-6))
    )
    return {"lower": lower, "upper": upper, "dp_accounting_upper": composed.get_epsilon_for_delta(delta)}


def test_pld_brackets_exact_gdp(gdpcli, reference) -> None:
    result = rows(
        gdpcli("compose", "gaussian:sigma=20x1000", "--delta", "1e-5", "--method", "pld", "-f", "json")
    )
    bounds = by_guarantee(result)
    exact = reference["asoodeh_gaussian_sigma20_delta1e-5"]["eps_T1000"]["eps_exact_gdp_T1000"]
    assert bounds["lower_bound"] <= exact <= bounds["upper_bound"]
    assert exact == pytest.approx(7.5112759, rel=1e-7)
    assert bounds["upper_bound"] / bounds["lower_bound"] <= 1.005


def test_method_all_labels_each_method(gdpcli) -> None:
    result = rows(gdpcli("compose", f"dp:eps={EPS0}x10", "--delta", "1e-3", "--method", "all", "-f", "json"))
    labels = {(r["method"], r["guarantee"]) for r in result}
    assert {
        ("binomial", "exact"),
        ("pld", "upper_bound"),
        ("pld", "lower_bound"),
        ("clt", "approximation"),
        ("berry-esseen", "upper_bound"),
    } <= labels
    exact = next(r["epsilon"] for r in result if r["method"] == "binomial")
    for r in result:
        if r["guarantee"] == "upper_bound":
            assert infinite(r, "epsilon") or r["epsilon"] >= exact * (1 - 1e-12)
        if r["guarantee"] == "lower_bound":
            assert r["epsilon"] <= exact * (1 + 1e-12)


def test_delta_and_alpha_queries_are_bracketed(gdpcli) -> None:
    result = rows(gdpcli("compose", "laplace:b=1x5", "--epsilon", "2", "--alpha", "0.1", "-f", "json"))
    deltas = {r["guarantee"]: r["delta"] for r in result if "delta" in r}
    betas = {r["guarantee"]: r["beta"] for r in result if "beta" in r}
    assert 0 < deltas["lower_bound"] <= deltas["upper_bound"] < 1
    assert 0 < betas["lower_bound"] <= betas["upper_bound"] <= 0.9


def test_budget_exit_codes(gdpcli) -> None:
    over = gdpcli("compose", "gaussian:sigma=5x100", "--delta", "1e-5", "--max-epsilon", "3", "-f", "csv")
    assert over.code == 3
    assert over.stdout.count("\n") == 2  # the figures are still printed
    assert over.stderr.startswith("gdpcli: error: epsilon") and "--max-epsilon 3" in over.stderr
    assert gdpcli("compose", "gaussian:sigma=5x100", "--delta", "1e-5", "--max-epsilon", "11").code == 0
    # pld: the rigorous upper bound is what is checked
    mixed = ("gaussian:sigma=3", "laplace:b=2")
    assert gdpcli("compose", *mixed, "--epsilon", "1", "--max-delta", "0.9").code == 0
    assert gdpcli("compose", *mixed, "--epsilon", "1", "--max-delta", "1e-9").code == 3


def test_budget_needs_rigorous_figure(gdpcli) -> None:
    outcome = gdpcli(
        "compose", f"dp:eps={EPS0}x10", "--delta", "1e-3", "--method", "clt", "--max-epsilon", "3"
    )
    assert outcome.code == 1
    assert "approximations never pass a budget check" in outcome.stderr


def test_to_mu_refused_when_not_gdp(gdpcli) -> None:
    outcome = gdpcli("compose", "laplace:b=1", "gaussian:sigma=1", "--to", "mu")
    assert outcome.code == 1
    assert "not exactly GDP" in outcome.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("compose",),
        ("compose", "gdp:mu=1"),
        ("compose", "gdp:mu=1", "--delta", "1e-5", "--method", "magic"),
        ("compose", "gdp:mu=1", "--delta", "1e-5", "--accuracy", "0"),
        ("compose", "gdp:mu=1", "--delta", "1e-5", "--accuracy", "nan"),
        ("compose", "gdp:mu=1", "--max-epsilon", "1"),
        ("compose", "gdp:mu=1", "--epsilon", "1", "--max-delta", "2"),
        ("compose", "gdp:mu=1", "gdp:mu=-2", "--delta", "1e-5"),
    ],
)
def test_bad_input(gdpcli, args: tuple[str, ...]) -> None:
    one_line_error(gdpcli(*args), 2)


def test_extreme_inputs_are_refused_cleanly(gdpcli) -> None:
    spec = ("compose", "gaussian:sigma=3", "laplace:b=2", "--delta", "1e-300", "-f", "json")
    tiny = gdpcli(*spec)
    found = {row["guarantee"]: row["epsilon"] for row in rows(tiny)}
    # tilted at the answer, 1e-300 is answered within the accuracy asked, below RDP's rigorous bound
    rdp = rows(gdpcli(*spec, "--method", "rdp"))[0]["epsilon"]
    assert tiny.code == 0 and not json.loads(tiny.stdout)["notes"]
    assert found["lower_bound"] <= found["upper_bound"] <= found["lower_bound"] * (1 + 1e-3) < rdp
    assert math.isfinite(
        float(
            rows(gdpcli("compose", "gdp:mu=0.01x1000000000", "--delta", "1e-5", "-f", "json"))[0]["epsilon"]
        )
    )


def test_delta_only_guarantees_compose_exactly(gdpcli) -> None:
    """f_{0,d} three times is f_{0, 1 - (1 - d)^3} (GDP paper eq. 11): delta 0.875 at every eps >= 0."""
    result = rows(
        gdpcli("compose", "dp:eps=0,delta=0.5x3", "--delta", "0.9,0.5", "--alpha", "0.05", "-f", "json")
    )
    assert [r["epsilon"] for r in result if "epsilon" in r] == [0.0, None]
    assert infinite(next(r for r in result if r.get("delta") == 0.5), "epsilon")
    [beta] = [r["beta"] for r in result if "beta" in r]
    assert beta == pytest.approx(1 - 0.875 - 0.05, rel=1e-12)
    assert all(r["guarantee"] == "exact" for r in result)


def test_gdp_composition_does_not_underflow(gdpcli) -> None:
    [row] = rows(gdpcli("compose", "gdp:mu=3e-300", "gdp:mu=4e-300", "--to", "mu", "-f", "json"))
    assert row["mu"] == pytest.approx(5e-300, rel=1e-15)


# --- the delta part of (eps, delta)-DP specs in closed form (GDP paper eq. 10-12) ----------------------


def _gdp_delta(epsilon: mp.mpf, mu: mp.mpf) -> mp.mpf:
    """delta(eps; mu) of mu-GDP (GDP paper Cor. 1) in mpmath, for any real eps."""
    return mp.ncdf(-epsilon / mu + mu / 2) - mp.exp(epsilon) * mp.ncdf(-epsilon / mu - mu / 2)


def _with_randomized_response(epsilon: float, epsilon0: float, delta0: float) -> mp.mpf:
    """delta(eps) of G_1 (x) f_{eps0, delta0} = G_1 (x) RR(eps0) (x) f_{0, delta0} (eq. 10-12): RR(eps0) has
    privacy loss +-eps0, with mass e^eps0/(1 + e^eps0) on +eps0 under the alternative, so
    delta = delta0 + (1 - delta0) sum_j m_j delta_1(eps - l_j) (hockey-stick divergence of a product)."""
    with mp.workdps(40):
        e, e0 = mp.mpf(epsilon), mp.mpf(epsilon0)
        plus = mp.exp(e0) / (1 + mp.exp(e0))
        mixed = plus * _gdp_delta(e - e0, 1) + (1 - plus) * _gdp_delta(e + e0, 1)
        return delta0 + (1 - mp.mpf(delta0)) * mixed


def test_gdp_with_a_delta_only_guarantee_is_exact(gdpcli) -> None:
    """compose gdp:mu=1 dp:eps=0,delta=0.01 exited 1 ("range [-0, 0] is outside [-700, 700]")."""
    args = ("compose", "gdp:mu=1", "dp:eps=0,delta=0.01")
    found = rows(gdpcli(*args, "--delta", "0.02,0.01,1e-5", "--epsilon", "1", "--alpha", "0.1", "-f", "json"))
    assert {(row["guarantee"], row["method"]) for row in found} == {("exact", "gdp")}
    at_delta = {
        row["delta"]: row["epsilon"] for row in found if "alpha" not in row and row.get("delta") < 0.1
    }
    with mp.workdps(40):
        root = mp.findroot(lambda e: _with_randomized_response(e, 0, 0.01) - mp.mpf("0.02"), 2.3)
    assert at_delta[0.02] == pytest.approx(float(root), rel=1e-12)
    assert at_delta[0.01] is at_delta[1e-5] is None  # inf: delta(eps) >= delta0 = 0.01 for every eps
    assert all(infinite(row, "epsilon") for row in found if row.get("delta") in (0.01, 1e-5))
    [profile] = [row for row in found if row.get("epsilon") == 1.0]
    assert profile["delta"] == pytest.approx(float(_with_randomized_response(1.0, 0, 0.01)), rel=1e-13)
    [beta] = [row for row in found if "alpha" in row]
    with mp.workdps(40):
        expected = 0.99 * mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * mp.mpf(0.1) / mp.mpf(0.99) - 1) - 1)
        assert beta["beta"] == pytest.approx(float(expected), rel=1e-12)  # (1 - d) G_1(alpha / (1 - d))


@pytest.mark.parametrize("epsilon0", [1e-3, 1e-6, 1e-9])
def test_gdp_with_tiny_epsilon_and_delta(gdpcli, epsilon0: float) -> None:
    """eps0 = 1e-3 returned a lower bound near 0.01 (exit 0) and 1e-6 asked for 33.6 million grid points."""
    args = ("compose", "gdp:mu=1", f"dp:eps={epsilon0!r},delta=0.01", "--epsilon", "1", "-f", "json")
    bounds = by_guarantee(rows(gdpcli(*args)), "delta")
    truth = float(_with_randomized_response(1.0, epsilon0, 0.01))
    assert bounds["lower_bound"] <= truth <= bounds["upper_bound"] <= truth * (1 + 0.005)


def test_rdp_with_delta_parts(gdpcli) -> None:
    """RDP has no curve for delta > 0; the delta part is now composed in closed form beside it."""
    specs = ("gaussian:sigma=2x10", "dp:eps=0.5,delta=1e-6")
    rdp = by_guarantee(rows(gdpcli("compose", *specs, "--delta", "1e-5", "--method", "rdp", "-f", "json")))
    pld = by_guarantee(rows(gdpcli("compose", *specs, "--delta", "1e-5", "--method", "pld", "-f", "json")))
    assert pld["lower_bound"] <= pld["upper_bound"] <= rdp["upper_bound"]


def test_berry_esseen_labels_are_true(gdpcli) -> None:
    """The band is rigorous only on closed-form functionals. Laplace now has them (it had
    QUADPACK integrals labelled upper_bound); a subsampled step still integrates numerically without a
    proven bound, so its band is labelled approximation and passes no budget check."""
    [laplace] = rows(
        gdpcli("compose", "laplace:b=1x100", "--delta", "1e-5", "--method", "berry-esseen", "-f", "json")
    )
    assert (laplace["guarantee"], laplace["method"]) == ("upper_bound", "berry-esseen")
    sampled = (
        "compose",
        "gaussian:sigma=1,p=0.1,sampling=fixedx100",
        "--delta",
        "0.3",
        "--method",
        "berry-esseen",
    )
    [row] = rows(gdpcli(*sampled, "-f", "json"))
    assert row["guarantee"] == "approximation"
    checked = gdpcli(*sampled, "--max-epsilon", "100", "-f", "json")
    assert checked.code == 1 and "approximations never pass a budget check" in checked.stderr


@pytest.mark.parametrize("max_work", [1.5e9, pytest.param(None, marks=pytest.mark.slow)])
def test_accuracy_beyond_the_budget_answers_with_a_note(
    gdpcli, monkeypatch: pytest.MonkeyPatch, max_work: float | None
) -> None:
    """--accuracy 1e-12 ran for minutes or exited at the grid cap; now the tightest rigorous
    bounds found come back within the budget, with a note saying the accuracy was not reached. Ten Laplace
    steps: no grid under the point cap gets within 1e-9 of the truth, so the budget always ends it (ten
    Gaussians could reach their round-off-limited width on a fine enough grid, and the note then went).
    The quick run caps the work at 1.5e9 units (MAX_WORK; the slow run keeps its 8e9, 5 s of CPU)."""
    if max_work is not None:
        from gdpcli.core.pld import refinement

        monkeypatch.setattr(refinement, "MAX_WORK", max_work)
    args = ("compose", "laplace:b=0.7x10", "--epsilon", "1", "--accuracy", "1e-12", "--method", "pld")
    document = gdpcli(*args, "-f", "json").json()
    bounds = by_guarantee(document["rows"], "delta")
    # dp-accounting 0.6.0, from_laplace_mechanism(0.7, value_discretization_interval=1e-4), 10-fold, at
    # eps 1: optimistic (privacy buckets) 0.904506837466472, pessimistic 0.9045296738528897, each a bound
    assert 0.904506837466472 <= bounds["upper_bound"] and bounds["lower_bound"] <= 0.9045296738528897
    assert bounds["lower_bound"] <= bounds["upper_bound"]
    assert "stopped at the work/size budget" in " ".join(" ".join(document["notes"]).split())


def test_target_beyond_the_search_is_an_input_error(gdpcli) -> None:
    """--target-epsilon 1e308 was an OverflowError, then an exit 1 at the search limit."""
    outcome = gdpcli("compose", "gdp:mu=1", "--target-epsilon", "1e308", "--delta", "1e-5")
    assert outcome.code == 2
    assert "allows more than 1,000,000,000 repetitions" in outcome.stderr
    assert outcome.stderr.count("\n") == 1


def test_laplace_profile_at_an_atom_of_the_loss_answers_with_the_others(gdpcli) -> None:
    """`--epsilon 3,5` ran 40 s, then 16 s at 1.3 GB, because the refinement chased eps = 5,
    where delta is exactly 0 (ten Laplace(b = 2) losses are each at most 1/b = 0.5, so the composed
    loss never exceeds 5) and only a grid aligned with 0.5 shows it. Now each eps keeps the tightest
    bounds of every grid."""
    result = rows(gdpcli("compose", "laplace:b=2x10", "--epsilon", "3,5", "-f", "json"))
    at = {(r["epsilon"], r["guarantee"]): r["delta"] for r in result}
    assert at[(5.0, "lower_bound")] == 0.0 and at[(5.0, "upper_bound")] <= 1e-15
    # prv-accountant's interval for the same question: [0.0318146, 0.0319204]
    from prv_accountant import PRVAccountant
    from prv_accountant import privacy_random_variables as prv

    accountant = PRVAccountant(
        prvs=[prv.LaplaceMechanism(mu=0.5)], max_self_compositions=[10], eps_error=1e-3, delta_error=1e-10
    )
    prv_lower, _, prv_upper = accountant.compute_delta(epsilon=3.0, num_self_compositions=[10])
    assert at[(3.0, "lower_bound")] <= prv_upper and prv_lower <= at[(3.0, "upper_bound")]
    assert at[(3.0, "upper_bound")] <= 1.005 * at[(3.0, "lower_bound")]


def test_infinite_upper_bound_proven_by_the_lower_is_not_called_vacuous(gdpcli) -> None:
    """Three (1, 0.01)-DP steps put mass 1 - 0.99^3 = 0.0297 at infinite loss, so at delta 1e-3 no
    finite epsilon exists: the upper bound's inf is the truth, and its reason must not say otherwise."""
    args = ("compose", "dp:eps=1,delta=0.01x3", "--delta", "1e-3", "--method", "pld", "-f", "json")
    result = rows(gdpcli(*args))
    upper = next(r for r in result if r["guarantee"] == "upper_bound")
    lower = next(r for r in result if r["guarantee"] == "lower_bound")
    assert infinite(upper, "epsilon") and infinite(lower, "epsilon")
    assert "no finite epsilon exists" in upper["reason"] and "may be finite" not in upper["reason"]


def test_small_epsilon_is_refined_to_an_absolute_width(gdpcli) -> None:
    """--accuracy's rule for epsilon: upper - lower <= accuracy x (lower + 0.1). Four Gaussians of sigma 100
    are exactly 0.02-GDP; its epsilon at delta 1e-5 (about 0.0587) is bisected in mpmath and bracketed."""
    args = ("compose", "gaussian:sigma=100x4", "--delta", "1e-5", "--method", "pld", "-f", "json")
    bounds = by_guarantee(rows(gdpcli(*args)))
    with mp.workdps(40):
        low, high = mp.mpf(0), mp.mpf(1)  # delta(eps) falls from delta(0) > 1e-5 to delta(1) < 1e-5
        for _ in range(120):
            middle = (low + high) / 2
            low, high = (
                (middle, high) if _gdp_delta(middle, mp.mpf("0.02")) > mp.mpf("1e-5") else (low, middle)
            )
    assert bounds["lower_bound"] <= low <= high <= bounds["upper_bound"]
    assert bounds["upper_bound"] - bounds["lower_bound"] <= 0.005 * (bounds["lower_bound"] + 0.1)


def test_epsilon_in_the_thousands_is_bracketed(gdpcli) -> None:
    """10000 Gaussians of sigma 1.1 are 90.9-GDP: epsilon at 1e-5 is about 4519, where e^-eps underflows
    (the PLD accountant refused epsilons above 600 before its suffix sums were held relative to each
    piece). The PLD bounds bracket the mpmath root of the GDP profile (Cor. 1)."""
    args = ("compose", "gaussian:sigma=1.1x10000", "--delta", "1e-5", "--method", "pld", "-f", "json")
    bounds = by_guarantee(rows(gdpcli(*args)))
    with mp.workdps(60):
        mu = mp.sqrt(10000) / mp.mpf("1.1")
        root = mp.findroot(lambda e: _gdp_delta(e, mu) - mp.mpf("1e-5"), mp.mpf(4519))
    assert bounds["lower_bound"] <= root <= bounds["upper_bound"]
    assert bounds["upper_bound"] - bounds["lower_bound"] <= 0.005 * bounds["lower_bound"]


def test_method_all_skips_a_method_that_cannot_answer_the_question(gdpcli) -> None:
    """--method all with --alpha: the textbook theorems state (eps, delta) pairs only, so they are skipped
    with a note (they used to fail the whole command, exit 1); asked alone, they still fail."""
    outcome = gdpcli("compose", "dp:eps=1x3", "--alpha", "0.1", "--method", "all", "-f", "json")
    assert outcome.code == 0, outcome.stderr
    document = outcome.json()
    methods = {row["method"] for row in document["rows"]}
    assert {"binomial", "pld", "clt"} <= methods and not {"basic", "advanced"} & methods
    notes = " ".join(document["notes"])
    assert "skipped basic for beta" in notes and "skipped advanced for beta" in notes
    alone = gdpcli("compose", "dp:eps=1x3", "--alpha", "0.1", "--method", "basic")
    assert alone.code == 1 and alone.stderr.count("\n") == 1
