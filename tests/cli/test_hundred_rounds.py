"""calibrate --closed-form: the hundred-rounds paper's closed forms for the noise (Asoodeh et al., eq. 23
solved for sigma, eq. 28 and Thm 5 without their O-terms) beside gdpcli's own calibration.

Expected values: mpmath recipes of the formulas (written next to each use), the reference file (the paper's
sigma = 20, delta = 1e-5 set-up: the moments accountant's epsilon at T = 1000 and its step budget at
epsilon 6), the exact privacy of the Gaussian in mpmath (delta_mu(eps) of mu-GDP, GDP paper Cor. 1), and
dp-accounting's RDP accountant (the moments accountant).
"""

from __future__ import annotations

import mpmath as mp
import pytest

from tests.conftest import at_least_digits, rows_of


def by_method(outcome) -> dict[str, dict]:
    """{method: row} of a JSON answer."""
    return {row["method"]: row for row in rows_of(outcome)}


@at_least_digits(40)
def mp_variance(rule: str, epsilon: float, delta: float) -> mp.mpf:
    """mpmath recipe: sigma^2 per round for the unit-sensitivity Gaussian, L = log(1/delta).
    eq23: (sqrt(L + eps) + sqrt(L))^2 / (2 eps^2), i.e. rho T = (sqrt(L + eps) - sqrt(L))^2 in eq. (23);
    eq28: 2 L / eps^2 + 1 / eps; thm5: eq28 - (2 / eps^2) (log(2 L) + 1 - log eps)."""
    e, big_l = mp.mpf(epsilon), -mp.log(mp.mpf(delta))
    if rule == "eq23":
        return (mp.sqrt(big_l + e) + mp.sqrt(big_l)) ** 2 / (2 * e**2)
    eq28 = 2 * big_l / e**2 + 1 / e
    return eq28 if rule == "eq28" else eq28 - 2 / e**2 * (mp.log(2 * big_l) + 1 - mp.log(e))


@at_least_digits(40)
def mp_delta(epsilon: float, mu: float) -> mp.mpf:
    """mpmath: delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (GDP paper Cor. 1)."""
    e, m = mp.mpf(epsilon), mp.mpf(mu)
    return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)


@at_least_digits(40)
def mp_epsilon(delta: float, mu: float) -> float:
    """mpmath: the eps with delta_mu(eps) = delta (delta_mu decreases in eps), by bisection."""
    low, high = mp.mpf(0), mp.mpf(100)
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if mp_delta(middle, mu) > delta else (low, middle)
    return float(high)


def sgd(*args: str) -> list[str]:
    return ["calibrate", "sgd", "--sampling-rate", "1", *args, "--closed-form", "-f", "json"]


def test_eq23_gives_back_the_papers_sigma_20(gdpcli, reference) -> None:
    """The paper's Fig. 2 set-up: sigma = 20, delta = 1e-5; the moments accountant's epsilon at T = 1000
    (reference: eps_ma_T1000) solved back for the noise by eq. (23) is sigma = 20."""
    target = reference["asoodeh_gaussian_sigma20_delta1e-5"]["eps_T1000"]["eps_ma_T1000"]
    found = by_method(gdpcli(*sgd("--steps", "1000", "--epsilon", repr(target), "--delta", "1e-5")))
    assert found["closed-form-eq23"]["noise_multiplier"] == pytest.approx(20.0, rel=1e-9)


def test_eq23_step_budget_is_the_references(gdpcli, reference) -> None:
    """At epsilon 6 the moments accountant allows 501 steps of sigma = 20 (reference max_steps_eps6/ma):
    eq. (23)'s noise for 501 steps is at most 20, for 502 steps above it."""
    steps = reference["asoodeh_gaussian_sigma20_delta1e-5"]["max_steps_eps6"]["ma"]
    noise = {
        t: by_method(gdpcli(*sgd("--steps", str(t), "--epsilon", "6", "--delta", "1e-5")))["closed-form-eq23"]
        for t in (steps, steps + 1)
    }
    assert noise[steps]["noise_multiplier"] <= 20.0 < noise[steps + 1]["noise_multiplier"]


