"""The Python API on events (gdpcli.account): the CLI's labelled answers, from a training script."""

from __future__ import annotations

import mpmath as mp
import pytest

from gdpcli import account, events
from gdpcli.errors import ComputationError, InputError
from tests.conftest import REFERENCE, safe_side_of

MNIST = REFERENCE["dp_sgd_mnist"]


def test_dpsgd_run_is_bracketed_by_an_independent_accountant() -> None:
    """The README's example: Poisson DP-SGD on MNIST; prv-accountant's interval is in the reference."""
    run = events.dpsgd(MNIST["sigma"], MNIST["batch"] / MNIST["n"], MNIST["steps"])
    figures = {str(f.guarantee): f for f in account.epsilon(run, delta=MNIST["delta"])}
    assert set(figures) == {"upper_bound", "lower_bound"}
    assert MNIST["prv_poisson_lower"] <= figures["lower_bound"].value <= figures["upper_bound"].value
    assert figures["upper_bound"].value <= MNIST["prv_poisson_upper"]
    assert account.certified_epsilon(run, MNIST["delta"]) == figures["upper_bound"].value


def test_dpsgd_sensitivity_follows_the_neighbouring_relation() -> None:
    """Full batch, sigma 2, one step: replace-one (fixed) is 1-GDP, add/remove (Poisson) 0.5-GDP."""
    fixed = account.epsilon(events.dpsgd(2.0, 1.0, 1, "fixed"), delta=1e-5)
    assert [(str(f.guarantee), f.method) for f in fixed] == [("exact", "gdp")]
    assert safe_side_of("4.3771780956812246086", fixed[0].value, "above", 1e-13)
    assert [f.value for f in account.mu(events.dpsgd(2.0, 1.0, 1, "poisson"))] == [0.5]


def test_lists_compose_and_specs_parse() -> None:
    composed = [events.parse("gdp:mu=0.6"), events.GDP(0.8)]
    assert [(f.value, str(f.guarantee)) for f in account.mu(composed)] == [(1.0, "exact")]
    beta = account.beta(composed, alpha=0.5)
    assert len(beta) == 1 and 0.0 < beta[0].value < 0.5


def test_approximations_certify_nothing() -> None:
    run = events.dpsgd(1.1, 0.01, 1000, "fixed")
    assert all(str(f.guarantee) == "approximation" for f in account.epsilon(run, 1e-5, method="clt"))
    with pytest.raises(ComputationError, match="no rigorous upper bound"):
        account.certified_epsilon(run, 1e-5, method="clt")


def test_readme_python_example() -> None:
    """The README's Python API block, run: the figures it quotes (independent checks are above)."""
    step = events.Sampled(events.Laplace(0.5), 0.01, events.Sampling.FIXED)
    figures = account.delta([events.Repeated(step, 200), events.parse("gdp:mu=0.3")], epsilon=1.0)
    lower = next(f.value for f in figures if str(f.guarantee) == "lower_bound")
    upper = next(f.value for f in figures if str(f.guarantee) == "upper_bound")
    assert lower <= 8.16e-5 <= upper * 1.001
    rdp = account.epsilon(events.dpsgd(1.1, 256 / 60000, 14063), delta=1e-5, method="rdp")
    assert [str(f.guarantee) for f in rdp] == ["upper_bound"]
    assert rdp[0].value == pytest.approx(MNIST["rdp_poisson"], rel=1e-4)


SCHEME_RUNS = [
    ("poisson", {}),
    ("fixed", {}),
    ("shuffle", {}),
    ("balls-in-bins", {}),
    ("truncated-poisson", {"dataset_size": 6000, "max_batch_size": 70}),
]


@pytest.mark.parametrize(("sampling", "extra"), SCHEME_RUNS)
def test_library_and_cli_give_the_same_figures_for_every_batch_scheme(gdpcli, sampling, extra) -> None:
    """6000 examples, batches of 60, sigma 1.1, 200 steps under each batch scheme: `gdpcli sgd` and
    account.epsilon(events.dpsgd(..., sampling=...)) print the same figures, labels and methods."""
    run = events.dpsgd(1.1, 60 / 6000, 200, sampling, **extra)
    options = ["--dataset-size", "6000", "--batch-size", "60", "--noise-multiplier", "1.1", "--steps", "200"]
    if "max_batch_size" in extra:
        options += ["--max-batch-size", "70"]
    outcome = gdpcli("sgd", *options, "--sampling", sampling, "--delta", "1e-5", "-f", "json")
    assert outcome.code == 0, outcome.stderr
    cli = [(row["epsilon"], row["guarantee"], row["method"]) for row in outcome.json()["rows"]]
    library = [(f.value, str(f.guarantee), f.method) for f in account.epsilon(run, delta=1e-5)]
    assert library == cli


