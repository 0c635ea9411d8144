"""A DP-SGD run's description: rate, steps, noise, batch scheme and group, and the checks on it.

The noise multiplier sigma is the ecosystem's (Opacus, TF Privacy, dp-accounting): noise standard deviation
/ clipping norm C. One step's sensitivity (in units of C) follows from the batch scheme's neighbouring
relation (events.Neighbouring.sensitivity) unless set. How the figures of a run are computed is
gdpcli.accounting.dpsgd's; this module knows only what a run is.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction

from gdpcli import events
from gdpcli.accounting.group import check_group, group_step
from gdpcli.errors import ComputationError, InputError
from gdpcli.events import Repeated, Sampling
from gdpcli.vocabulary import BATCHING

MAX_STEPS = 10**12


@dataclass(frozen=True)
class Run:
    """One DP-SGD run: T steps at rate q (Poisson) or p = m/n (fixed size), noise multiplier sigma (noise
    std / C), batches drawn by `sampling` (a Sampling member; its word is taken too); sensitivity None
    means the neighbouring relation's own (events.Neighbouring.sensitivity). dataset_size N and
    max_batch_size matter to schemes that require them (truncated-poisson). group is K of group privacy
    (K records per user, each sampled on its own: gdpcli.accounting.group), 1 for records."""

    sampling_rate: float
    steps: int
    noise_multiplier: float
    sampling: Sampling = Sampling.POISSON
    sensitivity: float | None = None
    dataset_size: int | None = None
    max_batch_size: int | None = None
    group: int = 1

    def __post_init__(self) -> None:
        if self.sampling not in BATCHING:
            raise InputError(f"unknown sampling {self.sampling!r}", "allowed: " + ", ".join(BATCHING))
        object.__setattr__(self, "sampling", Sampling(self.sampling))

    @property
    def relation(self) -> events.Neighbouring:
        """The neighbouring relation the guarantee refers to: the batch scheme's."""
        return self.sampling.neighbouring

    @property
    def neighbouring(self) -> str:
        """The neighbouring relation, as a word."""
        return str(self.relation)

    @property
    def step_sensitivity(self) -> float:
        """The L2 sensitivity of one step's summed clipped gradients, in units of C."""
        return self.relation.sensitivity if self.sensitivity is None else self.sensitivity

    @property
    def step_mu(self) -> float:
        """mu of one step before sampling: sensitivity / sigma (GDP paper Thm 1)."""
        return self.step_sensitivity / self.noise_multiplier

    @property
    def effective_noise(self) -> float:
        """The noise in units of the sensitivity, 1 / step_mu: the sigma of the GDP paper's formulas."""
        return self.noise_multiplier / self.step_sensitivity

    @property
    def epochs(self) -> float:
        """Passes over the data: T q (T / b where an epoch is b = ceil(N / B) batches)."""
        if self.sampling.facts.epochs_of_batches:
            return self.steps / self.sampling.steps_per_epoch(self.sampling_rate)
        return self.steps * self.sampling_rate

    def with_steps(self, steps: int) -> Run:
        """The same run with another number of steps."""
        return dataclasses.replace(self, steps=steps)

    def spec(self) -> Repeated:
        """The run as an event: T-fold subsampled Gaussian (plain Gaussian when q = 1)."""
        if not self.sampling.per_step:
            raise ComputationError(
                f"a {self.sampling} run is not a composition of independently sampled steps",
                "its figures come from its batch scheme's bounds (gdpcli.accounting.dpsgd)",
            )
        run = events.dpsgd(
            self.noise_multiplier, self.sampling_rate, self.steps, self.sampling, self.sensitivity
        )
        if self.group == 1:
            return run
        return Repeated(group_step(run.step, self.group), self.steps)


def _exact_ratio(value: float) -> Fraction:
    """The decimal the user typed (shortest repr), so that 0.1 epochs of 2560/256 is exactly 1 step."""
    return Fraction(repr(float(value)))


def sampling_rate_of(dataset_size: int | None, batch_size: int | None, sampling_rate: float | None) -> float:
    """q = B / N from dataset and batch size, or the given rate; InputError for missing or mixed inputs."""
    if sampling_rate is not None:
        if batch_size is not None or dataset_size is not None:
            raise InputError(
                "give either --sampling-rate or --dataset-size with --batch-size, not both",
                "the rate is B / N",
            )
        if not (math.isfinite(sampling_rate) and 0 < sampling_rate <= 1):
            raise InputError(f"--sampling-rate: must be in (0, 1], got {sampling_rate!r}")
        return float(sampling_rate)
    if dataset_size is None or batch_size is None:
        raise InputError(
            "the sampling rate is missing", "give --dataset-size N and --batch-size B, or --sampling-rate q"
        )
    if dataset_size < 1 or batch_size < 1:
        raise InputError(f"--dataset-size and --batch-size must be >= 1, got {dataset_size} and {batch_size}")
    if batch_size > dataset_size:
        raise InputError(f"--batch-size {batch_size} exceeds --dataset-size {dataset_size}")
    return batch_size / dataset_size


