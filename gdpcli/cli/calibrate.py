"""`gdpcli calibrate KIND`: the least noise that meets a privacy target, and the privacy it achieves.

Every row states the noise and the privacy actually achieved at that noise (`achieved_*` columns, so
the slack is visible), labelled with `guarantee` and `method`. Targets are the row's `epsilon`, `delta`
or `mu`; lists and ranges give one row per target. `calibrate canonical SPEC` is the other way round: the
noise whose privacy is exactly SPEC's trade-off function (its canonical noise distribution), by quantiles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from gdpcli.cli import options
from gdpcli.defaults import NOISE_TOLERANCE
from gdpcli.errors import InputError

if TYPE_CHECKING:
    from gdpcli.accounting.dpsgd import Method

app = typer.Typer(
    help="The least noise that meets a privacy target (Gaussian, Laplace, DP-SGD, trade-off families), and "
    "the canonical noise of a trade-off function.",
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


def _targets(text: str | None, option: str, *, zero: bool = False) -> list[float] | None:
    """Target epsilons (> 0, or >= 0 with zero), deltas (in (0, 1)) or mus (> 0) from a value, list or
    range."""
    if text is None:
        return None
    if option == "--delta":
        return options.deltas(text)
    values = options.parse_values(text, option)
    return options.check_range(values, option, low=0, high=1e300, low_open=not zero)


def _epsilon_delta_pairs(
    epsilon: str | None, delta: str | None, *, zero_epsilon: bool = False
) -> list[tuple[float, float]]:
    """Every (target epsilon, target delta) combination; both options are required."""
    epsilons, deltas = _targets(epsilon, "--epsilon", zero=zero_epsilon), _targets(delta, "--delta")
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
ClosedFormOption = Annotated[
    bool,
    typer.Option(
        "--closed-form",
        help="Also the hundred-rounds paper's closed-form noise (Asoodeh et al.: moments accountant eq. 23 "
        "and 28, Thm 5), each with the epsilon it achieves; valid=false where not proven to meet the target.",
    ),
]
CLOSED_FORM_NOTE = (
    "closed-form-eq23|eq28|thm5: the hundred-rounds paper's noise for T Gaussian steps (eq. 23 solved for "
    "the noise, eq. 28 and Thm 5 without their O-terms; at sampling rate q < 1 with Abadi et al.'s rho = "
    "q^2 / ((1 - q) s^2) per step, an approximation); achieved_epsilon is gdpcli's own figure at that noise; "
    "valid=true only for eq. 23 and 28 at q = 1, proven sufficient (Thm 5 without its O-term can fall short)"
)


def _closed_form_check(closed_form: bool, *others: object) -> None:
    """--closed-form answers an (epsilon, delta) target only: not --mu, a risk target or --schedule."""
    if closed_form and any(other is not None for other in others):
        raise InputError(
            "--closed-form takes an --epsilon/--delta target", "not --mu, a risk target or --schedule"
        )


def _closed_form_notes(rows: list[dict], pairs: list[tuple[float, float]]) -> list[str]:
    """The closed forms' note, and which targets Thm 5 states no noise for (its variance is <= 0)."""
    stated = {(row["epsilon"], row["delta"]) for row in rows if row["method"] == "closed-form-thm5"}
    missing = [f"epsilon {e:g}, delta {d:g}" for e, d in pairs if (e, d) not in stated]
    if not missing:
        return [CLOSED_FORM_NOTE]
    return [
        CLOSED_FORM_NOTE,
        f"closed-form-thm5 states no noise at {'; '.join(missing)}: its variance without the O-term is <= 0",
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
  # analytic sigma 3.7306
  gdpcli calibrate gaussian --epsilon 1 --delta 1e-5
  # analytic beside classical
  gdpcli calibrate gaussian --epsilon 0.1 --delta 1e-6 --sens 2
  # one row per target
  gdpcli calibrate gaussian --epsilon 0.5,1,2,4 --delta 1e-5 -f csv
  # sigma = sens / mu = 2
  gdpcli calibrate gaussian --mu 0.5
  # no attack beats TPR 5 % at FPR 1 %
  gdpcli calibrate gaussian --max-tpr 0.05 --at-fpr 0.01
  # the hundred-rounds closed forms too
  gdpcli calibrate gaussian --epsilon 1 --delta 1e-5 --closed-form
"""


@app.command(epilog=GAUSSIAN_EPILOG)
def gaussian(
    epsilon: TargetEpsilonOption = None,
    delta: TargetDeltaOption = None,
    closed_form: ClosedFormOption = False,
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
    _closed_form_check(closed_form, mu, max_tpr, at_fpr, max_advantage)
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
        pairs = _epsilon_delta_pairs(epsilon, delta, zero_epsilon=True)  # eps = 0: Balle & Wang at 0
        rows = [row for e, d in pairs for row in calibration.gaussian_for_epsilon_delta(e, d, sens)]
        if closed_form and any(e == 0.0 for e, _ in pairs):
            raise InputError("--closed-form: epsilon 0 has no closed-form noise", "give targets epsilon > 0")
        if closed_form:
            rows += [row for e, d in pairs for row in calibration.gaussian_closed_forms(e, d, sens)]
    invalid_classical = any(row["method"] == "classical" and not row["valid"] for row in rows)
    notes = [CLASSICAL_NOTE] if invalid_classical else []
    notes += _closed_form_notes(rows, pairs) if closed_form else []
    inputs = options.echo_inputs(
        epsilon=_targets(epsilon, "--epsilon", zero=True),
        delta=_targets(delta, "--delta"),
        mu=_targets(mu, "--mu"),
        closed_form=closed_form or None,
    ) | {"sens": sens}
    output.emit(
        output.Result("calibrate gaussian", inputs, rows, "gdpcli calibrate gaussian", notes, ("sigma",)), fmt
    )


LAPLACE_EPILOG = """\b
Examples:
  # b = 1
  gdpcli calibrate laplace --epsilon 1
  # b = 6
  gdpcli calibrate laplace --epsilon 0.5 --sens 3
  # one row per target epsilon
  gdpcli calibrate laplace --epsilon 0.1:1:10 -f csv
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
  # sigma = -log(delta) / eps, refined at one target
  gdpcli calibrate family --noise "-log(delta)/eps" --epsilon 0.2 \\
      --delta 0.1353352832366127
  # one row per target epsilon
  gdpcli calibrate family --noise "2*log(1/delta)/eps" --epsilon 0.1:1:4 \\
      --delta 0.1 -f csv
  # the classical Gaussian mechanism's noise, refined
  gdpcli calibrate family --noise "sqrt(2*log(1.25/delta))/eps" \\
      --epsilon 0.5 --delta 1e-5
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


CANONICAL_EPILOG = """\b
Examples:
  # N(0, sigma^2) with sigma = sens / mu = 2
  gdpcli calibrate canonical gdp:mu=0.5
  # Tulap(0, b, q) (Awan and Vadhan 2023)
  gdpcli calibrate canonical dp:eps=1,delta=1e-5
  # quantiles of the noise for a query of sensitivity 3
  gdpcli calibrate canonical dp:eps=1 --sens 3 --quantiles 0.9,0.99 -f csv
  # the recursive construction, not Lap(0, 1)
  gdpcli calibrate canonical laplace:b=1 --recursive
  # any symmetric trade-off curve, recursively
  gdpcli calibrate canonical tradeoff:file=examples/tradeoff_g1.csv
  # reproducible draws, for tests
  gdpcli calibrate canonical gdp:mu=1 --sample 1000 --seed 7 -f csv

SPEC is one shell word KIND:key=value,...: `gdpcli specs` lists every kind.
"""

DEFAULT_QUANTILES = "0.5,0.75,0.9,0.99,0.999,0.999999"
MAX_SAMPLE = 1_000_000


@app.command(epilog=CANONICAL_EPILOG)
def canonical(
    spec: Annotated[
        str, typer.Argument(help="Mechanism spec with a symmetric trade-off function, e.g. gdp:mu=1.")
    ],
    quantiles: Annotated[
        str | None,
        typer.Option(
            "--quantiles",
            help=f"Probabilities in (0, 1) to tabulate the noise at: P, P1,P2,... or START:STOP:NUM "
            f"(default {DEFAULT_QUANTILES}).",
        ),
    ] = None,
    sens: SensitivityOption = 1.0,
    recursive: Annotated[
        bool,
        typer.Option(
            "--recursive",
            help="The recursive construction from f (Awan and Vadhan 2023, Thm 3.9) even where a closed "
            "form exists (gdp/gaussian: Gaussian; laplace: Laplace; dp/rr: Tulap).",
        ),
    ] = False,
    sample: Annotated[
        int | None,
        typer.Option(
            "--sample", metavar="N", help=f"Print N draws (1 to {MAX_SAMPLE}) instead of quantiles."
        ),
    ] = None,
    seed: Annotated[
        int | None,
        typer.Option("--seed", help="Seed of the draws (reproducible; default: fresh entropy)."),
    ] = None,
    fmt: options.FormatOption = None,
) -> None:
    """The canonical noise distribution N of SPEC's trade-off function f: T(N, N + 1) = f and N symmetric,
    so sens x N added to a statistic of sensitivity sens is exactly f-DP (Awan and Vadhan 2023)."""
    from gdpcli.accounting import canonical as noise_of
    from gdpcli.cli import output
    from gdpcli.events.spec import parse_spec

    options.positive(sens, "--sens")
    if sample is not None and quantiles is not None:
        raise InputError(
            "give --quantiles or --sample, not both", "--sample prints draws instead of quantiles"
        )
    if sample is not None and not 1 <= sample <= MAX_SAMPLE:
        raise InputError(f"--sample: {sample} is out of range", f"allowed: 1 <= N <= {MAX_SAMPLE}")
    if seed is not None and (sample is None or seed < 0):
        raise InputError("--seed needs --sample and a seed >= 0", "e.g. --sample 1000 --seed 7")
    probabilities = options.check_range(
        options.parse_values(quantiles or DEFAULT_QUANTILES, "--quantiles"),
        "--quantiles",
        low=0,
        high=1,
        low_open=True,
        high_open=True,
    )
    event = parse_spec(spec)
    noise = noise_of.distribution(event, recursive)
    if sample is None:
        rows, answers = noise_of.quantile_rows(noise, probabilities, sens), ("quantile",)
    else:
        rows, answers = noise_of.sample_rows(noise, sample, sens, seed), ("noise",)
    inputs = options.echo_inputs(
        spec=spec, quantiles=None if sample else probabilities, sens=sens, sample=sample, seed=seed
    ) | {"recursive": recursive}
    notes = noise_of.notes(event, noise, sample is not None, seed is not None)
    title = f"gdpcli calibrate canonical {spec}"
    output.emit(output.Result("calibrate canonical", inputs, rows, title, notes, answers), fmt)


SGD_EPILOG = """\b
Examples:
  # the least noise multiplier for epsilon 3 (MNIST, 60 epochs)
  gdpcli calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 \\
      --epsilon 3 --delta 1e-5
  # one row per target epsilon
  gdpcli calibrate sgd --sampling-rate 0.01 --steps 10000 --epsilon 1,2,4 \\
      --delta 1e-6 -f csv
  # the moments accountant's (larger) noise
  gdpcli calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 \\
      --epsilon 3 --delta 1e-5 --method rdp
  # a target mu by the CLT (an approximation)
  gdpcli calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 \\
      --mu 1 --method clt
  # no attack beats TPR 5 % at FPR 1 % (rigorous)
  gdpcli calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 \\
      --max-tpr 0.05 --at-fpr 0.01
  # the last phase's noise for the schedule's target
  gdpcli calibrate sgd --dataset-size 60000 --schedule examples/phases.csv \\
      --epsilon 3 --delta 1e-5 --scale last
  # beside the hundred-rounds paper's sigma (eq. 23: 20)
  gdpcli calibrate sgd --sampling-rate 1 --steps 1000 --epsilon 8.84 \\
      --delta 1e-5 --closed-form
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
    closed_form: ClosedFormOption = False,
    tolerance: Annotated[
        float, typer.Option("--tolerance", help="Relative search tolerance on the noise multiplier.")
    ] = NOISE_TOLERANCE,
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
    _closed_form_check(closed_form, mu, max_tpr, at_fpr, max_advantage, run_options.schedule)
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
    if closed_form:
        rows += [
            row | context
            for e, d in pairs
            for row in calibration.sgd_closed_form_rows(e, d, run, method, conversion, accuracy)
        ]
        notes += _closed_form_notes(rows, pairs)
    inputs = options.echo_inputs(
        **run_options.echo(),
        epsilon=_targets(epsilon, "--epsilon"),
        delta=_targets(delta, "--delta"),
        mu=_targets(mu, "--mu"),
        **options.method_inputs(method, conversion, accuracy),
        tolerance=tolerance,
        closed_form=closed_form or None,
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
    phases, event_notes = run_options.noted_phases()
    rows = [
        calibration.schedule_epsilon_row(e, d, phases, method, scale == "last", tolerance) for e, d in pairs
    ]
    notes = [
        *event_notes,
        "fed back to `gdpcli sgd --schedule` with the scaled noise multipliers, epsilon <= the target",
    ]
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
