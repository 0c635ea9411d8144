"""The README cannot rot: its set-up commands match CI, every example in it runs, and every figure it quotes
from gdpcli's own output is what gdpcli prints now (QUOTES: each quoted passage, the command, and which
printed values its figures are).

When a change moves a figure, the failing case names the passage, the figure the README states and the
value gdpcli prints: update the README (and the passage here) with the new figure."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
PROSE = " ".join(README.split())
"""The README with every run of whitespace one space: passages are found across line breaks."""


def shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, flags=re.S)


def examples() -> list[str]:
    """Every `gdpcli ...` line of the README's sh blocks, without its trailing comment."""
    lines = []
    for block in shell_blocks()[2:]:
        for line in block.splitlines():
            command = line.split("  #")[0].strip()
            if command.startswith("gdpcli ") or " | gdpcli " in command:
                lines.append(command)
    return lines


def test_exactly_two_setup_commands_and_ci_runs_the_second() -> None:
    setup = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    commands = [block.strip() for block in re.findall(r"```sh\n(.*?)```", setup, flags=re.S)]
    assert len(commands) == 2
    install_and_run, install_and_test = commands
    assert install_and_run.startswith("pip install . && gdpcli sgd ")
    ci = (ROOT / ".ci" / "run").read_text()
    assert install_and_test in ci.splitlines()


def test_examples_exist_for_every_command() -> None:
    used = {shlex.split(line.split("|")[-1])[1] for line in examples()}
    assert {"convert", "compose", "subsample", "sgd", "calibrate", "gdpt-identify"} <= used


