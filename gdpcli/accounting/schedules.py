"""DP-SGD runs in phases: a schedule of phases, each `steps` (or `epochs`) steps at a
batch size (or sampling rate) and noise multiplier, read from CSV or JSON, from an Opacus accountant
history, or from dp_accounting events; composed exactly by the same accountants as one run.

Composition is commutative, so phases that differ only in their step count are one phase of the summed
steps (`merged`): a schedule of K identical phases is the K-times-longer run, and a one-phase schedule is
the plain run, computed by the same code to the last digit (dpsgd.figures). Several phases become a list
of events (run.Run.spec) for gdpcli.accounting.select, the accountants of `gdpcli compose`.

Every phase must refer to the same neighbouring relation (Poisson phases add/remove, fixed-size phases
replace-one): guarantees under different relations do not compose into one.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from gdpcli.accounting import dpsgd
from gdpcli.accounting.dpsgd import Method
from gdpcli.accounting.figures import Figures, smallest
from gdpcli.accounting.run import MAX_STEPS, RunLength, check_run, schedule
from gdpcli.errors import ComputationError, InputError, parameter
from gdpcli.events import Repeated, Run, Sampling

COLUMNS = ("steps", "epochs", "batch_size", "sampling_rate", "noise_multiplier", "sampling", "sensitivity")
"""The columns (CSV) or keys (JSON objects) of a phase; one of steps/epochs and of batch_size/sampling_rate,
and noise_multiplier, are required; sampling (poisson | fixed, default poisson) and sensitivity optional."""
PHASE_SAMPLING = tuple(scheme.value for scheme in Sampling if scheme.per_step)
_OPACUS_ENTRY = 3  # (noise_multiplier, sample_rate, steps)

Schedule = tuple[Run, ...]


# ---------------------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------------------


def read(text: str, dataset_size: int | None = None) -> Schedule:
    """The phases of a schedule file: CSV with a header row, a JSON list of phase objects, an Opacus
    accountant history (JSON list of [noise_multiplier, sample_rate, steps]), or dp_accounting events (a JSON
    object, or a list of them, with `class_name` keys as `to_named_tuple()._asdict()` writes them).
    InputError naming the row (1 = the first phase) and column of anything wrong."""
    return read_noted(text, dataset_size)[0]


def read_noted(text: str, dataset_size: int | None = None) -> tuple[Schedule, list[str]]:
    """The phases of a schedule file (`read`) and, for dp_accounting events, the notes on where
    dp_accounting's accountants take them otherwise than gdpcli (dp_events.notes, as `compose` prints
    them: replace-one events at sensitivity 2C); no notes for the other forms."""
    text = text.strip()
    if not text:
        raise InputError(
            f"{parameter('schedule')}: the schedule is empty", "give a CSV header row and one row per phase"
        )
    if text[0] in "[{":
        phases, notes = _from_json(text, dataset_size)
    else:
        phases, notes = tuple(_phase(row, index, dataset_size) for index, row in _csv_rows(text)), []
    if not phases:
        raise InputError(f"{parameter('schedule')}: the schedule has no phases")
    return phases, notes


def _csv_rows(text: str) -> Iterator[tuple[int, dict[str, str]]]:
    reader = csv.DictReader(io.StringIO(text))
    unknown = [name for name in reader.fieldnames or () if name.strip() not in COLUMNS]
    if unknown:
        raise InputError(
            f"{parameter('schedule')}: unknown column {unknown[0]!r}", "columns: " + ", ".join(COLUMNS)
        )
    for index, row in enumerate(reader, start=1):
        if None in row:
            raise InputError(f"{parameter('schedule')} row {index}: more cells than columns")
        yield index, {key.strip(): value.strip() for key, value in row.items() if value and value.strip()}


def _from_json(text: str, dataset_size: int | None) -> tuple[Schedule, list[str]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(
            f"{parameter('schedule')}: not valid JSON ({error.msg} at line {error.lineno})"
        ) from None
    items = data if isinstance(data, list) else [data]
    if items and all(isinstance(item, dict) and "class_name" in item for item in items):
        return _from_events(items)
    phases = []
    for index, item in enumerate(items, start=1):
        if isinstance(item, list) and len(item) == _OPACUS_ENTRY:  # Opacus: (noise, rate, steps)
            item = dict(zip(("noise_multiplier", "sampling_rate", "steps"), item, strict=True))
        if not isinstance(item, dict):
            raise InputError(
                f"{parameter('schedule')} row {index}: a phase is an object of {', '.join(COLUMNS)} "
                "or an Opacus history entry [noise_multiplier, sample_rate, steps]"
            )
        unknown = [key for key in item if key not in COLUMNS]
        if unknown:
            raise InputError(
                f"{parameter('schedule')} row {index}: unknown column {unknown[0]!r}", ", ".join(COLUMNS)
            )
        phases.append(_phase({k: str(v) for k, v in item.items() if v is not None}, index, dataset_size))
    return tuple(phases), []


def _phase(cells: dict[str, str], index: int, dataset_size: int | None) -> Run:
    """One phase from its cells (strings), checked; InputError naming row and column."""

    def number(column: str, whole: bool = False) -> float | None:
        if column not in cells:
            return None
        text = cells[column]
        try:
            value = float(text)
        except ValueError:
            raise InputError(
                f"{parameter('schedule')} row {index}, column {column}: {text!r} is not a number"
            ) from None
        if not (math.isfinite(value) and value > 0) or (whole and not value.is_integer()):
            kind = "a whole number >= 1" if whole else "a positive finite number"
            raise InputError(
                f"{parameter('schedule')} row {index}, column {column}: must be {kind}, got {text}"
            )
        return value

    def one_of(first: str, second: str) -> str:
        given = [column for column in (first, second) if column in cells]
        if len(given) != 1:
            raise InputError(
                f"{parameter('schedule')} row {index}: give exactly one of the columns {first} and {second}"
            )
        return given[0]

    sampling = cells.get("sampling", "poisson")
    if sampling not in PHASE_SAMPLING:
        raise InputError(
            f"{parameter('schedule')} row {index}, column sampling: unknown scheme {sampling!r}",
            "a phase is poisson or fixed",
        )
    if "noise_multiplier" not in cells:
        raise InputError(f"{parameter('schedule')} row {index}: the column noise_multiplier is missing")
    noise = number("noise_multiplier")
    assert noise is not None  # present, checked above
    one_of("batch_size", "sampling_rate")
    length_column = one_of("steps", "epochs")
    batch_size, rate = number("batch_size", whole=True), number("sampling_rate")
    steps, epochs = number("steps", whole=True), number("epochs")
    if rate is not None and rate > 1:
        raise InputError(
            f"{parameter('schedule')} row {index}, column sampling_rate: must be in (0, 1], got {rate:g}"
        )
    if batch_size is not None and (dataset_size is None or batch_size > dataset_size):
        need = (
            f"needs {parameter('dataset_size')}"
            if dataset_size is None
            else f"exceeds {parameter('dataset_size')} {dataset_size}"
        )
        raise InputError(f"{parameter('schedule')} row {index}, column batch_size: {need}")
    try:
        length = RunLength(
            dataset_size if batch_size is not None else None,
            None if batch_size is None else int(batch_size),
            rate,
            epochs,
            None if steps is None else int(steps),
        )
        q, total, _ = schedule(length, sampling)
    except InputError as error:
        raise InputError(
            f"{parameter('schedule')} row {index}, column {length_column}: {error.message}"
        ) from None
    return Run(q, total, noise, sampling, number("sensitivity"))


def _from_events(items: list[dict[str, Any]]) -> tuple[Schedule, list[str]]:
    """The phases of dp_accounting events (_from_event) and the notes on their conventions
    (dp_events.notes)."""
    from gdpcli import dp_events

    try:
        read = [dp_events.read(item) for item in items]
    except InputError as error:
        raise InputError(f"{parameter('schedule')}: {error.message}", error.hint) from None
    phases = tuple(phase for found in read for phase in _from_event(found))
    return phases, dp_events.notes([item for found in read for item in found])


def _from_event(found: list[Repeated]) -> list[Run]:
    """Phases of a dp_accounting event as gdpcli.dp_events reads it (its conventions): its Gaussian steps,
    Poisson-sampled, sampled without replacement or on the whole data."""
    from gdpcli import dp_events, events

    replace_one = dp_events.relation_of(found) is events.Neighbouring.REPLACE_ONE
    whole = events.Sampling.FIXED if replace_one else events.Sampling.POISSON
    phases = []
    for item in found:
        gaussian, scheme = item.mechanism, item.step.scheme or whole
        if not isinstance(gaussian, events.Gaussian):
            raise InputError(
                f"{parameter('schedule')}: {item.describe()} is not a DP-SGD phase",
                "a phase is a Gaussian event, Poisson-sampled, sampled without replacement or alone",
            )
        own = None if gaussian.sens == scheme.neighbouring.sensitivity else gaussian.sens
        phases.append(Run(item.step.sampling_rate or 1.0, item.times, gaussian.sigma, scheme, own))
    return phases


# ---------------------------------------------------------------------------------------------------------
# Accounting
# ---------------------------------------------------------------------------------------------------------


def merged(phases: Sequence[Run], runs: int = 1) -> Schedule:
    """The phases with equal ones (all but steps) joined by summing their steps, each step count times
    `runs` (K identical runs of a hyper-parameter search are the K-fold composition), in first-seen order."""
    steps: dict[Run, int] = {}
    for phase in phases:
        key = phase.with_steps(1)
        steps[key] = steps.get(key, 0) + phase.steps * runs
    return tuple(key.with_steps(total) for key, total in steps.items())


def check(phases: Schedule) -> None:
    """InputError unless every phase is a valid run and all refer to one neighbouring relation."""
    for phase in phases:
        check_run(phase)
    relations = {phase.relation for phase in phases}
    if len(relations) > 1:
        raise InputError(
            "the schedule mixes neighbouring relations (" + ", ".join(sorted(map(str, relations))) + ")",
            "Poisson phases are add/remove, fixed-size phases replace-one: their guarantees do not compose",
        )
    if any(phase.steps > MAX_STEPS for phase in phases):
        raise InputError(f"a phase has more than {MAX_STEPS:.0e} steps")


def figures(phases: Schedule, delta: float, method: Method) -> list[Figures]:
    """epsilon at delta of the schedule by method.name (a METHODS word), each figure labelled: the plain
    run's figures for one phase, else those of the accountants `gdpcli compose` uses for its events."""
    from gdpcli import accounting
    from gdpcli.vocabulary import CONVERSIONS

    check(phases)
    if len(phases) == 1:
        return dpsgd.figures(
            phases[0], delta, method.name, accuracy=method.accuracy, conversion=method.conversion
        )
    conversions = CONVERSIONS if method.conversion == "all" else (method.conversion,)
    specs = [phase.spec() for phase in phases]
    accountants, _ = accounting.select(specs, method.name, accuracy=method.accuracy, conversions=conversions)
    return [figure for accountant in accountants for figure in accountant.epsilon(np.asarray([delta]))]


def certified(phases: Schedule, delta: float, method: Method) -> Figures:
    """The figure a budget may rely on (see dpsgd.certified): the smallest exact or upper bound."""
    if len(phases) == 1:
        return dpsgd.certified(phases[0], delta, method)
    try:
        return smallest(figures(phases, delta, method))
    except ComputationError:
        raise ComputationError(
            f"{parameter('method')} {method.name} gives no upper bound on epsilon for this schedule"
        ) from None


def scaled(phases: Schedule, factor: float, last_only: bool) -> Schedule:
    """The schedule with every noise multiplier (or the last phase's) multiplied by factor."""
    first = len(phases) - 1 if last_only else 0
    return tuple(
        dataclasses.replace(phase, noise_multiplier=phase.noise_multiplier * factor) if i >= first else phase
        for i, phase in enumerate(phases)
    )


def epochs(phases: Schedule) -> float:
    """Passes over the data: the sum of the phases' T q."""
    return sum(phase.epochs for phase in phases)
