"""The generated shell completions and man pages (tools/generate_docs.py): fresh, well-formed, and working.

The committed files in completions/ and man/ must equal what the generator makes from the CLI now; the
man pages must render without groff warnings; the completion scripts must parse and complete.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gdpcli import vocabulary
from gdpcli.accounting import dpsgd, last_iterate, matrix_mechanism
from gdpcli.accounting.gdpt_input import BUILTINS
from gdpcli.events.spec import COMMON_KEYS, KIND_KEYS
from tools import generate_docs as generate

ROOT = generate.ROOT
BASH = ROOT / "completions" / "gdpcli.bash"
ZSH = ROOT / "completions" / "_gdpcli"
FISH = ROOT / "completions" / "gdpcli.fish"
PAGES = sorted((ROOT / "man").glob("*.1"))
SUBCOMMANDS = (
    "convert",
    "compose",
    "subsample",
    "sgd",
    "mf",
    "noisy-gd",
    "calibrate",
    "gdpt-identify",
    "risk",
    "audit",
    "specs",
    "completion",
)
SECTIONS = ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "SEE ALSO")
needs = {
    name: pytest.mark.skipif(shutil.which(name) is None, reason=f"{name} is not installed")
    for name in ("bash", "zsh", "fish", "groff", "man")
}


@pytest.fixture(scope="module")
def tree() -> generate.Command:
    return generate.command_tree()


@pytest.fixture(scope="module")
def files(tree: generate.Command) -> dict[str, str]:
    return generate.outputs(tree)


def node(tree: generate.Command, name: str) -> generate.Command:
    return next(command for command in tree.walk() if command.name == name)


# --- freshness -------------------------------------------------------------------------------------------


def test_committed_files_are_fresh() -> None:
    stale = generate.stale(ROOT)
    assert not stale, (
        f"stale or missing: {', '.join(stale)}; run `{generate.REGENERATE}` and commit the files"
    )


def test_generator_writes_checks_and_removes_leftovers(tmp_path: Path) -> None:
    (tmp_path / "man").mkdir()
    (tmp_path / "man" / "gdpcli-removed.1").write_text(".TH OLD 1\n")
    assert generate.main(["--check", "--root", str(tmp_path)]) == 1
    written = generate.write(tmp_path)
    assert "man/gdpcli-removed.1" in written and not (tmp_path / "man" / "gdpcli-removed.1").exists()
    assert generate.main(["--check", "--root", str(tmp_path)]) == 0
    assert {f"man/gdpcli-{name}.1" for name in SUBCOMMANDS} <= set(written)


# --- what is read from the CLI ---------------------------------------------------------------------------


def test_tree_has_every_subcommand(tree: generate.Command) -> None:
    assert {sub.path[-1] for sub in tree.subcommands} == set(SUBCOMMANDS)
    assert {"gaussian", "laplace", "sgd"} <= {
        sub.path[-1] for sub in node(tree, "gdpcli calibrate").subcommands
    }
    for command in tree.walk():
        assert {"-h", "--help"} <= {name for option in command.options for name in option.names}


def test_every_method_format_and_sampling_option_completes_words(tree: generate.Command) -> None:
    """The word options are typed (options.Choice), so the generator reads their words from the types."""
    for command in tree.walk():
        for option in command.options:
            if option.names[-1] in ("--method", "--format", "--sampling", "--conversion", "--to"):
                assert option.choices, f"{command.name} {option.names[-1]}"


def accepted(path: str, option: str) -> tuple[str, ...]:
    """What each command really accepts, from the constants the commands validate against."""
    if option in ("-f", "--format"):
        return vocabulary.FORMATS
    if option == "--sampling":
        return vocabulary.BATCHING if path.endswith(("sgd", "risk", "audit")) else vocabulary.SAMPLING
    if option == "--conversion":
        return dpsgd.CONVERSIONS if path.endswith("sgd") else (*vocabulary.CONVERSIONS, "all")
    if option == "--to":
        if path == "gdpcli convert":
            return ("mu", "rho", "rdp", "equal-error", "kl", "tv", "hellinger", "chi2")
        if path == "gdpcli compose":
            return ("mu", "dp-event")
        if path == "gdpcli sgd":
            return ("dp-event",)
        return ("mu",)
    if option == "--scale":
        return ("all", "last")  # calibrate sgd --schedule: which phases' noise is scaled
    if option == "--batching":
        return last_iterate.BATCHING
    if option == "--strategy":
        return matrix_mechanism.STRATEGIES
    methods = {
        "gdpcli convert": (*vocabulary.METHODS, *vocabulary.CONVERSIONS),
        "gdpcli compose": vocabulary.METHODS,
        "gdpcli sgd": vocabulary.METHODS,
        "gdpcli mf": vocabulary.METHODS,
        "gdpcli risk": vocabulary.METHODS,
        "gdpcli calibrate sgd": ("auto", "exact", "pld", "rdp", "clt"),
        "gdpcli subsample": ("auto", "clt", "all"),
    }
    assert option == "--method" and path in methods, f"{path} {option}: add what it accepts to this table"
    return methods[path]


def choice_options() -> list:
    """(path, option, completed choices) for every option that completes choices, with readable ids."""
    return [
        pytest.param(command.name, option.names[-1], option.choices, id=f"{command.name} {option.names[-1]}")
        for command in generate.command_tree().walk()
        for option in command.options
        if option.choices
    ]


@pytest.mark.parametrize(("path", "option", "completed"), choice_options())
def test_completed_choices_are_accepted(path: str, option: str, completed: tuple[str, ...]) -> None:
    assert set(completed) <= set(accepted(path, option)), f"{path} {option}: help text and code disagree"


def test_every_format_option_completes_its_values(tree: generate.Command) -> None:
    formats = [option for command in tree.walk() for option in command.options if "--format" in option.names]
    assert len(formats) >= 9 and all(option.choices == vocabulary.FORMATS for option in formats)


def test_spec_arguments_complete_kinds_and_gdpt_input_files(tree: generate.Command) -> None:
    kinds = tuple(f"{kind}:{keys[0]}=" for kind, keys in KIND_KEYS.items())
    assert kinds[:2] == ("gdp:mu=", "gaussian:sigma=")
    for name in ("convert", "compose", "subsample"):
        (argument,) = node(tree, f"gdpcli {name}").arguments
        assert argument.words == kinds and not argument.files
    (source,) = node(tree, "gdpcli gdpt-identify").arguments
    assert source.files and source.words == kinds + tuple(
        f"{name}:{keys[0]}=" for name, keys in BUILTINS.items()
    )


def test_examples_parser() -> None:
    epilog = """\b
