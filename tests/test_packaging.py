"""What the README promises after `pip install .` and after `pip install -e .`: both put the completion
scripts and man pages under the prefix, and `gdpcli completion SHELL` prints the installed script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # builds a wheel (pip, with build isolation)
SHIPPED = (
    "share/man/man1/gdpcli.1",
    "share/man/man1/gdpcli-sgd.1",
    "share/man/man1/gdpcli-specs.1",
    "share/bash-completion/completions/gdpcli.bash",
    "share/zsh/site-functions/_gdpcli",
    "share/fish/vendor_completions.d/gdpcli.fish",
)


@pytest.fixture(scope="module")
def prefix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project built into a wheel and installed (without dependencies) under a fresh prefix."""
    work = tmp_path_factory.mktemp("wheel")
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work), str(ROOT)]
    subprocess.run(build, check=True, capture_output=True)
    [wheel] = work.glob("gdpcli-*.whl")
    assert any("/share/man/man1/gdpcli-sgd.1" in name for name in zipfile.ZipFile(wheel).namelist())
    target = work / "prefix"
    install = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed"]
    install += ["--prefix", str(target), str(wheel)]  # --ignore-installed: never touch the running env
    subprocess.run(install, check=True, capture_output=True)
    return target


def installed_site(prefix: Path) -> str:
    return sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)})


@pytest.fixture(scope="module")
def editable_prefix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the project installed editable (PEP 660, as `pip install -e .` does) under a fresh prefix;
    a copy, so that the build leaves the checkout as it was."""
    work = tmp_path_factory.mktemp("editable")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".*", "build", "*.egg-info", "__pycache__"))
    target = work / "prefix"
    install = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed"]
    install += ["--prefix", str(target), "-e", str(source)]
    subprocess.run(install, check=True, capture_output=True)
    return target


def shipped_as_in_the_checkout(prefix: Path) -> None:
    for relative in SHIPPED:
        shipped = prefix / relative
        assert shipped.is_file(), relative
        source = ROOT / ("man" if "man1" in relative else "completions") / shipped.name
        assert shipped.read_text() == source.read_text()


def test_man_pages_and_completions_land_under_the_prefix(prefix: Path) -> None:
    shipped_as_in_the_checkout(prefix)


def test_an_editable_install_puts_them_under_the_prefix_too(editable_prefix: Path) -> None:
    """setuptools' editable wheel skips data files unless the distribution has `has_data` (setup.py)."""
    shipped_as_in_the_checkout(editable_prefix)


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_command_prints_the_installed_script(prefix: Path, shell: str) -> None:
    site = installed_site(prefix)
    environment = {**os.environ, "PYTHONPATH": site}
    code = "import sys; from gdpcli.cli.app import run; sys.exit(run(['completion', sys.argv[1]]))"
    shown = subprocess.run(
        [sys.executable, "-c", code, shell], capture_output=True, text=True, env=environment, cwd=prefix
    )
    assert shown.returncode == 0, shown.stderr
    check = "import gdpcli, sys; print(gdpcli.__file__)"
    where = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, env=environment, cwd=prefix
    )
    assert where.stdout.startswith(site)  # the installed copy answered, not the checkout
    name = {"bash": "gdpcli.bash", "zsh": "_gdpcli", "fish": "gdpcli.fish"}[shell]
    assert shown.stdout == (ROOT / "completions" / name).read_text()