@pytest.mark.parametrize(("epsilon", "delta", "steps"), [(1.0, 1e-5, 100), (5.0, 1e-5, 100), (0.3, 1e-8, 7)])
def test_closed_forms_are_the_papers_formulas(gdpcli, epsilon: float, delta: float, steps: int) -> None:
    """noise = sqrt(T sigma^2 per round) by the mpmath recipe (mp_variance) for each closed form."""
    found = by_method(gdpcli(*sgd("--steps", str(steps), "--epsilon", str(epsilon), "--delta", str(delta))))
    with mp.workdps(40):
        for rule in ("eq23", "eq28", "thm5"):
            expected = mp.sqrt(steps * mp_variance(rule, epsilon, delta))
            assert found[f"closed-form-{rule}"]["noise_multiplier"] == pytest.approx(
                float(expected), rel=1e-13
            )


@pytest.mark.parametrize(
    ("epsilon", "delta", "steps"), [(0.1, 1e-2, 1), (0.5, 1e-5, 10), (1.0, 1e-5, 100), (8.0, 1e-10, 1000)]
)
def test_proven_closed_forms_meet_the_target_exactly(
    gdpcli, epsilon: float, delta: float, steps: int
) -> None:
    """eq. 23 and 28 are valid: the T-fold Gaussian at their noise is exactly mu-GDP with mu = sqrt(T) / s
    (GDP paper Cor. 2), and mpmath's delta_mu(target epsilon) is at most the target delta; the row's exact
    achieved_epsilon is mpmath's epsilon at that mu."""
    found = by_method(gdpcli(*sgd("--steps", str(steps), "--epsilon", str(epsilon), "--delta", str(delta))))
    with mp.workdps(40):
        for rule in ("eq23", "eq28"):
            row = found[f"closed-form-{rule}"]
            mu = steps**0.5 / row["noise_multiplier"]
            assert mp_delta(epsilon, mu) <= delta
            assert (row["valid"], row["guarantee"]) == (True, "exact")
            assert row["achieved_epsilon"] == pytest.approx(mp_epsilon(delta, mu), rel=1e-9)
            assert row["achieved_epsilon"] <= epsilon


def test_thm5_without_its_o_term_can_fall_short(gdpcli) -> None:
    """epsilon 0.5, delta 1e-2, one step: Thm 5's leading terms give sigma^2 = 7.53 (mp_variance), below
    the exact 9.90 the Gaussian needs: mpmath's delta_mu(0.5) exceeds 1e-2 at that noise. The row says
    valid=false and its exact achieved_epsilon is above the target."""
    found = by_method(gdpcli(*sgd("--steps", "1", "--epsilon", "0.5", "--delta", "1e-2")))
    row = found["closed-form-thm5"]
    with mp.workdps(40):
        assert mp_delta(0.5, 1 / row["noise_multiplier"]) > 1e-2
        assert row["valid"] is False and row["achieved_epsilon"] > 0.5
        assert row["achieved_epsilon"] == pytest.approx(
            mp_epsilon(1e-2, 1 / row["noise_multiplier"]), rel=1e-9
        )


def test_thm5_states_no_noise_where_its_variance_is_not_positive(gdpcli) -> None:
    """epsilon 0.1, delta 1e-2 (inside the theorem's eps > 2 delta log(1/delta) = 0.092): the leading
    terms are negative (mp_variance: -173.6), so there is no thm5 row and a note says why."""
    with mp.workdps(40):
        assert mp_variance("thm5", 0.1, 1e-2) < 0
        outcome = gdpcli(*sgd("--steps", "1", "--epsilon", "0.1", "--delta", "1e-2"))
        assert "closed-form-thm5" not in by_method(outcome)
        assert any(
            "closed-form-thm5 states no noise at epsilon 0.1, delta 0.01" in n
            for n in outcome.json()["notes"]
        )


def test_dp_accounting_moments_accountant_accepts_the_eq23_noise(gdpcli) -> None:
    """dp-accounting's RDP accountant (an independent moments accountant) finds epsilon <= 1 at eq. (23)'s
    noise for 100 steps at delta 1e-5."""
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant

    found = by_method(gdpcli(*sgd("--steps", "100", "--epsilon", "1", "--delta", "1e-5")))
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_accounting.GaussianDpEvent(found["closed-form-eq23"]["noise_multiplier"]), 100)
    assert accountant.get_epsilon(1e-5) <= 1.0


