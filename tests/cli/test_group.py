"""`--group K` on compose and sgd: exact group versions, the binomial-mixture PLD bounds of
Poisson-sampled groups, K = 1 as the plain run, refusals and bad input."""

from __future__ import annotations

import pytest

from tests.conftest import rows_of

MNIST = ("sgd", "--dataset-size", "60000", "--batch-size", "256", "--noise-multiplier", "1.1")
MNIST_RUN = (*MNIST, "--epochs", "60", "--delta", "1e-5")


def epsilons(rows: list[dict]) -> dict[str, float]:
    return {row["guarantee"]: row["epsilon"] for row in rows}


def test_compose_gaussian_group_is_k_times_the_sensitivity(gdpcli) -> None:
    grouped = rows_of(
        gdpcli("compose", "gaussian:sigma=2x10", "--group", "3", "--delta", "1e-5", "-f", "json")
    )
    plain = rows_of(gdpcli("compose", "gaussian:sigma=2,sens=3x10", "--delta", "1e-5", "-f", "json"))
    assert [row["epsilon"] for row in grouped] == [row["epsilon"] for row in plain]
    assert grouped[0]["guarantee"] == "exact" and grouped[0]["group"] == 3


def test_compose_laplace_and_gdp_groups(gdpcli) -> None:
    grouped = rows_of(gdpcli("compose", "laplace:b=1x3", "--group", "2", "--epsilon", "1", "-f", "json"))
    plain = rows_of(gdpcli("compose", "laplace:b=0.5x3", "--epsilon", "1", "-f", "json"))
    assert [row["delta"] for row in grouped] == [row["delta"] for row in plain]
    [row] = rows_of(gdpcli("compose", "gdp:mu=0.3x4", "--group", "2", "--to", "mu", "-f", "json"))
    assert row["mu"] == pytest.approx(1.2, rel=1e-15)  # 2 x sqrt(4) x 0.3 (GDP paper Thm 3, Cor. 2)


def test_compose_subsampled_group(gdpcli) -> None:
    spec = "gaussian:sigma=1,p=0.01x1000"
    one = epsilons(rows_of(gdpcli("compose", spec, "--delta", "1e-5", "-f", "json")))
    same = epsilons(rows_of(gdpcli("compose", spec, "--group", "1", "--delta", "1e-5", "-f", "json")))
    four = epsilons(rows_of(gdpcli("compose", spec, "--group", "4", "--delta", "1e-5", "-f", "json")))
    assert one == same
    assert one["upper_bound"] < four["lower_bound"] <= four["upper_bound"]


def test_sgd_group_one_is_the_plain_run(gdpcli) -> None:
    plain = gdpcli(*MNIST_RUN, "-f", "csv")
    grouped = gdpcli(*MNIST_RUN, "--group", "1", "-f", "csv")
    assert plain.code == grouped.code == 0 and plain.stdout == grouped.stdout


def test_sgd_group_two_on_mnist(gdpcli) -> None:
    """Rigorous bounds above the record-level ones, labelled, with the group in every row; the CLT row is
    K times the CLT mu, an approximation (below the bounds here, which the note says)."""
    one = epsilons(rows_of(gdpcli(*MNIST_RUN, "-f", "json")))
    outcome = gdpcli(*MNIST_RUN, "--group", "2", "--method", "all", "-f", "json")
    rows = rows_of(outcome)
    two = epsilons(rows)
    assert one["upper_bound"] < two["lower_bound"] <= two["upper_bound"] < 5.27
    assert all(row["group"] == 2 for row in rows)
    assert two["approximation"] < two["lower_bound"]
    assert any("optimistic" in note for note in outcome.json()["notes"])


@pytest.mark.parametrize("sampling", ["fixed", "shuffle", "balls-in-bins"])
def test_sgd_group_refused_for_other_batches(gdpcli, sampling: str) -> None:
    outcome = gdpcli(*MNIST_RUN, "--group", "2", "--sampling", sampling)
    assert outcome.code == 1 and "--group" in outcome.stderr and outcome.stdout == ""


@pytest.mark.parametrize(
    "spec", ["dp:eps=1", "gaussian:sigma=1,p=0.1,sampling=fixed", "laplace:b=1,p=0.1", "gdp:mu=1,p=0.1"]
)
def test_compose_group_refused_without_a_rigorous_version(gdpcli, spec: str) -> None:
    outcome = gdpcli("compose", spec, "--group", "2", "--delta", "1e-5")
    assert outcome.code == 1 and "group" in outcome.stderr and outcome.stdout == ""


@pytest.mark.parametrize("value", ["0", "-1", "2.5", "two"])
@pytest.mark.parametrize("command", [("compose", "gaussian:sigma=1", "--delta", "1e-5"), MNIST_RUN])
def test_bad_group_sizes_exit_2(gdpcli, command: tuple[str, ...], value: str) -> None:
    outcome = gdpcli(*command, "--group", value)
    assert outcome.code == 2 and "--group" in outcome.stderr
