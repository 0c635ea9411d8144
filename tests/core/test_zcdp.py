"""zCDP curves and the Renyi divergence of a trade-off function (gdpcli.core.zcdp), against mpmath."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from gdpcli.core import gdp, rdp, zcdp
from gdpcli.core.tradeoff import laplace_tradeoff
from gdpcli.errors import InputError

ORDERS = np.array([1.5, 2.0, 3.0])


def test_zcdp_curve_is_affine() -> None:
    assert zcdp.rdp(np.array([2.0, 10.0]), 0.1, 0.05) == pytest.approx([0.25, 1.05], rel=1e-15)
    with pytest.raises(InputError):
        zcdp.rdp(1.0, 0.1)


def test_gaussian_rho_is_exact() -> None:
    """[BS16] Prop. 1.6: N(0, sigma^2) on a sensitivity-s query is s^2 / (2 sigma^2)-zCDP."""
    assert zcdp.gaussian_rho(4.0) == 1 / 32
    assert zcdp.gaussian_rho(2.0, 3.0) == pytest.approx(9 / 8, rel=1e-15)


@pytest.mark.parametrize(("rho", "delta"), [(0.5, 1e-5), (0.01, 1e-10), (2.0, 0.1)])
def test_classic_conversion_closed_form(rho: float, delta: float) -> None:
    """rho + 2 sqrt(rho log(1/delta)) (mpmath) = Mironov's conversion minimised over the order."""
    expected = rho + 2 * mpmath.sqrt(rho * mpmath.log(1 / mpmath.mpf(delta)))
    assert zcdp.classic_epsilon(rho, delta) == pytest.approx(float(expected), rel=1e-14)
    searched = rdp.epsilon_from_curve(lambda a: zcdp.rdp(a, rho), delta, "classic").value
    assert searched == pytest.approx(float(expected), rel=1e-9)
    assert searched >= float(expected) * (1 - 1e-12)


@pytest.mark.parametrize("mu", [0.5, 1.0])
def test_gaussian_rdp_by_the_tradeoff_route(mu: float) -> None:
    """d_gamma(G_mu) = gamma mu^2 / 2 (mpmath: 1/(g-1) log int_0^1 |G_mu'|^(1-g) dx, by quadrature in z)."""

    def d(g: float) -> float:
        integrand = lambda z: mpmath.npdf(z) * mpmath.exp((1 - g) * (mu * z - mu * mu / 2))  # noqa: E731
        return float(mpmath.log(mpmath.quad(integrand, [-mpmath.inf, 0, mpmath.inf])) / (g - 1))

    values = zcdp.rdp_from_tradeoff(lambda a: gdp.tradeoff(a, mu), ORDERS)
    expected = [d(g) for g in ORDERS]
    assert expected == pytest.approx(ORDERS * mu * mu / 2, rel=1e-12)
    assert values == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_laplace_rdp_by_the_tradeoff_route(eps: float) -> None:
    """Mironov 2017 Table II, in mpmath, against the quadrature of T(Lap(0,1), Lap(eps,1))."""
    orders = np.array([1.5, 2.0, 8.0, 32.0])

    def closed(a: float) -> float:
        a, e = mpmath.mpf(a), mpmath.mpf(eps)
        inner = a / (2 * a - 1) * mpmath.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mpmath.exp(-a * e)
        return float(mpmath.log(inner) / (a - 1))

    values = zcdp.rdp_from_tradeoff(lambda a: laplace_tradeoff(a, eps), orders)
    assert values == pytest.approx([closed(a) for a in orders], rel=1e-6)


def test_an_atom_gives_infinite_divergence() -> None:
    from gdpcli.core.tradeoff import eps_delta_tradeoff

    values = zcdp.rdp_from_tradeoff(lambda a: eps_delta_tradeoff(a, 1.0, 1e-6), ORDERS)
    assert np.all(np.isinf(values))


def test_smallest_rho() -> None:
    assert zcdp.smallest_rho([2.0, 4.0], [0.2, 1.0]) == 0.25
