"""How batches are drawn (`Sampling`, one member per batch scheme, with its entry in SCHEMES) and which
datasets are neighbours (`Neighbouring`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum


class _Word(str, Enum):
    """An enumeration of words: a member prints as its word."""

    def __str__(self) -> str:
        return self.value


class Sampling(_Word):
    """How the batches are drawn: the batch schemes of gdpcli, one member each (`facts` holds the rest).

    poisson and fixed draw each step's sample on its own (a run of them is a composition of `Sampled`
    steps); shuffle, balls-in-bins and truncated-poisson draw the batches of a whole run together, so that
    their runs are no such composition (gdpcli.accounting.dpsgd accounts them by their own bounds);
    cyclic-poisson samples each step within one of b parts of the data, so that one example's run is the
    composition of its ceil(T / b) Poisson-sampled steps (gdpcli.accounting.cyclic_poisson).
    """

    POISSON = "poisson"
    FIXED = "fixed"
    SHUFFLE = "shuffle"
    BALLS_IN_BINS = "balls-in-bins"
    TRUNCATED_POISSON = "truncated-poisson"
    CYCLIC_POISSON = "cyclic-poisson"

    @property
    def facts(self) -> Scheme:
        """What gdpcli knows of the scheme: its relation, its epochs, its help text."""
        return SCHEMES[self]

    def steps_per_epoch(self, sampling_rate: float) -> float:
        """Steps in one pass over the data: b = ceil(N / B) where each example is used once an epoch
        (shuffle, balls-in-bins), else 1 / q in expectation."""
        if self.facts.epochs_of_batches:
            return batches_per_epoch(sampling_rate)
        return 1 / sampling_rate

    @property
    def neighbouring(self) -> Neighbouring:
        """The neighbouring relation the scheme is accounted under (GDP paper Sec. 4, Thm 9 / 10)."""
        return self.facts.relation

    @property
    def per_step(self) -> bool:
        """Whether each step's sample is drawn on its own, so that a run is a composition of sampled steps."""
        return self.facts.per_step


class Neighbouring(_Word):
    """Which datasets are neighbours: one record added or removed, or one record replaced."""

    ADD_REMOVE = "add/remove"
    REPLACE_ONE = "replace-one"

    @property
    def sensitivity(self) -> float:
        """One DP-SGD step's L2 sensitivity in units of the clipping norm C: adding or removing an example
        changes the sum of clipped gradients by at most C, replacing one by at most 2C."""
        return 1.0 if self is Neighbouring.ADD_REMOVE else 2.0


@dataclass(frozen=True)
class Scheme:
    """One batch scheme's entry (Sampling.facts).

    relation: the neighbouring relation its guarantees refer to.
    help: what it means, in the words of the --sampling help.
    per_step: each step's sample is drawn on its own (a run is a composition of `Sampled` steps).
    epochs_of_batches: an epoch is b = ceil(N / B) steps (each example used once an epoch), not 1 / q steps
        in expectation.
    requires: the run's parameters the scheme needs besides the rate.
    accepts: the run's parameters the scheme takes if given (no other scheme takes them).
    """

    relation: Neighbouring
    help: str
    per_step: bool = False
    epochs_of_batches: bool = False
    requires: tuple[str, ...] = ()
    accepts: tuple[str, ...] = ()


SCHEMES: dict[Sampling, Scheme] = {
    Sampling.POISSON: Scheme(Neighbouring.ADD_REMOVE, "add/remove neighbours", per_step=True),
    Sampling.FIXED: Scheme(
        Neighbouring.REPLACE_ONE, "batches of exactly B, replace-one neighbours", per_step=True
    ),
    Sampling.SHUFFLE: Scheme(
        Neighbouring.REPLACE_ONE,
        "each epoch a random permutation cut into batches, replace-one neighbours: a rigorous upper bound "
        "without amplification and a rigorous lower bound, Chua et al. 2024",
        epochs_of_batches=True,
    ),
    Sampling.BALLS_IN_BINS: Scheme(
        Neighbouring.ADD_REMOVE,
        "each epoch every example in one uniformly random batch (with --participations K: in K distinct "
        "random batches of every round of ceil(K N / B) steps), add/remove neighbours: rigorous upper and "
        "lower bounds, Chua et al. 2025, Feldman and Shenfeld 2025",
        epochs_of_batches=True,
        accepts=("participations",),
    ),
    Sampling.TRUNCATED_POISSON: Scheme(
        Neighbouring.ADD_REMOVE,  # the dataset that holds the example has N examples
        "Poisson batches cut to at most --max-batch-size examples, add/remove neighbours: rigorous upper "
        "and lower bounds, Chua et al. 2025, arXiv:2508.15089",
        requires=("dataset_size", "max_batch_size"),
    ),
    Sampling.CYCLIC_POISSON: Scheme(
        Neighbouring.ADD_REMOVE,
        "the data split into --bands parts b, step t Poisson-samples part t mod b at rate p (jax_privacy's "
        "sampling_prob; expected batch p N / b), add/remove neighbours: each example is in at most "
        "ceil(T / b) Poisson-sampled Gaussian steps, Choquette-Choo et al. 2023, arXiv:2306.08153, Thm 4",
        requires=("bands",),
    ),
}
"""Every batch scheme's entry, in the order --sampling lists them."""


def batches_per_epoch(sampling_rate: float) -> int:
    """b = ceil(N / B) steps per epoch, from q = B / N as the user gave it (0.01 is exactly 1/100)."""
    from fractions import Fraction

    inverse = 1 / Fraction(repr(float(sampling_rate)))
    nearest = round(inverse)
    return int(nearest) if abs(inverse - nearest) <= Fraction(1, 10**9) else math.ceil(inverse)


def taking(field: str) -> list[Sampling]:
    """The schemes that require or accept the run's parameter `field`."""
    return [scheme for scheme, facts in SCHEMES.items() if field in (*facts.requires, *facts.accepts)]
