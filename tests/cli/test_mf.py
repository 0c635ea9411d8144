"""`gdpcli mf`: DP-FTRL's tree aggregation and banded matrix-factorization strategies.

Against dp-accounting's events built the way jax_privacy and TF Privacy build them
(SingleEpochTreeAggregationDpEvent; SelfComposedDpEvent(PoissonSampledDpEvent(GaussianDpEvent)) for
`amplified_bandmf_event`), composed by dp-accounting's accountants in the test; the sensitivities against
brute-force recipes written here; two published figures of the DP-FTRL paper; the command's errors.
"""

from __future__ import annotations

import itertools
import math

import dp_accounting as dpa
import numpy as np
import pytest
from scipy.stats import norm

from gdpcli.accounting import matrix_mechanism as mf
from gdpcli.accounting.run import RunLength
from gdpcli.core.matrix_mechanism import (
    cyclic_lower_levels,
    min_sep_squared_sensitivity,
    tree_height,
)
from tests.conftest import one_line_error, rows_of


def gdp_delta(epsilon: float, mu: float) -> float:
    """delta(epsilon) of mu-GDP (GDP paper Cor. 1), scipy's normal CDF."""
    return norm.cdf(-epsilon / mu + mu / 2) - math.exp(epsilon) * norm.cdf(-epsilon / mu - mu / 2)


# --- tree aggregation ------------------------------------------------------------------------------------


def online_tree_nodes(leaves: int) -> int:
    """The most released nodes of DP-FTRL's online tree over `leaves` steps that hold one leaf: the dyadic
    intervals [k 2^l, (k + 1) 2^l) inside [0, leaves), counted for every leaf."""
    counts = [0] * leaves
    level = 1
    while level <= leaves:
        for start in range(0, leaves - level + 1, level):
            for leaf in range(start, start + level):
                counts[leaf] += 1
        level *= 2
    return max(counts)


@pytest.mark.parametrize("leaves", [1, 2, 3, 4, 5, 7, 8, 9, 100, 235, 256, 1600])
def test_tree_height_counts_the_nodes_of_a_leaf(leaves) -> None:
    assert tree_height(leaves) == online_tree_nodes(leaves) == math.ceil(math.log2(leaves + 1))


@pytest.mark.parametrize(
    ("dataset", "batch", "sigma", "epochs"), [(60000, 256, 10.0, 5), (50000, 500, 46.3, 2.5)]
)
def test_tree_mu_is_dp_accountings(gdpcli, dataset, batch, sigma, epochs) -> None:
    """mu = sqrt(sum of the trees' heights) / sigma: dp-accounting's RDP of the restarted tree (one
    SingleEpochTreeAggregationDpEvent an epoch, the last one partial) is alpha mu^2 / 2, a Gaussian's; the
    exact epsilon meets delta by the GDP formula."""
    per_epoch = math.ceil(dataset / batch)
    steps = math.ceil(epochs * per_epoch)
    complete, rest = divmod(steps, per_epoch)
    tree = dpa.SingleEpochTreeAggregationDpEvent
    parts = [dpa.SelfComposedDpEvent(tree(sigma, per_epoch), complete)] + (
        [tree(sigma, rest)] if rest else []
    )
    accountant = dpa.rdp.RdpAccountant([2.0], dpa.NeighboringRelation.REPLACE_SPECIAL)
    accountant.compose(dpa.ComposedDpEvent(parts))
    mu_theirs = math.sqrt(2 * accountant._rdp[0] / 2.0)
    [row] = rows_of(
        gdpcli(
            "mf", "--strategy", "tree", "--dataset-size", str(dataset), "--batch-size", str(batch),
            "--noise-multiplier", str(sigma), "--epochs", str(epochs), "--delta", "1e-5", "-f", "json",
        )
    )  # fmt: skip
    assert (row["guarantee"], row["neighbouring"], row["steps"]) == ("exact", "zero-out", steps)
    assert row["mu"] == pytest.approx(mu_theirs, rel=1e-12)
    assert gdp_delta(row["epsilon"], row["mu"]) == pytest.approx(1e-5, rel=1e-9)


