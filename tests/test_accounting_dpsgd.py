"""gdpcli.accounting.dpsgd: schedules, figures by method and step budgets (oracles and closed forms)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gdpcli.accounting import dpsgd
from gdpcli.accounting.run import RunLength, schedule
from gdpcli.accounting.schemes import STEPS
from gdpcli.errors import ComputationError, InputError
from gdpcli.events import Sampling
from tests.conftest import REFERENCE

MNIST = REFERENCE["dp_sgd_mnist"]


def test_schedule_counts_steps_as_ceil() -> None:
    q, steps, epochs = schedule(RunLength(60000, 256, epochs=60))
    assert (q, steps) == (256 / 60000, MNIST["steps"])  # ceil(60 * 60000 / 256) = ceil(14062.5)
    assert epochs == pytest.approx(14063 * 256 / 60000, rel=1e-15)


def test_schedule_uses_the_decimal_typed() -> None:
    # 0.1 epochs of 2560 examples in batches of 256 is exactly one step (float 0.1 * 10 would round up to 2)
    assert schedule(RunLength(2560, 256, epochs=0.1))[1] == 1
    assert schedule(RunLength(sampling_rate=0.01, epochs=3))[1] == 300


@pytest.mark.parametrize(
    "arguments",
    [
        (100, 256, None, 1, None),  # batch > N
        (60000, 256, None, None, None),  # neither epochs nor steps
        (60000, 256, None, 1, 10),  # both
        (60000, None, None, 1, None),  # no batch
        (60000, 256, 0.1, 1, None),  # rate and sizes
        (None, None, 1.5, 1, None),  # rate > 1
        (60000, 256, None, math.inf, None),
        (60000, 256, None, -1, None),
        (60000, 256, None, None, 0),
    ],
)
def test_schedule_rejects(arguments: tuple) -> None:
    with pytest.raises(InputError):
        schedule(RunLength(*arguments))


@pytest.mark.parametrize(("sampling", "sensitivity"), [("poisson", None), ("fixed", 1.0)])
def test_sampling_rate_one_is_exact_gdp(sampling: str, sensitivity: float | None) -> None:
    # q = 1: the plain Gaussian, exactly sqrt(T) sens/sigma-GDP; sens/sigma = 1/20, T = 1000
    run = dpsgd.Run(1.0, 1000, 20.0, sampling, sensitivity)
    (figure,) = dpsgd.figures(run, 1e-5, "exact")
    assert (figure.guarantee, figure.method) == ("exact", "gdp")
    # exact GDP at T = 1000, s = 20, delta 1e-5 is 7.5112759
    assert float(figure.values[0]) == pytest.approx(7.5112759, abs=1e-7)


def test_replace_one_sensitivity_is_two_clipping_norms() -> None:
    """The noise multiplier is std / C, so replace-one neighbours (fixed-size batches) have
    sensitivity 2C and one full-batch step at sigma 2 is 1-GDP: epsilon 4.377178 at 1e-5 (values.json,
    gdp_epsilon_of_delta at mu = 1), not the 1.993 of a 0.5-GDP step."""
    run = dpsgd.Run(1.0, 1, 2.0, "fixed")
    assert (run.neighbouring, run.step_sensitivity, run.step_mu) == ("replace-one", 2.0, 1.0)
    (figure,) = dpsgd.figures(run, 1e-5, "exact")
    expected = {(row["mu"], row["delta"]): float(row["epsilon"]) for row in REFERENCE["gdp_epsilon_of_delta"]}
    assert float(figure.values[0]) == pytest.approx(expected[(1, 1e-05)], rel=1e-14)
    half = dpsgd.Run(1.0, 1, 2.0, "poisson")  # add/remove: sensitivity C, a 0.5-GDP step
    assert half.step_mu == 0.5
    (figure,) = dpsgd.figures(half, 1e-5, "exact")
    assert float(figure.values[0]) == pytest.approx(expected[(0.5, 1e-05)], rel=1e-14)


def test_unavailable_methods_are_refused() -> None:
    with pytest.raises(ComputationError, match="symmetric"):
        dpsgd.figures(dpsgd.Run(0.01, 100, 1.0, "poisson"), 1e-5, "berry-esseen")
    with pytest.raises(ComputationError, match="Poisson"):
        dpsgd.figures(dpsgd.Run(0.01, 100, 1.0, "fixed"), 1e-5, "rdp")


def test_every_scheme_has_one_accounting_entry() -> None:
    """A scheme sampling each step on its own has its StepAnalysis, every other its SchemeBounds or its
    SchemeReduction, to a scheme of another entry."""
    for scheme in Sampling:
        entries = [scheme in STEPS, scheme in dpsgd.BOUNDS, scheme in dpsgd.REDUCTIONS]
        assert entries.count(True) == 1 and entries[0] is scheme.per_step, scheme
    for reduction in dpsgd.REDUCTIONS.values():
        assert reduction.reduced(dpsgd.Run(0.1, 10, 1.0, reduction.sampling, bands=2)).sampling in STEPS


def test_a_reduced_scheme_is_planned_as_its_reduced_run() -> None:
    """cyclic-poisson with b = 4 parts: the worst example's ceil(10 / 4) = 3 Poisson steps."""
    run = dpsgd.Run(0.1, 10, 1.0, "cyclic-poisson", bands=4)
    assert dpsgd.accounted(run) == dpsgd.Run(0.1, 3, 1.0, "poisson", sensitivity=1.0)


