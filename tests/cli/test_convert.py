"""`gdpcli convert` end to end: the issue's must-holds, formats and exit codes."""

from __future__ import annotations

import csv
import io
import math
import subprocess
import sys
import warnings

import pytest

from gdpcli.defaults import DEFAULT_ACCURACY
from tests.conftest import REFERENCE, one_line_error, safe_side_of


def one_row(outcome) -> dict:
    assert outcome.code == 0, outcome.stderr
    rows = outcome.json()["rows"]
    assert len(rows) == 1
    return rows[0]


def test_epsilon_of_gdp(gdpcli) -> None:
    row = one_row(gdpcli("convert", "gdp:mu=1", "--delta", "1e-5", "-f", "json"))
    assert row["epsilon"] == pytest.approx(4.3771780956812246, rel=1e-9)
    assert (row["guarantee"], row["method"]) == ("exact", "gdp")


def test_tiny_delta(gdpcli) -> None:
    row = one_row(gdpcli("convert", "gdp:mu=6", "--epsilon", "100", "-f", "json"))
    assert row["delta"] == pytest.approx(2.4344231135736620e-43, rel=1e-6)


def test_gaussian(gdpcli) -> None:
    row = one_row(gdpcli("convert", "gaussian:sigma=2", "--delta", "1e-5", "-f", "json"))
    assert row["epsilon"] == pytest.approx(1.9930914044151196, rel=1e-12)


def test_profile_table_csv(gdpcli) -> None:
    outcome = gdpcli("convert", "gdp:mu=1", "--epsilon", "0:10:11", "-f", "csv")
    assert outcome.code == 0
    rows = list(csv.DictReader(io.StringIO(outcome.stdout)))
    assert len(rows) == 11
    assert [float(r["epsilon"]) for r in rows] == [float(i) for i in range(11)]
    expected = {1.0: "0.1269367375066439458", 0.0: None}
    assert float(rows[1]["delta"]) == pytest.approx(float(expected[1.0]), rel=1e-12)
    assert outcome.stdout.splitlines()[0] == "epsilon,delta,guarantee,method,mu"


def test_tradeoff(gdpcli) -> None:
    row = one_row(gdpcli("convert", "gdp:mu=1", "--alpha", "0.05", "-f", "json"))
    assert row["beta"] == pytest.approx(0.74048897715855592, rel=1e-12)


def test_pure_dp_to_mu(gdpcli) -> None:
    row = one_row(gdpcli("convert", "dp:eps=1", "--to", "mu", "-f", "json"))
    assert row["mu"] == pytest.approx(1.2320353853449010, rel=1e-12)
    assert row["guarantee"] == "exact"


def test_approx_dp_has_no_mu(gdpcli) -> None:
    outcome = gdpcli("convert", "dp:eps=1,delta=1e-6", "--to", "mu")
    assert outcome.code == 1
    assert "implies mu-GDP for no finite mu" in outcome.stderr


def test_group(gdpcli) -> None:
    row = one_row(gdpcli("convert", "gdp:mu=0.5", "--group", "4", "--delta", "1e-5", "-f", "json"))
    assert row["mu"] == 2.0
    assert row["group"] == 4
    # 2-GDP at delta 1e-5; recipe: mpmath findroot of Cor. 1 (see tests/core/test_gdp.py::mp_delta)
    import mpmath as mp

    from tests.core.test_gdp import mp_delta

    with mp.workdps(40):
        expected = mp.findroot(lambda e: mp_delta(e, 2) - mp.mpf("1e-5"), 10)
        assert row["epsilon"] == pytest.approx(float(expected), rel=1e-12)


def test_laplace_tradeoff(gdpcli) -> None:
    row = one_row(gdpcli("convert", "laplace:b=1", "--alpha", "0.2", "-f", "json"))
    assert row["beta"] == pytest.approx(0.45984930146430290, rel=1e-12)


def test_json_document_shape(gdpcli) -> None:
    document = gdpcli("convert", "gdp:mu=1", "--delta", "1e-5,1e-6", "-f", "json").json()
    assert set(document) == {"command", "gdpcli_version", "inputs", "rows", "notes"}
    assert document["command"] == "convert"
    assert document["inputs"] == {
        "spec": "gdp:mu=1",
        "delta": [1e-5, 1e-6],
        "method": "auto",
        "accuracy": DEFAULT_ACCURACY,
    }
    assert len(document["rows"]) == 2


def test_table_format(gdpcli) -> None:
    outcome = gdpcli("convert", "gdp:mu=1", "--delta", "1e-5", "-f", "table")
    assert outcome.code == 0
    assert "4.3771781" in outcome.stdout and "exact" in outcome.stdout


def test_default_format_is_csv_when_piped(gdpcli) -> None:
    outcome = gdpcli("convert", "gdp:mu=1", "--delta", "1e-5")
    assert outcome.stdout.startswith("delta,epsilon,guarantee,method,mu\n")


