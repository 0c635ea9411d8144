"""gdpcli.Accountant and gdpcli.get_noise_multiplier: Opacus's interface, answered by certified figures.

Must hold: the accountant stepped through a two-phase schedule returns what `gdpcli sgd --schedule` prints
for it (and independent accountants bracket it); consecutive equal steps are one phase; its state round
trips; its methods are Opacus's (checked without torch, and with opacus where it is installed). The noise
search meets the target by the certified bound without overshooting it, and agrees with `gdpcli calibrate
sgd`.
"""

from __future__ import annotations

import doctest
import inspect
import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from gdpcli import Accountant, get_noise_multiplier
from tests.conftest import rows_of

MNIST_RATE = 256 / 60000
TWO_PHASES = ((1.1, 0.01, 2500), (0.9, 0.02, 1500))
"""(noise_multiplier, sample_rate, steps): 4000 steps in two phases."""


def stepped(phases: tuple[tuple[float, float, int], ...] = TWO_PHASES) -> Accountant:
    """An accountant after one step() call per step of the phases."""
    accountant = Accountant()
    for noise_multiplier, sample_rate, steps in phases:
        for _ in range(steps):
            accountant.step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)
    return accountant


# ---------------------------------------------------------------------------------------------------------
# Accountant
# ---------------------------------------------------------------------------------------------------------


def test_4000_steps_are_two_phases() -> None:
    accountant = stepped()
    assert accountant.history == list(TWO_PHASES)
    assert len(accountant) == 2  # Opacus's len(accountant): the phases of its history
    assert accountant.steps == 4000


def test_two_phases_give_what_sgd_schedule_prints(gdpcli, tmp_path: Path) -> None:
    """The history, written as Opacus's json.dumps(accountant.history), is a schedule `gdpcli sgd` reads:
    its upper bound is the accountant's epsilon to the last digit."""
    accountant = stepped()
    schedule = tmp_path / "history.json"
    schedule.write_text(json.dumps(accountant.history))
    rows = rows_of(gdpcli("sgd", "--schedule", str(schedule), "--delta", "1e-5", "-f", "json"))
    [upper] = [row["epsilon"] for row in rows if row["guarantee"] == "upper_bound"]
    assert accountant.get_epsilon(delta=1e-5) == upper


@pytest.mark.slow
def test_two_phases_are_bracketed_by_independent_accountants() -> None:
    """prv-accountant's interval [lower, upper] contains the certified epsilon, and dp-accounting's
    pessimistic PLD (an upper bound on the truth, at its coarse grid 1e-3) lies above gdpcli's rigorous
    lower bound and at most 0.01 below the certified upper bound."""
    prv = pytest.importorskip("prv_accountant")
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    from gdpcli import account, events

    epsilon = stepped().get_epsilon(delta=1e-5)
    mechanisms = [prv.PoissonSubsampledGaussianMechanism(q, s) for s, q, _ in TWO_PHASES]
    counts = [t for _, _, t in TWO_PHASES]
    prv_accountant = prv.PRVAccountant(
        prvs=mechanisms, max_self_compositions=counts, eps_error=0.05, delta_error=1e-9
    )
    prv_lower, _, prv_upper = prv_accountant.compute_epsilon(1e-5, counts)
    assert prv_lower <= epsilon <= prv_upper
    first, second = (
        pld.from_gaussian_mechanism(s, sampling_prob=q, value_discretization_interval=1e-3).self_compose(t)
        for s, q, t in TWO_PHASES
    )
    pessimistic = first.compose(second).get_epsilon_for_delta(1e-5)
    run = [events.dpsgd(*phase) for phase in TWO_PHASES]
    [lower] = [f.value for f in account.epsilon(run, delta=1e-5) if str(f.guarantee) == "lower_bound"]
    assert lower <= pessimistic <= epsilon + 0.01


