"""Root Typer app: subcommands, --version, --debug, and the error -> exit-code mapping.

Exit codes: 0 success; 1 could not compute (or write the result); 2 usage or input error; 3 budget
exceeded. Errors are one line on stderr, `gdpcli: error: <what> (<hint>)`; --debug prints the traceback
above that line and keeps the exit code. A command group named without its subcommand (`gdpcli`,
`gdpcli calibrate`) prints its help on stdout, as --help does, and exits 0: nothing was computed and
nothing was wrong. A closed stdout is an error before anything is computed; a broken pipe (`| head -1`)
ends quietly, exit 1.
"""

from __future__ import annotations

import gc
import sys
import traceback
from collections.abc import Iterable
from importlib import import_module
from typing import Annotated

import typer

from gdpcli import __version__
from gdpcli.cli import output
from gdpcli.errors import ExitCode, GdpcliError, OutputClosed

COMMANDS = {
    "convert": "convert",
    "compose": "compose",
    "subsample": "subsample",
    "sgd": "sgd",
    "mf": "mf",
    "noisy-gd": "noisy_gd",
    "calibrate": "calibrate",
    "gdpt-identify": "gdpt",
    "risk": "risk",
    "audit": "audit",
    "specs": "specs",
    "completion": "completion",
}
"""Each subcommand and the module of gdpcli.cli that defines it (its `command` and `EPILOG`, or a
sub-app `app` for a command group). A run imports only the module of the command it names."""

ROOT_EPILOG = """\b
Examples:
  # epsilon of a DP-SGD run (MNIST: 60000 examples, batches of 256, 60 epochs)
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 \\
      --epochs 60 --delta 1e-5
  # epsilon of 1-GDP at delta 1e-5
  gdpcli convert gdp:mu=1 --delta 1e-5
  # a Gaussian and a Laplace mechanism on the same data
  gdpcli compose gaussian:sigma=3 laplace:b=2 --delta 1e-5
  # the least Gaussian noise for (1, 1e-5)-DP
  gdpcli calibrate gaussian --epsilon 1 --delta 1e-5
  # every mechanism kind a spec can name, and its keys
  gdpcli specs
"""


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gdpcli {__version__}")
        raise typer.Exit()


def show_help_without_subcommand(context: typer.Context) -> None:
    """A command group named without a subcommand prints its help, as --help does (exit 0)."""
    if context.invoked_subcommand is None:
        typer.echo(context.get_help())
        raise typer.Exit()


def root(
    context: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")] = False,
) -> None:
    """A privacy calculator built on f-differential privacy and Gaussian differential privacy.

    Exit codes: 0 ok, 1 could not compute, 2 bad input, 3 budget exceeded.
    """
    show_help_without_subcommand(context)


def build(names: Iterable[str] = COMMANDS) -> typer.Typer:
    """The root app with the subcommands `names` (all by default) registered."""
    app = typer.Typer(
        name="gdpcli",
        help="A privacy calculator built on f-differential privacy and Gaussian differential privacy.\n\n"
        "Every figure is labelled exact, upper_bound, lower_bound or approximation. Exit codes: 0 ok, "
        "1 could not compute, 2 bad input, 3 budget exceeded. COMMAND --help shows examples.\n\n"
        "Mechanisms are given as specs, one shell word KIND:key=value,... (gdp:mu=1, gaussian:sigma=2, "
        "dp:eps=1,delta=1e-6, shuffle:eps0=1,n=10000, tradeoff:file=F.csv, ...): `gdpcli specs` lists "
        "every kind and its keys.",
        epilog=ROOT_EPILOG,
        invoke_without_command=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,  # help text is plain text: "[plot]" in a pip hint must not be read as markup
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(root)
    for name in names:
        module = import_module(f"gdpcli.cli.{COMMANDS[name]}")
        if hasattr(module, "app"):
            app.add_typer(
                module.app,
                name=name,
                invoke_without_command=True,
                no_args_is_help=False,
                callback=show_help_without_subcommand,
            )
        else:
            app.command(name=name, epilog=module.EPILOG)(module.command)
    return app


def invoked(argv: list[str]) -> tuple[str, ...]:
    """The one subcommand argv names (after root options such as --debug), else every subcommand: an
    invocation needs only its own command's module, while root help and errors list them all."""
    for word in argv:
        if word != "--debug":
            return (word,) if word in COMMANDS else tuple(COMMANDS)
    return tuple(COMMANDS)


def _traceback(debug: bool) -> None:
    """With --debug, the traceback of the error being handled, on stderr above its one-line message."""
    if debug and sys.stderr is not None:
        traceback.print_exc(file=sys.stderr)


def _fail(message: str, code: int) -> int:
    if sys.stderr is not None:  # with stderr closed (2>&-) the exit code is all there is
        sys.stderr.write(f"gdpcli: error: {message}\n")
    return code


def run(argv: list[str] | None = None, *, freeze_startup: bool = False) -> int:
    """Run gdpcli on argv and return its exit code (used by main() and by the tests).

    freeze_startup (the console script): the modules and the command were built with the cyclic collector
    paused (by gdpcli.__main__); freeze them and resume it. They live as long as the process, and later
    collections no longer walk them (with numpy's and scipy's objects): about 5 % of a closed-form run's
    wall time (benchmarks/README.md, startup).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    command = typer.main.get_command(build(invoked(argv)))
    if freeze_startup:
        gc.freeze()
        gc.enable()
    try:
        output.require_stdout()
        with output.progress_shown():
            result = command.main(args=argv, prog_name="gdpcli", standalone_mode=False)
    except OutputClosed:
        return ExitCode.COMPUTATION
    except GdpcliError as error:
        _traceback(debug)
        return _fail(error.render(output.option_of), error.exit_code)
    except (typer.Exit, typer.Abort) as stop:
        return int(getattr(stop, "exit_code", ExitCode.COMPUTATION))
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as error:
        if hasattr(error, "format_message") and hasattr(error, "exit_code"):
            # A Click usage error (unknown option, missing argument, bad choice): one line, exit 2.
            message = " ".join(error.format_message().split())
            context = getattr(error, "ctx", None)
            where = f"see {context.command_path} --help" if context is not None else "see gdpcli --help"
            return _fail(f"{message} ({where})", error.exit_code)
        _traceback(debug)
        hint = "report it with the traceback above" if debug else "rerun with --debug and report it"
        return _fail(f"internal error: {type(error).__name__}: {error} ({hint})", ExitCode.COMPUTATION)
    return result if isinstance(result, int) else ExitCode.OK


def main() -> None:
    """Console-script entry point."""
    sys.exit(run(freeze_startup=True))
