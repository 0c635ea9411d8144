"""The Python API on events (gdpcli.account): the CLI's labelled answers, from a training script."""

from __future__ import annotations

import pytest

from gdpcli import account, events
from gdpcli.errors import ComputationError
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
