"""`gdpcli subsample SPEC --rate p`: privacy amplification by subsampling (GDP paper Sec. 4).

One step (times=1) is the sampling operator C_p(f) = min(f_p, f_p^-1)** (Def. 6): fixed-size sampling with
replace-one neighbours gives it by Thm 9, and Poisson sampling with add/remove neighbours, whose two
directions f_p and f_p^-1 are symmetrized, gives the same function. Several steps (SPECxN) differ between
the schemes and are composed by the rigorous PLD accountant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from gdpcli.cli import options
from gdpcli.errors import InputError
from gdpcli.guarantees import Guarantee

EXACT, UPPER, LOWER = Guarantee.EXACT, Guarantee.UPPER_BOUND, Guarantee.LOWER_BOUND

if TYPE_CHECKING:
    import numpy as np

    from gdpcli.accounting import Accountant, Figures
    from gdpcli.events import Mechanism, Repeated

EPILOG = """\b
Examples:
  gdpcli subsample dp:eps=3,delta=0.1 --rate 0.2 --alpha 0.1
      the exact C_p next to Cor. 3 as printed and the classical Lemma 2 bound
  gdpcli subsample gdp:mu=1.8 --rate 0.35 --alpha 0:1:11
      the trade-off curve C_p(G_mu) of eq. (13)
  gdpcli subsample laplace:eps=1 --rate 0.1 --delta 1e-6 --epsilon 0.1
      one subsampled Laplace step: epsilon at delta and delta at epsilon
  gdpcli subsample gdp:mu=1x100 --rate 0.01 --delta 1e-5 --sampling fixed
      100 steps with fixed-size batches: rigorous PLD bounds
  gdpcli subsample gdp:mu=1x100 --rate 0.01 --delta 1e-5 --max-epsilon 1
      CI budget check: exit 3 if the rigorous epsilon exceeds 1
  gdpcli subsample gdp:mu=2 --rate 0.1 --epsilon 0:4:41 --plot subsampled.png
      also draw C_p(f), the mechanism without subsampling and the profile
"""

NEIGHBOURING = {"poisson": "add/remove", "fixed": "replace-one"}

RateOption = Annotated[
    float,
    typer.Option("--rate", help="Sampling rate p in (0, 1]: the chance that a record is in the sample."),
]

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
    import numpy as np

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
    Cor. 3 for (eps, delta)-DP, and for Laplace a rigorous bracket (see `_laplace_bracket`).
    """

    method = "cp-exact"

    def __init__(self, mechanism: Mechanism, sampling_rate: float) -> None:
        from gdpcli.core.subsample import fixed_size_profile

        self.mechanism = mechanism
        self.sampling_rate = sampling_rate
        self.profile = fixed_size_profile(mechanism.profile, sampling_rate)

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:

        from gdpcli.accounting import Figures
        from gdpcli.core.tradeoff import epsilon_from_profile

        values = _array(epsilon_from_profile(self.profile, deltas))
        return [Figures(values, EXACT, self.method)]

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        from gdpcli.accounting import Figures

        return [Figures(_array(self.profile(epsilons)), EXACT, self.method)]

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        from gdpcli.accounting import Figures

        mechanism, p = self.mechanism, self.sampling_rate
        values = mechanism.subsampled_tradeoff(alphas, p)
        if values is None and p == 1.0:
            values = mechanism.tradeoff(alphas)  # C_1(f) = f for symmetric f
        elif values is None:
            return self._laplace_bracket(alphas)
        return [Figures(_array(values), EXACT, self.method)]

    def _laplace_bracket(self, alphas: np.ndarray) -> list[Figures]:
        """Rigorous lower and upper bounds on C_p(f) for the Laplace trade-off f (no closed form here).

        Lower (the safe side, method cp-profile): the supporting lines 1 - delta(eps) - e^eps alpha of
        C_p(f) at eps on a grid of [-eps', eps'] (Prop. 5/6), eps' = log(1 - p + p e^eps0) bounding its
        privacy loss. Upper (cp-grid): C_p of the piecewise-linear interpolant of f, which lies above the
        convex f; C_p is monotone (Sec. 4.1), so this is >= C_p(f). Knots: uniform, normal-quantile and
        geometric on [e^-eps0 / 2, 1/2] (the 1/alpha piece), all >= 1e-12; below that the bound is loose.
        """
        import numpy as np

        from gdpcli.accounting import Figures
        from gdpcli.core.subsample import subsample_grid, subsampled_eps_delta
        from gdpcli.core.tradeoff import alpha_grid, grid_from_tradeoff, tradeoff_from_profile

        mechanism, p = self.mechanism, self.sampling_rate
        epsilon_p = subsampled_eps_delta(mechanism.epsilon, 0.0, p)[0]
        lower = tradeoff_from_profile(
            self.profile, alphas, np.linspace(-epsilon_p, epsilon_p, _PROFILE_POINTS)
        )
        kink = max(0.5 * np.exp(-mechanism.epsilon), _SMALLEST_KNOT)
        knots = np.concatenate(
            (
                np.linspace(0.0, 1.0, _GRID_POINTS),
                alpha_grid(_GRID_POINTS),
                np.geomspace(kink, 0.5, _GRID_POINTS),
            )
        )
        upper = subsample_grid(grid_from_tradeoff(mechanism.tradeoff, knots), p)(alphas)
        return [
            Figures(_array(lower), LOWER, "cp-profile"),
            Figures(_array(upper), UPPER, "cp-grid"),
        ]


