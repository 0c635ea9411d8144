"""`--plot FILE.png|.svg`: pictures of a command's result, drawn with matplotlib (the optional extra
`gdpcli[plot]`), imported lazily inside the functions here.

Two layers. The drawing functions are generic: `tradeoff_plot` draws trade-off curves beta(alpha) on
[0, 1]^2 (and optionally a privacy-profile panel, delta over epsilon on a log scale) from `Curve`s, and
`staircase_plot` draws the GDPT staircase from arrays. The adapters (`plot_accountants`, `plot_gdpt`)
evaluate a command's accountants or GDPT result on fine grids and call them. Figures are drawn on a
matplotlib `Figure` without pyplot (Agg for PNG, the SVG backend for SVG), so no window ever opens.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gdpcli.cli.output import option_of
from gdpcli.errors import ComputationError, InputError, spelled
from gdpcli.guarantees import Guarantee

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from gdpcli.accounting import Accountant
    from gdpcli.accounting.gdpt_input import GdptResult
    from gdpcli.events import Repeated

FORMATS = (".png", ".svg")
PROFILE_POINTS = 301  # epsilon grid of the profile panel
SLOW_PROFILE_POINTS = 17  # ... for the PLD and RDP accountants, which solve one problem per point
STAIRCASE_CELLS = 400  # cells of the GDPT staircase drawn (each a valid bound: the union of finer cells)
_REFERENCE_COLOR = "0.45"
_LINE_STYLES = {
    Guarantee.EXACT: "-",
    Guarantee.UPPER_BOUND: "-.",
    Guarantee.LOWER_BOUND: "-.",
    Guarantee.APPROXIMATION: "--",
}
_WORDS = {guarantee: guarantee.value.replace("_", " ") for guarantee in Guarantee}


@dataclass(frozen=True)
class Curve:
    """One line of a panel: y over x, its legend label and its guarantee (which sets the line style).

    Curves of one `group` labelled lower_bound and upper_bound are drawn as one shaded band between
    them; `reference` curves (G_mu references, the mechanism without subsampling) are drawn in grey.
    """

    x: np.ndarray
    y: np.ndarray
    label: str
    guarantee: Guarantee
    group: str = ""
    reference: bool = False


def check_target(path: Path) -> None:
    """Refuse (exit 2) before any computation: a wrong extension, a missing directory, no matplotlib."""
    if path.suffix.lower() not in FORMATS:
        raise InputError(f"--plot: {str(path)!r} must end in .png or .svg", "e.g. --plot tradeoff.png")
    if path.is_dir():
        raise InputError(f"--plot: {str(path)!r} is a directory", "give a file name ending in .png or .svg")
    if not path.parent.is_dir():
        raise InputError(f"--plot: directory {str(path.parent)!r} does not exist", "create it first")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError("--plot needs matplotlib", "pip install 'gdpcli[plot]'") from None


def plot_alphas() -> np.ndarray:
    """The alpha grid of trade-off curves: uniform on [0, 1] plus normal-quantile knots (steep ends)."""
    from gdpcli.accounting.figures import curve_alphas

    return curve_alphas(501, 401, smallest=1e-9)


def plot_epsilons(epsilons: Sequence[float], points: int = PROFILE_POINTS) -> np.ndarray:
    """The epsilon grid of the profile panel: `points` on [0, max] (max = twice a single queried value),
    plus the queried values themselves."""
    largest = max(epsilons)
    if len(set(epsilons)) == 1:
        largest = 2.0 * largest if largest > 0 else 1.0
    return np.unique(np.concatenate((np.linspace(0.0, largest, points), epsilons)))


def accountant_curves(
    accountants: Sequence[Accountant], x: np.ndarray, question: str, names: Sequence[str] | None = None
) -> tuple[list[Curve], list[str]]:
    """Every figure of the accountants at x (question "beta" or "tpr": x = alphas, the TPR 1 - beta of
    accounting.risk; "delta": x = epsilons) as curves, and a note for each accountant that cannot answer
    (e.g. RDP has no trade-off function).

    Legend names are the method (with its mu, if any); given `names`, the curves are references
    named so. The figures of one accountant form one group: its lower and upper bounds become a band.
    """
    from gdpcli.accounting import describe, risk

    curves: list[Curve] = []
    skipped: list[str] = []
    for index, accountant in enumerate(accountants):
        try:
            if question == "tpr":
                figures = risk.tpr_figures(accountant, x)
            else:
                figures = getattr(accountant, question)(x)
        except ComputationError as error:
            skipped.append(f"{accountant.method}: {spelled(error.message, option_of)}")
            continue
        mu = describe(accountant).get("mu")
        suffix = f", μ = {mu:.4g}" if mu is not None else ""
        group = " / ".join(dict.fromkeys(f.method for f in figures)) + suffix
        for figure in figures:
            name = figure.method + suffix if names is None else names[index]
            label = f"{name} ({_WORDS[figure.guarantee]})"
            values = np.broadcast_to(np.asarray(figure.values, dtype=float), x.shape)
            curves.append(Curve(x, values, label, figure.guarantee, group, names is not None))
    return curves, skipped


def gdp_reference(specs: Sequence[Repeated]) -> list[tuple[str, Accountant]]:
    """The G_mu reference for a list of specs, as (legend name, accountant): the exact mu when there is
    one (GDP, or GDPT Thm 5.1 for one pure-DP guarantee), else the CLT mu of GDP paper Thm 5 (an
    approximation, drawn dashed), else none."""
    from gdpcli.accounting import CentralLimit, ExactGDP, mu_accountant

    for build in (mu_accountant, CentralLimit):
        try:
            accountant = build(specs)
        except ComputationError:
            continue
        figure = accountant.mu()[0]
        mu = float(np.asarray(figure.values).ravel()[0])
        name = f"reference $G_\\mu$: {figure.method}, μ = {mu:.4g}"
        exact = figure.guarantee is not Guarantee.APPROXIMATION
        return [(name, ExactGDP(mu) if exact else accountant)]
    return []


def subsampling_references(
    spec: Repeated, sampling_rate: float, sampling: str
) -> list[tuple[str, Accountant]]:
    """References for `subsample`: the G_mu reference of the subsampled spec (`gdp_reference`) and the
    spec without subsampling when it has a closed form (what subsampling buys)."""
    from gdpcli.accounting import exact_accountant
    from gdpcli.events import Repeated, Sampled, Sampling

    subsampled = Repeated(Sampled(spec.mechanism, sampling_rate, Sampling(sampling)), spec.times)
    references = gdp_reference([subsampled])
    plain = exact_accountant([spec])
    if plain is not None:
        references.append((f"without subsampling: {plain.method}", plain))
    return references


def plot_accountants(
    path: Path,
    title: str,
    accountants: Sequence[Accountant],
    references: Sequence[tuple[str, Accountant]] = (),
    epsilons: Sequence[float] | None = None,
) -> None:
    """convert / compose / subsample: the accountants' trade-off curves with the (name, accountant)
    references in grey, and with --epsilon a privacy-profile panel. A G_mu or CLT reference is left out
    when the same kind of curve is among the accountants already."""
    from gdpcli.accounting import CentralLimit, ExactGDP, NumericalPLD, RenyiAccountant

    gdp_curves = (ExactGDP.method, CentralLimit.method)
    if any(a.method in gdp_curves for a in accountants):
        references = [(n, r) for n, r in references if r.method not in gdp_curves]
    names = [name for name, _ in references]
    extra = [accountant for _, accountant in references]
    alphas = plot_alphas()
    tradeoffs, skipped = accountant_curves(accountants, alphas, "beta")
    tradeoffs += accountant_curves(extra, alphas, "beta", names)[0]
    profiles = None
    if epsilons:
        profiles = []
        for accountant in accountants:
            slow = accountant.method in (NumericalPLD.method, RenyiAccountant.method)
            points = SLOW_PROFILE_POINTS if slow else PROFILE_POINTS
            found, missing = accountant_curves([accountant], plot_epsilons(epsilons, points), "delta")
            profiles += found
            skipped += [note for note in missing if note not in skipped]
        profiles += accountant_curves(extra, plot_epsilons(epsilons), "delta", names)[0]
    tradeoff_plot(path, title, tradeoffs, profiles, [f"not drawn: {note}" for note in skipped])


def tradeoff_plot(
    path: Path,
    title: str,
    tradeoffs: Sequence[Curve],
    profiles: Sequence[Curve] | None = None,
    notes: Sequence[str] = (),
) -> None:
    """Trade-off curves beta(alpha) on [0, 1]^2 (equal aspect, with the diagonal 1 - alpha of perfect
    privacy) and, when `profiles` is given, a panel delta(epsilon) on a log scale. An empty list of
    curves leaves its panel out; ComputationError when both are empty."""
    if not tradeoffs and not profiles:
        raise ComputationError(
            "--plot: no trade-off curve to draw", "add --epsilon to draw the privacy profile instead"
        )
    figure = _figure(bool(tradeoffs) + bool(profiles))
    axes = iter(figure.axes)
    if tradeoffs:
        ax = next(axes)
        diagonal = np.array([0.0, 1.0])
        ax.plot(diagonal, 1.0 - diagonal, ":", color="0.6", lw=1, label=r"$1-\alpha$ (perfect privacy)")
        _draw(ax, tradeoffs)
        ax.set(xlim=(0, 1), ylim=(0, 1), aspect="equal", title="trade-off function")
        ax.set(xlabel=r"type I error $\alpha$", ylabel=r"type II error $\beta = f(\alpha)$")
    if profiles:
        ax = next(axes)
        _draw(ax, [_positive(c) for c in profiles])
        if any(np.any(c.y == 0) for c in profiles):
            notes = [
                *notes,
                "privacy profile: delta = 0 (beyond the largest privacy loss) is not on the log axis",
            ]
        ax.set_yscale("log")
        ax.set(title="privacy profile", xlabel=r"$\varepsilon$", ylabel=r"$\delta(\varepsilon)$")
    for ax in figure.axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small", loc="upper right", framealpha=0.9)
    _save(figure, path, title, notes)


def plot_roc(
    path: Path,
    title: str,
    accountants: Sequence[Accountant],
    references: Sequence[tuple[str, Accountant]] = (),
) -> None:
    """risk: the most any attack's TPR can be at each FPR, 1 - f(alpha), on log-log axes, from the
    accountants' trade-off bounds (accounting.risk.tpr_figures, labelled as TPRs), with the (name,
    accountant) references in grey and the diagonal TPR = FPR of guessing."""
    fprs = np.logspace(-6, 0, 241)
    rocs, skipped = accountant_curves(accountants, fprs, "tpr")
    rocs += accountant_curves([r for _, r in references], fprs, "tpr", [n for n, _ in references])[0]
    if not rocs:
        raise ComputationError("--plot: no trade-off curve to draw the ROC from", "; ".join(skipped) or None)
    figure = _figure(1, width=7.0)
    ax = figure.axes[0]
    ax.plot(fprs, fprs, ":", color="0.6", lw=1, label="TPR = FPR (guessing)")
    _draw(ax, [_positive(c) for c in rocs])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set(title="membership-inference ROC bound", xlabel="false-positive rate", ylabel="true-positive rate")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small", loc="lower right", framealpha=0.9)
    _save(figure, path, title, [f"not drawn: {note}" for note in skipped])


def staircase_plot(
    path: Path,
    title: str,
    edges: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    mu_lower: float,
    mu_upper: float,
    text: str = "",
    notes: Sequence[str] = (),
) -> None:
    """A GDPT staircase (GDPT Thm 4.6): on [edges[i], edges[i+1]] lower[i] <= G(eps) <= upper[i], drawn as
    two step functions with the band between them shaded, the certified interval [mu_lower, mu_upper] as
    horizontal lines, and `text` (verdict, tail limit) under the panel title. Cells with an infinite
    bound are left blank (and said so in a note)."""
    figure = _figure(1, width=7.5)
    ax = figure.axes[0]
    top, bottom = (np.where(np.isfinite(v), v, np.nan) for v in (upper, lower))
    ax.fill_between(edges, np.append(bottom, bottom[-1]), np.append(top, top[-1]), step="post", alpha=0.25)
    ax.stairs(top, edges, baseline=None, color="C0", lw=1.2, label=r"upper bound on $G(\varepsilon)$")
    ax.stairs(bottom, edges, baseline=None, color="C1", lw=1.2, label=r"lower bound on $G(\varepsilon)$")
    for value, name, style in ((mu_upper, "mu_upper", "--"), (mu_lower, "mu_lower", ":")):
        if math.isfinite(value):
            ax.axhline(value, ls=style, color="0.3", lw=1, label=f"{name} = {value:.6g}")
    if not np.all(np.isfinite(upper)):
        notes = [*notes, "cells where the upper bound on G is infinite are left blank"]
    highest = np.nanmax(np.append(top, mu_upper if math.isfinite(mu_upper) else np.nan))
    ax.set_ylim(0, 1.15 * highest if highest > 0 else 1.0)
    ax.set_xlim(edges[0], edges[-1])
    ax.set_title("GDPT staircase" + (f"\n{text}" if text else ""), fontsize="medium")
    ax.set(
        xlabel=r"$\varepsilon$",
        ylabel=r"$G(\varepsilon)$: the $\mu$ with $\delta_\mu(\varepsilon) = \delta(\varepsilon)$",
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", loc="best", framealpha=0.9)
    _save(figure, path, title, notes)


def plot_gdpt(path: Path, title: str, result: GdptResult) -> None:
    """gdpt-identify: the staircase of the result over its head, its mu interval, verdict and tail limit."""
    starts, lower, upper = result.coarse_staircase(STAIRCASE_CELLS)
    edges = np.append(starts, result.eps_head)
    tail = "unknown" if result.tail_limit is None else f"{result.tail_limit:.6g} ({result.tail_method})"
    text = (
        f"verdict: {result.verdict}; tail limit: {tail}; ".replace("_", " ")
        + f"beyond {result.eps_head:.4g}: delta <= {result.residual:.3g}"
    )
    staircase_plot(path, title, edges, lower, upper, result.mu_lower, result.mu_upper, text)


def _figure(panels: int, width: float = 6.0) -> Figure:
    """A figure with `panels` side-by-side axes, drawn off-screen."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width * panels, 6.0), layout="constrained")
    figure.subplots(1, panels)
    return figure


