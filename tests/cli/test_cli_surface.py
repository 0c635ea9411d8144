"""What a newcomer meets first: help without a subcommand, --debug, help that fits 80 columns, and the
spec language (`gdpcli specs`) listing every kind the parser accepts."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from gdpcli import vocabulary
from gdpcli.events.spec import COMMON_KEYS, KIND_KEYS, MEANINGS, parse_spec
from tools import generate_docs as generate

COMMANDS = [tuple(command.path[1:]) for command in generate.command_tree().walk()]
"""Every command path below gdpcli, with () for gdpcli itself."""
GROUPS = [tuple(command.path[1:]) for command in generate.command_tree().walk() if command.subcommands]


# --- a group without its subcommand --------------------------------------------------------------------


@pytest.mark.parametrize("group", GROUPS, ids=lambda path: " ".join(("gdpcli", *path)))
def test_a_group_without_subcommand_prints_its_help(gdpcli, group: tuple[str, ...]) -> None:
    """`gdpcli` and `gdpcli calibrate` print exactly what --help prints, on stdout, and exit 0."""
    bare, helped = gdpcli(*group), gdpcli(*group, "--help")
    assert (bare.code, bare.stderr) == (0, "")
    assert bare.stdout == helped.stdout and bare.stdout.startswith("Usage: gdpcli")
    assert "\nCommands:\n" in bare.stdout


def test_debug_alone_prints_the_help(gdpcli) -> None:
    outcome = gdpcli("--debug")
    assert (outcome.code, outcome.stderr) == (0, "") and outcome.stdout == gdpcli("--help").stdout


def test_bare_gdpcli_in_a_real_process() -> None:
    done = subprocess.run([sys.executable, "-m", "gdpcli"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("Usage: gdpcli [OPTIONS] COMMAND [ARGS]...")


def test_a_group_given_a_bad_option_is_still_a_usage_error(gdpcli) -> None:
    outcome = gdpcli("calibrate", "--bogus")
    assert outcome.code == 2 and outcome.stdout == ""
    assert (
        outcome.stderr.startswith("gdpcli: error: No such option: --bogus")
        and outcome.stderr.count("\n") == 1
    )


# --- --debug keeps the exit code ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("convert", "gdp:mu=-1"), 2),  # bad input
        (("gdpt-identify", "rdp:alpha=8,eps=0.5"), 1),  # could not compute: no privacy profile
        (("compose", "gaussian:sigma=5x100", "--delta", "1e-5", "--max-epsilon", "3"), 3),  # budget
    ],
)
def test_debug_shows_the_traceback_and_keeps_the_exit_code(gdpcli, args: tuple[str, ...], code: int) -> None:
    plain, debugged = gdpcli(*args), gdpcli("--debug", *args)
    assert plain.code == debugged.code == code
    assert "Traceback" not in plain.stderr and plain.stderr.startswith("gdpcli: error: ")
    assert debugged.stderr.startswith("Traceback (most recent call last):")
    assert debugged.stderr.splitlines()[-1] == plain.stderr.strip()


def test_debug_in_a_real_process_exits_2_on_bad_input() -> None:
    command = [sys.executable, "-m", "gdpcli", "--debug", "convert", "gdp:mu=-1"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Traceback" in done.stderr
    assert done.stderr.splitlines()[-1].startswith("gdpcli: error: spec 'gdp:mu=-1'")


# --- help fits 80 columns ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(("gdpcli", *path)))
def test_help_fits_80_columns(gdpcli, monkeypatch: pytest.MonkeyPatch, path: tuple[str, ...]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    outcome = gdpcli(*path, "--help")
    assert outcome.code == 0
    long = [line for line in outcome.stdout.splitlines() if len(line) > 80]
    assert not long, "\n".join(long)


def click_commands() -> list:
    """Every Click command of the CLI (groups included), as Typer builds them."""
    import typer

    from gdpcli.cli.app import build

    found, todo = [], [typer.main.get_command(build())]
    while todo:
        command = todo.pop()
        found.append(command)
        todo += list(getattr(command, "commands", {}).values())
    return found


def test_choice_options_shown_by_name_list_their_words_in_their_help() -> None:
    """An option whose words are too many for its line in --help shows a METAVAR instead; then its help
    names every word."""
    for command in click_commands():
        for param in command.params:
            words = generate.typed_choices(param)
            if words and param.metavar:
                named = set(re.findall(r"[\w-]+", param.help or ""))
                assert set(words) <= named, (command.name, param.opts, words)


# --- gdpcli specs ----------------------------------------------------------------------------------------


def kind_rows(text: str) -> dict[str, str]:
    """The Kinds table of `gdpcli specs`: kind -> its keys column."""
    table = text.split("\nKinds:\n", 1)[1].splitlines()[1:]  # after the KIND KEYS MEANING header
    rows = [re.match(r"^  (\S+)\s{2,}(\S.*?)\s{2,}", line) for line in table]
    return {row.group(1): row.group(2) for row in rows if row}


def test_specs_lists_every_kind_the_parser_accepts_with_its_keys(gdpcli) -> None:
    outcome = gdpcli("specs")
    assert (outcome.code, outcome.stderr) == (0, "")
    listed = kind_rows(outcome.stdout)
    assert list(listed) == list(KIND_KEYS)
    for kind, keys in KIND_KEYS.items():
        assert listed[kind] == ", ".join(keys)
    for key in COMMON_KEYS:
        assert re.search(rf"^  {key}=", outcome.stdout, flags=re.M), key
    assert all(word in outcome.stdout for word in vocabulary.SAMPLING)


def test_every_kind_has_a_meaning_that_names_each_of_its_keys() -> None:
    assert set(MEANINGS) == set(KIND_KEYS)
    for kind, keys in KIND_KEYS.items():
        words = set(re.findall(r"\w+", MEANINGS[kind]))
        assert set(keys) <= words, (kind, keys, MEANINGS[kind])


def test_specs_examples_parse() -> None:
    from gdpcli.cli import specs

    for spec, _ in specs.EXAMPLES:
        parse_spec(spec)


@pytest.mark.parametrize("width", [80, 60])
def test_specs_fits_the_terminal(gdpcli, monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    text = gdpcli("specs").stdout
    assert max(len(line) for line in text.splitlines()) <= width
    assert list(kind_rows(text)) == list(KIND_KEYS)


def test_root_help_points_to_specs_and_names_the_kinds_newcomers_miss(gdpcli) -> None:
    text = " ".join(gdpcli("--help").stdout.split())
    assert "gdpcli specs" in text
    for word in ("shuffle:", "tradeoff:file="):
        assert word in text
