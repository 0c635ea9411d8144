"""Truncated Poisson sampling: every example joins the batch independently with probability q, and a batch
of more than B_max examples is cut down to a uniformly random subset of B_max (jax_privacy's truncated
DP-SGD; dp_accounting's TruncatedSubsampledGaussianDpEvent; Chua et al., "Tighter Privacy Analysis for
Truncated Poisson Sampling", arXiv:2508.15089, 2025). One step adds N(0, sigma^2 C^2 I) to the sum of the
batch's clipped gradients (each of norm <= s C, s the sensitivity).

Neighbouring relation: add/remove one example, the larger dataset D' = D + {x} having N examples (x and
n = N - 1 others), dp_accounting's convention; B_max >= N never truncates, so it is plain Poisson.

Analysis (one step, gradients in units of C). Let K ~ Bin(n, q) count the sampled others, E = {K >= B_max}
(truncation can touch x), t = P(E), and given E let T be the kept batch of D and y uniform in T.

* Not E: D's batch is S (all sampled others), D''s is S + {x} with probability q: the Poisson pair.
* E: T is a uniform B_max-subset of the n others whatever K is (C(n,k) C(k,B) = C(n,B) C(n-B,k-B)), so
  (T, y) is independent of K. D' keeps x with probability q B_max / (K + 1), and then holds T - {y} + {x}:
  given (T, y), D' is (1 - q') N(s_T) + q' N(s_T + g_x - g_y) against D's N(s_T), with
  q' = q E[B_max / (K + 1) | E] = B_max P(Bin(N, q) > B_max) / (N t), as
  q C(n,k) q^k (1-q)^(n-k) / (k + 1) = C(N,k+1) q^(k+1) (1-q)^(N-k-1) / N. |g_x - g_y| <= 2 s: a Poisson
  remove pair with shift 2 s / sigma.

Both branches occur with the same probabilities under D and D' (E depends on the others only), so by
joint convexity of the hockey-stick divergence (both directions, all e^eps >= 0) the step is dominated by
the mixture pair (1 - t) Poisson(q, s / sigma) + t Poisson(q', 2 s / sigma) (`upper_pair`). dp_accounting
0.6.0 (privacy_loss_distribution.from_truncated_subsampled_gaussian_mechanism) uses the same mixture
weights and q' but the replace-one pair ((1-q') N(0) + q' N(-2s/sigma) vs (1-q') N(0) + q' N(2s/sigma))
for the E branch; that pair separates the two datasets more (at q' = 1 it is G_{4s/sigma} against
G_{2s/sigma}), and its epsilons were above these at every setting compared (tests/core/test_truncated.py).

Lower bound (`lower_pair`): the datasets where every other gradient is 0 and x's is s C e_1 at every step.
D's output is pure noise, D''s adds s C e_1 when x is kept, with probability q_kept = (1 - t) q + t q' per
step, independently across steps: the run on them is exactly T-fold Poisson(q_kept, s / sigma), so any
lower bound on that composition's epsilon is one on the mechanism's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gdpcli.core import gdp
from gdpcli.core.arrays import ArrayLike, as_output
from gdpcli.core.pld import DominatingPair, ProfileFn
from gdpcli.core.subsample import poisson_add_profile, poisson_remove_profile
from gdpcli.errors import InputError


@dataclass(frozen=True)
class Truncation:
    """The probabilities of the analysis (module docstring) for a cap of B_max: the Poisson rate q,
    t = P(Bin(N - 1, q) >= B_max) and q' the chance that x is sampled and kept given truncation."""

    max_batch_size: int
    sampling_rate: float
    probability: float
    truncated_rate: float

    @property
    def kept_rate(self) -> float:
        """q_kept = (1 - t) q + t q' = P(x in the batch that is used) for a dataset of N examples."""
        return (1.0 - self.probability) * self.sampling_rate + self.probability * self.truncated_rate


def _check_integer(name: str, value: int) -> int:
    """A positive whole number, else InputError."""
    if isinstance(value, bool) or not float(value).is_integer() or value < 1:
        raise InputError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


