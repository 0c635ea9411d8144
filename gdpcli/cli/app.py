"""Root Typer app: subcommands, --version, --debug, and the error -> exit-code mapping (DESIGN.md).

Exit codes: 0 success; 1 could not compute (or write the result); 2 usage or input error; 3 budget
exceeded. Errors are one line on stderr, `gdpcli: error: <what> (<hint>)`, never a traceback unless --debug.
A closed stdout is an error before anything is computed; a broken pipe (`| head -1`) ends quietly, exit 1.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from gdpcli import __version__
from gdpcli.cli import (
    audit,
    calibrate,
    completion,
    compose,
    convert,
    gdpt,
    noisy_gd,
    output,
    risk,
    sgd,
    subsample,
)
from gdpcli.errors import ExitCode, GdpcliError, OutputClosed

ROOT_EPILOG = """\b
Examples:
  gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 --epochs 60 --delta 1e-5
  gdpcli convert gdp:mu=1 --delta 1e-5
  gdpcli compose gaussian:sigma=3 laplace:b=2 --delta 1e-5
  gdpcli calibrate gaussian --epsilon 1 --delta 1e-5
"""

app = typer.Typer(
    name="gdpcli",
    help="A privacy calculator built on f-differential privacy and Gaussian differential privacy.\n\n"
    "Every figure is labelled exact, upper_bound, lower_bound or approximation. Exit codes: 0 ok, "
    "1 could not compute, 2 bad input, 3 budget exceeded. COMMAND --help shows examples.",
    epilog=ROOT_EPILOG,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain text: "[plot]" in a pip hint must not be read as markup
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gdpcli {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show full tracebacks on errors.")] = False,
) -> None:
    """A privacy calculator built on f-differential privacy and Gaussian differential privacy.

    Exit codes: 0 ok, 1 could not compute, 2 bad input, 3 budget exceeded.
    """


app.command(name="convert", epilog=convert.EPILOG)(convert.command)
app.command(name="compose", epilog=compose.EPILOG)(compose.command)
app.command(name="subsample", epilog=subsample.EPILOG)(subsample.command)
app.command(name="sgd", epilog=sgd.EPILOG)(sgd.command)
app.command(name="noisy-gd", epilog=noisy_gd.EPILOG)(noisy_gd.command)
app.add_typer(calibrate.app, name="calibrate")
app.command(name="gdpt-identify", epilog=gdpt.EPILOG)(gdpt.command)
app.command(name="risk", epilog=risk.EPILOG)(risk.command)
app.command(name="audit", epilog=audit.EPILOG)(audit.command)
app.command(name="completion", epilog=completion.EPILOG)(completion.command)


def _fail(message: str, code: int) -> int:
    if sys.stderr is not None:  # with stderr closed (2>&-) the exit code is all there is
        sys.stderr.write(f"gdpcli: error: {message}\n")
    return code


def run(argv: list[str] | None = None) -> int:
    """Run gdpcli on argv and return its exit code (used by main() and by the tests)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    command = typer.main.get_command(app)
    try:
        output.require_stdout()
        with output.progress_shown():
            result = command.main(args=argv, prog_name="gdpcli", standalone_mode=False)
    except OutputClosed:
        return ExitCode.COMPUTATION
    except GdpcliError as error:
        if debug:
            raise
        return _fail(str(error), error.exit_code)
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
        if debug:
            raise
        message = f"internal error: {type(error).__name__}: {error} (rerun with --debug and report it)"
        return _fail(message, ExitCode.COMPUTATION)
    return result if isinstance(result, int) else ExitCode.OK


def main() -> None:
    """Console-script entry point."""
    sys.exit(run())