def _draw(ax: Axes, curves: Sequence[Curve]) -> None:
    """Bands for lower/upper pairs of a group, lines otherwise; references grey; one colour per band or
    line."""
    colors: dict[str, str] = {}
    for curve in curves:
        partner = _partner(curve, curves)
        key = curve.group if partner is not None else curve.label
        color = _REFERENCE_COLOR if curve.reference else colors.setdefault(key, f"C{len(colors) % 10}")
        if partner is not None:
            if curve.guarantee is Guarantee.LOWER_BOUND:
                band = f"{curve.group} (rigorous bounds)"
                ax.fill_between(curve.x, curve.y, partner.y, color=color, alpha=0.3, lw=0, label=band)
            ax.plot(curve.x, curve.y, "-", color=color, lw=1)
        else:
            width = 1.2 if curve.reference else 1.8
            ax.plot(curve.x, curve.y, _LINE_STYLES[curve.guarantee], color=color, lw=width, label=curve.label)


def _partner(curve: Curve, curves: Sequence[Curve]) -> Curve | None:
    """The other side of a lower/upper pair of the same group, if there is one."""
    other = {Guarantee.LOWER_BOUND: Guarantee.UPPER_BOUND, Guarantee.UPPER_BOUND: Guarantee.LOWER_BOUND}.get(
        curve.guarantee
    )
    return next((c for c in curves if c.group == curve.group and c.guarantee == other), None)


def _positive(curve: Curve) -> Curve:
    """A profile curve for a log axis: delta = 0 (no privacy loss beyond eps) is left out, not clipped."""
    return replace(curve, y=np.where(curve.y > 0, curve.y, np.nan))


def _save(figure: Figure, path: Path, title: str, notes: Sequence[str]) -> None:
    """Title (wrapped) and notes under the panels, then write PNG or SVG (exit 2 if that fails)."""
    figure.suptitle(textwrap.fill(title.replace("$", r"\$"), 90), fontsize="medium")
    if notes:
        text = "\n".join(textwrap.fill(note.replace("$", r"\$"), 120) for note in notes)
        figure.supxlabel(text, fontsize="small", color="0.35")
    options: dict[str, Any] = {"format": path.suffix.lower()[1:], "dpi": 120}
    if options["format"] == "svg":
        options["metadata"] = {"Date": None}  # reproducible files
    try:
        figure.savefig(path, **options)
    except OSError as error:
        raise InputError(f"--plot: cannot write {str(path)!r}: {error.strerror or error}") from None
