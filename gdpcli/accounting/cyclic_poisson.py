"""DP-SGD with cyclic Poisson batches: the data is split into b parts (bands), and step t draws its batch
from part t mod b only, each of its examples joining independently with probability p (jax_privacy's
CyclicPoissonSampling and `amplified_bandmf_event`; Choquette-Choo et al., "(Amplified) Banded Matrix
Factorization", NeurIPS 2023, arXiv:2306.08153, Sec. 5, Algorithm 2). The expected batch is p N / b, so
from a dataset of N and an expected batch of B the rate is p = b B / N; an epoch is b / p steps. b = 1 is
Poisson sampling.

Neighbouring relation: add/remove one example (dp_accounting's PLD gives zero-out the same figures). An
example of part j is in the batches of steps j, j + b, j + 2b, ... only: in ceil(T / b) of the T steps
for the parts j < T mod b (or every part when b divides T), floor(T / b) for the others. The steps
outside its part do not read it, so its privacy loss is that of the composition of its k = ceil(T / b)
Poisson-subsampled Gaussian steps (adaptive composition), the worst example's: `reduced` is that run,
answered by every method that answers Poisson runs (the reduction of the paper's Thm 4 with the identity
strategy; a banded strategy's sensitivity enters as the step's sensitivity, gdpcli.accounting.mf).
"""

from __future__ import annotations

import dataclasses

from gdpcli.accounting.run import STEPS_OF_EPOCHS, RunLength
from gdpcli.accounting.schemes import SchemeReduction
from gdpcli.errors import InputError, parameter
from gdpcli.events import Run, Sampling

_BANDS, _BATCH_SIZE, _DATASET_SIZE = map(parameter, ("bands", "batch_size", "dataset_size"))


def participations(steps: int, bands: int) -> int:
    """k = ceil(T / b): the most steps one example's part is sampled in (parts j < T mod b)."""
    return -(-steps // bands)


def reduced(run: Run) -> Run:
    """The Poisson run of the worst example of a cyclic-Poisson run: k = ceil(T / b) steps at the rate p
    and the run's sensitivity (module docstring). InputError without bands."""
    bands = check_bands(run)
    return dataclasses.replace(
        run,
        sampling=Sampling.POISSON,
        steps=participations(run.steps, bands),
        sensitivity=run.step_sensitivity,
        bands=None,
    )


def check_bands(run: Run) -> int:
    """b of a cyclic-Poisson run; InputError where it is missing."""
    if run.bands is None:
        raise InputError(f"{parameter('sampling')} cyclic-poisson needs {_BANDS}", "the number of parts b")
    return run.bands


def rate(length: RunLength, bands: int) -> float:
    """p: the given rate, or b B / N from the expected batch B; InputError where b B > N (a part of N / b
    examples cannot hold an expected batch of B)."""
    given = length.rate()
    if length.sampling_rate is not None:
        return given
    assert length.dataset_size is not None and length.batch_size is not None  # checked by length.rate()
    if bands * length.batch_size > length.dataset_size:
        raise InputError(
            f"{_BANDS} {bands} x {_BATCH_SIZE} {length.batch_size} exceeds {_DATASET_SIZE} "
            f"{length.dataset_size}",
            "each of the b parts, N / b examples, must hold the expected batch B",
        )
    return min(given * bands, 1.0)


def schedule(length: RunLength, bands: int) -> tuple[float, int]:
    """(p, T) of a cyclic-Poisson run: T = ceil(E N / B) = ceil(E b / p) steps for E epochs (an epoch passes
    over every part once in expectation), or the given steps; the checks are RunLength's, and b >= 1."""
    if bands < 1:
        raise InputError(f"{_BANDS}: must be a whole number >= 1, got {bands}")
    p = rate(length, bands)
    per_epoch = length.epoch_steps() * (1 if length.sampling_rate is None else bands)
    return p, length.total_steps(per_epoch, STEPS_OF_EPOCHS)


REDUCTION = SchemeReduction(Sampling.CYCLIC_POISSON, reduced)
"""The scheme as gdpcli.accounting.dpsgd plans it: as its reduced run, which every method answers."""
