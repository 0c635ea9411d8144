"""`gdpcli sgd`: the privacy of a DP-SGD run, and step budgets (accounting: gdpcli.accounting.dpsgd)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gdpcli.cli import options
from gdpcli.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

    from gdpcli.accounting import Answer
    from gdpcli.accounting.dpsgd import Budget, Method
    from gdpcli.accounting.planning import Plan
    from gdpcli.events import Run

EPILOG = """\b
Examples (MNIST: 60000 examples, batches of 256, so 60 epochs are
T = ceil(60 * 60000 / 256) = 14063 steps):
  # rigorous upper and lower bounds
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60 --delta 1e-5
  # every method side by side
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60 --delta 1e-5 --method all
  # fixed-size batches (Thm 10)
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60 --delta 1e-5 --sampling fixed
  # shuffled batches: upper and lower bounds beside what Poisson accounting
  # would claim
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60 --delta 1e-5 --sampling shuffle
  # each example in one random batch an epoch: upper and lower bounds
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60 --delta 1e-5 --sampling balls-in-bins
  # each example in exactly 60 random batches of the run's 14063 steps
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --steps 14063 --delta 1e-5 --sampling balls-in-bins --participations 60
  # micro-batches of 64, 4 accumulated into each (noised) logical batch
  gdpcli sgd --dataset-size 60000 --batch-size 64 --accumulation-steps 4 \\
      --noise-multiplier 1.1 --epochs 60 --delta 1e-5
  # Poisson batches cut at 300: upper and lower bounds
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60 --delta 1e-5 --sampling truncated-poisson \\
      --max-batch-size 300
  # the most steps (epochs) within epsilon 3
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --delta 1e-5 --target-epsilon 3
  # CI check: exit 3 if epsilon exceeds 4
  gdpcli sgd --sampling-rate 0.01 --noise-multiplier 1 --steps 5000 \\
      --delta 1e-5 --max-epsilon 4
  # also draw the trade-off curve
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60 --delta 1e-5 --plot sgd.png
  # users with 2 examples each, every example Poisson-sampled on its own:
  # PLD bounds
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60 --delta 1e-5 --group 2
  # user-level sampling instead (users sampled, each adding all its K = 2
  # examples to the batch): the plain run at sensitivity K C
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60 --delta 1e-5 --sensitivity 2
  # a hyper-parameter search releasing the best of K runs, K geometric of
  # mean 10 (RDP upper bound)
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60 --delta 1e-5 --runs-distribution geometric:mean=10
"""

RunsOption = Annotated[
    int,
    typer.Option(
        "--runs",
        help="K identical runs on the same data (a hyper-parameter search): their K-fold composition.",
    ),
]
SgdTo = options.choices("SgdTo", ("dp-event",))
ToOption = Annotated[
    SgdTo | None,
    typer.Option(
        "--to",
        help="dp-event: the run (or schedule) as a dp_accounting DpEvent, JSON on stdout, to cross-check "
        "in dp_accounting or read back with gdpcli compose --specs (runs of independently sampled steps: "
        "poisson and fixed).",
    ),
]
RunsDistributionOption = Annotated[
    str | None,
    typer.Option(
        "--runs-distribution",
        help="A hyper-parameter search that releases only the best run: a random number K of runs, K drawn "
        "independently of the data from poisson:mean=M | geometric:mean=M | negative-binomial:mean=M,shape=S "
        "(shape > -1; 0 logarithmic, 1 geometric). Accounted in RDP (Papernot and Steinke 2022, Thm 2; Thm 6 "
        "for poisson): a rigorous upper bound. Not with --runs > 1.",
    ),
]
METHOD_HELP = (
    "auto (exact GDP when every step uses all data, else rigorous PLD upper and lower bounds) | exact "
    "(closed form only) | pld (rigorous PLD bounds) | clt (CLT "
    "approximation, GDP paper Cor. 4 / Poisson formula) | edgeworth (the Edgeworth accountant, Wang et al. "
    "2022: an approximation, Poisson and fixed-size) | berry-esseen (GDP paper Cor. 5, fixed-size "
    "only; an approximation when q < 1, its functionals come from quadrature without a proven error "
    "bound) | rdp (moments accountant, Poisson) | all."
)


@options.grouped(run_options=options.run_options, output=options.output_options)
def command(
    *,
    run_options: options.RunOptions,
    noise_multiplier: options.NoiseMultiplierOption = None,
    delta: options.DeltaOption = None,
    method: Annotated[options.Method, typer.Option("--method", help=METHOD_HELP)] = "auto",
    conversion: options.ConversionOption = "optimal",
    accuracy: options.AccuracyOption = options.DEFAULT_ACCURACY,
    target_epsilon: options.TargetEpsilonOption = None,
    max_epsilon: options.MaxEpsilonOption = None,
    runs: RunsOption = 1,
    runs_distribution: RunsDistributionOption = None,
    group: options.GroupOption = None,
    to: ToOption = None,
    output: options.Output,
) -> None:
    """Privacy of DP-SGD (epsilon at delta) by several accountants, and step budgets for a target epsilon."""
    from gdpcli.accounting import check_budget, dpsgd, planning
    from gdpcli.accounting.run import check_run, repeated
    from gdpcli.cli import queries
    from gdpcli.cli.output import Result, emit

    options.positive(accuracy, "--accuracy")
    options.positive(noise_multiplier, "--noise-multiplier")
    options.positive(target_epsilon, "--target-epsilon")
    options.positive(max_epsilon, "--max-epsilon")
    if runs < 1:
        raise InputError(f"--runs: must be a whole number >= 1, got {runs}")
    if to == "dp-event":
        asked = any(value is not None for value in (delta, target_epsilon, max_epsilon, output.plot))
        _print_events(run_options, noise_multiplier, runs, group, asked, output.fmt)
        return
    if delta is None:
        raise InputError("--delta is required", "epsilon is reported at that delta, e.g. --delta 1e-5")
    deltas = options.deltas(delta)
    if runs_distribution is not None:
        _check_search(run_options, runs, group, output)
    if run_options.schedule is not None:
        for option, value in (("--noise-multiplier", noise_multiplier), ("--target-epsilon", target_epsilon)):
            if value is not None:
                raise InputError(
                    f"{option} cannot go with --schedule",
                    "the schedule's phases carry their noise; calibrate sgd --schedule scales it",
                )
        if output.plot:
            raise InputError("--plot draws one run", "drop --plot with --schedule")
        if group is not None:
            raise InputError("--group accounts one run", "drop --group with --schedule")
        method_choice = dpsgd.Method(method, accuracy, conversion)
        _schedule(run_options, runs, deltas, method_choice, max_epsilon, output)
        return
    if noise_multiplier is None:
        raise InputError("--noise-multiplier is required", "the noise standard deviation / clipping norm")
    if max_epsilon is not None:
        dpsgd.check_budget_method(method)
    budget_only = target_epsilon is not None and run_options.epochs is None and run_options.steps is None
    if budget_only and max_epsilon is not None:
        raise InputError("--max-epsilon checks a run", "give --epochs or --steps with it")
    if budget_only and output.plot:
        raise InputError("--plot draws a run", "give --epochs or --steps with it")
    if budget_only:
        q, total = run_options.sampling_rate_of(), None
        if runs != 1:
            raise InputError("--runs composes runs of a given length", "give --epochs or --steps with it")
    else:
        q, total, _ = run_options.rate_and_steps()
    sampling = run_options.sampling
    run = run_options.run(q, total or 1, noise_multiplier)
    _check_whole_rounds(run, runs)
    run = repeated(run, runs)
    if group is not None:
        run = dataclasses.replace(run, group=group)
        check_run(run)
    total = None if budget_only else run.steps
    if output.plot and not (run.sampling.per_step or run.bands):
        raise InputError(f"--plot draws a trade-off curve; a {sampling} run has bounds on it", "drop --plot")
    if runs_distribution is not None:
        choice = dpsgd.Method(method, accuracy, conversion)
        budgets = (target_epsilon, total)
        _search(run_options, run, runs_distribution, deltas, choice, budgets, max_epsilon, output)
        return
    entries = planning.plan(run, method, accuracy=accuracy, conversion=conversion)
    notes = queries.skipped(entries)
    answers = [] if budget_only else queries.epsilon_answers(entries, deltas, notes)
    accumulation = run_options.accumulation_steps
    rows = [_figure_row(run, answer, accumulation) for answer in answers]
    notes += _group_notes(run, answers) + _accumulation_note(accumulation, sampling)
    if target_epsilon is not None:
        budgets = [
            (
                d,
                dpsgd.largest_steps(run, d, target_epsilon, dpsgd.Method(name, accuracy, name_conversion)),
            )
            for d in deltas
            for name, name_conversion in _budget_methods(entries, conversion)
        ]
        rows += [_budget_row(budget, d, total, accumulation) for d, budget in budgets]
        notes += _budget_notes([budget for _, budget in budgets], total)
    inputs = options.echo_inputs(
        **run_options.echo() | {"sampling_rate": q, "steps": total},
        noise_multiplier=noise_multiplier,
        delta=deltas,
        **options.method_inputs(method, conversion, accuracy),
        target_epsilon=target_epsilon,
        max_epsilon=max_epsilon,
        group=group,
    )
    rate = f"q = {q:.6g}" if run.bands is None else _cyclic_rate(run)
    title = (
        f"gdpcli sgd: {rate}, sigma = {noise_multiplier:g}, {sampling} sampling ({run.neighbouring}, "
        f"sensitivity {run.step_sensitivity:g} C, mu per step {run.step_mu:.6g})"
        + (f", groups of {run.group} records" if run.group > 1 else "")
        + (f", {run.participations} batches of every {run.round_steps}" if run.participations > 1 else "")
        + (f", logical batches of {accumulation} micro-batches" if accumulation is not None else "")
    )
    if output.plot:
        _plot(output.plot, f"{title}, T = {run.steps}", run, accuracy)
    quoted = ("epsilon", "steps", "epochs") if target_epsilon is not None else ("epsilon",)
    emit(Result("sgd", inputs, rows, title, notes, quoted), output.fmt)
    check_budget(answers, max_epsilon=max_epsilon)


def _cyclic_rate(run: Run) -> str:
    """The rate of a cyclic-Poisson run as the title gives it: p within the active part, the expected
    batch's share and the most steps an example is in."""
    from gdpcli.accounting.cyclic_poisson import participations

    assert run.bands is not None
    return (
        f"p = {run.sampling_rate:.6g} within each of {run.bands} parts (expected batch "
        f"{run.sampling_rate / run.bands:.6g} N), at most {participations(run.steps, run.bands)} steps per "
        "example"
    )