def schedule(
    dataset_size: int | None,
    batch_size: int | None,
    sampling_rate: float | None,
    epochs: float | None,
    steps: int | None,
    sampling: Sampling | str = Sampling.POISSON,
) -> tuple[float, int, float]:
    """(q, T, epochs) of a run: q = B / N, T = ceil(E N / B) (or ceil(E / q) with a rate), epochs = T q;
    shuffled batches walk through b = ceil(N / B) batches an epoch: T = ceil(E b), epochs = T / b.

    Exactly one of epochs and steps; InputError for inconsistent or missing combinations.
    """
    q = sampling_rate_of(dataset_size, batch_size, sampling_rate)
    if (epochs is None) == (steps is None):
        raise InputError("give exactly one of --epochs and --steps", "T = ceil(epochs N / B) steps")
    if steps is None:
        if not (math.isfinite(epochs) and epochs > 0):
            raise InputError(f"--epochs: must be a positive finite number, got {epochs!r}")
        ratio = Fraction(batch_size, dataset_size) if sampling_rate is None else _exact_ratio(q)
        if Sampling(sampling).facts.epochs_of_batches:
            ratio = Fraction(1, events.batches_per_epoch(q))
        steps = math.ceil(_exact_ratio(epochs) / ratio)
    if not 1 <= steps <= MAX_STEPS:
        raise InputError(f"the run has {steps} steps", f"allowed: 1 <= steps <= {MAX_STEPS:.0e}")
    run = Run(q, int(steps), 1.0, sampling)
    return q, run.steps, run.epochs


def repeated(run: Run, runs: int) -> Run:
    """K identical runs on the same data (a hyper-parameter search): their K-fold composition, the run of
    K T steps, each step (and epoch) a fresh draw of its batch. Where an epoch is b batches (shuffling,
    balls-in-bins) that holds only when each run ends at an epoch boundary; InputError otherwise."""
    if runs > 1 and run.sampling.facts.epochs_of_batches:
        batches = events.batches_per_epoch(run.sampling_rate)
        if run.steps % batches:
            raise InputError(
                f"--runs with --sampling {run.sampling} needs whole epochs of {batches} steps each, got "
                f"{run.steps}",
                "each run's partial epoch is a fresh one",
            )
    return run.with_steps(run.steps * runs)


def check_run(run: Run) -> None:
    """InputError unless sigma > 0 and the sensitivity are finite, 0 < q <= 1, 1 <= T <= MAX_STEPS and the
    scheme has what it requires."""
    if not (math.isfinite(run.noise_multiplier) and run.noise_multiplier > 0):
        raise InputError(
            f"--noise-multiplier: must be a positive finite number, got {run.noise_multiplier!r}"
        )
    if run.sensitivity is not None and not (math.isfinite(run.sensitivity) and run.sensitivity > 0):
        raise InputError(f"--sensitivity: must be a positive finite number, got {run.sensitivity!r}")
    if not 0 < run.sampling_rate <= 1:
        raise InputError(f"the sampling rate must be in (0, 1], got {run.sampling_rate!r}")
    if not 1 <= run.steps <= MAX_STEPS:
        raise InputError(f"steps must be in [1, {MAX_STEPS:.0e}], got {run.steps}")
    required = dict(run.sampling.facts.requires)
    for field, option in required.items():
        if getattr(run, field) is None:
            raise InputError(f"--sampling {run.sampling} needs {option}")
    if run.max_batch_size is not None and "max_batch_size" not in required:
        raise InputError("--max-batch-size caps the batches of --sampling truncated-poisson", "drop it")
    _check_group(run)


def _check_group(run: Run) -> None:
    """InputError unless K is a whole number >= 1; ComputationError for a group under a batch scheme
    without a rigorous group analysis here (every scheme but Poisson)."""
    check_group(run.group)
    sampled = run.sampling_rate < 1.0 or not run.sampling.per_step
    if run.group > 1 and run.sampling is not Sampling.POISSON and sampled:
        raise ComputationError(
            f"--group with --sampling {run.sampling}: no rigorous group bound for these batches here",
            "use --sampling poisson (each record sampled on its own); for fixed-size batches GDP paper Thm 3 "
            "holds for the whole run, 1 - (1 - f)^{o K} with f its trade-off function, but is not computed",
        )