def test_group_of_records_is_the_gaussian_at_k_times_the_sensitivity() -> None:
    """Full batch, sigma 2, one Poisson step (sensitivity C) for groups of 2 records: the Gaussian at
    sensitivity 2C, exactly 1-GDP (GDP paper Thm 3)."""
    [figure] = account.epsilon(events.dpsgd(2.0, 1.0, 1, group=2), delta=1e-5)
    assert (str(figure.guarantee), figure.at) == ("exact", 1e-5)
    assert safe_side_of("4.3771780956812246086", figure.value, "above", 1e-13)


def _gdp_epsilon(mu: float, delta: float) -> mp.mpf:
    """epsilon of mu-GDP at delta (GDP paper Cor. 1: delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),
    decreasing in eps), by bisection at 40 digits."""
    with mp.workdps(40):
        low, high = mp.mpf(0), mp.mpf(20)
        for _ in range(200):
            eps = (low + high) / 2
            profile = mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)
            low, high = (eps, high) if profile > delta else (low, eps)
        return (low + high) / 2


def test_lists_of_deltas_answer_each_delta() -> None:
    """Four full-batch Poisson steps at sigma 2 are exactly 1-GDP: each delta of the list gets its own
    closed-form epsilon, in the order asked, and the same as asked alone."""
    run = events.dpsgd(2.0, 1.0, 4)
    deltas = [1e-5, 1e-3]
    figures = account.epsilon(run, delta=deltas)
    assert [f.at for f in figures] == deltas
    for figure, delta in zip(figures, deltas, strict=True):
        assert figure.value == pytest.approx(float(_gdp_epsilon(1.0, delta)), rel=1e-10)
        assert [f.value for f in account.epsilon(run, delta=delta)] == [figure.value]


def test_a_whole_run_scheme_is_accounted_alone() -> None:
    """A shuffled run is no composition of sampled steps: alone it has its bounds (certified: the upper
    one); inside a list it is refused, saying why."""
    run = events.dpsgd(1.1, 0.01, 200, "shuffle")
    assert isinstance(run, events.Run)
    upper = account.certified_epsilon(run, 1e-5)
    assert [str(f.guarantee) for f in account.epsilon(run, 1e-5)][:2] == ["upper_bound", "lower_bound"]
    with pytest.raises(ComputationError, match="not a composition of independently sampled steps"):
        account.epsilon([run, events.GDP(1.0)], 1e-5)
    # its trade-off function from the scheme's pairs: the GDP upper bound's beta is a lower bound
    beta = {str(f.guarantee): f.value for f in account.beta(run, alpha=0.1)}
    assert beta["lower_bound"] <= beta["upper_bound"] and upper > 0


def test_schedules_read_as_the_command_line_reads_them(gdpcli, tmp_path) -> None:
    """A two-phase CSV schedule composes to the figures `gdpcli sgd --schedule` prints."""
    text = "steps,sampling_rate,noise_multiplier\n100,0.01,1\n200,0.01,2\n"
    path = tmp_path / "phases.csv"
    path.write_text(text)
    phases = account.schedule(text)
    assert [(p.steps, p.noise_multiplier) for p in phases] == [(100, 1.0), (200, 2.0)]
    library = [(f.value, str(f.guarantee)) for f in account.epsilon(phases, delta=1e-5)]
    outcome = gdpcli("sgd", "--schedule", str(path), "--delta", "1e-5", "-f", "json")
    assert library == [(row["epsilon"], row["guarantee"]) for row in outcome.json()["rows"]]


def test_errors_name_the_parameter_and_the_command_line_its_option(gdpcli) -> None:
    """Below the command line an error names the parameter (noise_multiplier); the CLI prints the option
    that sets it (--noise-multiplier), in the same words otherwise."""
    with pytest.raises(InputError) as raised:
        events.dpsgd(0.0, 0.01, 10)
    assert str(raised.value) == "noise_multiplier: must be a positive finite number, got 0.0"
    with pytest.raises(InputError, match=r"^sampling truncated-poisson needs dataset_size$"):
        account.epsilon(events.dpsgd(1.0, 0.01, 10, "truncated-poisson"), 1e-5)
    run = "sgd --sampling-rate 0.01 --noise-multiplier 1 --steps 10 --delta 1e-5 --sampling truncated-poisson"
    outcome = gdpcli(*run.split())
    assert (outcome.code, outcome.stderr) == (
        2,
        "gdpcli: error: --sampling truncated-poisson needs --dataset-size\n",
    )