@pytest.mark.slow
@pytest.mark.parametrize("line", examples())
def test_readme_example_runs(line: str) -> None:
    shell = line.replace("gdpcli ", f"{shlex.quote(sys.executable)} -m gdpcli ")
    completed = subprocess.run(shell, shell=True, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert completed.returncode == 0, f"{line}\n{completed.stderr}"
    assert completed.stdout.strip(), line
    assert "Traceback" not in completed.stderr


# ---------------------------------------------------------------------------------------------------------
# Figures the README quotes from gdpcli's output
# ---------------------------------------------------------------------------------------------------------

Row = dict[str, Any]
Select = Callable[[list[Row]], list[tuple[float, str]]]
"""Printed rows -> the values a passage quotes, in its order, each with the guarantee it carries."""


def column(name: str, *, scale: float = 1.0, side: str | None = None, **where: Any) -> Select:
    """The `name` values of the rows that match `where`, in the printed order (times `scale`, e.g. 100 for
    a percentage), each with its row's guarantee or `side` (for a column that is a bound of its own)."""

    def select(rows: list[Row]) -> list[tuple[float, str]]:
        matching = [row for row in rows if all(row.get(key) == value for key, value in where.items())]
        return [
            (row[name] * scale, side or row["guarantee"]) for row in matching if row.get(name) is not None
        ]

    return select


def bounds(name: str = "epsilon", **where: Any) -> Select:
    """[lower, upper]: the rigorous bounds on `name` of the rows that match `where`."""
    lower, upper = (
        column(name, guarantee="lower_bound", **where),
        column(name, guarantee="upper_bound", **where),
    )
    return lambda rows: lower(rows) + upper(rows)


@dataclass(frozen=True)
class Quote:
    """A passage of the README as it is written (line breaks as spaces), each figure it quotes marked
    «like this», and the printed values the figures are, in the same order."""

    text: str
    figures: tuple[Select, ...]

    @property
    def prose(self) -> str:
        return self.text.replace("«", "").replace("»", "")

    @property
    def written(self) -> list[str]:
        return re.findall(r"«([^»]*)»", self.text)


@dataclass(frozen=True)
class Case:
    """A gdpcli command (its arguments; run with -f json) and the README passages that quote its output."""

    args: str
    quotes: tuple[Quote, ...]
    slow: bool = True


def quote(text: str, *figures: Select) -> Quote:
    return Quote(text, figures)


def case(args: str, *quotes: Quote, slow: bool = True) -> Case:
    """The command `args` and the README passages that quote its output."""
    return Case(args, quotes, slow)


MNIST = "--dataset-size 60000 --batch-size 256 --noise-multiplier 1.1"
HUNDRED_ROUNDS = "gaussian:sigma=4,p=0.001,sampling=poisson,times=1000000 --delta 1e-5"
CENSUS = "--specs examples/census_us_level.csv --delta 1e-11"
TABLE1 = (
    "--dataset-size 60000 --batch-size 1500 --step-size 0.05 --strong-convexity 0.002 --smoothness 32.502"
)
TABLE1 += " --lipschitz 5 --sigma 0.01 --delta 1e-5"
SHUFFLE_RR = "shuffle-rr:eps0=4.444,n=10000"
CASES = (
    case(
        "compose gaussian:sigma=1.1,p=0.01x1000 laplace:b=20x10 gaussian:sigma=5 --delta 1e-5",
        quote("gives the rigorous [«1.8183», «1.8190»], the same figures as the specs", bounds()),
    ),
    case(
        "convert gdp:mu=1 --to equal-error",
        quote("are equal (Phi(-mu/2) = «0.30854» for mu = 1)", column("equal_error")),
        slow=False,
    ),
    case(
        "convert dp:eps=1,delta=1e-6 --implies 0.5,0.3",
        quote("(here delta(0.5) = «0.28765» <= 0.3)", column("delta")),
        slow=False,
    ),
    case(
        "convert zcdp:rho=0.5 --alpha 0.1",
        quote("`convert zcdp:rho=0.5 --alpha 0.1` gives «0.51627»", column("beta")),
    ),
    case("convert gdp:mu=1 --alpha 0.1", quote("G_1, has «0.61086»", column("beta")), slow=False),
    case(
        "convert laplace:eps=1x10 --to kl",
        quote("gives 10 (eps + e^-eps - 1) = «3.67879» at eps = 1", column("kl")),
        slow=False,
    ),
    case(
        "compose laplace:b=1,p=0.01x1000 --delta 1e-5 --method rdp",
        quote("--delta 1e-5 --method rdp` gives «1.4365»", column("epsilon")),
    ),
    case(
        "compose laplace:b=1,p=0.01x1000 --delta 1e-5",
        quote("against the PLD's [«1.1230», «1.1238»]", bounds()),
    ),
    case(
        "compose zcdp:rho=6.256256256256256e-08x1000000 --delta 1e-5 --method rdp --conversion all",
        quote(
            "The first gives «1.760» (classic) and «1.479» (optimal conversion)",
            column("epsilon", method="rdp-classic"),
            column("epsilon", method="rdp-optimal"),
        ),
    ),
    case(
        f"compose {HUNDRED_ROUNDS} --method rdp",
        quote("the exact subsampled-Gaussian RDP gives «1.030»", column("epsilon")),
    ),
    case(f"compose {HUNDRED_ROUNDS}", quote("and the PLD [«0.9427», «0.9432»]", bounds())),
    case(
        "compose dp:eps=0.1x100 --delta 1e-5 --method clt -v",
        quote(
            "the mu of Theorems 5 (the figures' mu, «1.00042»), 6 («0.99917») and 7 («1»)",
            column("mu"),
            column("mu_theorem6"),
            column("mu_theorem7"),
        ),
        quote("against the CLT's «4.3793»", column("epsilon")),
    ),
    case(
        "compose dp:eps=0.1x100 --delta 1e-5",
        quote("the exact binomial epsilon of the same composition is «4.3068»", column("epsilon")),
        slow=False,
    ),
    case(
        f"convert {SHUFFLE_RR} --delta 5e-5,3e-6,1e-7,4e-9,9e-11",
        quote(
            "The first gives epsilon «0.397», «0.497», «0.602», «0.692», «0.791»",
            column("epsilon", guarantee="upper_bound"),
        ),
    ),
    case(
        f"convert {SHUFFLE_RR} --epsilon 0.5:1:6",
        quote(
            "The second gives delta «2.7e-6» and «1.1e-7» at eps 0.5 and 0.6 (Table 2: 3e-6, 1e-7); "
            "at 0.7 ... 1.0 it gives «3.0e-9», «6.2e-11», «1.0e-12», «1.4e-14»",
            column("delta", guarantee="upper_bound"),
        ),
    ),
    case(
        f"convert {SHUFFLE_RR} --delta 5e-5 --method rdp --conversion improved",
        quote("exact Renyi divergence («0.448» at delta 5e-5", column("epsilon")),
    ),
    case(
        "convert tradeoff:file=examples/tradeoff_g1.csv --delta 1e-5",
        quote("The first gives «4.397» for the exact", column("epsilon")),
    ),
    case(
        "convert gdp:mu=1 --delta 1e-5",
        quote("for the exact «4.377» of 1-GDP", column("epsilon")),
        slow=False,
    ),
    case(f"compose {CENSUS}", quote("The first gives the rigorous [«2.3195», «2.3201»] (2.32)", bounds())),
    case(
        f"compose {CENSUS} --method rdp --conversion all",
        quote(
            "rho + 2 sqrt(rho log(1/delta)) gives «2.6282» (2.63), and gdpcli's optimal RDP "
            "conversion «2.4206»",
            column("epsilon", method="rdp-classic"),
            column("epsilon", method="rdp-optimal"),
        ),
    ),
    case(
        "subsample laplace:b=1x10000 --rate 0.01 --delta 1e-5 --sampling fixed --method all -v",
        quote(
            "here «1.1144» and epsilon «4.9642» against the rigorous PLD bounds [«4.9382», «4.9402»]",
            column("mu", method="clt"),
            column("epsilon", method="clt"),
            bounds(method="pld"),
        ),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --sampling fixed --sensitivity 1 --method all",
        quote(
            "bounds on C_p(G_{1/1.1})^{(x)T} of Thm 10 are [«3.0685», «3.0688»] and the CLT (Cor. 4) "
            "says «3.0868»",
            bounds(method="pld"),
            column("epsilon", method="clt"),
        ),
        quote(
            "and «3.087» with fixed-size batches (GDP paper Thm 10, `--sampling fixed --sensitivity 1`) "
            "while the rigorous bounds are [«3.068», «3.069»] (pessimistic",
            column("epsilon", method="clt"),
            bounds(method="pld"),
        ),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --sampling fixed",
        quote(
            "the same run's rigorous upper bound is epsilon «18.46»",
            column("epsilon", guarantee="upper_bound"),
        ),
    ),
    case(
        f"sgd {MNIST} --epochs 3 --delta 1e-5 --sampling shuffle",
        quote("without any amplification («17.76» here)", column("epsilon", method="shuffle-gdp")),
        quote("the larger of the two («4.31» here)", column("epsilon", method="shuffle-max-test")),
        quote("sensitivity C («0.505» here", column("epsilon", method="as-if-poisson")),
        quote(
            "It does here (a zero-out lower bound of «3.69» against «0.505»)",
            column("zero_out_lower_bound", side="lower_bound", method="as-if-poisson"),
            column("epsilon", method="as-if-poisson"),
        ),
    ),
    case(
        "sgd --dataset-size 60000 --batch-size 60 --noise-multiplier 1 --epochs 5 --delta 1e-5 "
        "--sampling shuffle",
        quote(
            "Poisson accounting claims epsilon «0.332», while the shuffled run has epsilon >= «3.81» "
            "even under zero-out neighbours (and >= «4.17» under replace-one; the upper bound is «28.4»)",
            column("epsilon", method="as-if-poisson"),
            column("zero_out_lower_bound", side="lower_bound", method="as-if-poisson"),
            column("epsilon", method="shuffle-max-test"),
            column("epsilon", method="shuffle-gdp"),
        ),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --sampling balls-in-bins",
        quote("MNIST, 60 epochs: [«2.334», «2.339»], below Poisson's", bounds()),
    ),
    case(
        f"sgd {MNIST} --steps 14063 --delta 1e-5 --sampling balls-in-bins --participations 60",
        quote(
            "the run's 14063 steps (one round of t = «14063»): [«2.329», «2.343»], below Poisson's «2.382»",
            column("round_steps", guarantee="upper_bound"),
            bounds(),
            column("epsilon", method="as-if-poisson"),
        ),
    ),
    case(
        "sgd --dataset-size 60000 --batch-size 64 --accumulation-steps 4 --noise-multiplier 1.1 --epochs 60 "
        "--delta 1e-5",
        quote(
            "exactly («14063» logical steps, «56252» physical ones)",
            column("steps", guarantee="upper_bound"),
            column("physical_steps", guarantee="upper_bound"),
        ),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --sampling truncated-poisson --max-batch-size 300",
        quote(
            "MNIST capped at 300 («0.39» % of the batches cut): [«2.381», «3.431»]",
            column("truncation_probability", scale=100, guarantee="upper_bound"),
            bounds(),
        ),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --sampling cyclic-poisson --bands 4",
        quote(
            "MNIST with 4 bands: «3516» steps per example at p = «0.0171», [«5.347», «5.348»]",
            column("steps_per_example", guarantee="upper_bound"),
            column("sampling_rate", guarantee="upper_bound"),
            bounds(),
        ),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --sampling cyclic-poisson --bands 16",
        quote("16 bands: [«12.30», «12.31»]", bounds()),
    ),
    case(
        f"mf --strategy banded --bands 4 {MNIST} --epochs 60 --delta 1e-5 --sensitivity 1.2",
        quote("(S = 1.2 above: [«7.619», «7.621»])", bounds()),
    ),
    case(
        "mf --strategy banded --bands 4 --strategy-file examples/banded_strategy.csv --sampling-rate 0.5 "
        "--noise-multiplier 2 --delta 1e-5",
        quote("whose last columns are cut short, gives [«2.773», «2.808»]", bounds()),
        slow=False,
    ),
    case(
        "mf --strategy banded --bands 4 --no-amplification --noise-multiplier 20 --epochs 60 --delta 1e-5",
        quote(
            "sensitivity «7.746» and epsilon «1.5004» above",
            column("sensitivity"),
            column("epsilon"),
        ),
        slow=False,
    ),
    case(
        "mf --strategy tree --dataset-size 60000 --batch-size 256 --noise-multiplier 10 --epochs 5 "
        "--delta 1e-5",
        quote(
            "MNIST, 5 epochs at sigma 10: mu = «0.63246», epsilon «2.5944»",
            column("mu"),
            column("epsilon"),
        ),
        slow=False,
    ),
    case(
        "mf --strategy tree --sampling-rate 0.000625 --steps 1600 --noise-multiplier 1.13 --delta 1e-6 "
        "--method all --conversion classic",
        quote(
            "the classic RDP conversion gives the paper's epsilon «19.74» for noise 1.13; the exact GDP "
            "figure is «17.667»",
            column("epsilon", method="rdp-classic"),
            column("epsilon", method="gdp"),
        ),
        slow=False,
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --runs-distribution geometric:mean=10",
        quote("The first gives epsilon «5.0489» (dp_accounting's RDP accountant", column("epsilon")),
    ),
    case(
        f"sgd {MNIST} --delta 1e-5 --target-epsilon 3 --runs-distribution geometric:mean=10",
        quote(
            "mean 10, «4669» steps, «19.9» epochs, for epsilon 3)",
            column("steps"),
            column("epochs"),
        ),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --runs 10",
        quote("against «8.919» for ten composed runs", column("epsilon", guarantee="upper_bound")),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --method rdp",
        quote("and «2.597» for one run in RDP", column("epsilon")),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --runs-distribution poisson:mean=10",
        quote("the second «5.2633» (dp_accounting: 5.7489", column("epsilon")),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --runs-distribution negative-binomial:mean=10,shape=0.5",
        quote("`negative-binomial:mean=10,shape=0.5` gives «4.6958»", column("epsilon")),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --group 2",
        quote("gives [«5.264», «5.266»] (one example", bounds()),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --group 5", quote("5 examples: [«16.11», «16.12»]", bounds())
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --group 2 --method clt",
        quote("K times the CLT mu says «5.14»", column("epsilon")),
    ),
    case(
        f"sgd {MNIST} --epochs 60 --delta 1e-5 --method all",
        quote("below Poisson's «2.382»", column("epsilon", guarantee="upper_bound", method="pld")),
        quote("(one example: [«2.381», «2.382»]", bounds(method="pld")),
        quote(
            "it says epsilon «2.324» with Poisson sampling while the rigorous bounds are "
            "[«2.381», «2.382»] (optimistic)",
            column("epsilon", method="clt"),
            bounds(method="pld"),
        ),
        quote(
            "for the MNIST run it says «2.425» (CLT «2.324», rigorous [«2.381», «2.382»])",
            column("epsilon", method="edgeworth"),
            column("epsilon", method="clt"),
            bounds(method="pld"),
        ),
    ),
    *(
        case(
            f"noisy-gd {TABLE1.replace('--batch-size 1500', f'--batch-size 1500 --epochs {epochs}')}",
            quote(
                f"| {epochs} | «{last}» | «{rdp}» | «{composition}» |",
                column("epsilon", method="last-iterate-gdp"),
                column("epsilon", method="last-iterate-rdp-optimal"),
                column("epsilon", method="composition-gdp"),
            ),
        )
        for epochs, last, rdp, composition in (
            (50, "4.34", "5.82", "30.51"),
            (100, "5.60", "7.61", "49.88"),
            (200, "7.58", "9.88", "83.83"),
        )
    ),
    case(
        "calibrate sgd --sampling-rate 1 --steps 1000 --epsilon 8.84 --delta 1e-5 --closed-form",
        quote(
            "(the moments accountant: sigma = «19.994», the paper's 20, against the exact «17.482» here)",
            column("noise_multiplier", method="closed-form-eq23"),
            column("noise_multiplier", method="gdp"),
        ),
    ),
    case(
        "calibrate gaussian --epsilon 0 --delta 0.1",
        quote("mu = 2 Phi^-1((1 + delta)/2), sigma = «3.97895»", column("sigma")),
        slow=False,
    ),
    case(
        "calibrate canonical dp:eps=1,delta=1e-5",
        quote(
            "(for (1, 1e-5): b = «0.36788», q = «1.16394e-5», 99 % quantile «3.89982»)",
            column("b", probability=0.5),
            column("q", probability=0.5),
            column("quantile", probability=0.99),
        ),
        slow=False,
    ),
    case(
        f"risk {MNIST} --epochs 60",
        quote(
            "no attack has TPR above «0.00605» at FPR 0.1 %, «0.0402» at 1 % or «0.2397» at 10 % "
            "(rigorous upper bounds), its advantage is at most «0.2245», and at a prior of 1/2 no attack "
            "guesses membership right more than «61.2» % of the time",
            column("value", measure="tpr", guarantee="upper_bound"),
            column("value", measure="advantage", guarantee="upper_bound"),
            column("value", scale=100, measure="bayes_success", guarantee="upper_bound"),
        ),
    ),
    case(
        "calibrate sgd --dataset-size 60000 --batch-size 256 --epochs 60 --max-tpr 0.05 --at-fpr 0.01",
        quote("at or below 5 % is sigma «0.989»", column("noise_multiplier")),
    ),
    case(
        "gdpt-identify dp:eps=1,delta=1e-6 --eps-head 10 --rectify 0,1",
        quote(
            "Laplace noise of scale 0.1 it is «1.8481»-GDP",
            column("rectified_mu_upper", side="upper_bound"),
        ),
    ),
    case(
        "sgd --sampling-rate 0.001 --noise-multiplier 1 --steps 100000 --delta 1e-5 --method all",
        quote(
            "--delta 1e-5 --method all`) «1.646» (CLT «1.618», rigorous [«1.6370», «1.6374»])",
            column("epsilon", method="edgeworth"),
            column("epsilon", method="clt"),
            bounds(method="pld"),
        ),
    ),
    case(
        "compose dp:eps=0.31622776601683794x10 --delta 1e-3 --method all",
        quote(
            "gives «4.893» by advanced composition, «3.162» by basic composition, and «2.890» exact",
            column("epsilon", method="advanced"),
            column("epsilon", method="basic"),
            column("epsilon", method="binomial"),
        ),
    ),
    *(
        case(f"sgd {MNIST} --epochs 60 --delta {delta}", quote(f"{passage}", bounds()))
        for delta, passage in (
            ("1e-8", "it certifies [«3.2506», «3.2508»] at `--delta 1e-8`"),
            ("1e-10", "[«3.7358», «3.7363»] at 1e-10"),
            ("1e-12", "and [«4.1745», «4.1750»] at 1e-12"),
        )
    ),
    case(
        f"sgd {MNIST} --steps 10000000 --delta 1e-5",
        quote("--steps 10000000 --delta 1e-5` prints [«180.46», «180.58»]", bounds()),
    ),
    case(
        f"sgd {MNIST} --steps 10000000 --delta 1e-5 --accuracy 0.0002",
        quote("and [«180.49», «180.53»] with `--accuracy 0.0002`", bounds()),
    ),
    case(
        f"sgd {MNIST} --steps 10000000 --delta 1e-10",
        quote("at `--delta 1e-10` it prints [«212.64», «212.79»]", bounds()),
    ),
    case(
        "sgd --sampling-rate 0.00033 --noise-multiplier 4 --steps 10000 --delta 1e-10",
        quote("--steps 10000 --delta 1e-10` gives [«0.044534», «0.044550»]", bounds()),
    ),
    case(
        "sgd --sampling-rate 1e-5 --noise-multiplier 1 --steps 100000 --delta 1e-15,1e-12,1e-9,1e-5",
        quote("1e-15,1e-12,1e-9,1e-5` gives [«0.036862», «0.036918»] at 1e-15", bounds(delta=1e-15)),
    ),
    case(
        "sgd --sampling-rate 1e-5 --noise-multiplier 10 --steps 1000 --delta 1e-12 --accuracy 1e-5",
        quote("1e3 steps at 1e-12 [«0.00016287», «0.00016316»] with `--accuracy 1e-5`", bounds()),
    ),
)


def written_as(value: float, written: str, side: str) -> bool:
    """`written` states `value`: rounded to the nearest at its precision, or, for a bound, outward (a lower
    bound down, an upper bound up, so that the figure as written is still a bound)."""
    quoted, exact = Decimal(written), Decimal(repr(float(value)))
    unit = Decimal(1).scaleb(quoted.as_tuple().exponent)
    if abs(exact - quoted) <= unit / 2:
        return True
    if side == "upper_bound":
        return quoted - unit < exact <= quoted
    return side == "lower_bound" and quoted <= exact < quoted + unit


def case_params(slow: bool) -> list:
    return [pytest.param(case, id=case.args) for case in CASES if case.slow is slow]


@pytest.mark.parametrize("case", [pytest.param(case, id=case.args) for case in CASES])
def test_quoted_passages_are_in_the_readme(case: Case) -> None:
    for passage in case.quotes:
        assert passage.prose in PROSE, f"the README no longer says: {passage.prose}"
        assert passage.written, f"no figure marked in: {passage.text}"


def check_quotes(gdpcli, case: Case) -> None:
    outcome = gdpcli(*shlex.split(case.args), "-f", "json")
    assert outcome.code == 0, outcome.stderr
    rows = outcome.json()["rows"]
    for passage in case.quotes:
        printed = [figure for select in passage.figures for figure in select(rows)]
        assert len(printed) == len(passage.written), (passage.text, printed)
        stale = [
            f"README {written}, gdpcli {value!r} ({side})"
            for written, (value, side) in zip(passage.written, printed, strict=True)
            if not written_as(value, written, side)
        ]
        assert not stale, f"gdpcli {case.args}: {passage.prose}: " + "; ".join(stale)


@pytest.mark.parametrize("case", case_params(slow=False))
def test_quoted_figures_are_what_gdpcli_prints(gdpcli, monkeypatch: pytest.MonkeyPatch, case: Case) -> None:
    monkeypatch.chdir(ROOT)  # examples/ files
    check_quotes(gdpcli, case)


@pytest.mark.slow
@pytest.mark.parametrize("case", case_params(slow=True))
def test_quoted_figures_of_longer_runs_are_what_gdpcli_prints(
    gdpcli, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    monkeypatch.chdir(ROOT)
    check_quotes(gdpcli, case)


def test_the_clt_errs_on_the_sides_the_readme_says(gdpcli) -> None:
    """'optimistic' with Poisson sampling, 'pessimistic' with fixed-size batches (the MNIST run)."""
    run = ("sgd", *MNIST.split(), "--epochs", "60", "--delta", "1e-5", "--method", "clt", "-f", "json")
    rigorous = ("sgd", *MNIST.split(), "--epochs", "60", "--delta", "1e-5", "-f", "json")
    fixed = ("--sampling", "fixed", "--sensitivity", "1")
    poisson_clt, poisson = gdpcli(*run).json()["rows"], gdpcli(*rigorous).json()["rows"]
    fixed_clt, fixed_pld = gdpcli(*run, *fixed).json()["rows"], gdpcli(*rigorous, *fixed).json()["rows"]
    assert poisson_clt[0]["epsilon"] < min(row["epsilon"] for row in poisson)
    assert fixed_clt[0]["epsilon"] > max(row["epsilon"] for row in fixed_pld)


def pycon_blocks() -> list[str]:
    """Every ```pycon block of the README: interactive sessions, run as doctests."""
    return re.findall(r"```pycon\n(.*?)```", README, flags=re.S)


@pytest.mark.slow
def test_readme_sessions_print_what_they_show() -> None:
    """The README's sessions, in order and sharing their names as a reader's would, print what the README
    shows (doctest, with the numbers as shown)."""
    import doctest

    test = doctest.DocTestParser().get_doctest("\n".join(pycon_blocks()), {}, "README", "README.md", 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.failures == 0, f"{runner.failures} of {runner.tries} README examples print otherwise"


def test_python_api_gdp_figure_is_what_it_returns() -> None:
    """The Python API section's gdp comment states what the call returns."""
    from gdpcli import gdp

    section = PROSE.split("## Python API", 1)[1]
    assert f"gdp.epsilon(1e-5, 1.0) # {gdp.epsilon(1e-5, 1.0)!r}" in section
