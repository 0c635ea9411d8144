"""Noisy gradient descent that releases its last iterate only, on strongly convex losses.

The run (`NoisyGD`) is full-batch or cyclic noisy GD as in Bok, Su and Altschuler, "Shifted interpolation
for differential privacy" (ICML 2024; BSA24), replace-one neighbours. Its figures (`figures`), each an
upper bound on the last iterate's epsilon at delta:

- `last-iterate-gdp`: the shifted-interpolation bound (gdpcli.core.last_iterate), optimised over the
  interpolation time tau, as mu-GDP, converted to epsilon exactly (GDP paper Cor. 1). Rigorous for every
  loss of the class (m-strongly convex, M-smooth, gradients bounded by L); tight over the class for full
  batches (BSA24's exact analysis).
- `composition-gdp`: GDP composition of all iterates (GDP paper Cor. 2), which bounds the last one too.
- `last-iterate-rdp-<conversion>`: the RDP bound BSA24 compare with (cyclic batches), converted by a
  rigorous RDP -> (eps, delta) conversion (Asoodeh et al.; gdpcli.core.rdp).

No rendering here: gdpcli.cli.noisy_gd turns these into rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from gdpcli.accounting.figures import PESSIMISTIC, Figures
from gdpcli.errors import InputError, parameter

BATCHING = ("cyclic", "full")
"""--batching: cyclic (N / B disjoint batches in a fixed order) or full (every step on all the data)."""
MAX_EPOCHS = 10**12


@dataclass(frozen=True)
class Loss:
    """One gradient step of size eta on an m-strongly convex, M-smooth loss: a contraction by
    c = max(|1 - eta m|, |1 - eta M|) (BSA24)."""

    step_size: float
    smoothness: float
    strong_convexity: float

    @property
    def gap(self) -> float:
        """1 - c, rounded down (gdpcli.core.last_iterate.contraction_gap)."""
        from gdpcli.core import last_iterate

        return last_iterate.contraction_gap(self.step_size, self.strong_convexity, self.smoothness)

    @property
    def contraction(self) -> float:
        """c = max(|1 - eta m|, |1 - eta M|), as printed (the bound uses the rounded-down gap)."""
        from gdpcli.core import last_iterate

        return last_iterate.contraction(self.step_size, self.strong_convexity, self.smoothness)


@dataclass(frozen=True)
class NoisyGD:
    """A noisy GD run: E epochs over N examples in batches of B (B = N: full batch), step size eta on an
    m-strongly convex, M-smooth loss; noise std sigma on the mean batch gradient (BSA24's sigma), or a
    noise multiplier z = noise std on the summed gradient / L (Opacus' convention: sigma = z L / B)."""

    dataset_size: int
    batch_size: int
    epochs: int
    loss: Loss
    step_mu: float
    """mu of the step that sees the differing example: 2 L / (B sigma) = 2 / z (replace-one)."""

    @property
    def batching(self) -> str:
        """cyclic, or full when one batch holds all the data."""
        return "full" if self.batch_size == self.dataset_size else "cyclic"

    @property
    def batches(self) -> int:
        """l = N / B batches an epoch (steps an epoch)."""
        return self.dataset_size // self.batch_size

    @property
    def steps(self) -> int:
        """T = E l."""
        return self.epochs * self.batches


def _positive(value: float | None, option: str, why: str = "") -> None:
    """InputError unless value is None or a finite number > 0."""
    if value is not None and not (math.isfinite(value) and value > 0):
        raise InputError(f"{option}: must be a positive finite number, got {value!r}", why or None)


def _check_data(dataset_size: int, batch_size: int | None, batching: str, epochs: float) -> None:
    """N >= 1, B dividing N for cyclic batches, a whole number of epochs."""
    if dataset_size < 1:
        raise InputError(f"{parameter('dataset_size')}: must be at least 1, got {dataset_size}")
    if batching == "cyclic":
        if batch_size is None:
            raise InputError(
                f"{parameter('batch_size')} is required with {parameter('batching')} cyclic",
                f"or use {parameter('batching')} full",
            )
        if not 1 <= batch_size <= dataset_size or dataset_size % batch_size:
            raise InputError(
                f"{parameter('batch_size')} {batch_size} does not split {parameter('dataset_size')} "
                f"{dataset_size} into equal batches",
                "cyclic batches are N / B disjoint batches of B: B must divide N",
            )
    elif batch_size not in (None, dataset_size):
        raise InputError(
            f"{parameter('batch_size')} cannot go with {parameter('batching')} full",
            "a full batch is the whole data",
        )
    if not (math.isfinite(epochs) and float(epochs).is_integer() and 1 <= epochs <= MAX_EPOCHS):
        raise InputError(
            f"{parameter('epochs')}: must be a whole number of epochs between 1 and {MAX_EPOCHS:g}, got "
            f"{epochs!r}",
            "the bound counts full passes over the data",
        )


def _check_loss(step_size: float, smoothness: float, strong_convexity: float) -> None:
    """0 < m <= M and 0 < eta < 2 / M: one gradient step contracts (c < 1)."""
    _positive(smoothness, parameter("smoothness"))
    _positive(
        strong_convexity, parameter("strong_convexity"), "the last-iterate bound needs a strongly convex loss"
    )
    _positive(step_size, parameter("step_size"))
    if strong_convexity > smoothness:
        raise InputError(
            f"{parameter('strong_convexity')} {strong_convexity:g} exceeds {parameter('smoothness')} "
            f"{smoothness:g}",
            "an m-strongly convex, M-smooth loss has m <= M",
        )
    from gdpcli.core import last_iterate

    if last_iterate.contraction_gap(step_size, strong_convexity, smoothness) <= 0.0:
        limit = f"eta < 2 / M = {2 / smoothness:.10g}"
        raise InputError(
            f"{parameter('step_size')} {step_size!r} is too large for the bound: it needs {limit}",
            "beyond it a gradient step is no contraction",
        )


def _check_noise(lipschitz: float | None, sigma: float | None, noise_multiplier: float | None) -> None:
    """Exactly one of sigma (with L) and the noise multiplier, all positive."""
    if (sigma is None) == (noise_multiplier is None):
        raise InputError(
            f"give exactly one of {parameter('sigma')} and {parameter('noise_multiplier')}",
            "see gdpcli noisy-gd --help",
        )
    _positive(sigma, parameter("sigma"))
    _positive(noise_multiplier, parameter("noise_multiplier"))
    _positive(lipschitz, parameter("lipschitz"))
    if sigma is not None and lipschitz is None:
        raise InputError(
            f"{parameter('lipschitz')} is required with {parameter('sigma')}",
            "the gradient-norm bound (clipping norm) L",
        )


def run(
    *,
    dataset_size: int,
    batch_size: int | None,
    batching: str,
    epochs: float,
    step_size: float,
    smoothness: float,
    strong_convexity: float,
    lipschitz: float | None,
    sigma: float | None,
    noise_multiplier: float | None,
) -> NoisyGD:
    """The run these inputs describe, checked (InputError naming the option: exit 2)."""
    _check_data(dataset_size, batch_size, batching, epochs)
    _check_loss(step_size, smoothness, strong_convexity)
    _check_noise(lipschitz, sigma, noise_multiplier)
    batch = dataset_size if batching == "full" else batch_size
    assert batch is not None
    if noise_multiplier is not None:
        step_mu = 2.0 / noise_multiplier
    else:
        assert lipschitz is not None and sigma is not None  # _check_noise's
        step_mu = 2.0 * lipschitz / (batch * sigma)
    return NoisyGD(dataset_size, batch, int(epochs), Loss(step_size, smoothness, strong_convexity), step_mu)


def last_iterate_mu(gd: NoisyGD) -> tuple[float, int]:
    """The shifted-interpolation mu optimised over the interpolation time tau, and that tau (steps for full
    batches, epochs for cyclic ones); the optimum is tau = 0, BSA24's closed form."""
    from gdpcli.core import last_iterate

    if gd.batching == "full":
        taus = last_iterate.tau_grid(gd.steps - 1)
        family = last_iterate.full_batch_mu(gd.step_mu, gd.loss.gap, gd.steps, taus)
    else:
        taus = last_iterate.tau_grid(gd.epochs - 1)
        family = last_iterate.cyclic_mu(gd.step_mu, gd.loss.gap, gd.batches, gd.epochs, taus)
    return last_iterate.best_tau(np.atleast_1d(family), taus)


def _gdp_figures(mu: float, deltas: np.ndarray, method: str, extra: dict) -> Figures:
    """epsilon(delta) of mu-GDP (GDP paper Cor. 1, rounded up), labelled an upper bound."""
    from gdpcli.core import gdp

    epsilons = np.atleast_1d(np.asarray(gdp.epsilon(deltas, mu), dtype=float))
    details = tuple({"mu": mu, **extra} for _ in epsilons)
    return Figures(epsilons, PESSIMISTIC, method, "epsilon", details)


def _rdp_figures(gd: NoisyGD, deltas: np.ndarray, conversions: Sequence[str]) -> list[Figures]:
    """The RDP bound (cyclic only) eps_R(alpha) = alpha rho, i.e. the RDP curve of sqrt(2 rho)-GDP, through
    each conversion (gdpcli.accounting.RenyiAccountant), renamed last-iterate-rdp-<conversion>."""
    from gdpcli.accounting.accountants import RenyiAccountant
    from gdpcli.core import last_iterate
    from gdpcli.events import GDP, Repeated

    rho = last_iterate.cyclic_rdp_rho(gd.step_mu, gd.loss.gap, gd.batches, gd.epochs)
    accountant = RenyiAccountant([Repeated(GDP(math.sqrt(2.0 * rho)))], conversions)
    return [
        replace(
            figure,
            method=f"last-iterate-{figure.method}",
            details=tuple({"rho": rho, **detail} for detail in figure.details or ()),
        )
        for figure in accountant.epsilon(deltas)
    ]


def figures(
    gd: NoisyGD, deltas: Sequence[float], conversions: Sequence[str]
) -> tuple[list[Figures], list[str]]:
    """Every figure of the run at these deltas (see the module docstring), and notes."""
    from gdpcli.core import last_iterate

    queries = np.asarray(deltas, dtype=float)
    mu, tau = last_iterate_mu(gd)
    composition = last_iterate.composition_mu(gd.step_mu, gd.epochs)
    found = [
        _gdp_figures(mu, queries, "last-iterate-gdp", {"tau": tau}),
        _gdp_figures(composition, queries, "composition-gdp", {}),
    ]
    notes = []
    if gd.batching == "cyclic":
        found += _rdp_figures(gd, queries, conversions)
    else:
        notes.append("no RDP row: BSA24 compare with an RDP bound for cyclic batches only")
    return found, notes