def _schedule(
    run_options: options.RunOptions,
    runs: int,
    deltas: list[float],
    method: Method,
    max_epsilon: float | None,
    output: options.Output,
) -> None:
    """sgd --schedule: the phases (merged, times --runs) composed by method, one row per figure."""
    import numpy as np

    from gdpcli.accounting import Answer, check_budget, schedules
    from gdpcli.cli import queries
    from gdpcli.cli.output import Result, emit

    read, event_notes = run_options.noted_phases()
    phases = schedules.merged(read, runs)
    answers = [
        Answer("delta", np.array([delta]), figure)
        for delta in deltas
        for figure in schedules.figures(phases, delta, method)
    ]
    context = {
        "phases": len(phases),
        "neighbouring": phases[0].neighbouring,
        "steps": sum(phase.steps for phase in phases),
        "epochs": schedules.epochs(phases),
    }
    rows = [
        context
        | {"delta": float(answer.queries[0]), "epsilon": float(answer.figure.values[0])}
        | {"guarantee": answer.figure.guarantee, "method": answer.figure.method}
        for answer in answers
    ]
    inputs = options.echo_inputs(
        schedule=[dataclasses.asdict(phase) for phase in phases],
        runs=runs,
        delta=deltas,
        **options.method_inputs(method.name, method.conversion, method.accuracy),
        max_epsilon=max_epsilon,
    )
    title = f"gdpcli sgd: a schedule of {len(phases)} phases ({phases[0].neighbouring})"
    notes = event_notes + queries.notes_of(answers)
    emit(Result("sgd", inputs, rows, title, notes, ("epsilon",)), output.fmt)
    check_budget(answers, max_epsilon=max_epsilon)


