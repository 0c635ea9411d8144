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
