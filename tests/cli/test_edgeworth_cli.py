"""`--method edgeworth` end to end (compose and sgd): labels, `all`, budgets and bad input."""

from __future__ import annotations

import pytest

from tests.cli.test_sgd import EPOCHS, RUN, rows_of

MNIST = RUN  # sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 --delta 1e-5


def test_sgd_poisson_edgeworth_is_an_approximation(gdpcli) -> None:
    (row,) = rows_of(gdpcli(*EPOCHS, "--method", "edgeworth", "-f", "json"))
    assert (row["guarantee"], row["method"]) == ("approximation", "edgeworth")
    assert row["epsilon"] == pytest.approx(2.4252, abs=5e-4)  # PLD [2.3814, 2.3822], CLT 2.3244


def test_sgd_fixed_size_edgeworth(gdpcli) -> None:
    outcome = gdpcli(
        *EPOCHS, "--sampling", "fixed", "--sensitivity", "1", "--method", "edgeworth", "-f", "json"
    )
    (row,) = rows_of(outcome)
    assert row["method"] == "edgeworth"
    assert row["epsilon"] == pytest.approx(3.0867, abs=5e-4)  # PLD [3.0684, 3.0690], Cor. 4 3.0868


def test_sgd_all_shows_edgeworth_beside_clt_pld_and_rdp(gdpcli) -> None:
    rows = rows_of(gdpcli(*EPOCHS, "--method", "all", "-f", "json"))
    methods = [row["method"] for row in rows]
    assert methods == ["pld", "pld", "clt", "edgeworth", "rdp-optimal"]


def test_sgd_full_batch_edgeworth_is_the_exact_gaussian(gdpcli) -> None:
    step = ("sgd", "--sampling-rate", "1", "--noise-multiplier", "2", "--steps", "4", "--delta", "1e-5")
    (exact,) = rows_of(gdpcli(*step, "-f", "json"))
    (edge,) = rows_of(gdpcli(*step, "--method", "edgeworth", "-f", "json"))
    assert edge["epsilon"] == pytest.approx(exact["epsilon"], rel=1e-9)
    assert edge["guarantee"] == "approximation"


def test_sgd_edgeworth_budget_is_labelled_and_never_passes_a_check(gdpcli) -> None:
    (row,) = rows_of(gdpcli(*MNIST, "--target-epsilon", "3", "--method", "edgeworth", "-f", "json"))
    assert (row["guarantee"], row["method"]) == ("approximation", "edgeworth")
    checked = gdpcli(*EPOCHS, "--method", "edgeworth", "--max-epsilon", "3", "-f", "json")
    assert checked.code != 0 and "rigorous" in checked.stderr


def test_compose_heterogeneous_with_delta_parts(gdpcli) -> None:
    specs = (
        "gaussian:sigma=1.1,p=0.004x10000",
        "gaussian:sigma=2,p=0.01,sampling=fixedx5000",
        "laplace:b=50x100",
        "dp:eps=0.01,delta=1e-7x10",
    )
    rows = rows_of(gdpcli("compose", *specs, "--delta", "1e-5", "--method", "all", "-f", "json"))
    by_method = {(row["method"], row["guarantee"]): row["epsilon"] for row in rows}
    edge = by_method[("edgeworth", "approximation")]
    assert by_method[("pld", "lower_bound")] - 0.05 < edge < by_method[("pld", "upper_bound")] + 0.05


def test_compose_gaussian_delta_and_tradeoff_are_exact(gdpcli) -> None:
    query = ("--epsilon", "1", "--alpha", "0.1", "-f", "json")
    exact = rows_of(gdpcli("compose", "gaussian:sigma=20x1000", *query))
    edge = rows_of(gdpcli("compose", "gaussian:sigma=20x1000", "--method", "edgeworth", *query))
    assert [row["guarantee"] for row in edge] == ["approximation", "approximation"]
    assert edge[0]["delta"] == pytest.approx(exact[0]["delta"], rel=1e-9)
    assert edge[1]["beta"] == pytest.approx(exact[1]["beta"], rel=1e-9)


def test_unsupported_step_exits_1_naming_it(gdpcli) -> None:
    outcome = gdpcli("compose", "rdp:alpha=8,eps=0.5", "--delta", "1e-5", "--method", "edgeworth")
    assert outcome.code == 1
    assert "Edgeworth" in outcome.stderr and "rdp" in outcome.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("compose", "gaussian:sigma=-1", "--delta", "1e-5", "--method", "edgeworth"),
        ("compose", "gaussian:sigma=1", "--delta", "1e-5", "--method", "edgeworh"),
        (*MNIST[:5], "--noise-multiplier", "0", "--delta", "1e-5", "--epochs", "1", "--method", "edgeworth"),
        (*MNIST[:7], "--delta", "2", "--epochs", "60", "--method", "edgeworth"),
    ],
)
def test_bad_input_exits_2(gdpcli, args: tuple[str, ...]) -> None:
    outcome = gdpcli(*args)
    assert outcome.code == 2, outcome.stderr
    assert outcome.stderr.startswith("gdpcli: error:")