@pytest.mark.parametrize("sampling", ["poisson", "fixed"])
def test_one_phase_gives_what_sgd_prints(gdpcli, sampling: str) -> None:
    """Fixed-size batches too (replace-one neighbours, sensitivity 2C): the plain command's upper bound."""
    accountant = Accountant(sampling=sampling)
    accountant.history = [(2.0, 0.01, 300)]
    query = ("--sampling-rate", "0.01", "--steps", "300", "--noise-multiplier", "2", "--sampling", sampling)
    rows = rows_of(gdpcli("sgd", *query, "--delta", "1e-5", "-f", "json"))
    [upper] = [row["epsilon"] for row in rows if row["guarantee"] == "upper_bound"]
    assert accountant.get_epsilon(delta=1e-5) == upper


def test_no_step_spends_nothing() -> None:
    assert Accountant().get_epsilon(delta=1e-5) == 0.0


def test_full_batch_steps_are_exactly_gdp() -> None:
    """At sample rate 1, T steps of noise multiplier s are exactly (sqrt(T) / s)-GDP (GDP paper Cor. 2):
    epsilon at delta from Cor. 1 (gdpcli.gdp, itself checked against mpmath in tests/core)."""
    from gdpcli import gdp

    exact = gdp.epsilon(1e-5, math.sqrt(16) / 2.0)
    assert stepped(((2.0, 1.0, 16),)).get_epsilon(delta=1e-5) == pytest.approx(exact, rel=1e-12)


def test_state_dict_round_trips() -> None:
    accountant = stepped(((1.1, 0.01, 30), (0.9, 0.02, 20)))
    state = accountant.state_dict()
    assert state["mechanism"] == Accountant.mechanism() == "gdpcli"
    restored = Accountant()
    restored.load_state_dict(json.loads(json.dumps(state)))  # through JSON, as a checkpoint may go
    assert restored.history == accountant.history
    restored.step(noise_multiplier=0.9, sample_rate=0.02)  # a restored phase goes on
    assert restored.history[-1] == (0.9, 0.02, 21)
    assert accountant.history[-1] == (0.9, 0.02, 20)  # the state was a copy


@pytest.mark.parametrize(
    "state, named",
    [
        ({}, "empty"),
        ({"mechanism": "gdpcli"}, "history"),
        ({"history": []}, "mechanism"),
        ({"history": [], "mechanism": "rdp"}, "'rdp'"),
        ({"history": [], "mechanism": "gdpcli", "sampling": "fixed"}, "'fixed'"),
        ({"history": [(1.1, 0.01)], "mechanism": "gdpcli"}, "history"),
        ({"history": [(1.1, 1.5, 3)], "mechanism": "gdpcli"}, "sample_rate"),
    ],
)
def test_bad_states_are_refused_by_name(state: dict, named: str) -> None:
    with pytest.raises(ValueError, match=re.escape(named)):
        Accountant().load_state_dict(state)


@pytest.mark.parametrize(
    "noise_multiplier, sample_rate, named",
    [(0.0, 0.01, "noise_multiplier"), (math.nan, 0.01, "noise_multiplier"), (1.0, 0.0, "sample_rate")],
)
def test_bad_steps_are_refused_by_name(noise_multiplier: float, sample_rate: float, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        Accountant().step(noise_multiplier=noise_multiplier, sample_rate=sample_rate)


def test_bad_delta_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="delta"):
        stepped(((1.0, 0.01, 1),)).get_epsilon(delta=0.0)


KEYWORD, EITHER = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD
OPACUS_METHODS = {
    # Opacus's IAccountant, the base class of its accountants: name -> parameters after self / cls
    "step": [("noise_multiplier", KEYWORD), ("sample_rate", KEYWORD)],
    "get_epsilon": [("delta", EITHER)],
    "__len__": [],
    "mechanism": [],
    "get_optimizer_hook_fn": [("sample_rate", EITHER)],
    "state_dict": [("destination", EITHER)],
    "load_state_dict": [("state_dict", EITHER)],
}


@pytest.mark.parametrize("name", OPACUS_METHODS)
def test_methods_take_what_opacus_passes(name: str) -> None:
    """Each method takes Opacus's parameters, in their kinds (any further ones have defaults)."""
    accountant = Accountant()  # Opacus's create_accountant calls the class without arguments
    parameters = list(inspect.signature(getattr(accountant, name)).parameters.values())
    expected = OPACUS_METHODS[name]
    assert [(p.name, p.kind) for p in parameters[: len(expected)]] == expected
    assert all(p.default is not inspect.Parameter.empty for p in parameters[len(expected) :])


