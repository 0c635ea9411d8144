"""gdpcli.core.last_iterate: BSA24's last-iterate bounds against 50-digit mpmath, the interpolation time,
the linear-Gaussian dynamics that attain (full batch) or sit below (cyclic) them, and GDP composition."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from gdpcli.core import gdp
from gdpcli.core import last_iterate as li
from tests.conftest import safe_side_of

# Review Table 1 / BSA24 Table 1 (the authors' table_acc_lr.py): eta 0.05, L2 penalty m = 0.002, 40 cyclic
# batches of 1500, per-example gradients clipped at L = 5, noise std sigma = 0.01 on the mean gradient.
TABLE1 = {"step_mu": 2 * 5 / (1500 * 0.01), "gap": li.contraction_gap(0.05, 0.002, 32.502), "batches": 40}
# Recipe (mp.mp.dps = 50, every input the exact binary value of its float):
#   c = 1 - mpf(0.05) * mpf(0.002); s = 2 * mpf(5) / (mpf(1500) * mpf(0.01)); C = c**40; E = 50
#   s * sqrt(1 + c**78 * (1 - c**2) / (1 - C)**2 * (1 - C**49) / (1 + C**49))
MU_TABLE1_E50 = "0.99249139689823047209129742204694938283858396903439"
#   rho = s**2 / 2 * (1 + c**38 * (1 - c**2) * (1 - C**49) / (1 - C)**2)   (the authors' RDP bound)
RHO_TABLE1_E50 = "0.71667912501567920884862834752429145826913565209442"
# Full batch, eta 0.1, m 0.5, M 1, L 1, n 1000, sigma 0.02, T 200: c = 1 - mpf(0.1) * mpf(0.5),
#   s = 2 / (1000 * mpf(0.02)); s * sqrt((1 + c) / (1 - c) * (1 - c**200) / (1 + c**200))
MU_FULL = "0.62447790984042824116396763371443788763202088774931"
FULL = {"step_mu": 2 * 1 / (1000 * 0.02), "gap": li.contraction_gap(0.1, 0.5, 1.0), "steps": 200}


def test_cyclic_mu_against_mpmath() -> None:
    mu = li.cyclic_mu(TABLE1["step_mu"], TABLE1["gap"], 40, 50)
    assert safe_side_of(MU_TABLE1_E50, mu, "above", rel=2e-12)


def test_full_batch_mu_against_mpmath() -> None:
    mu = li.full_batch_mu(FULL["step_mu"], FULL["gap"], FULL["steps"])
    assert safe_side_of(MU_FULL, mu, "above", rel=2e-12)


def test_rdp_rho_against_mpmath() -> None:
    rho = li.cyclic_rdp_rho(TABLE1["step_mu"], TABLE1["gap"], 40, 50)
    assert safe_side_of(RHO_TABLE1_E50, rho, "above", rel=2e-12)


@pytest.mark.parametrize(
    ("step_size", "m", "big_m", "exact"),
    [(0.05, 0.002, 32.502, "eta m"), (0.1, 0.5, 1.0, "eta m"), (1.5, 0.5, 1.0, "2 - eta M")],
)
def test_contraction_gap_is_exact_rounded_down(step_size: float, m: float, big_m: float, exact: str) -> None:
    """1 - c = min(eta m, 2 - eta M) of the exact binary inputs, one float below (the safe side)."""
    with mp.workdps(50):
        eta = mp.mpf(step_size)
        truth = min(eta * mp.mpf(m), 2 - eta * mp.mpf(big_m))
        assert truth == (eta * mp.mpf(m) if exact == "eta m" else 2 - eta * mp.mpf(big_m))
        gap = li.contraction_gap(step_size, m, big_m)
        assert mp.mpf(gap) < truth <= mp.mpf(math.nextafter(math.nextafter(gap, 1.0), 1.0))


@pytest.mark.parametrize("epochs", [1, 2, 50, 200])
def test_cyclic_tau_zero_is_optimal_and_the_closed_form(epochs: int) -> None:
    """The family grows with tau; tau = 0 is BSA24 Thm 4.5 as the authors compute it, and the last tau is the
    contraction bound step_mu sum_{e < E} c^{l e}."""
    s, gap, batches = TABLE1["step_mu"], TABLE1["gap"], TABLE1["batches"]
    taus = np.arange(epochs)
    family = np.atleast_1d(li.cyclic_mu(s, gap, batches, epochs, taus))
    assert np.all(np.diff(family) >= 0) and li.best_tau(family, taus) == (family[0], 0)
    c = 1.0 - gap
    big_c, tail = c**batches, c ** (batches * (epochs - 1))
    authors = s * math.sqrt(
        1 + c ** (2 * batches - 2) * (1 - c**2) / (1 - big_c) ** 2 * (1 - tail) / (1 + tail)
    )
    assert family[0] == pytest.approx(authors, rel=1e-9)
    assert family[-1] == pytest.approx(s * sum(big_c**e for e in range(epochs)), rel=2e-12)


def test_full_batch_tau_family() -> None:
    s, gap, steps = FULL["step_mu"], FULL["gap"], FULL["steps"]
    taus = np.arange(steps)
    family = li.full_batch_mu(s, gap, steps, taus)
    assert np.all(np.diff(family) >= 0) and li.best_tau(family, taus)[1] == 0
    c = 1.0 - gap
    assert family[-1] == pytest.approx(s * sum(c**i for i in range(steps)), rel=2e-12)
    scalars = [li.full_batch_mu(s, gap, steps, int(t)) for t in taus[::37]]
    assert np.array_equal(family[::37], scalars)


def _linear_gaussian_mu(c: mp.mpf, step_mu: mp.mpf, sensitive: list[int], steps: int) -> mp.mpf:
    """mu of the last iterate of theta_k = c theta_{k-1} - eta g_k + N(0, (eta sigma)^2) when the neighbour
    shifts g_k by its sensitivity at the sensitive steps: Gaussian, mean shift over std (GDP paper Thm 1)."""
    shift = step_mu * mp.fsum(c ** (steps - k) for k in sensitive)
    return shift / mp.sqrt(mp.fsum(c ** (2 * (steps - k)) for k in range(1, steps + 1)))


def test_full_batch_bound_is_attained_by_linear_gaussian_dynamics() -> None:
    """Independent route: the explicit sums of the linear-Gaussian run equal the closed form (tightness)."""
    with mp.workdps(50):
        steps = FULL["steps"]
        c = 1 - mp.mpf(0.1) * mp.mpf(0.5)
        exact = _linear_gaussian_mu(c, 2 / (1000 * mp.mpf(0.02)), list(range(1, steps + 1)), steps)
        mu = li.full_batch_mu(FULL["step_mu"], FULL["gap"], steps)
        assert safe_side_of(mp.nstr(exact, 40), mu, "above", 2e-12)


def test_cyclic_bound_is_above_every_linear_gaussian_position() -> None:
    """The cyclic bound (E = 5, l = 4, c = 0.9) is no smaller than the linear-Gaussian run's mu wherever the
    differing example's batch sits in the epoch (the last place is the worst)."""
    with mp.workdps(30):
        epochs, batches, gap = 5, 4, li.contraction_gap(0.1, 1.0, 2.0)
        c, s, steps = 1 - mp.mpf(gap), mp.mpf(1), epochs * batches
        instance = [
            _linear_gaussian_mu(c, s, [e * batches + j for e in range(epochs)], steps)
            for j in range(1, batches + 1)
        ]
        assert max(instance) == instance[-1] < li.cyclic_mu(1.0, gap, batches, epochs)


