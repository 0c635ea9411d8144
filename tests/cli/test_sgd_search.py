"""`gdpcli sgd --runs-distribution`, the select= spec wrapper and events.RepeatAndSelect: the best of a random
number of runs (Papernot and Steinke, ICLR 2022).

The theorems themselves are checked in tests/core/test_repeat_select.py (against the exact RDP of the best
of K randomized responses and dp_accounting's accountant); here: the command line against dp_accounting's
RDP accountant on the same RepeatAndSelectDpEvent (gdpcli's figure is never above it), the MNIST search
against K = 10 fixed runs, the figure's growth with the mean, the errors, and that the spec language, the
Python API and dp_accounting's event form give the same figure.
"""

from __future__ import annotations

import math

import pytest

from gdpcli import account, dp_events, events
from gdpcli.errors import InputError
from tests.cli.test_sgd import EPOCHS as MNIST  # 60 epochs of MNIST at delta 1e-5
from tests.conftest import one_line_error, rows_of

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.rdp import rdp_privacy_accountant as ra  # noqa: E402

SMALL = ("sgd", "--sampling-rate", "0.01", "--noise-multiplier", "1", "--steps", "1000")


def dp_accounting_epsilon(
    rate: float, noise: float, steps: int, mean: float, shape: float, delta: float
) -> float:
    """dp_accounting's RDP accountant (its default orders) on the search of `steps` Poisson-sampled Gaussian
    steps."""
    run = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(noise)), steps
    )
    accountant = ra.RdpAccountant()
    accountant.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(run, mean, shape))
    return accountant.get_epsilon(delta)


def test_mnist_geometric_search_is_within_dp_accounting_and_below_ten_fixed_runs(gdpcli) -> None:
    """MNIST, 60 epochs, K geometric of mean 10: at most dp_accounting's 5.049, and below the rigorous upper
    bound of 10 composed runs (--runs 10)."""
    [row] = rows_of(gdpcli(*MNIST, "--runs-distribution", "geometric:mean=10", "-f", "json"))
    theirs = dp_accounting_epsilon(256 / 60000, 1.1, 14063, 10.0, 1.0, 1e-5)
    assert theirs == pytest.approx(5.0490, abs=5e-5)  # the README quotes it
    poisson = dp_accounting_epsilon(256 / 60000, 1.1, 14063, 10.0, math.inf, 1e-5)
    assert poisson == pytest.approx(5.7489, abs=5e-5)  # the README quotes it beside gdpcli's 5.2633
    assert row["epsilon"] <= theirs * (1 + 1e-12)
    assert (row["guarantee"], row["method"]) == ("upper_bound", "rdp-optimal")
    assert (row["runs_distribution"], row["runs_mean"], row["steps"]) == ("geometric", 10.0, 14063)
    ten = rows_of(gdpcli(*MNIST, "--runs", "10", "-f", "json"))
    assert row["epsilon"] < min(r["epsilon"] for r in ten if r["guarantee"] == "upper_bound")


@pytest.mark.parametrize(
    ("distribution", "shape"),
    [
        ("poisson:mean=3", math.inf),
        ("geometric:mean=3", 1.0),
        ("negative-binomial:mean=3,shape=0.5", 0.5),
        ("negative-binomial:mean=30,shape=2", 2.0),
        ("negative-binomial:mean=30,shape=0", 0.0),
    ],
)
def test_at_most_dp_accountings_epsilon_for_every_delta(gdpcli, distribution: str, shape: float) -> None:
    outcome = gdpcli(*SMALL, "--delta", "1e-5,1e-8", "--runs-distribution", distribution, "-f", "json")
    rows = rows_of(outcome)
    mean = float(distribution.split("mean=")[1].split(",")[0])
    assert [row["delta"] for row in rows] == [1e-5, 1e-8]
    for row in rows:
        assert row["epsilon"] <= dp_accounting_epsilon(0.01, 1.0, 1000, mean, shape, row["delta"]) * (
            1 + 1e-12
        )
        assert row["guarantee"] == "upper_bound"
    assert ("runs_shape" in rows[0]) == distribution.startswith("negative-binomial")
    [note] = outcome.json()["notes"]
    theorem = "Thm 6" if distribution.startswith("poisson") else "Thm 2"
    assert "best of K runs" in note and "independently of the data" in note and theorem in note


