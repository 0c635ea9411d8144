"""`gdpcli calibrate KIND`: the least noise that meets a privacy target, and the privacy it achieves.

Every row states the noise and the privacy actually achieved at that noise (`achieved_*` columns, so
the slack is visible), labelled with `guarantee` and `method`. Targets are the row's `epsilon`, `delta`
or `mu`; lists and ranges give one row per target.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from gdpcli.cli import options
from gdpcli.errors import InputError
from gdpcli.guarantees import Guarantee

if TYPE_CHECKING:
    import numpy as np

    from gdpcli.accounting import Figures
    from gdpcli.accounting.dpsgd import Run

    NoiseFn = Callable[[np.ndarray, np.ndarray], np.ndarray]

app = typer.Typer(
    help="The least noise that meets a privacy target (Gaussian, Laplace, DP-SGD, trade-off families).",
    no_args_is_help=True,
    rich_markup_mode=None,
)

TargetEpsilonOption = Annotated[
    str | None, typer.Option("--epsilon", help="Target epsilon(s): E, E1,E2,... or START:STOP:NUM.")
]
TargetDeltaOption = Annotated[
    str | None, typer.Option("--delta", help="Target delta(s) in (0, 1): D, D1,D2,... or START:STOP:NUM.")
]
TargetMuOption = Annotated[
    str | None, typer.Option("--mu", help="Target GDP mu(s) > 0: M, M1,M2,... or START:STOP:NUM.")
]
SensitivityOption = Annotated[
    float, typer.Option("--sens", help="Sensitivity of the query (L2 for Gaussian, L1 for Laplace).")
]


CLASSICAL_NOTE = (
    "the classical sigma = sqrt(2 ln(1.25/delta)) sens/epsilon is proven only for epsilon < 1 "
    "(Dwork & Roth Thm A.1); rows with valid=false are shown for comparison, not as a calibration"
)


def _targets(text: str | None, option: str) -> list[float] | None:
    """Target epsilons (> 0), deltas (in (0, 1)) or mus (> 0) from a value, list or range."""
    if text is None:
        return None
    if option == "--delta":
        return options.deltas(text)
    values = options.parse_values(text, option)
    return options.check_range(values, option, low=0, high=1e300, low_open=True)


def _epsilon_delta_pairs(epsilon: str | None, delta: str | None) -> list[tuple[float, float]]:
    """Every (target epsilon, target delta) combination; both options are required."""
    epsilons, deltas = _targets(epsilon, "--epsilon"), _targets(delta, "--delta")
    if epsilons is None or deltas is None:
        raise InputError("give both --epsilon and --delta", "the target is an (epsilon, delta) pair")
    return [(e, d) for e in epsilons for d in deltas]


GAUSSIAN_EPILOG = """\b
Examples:
  gdpcli calibrate gaussian --epsilon 1 --delta 1e-5          analytic sigma 3.7306
  gdpcli calibrate gaussian --epsilon 0.1 --delta 1e-6 --sens 2   analytic beside classical
  gdpcli calibrate gaussian --epsilon 0.5,1,2,4 --delta 1e-5 -f csv   one row per target
  gdpcli calibrate gaussian --mu 0.5                          sigma = sens / mu = 2
"""


@app.command(epilog=GAUSSIAN_EPILOG)
def gaussian(
    epsilon: TargetEpsilonOption = None,
    delta: TargetDeltaOption = None,
    mu: TargetMuOption = None,
    sens: SensitivityOption = 1.0,
    fmt: options.FormatOption = None,
) -> None:
    """Gaussian sigma for a target (epsilon, delta) (analytic, Balle & Wang Thm 8) or a target mu."""
    from gdpcli.cli import output
    from gdpcli.core import calibrate, gdp

    options.check_output(fmt, None)
    options.positive(sens, "--sens")
    notes: list[str] = []
    if mu is not None:
        if epsilon is not None or delta is not None:
            raise InputError("give either --mu or --epsilon with --delta", "not both")
        rows = []
        for target in _targets(mu, "--mu"):
            sigma = calibrate.gaussian_sigma_for_mu(target, sens)
            rows.append(
                {"mu": target, "sigma": sigma, "sens": sens, "achieved_mu": sens / sigma}
                | {"guarantee": Guarantee.EXACT, "method": "gdp"}
            )
    else:
        rows = []
        for target_epsilon, target_delta in _epsilon_delta_pairs(epsilon, delta):
            methods = [("analytic", calibrate.analytic_gaussian_sigma, True)]
            valid = calibrate.classical_gaussian_valid(target_epsilon)
            methods.append(("classical", calibrate.classical_gaussian_sigma, valid))
            notes += [] if valid or CLASSICAL_NOTE in notes else [CLASSICAL_NOTE]
            for method, sigma_of, method_valid in methods:
                sigma = sigma_of(target_epsilon, target_delta, sens)
                achieved_mu = sens / sigma
                achieved_epsilon = float(gdp.epsilon(target_delta, achieved_mu))
                if method == "analytic":  # its sigma was checked to meet the target: both are upper bounds
                    achieved_epsilon = min(achieved_epsilon, target_epsilon)
                rows.append(
                    {
                        "epsilon": target_epsilon,
                        "delta": target_delta,
                        "sigma": sigma,
                        "sens": sens,
                        "achieved_epsilon": achieved_epsilon,
                        "achieved_delta": float(gdp.delta(target_epsilon, achieved_mu)),
                        "mu": achieved_mu,
                        "guarantee": Guarantee.EXACT,
                        "method": method,
                        "valid": method_valid,
                    }
                )
    inputs = options.echo_inputs(
        epsilon=_targets(epsilon, "--epsilon"), delta=_targets(delta, "--delta"), mu=_targets(mu, "--mu")
    ) | {"sens": sens}
    output.emit(output.Result("calibrate gaussian", inputs, rows, "gdpcli calibrate gaussian", notes), fmt)


LAPLACE_EPILOG = """\b
Examples:
  gdpcli calibrate laplace --epsilon 1                 b = 1
  gdpcli calibrate laplace --epsilon 0.5 --sens 3      b = 6
  gdpcli calibrate laplace --epsilon 0.1:1:10 -f csv   one row per target epsilon
