"""Shared fixtures: the reference values (tests/data/values.json), a CLI runner, and the guards that keep one
test's changes to process-wide state from reaching the next (the order is random: pytest-randomly)."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mpmath as mp
import numpy as np
import pytest

from gdpcli.core.tradeoff import Grid, eps_delta_tradeoff, grid_from_tradeoff

REFERENCE = json.loads((Path(__file__).parent / "data" / "values.json").read_text())
MPMATH_PRECISION = mp.mp.prec  # mpmath's default (53 bits): every test and every import starts from it


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[pytest.CollectReport]:
    """A test module that sets mpmath's precision when it is imported would set it for every test run after
    it: that is a collection error naming the module (set the precision where a recipe computes, with
    mp.workdps)."""
    report = yield
    if isinstance(collector, pytest.Module) and mp.mp.prec != MPMATH_PRECISION:
        mp.mp.prec = MPMATH_PRECISION
        report.outcome = "failed"
        report.longrepr = f"{collector.nodeid} sets mpmath's precision when imported (use mp.workdps)"
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """The seed of this run's test order, also under -q (pytest-randomly shows it only in the header, which
    -q leaves out), so that an order that fails can be run again."""
    if config.pluginmanager.hasplugin("randomly"):
        seed = config.getoption("randomly_seed")
        terminalreporter.write_line(f"test order: shuffled by --randomly-seed={seed} (give it to repeat it)")


def _environment() -> dict[str, str]:
    """os.environ without the variables pytest itself sets while a test runs."""
    return {name: value for name, value in os.environ.items() if not name.startswith("PYTEST_")}


@pytest.fixture(autouse=True)
def _global_state_is_restored() -> Iterator[None]:
    """After each test mpmath's precision is back at its default, so a test that sets it cannot change the
    next one; a test that leaves numpy's error handling, the working directory or the environment changed
    fails (use np.errstate, or pytest's monkeypatch, which undoes its changes)."""
    before = (np.geterr(), os.getcwd(), _environment())
    yield
    mp.mp.prec = MPMATH_PRECISION
    after = (np.geterr(), os.getcwd(), _environment())
    names = ("numpy's error handling", "the working directory", "the environment")
    changed = [name for name, old, new in zip(names, before, after, strict=True) if old != new]
    np.seterr(**before[0])
    os.chdir(before[1])
    if changed:
        pytest.fail(f"the test left {', '.join(changed)} changed for the tests after it")


def at_least_digits(digits: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator of an mpmath recipe: it computes with at least `digits` decimal digits, or with more where
    its caller works with more (mp.quad, mp.diff and mp.findroot raise the precision of the functions they
    call, which mp.workdps would lower again)."""

    def decorate(recipe: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(recipe)
        def at_precision(*args: Any, **kwargs: Any) -> Any:
            with mp.workdps(max(digits, mp.mp.dps)):
                return recipe(*args, **kwargs)

        return at_precision

    return decorate


def eps_delta_grid(epsilon0: float, delta0: float) -> Grid:
    """f_{eps0,delta0} with its kinks as knots, the grid of the piecewise-linear function itself.

    f vanishes at 1 - delta0; at the float nearest it, eps_delta_tradeoff correctly gives the rounding
    error 1 - delta0 - fl(1 - delta0) (up to 1e-16, either sign clipped to 0), so that knot is set to its
    exact value 0, or the grid's inverse would jump from 1 - delta0 to 1 at alpha = 0.
    """
    kinks = np.array([(1 - delta0) / (1 + np.exp(epsilon0)), 1 - delta0])
    grid = grid_from_tradeoff(lambda a: eps_delta_tradeoff(a, epsilon0, delta0), kinks)
    return Grid(grid.alpha, np.where(grid.alpha == kinks[-1], 0.0, grid.beta))


@mp.workdps(60)
def safe_side_of(exact: str, value: float, side: str, rel: float = 1e-12) -> bool:
    """value is on the safe side of the exact figure (a decimal string, e.g. 60-digit mpmath) and within
    `rel` of it: exact <= value <= exact (1 + rel) for side "above" (an upper bound such as epsilon),
    exact (1 - rel) <= value <= exact for "below" (a lower bound, or the largest mu). Compared at 60 digits:
    the exact figure is not rounded to a float first."""
    truth, computed = mp.mpf(exact), mp.mpf(float(value))
    if side == "above":
        return truth <= computed <= truth * (1 + mp.mpf(rel))
    return truth * (1 - mp.mpf(rel)) <= computed <= truth


def infinite(row: dict[str, Any], key: str) -> bool:
    """A JSON row states `key` = inf as the output contract says: null, and a reason that names it."""
    return row[key] is None and f"{key}" in row.get("reason", "") and "inf" in row["reason"]


@pytest.fixture(scope="session")
def reference() -> dict[str, Any]:
    """Reference values: mpmath at 60 digits and independent accountants (see its _about)."""
    return REFERENCE


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str

    def json(self) -> dict[str, Any]:
        return json.loads(self.stdout)


def rows_of(outcome: Outcome) -> list[dict[str, Any]]:
    """The rows of a command's JSON output, once it has exited 0 (else its stderr is the failure)."""
    assert outcome.code == 0, outcome.stderr
    return outcome.json()["rows"]


def one_line_error(outcome: Outcome, code: int, *words: str) -> None:
    """The error contract: exit `code` and one line on stderr (`gdpcli: error: ...`) that holds each of
    `words`; bad input (exit 2) is refused before anything is printed."""
    assert outcome.code == code, outcome.stderr
    assert code != 2 or outcome.stdout == "", outcome.stdout
    assert outcome.stderr.startswith("gdpcli: error: ") and outcome.stderr.count("\n") == 1, outcome.stderr
    assert "Traceback" not in outcome.stderr
    for word in words:
        assert word in outcome.stderr, outcome.stderr


def calibrated_round_trip(gdpcli: Callable[..., Outcome], *run: str) -> dict[str, Any]:
    """calibrate sgd's noise for `run` at epsilon 3, delta 1e-5, fed back to sgd: the row sgd prints, once
    both are checked to rest on the rigorous upper bound and to stay within epsilon 3."""
    [row] = rows_of(gdpcli("calibrate", "sgd", *run, "--epsilon", "3", "--delta", "1e-5", "-f", "json"))
    assert row["guarantee"] == "upper_bound" and row["achieved_epsilon"] <= 3.0
    noise = repr(row["noise_multiplier"])
    fed_back = rows_of(gdpcli("sgd", *run, "--noise-multiplier", noise, "--delta", "1e-5", "-f", "json"))
    assert fed_back[0]["guarantee"] == "upper_bound" and fed_back[0]["epsilon"] <= 3.0
    return fed_back[0]


@pytest.fixture
def gdpcli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """Run the real CLI in-process: gdpcli("convert", "gdp:mu=1", "--delta", "1e-5") -> Outcome."""
    from gdpcli.cli.app import run

    def invoke(*args: str) -> Outcome:
        capsys.readouterr()
        code = run(list(args))
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return invoke