def test_mechanism_is_a_classmethod_and_history_a_list_opacus_may_set() -> None:
    assert Accountant.mechanism() == "gdpcli"
    accountant = Accountant()
    accountant.history = [(1.0, 1.0, 4)]  # Opacus's get_noise_multiplier sets the history directly
    assert accountant.get_epsilon(1e-5) == stepped(((1.0, 1.0, 4),)).get_epsilon(1e-5)


def test_optimizer_hook_steps_at_the_optimizers_noise_and_accumulated_rate() -> None:
    """Opacus's DPOptimizer calls the hook after each step; with gradient accumulation over k
    iterations a step samples at k times the rate."""
    accountant = Accountant()
    hook = accountant.get_optimizer_hook_fn(sample_rate=0.01)
    for _ in range(3):
        hook(SimpleNamespace(noise_multiplier=1.1, accumulated_iterations=1))
    hook(SimpleNamespace(noise_multiplier=1.1, accumulated_iterations=4))
    assert accountant.history == [(1.1, 0.01, 3), (1.1, 0.04, 1)]


def test_registers_with_opacus(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where opacus is installed: the accountant registers, Opacus creates it by name, and Opacus's own noise
    search runs on it (its registry is restored afterwards)."""
    accountants = pytest.importorskip("opacus.accountants")
    registry = pytest.importorskip("opacus.accountants.registry")
    utils = pytest.importorskip("opacus.accountants.utils")
    monkeypatch.setattr(registry, "_ACCOUNTANTS", dict(registry._ACCOUNTANTS))
    accountants.register_accountant("gdpcli", Accountant)
    assert isinstance(accountants.create_accountant("gdpcli"), Accountant)
    noise = utils.get_noise_multiplier(
        target_epsilon=0.5, target_delta=1e-5, sample_rate=0.01, steps=1000, accountant="gdpcli"
    )
    assert 0.49 <= certified_at(noise, 0.01, 1000, 1e-5) <= 0.5


# ---------------------------------------------------------------------------------------------------------
# get_noise_multiplier
# ---------------------------------------------------------------------------------------------------------


def certified_at(noise: float, sample_rate: float, steps: int, delta: float) -> float:
    """The certified epsilon of the run at this noise (the accountant's figure)."""
    accountant = Accountant()
    accountant.history = [(noise, sample_rate, steps)]
    return accountant.get_epsilon(delta)


@pytest.fixture(scope="module")
def mnist_noise() -> float:
    return get_noise_multiplier(target_epsilon=3.0, target_delta=1e-5, sample_rate=MNIST_RATE, epochs=60)


def test_mnist_noise_meets_the_target_without_overshoot(mnist_noise: float) -> None:
    """60 epochs at q = 256/60000 are ceil(60 / q) = 14063 steps (60000 x 60 / 256 = 14062.5); at the noise
    found the certified epsilon is <= 3 and >= 0.99 x 3, and 0.1 % less noise misses the target."""
    assert 0.99 * 3.0 <= certified_at(mnist_noise, MNIST_RATE, 14063, 1e-5) <= 3.0
    assert certified_at(mnist_noise / 1.001, MNIST_RATE, 14063, 1e-5) > 3.0


def test_mnist_noise_is_what_calibrate_sgd_prints(gdpcli, mnist_noise: float) -> None:
    outcome = gdpcli(
        "calibrate", "sgd", "--dataset-size", "60000", "--batch-size", "256", "--epochs", "60",
        "--epsilon", "3", "--delta", "1e-5", "-f", "json",
    )  # fmt: skip
    [row] = rows_of(outcome)
    assert row["steps"] == 14063
    assert row["noise_multiplier"] == mnist_noise


@pytest.mark.parametrize(
    "target_epsilon, target_delta, sample_rate, steps",
    [
        (0.5, 1e-5, 0.01, 1000),  # the steps= form, a small epsilon
        (8.0, 1e-5, 0.05, 300),  # a large epsilon at a large rate
        pytest.param(1.0, 1e-6, 1e-4, 1_000_000, marks=pytest.mark.slow),  # a tiny rate, a long run
    ],
)
def test_noise_meets_the_target_within_one_percent(
    target_epsilon: float, target_delta: float, sample_rate: float, steps: int
) -> None:
    noise = get_noise_multiplier(
        target_epsilon=target_epsilon, target_delta=target_delta, sample_rate=sample_rate, steps=steps
    )
    achieved = certified_at(noise, sample_rate, steps, target_delta)
    assert 0.99 * target_epsilon <= achieved <= target_epsilon


@pytest.mark.slow
def test_tiny_rate_in_epochs_meets_the_target_as_calibrate_sgd_does(gdpcli) -> None:
    """10 epochs at q = 1e-4 are 100000 steps; the certified epsilon at the noise found is within 1 % below
    the target, and the command finds the same noise."""
    noise = get_noise_multiplier(target_epsilon=0.1, target_delta=1e-6, sample_rate=1e-4, epochs=10)
    assert 0.99 * 0.1 <= certified_at(noise, 1e-4, 100_000, 1e-6) <= 0.1
    query = ("--sampling-rate", "1e-4", "--epochs", "10", "--epsilon", "0.1", "--delta", "1e-6", "-f", "json")
    [row] = rows_of(gdpcli("calibrate", "sgd", *query))
    assert (row["steps"], row["noise_multiplier"]) == (100_000, noise)


def test_a_jump_across_the_target_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the search's noise leaves the certified epsilon further below the target than
    epsilon_tolerance (the figure jumps within the search's tolerance), the noise comes with a warning; the
    search is stood in for by one that finds such a jump."""
    from gdpcli import training

    def jumping(epsilon: float, *_: object) -> dict:
        return {"noise_multiplier": 0.82, "achieved_epsilon": 0.42 * epsilon}

    monkeypatch.setattr(training.calibration, "sgd_epsilon_row", jumping)
    with pytest.warns(UserWarning, match="epsilon_tolerance"):
        noise = get_noise_multiplier(target_epsilon=1.0, target_delta=1e-8, sample_rate=1e-4, steps=200_000)
    assert noise == 0.82


@pytest.mark.parametrize(
    "changes, named",
    [
        ({"target_epsilon": 0.0}, "target_epsilon"),
        ({"target_epsilon": math.inf}, "target_epsilon"),
        ({"target_delta": 1.0}, "target_delta"),
        ({"sample_rate": 1.5}, "sample_rate"),
        ({"steps": 100}, "exactly one of epochs and steps"),
        ({"epochs": None}, "exactly one of epochs and steps"),
        ({"epochs": -1.0}, "epochs"),
        ({"epochs": None, "steps": 2.5}, "steps"),
        ({"epochs": None, "steps": 10**15}, "steps"),
        ({"accountant": "rdp"}, "accountant"),
        ({"sampling": "shuffle"}, "sampling"),
        ({"epsilon_tolerance": 0.0}, "epsilon_tolerance"),
    ],
)
def test_bad_targets_are_refused_by_parameter_name(changes: dict, named: str) -> None:
    arguments = {"target_epsilon": 3.0, "target_delta": 1e-5, "sample_rate": 0.01, "epochs": 10.0} | changes
    with pytest.raises(ValueError, match=named) as raised:
        get_noise_multiplier(**arguments)
    assert "--" not in str(raised.value)  # a parameter, not a command-line flag


# ---------------------------------------------------------------------------------------------------------
# The examples in the module and in the README's section on training scripts run as written
# ---------------------------------------------------------------------------------------------------------


def test_module_examples_run() -> None:
    from gdpcli import training

    assert doctest.testmod(training, optionflags=doctest.ELLIPSIS).failed == 0


def test_readme_training_section_runs() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    section = readme.split("### From a training script", 1)[1].split("\n#", 1)[0]
    examples = "\n".join(re.findall(r"```pycon\n(.*?)```", section, flags=re.S))
    test = doctest.DocTestParser().get_doctest(examples, {}, "README: From a training script", "README.md", 0)
    assert test.examples, "the section has no examples"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