class ClassicalAmplification:
    """GDP paper Lemma 2 (Ullman 2017): C_p(f_{eps,delta}) >= f_{eps',delta'}, eps' = log(1 - p + p e^eps),
    delta' = p delta. Rigorous but loose: a lower bound on beta, upper bounds on epsilon and delta."""

    method = "lemma2"

    def __init__(self, mechanism: Mechanism, sampling_rate: float) -> None:
        from gdpcli.accounting import ExactSingle
        from gdpcli.core.subsample import subsampled_eps_delta
        from gdpcli.events import ApproxDP

        self.epsilon_prime, self.delta_prime = subsampled_eps_delta(*mechanism.eps_delta, sampling_rate)
        self.closed_form = ExactSingle(ApproxDP(self.epsilon_prime, self.delta_prime))

    def epsilon(self, deltas: np.ndarray) -> list[Figures]:
        return self._relabel(self.closed_form.epsilon(deltas), UPPER)

    def delta(self, epsilons: np.ndarray) -> list[Figures]:
        return self._relabel(self.closed_form.delta(epsilons), UPPER)

    def beta(self, alphas: np.ndarray) -> list[Figures]:
        return self._relabel(self.closed_form.beta(alphas), LOWER)

    def _relabel(self, figures: list[Figures], guarantee: Guarantee) -> list[Figures]:
        from gdpcli.accounting import Figures

        return [Figures(f.values, guarantee, self.method) for f in figures]


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
        from gdpcli.accounting import Figures

        values = corollary_3_as_printed(alphas, *self.mechanism.eps_delta, self.sampling_rate)
        return [Figures(_array(values), LOWER, self.method)]


def _array(values: Any) -> np.ndarray:
    import numpy as np

    return np.atleast_1d(np.asarray(values, dtype=float))


def _accountants(
    spec: Repeated, sampling_rate: float, sampling: str, accuracy: float
) -> tuple[list[Accountant], list[str]]:
    """Who answers, and the notes for the table: C_p for one step, the PLD accountant for several."""
    from gdpcli.accounting import NumericalPLD
    from gdpcli.errors import ComputationError
    from gdpcli.events import Repeated, Sampled, Sampling

    mechanism = spec.mechanism
    if not mechanism.has_tradeoff:
        raise ComputationError(
            f"{spec.describe()}: an RDP guarantee has no trade-off function to subsample",
            "give the mechanism itself, e.g. gaussian:sigma=2",
        )
    if spec.times > 1:
        subsampled = Repeated(Sampled(mechanism, sampling_rate, Sampling(sampling)), spec.times)
        note = (
            f"{spec.times} steps composed after subsampling: rigorous PLD bounds; Poisson composes f_p and "
            "f_p^-1 direction by direction, fixed-size composes C_p(f) (GDP paper Thm 10)"
        )
        return [NumericalPLD([subsampled], accuracy)], [note]
    notes = ["one step: Poisson (add/remove) and fixed-size (replace-one) sampling both give C_p(f)"]
    accountants: list[Accountant] = [SubsampledStep(mechanism, sampling_rate)]
    if mechanism.eps_delta is not None:
        accountants += [
            PrintedCorollary3(mechanism, sampling_rate),
            ClassicalAmplification(mechanism, sampling_rate),
        ]
        notes += [
            "cp-exact: C_p(f_{eps,delta}) from eq. (13); cor3: eq. (14) as printed, which drops a factor "
            "(1 - delta) and is a loose lower bound; lemma2: the classical (eps', delta') bound",
        ]
    elif mechanism.gdp_mu is None and sampling_rate < 1.0:
        notes += ["beta of subsampled Laplace: cp-profile (lower) and cp-grid (upper) bracket C_p(f)"]
    return accountants, notes


