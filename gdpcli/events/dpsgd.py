"""A DP-SGD run as an event (the Opacus, TF Privacy and dp-accounting convention for the noise)."""

from __future__ import annotations

from gdpcli.events.gaussian import Gaussian
from gdpcli.events.repeated import Repeated
from gdpcli.events.sampled import Sampled, Step
from gdpcli.events.sampling import Sampling


def dpsgd(
    noise_multiplier: float,
    sampling_rate: float,
    steps: int,
    sampling: Sampling | str = Sampling.POISSON,
    sensitivity: float | None = None,
) -> Repeated:
    """A DP-SGD run as an event: `steps` Gaussian steps with noise std = noise_multiplier x C (the Opacus,
    TF Privacy and dp-accounting convention), each on a sample drawn by `sampling` at `sampling_rate`.
    The sensitivity (in units of C) follows from the scheme's neighbouring relation unless given (Poisson:
    add/remove, 1; fixed-size batches: replace-one, 2), as in `gdpcli sgd`; at rate 1 every step sees
    the whole data."""
    scheme = Sampling(sampling)
    own = scheme.neighbouring.sensitivity if sensitivity is None else sensitivity
    gaussian = Gaussian(noise_multiplier, own)
    step: Step = gaussian if sampling_rate == 1.0 else Sampled(gaussian, sampling_rate, scheme)
    return Repeated(step, steps)