def _print_events(
    run_options: options.RunOptions,
    noise_multiplier: float | None,
    runs: int,
    group: int | None,
    asked: bool,
    fmt: str | None,
) -> None:
    """sgd --to dp-event: the run's (or the schedule's phases') steps as a dp_accounting event."""
    from gdpcli.accounting import schedules
    from gdpcli.accounting.run import check_run, repeated
    from gdpcli.cli.output import print_dp_event

    if run_options.schedule is not None:
        phases = list(schedules.merged(run_options.phases(), runs))
    else:
        if noise_multiplier is None:
            raise InputError("--noise-multiplier is required", "the noise standard deviation / clipping norm")
        q, total, _ = run_options.rate_and_steps()
        run = repeated(run_options.run(q, total, noise_multiplier), runs)
        phases = [dataclasses.replace(run, group=group) if group is not None else run]
    for phase in phases:
        check_run(phase)
        if not phase.sampling.per_step:
            raise InputError(
                f"--to dp-event writes runs of independently sampled steps; a {phase.sampling} run's batches "
                "are drawn for the whole run, which no dp_accounting event describes",
                "use --sampling poisson or fixed",
            )
    print_dp_event([phase.spec() for phase in phases], asked, fmt)


def _check_search(
    run_options: options.RunOptions, runs: int, group: int | None, output: options.Output
) -> None:
    """InputError for what --runs-distribution does not go with (the runs searched are all alike)."""
    for given, what in (
        (runs != 1, "--runs (K is random here)"),
        (run_options.schedule is not None, "--schedule"),
        (group is not None, "--group"),
        (output.plot is not None, "--plot (the search has no trade-off curve here, only RDP)"),
    ):
        if given:
            raise InputError(f"--runs-distribution does not go with {what}")