@pytest.mark.parametrize(("sigma", "published"), [(1.13, 19.74), (8.83, 2.04)])
def test_dp_ftrl_stackoverflow_figures(gdpcli, sigma, published) -> None:
    """Kairouz et al. 2021's StackOverflow setting, one tree of 1600 steps at delta 1e-6: noise 1.13 for
    epsilon 19.74 and 8.83 for 2.04 (the pairs TF Privacy's tree_aggregation_accountant test quotes from
    the paper). They are the classic RDP conversion's: rdp-classic meets them within the rounding of their
    two decimals (0.005); the exact GDP figure is below."""
    rows = rows_of(
        gdpcli(
            "mf", "--strategy", "tree", "--sampling-rate", "0.000625", "--steps", "1600",
            "--noise-multiplier", str(sigma), "--delta", "1e-6", "--method", "all", "--conversion",
            "classic", "-f", "json",
        )
    )  # fmt: skip
    by_method = {row["method"]: row["epsilon"] for row in rows}
    assert by_method["rdp-classic"] == pytest.approx(published, abs=0.005)
    assert by_method["gdp"] < published


# --- banded strategies -----------------------------------------------------------------------------------


def amplified_bandmf_event(sigma: float, steps: int, bands: int, p: float) -> dpa.DpEvent:
    """jax_privacy.accounting.amplified_bandmf_event: ceil(T / b) Poisson-sampled Gaussians."""
    gaussian = dpa.PoissonSampledDpEvent(p, dpa.GaussianDpEvent(sigma))
    return dpa.SelfComposedDpEvent(gaussian, math.ceil(steps / bands))


@pytest.mark.parametrize(
    ("p", "sigma", "column", "steps", "bands"), [(0.05, 1.0, 1.0, 400, 4), (0.2, 3.0, 2.0, 257, 16)]
)
def test_amplified_banded_brackets_dp_accounting(gdpcli, p, sigma, column, steps, bands) -> None:
    """Column norm S: jax_privacy's event at noise sigma / S (its noise multiplier assumes norm 1);
    gdpcli's PLD bounds bracket dp-accounting's PLD figure (on its 1e-4 grid, within 1e-3 relative)."""
    rows = rows_of(
        gdpcli(
            "mf", "--strategy", "banded", "--bands", str(bands), "--sensitivity", str(column),
            "--sampling-rate", str(p), "--steps", str(steps), "--noise-multiplier", str(sigma),
            "--delta", "1e-5", "-f", "json",
        )
    )  # fmt: skip
    event = amplified_bandmf_event(sigma / column, steps, bands, p)
    theirs = dpa.pld.PLDAccountant().compose(event).get_epsilon(1e-5)
    upper, lower = (row["epsilon"] for row in rows)
    assert [row["guarantee"] for row in rows] == ["upper_bound", "lower_bound"]
    assert rows[0]["steps_per_example"] == math.ceil(steps / bands)
    assert lower * (1 - 1e-3) <= theirs <= upper * (1 + 1e-3)


def banded_matrix(steps: int, bands: int, scale: dict[int, float] | None = None) -> np.ndarray:
    """A b-banded lower-triangular matrix of ones, columns scaled by `scale`."""
    matrix = np.tril(np.ones((steps, steps))) - np.tril(np.ones((steps, steps)), -bands)
    for column, factor in (scale or {}).items():
        matrix[:, column] *= factor
    return matrix


def brute_min_sep(norms: np.ndarray, bands: int) -> float:
    """max over every set of steps at least b apart of the sum of squared norms, by enumeration."""
    steps, best = len(norms), 0.0
    for size in range(1, steps + 1):
        for pattern in itertools.combinations(range(steps), size):
            if all(b - a >= bands for a, b in itertools.pairwise(pattern)):
                best = max(best, float(np.sum(norms[list(pattern)] ** 2)))
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(("steps", "bands"), [(9, 2), (10, 3), (7, 7), (8, 1)])
def test_min_sep_sensitivity_is_the_best_pattern(seed, steps, bands) -> None:
    norms = np.random.default_rng(seed).uniform(0.1, 2.0, steps)
    assert min_sep_squared_sensitivity(norms, bands) == pytest.approx(brute_min_sep(norms, bands), rel=1e-12)


def test_cyclic_norms_of_the_worst_example() -> None:
    """Parts j < T mod b have ceil(T / b) steps: their least norms bound those examples' steps below."""
    norms = np.array([3.0, 1.0, 2.0, 5.0, 4.0, 0.5, 6.0])  # b = 3: parts {0, 3, 6}, {1, 4}, {2, 5}
    assert cyclic_lower_levels(norms, 3) == [(6.0, 1), (3.0, 2)]
    assert cyclic_lower_levels(np.array([2.0, 0.0, 2.0, 1.0]), 2) == [(2.0, 2)]  # part 0 has only the top
    assert cyclic_lower_levels(np.array([0.0, 2.0, 0.0, 1.0]), 2) == [(2.0, 1), (1.0, 1)]  # zeros only: no


