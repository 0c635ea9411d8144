"""`gdpcli completion SHELL`: print the shell completion script that `pip install` put under the prefix.

The scripts are generated from the CLI by tools/generate_docs.py and shipped as data files
(share/bash-completion/completions, share/zsh/site-functions, share/fish/vendor_completions.d; man pages
in share/man/man1), by `pip install .` and `pip install -e .` alike (setup.py). Run from a checkout that
was never installed, the checkout's completions/ is used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gdpcli.cli.options import choices
from gdpcli.errors import ComputationError

SCRIPTS = {
    "bash": "share/bash-completion/completions/gdpcli.bash",
    "zsh": "share/zsh/site-functions/_gdpcli",
    "fish": "share/fish/vendor_completions.d/gdpcli.fish",
}

EPILOG = """\b
Examples:
  gdpcli completion bash > ~/.local/share/bash-completion/completions/gdpcli
  # with fpath+=(~/.zfunc) in ~/.zshrc, before compinit
  gdpcli completion zsh > ~/.zfunc/_gdpcli
  gdpcli completion fish > ~/.config/fish/completions/gdpcli.fish
"""


def installed_file(relative: str) -> Path | None:
    """The installed data file `relative` (e.g. share/man/man1/gdpcli.1), or the checkout's copy."""
    from importlib import metadata

    try:
        files = metadata.files("gdpcli") or []
    except metadata.PackageNotFoundError:
        files = []
    for entry in files:
        if str(entry).replace("\\", "/").endswith(relative):
            return Path(str(entry.locate()))
    checkout = Path(__file__).resolve().parents[2]
    local = checkout / ("completions" if "completion" in relative or "site-functions" in relative else "man")
    candidate = local / Path(relative).name
    return candidate if candidate.is_file() else None


Shell = choices("Shell", tuple(SCRIPTS))


def command(
    shell: Annotated[Shell, typer.Argument(help="bash | zsh | fish.")],
) -> None:
    """Print the completion script for SHELL (install it as the examples show)."""
    path = installed_file(SCRIPTS[str(shell)])
    if path is None:
        raise ComputationError("the completion scripts are not installed", "reinstall with pip install .")
    typer.echo(path.read_text(), nl=False)