def _search(
    run_options: options.RunOptions,
    run: Run,
    distribution: str,
    deltas: list[float],
    method: Method,
    budgets: tuple[float | None, int | None],
    max_epsilon: float | None,
    output: options.Output,
) -> None:
    """sgd --runs-distribution: the best of K runs (events.RepeatAndSelect), K random, accounted in RDP;
    budgets = (--target-epsilon, the steps asked: None for a step budget alone)."""
    import numpy as np

    from gdpcli import events
    from gdpcli.accounting import Answer, check_budget, dpsgd, planning, search
    from gdpcli.cli import queries
    from gdpcli.cli.output import Result, emit
    from gdpcli.events.repeat_select import RDP_ONLY

    runs = events.RunsDistribution.parse(distribution)
    if method.name not in ("auto", "rdp", "all"):
        raise InputError(f"--runs-distribution with --method {method.name}: {RDP_ONLY}", "use --method rdp")
    if dpsgd.unavailable(run, "rdp") is not None:
        raise InputError(
            f"--runs-distribution with --sampling {run.sampling}: the search is accounted in RDP, which "
            "gdpcli has for Poisson batches (or every step on all data) only",
            "use --sampling poisson",
        )
    target_epsilon, total = budgets
    [(_, accountant)] = planning.plan(
        search.searched(run, runs), "rdp", accuracy=method.accuracy, conversion=method.conversion
    )
    answers = [
        Answer("delta", np.array([d]), figure)
        for d in (deltas if total is not None else [])
        for figure in accountant.epsilon(np.array([d]))
    ]
    columns = {"runs_distribution": runs.name, "runs_mean": runs.mean}
    if runs.name == "negative-binomial":
        columns["runs_shape"] = runs.shape
    accumulation = run_options.accumulation_steps
    rows = [
        {**_context(run, accumulation), **columns, **_figure_row(run, answer, accumulation)}
        for answer in answers
    ]
    notes = [
        f"the release is the best of K runs, K ~ {runs.describe()} drawn independently of the data (a K that "
        f"depends on the data voids the bound); an upper bound by Papernot and Steinke 2022, {runs.theorem}, "
        "from one run's RDP curve",
        *queries.notes_of(answers),
        *_accumulation_note(accumulation, str(run.sampling)),
    ]
    if method.name == "all":
        notes.append(f"only rdp: {RDP_ONLY}")
    if target_epsilon is not None:
        found = [
            (d, search.largest_steps(run, runs, d, target_epsilon, conversion))
            for d in deltas
            for conversion in options.conversions(method.conversion)
        ]
        rows += [
            {**_context(budget.run, accumulation), **columns, **_budget_row(budget, d, total, accumulation)}
            for d, budget in found
        ]
        notes += _budget_notes([budget for _, budget in found], total)
    inputs = options.echo_inputs(
        **run_options.echo() | {"sampling_rate": run.sampling_rate, "steps": total},
        noise_multiplier=run.noise_multiplier,
        runs_distribution=runs.describe(),
        delta=deltas,
        **options.method_inputs(method.name, method.conversion, method.accuracy),
        target_epsilon=target_epsilon,
        max_epsilon=max_epsilon,
    )
    title = (
        f"gdpcli sgd: the best of K ~ {runs.describe()} runs, each q = {run.sampling_rate:.6g}, sigma = "
        f"{run.noise_multiplier:g}, {run.sampling} sampling ({run.neighbouring})"
    )
    quoted = ("epsilon", "steps", "epochs") if target_epsilon is not None else ("epsilon",)
    emit(Result("sgd", inputs, rows, title, notes, quoted), output.fmt)
    check_budget(answers, max_epsilon=max_epsilon)


