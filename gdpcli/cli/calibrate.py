"""`gdpcli calibrate KIND`: the least noise that meets a privacy target, and the privacy it achieves.

Every row states the noise and the privacy actually achieved at that noise (`achieved_*` columns, so
the slack is visible), labelled with `guarantee` and `method`. Targets are the row's `epsilon`, `delta`
or `mu`; lists and ranges give one row per target.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from gdpcli.cli import options
from gdpcli.errors import InputError

if TYPE_CHECKING:
    from gdpcli.accounting.dpsgd import Method

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


MaxTprOption = Annotated[
    float | None,
    typer.Option(
        "--max-tpr", help="Risk target: the most any attack's TPR may be at --at-fpr (see gdpcli risk)."
    ),
]
AtFprOption = Annotated[float | None, typer.Option("--at-fpr", help="The false-positive rate of --max-tpr.")]
MaxAdvantageOption = Annotated[
    float | None,
    typer.Option(
        "--max-advantage", help="Risk target: the most any attack's TPR - FPR may be (see gdpcli risk)."
    ),
]


def _risk_target(
    max_tpr: float | None, at_fpr: float | None, max_advantage: float | None, *others: object
) -> bool:
    """Whether a risk target was given (checked; not with an epsilon, delta or mu target)."""
    from gdpcli.accounting import risk

    if max_tpr is None and at_fpr is None and max_advantage is None:
        return False
    if any(other is not None for other in others):
        raise InputError("give a risk target or an --epsilon/--delta/--mu target", "not both")
    risk.check_target(max_tpr, at_fpr, max_advantage)
    return True


GAUSSIAN_EPILOG = """\b
Examples:
  gdpcli calibrate gaussian --epsilon 1 --delta 1e-5          analytic sigma 3.7306
  gdpcli calibrate gaussian --epsilon 0.1 --delta 1e-6 --sens 2   analytic beside classical
  gdpcli calibrate gaussian --epsilon 0.5,1,2,4 --delta 1e-5 -f csv   one row per target
  gdpcli calibrate gaussian --mu 0.5                          sigma = sens / mu = 2
  gdpcli calibrate gaussian --max-tpr 0.05 --at-fpr 0.01      no attack beats TPR 5 % at FPR 1 %