def check(dataset_size: int, sampling_rate: float, max_batch_size: int) -> tuple[int, float, int]:
    """(N, q, B_max) validated: N and B_max whole numbers >= 1, 0 < q <= 1; B_max >= N is allowed (no batch
    is ever cut: plain Poisson)."""
    size = _check_integer("the dataset size", dataset_size)
    cap = _check_integer("the maximum batch size", max_batch_size)
    if not (math.isfinite(sampling_rate) and 0.0 < sampling_rate <= 1.0):
        raise InputError(f"the sampling rate must be in (0, 1], got {sampling_rate!r}")
    return size, float(sampling_rate), cap


def truncation(dataset_size: int, sampling_rate: float, max_batch_size: int) -> Truncation:
    """t = P(Bin(N - 1, q) >= B_max) and q' = B_max P(Bin(N, q) > B_max) / (N t) (module docstring; the
    same quantities as dp_accounting's from_truncated_subsampled_gaussian_mechanism). The binomial tails
    are regularized incomplete beta functions, P(Bin(n, q) >= k) = I_q(k, n - k + 1), from
    scipy.special.betainc (to a few ulps at N = 60000, where bdtrc loses 1e-10 relative). t = 0 (q' = q)
    when B_max >= N or the tails underflow (t below 1e-300)."""
    from scipy.special import betainc

    size, q, cap = check(dataset_size, sampling_rate, max_batch_size)
    if cap >= size:
        return Truncation(cap, q, 0.0, q)
    t = float(betainc(cap, size - cap, q))
    rate = min(cap * float(betainc(cap + 1, size - cap, q)) / (size * t), q) if t > 0.0 else 0.0
    if rate == 0.0:  # the tails underflow: t < 1e-300
        return Truncation(cap, q, 0.0, q)
    return Truncation(cap, q, t, rate)


def poisson_profiles(mu: float, sampling_rate: float) -> tuple[ProfileFn, ProfileFn]:
    """(remove, add) profiles of the Poisson-subsampled Gaussian: (1 - p) N(0,1) + p N(mu,1) vs N(0,1)
    (GDP paper Sec. 4; gdpcli.core.subsample)."""

    def gaussian(epsilon: ArrayLike) -> ArrayLike:
        return gdp.delta(epsilon, mu)

    return poisson_remove_profile(gaussian, sampling_rate), poisson_add_profile(gaussian, sampling_rate)


def _kink(sampling_rate: float) -> float | None:
    """The remove profile's kink log(1 - p) (DominatingPair.kink), None at p = 1."""
    return math.log1p(-sampling_rate) if sampling_rate < 1.0 else None


def _mixture(weight: float, first: ProfileFn, second: ProfileFn) -> ProfileFn:
    """(1 - w) first + w second: the profile of the pair that draws from the second with probability w."""
    return lambda epsilon: as_output(
        (1.0 - weight) * np.asarray(first(epsilon)) + weight * np.asarray(second(epsilon))
    )


def upper_pair(cut: Truncation, mu: float) -> DominatingPair:
    """The dominating pair of one truncated-Poisson Gaussian step, mu = s / sigma (module docstring):
    (1 - t) Poisson(q, mu) + t Poisson(q', 2 mu), in both add/remove directions; plain Poisson when t = 0."""
    plain = poisson_profiles(mu, cut.sampling_rate)
    if cut.probability == 0.0:
        return DominatingPair(*plain, kink=_kink(cut.sampling_rate))
    swapped = poisson_profiles(2.0 * mu, cut.truncated_rate)
    remove, add = (_mixture(cut.probability, p, s) for p, s in zip(plain, swapped, strict=True))
    heavier = cut.sampling_rate if cut.probability <= 0.5 else cut.truncated_rate
    return DominatingPair(remove, add, kink=_kink(heavier))


def lower_pair(cut: Truncation, mu: float) -> DominatingPair:
    """Poisson(q_kept, mu): exactly one step of the mechanism on the datasets of the module docstring (all
    other gradients 0), so its composition's epsilon bounds the mechanism's from below."""
    return DominatingPair(*poisson_profiles(mu, cut.kept_rate), kink=_kink(cut.kept_rate))


__all__ = ["Truncation", "check", "lower_pair", "poisson_profiles", "truncation", "upper_pair"]