"""


@app.command(epilog=LAPLACE_EPILOG)
def laplace(
    epsilon: TargetEpsilonOption = None,
    sens: SensitivityOption = 1.0,
    fmt: options.FormatOption = None,
) -> None:
    """Laplace scale b = sens / epsilon for a target pure epsilon-DP (Dwork & Roth Thm 3.6)."""
    from gdpcli.cli import output
    from gdpcli.core import calibrate

    options.check_output(fmt, None)
    options.positive(sens, "--sens")
    epsilons = _targets(epsilon, "--epsilon")
    if epsilons is None:
        raise InputError("give --epsilon", "the target of pure epsilon-DP")
    rows = []
    for target in epsilons:
        scale = calibrate.laplace_scale(target, sens)
        rows.append(
            {
                "epsilon": target,
                "b": scale,
                "sens": sens,
                "achieved_epsilon": sens / scale,
                "achieved_delta": 0.0,
            }
            | {"guarantee": Guarantee.EXACT, "method": "laplace"}
        )
    inputs = {"epsilon": epsilons, "sens": sens}
    output.emit(output.Result("calibrate laplace", inputs, rows, "gdpcli calibrate laplace"), fmt)


FAMILY_EPILOG = """\b
Examples:
  gdpcli calibrate family --noise "-log(delta)/eps" --epsilon 0.2 --delta 0.1353352832366127
  gdpcli calibrate family --noise "2*log(1/delta)/eps" --epsilon 0.1:1:4 --delta 0.1 -f csv
  gdpcli calibrate family --noise "sqrt(2*log(1.25/delta))/eps" --epsilon 0.5 --delta 1e-5
"""


@app.command(epilog=FAMILY_EPILOG)
def family(
    noise: Annotated[
        str,
        typer.Option(
            "--noise",
            help="The family's noise sigma = f(eps, delta), non-increasing in delta: numbers, eps, delta, "
            "+ - * / **, log, exp, sqrt (never evaluated as Python).",
        ),
    ],
    epsilon: TargetEpsilonOption = None,
    delta: TargetDeltaOption = None,
    fmt: options.FormatOption = None,
) -> None:
    """Refine sigma = f(eps, delta) by the exact partial order of (eps, delta) conditions (GDPT Sec. 5.2)."""
    from gdpcli import expr
    from gdpcli.cli import output
    from gdpcli.core import partial_order

    options.check_output(fmt, None)
    formula = expr.parse(noise)
    pairs = _epsilon_delta_pairs(epsilon, delta)
    feasible = _feasible_noise(formula)
    rows = []
    for target_epsilon, target_delta in pairs:
        expr.evaluate(formula, target_epsilon, target_delta)
        refined = partial_order.refine_noise(feasible, target_epsilon, target_delta)
        for method, sigma, epsilon0, delta0 in (
            ("naive", refined.naive_sigma, target_epsilon, target_delta),
            ("gdpt-refined", refined.sigma, refined.epsilon0, refined.delta0),
        ):
            achieved = partial_order.implied_delta(epsilon0, delta0, target_epsilon)
            rows.append(
                {"epsilon": target_epsilon, "delta": target_delta, "sigma": sigma}
                | {"epsilon0": epsilon0, "delta0": delta0, "achieved_delta": min(float(achieved), 1.0)}
                | {"guarantee": Guarantee.UPPER_BOUND, "method": method}
            )
    notes = [
        "sigma = f(epsilon0, delta0) is (epsilon0, delta0)-DP by the family's own equation, which implies "
        "(epsilon, achieved_delta)-DP (GDPT Thm 3.1); achieved_delta <= delta"
    ]
    inputs = {"noise": noise, "epsilon": _targets(epsilon, "--epsilon"), "delta": _targets(delta, "--delta")}
    output.emit(
        output.Result("calibrate family", inputs, rows, f"gdpcli calibrate family {noise}", notes), fmt
    )


def _feasible_noise(formula: NoiseFn) -> NoiseFn:
    """f(eps, delta) with non-finite or non-positive values turned into NaN (infeasible for refine_noise)."""
    import numpy as np

    def noise(epsilon: np.ndarray, delta: np.ndarray) -> np.ndarray:
        values = np.asarray(formula(epsilon, delta), dtype=float)
        return np.where(np.isfinite(values) & (values > 0), values, np.nan)

    return noise


SGD_EPILOG = """\b
Examples:
  gdpcli calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 --epsilon 3 --delta 1e-5
  gdpcli calibrate sgd --sampling-rate 0.01 --steps 10000 --epsilon 1,2,4 --delta 1e-6 -f csv
  gdpcli calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 --epsilon 3 --delta 1e-5 \\
      --method rdp                                  the moments accountant's (larger) noise
  gdpcli calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 --mu 1 --method clt
