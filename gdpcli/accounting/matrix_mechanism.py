"""Matrix-factorization mechanisms of private training (`gdpcli mf`): what each is accounted as.

The noise multiplier sigma is the noise standard deviation / clipping norm C per entry of C x + Z (the
strategy's output); sensitivities are in units of C.

- `tree`: DP-FTRL with tree aggregation restarted every epoch (Kairouz et al., ICML 2021,
  arXiv:2103.00039, App. D). Each example is in one step of each epoch, so it enters h(n) = ceil(log2(n +
  1)) nodes of each epoch's tree (n steps an epoch): a Gaussian mechanism of sensitivity sqrt(sum over the
  trees of h), exactly (its mu-GDP is exact). Neighbours: one record replaced by the zero record
  (dp_accounting's REPLACE_SPECIAL).
- `banded`, no amplification: a b-banded lower-triangular strategy under b-min-sep participation (at
  least b steps between two of one example's steps): columns b apart have disjoint rows, so it is a
  Gaussian mechanism of sensitivity sqrt(max over the patterns of the sum of ||c_i||^2)
  (Choquette-Choo et al., NeurIPS 2023, arXiv:2306.08153, Sec. 3, Algorithm 3); exact. Neighbours: zero-out.
- `banded`, amplified by cyclic Poisson sampling (their Sec. 5, Thm 4, jax_privacy's
  `amplified_bandmf_event`): the run is dominated by ceil(T / b) Poisson-subsampled Gaussian steps at the
  rate p within the active part and sensitivity the largest column norm, accounted as the cyclic-Poisson
  DP-SGD run of that sensitivity (gdpcli.accounting.cyclic_poisson), so every method answers it.
  Its lower bounds hold for the strategy when an example of a part with ceil(T / b) steps meets columns
  of that norm only (the run on datasets whose other gradients are 0 is the product of its steps'
  subsampled Gaussians); otherwise the PLD lower bound is that of such an example's own steps at norms
  no larger than its columns' (core.matrix_mechanism.cyclic_lower_levels), which its run dominates (a
  smaller shift is a post-processing of a larger one).

A strategy is given by its sensitivity (--sensitivity S: every column of norm S, S = 1 for jax_privacy's
column-normalized strategies) or as a matrix (CSV or .npy), from whose columns the sensitivities are
computed.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from gdpcli import events
from gdpcli.accounting import cyclic_poisson, planning
from gdpcli.accounting.run import RunLength
from gdpcli.errors import ComputationError, InputError, parameter
from gdpcli.events import Gaussian, Repeated, Run, Sampled, Sampling
from gdpcli.expr import require_positive
from gdpcli.guarantees import Guarantee

if TYPE_CHECKING:
    from gdpcli.accounting.figures import Accountant, Figures
    from gdpcli.accounting.methods import Plan

STRATEGIES = ("tree", "banded")
"""--strategy: DP-FTRL's tree aggregation, or a banded lower-triangular strategy."""
ZERO_OUT = "zero-out"
"""The neighbouring relation of a mechanism without sampling: one record replaced by the zero record."""
MAX_FILE_STEPS = 20000
"""The largest strategy matrix read (T x T entries in memory: 3.2 GB of float64 at this size)."""
_BANDS = parameter("bands")
_FILE, _SENSITIVITY = parameter("strategy_file"), parameter("sensitivity")


@dataclass(frozen=True)
class Mechanism:
    """A matrix mechanism as accounted.

    strategy: tree | banded; relation: the neighbouring relation; steps: T; epochs: passes over the data.
    subject: what the planning path accounts (a Gaussian's composition, or a cyclic-Poisson Run).
    sensitivity: the Gaussian's, or each participation's (the cyclic-Poisson Run's), in units of C.
    participations: the most steps one example is in; per_epoch: tree steps an epoch; bands: b.
    lower: the steps whose composition's lower bounds hold where the subject's do not (amplified, an
        example with the most steps meets smaller column norms); None when the subject's own hold, [] when
        none is computed (that example meets columns of norm 0 only).
    column_norm: the norm every column is taken at (a strategy given by its sensitivity); None where the
        sensitivities come from the strategy itself (a tree, a matrix).
    """

    strategy: str
    relation: str
    steps: int
    epochs: float
    subject: list[Repeated] | Run
    sensitivity: float
    participations: int
    per_epoch: int | None = None
    bands: int | None = None
    lower: list[Repeated] | None = None
    column_norm: float | None = None

    @property
    def amplified(self) -> bool:
        """Whether the run is amplified by sampling (cyclic Poisson)."""
        return isinstance(self.subject, Run)