def test_poisson_sampling_uses_abadis_rho_and_is_never_valid(gdpcli) -> None:
    """q = 0.01, 1000 steps: rho = q^2 / ((1 - q) s^2) per step (the paper's Fig. 3 set-up), so
    s = q sqrt(2 T sigma_1^2 / (1 - q)) (mpmath recipe); an approximation (valid=false) whose achieved
    epsilon is gdpcli's rigorous PLD upper bound at that noise."""
    args = ("--sampling-rate", "0.01", "--steps", "1000", "--epsilon", "1", "--delta", "1e-5")
    found = by_method(gdpcli("calibrate", "sgd", *args, "--closed-form", "-f", "json"))
    with mp.workdps(40):
        q = mp.mpf("0.01")
        for rule in ("eq23", "eq28", "thm5"):
            row = found[f"closed-form-{rule}"]
            expected = q * mp.sqrt(2 * 1000 * mp_variance(rule, 1.0, 1e-5) / (1 - q))
            assert row["noise_multiplier"] == pytest.approx(float(expected), rel=1e-13)
            assert (row["valid"], row["guarantee"]) == (False, "upper_bound")
        assert found["pld"]["noise_multiplier"] <= found["closed-form-eq23"]["noise_multiplier"]


def test_calibrate_gaussian_closed_forms_scale_with_the_sensitivity(gdpcli) -> None:
    """calibrate gaussian --closed-form: one step, sigma = sens sqrt(sigma^2 per round) (mpmath recipe),
    each with the (epsilon, delta) it achieves exactly; the analytic sigma is the least of all."""
    outcome = gdpcli(
        "calibrate",
        "gaussian",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
        "--sens",
        "2",
        "--closed-form",
        "-f",
        "json",
    )
    found = by_method(outcome)
    with mp.workdps(40):
        for rule in ("eq23", "eq28", "thm5"):
            row = found[f"closed-form-{rule}"]
            assert row["sigma"] == pytest.approx(float(2 * mp.sqrt(mp_variance(rule, 1.0, 1e-5))), rel=1e-13)
            assert row["achieved_epsilon"] == pytest.approx(mp_epsilon(1e-5, 2 / row["sigma"]), rel=1e-9)
            assert row["valid"] is (rule != "thm5") and row["sigma"] > found["analytic"]["sigma"]
        assert any(note.startswith("closed-form-eq23|eq28|thm5") for note in outcome.json()["notes"])


def test_csv_and_table(gdpcli) -> None:
    csv = gdpcli("calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--closed-form", "-f", "csv")
    assert csv.code == 0 and csv.stdout.splitlines()[0].endswith(",guarantee,method,valid")
    assert sum(",closed-form-" in line for line in csv.stdout.splitlines()) == 3
    table = gdpcli(
        "calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--closed-form", "-f", "table"
    )
    assert table.code == 0 and "closed-form-eq23" in table.stdout


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("gaussian", "--mu", "1"), "--closed-form"),
        (("gaussian", "--max-tpr", "0.05", "--at-fpr", "0.01"), "--closed-form"),
        (("gaussian", "--epsilon", "0", "--delta", "1e-5"), "epsilon 0"),
        (("sgd", "--sampling-rate", "1", "--steps", "10", "--mu", "1"), "--closed-form"),
        (
            ("sgd", "--dataset-size", "100", "--schedule", "x.csv", "--epsilon", "1", "--delta", "1e-5"),
            "--schedule",
        ),
        (
            (
                "sgd",
                "--sampling-rate",
                "0.1",
                "--steps",
                "10",
                "--sampling",
                "fixed",
                "--epsilon",
                "1",
                "--delta",
                "1e-5",
            ),
            "--sampling fixed",
        ),
    ],
)
def test_bad_inputs_exit_2(gdpcli, args: tuple[str, ...], names: str) -> None:
    outcome = gdpcli("calibrate", *args, "--closed-form")
    assert outcome.code == 2
    lines = outcome.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gdpcli: error: ") and names in lines[0]