@pytest.mark.parametrize(
    "args",
    [
        ("convert", "gdp:mu=-1", "--delta", "1e-5"),
        ("convert", "gdp:nu=1", "--delta", "1e-5"),
        ("convert", "gdp:mu=1", "--delta", "2"),
        ("convert", "gdp:mu=1", "--delta", "0"),
        ("convert", "gdp:mu=1", "--epsilon", "abc"),
        ("convert", "gdp:mu=1", "--epsilon", "-1"),
        ("convert", "gdp:mu=1", "--epsilon", "0:1"),
        ("convert", "gdp:mu=1", "--epsilon", "1,,2"),
        ("convert", "gdp:mu=1", "--alpha", "1.5"),
        ("convert", "nope:mu=1", "--delta", "1e-5"),
        ("convert", "gdp:mu=1"),
        ("convert", "gdp:mu=1", "--to", "sigma"),
        ("convert", "gdp:mu=1", "--delta", "1e-5", "-f", "xml"),
        ("convert", "gdp:mu=1", "--group", "0", "--delta", "1e-5"),
        ("convert", "gdp:mu=1", "--no-such-option"),
        ("convert",),
        ("no-such-command",),
    ],
)
def test_bad_input_exits_2_with_one_line(gdpcli, args: tuple[str, ...]) -> None:
    one_line_error(gdpcli(*args), 2)


def test_reference_profile_values(gdpcli) -> None:
    for case in REFERENCE["gdp_delta_of_epsilon"]:
        row = one_row(
            gdpcli("convert", f"gdp:mu={case['mu']}", "--epsilon", str(case["epsilon"]), "-f", "json")
        )
        assert row["delta"] == pytest.approx(float(case["delta"]), rel=1e-9)


def _modules_after(args: list[str], roots: tuple[str, ...] = ("numpy", "scipy")) -> set[str]:
    """The modules under `roots` that a gdpcli run on args has imported."""
    code = (
        "import sys\n"
        "from gdpcli.cli.app import run\n"
        f"code = run({args!r})\n"
        f"heavy = sorted(m for m in sys.modules if m.startswith({roots!r}))\n"
        "print('MODULES:' + ','.join(heavy))\n"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    marker = completed.stdout.strip().splitlines()[-1]
    assert marker.startswith("MODULES:")
    return {m for m in marker.removeprefix("MODULES:").split(",") if m}


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["convert", "--help"]])
def test_version_and_help_import_neither_numpy_nor_scipy(args: list[str]) -> None:
    assert _modules_after(args) == set()


HEAVY = {"stats", "optimize", "spatial", "integrate", "fft", "linalg", "interpolate", "sparse"}


@pytest.mark.parametrize(
    "args",
    [
        ["convert", "gdp:mu=1", "--delta", "1e-5"],
        ["convert", "gaussian:sigma=2", "--epsilon", "1", "--alpha", "0.1"],
        ["compose", "gaussian:sigma=2x10", "gdp:mu=0.5", "--delta", "1e-5"],
        ["calibrate", "gaussian", "--epsilon", "1", "--delta", "1e-5"],
        # the other closed forms in the slow step: each is a Python start-up (0.6 s)
        *(
            pytest.param(args, marks=pytest.mark.slow)
            for args in (
                ["convert", "laplace:b=1", "--delta", "1e-5"],
                ["convert", "dp:eps=1,delta=1e-6", "--delta", "1e-5"],
                ["compose", "dp:eps=0.3x10", "--delta", "1e-5"],
                ["compose", "gdp:mu=1", "dp:eps=0,delta=0.01", "--delta", "0.02"],
                ["calibrate", "laplace", "--epsilon", "1"],
            )
        ),
    ],
)
def test_closed_form_paths_import_no_heavy_scipy(args: list[str]) -> None:
    """Closed forms need numpy and scipy.special only (start-up of the common paths)."""
    modules = _modules_after([*args, "-f", "csv"])
    loaded = {name.split(".")[1] for name in modules if name.startswith("scipy.")}
    assert not loaded & HEAVY, sorted(loaded & HEAVY)


def test_a_command_imports_only_its_own_module() -> None:
    """Start-up: a run builds only the command it names, and the plot module only for --plot."""
    modules = _modules_after(["convert", "gdp:mu=1", "--delta", "1e-5"], ("gdpcli.cli.",))
    commands = {"sgd", "compose", "subsample", "calibrate", "gdpt", "risk", "audit", "noisy_gd", "plot"}
    assert "gdpcli.cli.convert" in modules
    assert not {f"gdpcli.cli.{name}" for name in commands} & modules