@pytest.mark.parametrize(
    "name", [pytest.param("poisson", marks=pytest.mark.slow), "geometric", "negative-binomial"]
)
def test_the_figure_grows_with_the_mean_and_never_undercuts_one_run(gdpcli, name: str) -> None:
    """Slow for Poisson (Thm 6's delta_hat by the optimal conversion: about 1 s a run)."""
    one = rows_of(gdpcli(*SMALL, "--delta", "1e-5", "--method", "rdp", "-f", "json"))[0]["epsilon"]
    shape = ",shape=0.5" if name == "negative-binomial" else ""
    figures = []
    for mean in (1, 1.001, 10, 1000):
        query = ("--delta", "1e-5", "--runs-distribution", f"{name}:mean={mean}{shape}", "-f", "json")
        figures.append(rows_of(gdpcli(*SMALL, *query))[0]["epsilon"])
    assert figures == sorted(figures) and len(set(figures)) == len(figures)
    assert figures[0] >= one


@pytest.mark.slow
def test_step_budget_is_the_longest_run_whose_search_is_within_the_target(gdpcli) -> None:
    """--target-epsilon: T steps per run keep the search within the target, T + 1 do not (by the same RDP
    figure). Slow: the bisection accounts some twenty searches."""
    query = ("sgd", "--sampling-rate", "0.01", "--noise-multiplier", "1", "--delta", "1e-5")
    search = ("--runs-distribution", "geometric:mean=10", "-f", "json")
    [budget] = rows_of(gdpcli(*query, "--target-epsilon", "3", *search))
    steps = budget["steps"]
    assert budget["epsilon"] <= 3.0 and (budget["guarantee"], budget["runs_mean"]) == ("upper_bound", 10.0)
    within = rows_of(gdpcli(*query, "--steps", str(steps), *search))[0]["epsilon"]
    beyond = rows_of(gdpcli(*query, "--steps", str(steps + 1), *search))[0]["epsilon"]
    assert within == budget["epsilon"] and within <= 3.0 < beyond


def test_max_epsilon_checks_the_search(gdpcli) -> None:
    query = (*SMALL, "--delta", "1e-5", "--runs-distribution", "geometric:mean=10")
    epsilon = rows_of(gdpcli(*query, "-f", "json"))[0]["epsilon"]
    assert gdpcli(*query, "--max-epsilon", str(epsilon * 1.01)).code == 0
    exceeded = gdpcli(*query, "--max-epsilon", str(epsilon * 0.99))
    assert exceeded.code == 3 and exceeded.stderr.splitlines()[-1].startswith("gdpcli: error: epsilon")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--runs-distribution", "geometric:mean=0.5"), "mean number of runs must be in [1, 1e+09]"),
        (("--runs-distribution", "poisson:mean=0"), "mean number of runs must be in [1, 1e+09]"),
        (("--runs-distribution", "geometric:mean=inf"), "mean number of runs must be in [1, 1e+09]"),
        (("--runs-distribution", "uniform:mean=3"), "unknown distribution of runs 'uniform'"),
        (("--runs-distribution", "negative-binomial:mean=3,shape=-1"), "shape must be a finite number > -1"),
        (("--runs-distribution", "negative-binomial:mean=3"), "negative-binomial needs shape=S"),
        (("--runs-distribution", "geometric:mean=3,shape=2"), "a geometric distribution has no shape"),
        (("--runs-distribution", "geometric"), "needs DIST:mean=M"),
        (("--runs-distribution", "geometric:mean=x"), "mean='x' is not a number"),
        (("--runs-distribution", "geometric:mean=3", "--runs", "3"), "does not go with --runs"),
        (("--runs-distribution", "geometric:mean=3", "--method", "pld"), "accounted by RDP only"),
        (("--runs-distribution", "geometric:mean=3", "--sampling", "fixed"), "--sampling fixed"),
        (("--runs-distribution", "geometric:mean=3", "--sampling", "shuffle"), "--sampling shuffle"),
        (("--runs-distribution", "geometric:mean=3", "--plot", "search.png"), "does not go with --plot"),
        (("--runs-distribution", "geometric:mean=3", "--group", "2"), "does not go with --group"),
    ],
)
def test_bad_input_exits_2_in_one_line(gdpcli, extra: tuple[str, ...], message: str) -> None:
    one_line_error(gdpcli(*SMALL, "--delta", "1e-5", *extra), 2, message)