"""

SGD_METHODS = ("exact", "rdp", "clt")


@app.command(epilog=SGD_EPILOG)
def sgd(
    dataset_size: options.DatasetSizeOption = None,
    batch_size: options.BatchSizeOption = None,
    sampling_rate: options.SamplingRateOption = None,
    epochs: options.EpochsOption = None,
    steps: options.StepsOption = None,
    sampling: options.SamplingOption = "poisson",
    sensitivity: options.SensitivityOption = None,
    epsilon: TargetEpsilonOption = None,
    delta: TargetDeltaOption = None,
    mu: TargetMuOption = None,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="exact (rigorous PLD upper bound) | rdp (moments accountant, rigorous, Poisson) | "
            "clt (approximation).",
        ),
    ] = "exact",
    conversion: options.ConversionOption = "optimal",
    tolerance: Annotated[
        float, typer.Option("--tolerance", help="Relative search tolerance on the noise multiplier.")
    ] = 1e-3,
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    fmt: options.FormatOption = None,
) -> None:
    """The smallest DP-SGD noise multiplier for a target (epsilon, delta) or mu, rounded to the safe side."""
    from gdpcli.accounting import dpsgd
    from gdpcli.cli import output

    options.check_output(fmt, None)
    options.choice(sampling, "--sampling", dpsgd.SAMPLING)
    options.choice(method, "--method", SGD_METHODS)
    options.choice(conversion, "--conversion", dpsgd.CONVERSIONS)
    options.positive(accuracy, "--accuracy")
    options.positive(sensitivity, "--sensitivity")
    if not 1e-9 <= tolerance < 1:
        raise InputError(f"--tolerance: {tolerance!r} is out of range", "allowed: [1e-09, 1)")
    if mu is not None and (epsilon is not None or delta is not None):
        raise InputError("give either --mu or --epsilon with --delta", "not both")
    mus = _targets(mu, "--mu")
    pairs = _epsilon_delta_pairs(epsilon, delta) if mus is None else []
    q, T, n_epochs = dpsgd.schedule(dataset_size, batch_size, sampling_rate, epochs, steps)
    run = dpsgd.Run(q, T, 1.0, sampling, sensitivity)
    context = {
        "sampling": sampling,
        "neighbouring": run.neighbouring,
        "sensitivity": run.step_sensitivity,
        "sampling_rate": q,
        "steps": T,
        "epochs": n_epochs,
    }
    conversions = dpsgd.CONVERSIONS[:-1] if method == "rdp" and conversion == "all" else (conversion,)
    rows = [_sgd_mu_row(target, run, method, tolerance) | context for target in mus or []]
    rows += [
        _sgd_epsilon_row(e, d, run, method, name, tolerance, accuracy) | context
        for e, d in pairs
        for name in conversions
    ]
    figure = "mu" if mus else "epsilon"
    notes = [f"fed back to `gdpcli sgd --method {method}`, noise_multiplier gives {figure} <= the target"]
    inputs = options.echo_inputs(
        dataset_size=dataset_size,
        batch_size=batch_size,
        sampling_rate=sampling_rate,
        epochs=epochs,
        steps=steps,
        sampling=sampling,
        sensitivity=sensitivity,
        epsilon=_targets(epsilon, "--epsilon"),
        delta=_targets(delta, "--delta"),
        mu=_targets(mu, "--mu"),
        method=method,
        conversion=conversion if method == "rdp" else None,
        tolerance=tolerance,
        accuracy=accuracy,
    )
    output.emit(output.Result("calibrate sgd", inputs, rows, "gdpcli calibrate sgd", notes), fmt)


def _clt_noise(mu: float, run: Run) -> float:
    """The noise multiplier at which the Poisson CLT gives mu: mu = q sqrt(T (e^{mu_1^2} - 1)) with
    mu_1 = sensitivity / s (one step), solved for s.

    Su (2024), DP-SGD section (Bu et al. 2020). Used as an approximation (--method clt, Poisson) and as
    the first bracket of every search (the rigorous noise is typically a few percent larger).
    """
    effective = 1.0 / math.sqrt(math.log1p((mu / run.sampling_rate) ** 2 / run.steps))
    return effective * run.step_sensitivity


def _sgd_epsilon_row(
    epsilon: float,
    delta: float,
    run: Run,
    method: str,
    conversion: str,
    tolerance: float,
    accuracy: float,
) -> dict:
    """The smallest noise multiplier whose `method` epsilon at delta is <= epsilon (CLT guess first).

    The figure is dpsgd.certified, the number `gdpcli sgd` reports and a budget check relies on, so the
    answer round-trips; the row carries that figure's own label.
    """
    from gdpcli.accounting import dpsgd
    from gdpcli.core import calibrate, gdp

    found: dict[float, Figures] = {}

    def epsilon_of(noise: float) -> float:
        found[noise] = dpsgd.certified(
            dataclasses.replace(run, noise_multiplier=noise),
            delta,
            method=method,
            accuracy=accuracy,
            conversion=conversion,
        )
        return float(found[noise].values[0])

    guess = _clt_noise(float(gdp.mu(epsilon, delta)), run)
    search = calibrate.smallest_noise(epsilon_of, epsilon, guess, guess * 1.05, rtol=tolerance)
    figure = found[search.noise]
    return {
        "epsilon": epsilon,
        "delta": delta,
        "noise_multiplier": search.noise,
        "achieved_epsilon": search.value,
        "guarantee": figure.guarantee,
        "method": figure.method,
    }


def _sgd_mu_row(mu: float, run: Run, method: str, tolerance: float) -> dict:
    """The smallest noise multiplier whose CLT mu (GDP paper Cor. 4, or the Poisson formula) is <= mu.

    With m = sensitivity / s the mu of one step: without subsampling (q = 1) the run is exactly
    (sqrt(T) m)-GDP (GDP paper Cor. 2). Otherwise only the CLT states a mu for DP-SGD: composition only
    lowers a trade-off function, so the run's f is at most the one-step p G_m(alpha) + (1 - p)(1 - alpha)
    (GDP paper Sec. 4; C_p of it for fixed-size batches is lower still), whose tail 1 - f(alpha) >=
    p Phi(m - z), z = Phi^-1(1 - alpha), exceeds 1 - G_mu(alpha) = Phi(mu - z) as z -> inf for every
    mu < m. So an exact mu-GDP guarantee needs m <= mu whatever p is, and a numerical accountant with
    truncated tails cannot certify G_mu there.
    """
    from gdpcli.accounting import dpsgd
    from gdpcli.core import calibrate
    from gdpcli.errors import ComputationError

    if run.sampling_rate == 1.0 and method != "clt":
        total = run.step_sensitivity * math.sqrt(run.steps)
        noise = calibrate.gaussian_sigma_for_mu(mu, total)
        return _mu_row(mu, noise, total / noise, Guarantee.EXACT, "gdp")
    if method != "clt":
        needed = run.step_sensitivity / mu
        raise ComputationError(
            f"--mu with --method {method} is not supported: subsampled DP-SGD is only asymptotically GDP "
            f"(an exact {mu:g}-GDP guarantee needs noise_multiplier >= {needed:.6g} at any sampling rate)",
            "use --epsilon with --delta for a rigorous calibration, or --method clt for an approximation",
        )
    guess = _clt_noise(mu, run)
    search = calibrate.smallest_noise(
        lambda noise: dpsgd.clt_mu(dataclasses.replace(run, noise_multiplier=noise)),
        mu,
        guess,
        guess * (1 + tolerance),
        rtol=tolerance,
    )
    return _mu_row(mu, search.noise, search.value, Guarantee.APPROXIMATION, "clt")


def _mu_row(mu: float, noise: float, achieved: float, guarantee: Guarantee, method: str) -> dict:
    """One `calibrate sgd --mu` row."""
    return {
        "mu": mu,
        "noise_multiplier": noise,
        "achieved_mu": achieved,
        "guarantee": guarantee,
        "method": method,
    }