def test_a_file_of_equal_columns_is_the_sensitivity(gdpcli, tmp_path) -> None:
    """A strategy whose columns all have norm sqrt(2) (two bands of ones but the last column) gives the
    figures of --sensitivity sqrt(2) where the last column is met by no example with the most steps."""
    matrix = banded_matrix(9, 2) * np.sqrt(2) / np.linalg.norm(banded_matrix(9, 2), axis=0)
    path = tmp_path / "c.npy"
    np.save(path, matrix)
    query = (
        "mf",
        "--strategy",
        "banded",
        "--bands",
        "2",
        "--sampling-rate",
        "0.3",
        "--noise-multiplier",
        "2",
    )
    by_file = rows_of(gdpcli(*query, "--strategy-file", str(path), "--delta", "1e-5", "-f", "json"))
    given = rows_of(
        gdpcli(*query, "--sensitivity", repr(math.sqrt(2)), "--steps", "9", "--delta", "1e-5", "-f", "json")
    )
    assert [r["epsilon"] for r in by_file] == pytest.approx([r["epsilon"] for r in given], rel=1e-12)


def test_unequal_columns_bound_from_both_norms(gdpcli, tmp_path) -> None:
    """Columns of norm 1 but one of norm 0.5 in each part: the upper bound is the run with every column at
    norm 1 (the paper's Thm 4), the lower bound the composition of an example's own steps, 3 at norm 1 and
    1 at 0.5 (dp-accounting's figures of the two events lie on their sides, the lower one within 1 %)."""
    matrix = np.eye(8)
    matrix[4, 4] = 0.5  # part 0 = steps {0, 2, 4, 6}; part 1 = {1, 3, 5, 7}: both have 4 steps
    matrix[5, 5] = 0.5
    path = tmp_path / "c.csv"
    path.write_text("\n".join(",".join(map(repr, row)) for row in matrix.tolist()) + "\n")
    outcome = gdpcli(
        "mf", "--strategy", "banded", "--bands", "2", "--strategy-file", str(path), "--sampling-rate", "0.5",
        "--noise-multiplier", "3", "--delta", "1e-5", "-f", "json",
    )  # fmt: skip
    upper, lower = rows_of(outcome)
    step = dpa.PoissonSampledDpEvent
    own = dpa.ComposedDpEvent(
        [dpa.SelfComposedDpEvent(step(0.5, dpa.GaussianDpEvent(3.0)), 3), step(0.5, dpa.GaussianDpEvent(6.0))]
    )
    high = dpa.pld.PLDAccountant().compose(amplified_bandmf_event(3.0, 8, 2, 0.5)).get_epsilon(1e-5)
    low = dpa.pld.PLDAccountant().compose(own).get_epsilon(1e-5)
    assert lower["guarantee"] == "lower_bound" and low * 0.99 <= lower["epsilon"] <= low * (1 + 1e-3)
    assert upper["guarantee"] == "upper_bound" and upper["epsilon"] >= high * (1 - 1e-3)
    assert any("3 at 1 C, 1 at 0.5 C" in note for note in outcome.json()["notes"])


def test_no_amplification_is_the_min_sep_gaussian(gdpcli, tmp_path) -> None:
    """Without sampling: exactly GDP with mu = sqrt(best pattern's sum of squared norms) / sigma."""
    matrix = banded_matrix(10, 3, {2: 2.0, 7: 0.5})
    path = tmp_path / "c.csv"
    path.write_text("\n".join(" ".join(map(repr, row)) for row in matrix.tolist()))
    [row] = rows_of(
        gdpcli(
            "mf", "--strategy", "banded", "--bands", "3", "--strategy-file", str(path), "--no-amplification",
            "--noise-multiplier", "4", "--delta", "1e-5", "-f", "json",
        )
    )  # fmt: skip
    expected = math.sqrt(brute_min_sep(np.linalg.norm(matrix, axis=0), 3))
    assert (row["guarantee"], row["neighbouring"]) == ("exact", "zero-out")
    assert row["sensitivity"] == pytest.approx(expected, rel=1e-12)
    assert gdp_delta(row["epsilon"], expected / 4) == pytest.approx(1e-5, rel=1e-9)