"""


@app.command(epilog=GAUSSIAN_EPILOG)
def gaussian(
    epsilon: TargetEpsilonOption = None,
    delta: TargetDeltaOption = None,
    mu: TargetMuOption = None,
    sens: SensitivityOption = 1.0,
    max_tpr: MaxTprOption = None,
    at_fpr: AtFprOption = None,
    max_advantage: MaxAdvantageOption = None,
    fmt: options.FormatOption = None,
) -> None:
    """Gaussian sigma for a target (epsilon, delta) (analytic, Balle & Wang Thm 8), a target mu, or a risk
    target (exact: G_mu's attack TPR and advantage in closed form)."""
    from gdpcli.accounting import calibration
    from gdpcli.cli import output

    options.positive(sens, "--sens")
    if _risk_target(max_tpr, at_fpr, max_advantage, epsilon, delta, mu):
        rows = [calibration.gaussian_for_risk(max_tpr, at_fpr, max_advantage, sens)]
        inputs = {"max_tpr": max_tpr, "at_fpr": at_fpr, "max_advantage": max_advantage, "sens": sens}
        result = output.Result(
            "calibrate gaussian", inputs, rows, "gdpcli calibrate gaussian", [], ("sigma",)
        )
        output.emit(result, fmt)
        return
    if mu is not None:
        if epsilon is not None or delta is not None:
            raise InputError("give either --mu or --epsilon with --delta", "not both")
        rows = [calibration.gaussian_for_mu(target, sens) for target in _targets(mu, "--mu") or []]
    else:
        pairs = _epsilon_delta_pairs(epsilon, delta)
        rows = [row for e, d in pairs for row in calibration.gaussian_for_epsilon_delta(e, d, sens)]
    notes = [CLASSICAL_NOTE] if any(row.get("valid") is False for row in rows) else []
    inputs = options.echo_inputs(
        epsilon=_targets(epsilon, "--epsilon"), delta=_targets(delta, "--delta"), mu=_targets(mu, "--mu")
    ) | {"sens": sens}
    output.emit(
        output.Result("calibrate gaussian", inputs, rows, "gdpcli calibrate gaussian", notes, ("sigma",)), fmt
    )


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
    from gdpcli.accounting import calibration
    from gdpcli.cli import output

    options.positive(sens, "--sens")
    epsilons = _targets(epsilon, "--epsilon")
    if epsilons is None:
        raise InputError("give --epsilon", "the target of pure epsilon-DP")
    rows = [calibration.laplace_for_epsilon(target, sens) for target in epsilons]
    inputs = {"epsilon": epsilons, "sens": sens}
    output.emit(output.Result("calibrate laplace", inputs, rows, "gdpcli calibrate laplace", [], ("b",)), fmt)


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
    from gdpcli.accounting import calibration
    from gdpcli.cli import output

    formula = expr.parse(noise)
    rows = []
    for target_epsilon, target_delta in _epsilon_delta_pairs(epsilon, delta):
        expr.evaluate(formula, target_epsilon, target_delta)
        rows += calibration.family_for(formula, target_epsilon, target_delta)
    notes = [
        "sigma = f(epsilon0, delta0) is (epsilon0, delta0)-DP by the family's own equation, which implies "
        "(epsilon, achieved_delta)-DP (GDPT Thm 3.1); achieved_delta <= delta"
    ]
    inputs = {"noise": noise, "epsilon": _targets(epsilon, "--epsilon"), "delta": _targets(delta, "--delta")}
    output.emit(
        output.Result(
            "calibrate family", inputs, rows, f"gdpcli calibrate family {noise}", notes, ("sigma",)
        ),
        fmt,
    )


SGD_EPILOG = """\b
Examples:
  gdpcli calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 --epsilon 3 --delta 1e-5
  gdpcli calibrate sgd --sampling-rate 0.01 --steps 10000 --epsilon 1,2,4 --delta 1e-6 -f csv
  gdpcli calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 --epsilon 3 --delta 1e-5 \\
      --method rdp                                  the moments accountant's (larger) noise
  gdpcli calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 --mu 1 --method clt
  gdpcli calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 --max-tpr 0.05 --at-fpr 0.01
                                                    no attack beats TPR 5 % at FPR 1 % (rigorous)
  gdpcli calibrate sgd --dataset-size 60000 --schedule examples/phases.csv \\
      --epsilon 3 --delta 1e-5 --scale last         the last phase's noise for the schedule's target
"""

SgdMethod = options.choices("SgdMethod", ("auto", "exact", "pld", "rdp", "clt"))
Scale = options.choices("Scale", ("all", "last"))


@app.command(epilog=SGD_EPILOG)
@options.grouped(run_options=options.run_options)
def sgd(
    *,
    run_options: options.RunOptions,
    epsilon: TargetEpsilonOption = None,
    delta: TargetDeltaOption = None,
    mu: TargetMuOption = None,
    method: Annotated[
        SgdMethod,
        typer.Option(
            "--method",
            help="auto (exact GDP at sampling rate 1, else the rigorous PLD upper bound) | exact (closed "
            "form only) | pld (rigorous PLD upper bound) | rdp (moments accountant, rigorous, Poisson) | "
            "clt (approximation).",
        ),
    ] = "auto",
    conversion: options.ConversionOption = "optimal",
    tolerance: Annotated[
        float, typer.Option("--tolerance", help="Relative search tolerance on the noise multiplier.")
    ] = 1e-3,
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    scale: Annotated[
        Scale,
        typer.Option(
            "--scale",
            help="With --schedule: scale every phase's noise multiplier (all) or the last phase's (last).",
        ),
    ] = "all",
    max_tpr: MaxTprOption = None,
    at_fpr: AtFprOption = None,
    max_advantage: MaxAdvantageOption = None,
    fmt: options.FormatOption = None,
) -> None:
    """The smallest DP-SGD noise multiplier for a target (epsilon, delta), mu or attack risk, rounded to the
    safe side."""
    from gdpcli.accounting import calibration, dpsgd
    from gdpcli.cli import output

    options.positive(accuracy, "--accuracy")
    if not 1e-9 <= tolerance < 1:
        raise InputError(f"--tolerance: {tolerance!r} is out of range", "allowed: [1e-09, 1)")
    if _risk_target(max_tpr, at_fpr, max_advantage, epsilon, delta, mu):
        q, steps, _ = run_options.rate_and_steps()
        run = run_options.run(q, steps, 1.0)
        row = calibration.sgd_risk_row(max_tpr, at_fpr, max_advantage, run, tolerance, accuracy)
        inputs = options.echo_inputs(**run_options.echo(), max_tpr=max_tpr, at_fpr=at_fpr)
        inputs |= {"max_advantage": max_advantage, "tolerance": tolerance, "accuracy": accuracy}
        notes = ["fed back to `gdpcli risk`, the run's upper bound meets the target"]
        result = output.Result(
            "calibrate sgd", inputs, [row], "gdpcli calibrate sgd", notes, ("noise_multiplier",)
        )
        output.emit(result, fmt)
        return
    if mu is not None and (epsilon is not None or delta is not None):
        raise InputError("give either --mu or --epsilon with --delta", "not both")
    mus = _targets(mu, "--mu")
    pairs = _epsilon_delta_pairs(epsilon, delta) if mus is None else []
    if run_options.schedule is not None:
        _schedule(run_options, pairs, dpsgd.Method(method, accuracy, conversion), scale, tolerance, fmt)
        return
    q, T, n_epochs = run_options.rate_and_steps()
    run = run_options.run(q, T, 1.0)
    context = {
        "sampling": run_options.sampling,
        "neighbouring": run.neighbouring,
        "sensitivity": run.step_sensitivity,
        "sampling_rate": q,
        "steps": T,
        "epochs": n_epochs,
    }
    conversions = dpsgd.CONVERSIONS[:-1] if method == "rdp" and conversion == "all" else (conversion,)
    rows = [calibration.sgd_mu_row(target, run, method, tolerance) | context for target in mus or []]
    rows += [
        calibration.sgd_epsilon_row(e, d, run, method, name, tolerance, accuracy) | context
        for e, d in pairs
        for name in conversions
    ]
    figure = "mu" if mus else "epsilon"
    notes = [f"fed back to `gdpcli sgd --method {method}`, noise_multiplier gives {figure} <= the target"]
    inputs = options.echo_inputs(
        **run_options.echo(),
        epsilon=_targets(epsilon, "--epsilon"),
        delta=_targets(delta, "--delta"),
        mu=_targets(mu, "--mu"),
        **options.method_inputs(method, conversion, accuracy),
        tolerance=tolerance,
    )
    result = output.Result(
        "calibrate sgd", inputs, rows, "gdpcli calibrate sgd", notes, ("noise_multiplier",)
    )
    output.emit(result, fmt)


def _schedule(
    run_options: options.RunOptions,
    pairs: list[tuple[float, float]],
    method: Method,
    scale: str,
    tolerance: float,
    fmt: options.Format | None,
) -> None:
    """calibrate sgd --schedule: the least scale of the noise multipliers (all, or the last phase's) that
    meets each (epsilon, delta) target on the schedule's rigorous upper bound."""
    from gdpcli.accounting import calibration
    from gdpcli.cli import output

    if not pairs:
        raise InputError("--mu cannot go with --schedule", "give --epsilon with --delta")
    if method.name == "clt":
        raise InputError("--method clt cannot certify a schedule", "use auto, pld or rdp")
    phases = run_options.phases()
    rows = [
        calibration.schedule_epsilon_row(e, d, phases, method, scale == "last", tolerance) for e, d in pairs
    ]
    notes = ["fed back to `gdpcli sgd --schedule` with the scaled noise multipliers, epsilon <= the target"]
    inputs = options.echo_inputs(
        schedule=run_options.schedule,
        scale=scale,
        **options.method_inputs(method.name, method.conversion, method.accuracy),
        tolerance=tolerance,
    )
    result = output.Result(
        "calibrate sgd", inputs, rows, "gdpcli calibrate sgd --schedule", notes, ("scale",)
    )
    output.emit(result, fmt)