def test_composition_against_gdp_closed_form() -> None:
    """All iterates: step_mu sqrt(E) (GDP paper Cor. 2); its epsilon at 1e-5 meets delta(eps; mu) <= 1e-5
    by 60-digit mpmath (Cor. 1): Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    mu = li.composition_mu(TABLE1["step_mu"], 50)
    with mp.workdps(60):
        assert safe_side_of(mp.nstr(mp.mpf(2) / 3 * mp.sqrt(50), 40), mu, "above", 2e-12)
        eps = gdp.epsilon(1e-5, mu)
        m, e = mp.mpf(mu), mp.mpf(eps)
        delta = mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)
        assert mp.mpf("1e-5") * (1 - mp.mpf("1e-9")) <= delta <= mp.mpf("1e-5")
        assert round(eps, 2) == 30.51


def test_tau_grid_keeps_the_ends() -> None:
    assert list(li.tau_grid(3)) == [0, 1, 2, 3]
    grid = li.tau_grid(10**9)
    assert grid[0] == 0 and grid[-1] == 10**9 and grid.size <= 4096


def test_bounds_grow_with_the_contraction_factor() -> None:
    """Rounding the gap 1 - c down is the safe side: no bound grows with the gap."""
    gaps = np.geomspace(1e-6, 0.9, 60)
    for bound in (
        lambda g: li.cyclic_mu(0.5, g, 40, 50),
        lambda g: li.cyclic_rdp_rho(0.5, g, 40, 50),
        lambda g: li.full_batch_mu(0.5, g, 200),
    ):
        values = np.array([bound(g) for g in gaps])
        assert np.all(np.diff(values) <= 0)


@pytest.mark.parametrize("gap", [0.0, 1e-300, 1e-200])
def test_the_rdp_rho_at_a_vanishing_gap_is_its_limit(gap: float) -> None:
    """As c = 1 - gap -> 1 the RDP rho tends to step_mu^2 / 2 (1 + 2 (E - 1) / l) ((1 - c^2) ~ 2 gap,
    (1 - c^{l(E-1)}) ~ l (E - 1) gap, (1 - c^l)^2 ~ l^2 gap^2); at a gap of 1e-300 the square underflowed
    and the rho was 0 / 0 (a fuzz walk's noisy-gd with strong convexity 1e-300)."""
    limit = 0.5 * 0.5**2 * (1.0 + 2.0 * 49 / 40) * (1.0 + li.MU_ROUND_UP)
    assert li.cyclic_rdp_rho(0.5, gap, 40, 50) == pytest.approx(limit, rel=1e-12)
    assert li.cyclic_rdp_rho(0.5, 1e-6, 40, 50) <= li.cyclic_rdp_rho(0.5, gap, 40, 50)