def _plot(path: Path, title: str, run: Run, accuracy: float) -> None:
    """--plot: the run's trade-off curve (exact, or the PLD bounds shaded) beside the CLT's G_mu."""
    from gdpcli import accounting
    from gdpcli.accounting import dpsgd
    from gdpcli.cli import plot as plotting

    spec = dpsgd.accounted(run).spec()
    accountant = accounting.exact_accountant([spec]) or accounting.NumericalPLD([spec], accuracy)
    mu = dpsgd.clt_mu(run)
    reference = (f"CLT approximation $G_\\mu$, μ = {mu:.4g}", accounting.ApproximateGDP(mu))
    plotting.plot_accountants(path, title, [accountant], [reference])


def _context(run: Run, accumulation: int | None) -> dict[str, Any]:
    """The columns that describe the run, first in every row (group only for groups of K > 1 records,
    participations only above 1, bands for cyclic-Poisson runs; with gradient accumulation the steps are
    logical, physical_steps A T)."""
    physical = {} if accumulation is None else {"physical_steps": accumulation * run.steps}
    return (
        {
            "sampling": run.sampling,
            "neighbouring": run.neighbouring,
            "sampling_rate": run.sampling_rate,
            "noise_multiplier": run.noise_multiplier,
            "sensitivity": run.step_sensitivity,
            "step_mu": run.step_mu,
            "steps": run.steps,
        }
        | physical
        | {"epochs": run.epochs}
        | ({"participations": run.participations} if run.participations > 1 else {})
        | ({"group": run.group} if run.group > 1 else {})
        | _cyclic_context(run)
    )


def _check_whole_rounds(run: Run, runs: int) -> None:
    """InputError for --runs K > 1 of runs that end inside a round: the K-fold composition is the run of
    K T steps only when each run ends at a round's end (balls-in-bins with participations: a round of
    round_steps; cyclic-Poisson: a cycle of its bands)."""
    if runs > 1 and run.participations > 1 and run.steps % run.round_steps:
        raise InputError(
            f"--runs with --participations {run.participations} needs whole rounds of {run.round_steps} "
            f"steps each, got {run.steps}",
            "each run's partial round is a fresh one",
        )
    if runs > 1 and run.bands is not None and run.steps % run.bands:
        raise InputError(
            f"--runs with --bands {run.bands} needs runs of whole cycles of {run.bands} steps",
            "each run's first parts are sampled once more than the others",
        )


def _accumulation_note(accumulation: int | None, sampling: str) -> list[str]:
    """What the figures of a run with gradient accumulation assume (--accumulation-steps A)."""
    if accumulation is None:
        return []
    note = (
        f"steps are logical (optimizer) steps of {accumulation} micro-batches each, physical_steps = "
        f"{accumulation} x steps; the figures assume ONE noise draw per logical step (noise_multiplier x C "
        f"added to the sum of the {accumulation} micro-batches' clipped gradients); noise added to every "
        "micro-batch is another mechanism, which these figures do not describe"
    )
    if sampling == "poisson":
        note += "; the logical batch is one Poisson sample at rate q, split into the micro-batches"
    return [note]


