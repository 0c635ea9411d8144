"""Amplification by subsampling of one step, C_p(f) (GDP paper Sec. 4): the exact C_p where a closed form
exists, a rigorous bracket for Laplace, GDP paper Cor. 3 as printed and the classical Lemma 2 beside it, the
PLD accountant for several steps, and on request the subsampling CLT (Theorem 11, an approximation)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from gdpcli.accounting.accountants import ApproximateGDP, ExactSingle, NumericalPLD, Restated, detailed
from gdpcli.accounting.figures import EXACT, OPTIMISTIC, PESSIMISTIC, Accountant, Figures
from gdpcli.errors import ComputationError, parameter
from gdpcli.events import ApproxDP, Mechanism, Repeated, Sampled, Sampling

if TYPE_CHECKING:
    from gdpcli.core.clt import ChiSquare

_PROFILE_POINTS = 20001  # eps grid of the Laplace lower bound (gap to the upper bound ~1e-10 at eps0 = 1)
_GRID_POINTS = 20001  # knots per family of the Laplace upper bound
_SMALLEST_KNOT = 1e-12  # smaller knots next to alpha = 0 upset the convex hull of the grid route


def corollary_3_as_printed(
    alpha: np.ndarray, epsilon: float, delta: float, sampling_rate: float
) -> np.ndarray:
    """GDP paper Cor. 3 (eq. 14) as printed: max(f_{eps',delta'}(alpha), 1 - p delta - p tanh(eps/2) - alpha).

    eps', delta' are Lemma 2's. The exact C_p(f_{eps,delta}) (subsample.subsampled_eps_delta_tradeoff) has
    the middle line 1 - p (delta + (1 - delta) tanh(eps/2)) - alpha: the printed formula drops the factor
    (1 - delta) on tanh(eps/2), so its line is lower by p delta tanh(eps/2). Both parts lie below C_p, so
    the printed value is a valid but loose lower bound on beta (equal to C_p when delta = 0); it is shown
    because readers compare with the paper.
    """

    from gdpcli.core.subsample import subsampled_eps_delta
    from gdpcli.core.tradeoff import eps_delta_tradeoff

    p = sampling_rate
    epsilon_p, delta_p = subsampled_eps_delta(epsilon, delta, p)
    line = 1.0 - p * delta - p * np.tanh(0.5 * epsilon) - alpha
    return np.maximum(np.asarray(eps_delta_tradeoff(alpha, epsilon_p, delta_p)), line)


class SubsampledStep:
    """One step sampled at rate p: C_p(f), exact where a closed form exists (GDP paper Def. 6, Thm 9).

    delta(eps) is the profile of C_p(f), the larger of the two Poisson directions (subsample.
    fixed_size_profile), and epsilon(delta) its inverse, rounded up. beta: eq. (13) for GDP, the corrected
    Cor. 3 for (eps, delta)-DP, for Laplace (a pure eps0) a rigorous bracket (see `_laplace_bracket`), and
    for other mechanisms the bounds of `beta_by` (the PLD accountant of the sampled step: a discrete
    Gaussian's loss has no bound to grid C_p(f) on).
    """

    method = "cp-exact"

    def __init__(self, mechanism: Mechanism, sampling_rate: float, beta_by: Accountant | None = None) -> None:
        from gdpcli.core.subsample import fixed_size_profile

        self.mechanism = mechanism
        self.sampling_rate = sampling_rate
        self.beta_by = beta_by
        self.profile = fixed_size_profile(mechanism.profile, sampling_rate)

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:

        from gdpcli.core.tradeoff import epsilon_from_profile

        values = _array(epsilon_from_profile(self.profile, deltas))
        return [Figures(values, EXACT, self.method, "epsilon")]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:

        return [Figures(_array(self.profile(epsilons)), EXACT, self.method, "delta")]

    def beta(self, alphas: np.ndarray) -> list[Figures]:

        mechanism, p = self.mechanism, self.sampling_rate
        values = mechanism.subsampled_tradeoff(alphas, p)
        if values is None and p == 1.0:
            values = mechanism.tradeoff(alphas)  # C_1(f) = f for symmetric f
        elif values is None and self.beta_by is not None:
            return self.beta_by.beta(alphas)
        elif values is None:
            return self._laplace_bracket(alphas)
        return [Figures(_array(values), EXACT, self.method, "beta")]

    def _laplace_bracket(self, alphas: np.ndarray) -> list[Figures]:
        """Rigorous lower and upper bounds on C_p(f) for the Laplace trade-off f (no closed form here).

        Lower (the safe side, method cp-profile): the supporting lines 1 - delta(eps) - e^eps alpha of
        C_p(f) at eps on a grid of [-eps', eps'] (Prop. 5/6), eps' = log(1 - p + p e^eps0) bounding its
        privacy loss. Upper (cp-grid): C_p of the piecewise-linear interpolant of f, which lies above the
        convex f; C_p is monotone (Sec. 4.1), so this is >= C_p(f). Knots: uniform, normal-quantile and
        geometric on [e^-eps0 / 2, 1/2] (the 1/alpha piece), all >= 1e-12; below that the bound is loose.
        """

        from gdpcli.core.subsample import subsample_grid, subsampled_eps_delta
        from gdpcli.core.tradeoff import alpha_grid, grid_from_tradeoff, tradeoff_from_profile

        mechanism, p = self.mechanism, self.sampling_rate
        epsilon_p = subsampled_eps_delta(mechanism.pure_epsilon, 0.0, p)[0]
        lower = tradeoff_from_profile(
            self.profile, alphas, np.linspace(-epsilon_p, epsilon_p, _PROFILE_POINTS)
        )
        kink = max(0.5 * np.exp(-mechanism.pure_epsilon), _SMALLEST_KNOT)
        knots = np.concatenate(
            (
                np.linspace(0.0, 1.0, _GRID_POINTS),
                alpha_grid(_GRID_POINTS),
                np.geomspace(kink, 0.5, _GRID_POINTS),
            )
        )
        upper = subsample_grid(grid_from_tradeoff(mechanism.tradeoff, knots), p)(alphas)
        return [
            Figures(_array(lower), PESSIMISTIC, "cp-profile", "beta"),
            Figures(_array(upper), OPTIMISTIC, "cp-grid", "beta"),
        ]


class ClassicalAmplification(Restated):
    """GDP paper Lemma 2 (Ullman 2017): C_p(f_{eps,delta}) >= f_{eps',delta'}, eps' = log(1 - p + p e^eps),
    delta' = p delta. Rigorous but loose: a lower bound on beta, upper bounds on epsilon and delta."""

    method = "lemma2"

    def __init__(self, mechanism: Mechanism, sampling_rate: float) -> None:
        from gdpcli.core.subsample import subsampled_eps_delta

        self.epsilon_prime, self.delta_prime = subsampled_eps_delta(*mechanism.eps_delta, sampling_rate)
        self.context = {"eps_prime": self.epsilon_prime, "delta_prime": self.delta_prime}
        self.inner = ExactSingle(ApproxDP(self.epsilon_prime, self.delta_prime))

    def restate(self, figures: list[Figures]) -> list[Figures]:
        """The exact figures of f_{eps',delta'}, which lies below C_p(f): pessimistic for C_p(f)."""
        return [replace(f, side=PESSIMISTIC, method=self.method) for f in figures]


class PrintedCorollary3:
    """GDP paper Cor. 3 as printed (`corollary_3_as_printed`): a trade-off lower bound only."""

    method = "cor3"

    def __init__(self, mechanism: Mechanism, sampling_rate: float) -> None:
        self.mechanism = mechanism
        self.sampling_rate = sampling_rate

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        return []

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return []

    def beta(self, alphas: np.ndarray) -> list[Figures]:

        values = corollary_3_as_printed(alphas, *self.mechanism.eps_delta, self.sampling_rate)
        return [Figures(_array(values), PESSIMISTIC, self.method, "beta")]


class SubsamplingLimit(ApproximateGDP):
    """The subsampling CLT: T steps of an f-DP mechanism on samples at rate p are about G_mu-DP, with
    mu = p sqrt(T) sqrt(2 chi2_plus(f)) for fixed-size batches (GDP paper Theorem 11) and p sqrt(T chi2(f))
    for Poisson sampling (core.clt.subsampling_limit_mu), for any mechanism with f(0) = 1; Cor. 4 and the
    Poisson DP-SGD formula are its Gaussian cases. Labelled approximation: a limit as T -> inf with
    p sqrt(T) fixed, with no rigorous direction. Its `details` (-v) are nu = p sqrt(T) and the chi-square
    functional used."""

    def __init__(self, mechanism: Mechanism, sampling_rate: float, steps: int, scheme: Sampling) -> None:
        from gdpcli.core import clt

        if sampling_rate == 1.0:
            raise ComputationError(
                "the subsampling CLT (GDP paper Theorem 11) is a limit for p -> 0, not for rate 1",
                "use gdpcli compose SPEC --method clt",
            )
        chi_square = _chi_square(mechanism)
        fixed = scheme is Sampling.FIXED
        mu = float(clt.subsampling_limit_mu(sampling_rate, steps, chi_square, fixed=fixed))
        if not math.isfinite(mu):
            raise ComputationError(
                f"{mechanism.describe()}: the Theorem 11 mu overflows", f"use {parameter('method')} pld"
            )
        super().__init__(mu)
        name = "chi2_plus" if fixed else "chi2"
        self.details = {"nu": sampling_rate * math.sqrt(steps), name: float(getattr(chi_square, name))}
        self.details_note = _LIMIT_NOTES[fixed]


_LIMIT_NOTES = {
    True: "clt -v: nu = p sqrt(T) and mu = nu sqrt(2 chi2_plus), chi2_plus = int_0^1 (|f'(x)| - 1)_+^2 dx "
    "(GDP paper Theorem 11, fixed-size batches)",
    False: "clt -v: nu = p sqrt(T) and mu = nu sqrt(chi2), chi2 = int_0^1 (|f'(x)| - 1)^2 dx, the chi-square "
    "divergence (Poisson sampling)",
}


def _chi_square(mechanism: Mechanism) -> ChiSquare:
    """chi2 and chi2_plus of the mechanism's trade-off function: closed form for GDP (Lemma 3), else from
    its privacy profile by quadrature. ComputationError where Theorem 11 does not apply (f(0) < 1) or the
    profile is only an upper bound."""
    from gdpcli.core import clt

    if mechanism.delta_part > 0.0:
        raise ComputationError(
            f"{mechanism.describe()}: the subsampling CLT needs f(0) = 1, and (eps, delta)-DP has 1 - delta",
            "use the default rigorous method",
        )
    if not mechanism.profile_is_exact:
        raise ComputationError(
            f"{mechanism.describe()}: known through an upper bound on its profile, it has no CLT functionals",
            "use the default rigorous method",
        )
    if mechanism.gdp_mu is not None:
        return clt.gaussian_chi_square(mechanism.gdp_mu)
    return clt.chi_square_from_profile(mechanism.profile, mechanism.pure_epsilon)


def _array(values: Any) -> np.ndarray:

    return np.atleast_1d(np.asarray(values, dtype=float))


def subsampling_accountants(
    spec: Repeated,
    sampling_rate: float,
    sampling: str,
    accuracy: float,
    method: str = "auto",
    verbose: bool = False,
) -> tuple[list[Accountant], list[str]]:
    """Who answers, and the notes for the table, by method: auto the rigorous ones (C_p for one step, the
    PLD accountant for several), clt the subsampling CLT (SubsamplingLimit), all both (the CLT skipped
    with a note where it does not apply). verbose (-v): each shows its details (Detailed)."""

    if not spec.mechanism.has_tradeoff:
        raise ComputationError(
            f"{spec.describe()}: an RDP guarantee has no trade-off function to subsample",
            "give the mechanism itself, e.g. gaussian:sigma=2",
        )
    accountants: list[Accountant] = []
    notes: list[str] = []
    if method != "clt":
        accountants, notes = _rigorous(spec, sampling_rate, sampling, accuracy)
    if method != "auto":
        try:
            accountants.append(
                SubsamplingLimit(spec.mechanism, sampling_rate, spec.times, Sampling(sampling))
            )
        except ComputationError as error:
            if method == "clt":
                raise
            notes.append(f"skipped clt: {error.text}")
    return detailed(accountants, verbose), notes


def _rigorous(
    spec: Repeated, sampling_rate: float, sampling: str, accuracy: float
) -> tuple[list[Accountant], list[str]]:
    """The rigorous accountants and their notes: C_p for one step, the PLD accountant for several."""
    mechanism = spec.mechanism
    subsampled = Repeated(Sampled(mechanism, sampling_rate, Sampling(sampling)), spec.times)
    if not mechanism.profile_is_exact:  # its C_p(profile) would bound, not be, the subsampled mechanism
        note = "the mechanism is known through an upper bound on its profile: rigorous PLD bounds"
        return [NumericalPLD([subsampled], accuracy)], [note]
    if spec.times > 1:
        note = (
            f"{spec.times} steps composed after subsampling: rigorous PLD bounds; Poisson composes f_p and "
            "f_p^-1 direction by direction, fixed-size composes C_p(f) (GDP paper Thm 10)"
        )
        return [NumericalPLD([subsampled], accuracy)], [note]
    notes = ["one step: Poisson (add/remove) and fixed-size (replace-one) sampling both give C_p(f)"]
    unbracketed = mechanism.pure_epsilon is None and mechanism.subsampled_tradeoff(0.5, sampling_rate) is None
    beta_by = NumericalPLD([subsampled], accuracy) if unbracketed and sampling_rate < 1.0 else None
    accountants: list[Accountant] = [SubsampledStep(mechanism, sampling_rate, beta_by)]
    if beta_by is not None:
        notes.append("beta: no closed form of C_p(f) for this mechanism here: rigorous PLD bounds")
    if mechanism.eps_delta is not None:
        accountants += [
            PrintedCorollary3(mechanism, sampling_rate),
            ClassicalAmplification(mechanism, sampling_rate),
        ]
        notes += [
            "cp-exact: C_p(f_{eps,delta}) from eq. (13); cor3: eq. (14) as printed, which drops a factor "
            "(1 - delta) and is a loose lower bound; lemma2: the classical (eps', delta') bound",
        ]
    elif beta_by is None and mechanism.gdp_mu is None and sampling_rate < 1.0:
        notes += ["beta of subsampled Laplace: cp-profile (lower) and cp-grid (upper) bracket C_p(f)"]
    return accountants, notes