SPEC = "gaussian:sigma=1,p=0.01,sampling=poisson,times=1000,select=negative-binomial:mean=3,shape=0.5"


def test_spec_python_api_and_dp_accounting_event_give_the_sgd_figure(gdpcli) -> None:
    """The select= wrapper, events.RepeatAndSelect and RepeatAndSelectDpEvent (written, built by
    dp_accounting, read back) are the same search as sgd --runs-distribution."""
    query = ("--delta", "1e-5", "-f", "json")
    [sgd] = rows_of(gdpcli(*SMALL, *query, "--runs-distribution", "negative-binomial:mean=3,shape=0.5"))
    [composed] = rows_of(gdpcli("compose", SPEC, *query))
    search = events.RepeatAndSelect(
        (events.dpsgd(1.0, 0.01, 1000),), events.RunsDistribution.of("negative-binomial", 3.0, 0.5)
    )
    [figure] = account.epsilon(search, delta=1e-5)
    assert sgd["epsilon"] == composed["epsilon"] == figure.value
    assert (str(figure.guarantee), figure.method) == ("upper_bound", "rdp-optimal")
    assert events.parse(search.describe()) == events.parse(SPEC)
    written = dp_events.write(events.parse(SPEC))
    built = dp_accounting.dp_event.DpEvent.from_named_tuple(
        dp_accounting.dp_event.RepeatAndSelectDpEvent(
            dp_accounting.SelfComposedDpEvent(
                dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.0)), 1000
            ),
            3.0,
            0.5,
        ).to_named_tuple()
    )
    assert dp_events.write(dp_events.read(built)) == written
    assert account.certified_epsilon(dp_events.read(written), delta=1e-5) == figure.value


def test_other_methods_refuse_with_the_reason(gdpcli) -> None:
    refused = gdpcli("compose", SPEC, "--delta", "1e-5", "--method", "pld")
    assert refused.code == 1 and "repeat-and-select is accounted by RDP only" in refused.stderr
    every = gdpcli("compose", SPEC, "--delta", "1e-5", "--method", "all", "-f", "json")
    assert [row["method"] for row in rows_of(every)] == ["rdp-optimal"]
    assert all(
        "accounted by RDP only" in note for note in every.json()["notes"] if note.startswith("skipped")
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("gaussian:sigma=1,select=poisson:mean=0.5", "select: poisson: the mean number of runs must be"),
        ("gaussian:sigma=1,select=foo:mean=5", "select: unknown distribution of runs 'foo'"),
        ("gaussian:sigma=1,select=negative-binomial:mean=5", "select: negative-binomial needs shape=S"),
        (
            "gaussian:sigma=1,select=negative-binomial:mean=5,shape=-2",
            "the shape must be a finite number > -1",
        ),
        ("gaussian:sigma=1,select=geometric:mean=5,rate=2", "'rate=2' is not mean=M or shape=S"),
        ("gaussian:sigma=1,select=geometric:mean=nan", "the mean number of runs must be in"),
        ("select=geometric:mean=5", "unknown mechanism kind 'select=geometric'"),
    ],
)
def test_bad_select_specs_exit_2_in_one_line(gdpcli, spec: str, message: str) -> None:
    one_line_error(gdpcli("compose", spec, "--delta", "1e-5"), 2, message)


def test_python_api_takes_a_run_or_a_step_and_refuses_a_whole_run_scheme() -> None:
    geometric = events.RunsDistribution.of("geometric", 10)
    run = events.dpsgd(1.0, 0.01, 1000)
    assert events.RepeatAndSelect(run, geometric) == events.RepeatAndSelect((run,), geometric)
    assert events.RepeatAndSelect([events.Gaussian(2.0, 1.0)], geometric).events == (
        events.Repeated(events.Gaussian(2.0, 1.0)),
    )
    with pytest.raises(InputError, match="events with an RDP curve, got Run"):
        events.RepeatAndSelect(events.dpsgd(1.0, 0.01, 1000, sampling="shuffle"), geometric)
