"""core.binomial: Loader's binomial pmf against mpmath (the binomial accountant's masses)."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from gdpcli.core.binomial import binomial_pmf


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 100, 3000])
@pytest.mark.parametrize("p", [0.5, 0.75, 0.9, 0.999, 0.6224593312018546])
def test_pmf_against_mpmath(n: int, p: float) -> None:
    """Relative error <= 1e-12 at every k where the probability is above 1e-250 (mpmath at 40 digits,
    with q = 1 - p taken exactly from the float p); the masses sum to 1."""
    pmf = binomial_pmf(n, p, float(1 - mp.mpf(p)))
    ks = range(n + 1) if n <= 100 else np.linspace(0, n, 301).astype(int)
    with mp.workdps(40):
        for k in ks:
            true = mp.binomial(n, int(k)) * mp.mpf(p) ** int(k) * (1 - mp.mpf(p)) ** (n - int(k))
            if true > mp.mpf("1e-250"):
                assert abs(mp.mpf(float(pmf[k])) - true) <= 1e-12 * true, (n, p, k)
    assert float(np.sum(pmf)) == pytest.approx(1.0, abs=1e-13)


def test_a_million_trials_are_fast_and_normalized() -> None:
    pmf = binomial_pmf(10**6, 0.6, 0.4)
    assert pmf.size == 10**6 + 1 and float(np.sum(pmf)) == pytest.approx(1.0, abs=1e-12)
    assert int(np.argmax(pmf)) == 600_000
