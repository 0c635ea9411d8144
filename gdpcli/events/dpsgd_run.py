"""A DP-SGD run as an event: `Run` (rate, steps, noise multiplier, batch scheme, group) and `dpsgd`, which
builds it. The noise multiplier sigma is the ecosystem's (Opacus, TF Privacy, dp-accounting): noise standard
deviation / clipping norm C. One step's sensitivity (in units of C) follows from the batch scheme's
neighbouring relation (Neighbouring.sensitivity) unless set.

A run under a scheme that draws each step's sample on its own (poisson, fixed) is the composition of its
steps (`Run.spec`, a `Repeated`); under a scheme that draws the batches of the whole run together
(shuffle, balls-in-bins, truncated-poisson) it is an event of its own, accounted by the scheme's bounds
(gdpcli.accounting.dpsgd).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from gdpcli.errors import ComputationError, InputError, parameter
from gdpcli.events.gaussian import Gaussian
from gdpcli.events.group import group_step
from gdpcli.events.repeated import Repeated
from gdpcli.events.sampled import Sampled, Step
from gdpcli.events.sampling import Neighbouring, Sampling, batches_per_epoch, taking


@dataclass(frozen=True)
class Run:
    """One DP-SGD run: T steps at rate q (Poisson) or p = m/n (fixed size), noise multiplier sigma (noise
    std / C), batches drawn by `sampling` (a Sampling member; its word is taken too); sensitivity None
    means the neighbouring relation's own (events.Neighbouring.sensitivity). dataset_size N and
    max_batch_size matter to schemes that require them (truncated-poisson); bands b to cyclic-poisson, whose
    rate is the per-step rate p within the active part (an epoch is b / p steps). group is K of group
    privacy (K records per user, each sampled on its own: gdpcli.accounting.group), 1 for records.
    participations k (balls-in-bins only): each example in k distinct batches of every round of
    round_steps batches."""

    sampling_rate: float
    steps: int
    noise_multiplier: float
    sampling: Sampling = Sampling.POISSON
    sensitivity: float | None = None
    dataset_size: int | None = None
    max_batch_size: int | None = None
    group: int = 1
    participations: int = 1
    bands: int | None = None

    def __post_init__(self) -> None:
        """InputError, naming the parameter, unless sigma and the sensitivity are positive and finite,
        0 < q <= 1, the sampling is a batch scheme's word and participations a whole number >= 1, above 1
        only for balls-in-bins (the steps are the accountant's to check: a budget may be 0 steps)."""
        if not (math.isfinite(self.noise_multiplier) and self.noise_multiplier > 0):
            raise InputError(
                f"{parameter('noise_multiplier')}: must be a positive finite number, got "
                f"{self.noise_multiplier!r}"
            )
        if self.sensitivity is not None and not (math.isfinite(self.sensitivity) and self.sensitivity > 0):
            raise InputError(
                f"{parameter('sensitivity')}: must be a positive finite number, got {self.sensitivity!r}"
            )
        if not 0 < self.sampling_rate <= 1:
            raise InputError(f"the sampling rate must be in (0, 1], got {self.sampling_rate!r}")
        if self.bands is not None and not (isinstance(self.bands, int) and self.bands >= 1):
            raise InputError(f"{parameter('bands')}: must be a whole number >= 1, got {self.bands!r}")
        words = [scheme.value for scheme in Sampling]
        if self.sampling not in words:
            raise InputError(f"unknown sampling {self.sampling!r}", "allowed: " + ", ".join(words))
        object.__setattr__(self, "sampling", Sampling(self.sampling))
        if self.bands is not None and self.sampling not in taking("bands"):
            schemes = _words("bands")
            raise InputError(f"{parameter('bands')} splits the data of the {schemes} scheme", "drop it")
        self._check_participations()

    def _check_participations(self) -> None:
        """InputError unless participations is a whole number >= 1, and 1 but for the schemes that take it
        (balls-in-bins)."""
        k = self.participations
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InputError(f"{parameter('participations')}: must be a whole number >= 1, got {k!r}")
        if k > 1 and self.sampling not in taking("participations"):
            schemes = _words("participations")
            raise InputError(
                f"{parameter('participations')} {k} counts the batches of each example under "
                f"{parameter('sampling')} {schemes}, not {self.sampling}",
                f"drop it or use {schemes}",
            )

    @property
    def round_steps(self) -> int:
        """t, the steps of one allocation round of balls-in-bins: ceil(k N / B) = ceil(k / q), in which
        each example is in k = participations distinct batches (for k = 1 an epoch, b = ceil(N / B))."""
        return batches_per_epoch(self.sampling_rate / self.participations)

    @property
    def relation(self) -> Neighbouring:
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
        """Passes over the data: T q (T / b where an epoch is b = ceil(N / B) batches; T p / b with b
        bands)."""
        if self.sampling.facts.epochs_of_batches:
            return self.steps / self.sampling.steps_per_epoch(self.sampling_rate)
        return self.steps * self.sampling_rate / (self.bands or 1)

    def with_steps(self, steps: int) -> Run:
        """The same run with another number of steps."""
        return dataclasses.replace(self, steps=steps)

    def spec(self) -> Repeated:
        """The run as an event: T Gaussian steps, each on a sample drawn by the scheme at the rate (the
        Gaussian on the whole data at rate 1), or for groups of K records each step's group version."""
        if not self.sampling.per_step:
            raise ComputationError(
                f"a {self.sampling} run is not a composition of independently sampled steps",
                "its figures come from its batch scheme's bounds (gdpcli.accounting.dpsgd)",
            )
        gaussian = Gaussian(self.noise_multiplier, self.step_sensitivity)
        step: Step = gaussian
        if self.sampling_rate != 1.0:
            step = Sampled(gaussian, self.sampling_rate, self.sampling)
        return Repeated(step if self.group == 1 else group_step(step, self.group), self.steps)


def dpsgd(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    sampling: Sampling | str = Sampling.POISSON,
    sensitivity: float | None = None,
    *,
    group: int = 1,
    dataset_size: int | None = None,
    max_batch_size: int | None = None,
    participations: int = 1,
    bands: int | None = None,
) -> Repeated | Run:
    """A DP-SGD run as an event: `steps` Gaussian steps with noise std = noise_multiplier x C (the Opacus,
    TF Privacy and dp-accounting convention), each on a batch drawn by `sampling` (any batch scheme,
    events.Sampling) at `sampling_rate`. The sensitivity (in units of C) follows from the scheme's
    neighbouring relation unless given (Poisson: add/remove, 1; fixed-size batches: replace-one, 2), as in
    `gdpcli sgd`; at rate 1 every step sees the whole data. group=K: the guarantee for groups of K records
    (Poisson batches, each record sampled on its own). truncated-poisson needs dataset_size and
    max_batch_size, cyclic-poisson its bands (sampling_rate is then the rate within the active part).
    participations=k (balls-in-bins): each example in k distinct batches of every round of
    ceil(k / sampling_rate) steps, instead of one batch an epoch.

    The composition of its steps (a Repeated) where the scheme samples each step on its own, else the Run.
    """
    run = Run(
        sampling_rate,
        steps,
        noise_multiplier,
        sampling,
        sensitivity,
        dataset_size,
        max_batch_size,
        group,
        participations,
        bands,
    )
    return run.spec() if run.sampling.per_step else run


def _words(field: str) -> str:
    """The words of the schemes that take the run's parameter `field`, for a message."""
    return " or ".join(map(str, taking(field)))