def tree(noise_multiplier: float, length: RunLength) -> Mechanism:
    """DP-FTRL, the tree restarted every epoch of n = ceil(N / B) steps (or ceil(1 / q)); T = ceil(E n)
    steps, or as given. InputError for inconsistent inputs."""
    from gdpcli.core.matrix_mechanism import tree_squared_sensitivity

    require_positive(noise_multiplier, parameter("noise_multiplier"))
    per_epoch = events.batches_per_epoch(length.rate())
    total = length.total_steps(per_epoch, _epoch_of(per_epoch))
    sensitivity = math.sqrt(tree_squared_sensitivity(total, per_epoch))
    return Mechanism(
        "tree",
        ZERO_OUT,
        total,
        total / per_epoch,
        [Repeated(Gaussian(noise_multiplier, sensitivity))],
        sensitivity,
        participations=-(-total // per_epoch),
        per_epoch=per_epoch,
    )


def banded(
    noise_multiplier: float,
    bands: int,
    length: RunLength,
    *,
    sensitivity: float | None = None,
    strategy: np.ndarray | None = None,
    amplified: bool = True,
) -> Mechanism:
    """A b-banded strategy, given by its largest column norm (`sensitivity`, every column of that norm;
    default 1) or as a T x T matrix (`strategy`, whose size is then T unless steps or epochs are given);
    amplified by cyclic Poisson sampling at the rate p (given, or p = b B / N from N and the expected
    batch B) or not (b-min-sep participation; an epoch is b steps). InputError for inconsistent inputs."""
    if not (isinstance(bands, int) and bands >= 1):
        raise InputError(f"{_BANDS}: must be a whole number >= 1, got {bands!r}")
    require_positive(noise_multiplier, parameter("noise_multiplier"))
    if sensitivity is not None:
        require_positive(sensitivity, _SENSITIVITY)
    if strategy is not None and sensitivity is not None:
        raise InputError(
            f"give {_SENSITIVITY} or {_FILE}, not both", "the file's columns give the sensitivity"
        )
    norms = None if strategy is None else strategy_norms(strategy, bands)
    if norms is not None and length.epochs is None and length.steps is None:
        length = dataclasses.replace(length, steps=len(norms))
    if amplified:
        p, total = cyclic_poisson.schedule(length, bands)
    else:
        if length.rate_given:
            raise InputError(
                "without amplification every example of the active part is in its step's batch",
                "drop " + ", ".join(map(parameter, ("dataset_size", "batch_size", "sampling_rate"))),
            )
        p, total = 1.0, length.total_steps(bands, _epoch_of(bands))
    if norms is not None and total != len(norms):
        raise InputError(
            f"{_FILE}: a {len(norms)} x {len(norms)} strategy is for {len(norms)} steps, not {total}"
        )
    if bands > total:
        raise InputError(
            f"{_BANDS} {bands} exceeds the {total} steps", "a T x T strategy has at most T bands"
        )
    column = 1.0 if sensitivity is None else sensitivity
    if amplified:
        return _amplified(
            Run(p, total, noise_multiplier, Sampling.CYCLIC_POISSON, column, bands=bands), norms
        )
    return _unamplified(noise_multiplier, bands, total, norms, column)


def _unamplified(
    noise_multiplier: float, bands: int, steps: int, norms: np.ndarray | None, column: float
) -> Mechanism:
    """b-min-sep participation: the Gaussian of the strategy's sensitivity (Algorithm 3; sqrt(ceil(T / b))
    S for columns all of norm S)."""
    from gdpcli.core.matrix_mechanism import min_sep_squared_sensitivity

    most = -(-steps // bands)
    squared = most * column**2 if norms is None else min_sep_squared_sensitivity(norms, bands)
    sensitivity = math.sqrt(squared)
    subject = [Repeated(Gaussian(noise_multiplier, sensitivity))]
    return Mechanism(
        "banded",
        ZERO_OUT,
        steps,
        steps / bands,
        subject,
        sensitivity,
        most,
        bands=bands,
        column_norm=column if norms is None else None,
    )


def _amplified(run: Run, norms: np.ndarray | None) -> Mechanism:
    """Cyclic Poisson sampling: the cyclic-Poisson run at the largest column norm; where an example with
    the most steps meets smaller norms, its steps at norms no larger than its columns' for the lower bounds
    (each a post-processing of its own step: the composition lower-bounds that example's run)."""
    from gdpcli.core.matrix_mechanism import cyclic_lower_levels

    assert run.bands is not None
    most = cyclic_poisson.participations(run.steps, run.bands)
    top = run.step_sensitivity if norms is None else float(np.max(norms))
    levels = [(top, most)] if norms is None else cyclic_lower_levels(norms, run.bands)
    run = dataclasses.replace(run, sensitivity=top)
    lower = None
    if levels != [(top, most)]:
        lower = [Repeated(_step(run, level), count) for level, count in levels]
    return Mechanism(
        "banded",
        run.neighbouring,
        run.steps,
        run.epochs,
        run,
        top,
        most,
        bands=run.bands,
        lower=lower,
        column_norm=top if norms is None else None,
    )


def _step(run: Run, norm: float) -> Gaussian | Sampled:
    """One Poisson-sampled Gaussian step of the run at column norm `norm` (the Gaussian itself at rate 1)."""
    gaussian = Gaussian(run.noise_multiplier, norm)
    return gaussian if run.sampling_rate == 1.0 else Sampled(gaussian, run.sampling_rate, Sampling.POISSON)


def _epoch_of(per_epoch: int) -> str:
    """The hint of a missing or doubled length: how many steps an epoch is."""
    return f"an epoch is {per_epoch} steps"


def strategy_norms(strategy: np.ndarray, bands: int) -> np.ndarray:
    """The column norms of a T x T strategy; InputError unless it is square, finite, lower triangular with
    at most b bands (nonzero only where 0 <= row - column < b) and not all zero."""
    from gdpcli.core.matrix_mechanism import band_violations, column_norms

    matrix = np.asarray(strategy, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.size == 0:
        raise InputError(f"{_FILE}: the strategy must be a square T x T matrix, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        row, col = np.argwhere(~np.isfinite(matrix))[0]
        raise InputError(
            f"{_FILE}: entry ({row + 1}, {col + 1}) is {float(matrix[row, col])!r}", "give finite numbers"
        )
    outside = band_violations(matrix, bands)
    if len(outside):
        row, col = outside[0]
        where = "above the diagonal" if col > row else f"{row - col + 1} bands from the diagonal"
        raise InputError(
            f"{_FILE}: entry ({row + 1}, {col + 1}) = {float(matrix[row, col])!r} is {where}",
            f"the strategy must be lower triangular with at most {_BANDS} {bands} nonzero bands",
        )
    norms = column_norms(matrix)
    if not np.any(norms > 0):
        raise InputError(f"{_FILE}: every entry of the strategy is 0")
    return norms


def read_strategy(path: str) -> np.ndarray:
    """The strategy matrix in a .npy file (numpy's format, no pickles) or a CSV of numbers without header
    (- reads stdin); InputError for a file that cannot be read or is no matrix of numbers."""
    hint = "a T x T lower-triangular banded matrix as CSV rows of numbers or a .npy file"
    if path.endswith(".npy"):
        try:
            matrix = np.load(path, allow_pickle=False)
        except OSError as error:
            raise InputError(f"{_FILE}: cannot read {path!r}: {error.strerror or error}", hint) from None
        except ValueError:
            raise InputError(f"{_FILE}: {path!r} is not a numpy array file", hint) from None
    else:
        matrix = _parse_csv(path, hint)
    if matrix.ndim == 2 and max(matrix.shape) > MAX_FILE_STEPS:
        raise InputError(f"{_FILE}: {matrix.shape[0]} steps exceed the {MAX_FILE_STEPS} gdpcli reads")
    return matrix


def _parse_csv(path: str, hint: str) -> np.ndarray:
    """The rows of numbers of a CSV file (commas or white space between them)."""
    from gdpcli.textfiles import read_text

    rows = []
    for number, line in enumerate(read_text(path, "--strategy-file", hint).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append([float(cell) for cell in line.replace(",", " ").split()])
        except ValueError:
            raise InputError(f"{_FILE}: line {number} is not a row of numbers: {line[:40]!r}", hint) from None
        if len(rows[-1]) != len(rows[0]):
            raise InputError(f"{_FILE}: line {number} has {len(rows[-1])} numbers, the first {len(rows[0])}")
    return np.asarray(rows, dtype=float)


def plan(mechanism: Mechanism, method: str, *, accuracy: float, conversion: str = "optimal") -> Plan:
    """Who answers for the mechanism under `method`: the planning path's accountants for its subject,
    their lower bounds (auto, pld) taken from the PLD of its lower steps where the subject's do not hold
    for the strategy."""
    entries = planning.plan(mechanism.subject, method, accuracy=accuracy, conversion=conversion)
    if mechanism.lower is None:
        return entries
    lower = planning.plan(mechanism.lower, "pld", accuracy=accuracy)[0][1] if mechanism.lower else None
    return [
        (name, found if isinstance(found, ComputationError) else _Bracketed(found, lower))
        for name, found in entries
    ]


class _Bracketed:
    """An accountant's figures with its lower bounds replaced by another's (or dropped when there is none)."""

    def __init__(self, upper: Accountant, lower: Accountant | ComputationError | None) -> None:
        self.upper = upper
        self.lower = None if isinstance(lower, ComputationError) else lower
        self.method = upper.method

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        """The upper accountant's figures but its lower bounds, then the lower accountant's lower bounds."""
        lower = Guarantee.LOWER_BOUND
        kept = [f for f in self.upper.epsilon(deltas) if f.guarantee is not lower]
        found = [] if self.lower is None else self.lower.epsilon(deltas)
        return kept + [f for f in found if f.guarantee is lower]
