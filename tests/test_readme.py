"""The README cannot rot: its set-up commands match CI, and every example in it runs."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


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


def test_mnist_sentences_match_what_gdpcli_prints(gdpcli) -> None:
    """Issue 11: the README's CLT sentence quotes the numbers `sgd --method all` prints (4 decimals for
    the fixed-size bracket and the CLT, 3 for the Poisson bracket), in the convention it names."""
    run = ("sgd", "--dataset-size", "60000", "--batch-size", "256", "--noise-multiplier", "1.1")
    run += ("--epochs", "60", "--delta", "1e-5", "--method", "all", "-f", "json")
    fixed = gdpcli(*run, "--sampling", "fixed", "--sensitivity", "1").json()["rows"]
    poisson = gdpcli(*run).json()["rows"]

    def figures(rows: list[dict]) -> dict[str, float]:
        return {row["guarantee"]: row["epsilon"] for row in rows if row["method"] in ("pld", "clt")}

    f, p = figures(fixed), figures(poisson)
    assert (
        f"bounds on C_p(G_{{1/1.1}})^{{(x)T}} of Thm 10 are [{f['lower_bound']:.4f}, {f['upper_bound']:.4f}]"
        in (" ".join(README.split()))
    )
    assert f"the CLT (Cor. 4) says {f['approximation']:.4f}" in " ".join(README.split())
    sentence = " ".join(README.split("## Which method should I trust?")[1].split())
    assert f"says epsilon {p['approximation']:.3f} with Poisson sampling" in sentence
    assert f"rigorous bounds are [{p['lower_bound']:.3f}, {p['upper_bound']:.3f}] (optimistic)" in sentence
    assert f"{f['approximation']:.3f} with fixed-size batches" in sentence
    assert f"rigorous bounds are [{f['lower_bound']:.3f}, {f['upper_bound']:.3f}] (pessimistic" in sentence
    assert p["approximation"] < p["lower_bound"] and f["approximation"] > f["upper_bound"]
    ecosystem = figures(gdpcli(*run, "--sampling", "fixed").json()["rows"])
    assert f"rigorous upper bound is epsilon {ecosystem['upper_bound']:.2f}" in " ".join(README.split())


def test_small_delta_sentence_matches_what_gdpcli_prints(gdpcli) -> None:
    """The README's small-delta brackets of the MNIST run are what `gdpcli sgd` prints (4 decimals)."""
    run = ("sgd", "--dataset-size", "60000", "--batch-size", "256", "--noise-multiplier", "1.1")
    text = " ".join(README.split())
    for delta in ("1e-8", "1e-10", "1e-12"):
        rows = gdpcli(*run, "--epochs", "60", "--delta", delta, "-f", "json").json()["rows"]
        bounds = {row["guarantee"]: row["epsilon"] for row in rows}
        assert f"[{bounds['lower_bound']:.4f}, {bounds['upper_bound']:.4f}]" in text
