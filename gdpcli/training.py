"""From a training script: Opacus's accountant interface and noise search, answered by certified figures.

`Accountant` has the methods of Opacus's `IAccountant` (step, get_epsilon, __len__, mechanism, history,
get_optimizer_hook_fn, state_dict / load_state_dict) without importing torch or opacus, so a training
loop written for Opacus can use it unchanged (`opacus.accountants.register_accountant("gdpcli",
gdpcli.Accountant)`, then `PrivacyEngine(accountant="gdpcli")`). `get_noise_multiplier` has Opacus's
signature. Both answer with the rigorous upper bound on epsilon that `gdpcli sgd` prints (exact or
upper_bound, never an approximation): the history is a composition of DP-SGD phases,
`events.dpsgd(noise_multiplier, sampling_rate, steps)`, accounted by `account.certified_epsilon`.

    >>> from gdpcli import Accountant
    >>> accountant = Accountant()
    >>> for _ in range(14063):
    ...     accountant.step(noise_multiplier=1.1, sample_rate=256 / 60000)
    >>> accountant.history, len(accountant)  # consecutive equal steps are one phase, as in Opacus
    ([(1.1, 0.004266666666666667, 14063)], 1)
    >>> round(accountant.get_epsilon(delta=1e-5), 3)
    2.382
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import Any, Protocol

from gdpcli import account, events
from gdpcli.accounting import calibration
from gdpcli.accounting.run import Run, RunLength, schedule
from gdpcli.defaults import DEFAULT_ACCURACY, NOISE_TOLERANCE
from gdpcli.errors import InputError

MECHANISM = "gdpcli"
"""The accountant's name (`Accountant.mechanism()`), as Opacus names its own "rdp", "prv" and "gdp"."""


Phase = tuple[float, float, int]
"""(noise_multiplier, sample_rate, steps): consecutive steps with the same noise and rate, as in Opacus."""


class Optimizer(Protocol):
    """What the optimizer hook reads of Opacus's DPOptimizer."""

    noise_multiplier: float
    accumulated_iterations: int


