"""`gdpcli risk`: attack TPR at given FPRs, advantage and Bayes success, labelled.

Expected values: mpmath closed forms for GDP (GDP paper Def. 2: 1 - G_mu(alpha) = Phi(mu - Phi^-1(1 -
alpha)); advantage 2 Phi(mu / 2) - 1), dp-accounting's pessimistic PLD turned into a TPR bound
(1 - f(alpha) = inf_eps e^eps alpha + delta(eps)), and a Monte Carlo estimate of the optimal
likelihood-ratio test's TPR with a confidence interval.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from tests.conftest import one_line_error, rows_of


def by(rows: list[dict], measure: str, guarantee: str) -> list[dict]:
    return [row for row in rows if row["measure"] == measure and row["guarantee"] == guarantee]


def test_gdp_risk_is_exact(gdpcli) -> None:
    rows = rows_of(gdpcli("risk", "gdp:mu=1", "--fpr", "0.001,0.01,0.1", "--prior", "0.5,0.1", "-f", "json"))
    with mp.workdps(40):
        for row in by(rows, "tpr", "exact"):
            alpha = mp.mpf(row["fpr"])
            assert row["value"] == pytest.approx(
                float(mp.ncdf(1 - mp.sqrt(2) * mp.erfinv(1 - 2 * alpha))), rel=1e-12
            )
        [advantage] = by(rows, "advantage", "exact")
        assert advantage["value"] == pytest.approx(float(2 * mp.ncdf(mp.mpf(1) / 2) - 1), rel=1e-12)
        bayes = {row["prior"]: row["value"] for row in by(rows, "bayes_success", "exact")}
        assert bayes[0.5] == pytest.approx(float(mp.ncdf(mp.mpf(1) / 2)), rel=1e-12)  # (1 + advantage) / 2
        assert bayes[0.1] >= 0.9  # never below guessing "not a member"


def _dp_accounting_tpr(alpha: float, sigma: float, rate: float, steps: int) -> float:
    """An independent upper bound on the TPR: inf over a grid of eps of e^eps alpha + delta(eps), delta from
    dp-accounting's pessimistic PLD (each term is >= 1 - f(alpha), so the minimum is too)."""
    from dp_accounting.pld import privacy_loss_distribution as plds

    pld = plds.from_gaussian_mechanism(sigma, sampling_prob=rate, value_discretization_interval=1e-3)
    epsilons = np.linspace(-3, 8, 1101)
    deltas = np.asarray(pld.self_compose(steps).get_delta_for_epsilon(epsilons))  # one pass for all
    return float(np.min(np.exp(epsilons) * alpha + deltas))


def _monte_carlo_tpr(alpha: float, mu: float, rate: float, steps: int, seed: int = 7) -> tuple[float, float]:
    """A 99.9 % confidence interval for the TPR of the likelihood-ratio test at FPR alpha, Poisson-subsampled
    Gaussian: the statistic sum_t log(1 - q + q e^{mu x_t - mu^2/2}), threshold its (1 - alpha) quantile
    under Q = N(0, I) (a second sample, so the FPR is alpha up to sampling error)."""
    rng = np.random.default_rng(seed)
    n = 200_000

    def statistic(x: np.ndarray) -> np.ndarray:
        return np.log1p(rate * np.expm1(mu * x - mu**2 / 2)).sum(axis=1)

    threshold = np.quantile(statistic(rng.standard_normal((n, steps))), 1 - alpha)
    used = rng.random((n, steps)) < rate
    hits = statistic(rng.standard_normal((n, steps)) + mu * used) > threshold
    p = hits.mean()
    half = 3.29 * math.sqrt(p * (1 - p) / n)
    return p - half, p + half


@pytest.mark.parametrize("alpha", [0.01, 0.1])
def test_subsampled_tpr_upper_bound_is_rigorous_and_tight(gdpcli, alpha: float) -> None:
    """q 0.1, sigma 1, 10 steps: the upper bound is at least the optimal test's Monte Carlo TPR (less its
    sampling error) and at most dp-accounting's independent bound (plus its grid's slack)."""
    rows = rows_of(gdpcli("risk", "gaussian:sigma=1,p=0.1x10", "--fpr", str(alpha), "-f", "json"))
    [upper] = by(rows, "tpr", "upper_bound")
    [lower] = by(rows, "tpr", "lower_bound")
    low, high = _monte_carlo_tpr(alpha, 1.0, 0.1, 10)
    assert lower["value"] <= upper["value"]
    assert upper["value"] >= low
    assert upper["value"] <= _dp_accounting_tpr(alpha, 1.0, 0.1, 10) + 1e-3
    assert lower["value"] <= high + 0.01  # the LR test's FPR itself is estimated


