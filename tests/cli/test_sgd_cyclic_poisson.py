"""`gdpcli sgd --sampling cyclic-poisson --bands B`: the data split into B parts, step t Poisson-samples part
t mod B at the rate p within it.

Against dp-accounting's event for the run as jax_privacy builds it (`amplified_bandmf_event` with the
identity strategy: SelfComposedDpEvent(PoissonSampledDpEvent(p, GaussianDpEvent(sigma)), ceil(T / B))),
composed in the test by dp-accounting's PLD and RDP accountants; the counting of steps per example and
the rate's convention; the command's errors.
"""

from __future__ import annotations

import math

import dp_accounting as dpa
import pytest

from gdpcli.accounting import dpsgd
from gdpcli.accounting.cyclic_poisson import participations
from gdpcli.events import Run, Sampling
from tests.conftest import one_line_error, rows_of

MNIST = ("sgd", "--dataset-size", "60000", "--batch-size", "256", "--noise-multiplier", "1.1")


def jax_privacy_event(sigma: float, steps: int, bands: int, p: float) -> dpa.DpEvent:
    """jax_privacy.accounting.amplified_bandmf_event(sigma, steps, num_bands=bands, sampling_prob=p)."""
    rounds = math.ceil(steps / bands)
    return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(p, dpa.GaussianDpEvent(sigma)), rounds)


# (p, sigma, T, b): b divides T; T mod b = 1 (one part gets the ceiling, 101 steps, the others 100)
SETTINGS = [(0.05, 1.0, 400, 4, 1e-5), (0.1, 2.0, 1001, 10, 1e-6)]


@pytest.mark.parametrize(("p", "sigma", "steps", "bands", "delta"), SETTINGS)
def test_pld_bounds_bracket_dp_accounting(p, sigma, steps, bands, delta) -> None:
    """gdpcli's rigorous PLD bounds bracket dp-accounting's PLD figure for jax_privacy's event, which is
    itself computed on a grid of 1e-4 (its pessimistic estimate: within 1e-3 relative of the truth here)."""
    run = Run(p, steps, sigma, Sampling.CYCLIC_POISSON, bands=bands)
    upper, lower = dpsgd.figures(run, delta, "pld")
    theirs = dpa.pld.PLDAccountant().compose(jax_privacy_event(sigma, steps, bands, p)).get_epsilon(delta)
    assert (upper.guarantee, lower.guarantee) == ("upper_bound", "lower_bound")
    assert lower.values[0] * (1 - 1e-3) <= theirs <= upper.values[0] * (1 + 1e-3)


@pytest.mark.parametrize(("p", "sigma", "steps", "bands", "delta"), SETTINGS)
def test_rdp_is_dp_accountings(p, sigma, steps, bands, delta) -> None:
    """The RDP row for the same event: the same orders' RDP composed; gdpcli's optimal conversion is at
    most dp-accounting's (Asoodeh et al.'s conversion is the tightest of those dp-accounting also uses)."""
    run = Run(p, steps, sigma, Sampling.CYCLIC_POISSON, bands=bands)
    [rdp] = dpsgd.figures(run, delta, "rdp")
    theirs = dpa.rdp.RdpAccountant().compose(jax_privacy_event(sigma, steps, bands, p)).get_epsilon(delta)
    pld_upper = dpsgd.figures(run, delta, "pld")[0].values[0]
    assert rdp.guarantee == "upper_bound"
    assert pld_upper <= rdp.values[0] <= theirs * (1 + 1e-3)


@pytest.mark.parametrize(
    ("steps", "bands", "most"), [(10, 4, 3), (12, 4, 3), (13, 4, 4), (3, 5, 1), (7, 1, 7)]
)
def test_an_example_is_in_at_most_ceil_t_over_b_steps(steps, bands, most) -> None:
    """Part j is sampled at steps j, j + b, ...: the parts j < T mod b get ceil(T / b), counted here by
    enumerating the steps."""
    counts = [sum(1 for t in range(steps) if t % bands == j) for j in range(bands)]
    assert max(counts) == most == participations(steps, bands)


