"""A DP-SGD run (the event gdpcli.events.Run) from the command line's numbers, and the checks on it: the
rate from dataset and batch size and the steps from epochs (RunLength, the five numbers as given), K runs,
and what a run must hold to be accounted.
How the figures of a run are computed is gdpcli.accounting.dpsgd's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from gdpcli import events
from gdpcli.accounting.group import check_group
from gdpcli.accounting.schemes import STEPS
from gdpcli.errors import ComputationError, InputError, parameter
from gdpcli.events import Run, Sampling

MAX_STEPS = 10**12
_SAMPLING_RATE, _DATASET_SIZE, _BATCH_SIZE = map(parameter, ("sampling_rate", "dataset_size", "batch_size"))
_EPOCHS, _STEPS, _RUNS = map(parameter, ("epochs", "steps", "runs"))
_SAMPLING, _MAX_BATCH_SIZE, _GROUP = map(parameter, ("sampling", "max_batch_size", "group"))
"""The parameters the messages name (errors.parameter: the command line spells them as its options)."""
STEPS_OF_EPOCHS = "T = ceil(epochs N / B) steps"
"""How the steps follow from the epochs, where the rate is B / N."""


def _exact_ratio(value: float) -> Fraction:
    """The decimal the user typed (shortest repr), so that 0.1 epochs of 2560/256 is exactly 1 step."""
    return Fraction(repr(float(value)))


@dataclass(frozen=True)
class RunLength:
    """How a run's rate and length are given, as the command line gives them: the dataset size N with the
    batch size B (q = B / N) or the rate q, and the epochs E or the steps T."""

    dataset_size: int | None = None
    batch_size: int | None = None
    sampling_rate: float | None = None
    epochs: float | None = None
    steps: int | None = None

    @property
    def rate_given(self) -> bool:
        """Whether any of N, B and q is given."""
        return (self.dataset_size, self.batch_size, self.sampling_rate) != (None, None, None)

    def rate(self) -> float:
        """q = B / N from dataset and batch size, or the given rate; InputError for missing or mixed
        inputs."""
        dataset_size, batch_size, sampling_rate = self.dataset_size, self.batch_size, self.sampling_rate
        if sampling_rate is not None:
            if batch_size is not None or dataset_size is not None:
                raise InputError(
                    f"give either {_SAMPLING_RATE} or {_DATASET_SIZE} with {_BATCH_SIZE}, not both",
                    "the rate is B / N",
                )
            if not (math.isfinite(sampling_rate) and 0 < sampling_rate <= 1):
                raise InputError(f"{_SAMPLING_RATE}: must be in (0, 1], got {sampling_rate!r}")
            return float(sampling_rate)
        if dataset_size is None or batch_size is None:
            raise InputError(
                "the sampling rate is missing",
                f"give {_DATASET_SIZE} N and {_BATCH_SIZE} B, or {_SAMPLING_RATE} q",
            )
        if dataset_size < 1 or batch_size < 1:
            raise InputError(
                f"{_DATASET_SIZE} and {_BATCH_SIZE} must be >= 1, got {dataset_size} and {batch_size}"
            )
        if batch_size > dataset_size:
            raise InputError(f"{_BATCH_SIZE} {batch_size} exceeds {_DATASET_SIZE} {dataset_size}")
        return batch_size / dataset_size

    def epoch_steps(self) -> Fraction:
        """The steps of an epoch, exactly: N / B, or 1 / q for the decimal q typed; the rate must have been
        checked (rate())."""
        if self.sampling_rate is None:
            assert self.dataset_size is not None and self.batch_size is not None  # checked by rate()
            return Fraction(self.dataset_size, self.batch_size)
        return 1 / _exact_ratio(self.sampling_rate)

    def total_steps(self, per_epoch: Fraction | int, hint: str) -> int:
        """T: the given steps, or ceil(E n) for E epochs of n = per_epoch steps; InputError unless exactly
        one of E and T is given (`hint` says how T follows from E) and 1 <= T <= MAX_STEPS."""
        if (self.epochs is None) == (self.steps is None):
            raise InputError(f"give exactly one of {_EPOCHS} and {_STEPS}", hint)
        steps = self.steps
        if self.epochs is not None:
            if not (math.isfinite(self.epochs) and self.epochs > 0):
                raise InputError(f"{_EPOCHS}: must be a positive finite number, got {self.epochs!r}")
            steps = math.ceil(_exact_ratio(self.epochs) * per_epoch)
        if not 1 <= steps <= MAX_STEPS:
            raise InputError(f"the run has {steps} steps", f"allowed: 1 <= steps <= {MAX_STEPS:.0e}")
        return int(steps)


def schedule(length: RunLength, sampling: Sampling | str = Sampling.POISSON) -> tuple[float, int, float]:
    """(q, T, epochs) of a run: q = B / N, T = ceil(E N / B) (or ceil(E / q) with a rate), epochs = T q;
    shuffled batches walk through b = ceil(N / B) batches an epoch: T = ceil(E b), epochs = T / b.

    Exactly one of epochs and steps; InputError for inconsistent or missing combinations.
    """
    q = length.rate()
    per_epoch = length.epoch_steps()
    if Sampling(sampling).facts.epochs_of_batches:
        per_epoch = Fraction(events.batches_per_epoch(q))
    run = Run(q, length.total_steps(per_epoch, STEPS_OF_EPOCHS), 1.0, sampling)
    return q, run.steps, run.epochs


def repeated(run: Run, runs: int) -> Run:
    """K identical runs on the same data (a hyper-parameter search): their K-fold composition, the run of
    K T steps, each step (and epoch) a fresh draw of its batch. Where an epoch is b batches (shuffling,
    balls-in-bins) that holds only when each run ends at an epoch boundary; InputError otherwise."""
    if runs > 1 and run.sampling.facts.epochs_of_batches:
        batches = events.batches_per_epoch(run.sampling_rate)
        if run.steps % batches:
            raise InputError(
                f"{_RUNS} with {_SAMPLING} {run.sampling} needs whole epochs of {batches} steps each, got "
                f"{run.steps}",
                "each run's partial epoch is a fresh one",
            )
    return run.with_steps(run.steps * runs)


_SMALLEST_EPOCH_RATE = 2.0**-53
"""The smallest rate of a scheme whose epochs count batches (b = ceil(1 / q): whole numbers exact to 2^53)."""


def check_run(run: Run) -> None:
    """InputError unless 1 <= T <= MAX_STEPS and the scheme has what it requires (events.Run checks its
    other numbers itself); ComputationError for a group the scheme has no analysis of."""
    if not 1 <= run.steps <= MAX_STEPS:
        raise InputError(f"steps must be in [1, {MAX_STEPS:.0e}], got {run.steps}")
    required = run.sampling.facts.requires
    for field in required:
        if getattr(run, field) is None:
            raise InputError(f"{_SAMPLING} {run.sampling} needs {parameter(field)}")
    if run.sampling.facts.epochs_of_batches and run.sampling_rate < _SMALLEST_EPOCH_RATE:
        raise InputError(
            f"{_SAMPLING_RATE} {run.sampling_rate:g} makes {1 / run.sampling_rate:.3g} batches an epoch "
            f"under {_SAMPLING} {run.sampling}, more than the 2^53 counted exactly",
            f"give a rate of at least {_SMALLEST_EPOCH_RATE:.3g}",
        )
    if run.max_batch_size is not None and run.sampling not in events.taking("max_batch_size"):
        schemes = " or ".join(map(str, events.taking("max_batch_size")))
        raise InputError(f"{_MAX_BATCH_SIZE} caps the batches of {_SAMPLING} {schemes}", "drop it")
    _check_group(run)


def _check_group(run: Run) -> None:
    """InputError unless K is a whole number >= 1; ComputationError for a group of sampled records under a
    batch scheme without a rigorous group analysis here (StepAnalysis.groups: Poisson only)."""
    check_group(run.group)
    sampled = run.sampling_rate < 1.0 or not run.sampling.per_step
    analysis = STEPS.get(run.sampling)
    if run.group > 1 and sampled and not (analysis is not None and analysis.groups):
        raise ComputationError(
            f"{_GROUP} with {_SAMPLING} {run.sampling}: no rigorous group bound for these batches here",
            f"use {_SAMPLING} poisson (each record sampled on its own); for fixed-size batches GDP paper "
            "Thm 3 holds for the whole run, 1 - (1 - f)^{o K} with f its trade-off function, but is not "
            "computed",
        )
