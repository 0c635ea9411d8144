"""Shuffled reports at large n: bounded memory, and the bounds stay on their safe side where the clone pair's
mixture is coarsened (upper bound) or the randomized-response pair's binomial is truncated (lower bound).

References are plain float64 sums over every (c, k) with scipy's binomial pmf, at deltas far above their
rounding (no cancellation: every term is a positive part)."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from gdpcli.core import shuffle_model
from gdpcli.core.shuffle_model import CloneReduction, ShuffledRR
from gdpcli.errors import ComputationError


def _clone_profile_by_full_sum(n: int, eps0: float, eps: float) -> float:
    """delta(eps) of the [FMT23] clone pair (q = 2 / (e + 1)): sum_c w_c sum_k (P_c(k) - e^eps Q_c(k))_+."""
    e = math.exp(eps0)
    c = np.arange(n)[:, None]
    k = np.arange(n + 1)[None, :]
    weights = stats.binom.pmf(c, n - 1, 2.0 / (e + 1.0))
    below, at = stats.binom.pmf(k - 1, c, 0.5), stats.binom.pmf(k, c, 0.5)
    keep = e / (e + 1.0)
    p_c, q_c = keep * below + (1 - keep) * at, (1 - keep) * below + keep * at
    return float(np.sum(weights * np.maximum(p_c - math.exp(eps) * q_c, 0.0)))


def test_coarsened_mixture_stays_an_upper_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a term budget far below the window (n = 400: 292 counts c times 213 k), runs of 4 counts c are
    summed at their first c: above the full sum, by 1 %, 5 % and 17 % at eps 0.05, 0.2 and 0.4 (coarsening
    is for large n, where a run is a small part of the spread of c)."""
    monkeypatch.setattr(shuffle_model, "_MAX_CELLS", 2**14)
    pair = CloneReduction(1.0, 400)
    assert pair._weights.counts.size < 100 < pair._weights.summed  # coarsened
    for eps, slack in ((0.05, 0.02), (0.2, 0.1), (0.4, 0.3)):
        plain = _clone_profile_by_full_sum(400, 1.0, eps)
        assert plain <= pair.profile(eps) <= plain * (1 + slack)


def test_uncoarsened_mixture_matches_the_full_sum() -> None:
    pair = CloneReduction(1.0, 400)
    assert pair._weights.counts.size == pair._weights.summed
    for eps in (0.05, 0.2, 0.4):
        plain = _clone_profile_by_full_sum(400, 1.0, eps)
        assert plain <= pair.profile(eps) <= plain * (1 + 1e-9)


def test_truncated_rr_pair_stays_a_lower_bound() -> None:
    """n = 3000: the randomized-response tables keep 1226 counts of 3001; the profile in each direction is
    at most the full sum and within 1e-8 of it (the lgamma margin takes 2e-9 off)."""
    n, eps0 = 3000, 1.0
    pair = ShuffledRR(eps0, n)
    assert pair._tables[0].width < n + 1
    e, y = math.exp(eps0), np.arange(n + 1)
    under_d0 = stats.binom.pmf(y, n, 1.0 / (e + 1.0))
    under_d1 = under_d0 * (e * e * y + n - y) / (e * n)
    for eps in (0.02, 0.1, 0.2):
        x = math.exp(eps)
        remove = float(np.sum(np.maximum(under_d0 - x * under_d1, 0.0)))
        add = float(np.sum(np.maximum(under_d1 - x * under_d0, 0.0)))
        assert remove * (1 - 1e-8) <= pair.remove_profile(eps) <= remove
        assert add * (1 - 1e-8) <= pair.add_profile(eps) <= add


def test_coarsened_rdp_stays_above_the_full_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Renyi moments M_c are non-increasing in c too: coarsened runs give a larger D_alpha, still at most
    eps0 (the pair is eps0-DP)."""
    orders = np.array([2.0, 10.0])
    full = CloneReduction(1.0, 400).rdp(orders)
    monkeypatch.setattr(shuffle_model, "_MAX_CELLS", 2**14)
    coarse = CloneReduction(1.0, 400).rdp(orders)
    assert np.all(full < coarse) and np.all(coarse <= 1.0)


def test_more_users_than_the_sums_resolve_is_refused_before_any_work() -> None:
    with pytest.raises(ComputationError, match="n=2e\\+09"):
        CloneReduction(1.0, 2 * 10**9)
    with pytest.raises(ComputationError, match="n=2e\\+09"):
        ShuffledRR(1.0, 2 * 10**9)


def test_cli_refuses_too_many_users_in_one_line(gdpcli) -> None:
    outcome = gdpcli("convert", "shuffle:eps0=1,n=2000000000", "--delta", "1e-6", "-f", "csv")
    assert outcome.code == 1 and outcome.stdout == ""
    assert outcome.stderr.startswith("gdpcli: error: shuffle: n=2e+09") and outcome.stderr.count("\n") == 1


_PEAK = """
import resource, subprocess, sys
run = subprocess.run([sys.executable, "-m", "gdpcli", *sys.argv[1:]], capture_output=True, text=True)
sys.stdout.write(run.stdout)
print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("spec", "basic"),
    [
        ("shuffle:eps0=0.02007,n=491681,times=458", 0.02007 * 458),  # took 48 s and 4 GB before
        ("shuffle-rr:eps0=1,n=30000000,times=100", 100.0),
        ("shuffle:eps0=1,n=1000000000", 1.0),
    ],
)
def test_large_shuffles_answer_within_2_gb(spec: str, basic: float) -> None:
    """Peak resident memory of a fresh process (ru_maxrss of its only child, in KiB on Linux); the upper
    bound lies below basic composition of the eps0-DP reports (times x eps0)."""
    if sys.platform != "linux":
        pytest.skip("ru_maxrss is in KiB on Linux only")
    args = ["convert", spec, "--delta", "1e-6", "-f", "csv"]
    run = subprocess.run([sys.executable, "-c", _PEAK, *args], capture_output=True, text=True, check=True)
    *rows, status = run.stdout.strip().splitlines()
    code, peak_kib = (int(word) for word in status.split())
    assert code == 0, run.stdout
    assert peak_kib < 2 * 1024 * 1024, f"{spec}: {peak_kib / 1024:.0f} MiB"
    upper = [
        float(row.split(",")[1]) for row in rows if row.endswith("upper_bound,pld") or ",upper_bound," in row
    ]
    assert upper and 0.0 < upper[0] < basic
