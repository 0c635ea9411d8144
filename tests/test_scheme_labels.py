"""Every label true under every batch scheme: the harness that guards the bound directions of DP-SGD runs.

It enumerates every batch scheme of the registry (events.SCHEMES, so that a new scheme is checked the day
it lands: it needs an example value for each parameter it requires, or the first test fails) and the
variants of a scheme's own options, runs the real commands and checks each answer:

1. `sgd` at a list of deltas exits 0 and prints no NaN; at each delta no rigorous lower bound lies above a
   rigorous upper bound (or exact figure) of epsilon, and since epsilon can only fall as delta grows, no
   lower bound at a larger delta lies above an upper bound at a smaller one;
2. `sgd --target-epsilon` at the run's own certified upper bound certifies at least the run's steps, with
   an epsilon within the target;
3. `risk` brackets the attack: at each false-positive rate the TPR's lower bound is at most its upper
   bound, and so for the advantage.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from gdpcli.events import SCHEMES, Sampling

RUN = ("--dataset-size", "2000", "--batch-size", "50", "--noise-multiplier", "1", "--epochs", "2")
DELTAS = (1e-3, 1e-5, 1e-8)

EXAMPLES = {
    "dataset_size": (),  # RUN gives it
    "max_batch_size": ("--max-batch-size", "60"),
    "bands": ("--bands", "4"),
}
"""An example value of each run parameter a scheme requires (SCHEMES[...].requires), as options."""

VARIANTS: dict[Sampling, tuple[tuple[str, ...], ...]] = {
    Sampling.BALLS_IN_BINS: ((), ("--participations", "2")),
}
"""Options of a scheme's own beyond its required parameters; one plain run for the others."""

RIGOROUS = {"exact", "upper_bound", "lower_bound"}


def cases() -> list[Any]:
    found = []
    for scheme in Sampling:
        required = tuple(option for name in SCHEMES[scheme].requires for option in EXAMPLES.get(name, ()))
        for variant in VARIANTS.get(scheme, ((),)):
            options = ("--sampling", str(scheme), *required, *variant)
            found.append(pytest.param(options, id=" ".join(options)))
    return found


def test_every_scheme_has_an_example_of_what_it_requires() -> None:
    missing = {str(s): name for s in Sampling for name in SCHEMES[s].requires if name not in EXAMPLES}
    assert not missing, f"add an example value to EXAMPLES for {missing}"


def _by_label(rows: list[dict]) -> dict[float, dict[str, list[float]]]:
    """{delta: {guarantee: [epsilon, ...]}} of the rigorous rows."""
    found: dict[float, dict[str, list[float]]] = {}
    for row in rows:
        if row["guarantee"] in RIGOROUS:
            found.setdefault(row["delta"], {}).setdefault(row["guarantee"], []).append(float(row["epsilon"]))
    return found


def _uppers(labels: dict[str, list[float]]) -> list[float]:
    return labels.get("upper_bound", []) + labels.get("exact", [])


def _lowers(labels: dict[str, list[float]]) -> list[float]:
    return labels.get("lower_bound", []) + labels.get("exact", [])


@pytest.mark.slow
@pytest.mark.parametrize("options", cases())
def test_every_scheme_labels_its_epsilons_truly(gdpcli, options: tuple[str, ...]) -> None:
    outcome = gdpcli("sgd", *RUN, *options, "--delta", ",".join(map(str, DELTAS)), "-f", "json")
    assert outcome.code == 0, outcome.stderr
    rows = outcome.json()["rows"]
    assert all(not math.isnan(float(row["epsilon"])) and float(row["epsilon"]) >= 0 for row in rows)
    labels = _by_label(rows)
    assert set(labels) == set(DELTAS) and all(_uppers(labels[d]) for d in DELTAS)
    for larger in DELTAS:
        for smaller in (d for d in DELTAS if d <= larger):
            assert max(_lowers(labels[larger]), default=0.0) <= min(_uppers(labels[smaller])), (
                larger,
                smaller,
            )
    # the budget is searched delta by delta: the run's own figure at that delta alone (a list is answered
    # from one composition per grid, whose bounds may differ within their width)
    alone = gdpcli("sgd", *RUN, *options, "--delta", "1e-5", "-f", "json").json()["rows"]
    both = [_by_label(alone)[1e-5], labels[1e-5]]  # both rigorous: they overlap
    assert max(max(_lowers(found), default=0.0) for found in both) <= min(min(_uppers(f)) for f in both)
    certified = min(_uppers(both[0]))
    steps = int(rows[0]["steps"])
    budget = gdpcli(
        "sgd",
        *RUN,
        *options,
        "--delta",
        "1e-5",
        "--target-epsilon",
        repr(certified * (1 + 1e-9)),
        "-f",
        "json",
    )
    assert budget.code == 0, budget.stderr
    for row in budget.json()["rows"]:
        if row["guarantee"] in RIGOROUS and "target_epsilon" in row:
            assert row["steps"] >= steps and row["epsilon"] <= row["target_epsilon"]


@pytest.mark.slow
@pytest.mark.parametrize("options", cases())
def test_every_scheme_brackets_the_attack(gdpcli, options: tuple[str, ...]) -> None:
    outcome = gdpcli("risk", *RUN, *options, "-f", "json")
    assert outcome.code == 0, outcome.stderr
    bracket: dict[tuple[str, Any], dict[str, float]] = {}
    for row in outcome.json()["rows"]:
        if row["guarantee"] in ("lower_bound", "upper_bound", "exact"):
            assert not math.isnan(row["value"])
            bracket.setdefault((row["measure"], row.get("fpr")), {})[row["guarantee"]] = row["value"]
    assert bracket
    for where, found in bracket.items():
        lower = found.get("lower_bound", found.get("exact", 0.0))
        upper = found.get("upper_bound", found.get("exact", math.inf))
        assert lower <= upper, where