def test_a_given_column_norm_says_what_it_assumes(gdpcli) -> None:
    """--sensitivity S: every column at norm S; without amplification the run's sensitivity is sqrt(k) S."""
    outcome = gdpcli(
        "mf", "--strategy", "banded", "--bands", "4", "--no-amplification", "--sensitivity", "1.5",
        "--steps", "10", "--noise-multiplier", "3", "--delta", "1e-5", "-f", "json",
    )  # fmt: skip
    [row] = rows_of(outcome)
    assert row["sensitivity"] == pytest.approx(1.5 * math.sqrt(3), rel=1e-15)
    assert any("every column of the strategy taken at norm 1.5 C" in note for note in outcome.json()["notes"])


def test_cli_and_library_agree(gdpcli) -> None:
    run = ("--sampling-rate", "0.05", "--steps", "400", "--noise-multiplier", "1", "--delta", "1e-5")
    rows = rows_of(gdpcli("mf", "--strategy", "banded", "--bands", "4", *run, "-f", "json"))
    mechanism = mf.banded(1.0, 4, RunLength(sampling_rate=0.05, steps=400))
    [found] = mf.plan(mechanism, "auto", accuracy=1e-3)
    assert [row["epsilon"] for row in rows] == [f.values[0] for f in found[1].epsilon(np.array([1e-5]))]


# --- bad input -------------------------------------------------------------------------------------------

BANDED = ("mf", "--strategy", "banded", "--noise-multiplier", "1", "--delta", "1e-5")


def bad_file(tmp_path, text: str) -> str:
    path = tmp_path / "c.csv"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--sampling-rate", "0.1", "--steps", "10"), "--strategy banded needs --bands"),
        (("--bands", "0", "--sampling-rate", "0.1", "--steps", "10"), "--bands: must be a whole number >= 1"),
        (("--bands", "11", "--sampling-rate", "0.1", "--steps", "10"), "--bands 11 exceeds the 10 steps"),
        (
            ("--bands", "2", "--no-amplification", "--batch-size", "5", "--steps", "10"),
            "without amplification",
        ),
        (("--bands", "2", "--steps", "10"), "the sampling rate is missing"),
    ],
)
def test_bad_input_is_one_line_exit_2(gdpcli, extra, message) -> None:
    one_line_error(gdpcli(*BANDED, *extra), 2, message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,0,0\n1,1,0\n1,1,1\n", "entry (3, 1) = 1.0 is 3 bands from the diagonal"),
        ("1,1,0\n0,1,0\n0,1,1\n", "entry (1, 2) = 1.0 is above the diagonal"),
        ("1,0,0\nnan,1,0\n0,1,1\n", "entry (2, 1) is nan"),
        ("1,0,0\n1,1\n0,1,1\n", "line 2 has 2 numbers, the first 3"),
        ("1,0,0\n1,x,0\n0,1,1\n", "line 2 is not a row of numbers"),
        ("1,0\n1,1\n0,1\n", "square T x T matrix"),
        ("0,0\n0,0\n", "every entry of the strategy is 0"),
    ],
)
def test_bad_strategy_files(gdpcli, tmp_path, text, message) -> None:
    path = bad_file(tmp_path, text)
    one_line_error(
        gdpcli(*BANDED, "--bands", "2", "--strategy-file", path, "--sampling-rate", "0.5"), 2, message
    )


@pytest.mark.parametrize(
    "build",
    [
        lambda: mf.tree(-1.0, RunLength(sampling_rate=0.1, steps=10)),
        lambda: mf.banded(math.nan, 2, RunLength(steps=10), amplified=False),
        lambda: mf.banded(1.0, 2, RunLength(steps=10), amplified=False, sensitivity=-1.0),
        lambda: mf.banded(1.0, 2, RunLength(sampling_rate=0.5, steps=10), sensitivity=math.inf),
    ],
)
def test_the_library_refuses_bad_numbers(build) -> None:
    from gdpcli.errors import InputError

    with pytest.raises(InputError, match="must be finite and positive"):
        build()


def test_a_npy_file_that_is_no_array_is_refused(gdpcli, tmp_path) -> None:
    path = tmp_path / "c.npy"
    path.write_text("1,0\n1,1\n")
    outcome = gdpcli(*BANDED, "--bands", "2", "--strategy-file", str(path), "--sampling-rate", "0.5")
    assert outcome.code == 2 and "is not a numpy array file" in outcome.stderr
    assert outcome.stderr.count("\n") == 1


def test_tree_refuses_the_options_of_banded_strategies(gdpcli) -> None:
    outcome = gdpcli("mf", "--strategy", "tree", "--bands", "2", "--sampling-rate", "0.1", "--steps", "10",
                     "--noise-multiplier", "1", "--delta", "1e-5")  # fmt: skip
    assert outcome.code == 2 and "--bands describes a banded strategy" in outcome.stderr