def test_dp_sgd_run_options(gdpcli) -> None:
    """The MNIST run by its options equals the same run as a spec."""
    run = ("--dataset-size", "60000", "--batch-size", "256", "--noise-multiplier", "1.1", "--steps", "1000")
    by_options = rows_of(gdpcli("risk", *run, "--fpr", "0.01", "-f", "json"))
    spec = f"gaussian:sigma=1.1,p={256 / 60000!r}x1000"
    by_spec = rows_of(gdpcli("risk", spec, "--fpr", "0.01", "-f", "json"))
    assert [r["value"] for r in by_options] == [r["value"] for r in by_spec]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("gdp:mu=1", "--fpr", "0"), "--fpr: 0.0 is not in (0, 1)"),
        (("gdp:mu=1", "--fpr", "1.5"), "--fpr"),
        (("gdp:mu=1", "--prior", "1"), "--prior"),
        (("gdp:mu=1", "--noise-multiplier", "1", "--steps", "10"), "not both"),
        ((), "nothing to assess"),
    ],
)
def test_bad_input_exits_2(gdpcli, args: tuple[str, ...], words: str) -> None:
    one_line_error(gdpcli("risk", *args), 2, words)


def test_calibrate_sgd_to_a_risk_target_round_trips(gdpcli) -> None:
    """The noise meets TPR <= 0.05 at FPR 0.01 by `gdpcli risk`, and 1 % less fails."""
    data = ("--dataset-size", "60000", "--batch-size", "256", "--epochs", "60")
    [row] = rows_of(gdpcli("calibrate", "sgd", *data, "--max-tpr", "0.05", "--at-fpr", "0.01", "-f", "json"))
    assert row["guarantee"] == "upper_bound" and row["achieved_tpr"] <= 0.05

    def tpr(noise: float) -> float:
        rows = rows_of(
            gdpcli("risk", *data, "--noise-multiplier", repr(noise), "--fpr", "0.01", "-f", "json")
        )
        return by(rows, "tpr", "upper_bound")[0]["value"]

    assert tpr(row["noise_multiplier"]) <= 0.05 < tpr(row["noise_multiplier"] * 0.99)


@pytest.mark.parametrize("target", [("--max-tpr", "0.05", "--at-fpr", "0.01"), ("--max-advantage", "0.1")])
def test_calibrate_gaussian_to_a_risk_target_is_exact(gdpcli, target: tuple[str, ...]) -> None:
    """sigma = 1 / mu with mu = Phi^-1(0.05) + Phi^-1(0.99), or 2 Phi^-1(0.55) (mpmath)."""
    [row] = rows_of(gdpcli("calibrate", "gaussian", *target, "-f", "json"))
    with mp.workdps(40):
        inverse = lambda p: mp.sqrt(2) * mp.erfinv(2 * mp.mpf(p) - 1)  # noqa: E731
        expected = inverse("0.05") + inverse("0.99") if "--max-tpr" in target else 2 * inverse("0.55")
        assert row["guarantee"] == "exact" and row["sigma"] == pytest.approx(float(1 / expected), rel=1e-12)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--max-tpr", "0.05"), "--max-tpr and --at-fpr go together"),
        (("--max-tpr", "0.01", "--at-fpr", "0.05"), "guessing already"),
        (("--max-advantage", "1.5"), "--max-advantage"),
        (("--max-advantage", "0.1", "--mu", "1"), "not both"),
    ],
)
def test_bad_risk_targets_exit_2(gdpcli, args: tuple[str, ...], words: str) -> None:
    outcome = gdpcli("calibrate", "gaussian", *args)
    assert outcome.code == 2 and words in outcome.stderr, outcome.stderr


def test_plot_draws_the_roc_bound(gdpcli, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "roc.png"
    outcome = gdpcli("risk", "gaussian:sigma=1,p=0.01x100", "--plot", str(target), "-f", "csv")
    assert outcome.code == 0, outcome.stderr
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_group_risk_is_the_groups_mechanism(gdpcli) -> None:
    """--group 3 on ten Gaussians is the Gaussian with three times the sensitivity, exactly (risk for
    user-level inputs)."""
    grouped = rows_of(gdpcli("risk", "gaussian:sigma=2x10", "--group", "3", "--fpr", "0.01", "-f", "json"))
    direct = rows_of(gdpcli("risk", "gaussian:sigma=2,sens=3x10", "--fpr", "0.01", "-f", "json"))
    assert [r["value"] for r in grouped] == [r["value"] for r in direct]


def test_rdp_risk_bounds_hold_over_the_exact_curve(gdpcli) -> None:
    """--method rdp (and zcdp: specs) answer through RDP's trade-off lower bound, so their TPRs and
    advantage are upper bounds: at or above G_1's exact Phi(Phi^-1(fpr) + 1) and 2 Phi(1/2) - 1 (scipy),
    zcdp:rho=0.5 being G_1's own RDP curve."""
    from scipy.stats import norm

    for args in (("gdp:mu=1", "--method", "rdp"), ("zcdp:rho=0.5",)):
        outcome = gdpcli("risk", *args, "--fpr", "0.001,0.01,0.1", "-f", "json")
        assert outcome.code == 0, outcome.stderr
        rows = outcome.json()["rows"]
        assert {row["guarantee"] for row in rows} == {"upper_bound"}
        for row in rows:
            if row["measure"] == "tpr":
                assert norm.cdf(norm.ppf(row["fpr"]) + 1.0) <= row["value"] <= 1.0
            if row["measure"] == "advantage":
                assert 2 * norm.cdf(0.5) - 1 <= row["value"] <= 1.0