def test_real_subprocess_and_python_m() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "gdpcli", "convert", "gdp:mu=1", "--delta", "1e-5", "-f", "csv"],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0
    # full precision in CSV: the upper bound, within 1e-13 of the exact 4.37717809568122460859...
    assert safe_side_of(
        "4.3771780956812246086", float(completed.stdout.splitlines()[1].split(",")[1]), "above", 1e-13
    )
    bad = subprocess.run(
        [sys.executable, "-m", "gdpcli", "convert", "gdp:mu=-1", "--delta", "1e-5"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_group_of_laplace_is_the_closed_form(gdpcli) -> None:
    """Two Laplace(b=1) neighbours apart = Laplace with eps0 = 2: delta(1) = 1 - e^{(1 - 2)/2} exactly."""
    document = gdpcli(
        "convert", "laplace:b=1", "--group", "2", "--epsilon", "1", "--alpha", "0.3", "-f", "json"
    )
    assert document.code == 0, document.stderr
    rows = document.json()["rows"]
    [delta] = [r for r in rows if "delta" in r]
    assert delta["guarantee"] == "exact"
    assert delta["delta"] == pytest.approx(1 - math.exp(-0.5), rel=1e-12)
    [beta] = [r for r in rows if "beta" in r]
    # Laplace trade-off at eps0 = 2, alpha = 0.3 in the middle piece: e^{-2} / (4 alpha)
    assert beta["beta"] == pytest.approx(math.exp(-2) / 1.2, rel=1e-12)
    assert beta["guarantee"] == "exact"


def test_version_needs_only_the_package() -> None:
    """`--version` is answered before typer is imported (it works even where typer is missing)."""
    code = (
        "import sys\nsys.argv = ['gdpcli', '--version']\nfrom gdpcli.__main__ import main\nmain()\n"
        "print('typer' in sys.modules)"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.splitlines() == ["gdpcli 0.1.0", "False"]


@pytest.mark.parametrize("group", [30, 1_000_000])
def test_group_of_laplace_is_laplace_at_group_sensitivity(gdpcli, group: int) -> None:
    """The spec laplace:b=1 --group 30 printed upper bound inf (the general Thm 3 bound on a grid) and
    --group 1000000 ran without end. A group of k moves the query by k: Laplace with eps0 = k, whose
    delta(eps) = 1 - exp((eps - eps0) / 2) below eps0 gives eps = k + 2 log(1 - delta) (mpmath)."""
    import mpmath as mp

    outcome = gdpcli("convert", "laplace:b=1", "--group", str(group), "--delta", "1e-5", "-f", "json")
    assert outcome.code == 0, outcome.stderr
    (row,) = outcome.json()["rows"]
    with mp.workdps(40):
        exact = mp.mpf(group) + 2 * mp.log(1 - mp.mpf("1e-5"))
        assert row["guarantee"] == "exact"
        assert row["epsilon"] == pytest.approx(float(exact), rel=1e-12)


def test_general_group_bound_has_a_stated_limit(gdpcli) -> None:
    outcome = gdpcli("convert", "dp:eps=1", "--group", "1000000", "--delta", "1e-5")
    assert outcome.code == 2
    assert "--group 1000000 is above 10,000" in outcome.stderr and "\n" == outcome.stderr[-1]


def test_lemma2_when_the_minimiser_is_below_the_paper_grid(gdpcli) -> None:
    """The best order of 1000 x Gaussian(sigma 0.1) at delta 5e-4 is about 1.01, below the paper's
    first grid order 1.5, and lemma2 failed with argmin of an empty sequence. It now uses the nearest grid
    order: an upper bound, never below the continuous Lemma 1 minimum nor the exact GDP epsilon."""
    import mpmath as mp

    run = ("convert", "gaussian:sigma=0.1x1000", "--delta", "5e-4", "-f", "json")
    outcome = gdpcli(*run, "--method", "lemma2")
    assert outcome.code == 0, outcome.stderr
    (row,) = outcome.json()["rows"]
    (lemma1,) = gdpcli(*run, "--method", "rdp", "--conversion", "lemma1").json()["rows"]
    with mp.workdps(30):
        mu = 10 * mp.sqrt(1000)  # 1000 x G_10

        def delta(eps: mp.mpf) -> mp.mpf:
            return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2) - mp.mpf("5e-4")

        exact = mp.findroot(delta, (mp.mpf(40000), mp.mpf(60000)), solver="bisect")
        assert (row["guarantee"], row["order"]) == ("upper_bound", pytest.approx(1.499995))
        assert row["epsilon"] >= lemma1["epsilon"] >= float(exact)


def test_a_discrete_gaussian_too_narrow_for_the_pld_is_refused_without_warnings(gdpcli) -> None:
    """sigma 1e-5: the profile's table leaves nan where logaddexp met inf - inf, which numpy warned about on
    stderr (a fuzz walk found it); the refusal itself stands: one line, exit 1, no warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = gdpcli("convert", "dgauss:sigma=1e-5,p=0.01x2", "--epsilon", "0", "--method", "pld")
    assert outcome.code == 1 and outcome.stderr.count("\n") == 1 and not caught
