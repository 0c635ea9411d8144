"""`--plot FILE.png|.svg` on convert, compose, subsample and gdpt-identify."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

COMMANDS = {
    "convert": ["convert", "dp:eps=1", "--alpha", "0.1", "--epsilon", "0:2:5"],
    "compose": ["compose", "gaussian:sigma=3", "laplace:b=2", "--delta", "1e-5"],
    "subsample": ["subsample", "dp:eps=3,delta=0.1", "--rate", "0.2", "--alpha", "0.1"],
    "gdpt-identify": ["gdpt-identify", "dp:eps=1", "--eps-head", "10"],
}


def assert_png(path: Path) -> None:
    assert path.stat().st_size > 1000
    assert path.read_bytes()[:8] == PNG_MAGIC


def assert_svg(path: Path) -> None:
    assert path.stat().st_size > 1000
    assert ET.parse(path).getroot().tag.endswith("svg")


@pytest.mark.parametrize("name", list(COMMANDS))
def test_png_and_svg_next_to_unchanged_output(gdpcli, tmp_path: Path, name: str) -> None:
    args = COMMANDS[name]
    plain = gdpcli(*args, "-f", "json")
    assert plain.code == 0, plain.stderr
    for suffix, check in ((".png", assert_png), (".svg", assert_svg)):
        target = tmp_path / f"{name}{suffix}"
        outcome = gdpcli(*args, "-f", "json", "--plot", str(target))
        assert outcome.code == 0, outcome.stderr
        assert outcome.stdout == plain.stdout  # the plot is drawn in addition to the normal output
        check(target)


def test_upper_case_extension_and_group(gdpcli, tmp_path: Path) -> None:
    target = tmp_path / "group.PNG"
    outcome = gdpcli(
        "convert", "gdp:mu=0.5", "--group", "3", "--to", "mu", "--plot", str(target), "-f", "csv"
    )
    assert outcome.code == 0, outcome.stderr
    assert_png(target)


def test_subsample_profile_panel(gdpcli, tmp_path: Path) -> None:
    target = tmp_path / "sub.svg"
    outcome = gdpcli("subsample", "gdp:mu=2", "--rate", "0.1", "--epsilon", "0:4:5", "--plot", str(target))
    assert outcome.code == 0, outcome.stderr
    assert_svg(target)
    assert "privacy profile" in target.read_text()


def test_gdpt_from_a_sampled_profile(gdpcli, tmp_path: Path) -> None:
    profile = tmp_path / "profile.csv"
    profile.write_text(gdpcli("convert", "gdp:mu=1", "--epsilon", "0:20:201", "-f", "csv").stdout)
    target = tmp_path / "staircase.png"
    outcome = gdpcli("gdpt-identify", str(profile), "--plot", str(target), "-f", "csv")
    assert outcome.code == 0, outcome.stderr
    assert_png(target)


@pytest.mark.parametrize("name", ["plot.pdf", "plot", "plot.png.txt"])
def test_bad_extension_exit_2(gdpcli, tmp_path: Path, name: str) -> None:
    outcome = gdpcli("convert", "gdp:mu=1", "--delta", "1e-5", "--plot", str(tmp_path / name))
    assert outcome.code == 2
    assert outcome.stdout == ""
    assert (
        outcome.stderr.startswith("gdpcli: error: --plot:") and "must end in .png or .svg" in outcome.stderr
    )
    assert outcome.stderr.count("\n") == 1


def test_missing_directory_and_directory_target_exit_2(gdpcli, tmp_path: Path) -> None:
    missing = gdpcli("compose", "gdp:mu=1", "--to", "mu", "--plot", str(tmp_path / "nowhere" / "a.png"))
    assert missing.code == 2 and "does not exist" in missing.stderr and missing.stdout == ""
    (tmp_path / "dir.svg").mkdir()
    directory = gdpcli("compose", "gdp:mu=1", "--to", "mu", "--plot", str(tmp_path / "dir.svg"))
    assert directory.code == 2 and "is a directory" in directory.stderr


@pytest.mark.parametrize("name", list(COMMANDS))
def test_without_matplotlib_exit_2(
    gdpcli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now raises ImportError
    outcome = gdpcli(*COMMANDS[name], "--plot", str(tmp_path / "x.png"))
    assert outcome.code == 2
    assert outcome.stdout == ""
    assert outcome.stderr == "gdpcli: error: --plot needs matplotlib (pip install 'gdpcli[plot]')\n"
    assert not (tmp_path / "x.png").exists()


def test_nothing_to_draw_is_an_error(tmp_path: Path) -> None:
    from gdpcli.cli.plot import tradeoff_plot
    from gdpcli.errors import ComputationError

    with pytest.raises(ComputationError, match="no trade-off curve to draw"):
        tradeoff_plot(tmp_path / "x.png", "nothing", [], None)


def test_rdp_draws_its_tradeoff_lower_bound_and_profile(gdpcli, tmp_path: Path) -> None:
    target = tmp_path / "rdp.svg"
    outcome = gdpcli("convert", "rdp:alpha=8,eps=1", "--epsilon", "1", "--plot", str(target), "-f", "csv")
    assert outcome.code == 0, outcome.stderr
    text = target.read_text()
    assert "<!-- privacy profile -->" in text and "<!-- trade-off function -->" in text


def test_budget_exit_3_still_draws(gdpcli, tmp_path: Path) -> None:
    target = tmp_path / "budget.png"
    outcome = gdpcli("compose", "gdp:mu=1x4", "--delta", "1e-5", "--max-epsilon", "1", "--plot", str(target))
    assert outcome.code == 3
    assert_png(target)


def test_generic_functions(tmp_path: Path) -> None:
    """The drawing layer takes arrays and labels (what `sgd --plot` will use)."""
    from gdpcli.cli import plot

    alpha = np.linspace(0, 1, 11)
    curves = [
        plot.Curve(alpha, np.clip(0.8 - alpha, 0, 1), "method (lower bound)", "lower_bound", "method"),
        plot.Curve(alpha, np.clip(0.9 - alpha, 0, 1), "method (upper bound)", "upper_bound", "method"),
        plot.Curve(alpha, 1 - alpha, "reference", "approximation", "ref", reference=True),
    ]
    epsilon = np.linspace(0, 2, 5)
    profile = [plot.Curve(epsilon, np.exp(-epsilon), "profile (exact)", "exact", "p")]
    plot.tradeoff_plot(tmp_path / "generic.svg", "title with $ and _", curves, profile, ["a note"])
    assert_svg(tmp_path / "generic.svg")
    edges = np.array([0.0, 1.0, 2.0, 3.0])
    plot.staircase_plot(
        tmp_path / "stairs.png", "t", edges, np.array([1.0, 0.8, 0.0]), np.array([1.1, 0.9, np.inf]), 1.0, 1.1
    )
    assert_png(tmp_path / "stairs.png")


def test_help_lists_plot_and_imports_no_matplotlib() -> None:
    code = (
        "import sys\n"
        "from gdpcli.cli.app import run\n"
        "for name in ('convert', 'compose', 'subsample', 'gdpt-identify'):\n"
        "    assert run([name, '--help']) == 0\n"
        "print('MATPLOTLIB:', any(m.split('.')[0] == 'matplotlib' for m in sys.modules))\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.count("Also draw the result") == 4  # the --plot help, once per command
    assert completed.stdout.strip().splitlines()[-1] == "MATPLOTLIB: False"