class Accountant:
    """A privacy accountant with Opacus's `IAccountant` interface whose epsilon is the certified upper bound.

    Each step is a Gaussian step with noise std = noise_multiplier x C on a batch sampled at sample_rate
    (`sampling`: "poisson", add/remove neighbours, as Opacus accounts; "fixed", fixed-size batches,
    replace-one neighbours, sensitivity 2C). The run is the composition of its phases, accounted by the
    PLD accountant with rigorous bounds (`accuracy`: the relative width it refines them to); `get_epsilon`
    returns their upper bound, the figure `gdpcli sgd --schedule` prints for the same history.
    """

    def __init__(self, *, sampling: str = "poisson", accuracy: float = DEFAULT_ACCURACY) -> None:
        self.sampling = _sampling(sampling)
        self.accuracy = _positive(accuracy, "accuracy")
        self.history: list[Phase] = []

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Record one optimization step; a step like the last one lengthens its phase (Opacus's merging)."""
        _check_step(noise_multiplier, sample_rate)
        if self.history and tuple(self.history[-1][:2]) == (noise_multiplier, sample_rate):
            self.history[-1] = (noise_multiplier, sample_rate, self.history[-1][2] + 1)
        else:
            self.history.append((noise_multiplier, sample_rate, 1))

    def get_epsilon(self, delta: float, *, accuracy: float | None = None) -> float:
        """The certified upper bound on epsilon at delta of the steps recorded so far (0 before any)."""
        _probability(delta, "delta")
        phases = [events.dpsgd(*phase, sampling=self.sampling) for phase in _checked(self.history)]
        if not phases:
            return 0.0
        accuracy = self.accuracy if accuracy is None else _positive(accuracy, "accuracy")
        return account.certified_epsilon(phases, delta, accuracy=accuracy)

    def __len__(self) -> int:
        """The number of phases in the history (Opacus's len(accountant); `steps` counts the steps)."""
        return len(self.history)

    @property
    def steps(self) -> int:
        """The number of steps recorded."""
        return sum(int(phase[2]) for phase in self.history)

    @classmethod
    def mechanism(cls) -> str:
        """The accountant's name, as Opacus's registry and state dicts use it."""
        return MECHANISM

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Optimizer], None]:
        """A hook for Opacus's DPOptimizer: after each optimizer step it records a step at the optimizer's
        noise multiplier and sample_rate times its accumulated iterations, as Opacus's accountants do."""

        def hook_fn(optim: Optimizer) -> None:
            self.step(
                noise_multiplier=optim.noise_multiplier,
                sample_rate=sample_rate * optim.accumulated_iterations,
            )

        return hook_fn

    def state_dict(self, destination: MutableMapping[str, Any] | None = None) -> MutableMapping[str, Any]:
        """The accountant's state (Opacus's keys "history" and "mechanism", and the sampling scheme)."""
        state = OrderedDict() if destination is None else destination
        state["history"] = list(self.history)
        state["mechanism"] = self.mechanism()
        state["sampling"] = self.sampling
        return state

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore a state that `state_dict` returned (ValueError, as in Opacus, for an invalid one)."""
        if not state_dict:
            raise ValueError("state_dict is None or empty: it cannot be loaded into the accountant")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise ValueError(f"state_dict has no key {key!r}: it cannot be loaded into the accountant")
        if state_dict["mechanism"] != self.mechanism():
            raise ValueError(
                f"state_dict of mechanism {state_dict['mechanism']!r} cannot be loaded into an accountant "
                f"of mechanism {self.mechanism()!r}"
            )
        sampling = state_dict.get("sampling", self.sampling)
        if sampling != self.sampling:
            raise ValueError(
                f"state_dict of sampling {sampling!r} cannot be loaded into an accountant of sampling "
                f"{self.sampling!r}"
            )
        self.history = list(_checked(state_dict["history"]))


def get_noise_multiplier(
    *,
    target_epsilon: float,
    target_delta: float,
    sample_rate: float,
    epochs: float | None = None,
    steps: int | None = None,
    accountant: str = MECHANISM,
    epsilon_tolerance: float = 0.01,
    sampling: str = "poisson",
    accuracy: float = DEFAULT_ACCURACY,
) -> float:
    """The least noise multiplier whose run meets (target_epsilon, target_delta) by the certified bound.

    Opacus's signature: a run of `steps` steps, or of `epochs` epochs, i.e. ceil(epochs / sample_rate)
    steps as `gdpcli sgd --sampling-rate --epochs` counts them (Opacus takes int(epochs / sample_rate),
    one step fewer when the quotient is not whole; the noise found here covers that run too). The search
    is `gdpcli calibrate sgd`'s at its default tolerance, and returns the same noise: one at which the
    certified epsilon (`Accountant.get_epsilon`, `gdpcli sgd`) is <= target_epsilon, while at a noise
    0.1 % lower it is above (core.calibrate.smallest_noise). Where the certified epsilon at the noise
    found is below target_epsilon - epsilon_tolerance (Opacus's absolute tolerance), the figure jumps
    within those 0.1 % (a delta the PLD's round-off swallows at the lower noise is answered by a looser
    bound there): no noise comes closer, and a warning says so, where Opacus's bisection would not end.
    """
    if accountant != MECHANISM:
        raise ValueError(f"accountant: {accountant!r} is not offered (the one accountant is {MECHANISM!r})")
    _positive(target_epsilon, "target_epsilon")
    _probability(target_delta, "target_delta")
    _check_rate(sample_rate, "sample_rate")
    _positive(epsilon_tolerance, "epsilon_tolerance")
    _positive(accuracy, "accuracy")
    with _named_parameters():
        run = Run(sample_rate, _steps(sample_rate, epochs, steps, _sampling(sampling)), 1.0, sampling)
        row = calibration.sgd_epsilon_row(
            target_epsilon, target_delta, run, "auto", "optimal", NOISE_TOLERANCE, accuracy
        )
    if row["achieved_epsilon"] < target_epsilon - epsilon_tolerance:
        warnings.warn(
            f"the certified epsilon at noise_multiplier {row['noise_multiplier']:.6g} is "
            f"{row['achieved_epsilon']:.6g} and above target_epsilon {target_epsilon:g} at a noise "
            f"{NOISE_TOLERANCE:.1%} lower: it jumps there, and no noise comes within epsilon_tolerance",
            stacklevel=2,
        )
    return float(row["noise_multiplier"])


def _steps(sample_rate: float, epochs: float | None, steps: int | None, sampling: str) -> int:
    """The run's steps: `steps`, or ceil(epochs / sample_rate) counted as the command line counts them."""
    if (epochs is None) == (steps is None):
        raise ValueError("give exactly one of epochs and steps")
    if steps is not None and not _is_count(steps):
        raise ValueError(f"steps: must be a whole number >= 1, got {steps!r}")
    if epochs is not None:
        _positive(epochs, "epochs")
    return schedule(RunLength(sampling_rate=sample_rate, epochs=epochs, steps=steps), sampling)[1]


@contextmanager
def _named_parameters() -> Iterator[None]:
    """Bad input found below this module (a run too long to account) as the ValueError Python expects."""
    try:
        yield
    except InputError as error:
        raise ValueError(str(error)) from error


def _checked(history: Any) -> Iterator[Phase]:
    """The phases of a history (a list of (noise_multiplier, sample_rate, steps)), checked."""
    for phase in history:
        if len(phase) != 3:
            raise ValueError(f"history: a phase is (noise_multiplier, sample_rate, steps), got {phase!r}")
        noise_multiplier, sample_rate, steps = phase
        _check_step(noise_multiplier, sample_rate)
        if not _is_count(steps):
            raise ValueError(f"history: steps must be a whole number >= 1, got {steps!r}")
        yield noise_multiplier, sample_rate, int(steps)


def _check_step(noise_multiplier: float, sample_rate: float) -> None:
    """ValueError unless 0 < noise_multiplier < inf and 0 < sample_rate <= 1."""
    _positive(noise_multiplier, "noise_multiplier")
    _check_rate(sample_rate, "sample_rate")


def _sampling(sampling: str) -> str:
    """The sampling word, checked against the schemes that draw each step's batch on its own (a run of
    them is a composition of steps, as a history is)."""
    words = [str(scheme) for scheme in events.Sampling if scheme.per_step]
    if sampling not in words:
        raise ValueError(f"sampling: {sampling!r} is not offered (allowed: {', '.join(words)})")
    return str(sampling)


def _positive(value: float, name: str) -> float:
    """value if it is a positive finite number, else ValueError naming the parameter."""
    if not (_is_number(value) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name}: must be a positive finite number, got {value!r}")
    return value


def _probability(value: float, name: str) -> None:
    """ValueError unless 0 < value < 1."""
    if not (_is_number(value) and 0 < value < 1):
        raise ValueError(f"{name}: must lie strictly between 0 and 1, got {value!r}")


def _check_rate(value: float, name: str) -> None:
    """ValueError unless 0 < value <= 1."""
    if not (_is_number(value) and 0 < value <= 1):
        raise ValueError(f"{name}: must lie in (0, 1], got {value!r}")


def _is_number(value: object) -> bool:
    """Whether value is a real number (Python's or numpy's, not a bool)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _is_count(value: object) -> bool:
    """Whether value is a whole number >= 1 (Python's or numpy's, not a bool)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 1