def test_one_band_is_poisson(gdpcli) -> None:
    """b = 1: one part, every step samples all the data: the Poisson run's figures, to the last digit."""
    query = (*MNIST, "--epochs", "1", "--delta", "1e-5", "-f", "json")
    cyclic = rows_of(gdpcli(*query, "--sampling", "cyclic-poisson", "--bands", "1"))
    plain = rows_of(gdpcli(*query))
    assert [row["epsilon"] for row in cyclic] == [row["epsilon"] for row in plain]
    assert cyclic[0]["bands"] == 1 and cyclic[0]["steps_per_example"] == 235


def test_the_rate_is_within_the_active_part(gdpcli) -> None:
    """--batch-size is the expected batch: p = b B / N; 60 epochs are T = ceil(60 N / B) steps, as for
    Poisson; --sampling-rate p gives the same run (T = ceil(E b / p))."""
    query = ("--noise-multiplier", "1.1", "--epochs", "2", "--delta", "1e-5", "-f", "json")
    cyclic = ("--sampling", "cyclic-poisson", "--bands", "4")
    by_batch = rows_of(gdpcli("sgd", "--dataset-size", "60000", "--batch-size", "300", *query, *cyclic))
    by_rate = rows_of(gdpcli("sgd", "--sampling-rate", "0.02", *query, *cyclic))
    assert by_batch[0]["sampling_rate"] == pytest.approx(4 * 300 / 60000, rel=1e-15)
    assert by_batch[0]["steps"] == 400 == by_rate[0]["steps"]
    assert by_batch[0]["steps_per_example"] == 100
    assert by_batch[0]["epochs"] == pytest.approx(2.0, rel=1e-12)
    assert by_batch[0]["epsilon"] == by_rate[0]["epsilon"]


def test_cli_and_library_agree(gdpcli) -> None:
    """`gdpcli sgd` prints the figures of accounting.dpsgd.figures for the same run."""
    options = ("--sampling-rate", "0.05", "--noise-multiplier", "1", "--steps", "400", "--delta", "1e-5")
    rows = rows_of(gdpcli("sgd", *options, "--sampling", "cyclic-poisson", "--bands", "4", "-f", "json"))
    run = Run(0.05, 400, 1.0, Sampling.CYCLIC_POISSON, bands=4)
    assert [row["epsilon"] for row in rows] == [f.values[0] for f in dpsgd.figures(run, 1e-5, "auto")]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--sampling", "cyclic-poisson"), "needs --bands"),
        (("--sampling", "cyclic-poisson", "--bands", "0"), "--bands: must be a whole number >= 1"),
        (("--bands", "4"), "--bands splits the data of the cyclic-poisson scheme"),
        (("--sampling", "cyclic-poisson", "--bands", "300"), "--bands 300 x --batch-size 256 exceeds"),
    ],
)
def test_bad_input_is_one_line_exit_2(gdpcli, extra, message) -> None:
    one_line_error(gdpcli(*MNIST, "--epochs", "1", "--delta", "1e-5", *extra), 2, message)


def test_runs_need_whole_cycles(gdpcli) -> None:
    """K runs of T steps give each example K ceil(T / b) steps, more than ceil(K T / b) unless b divides T."""
    query = ("sgd", "--sampling-rate", "0.05", "--noise-multiplier", "1", "--delta", "1e-5")
    cyclic = ("--sampling", "cyclic-poisson", "--bands", "4", "--runs", "3", "-f", "json")
    refused = gdpcli(*query, "--steps", "401", *cyclic)
    assert refused.code == 2 and "whole cycles" in refused.stderr
    [upper, _] = rows_of(gdpcli(*query, "--steps", "400", *cyclic))
    assert upper["steps"] == 1200 and upper["steps_per_example"] == 300


@pytest.mark.slow
def test_plot_draws_the_worst_examples_run(gdpcli, tmp_path) -> None:
    """--plot draws the trade-off curve of the run it accounts: the worst example's Poisson steps. Slow:
    matplotlib's import."""
    path = tmp_path / "curve.svg"
    query = ("sgd", "--sampling-rate", "0.5", "--noise-multiplier", "1", "--steps", "4", "--delta", "1e-5")
    outcome = gdpcli(*query, "--sampling", "cyclic-poisson", "--bands", "2", "--plot", str(path), "-f", "csv")
    assert outcome.code == 0, outcome.stderr
    assert path.read_text().lstrip().startswith("<?xml")