def _cyclic_context(run: Run) -> dict[str, Any]:
    """A cyclic-Poisson run's bands and the most steps one example is in (none for other schemes)."""
    from gdpcli.accounting.cyclic_poisson import participations

    if run.bands is None:
        return {}
    return {"bands": run.bands, "steps_per_example": participations(run.steps, run.bands)}


def _group_notes(run: Run, answers: list[Answer]) -> list[str]:
    """For groups: what the CLT row is (K times the CLT mu, GDP paper Thm 3 applied to an approximation)."""
    if run.group == 1 or not any(answer.figure.method == "clt" for answer in answers):
        return []
    return [
        f"clt: {run.group} x the CLT mu (GDP paper Thm 3 applied to an approximation), no bound: for Poisson "
        "sampling the CLT is optimistic already for one record; the rigorous group bounds may lie above it"
    ]


def _figure_row(run: Run, answer: Answer, accumulation: int | None) -> dict[str, Any]:
    """One row: the run, delta, epsilon, (mu for the CLT), guarantee, method (and the RDP order used)."""
    from gdpcli.accounting import dpsgd

    figure = answer.figure
    extra = {"mu": dpsgd.clt_mu(run)} if figure.method == "clt" else {}
    return {
        **_context(run, accumulation),
        "delta": float(answer.queries[0]),
        "epsilon": float(figure.values[0]),
        **extra,
        "guarantee": figure.guarantee,
        "method": figure.method,
        **(figure.details[0] if figure.details else {}),
    }


def _budget_methods(entries: Plan, conversion: str) -> list[tuple[str, str]]:
    """(method, conversion) pairs to search a budget with: the planned methods that can answer."""
    from gdpcli.accounting import CONVERSIONS, planning

    pairs = []
    for found in planning.answering(entries):
        conversions = CONVERSIONS if conversion == "all" else (conversion,)
        pairs += (
            [(found.method, c) for c in conversions] if found.method == "rdp" else [(found.method, "optimal")]
        )
    return pairs


def _budget_row(budget: Budget, delta: float, total: int | None, accumulation: int | None) -> dict[str, Any]:
    """The budget: the largest steps within the target, its epochs and bound, and what is known beyond."""
    row = {
        **_context(budget.run, accumulation),
        "delta": delta,
        "target_epsilon": budget.target_epsilon,
        "epsilon": budget.epsilon if budget.steps else None,
        "guarantee": budget.guarantee,
        "method": budget.method,
    }
    if budget.exceeds_from is not None:
        row["next_step_epsilon_lower"] = budget.next_lower
        row["next_step_exceeds"] = budget.next_step_exceeds
        row["exceeds_from_steps"] = budget.exceeds_from
    if total is not None:
        row["requested_steps_within"] = min(total, budget.steps)
    if not budget.steps:
        row["reason"] = _no_step_fits(budget)
    return row


def _no_step_fits(budget: Budget) -> str:
    """Why a budget row has no epsilon: not even one step is certified within the target."""
    why = f"epsilon is missing: not even one step is certified within the target {budget.target_epsilon:g}"
    if budget.next_step_exceeds:
        return f"{why} (one step has epsilon >= {budget.next_lower:.6g}, a rigorous lower bound)"
    return f"{why} by {budget.method}"


def _budget_notes(budgets: list[Budget], total: int | None) -> list[str]:
    """What the budget rows mean, and how many of the requested steps fit."""
    notes = []
    for budget in budgets:
        if not budget.guarantee.rigorous:
            notes.append(f"{budget.method}: the step budget is an approximation, not a guarantee")
        if budget.exceeds_from is not None and not budget.next_step_exceeds:
            notes.append(
                f"{budget.method}: the true budget lies in [{budget.steps}, {budget.exceeds_from}); "
                "a smaller --accuracy narrows it"
            )
        if total is not None and budget.steps < total:
            notes.append(
                f"{budget.method}: only {budget.steps} of the requested {total} steps fit the target"
            )
    return notes
