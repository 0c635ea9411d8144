"""Privacy-loss distributions (PLDs): a rigorous numerical accountant built on privacy profiles.

A mechanism enters as a privacy profile delta(eps) = H_{e^eps}(P || Q) of a dominating pair (P, Q)
(lecture slides, hockey-stick divergence and dominating pairs; Zhu, Dong and Wang 2022). Writing
x = e^eps, the profile is convex and non-increasing in x with delta(x = 0) = 1. A discrete PLD puts
P-masses m_k at the losses eps_k = k D of a uniform grid plus a mass m_inf at +infinity; its profile

    delta(eps) = sum_k m_k (1 - e^{eps - eps_k})_+ + m_inf                                    (*)

is piecewise linear in x with kinks exactly at the grid points. Two discretizations bracket the truth:

* pessimistic ("connect the dots", Doroshenko et al. 2022): interpolate the true profile linearly in x
  between grid points; by convexity this lies above the true profile everywhere;
* optimistic (secant construction): chords that lie below the true profile, then their lower convex
  hull so that every mass is >= 0.

For any measures with non-negative masses, delta of a composition is E_{P_2}[delta_1(x e^{-L_2})]
(Fubini on (*)), so pointwise upper (lower) profiles compose to pointwise upper (lower) profiles. The
composition is an FFT convolution of the P-masses, N-fold self-composition uses repeated squaring, and
every truncation moves mass in the safe direction. Both bounds are rigorous up to floating-point
round-off, whose size is estimated and checked against the answer (ComputationError if it matters).

The package, one layer a module, each importing only those above it:

* representation: DominatingPair (a mechanism's profiles), DiscretePLD (masses on a grid), RoundOff;
* discretization: profiles to pessimistic and optimistic masses, loss ranges;
* convolution: FFT convolution and its round-off, plain and tilted;
* composition: truncation, composition, self-composition, the tilt, compose_all and its cache;
* refinement: epsilon, delta and beta bounds, refined grid by grid within a work budget.
"""

from gdpcli.core.pld.composition import (
    Components,
    Composed,
    Compositions,
    TailTarget,
    compose,
    compose_all,
    self_compose,
)
from gdpcli.core.pld.convolution import Norms, convolve, fft_convolve, fft_error, fft_round_off, fft_work
from gdpcli.core.pld.discretization import EVALUATION_WORK, MAX_POINTS, discretize, loss_range
from gdpcli.core.pld.refinement import (
    MAX_WORK,
    Bounds,
    Precision,
    delta_bounds,
    epsilon_bounds,
    epsilon_interval,
    initial_interval,
    predicted_round_off,
    tradeoff_bounds,
    tradeoff_of,
    work_budget,
)
from gdpcli.core.pld.representation import (
    ROUND_OFF_SAFETY,
    DiscretePLD,
    DominatingPair,
    GridTooLarge,
    ProfileFn,
    RoundOff,
    Tails,
)

__all__ = [
    "EVALUATION_WORK",
    "MAX_POINTS",
    "MAX_WORK",
    "ROUND_OFF_SAFETY",
    "Bounds",
    "Components",
    "Composed",
    "Compositions",
    "DiscretePLD",
    "DominatingPair",
    "GridTooLarge",
    "Norms",
    "Precision",
    "ProfileFn",
    "RoundOff",
    "TailTarget",
    "Tails",
    "compose",
    "compose_all",
    "convolve",
    "delta_bounds",
    "discretize",
    "epsilon_bounds",
    "epsilon_interval",
    "fft_convolve",
    "fft_error",
    "fft_round_off",
    "fft_work",
    "initial_interval",
    "loss_range",
    "predicted_round_off",
    "self_compose",
    "tradeoff_bounds",
    "tradeoff_of",
    "work_budget",
]