def _check_finite(rows: list[dict[str, Any]]) -> None:
    """ComputationError instead of a NaN in the output (extreme inputs can overflow)."""
    import math

    from gdpcli.errors import ComputationError

    for row in rows:
        if any(isinstance(value, float) and math.isnan(value) for value in row.values()):
            raise ComputationError(
                "the computation overflowed", "the inputs are too extreme; try a smaller eps"
            )


def command(
    spec: Annotated[
        str,
        typer.Argument(help="Mechanism spec without p=/sampling=, e.g. gdp:mu=1 or gaussian:sigma=1.1x100."),
    ],
    rate: RateOption,
    sampling: options.SamplingOption = "poisson",
    delta: options.DeltaOption = None,
    epsilon: options.EpsilonOption = None,
    alpha: options.AlphaOption = None,
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    max_epsilon: options.MaxEpsilonOption = None,
    max_delta: options.MaxDeltaOption = None,
    fmt: options.FormatOption = None,
    plot: options.PlotOption = None,
) -> None:
    """Amplification by subsampling: the privacy of a mechanism run on a random sample of the data.

    For one step both sampling schemes give the same C_p(f); they differ once composed (SPECxN).
    """
    import numpy as np

    from gdpcli.accounting import check_budget
    from gdpcli.cli import output, queries
    from gdpcli.cli import plot as plotting
    from gdpcli.mechanisms import SAMPLING_SCHEMES, parse_spec

    options.check_output(fmt, plot)
    options.choice(sampling, "--sampling", SAMPLING_SCHEMES)
    options.positive(accuracy, "--accuracy")
    if not 0.0 < rate <= 1.0:
        raise InputError(f"--rate: {rate!r} is out of range", "allowed: (0, 1]")
    parsed = parse_spec(spec)
    if parsed.sampling_rate is not None:
        raise InputError(f"spec {spec!r} already has p=", "give the sampling rate with --rate only")
    deltas = options.deltas(delta) if delta is not None else None
    epsilons = options.epsilons(epsilon) if epsilon is not None else None
    alphas = options.alphas(alpha) if alpha is not None else None
    options.require_budget_query(max_epsilon, deltas, max_delta, epsilons)
    if not (deltas or epsilons or alphas):
        raise InputError("nothing to compute", "give --delta, --epsilon or --alpha")
    context = {
        "sampling": sampling,
        "neighbouring": NEIGHBOURING[sampling],
        "sampling_rate": rate,
        "steps": parsed.times,
    }

    def columns(accountant: Accountant) -> dict[str, Any]:
        if isinstance(accountant, ClassicalAmplification):
            return {**context, "eps_prime": accountant.epsilon_prime, "delta_prime": accountant.delta_prime}
        return context

    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # NaN is refused below
        accountants, notes = _accountants(parsed, rate, sampling, accuracy)
        rows, answers = queries.answer(
            accountants, deltas=deltas, epsilons=epsilons, alphas=alphas, context=columns
        )
    _check_finite(rows)
    title = f"gdpcli subsample {spec} at rate {rate:g} ({sampling} sampling, {NEIGHBOURING[sampling]})"
    if plot:
        references = plotting.subsampling_references(parsed, rate, sampling)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            plotting.plot_accountants(plot, title, accountants, references, epsilons)
    inputs = options.echo_inputs(
        spec=spec,
        rate=rate,
        sampling=sampling,
        delta=deltas,
        epsilon=epsilons,
        alpha=alphas,
        accuracy=accuracy if parsed.times > 1 else None,
        max_epsilon=max_epsilon,
        max_delta=max_delta,
    )
    output.emit(output.Result("subsample", inputs, rows, title, notes), fmt)
    check_budget(answers, max_epsilon=max_epsilon, max_delta=max_delta)