Examples (a note
that goes on):
  gdpcli convert gdp:mu=1 --delta 1e-5            epsilon of 1-GDP
  gdpcli sgd --dataset-size 60000 \\
      --epochs 60 --delta 1e-5                    a continued command
  gdpcli convert gdp:mu=1 -f csv | gdpcli gdpt-identify -
                                                  a description below
  # a comment above, which
  # goes on
  gdpcli compose gdp:mu=1 \\
      --to mu

(a closing note)
"""
    assert generate.examples(epilog) == [
        generate.Example("", "Examples (a note that goes on):"),
        generate.Example("gdpcli convert gdp:mu=1 --delta 1e-5", "epsilon of 1-GDP"),
        generate.Example("gdpcli sgd --dataset-size 60000 --epochs 60 --delta 1e-5", "a continued command"),
        generate.Example("gdpcli convert gdp:mu=1 -f csv | gdpcli gdpt-identify -", "a description below"),
        generate.Example("gdpcli compose gdp:mu=1 --to mu", "a comment above, which goes on"),
        generate.Example("", "(a closing note)"),
    ]


def test_every_example_is_a_whole_command(tree: generate.Command) -> None:
    """No example stands for another by `...`: each can be copied and run as it is."""
    for command in tree.walk():
        for example in generate.examples(command.epilog):
            assert "..." not in example.command, (command.name, example.command)


def test_wrap_command_breaks_before_options_only() -> None:
    command = (
        "gdpcli sgd --dataset-size 60000 --batch-size 256 --noise-multiplier 1.1 --epochs 60 --delta 1e-5"
    )
    lines = generate.wrap_command(command, width=40)
    assert all(len(line) <= 42 for line in lines) and all(line.endswith(" \\") for line in lines[:-1])
    assert " ".join(line.removesuffix(" \\").strip() for line in lines) == command
    assert lines[1].strip().startswith("--") and "--epochs 60" in " ".join(lines)


# --- man pages ---------------------------------------------------------------------------------------------


def test_roff_escaping() -> None:
    assert generate.roff(".x") == "\\&.x" and generate.roff("'x") == "\\&'x"
    assert generate.roff("a\\b") == "a\\eb"
    assert generate.roff("use --delta now") == "use \\%\\-\\-delta now"
    assert generate.roff("\u03bc") == "\\[u03BC]"


def test_specs_page_lists_every_kind_and_commands_that_take_specs_refer_to_it(
    tree: generate.Command, files: dict[str, str]
) -> None:
    page = files["man/gdpcli-specs.1"]
    for heading in (".SH GRAMMAR", ".SH KEYS EVERY KIND TAKES", ".SH KINDS"):
        assert heading in page
    for kind in KIND_KEYS:
        assert f"\\fB{generate.roff(kind)}\\fR (" in page, kind
    for key in COMMON_KEYS:
        assert f"\\fB{generate.roff(key)}=" in page, key
    takers = {command.name for command in tree.walk() if generate.takes_specs(command)}
    assert takers == {
        *(f"gdpcli {name}" for name in ("convert", "compose", "subsample", "gdpt-identify", "risk", "audit")),
        "gdpcli calibrate canonical",
    }
    for command in tree.walk():
        if command.name in takers:
            see_also = files[f"man/{command.page}.1"].split(".SH SEE ALSO")[1]
            assert f"{generate.roff('gdpcli-specs')}\\fR(1)" in see_also, command.name
            assert "gdpcli specs" in command.epilog, command.name


def test_a_page_for_every_command_with_all_sections(tree: generate.Command, files: dict[str, str]) -> None:
    for command in tree.walk():
        page = files[f"man/{command.page}.1"]
        headings = [line[4:] for line in page.splitlines() if line.startswith(".SH ")]
        wanted = [
            s
            for s in SECTIONS
            if s != "EXAMPLES" or any(e.command for e in generate.examples(command.epilog))
        ]
        assert [h for h in headings if h in SECTIONS] == wanted, command.name
        assert page.splitlines()[1].startswith(f".TH {command.page.upper().replace('-', chr(92) + '-')} 1 ")
        for code in ("0", "1", "2", "3"):
            assert f"\\fB{code}\\fR" in page
    assert {f"man/gdpcli-{name}.1" for name in SUBCOMMANDS} <= set(files)


@needs["groff"]
@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_groff_renders_without_warnings(page: Path) -> None:
    done = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""


@needs["man"]
@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_man_renders_examples_without_warnings(page: Path, tree: generate.Command) -> None:
    environment = {**os.environ, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "80", "LC_ALL": "C.UTF-8"}
    done = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True, env=environment)
    assert done.returncode == 0 and done.stderr == ""
    text = " ".join(done.stdout.replace("\\\n", " ").split())
    command = {command.page: command for command in tree.walk()}[page.stem]
    for example in generate.examples(command.epilog):
        assert " ".join(example.command.split()) in text


# --- completion scripts ----------------------------------------------------------------------------------


PRINT_REPLY = 'printf "%s\\n" "${COMPREPLY[@]}"'


def bash_words(*words: str) -> list[str]:
    """COMPREPLY for COMP_WORDS=words, the last word being completed (bash's own split)."""
    script = 'source "$1"; shift; COMP_CWORD=$(($# - 1)); COMP_WORDS=("$@"); _gdpcli; ' + PRINT_REPLY
    done = subprocess.run(["bash", "-c", script, "_", str(BASH), *words], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""
    return done.stdout.split()


def bash_line(line: str) -> list[str]:
    """COMPREPLY for a command line as bash gives it to a completion function (COMP_LINE, COMP_POINT)."""
    script = 'source "$1"; COMP_LINE=$2; COMP_POINT=${#2}; _gdpcli; ' + PRINT_REPLY
    done = subprocess.run(["bash", "-c", script, "_", str(BASH), line], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""
    return done.stdout.split()


@needs["bash"]
def test_bash_syntax() -> None:
    done = subprocess.run(["bash", "-n", str(BASH)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""


@needs["bash"]
def test_bash_completes_commands_options_and_values() -> None:
    assert bash_words("gdpcli", "comp") == ["compose", "completion"]
    assert "--delta" in bash_words("gdpcli", "convert", "--de")
    assert bash_words("gdpcli", "convert", "-f", "c") == ["csv"]
    assert bash_words("gdpcli", "calibrate", "s") == ["sgd"]
    assert bash_words("gdpcli", "subsample", "gdp:mu=1", "--sampling", "") == ["poisson", "fixed"]
    # the value of --schedule is a file name, not the subcommand calibrate: the path stays gdpcli sgd
    assert set(bash_words("gdpcli", "sgd", "--schedule", "calibrate", "--samp")) == {
        "--sampling",
        "--sampling-rate",
    }


@needs["bash"]
def test_bash_completes_every_command_and_option(tree: generate.Command) -> None:
    for command in tree.walk():
        names = [name for option in command.options for name in option.names]
        assert set(bash_line(f"{command.name} -")) == set(names), command.name
        if command.subcommands:
            assert bash_line(f"{command.name} ") == [sub.path[-1] for sub in command.subcommands]


@needs["bash"]
def test_bash_completes_specs_across_word_breaks(tmp_path: Path) -> None:
    assert bash_line("gdpcli convert g") == ["gdp:mu=", "gaussian:sigma="]
    assert bash_line("gdpcli compose gdp:mu=1 gdp:") == ["mu="]  # bash replaces the part after the ':'
    assert bash_line("gdpcli convert --format=j") == ["json"]
    (tmp_path / "profile.csv").write_text("epsilon,delta\n0,1\n")
    assert bash_line(f"gdpcli gdpt-identify {tmp_path}/pro") == [f"{tmp_path}/profile.csv"]
    assert bash_line("gdpcli gdpt-identify ic") == ["icea:m="]


@needs["zsh"]
def test_zsh_syntax() -> None:
    assert ZSH.read_text().startswith("#compdef gdpcli\n")
    done = subprocess.run(["zsh", "-n", str(ZSH)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""


def fish_complete(line: str) -> list[str]:
    done = subprocess.run(
        ["fish", "--no-config", "-c", f"source {FISH}; complete -C {line!r}"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stderr == ""
    return [entry.split("\t")[0] for entry in done.stdout.splitlines()]


@needs["fish"]
def test_fish_syntax_and_completions() -> None:
    done = subprocess.run(["fish", "--no-execute", str(FISH)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""
    assert fish_complete("gdpcli comp") == ["compose", "completion"]
    assert "--delta" in fish_complete("gdpcli convert --de")
    assert sorted(fish_complete("gdpcli convert -f ")) == ["csv", "json", "table"]
    assert sorted(fish_complete("gdpcli calibrate sgd --method ")) == sorted(
        accepted("gdpcli calibrate sgd", "--method")
    )
    assert set(fish_complete("gdpcli convert g")) == {"gdp:mu=", "gaussian:sigma="}
    assert fish_complete("gdpcli calibrate ") == ["gaussian", "laplace", "family", "canonical", "sgd"]
    for path in ("gdpcli sgd", "gdpcli risk", "gdpcli audit", "gdpcli calibrate sgd"):
        assert sorted(fish_complete(f"{path} --sampling ")) == sorted(vocabulary.BATCHING), path
    assert "--sampling" in fish_complete("gdpcli sgd --schedule calibrate --samp")