@pytest.mark.parametrize(
    "run",
    [
        dpsgd.Run(0.01, 100, 1.0, "poisson"),
        dpsgd.Run(0.01, 100, 1.0, "fixed"),
        dpsgd.Run(1.0, 10, 3.0, "fixed", group=2),
        dpsgd.Run(0.01, 100, 1.0, "shuffle"),
        dpsgd.Run(0.01, 100, 1.0, "cyclic-poisson", bands=4),
    ],
)
def test_tradeoff_plan_refuses_what_the_plan_refuses(run: dpsgd.Run) -> None:
    """risk's accountants of a run come from sgd's plan: the same methods, each refused for sgd's reason."""
    planned, traded = dpsgd.plan(run, "all"), dpsgd.tradeoff_plan(run, "all", accuracy=1e-2)
    assert [name for name, _ in traded] == [name for name, _ in planned]
    for (_, found), (_, answer) in zip(planned, traded, strict=True):
        if isinstance(found, ComputationError):
            assert isinstance(answer, ComputationError) and answer.text == found.text


def test_a_cyclic_run_has_the_rdp_of_its_reduced_run_in_risk_as_in_sgd() -> None:
    run = dpsgd.Run(0.05, 40, 1.0, "cyclic-poisson", bands=4)
    [(_, accountant)] = dpsgd.tradeoff_plan(run, "rdp")
    [sgd] = dpsgd.figures(run, 1e-5, "rdp")
    assert accountant.epsilon(np.asarray([1e-5]))[0].values == pytest.approx(sgd.values, rel=1e-12)


def _certified_epsilon(run: dpsgd.Run, delta: float, method: dpsgd.Method | None = None) -> float:
    return float(dpsgd.certified(run, delta, method or dpsgd.Method()).values[0])


def test_certified_epsilon_orders() -> None:
    run = dpsgd.Run(0.01, 1000, 1.0, "poisson")
    exact = _certified_epsilon(run, 1e-5)
    rdp = _certified_epsilon(run, 1e-5, dpsgd.Method("rdp"))
    classic = _certified_epsilon(run, 1e-5, dpsgd.Method("rdp", conversion="classic"))
    assert 0 < exact <= rdp <= classic


def test_budget_of_plain_gaussian_is_exact() -> None:
    # s = 20, delta 1e-5, epsilon 6: exact GDP allows 685 steps
    budget = dpsgd.largest_steps(dpsgd.Run(1.0, 1, 20.0), 1e-5, 6.0)
    assert (budget.steps, budget.guarantee, budget.next_step_exceeds) == (685, "exact", True)


def test_budget_of_clt_matches_closed_form() -> None:
    # mu = q sqrt(T (e^{1/s^2} - 1)) is increasing in T: the largest T with gdp eps(mu) <= 3
    from gdpcli.core import gdp

    run = dpsgd.Run(MNIST["batch"] / MNIST["n"], 1, MNIST["sigma"])
    budget = dpsgd.largest_steps(run, 1e-5, 3.0, dpsgd.Method("clt"))
    for steps, fits in ((budget.steps, True), (budget.steps + 1, False)):
        mu = run.sampling_rate * math.sqrt(steps * math.expm1(1 / MNIST["sigma"] ** 2))
        assert (gdp.epsilon(1e-5, mu) <= 3.0) is fits


def test_pld_budget_brackets_truth() -> None:
    run = dpsgd.Run(0.01, 1, 1.0)
    budget = dpsgd.largest_steps(run, 1e-5, 2.0)
    assert budget.epsilon <= 2.0
    assert _certified_epsilon(run.with_steps(budget.steps), 1e-5) <= 2.0
    lower = dpsgd.figures(run.with_steps(budget.exceeds_from), 1e-5, "pld")[1]
    assert lower.guarantee == "lower_bound" and float(lower.values[0]) > 2.0
