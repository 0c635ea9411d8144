"""Entry point of `gdpcli` and `python -m gdpcli`.

`--version` is answered before the CLI framework is imported: it needs nothing but the package itself.
"""

from __future__ import annotations

import gc
import sys


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--version"]:
        from gdpcli import __version__

        print(f"gdpcli {__version__}")
        return
    gc.disable()  # start-up creates long-lived objects, not garbage: app.main freezes them and re-enables
    from gdpcli.cli.app import main as run_cli

    run_cli()


if __name__ == "__main__":
    main()
