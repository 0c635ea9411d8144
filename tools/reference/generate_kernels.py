"""Reference values for the numerics kernels, computed with mpmath at 60 digits or more (issue 11, item 2).

    python tools/reference/generate_kernels.py        # from the repository root; rewrites tests/data/kernels/

Reproducible: a fixed seed, and nothing here imports gdpcli (about two minutes on one core). The tests
(tests/core/test_kernel_accuracy.py) read only the files written here.

Inputs are float64 and written with repr, so they are exact; every true value is the mpmath value of the
formula at exactly those inputs, written with 20 significant digits (values below the float range too:
they parse to 0.0, the text says whether the true value is positive). Inputs are drawn over every order of
magnitude the kernels promise, log-uniform where a range spans decades, plus edge points and the places
where a formula cancels:

- mu in [1e-8, 40]; epsilon in [0, 1e3]; delta in [1e-300, 0.5]; alpha in [1e-300, 1];
- gdp_delta also in (mu, x) coordinates, x = eps/mu - mu/2 uniform up to 38.6, so that delta itself spans
  1 ... 1e-320 (the kernel's tail); near a = 0 (eps = mu^2/2, where the kernel switches form); eps = 0;
- gdp_epsilon near delta(0; mu), where eps -> 0 and the problem is ill-conditioned (kappa up to 1e14);
- closed forms: epsilon0 in [1e-8, 1e3] (and 0), delta0 in {0} + [1e-300, 0.5], alpha at the kinks
  (1 - delta0)/(1 + e^eps0) and e^-eps0/2, near 1 - delta0 and 1, eps near eps0.

Precision is checked, not assumed: gdp_delta is evaluated at two working precisions (60 + the digits the
difference Phi(a) - e^eps Phi(b) can cancel, and 25 more) and raised until both agree to 1e-50 relative.
Inverses (epsilon(delta; mu), mu(eps, delta)) are found by bisection on a bracket whose sign change is
checked, to 1e-45 relative, and the root is checked: |delta(root) - target| <= 1e-35 target.

For the inverses the relative condition number kappa of the problem at the point is stored: a kernel that
evaluates delta to a relative backward error e can only place the root to about e * kappa.
  epsilon(delta; mu):  kappa = |delta / (eps d delta/d eps)|,  d delta/d eps = -e^eps Phi(-eps/mu - mu/2)
  mu(eps, delta):      kappa = |delta / (mu d delta/d mu)|,    d delta/d mu = phi(-eps/mu + mu/2)
eps_delta_tradeoff stores kappa = max(1, eps0) |E d beta/dE| / beta, E = e^eps0, the amplification of the
one rounding a double-precision evaluation cannot avoid (of e^eps0); about eps0 e^eps0 at the kink, where
the steep piece 1 - delta0 - e^eps0 alpha cancels.

Formulas (GDP paper Cor. 1, Def. 2, eq. (4); Laplace: GDP paper Sec. 2.5):
  delta(eps; mu)     = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)
  G_mu(alpha)        = Phi(Phi^-1(1 - alpha) - mu) = Phi(-Phi^-1(alpha) - mu)
  f_{e,d}(alpha)     = max(0, 1 - d - e^e alpha, e^-e (1 - d - alpha))
  eps-delta profile  = d + (1 - d) max(0, e^e - e^eps) / (1 + e^e)        (eps >= 0)
  Laplace f(alpha)   = 1 - e^e alpha (alpha < e^-e/2), e^-e / (4 alpha) (<= 1/2), e^-e (1 - alpha)
  Laplace profile    = max(0, 1 - e^{(eps - e)/2})                          (eps >= 0)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import mpmath as mp
import numpy as np

mp.mp.dps = 60
OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "kernels"
RNG = np.random.default_rng(20261124)
MU_RANGE = (1e-8, 40.0)
EPS_MAX = 1e3
DELTA_RANGE = (1e-300, 0.5)
TINY = 5e-324  # the smallest subnormal


def log_uniform(lo: float, hi: float, size: int) -> np.ndarray:
    return 10.0 ** RNG.uniform(math.log10(lo), math.log10(hi), size)


def text(value: mp.mpf) -> str:
    """20 significant digits (enough for a float64 reference); '0' for zero."""
    return "0" if value == 0 else mp.nstr(value, 20, min_fixed=1, max_fixed=0)


# --- GDP -------------------------------------------------------------------------------------------------


def _delta_at(eps: mp.mpf, mu: mp.mpf, dps: int) -> mp.mpf:
    with mp.workdps(dps):
        a = -eps / mu + mu / 2
        return +(mp.ncdf(a) - mp.exp(eps) * mp.ncdf(a - mu))


def _extra_digits(mu: mp.mpf) -> int:
    """Digits the difference can cancel, and 10 more: the two terms agree to about mu/(x + mu) relative
    (x = eps/mu - mu/2 <= 1e11 here), i.e. to at most 11 - log10(mu) digits."""
    return 20 + max(0, int(-mp.log10(mu)))


def gdp_delta(eps: float | mp.mpf, mu: float | mp.mpf) -> mp.mpf:
    """delta(eps; mu) to 60 digits, checked: two working precisions must agree to 1e-50 relative."""
    eps, mu = mp.mpf(eps), mp.mpf(mu)
    extra = _extra_digits(mu)
    for _ in range(10):
        low = _delta_at(eps, mu, mp.mp.dps + extra)
        high = _delta_at(eps, mu, mp.mp.dps + extra + 25)
        if (high == 0 and low == 0) or (high != 0 and abs(low - high) <= mp.mpf("1e-50") * abs(high)):
            return high
        extra += 40
    raise ArithmeticError(f"delta({eps}; {mu}) did not settle")


def gdp_delta_fast(eps: mp.mpf, mu: mp.mpf) -> mp.mpf:
    """delta(eps; mu) at one working precision (the start of gdp_delta's), for the root finders' many
    steps; each root is checked with gdp_delta."""
    return _delta_at(eps, mu, mp.mp.dps + _extra_digits(mu))


def bisect(f: Callable[[mp.mpf], mp.mpf], lo: mp.mpf, hi: mp.mpf) -> mp.mpf:
    """The root of f on [lo, hi], whose sign change is checked first, by bisection to 1e-45 relative
    (geometric while the bracket spans more than a factor 4): slow, simple, certain."""
    f_lo, f_hi = f(lo), f(hi)
    if not lo < hi or (f_lo > 0) == (f_hi > 0):
        raise ValueError(f"no sign change on [{lo}, {hi}]")
    for _ in range(5000):
        middle = mp.sqrt(lo * hi) if lo > 0 and hi > 4 * lo else (lo + hi) / 2
        if hi - lo <= mp.mpf("1e-45") * abs(middle):
            break
        f_middle = f(middle)
        if (f_middle > 0) == (f_lo > 0):
            lo, f_lo = middle, f_middle
        else:
            hi = middle
    return (lo + hi) / 2


def check_root(value: mp.mpf, target: mp.mpf, what: str) -> None:
    if abs(value - target) > mp.mpf("1e-35") * target:
        raise ArithmeticError(f"{what}: residual {value - target} at target {target}")


def normal_quantile(p: mp.mpf) -> mp.mpf:
    """Phi^-1(p) for p in (0, 1): mpmath's erfinv where p is not tiny, bisection on log Phi below."""
    if p > mp.mpf("1e-20"):
        return mp.sqrt(2) * mp.erfinv(2 * p - 1)
    target = mp.log(p)
    return bisect(lambda x: mp.log(mp.ncdf(x)) - target, mp.mpf(-40), mp.mpf(-9))


def delta_rows() -> list[list]:
    """(eps, mu) -> delta(eps; mu)."""
    n = 500
    mus = [
        log_uniform(*MU_RANGE, n),  # raw (eps, mu): eps log-uniform, 5 % zero
        log_uniform(*MU_RANGE, n),  # (mu, x): delta spans every magnitude
        log_uniform(*MU_RANGE, 300),  # near a = 0, i.e. eps = mu^2/2
        log_uniform(*MU_RANGE, 150),  # eps = 0
    ]
    eps_raw = np.where(RNG.random(n) < 0.05, 0.0, log_uniform(1e-12, EPS_MAX, n))
    x = RNG.uniform(0, 38.6, n)
    eps_x = mus[1] * (x + 0.5 * mus[1])
    signs = RNG.choice([-1.0, 1.0], 300)
    eps_a0 = 0.5 * mus[2] ** 2 * (1.0 + signs * 10.0 ** -RNG.uniform(0, 17, 300))
    pairs = (
        list(zip(eps_raw, mus[0], strict=True))
        + list(zip(eps_x, mus[1], strict=True))
        + list(zip(eps_a0, mus[2], strict=True))
    )
    pairs += [(0.0, m) for m in mus[3]]
    for m in (1e-8, 1e-4, 0.5, 1.0, 2.0, 40.0):  # edges
        pairs += [(0.0, m), (1e-12, m), (0.5 * m * m, m), (np.nextafter(0.5 * m * m, 1), m), (1.0, m)]
        pairs += [(EPS_MAX, m), (m * (37.5 + 0.5 * m), m), (m * (38.5 + 0.5 * m), m)]
    rows = []
    for eps, mu in pairs:
        eps, mu = float(eps), float(mu)
        if 0.0 <= eps <= EPS_MAX:
            rows.append([eps, mu, text(gdp_delta(eps, mu))])
    return rows


def tradeoff_rows() -> list[list]:
    """(alpha, mu) -> G_mu(alpha)."""
    alphas = np.concatenate(
        [log_uniform(1e-300, 1, 700), 1 - log_uniform(1.1e-16, 0.5, 200), RNG.uniform(0, 1, 100)]
    )
    mus = log_uniform(*MU_RANGE, alphas.size)
    pairs = list(zip(alphas, mus, strict=True))
    for m in (1e-8, 1.0, 40.0):
        pairs += [(a, m) for a in (0.0, TINY, 1e-300, 1e-20, 0.5, 0.75, 1 - 2**-53, 1.0)]
    rows = []
    for alpha, mu in pairs:
        a = mp.mpf(float(alpha))
        value = mp.mpf(1) if a == 0 else mp.mpf(0) if a == 1 else mp.ncdf(-normal_quantile(a) - mp.mpf(mu))
        rows.append([float(alpha), float(mu), text(value)])
    return rows


def epsilon_rows() -> list[list]:
    """(delta, mu) -> the smallest eps >= 0 with delta(eps; mu) <= delta, and kappa (0 where eps = 0)."""
    n = 800
    mus = log_uniform(*MU_RANGE, n)
    deltas = log_uniform(*DELTA_RANGE, n)
    near = RNG.random(n) < 0.2  # ill-conditioned: delta just below delta(0; mu), eps near 0
    for i in np.flatnonzero(near):
        deltas[i] = float(gdp_delta(0, mus[i]) * (1 - mp.mpf(10) ** -RNG.uniform(1, 14)))
    pairs = list(zip(deltas, mus, strict=True))
    for m in (1e-8, 1e-3, 1.0, 40.0):  # edges, and delta at delta(0; mu) (eps = 0 or nearly)
        at_zero = gdp_delta(0, m)
        pairs += [(1e-300, m), (0.5, m), (float(at_zero), m), (float(at_zero * (1 + mp.mpf("1e-10"))), m)]
    rows = []
    for delta, mu in pairs:
        d, m = mp.mpf(float(delta)), mp.mpf(float(mu))
        if gdp_delta(0, m) <= d:
            rows.append([float(delta), float(mu), "0", "0"])
            continue
        hi = m * (m / 2 - normal_quantile(d)) + 1  # Phi(a) <= delta there, so delta(hi) < delta
        eps = bisect(lambda e, m=m, d=d: gdp_delta_fast(e, m) - d, mp.mpf(0), hi)
        check_root(gdp_delta(eps, m), d, f"epsilon({delta}, {mu})")
        slope = mp.exp(eps) * mp.ncdf(-eps / m - m / 2)
        rows.append([float(delta), float(mu), text(eps), text(d / (eps * slope))])
    return rows


def mu_rows() -> list[list]:
    """(eps, delta) -> the largest mu with delta(eps; mu) <= delta, and kappa."""
    n = 800
    epsilons = np.where(RNG.random(n) < 0.06, 0.0, log_uniform(1e-12, EPS_MAX, n))
    pairs = list(zip(epsilons, log_uniform(*DELTA_RANGE, n), strict=True))
    pairs += [(e, d) for e in (0.0, 1e-12, 1.0, EPS_MAX) for d in (1e-300, 1e-10, 0.5)]
    rows = []
    for eps, delta in pairs:
        e, d = mp.mpf(float(eps)), mp.mpf(float(delta))
        lo = e / 50 if e > 0 else d  # delta(eps; eps/50) < 1e-300; delta(0; mu) = erf(mu/sqrt8) < mu/2
        hi = max(mp.mpf(1), 4 * lo)
        while gdp_delta_fast(e, hi) < d:
            hi *= 2
        mu = bisect(lambda m, e=e, d=d: gdp_delta_fast(e, m) - d, lo, hi)
        check_root(gdp_delta(e, mu), d, f"mu({eps}, {delta})")
        slope = mp.npdf(-e / mu + mu / 2)
        rows.append([float(eps), float(delta), text(mu), text(d / (mu * slope))])
    return rows


# --- closed forms ----------------------------------------------------------------------------------------


def closed_form_parameters(n: int, with_zero: bool) -> tuple[np.ndarray, np.ndarray]:
    e0 = log_uniform(1e-8, EPS_MAX, n)
    if with_zero:
        e0[RNG.random(n) < 0.05] = 0.0
    d0 = np.where(RNG.random(n) < 0.25, 0.0, log_uniform(1e-300, 0.5, n))
    return e0, d0


def near(value: mp.mpf, below: bool = True) -> float:
    """A float just below (or above) value, 10^-U(0, 16) relative away, or value rounded."""
    step = 10.0 ** -RNG.uniform(0, 16)
    if RNG.random() < 0.1:
        return float(value)
    return float(value * (1 - step) if below else value * (1 + step))


def eps_delta_beta(alpha: mp.mpf, e: mp.mpf, d: mp.mpf) -> tuple[mp.mpf, mp.mpf]:
    """f_{e,d}(alpha) and kappa = max(1, e) |E d beta/dE| / beta, E = e^e: the sensitivity of beta to the
    one quantity a double-precision evaluation must round, e^e (to an ulp, or to about e ulps where it is
    formed as exp(e + log alpha)); alpha, d and 1 - d - alpha are exact or can be. The steep piece counts
    wherever a perturbation of E by 2^-50 relative could make it the maximum: near the kink of a large e it
    is ~0 and its rounding decides the value (kappa about e e^e there)."""
    scale = mp.exp(e)
    steep, flat = 1 - d - scale * alpha, (1 - d - alpha) / scale
    beta = max(mp.mpf(0), steep, flat)
    if beta == 0:
        return beta, mp.mpf(0)
    pieces = ((steep, scale * alpha), (flat, abs(flat)))  # |E d piece / dE|
    sensitivity = max(s for piece, s in pieces if piece + s * mp.mpf(2) ** -50 >= beta)
    return beta, max(1, e) * sensitivity / beta


def sample_alpha(choice: int, kink: mp.mpf, zero: mp.mpf | None) -> float:
    """One alpha of a closed form's rows: log-uniform, uniform, next to the kink, next to the zero of the
    trade-off (eps, delta only), or within 1e-16..0.5 of 1."""
    if choice == 0:
        return float(log_uniform(1e-300, 1, 1)[0])
    if choice == 1:
        return float(RNG.uniform(0, 1))
    if choice == 2:
        return near(kink, below=bool(RNG.random() < 0.5))
    if choice == 3:
        return near(zero)
    return float(1 - log_uniform(1.1e-16, 0.5, 1)[0])


LAPLACE_CHOICES = (0, 1, 2, 4)
"""sample_alpha's choices for the Laplace rows (no zero of the trade-off to approach)."""


def sample_epsilon(choice: int, upper: float, epsilon0: mp.mpf) -> float:
    """One epsilon of a closed form's privacy-profile rows: uniform on [0, upper], log-uniform, or next to
    the kink epsilon0."""
    if choice == 0:
        return float(RNG.uniform(0, upper))
    if choice == 1:
        return float(log_uniform(1e-12, EPS_MAX, 1)[0])
    return near(epsilon0)


def eps_delta_rows() -> tuple[list[list], list[list]]:
    n = 700
    e0, d0 = closed_form_parameters(n, with_zero=True)
    tradeoff, profile = [], []
    for i in range(n):
        e, d = mp.mpf(e0[i]), mp.mpf(d0[i])
        kink = (1 - d) / (1 + mp.exp(e))
        alpha = sample_alpha(RNG.integers(0, 5), kink, 1 - d)
        alpha = min(max(alpha, 0.0), 1.0)
        beta, kappa = eps_delta_beta(mp.mpf(alpha), e, d)
        tradeoff.append([alpha, float(e0[i]), float(d0[i]), text(beta), text(kappa)])
        eps = sample_epsilon(RNG.integers(0, 3), 2 * e0[i] + 1e-3, e)
        t = mp.mpf(eps)
        value = d + (1 - d) * max(mp.mpf(0), mp.exp(e) - mp.exp(t)) / (1 + mp.exp(e))
        profile.append([eps, float(e0[i]), float(d0[i]), text(value)])
    for e in (0.0, 1e-8, 1.0, 50.0, 700.0, EPS_MAX):  # edges
        for d in (0.0, 1e-300, 0.5):
            for alpha in (0.0, TINY, 1e-300, 0.5, 1 - 2**-53, 1.0):
                beta, kappa = eps_delta_beta(mp.mpf(alpha), mp.mpf(e), mp.mpf(d))
                tradeoff.append([alpha, e, d, text(beta), text(kappa)])
            for eps in (0.0, e, EPS_MAX):
                t, em, dm = mp.mpf(eps), mp.mpf(e), mp.mpf(d)
                value = dm + (1 - dm) * max(mp.mpf(0), mp.exp(em) - mp.exp(t)) / (1 + mp.exp(em))
                profile.append([eps, e, d, text(value)])
    return tradeoff, profile


def laplace_beta(alpha: mp.mpf, e: mp.mpf) -> mp.mpf:
    if alpha < mp.exp(-e) / 2:
        return 1 - mp.exp(e) * alpha
    if alpha <= mp.mpf(0.5):
        return mp.exp(-e) / (4 * alpha)
    return mp.exp(-e) * (1 - alpha)


def laplace_rows() -> tuple[list[list], list[list]]:
    n = 600
    e0, _ = closed_form_parameters(n, with_zero=False)
    tradeoff, profile = [], []
    for i in range(n):
        e = mp.mpf(e0[i])
        alpha = sample_alpha(LAPLACE_CHOICES[RNG.integers(0, 4)], mp.exp(-e) / 2, None)
        alpha = min(max(alpha, 0.0), 1.0)
        tradeoff.append([alpha, float(e0[i]), text(laplace_beta(mp.mpf(alpha), e))])
        eps = sample_epsilon(RNG.integers(0, 3), 2 * e0[i], e)
        profile.append([eps, float(e0[i]), text(max(mp.mpf(0), 1 - mp.exp((mp.mpf(eps) - e) / 2)))])
    for e in (1e-8, 1.0, 50.0, 700.0, 745.0, EPS_MAX):  # edges
        for alpha in (0.0, TINY, 1e-300, 0.25, 0.5, np.nextafter(0.5, 1), 1 - 2**-53, 1.0):
            tradeoff.append([float(alpha), e, text(laplace_beta(mp.mpf(float(alpha)), mp.mpf(e)))])
        for eps in (0.0, e, EPS_MAX):
            profile.append([eps, e, text(max(mp.mpf(0), 1 - mp.exp((mp.mpf(eps) - mp.mpf(e)) / 2)))])
    return tradeoff, profile


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    eps_delta_tradeoff, eps_delta_profile = eps_delta_rows()
    laplace_tradeoff, laplace_profile = laplace_rows()
    tables = {
        "gdp_delta": (["epsilon", "mu", "delta"], delta_rows()),
        "gdp_tradeoff": (["alpha", "mu", "beta"], tradeoff_rows()),
        "gdp_epsilon": (["delta", "mu", "epsilon", "kappa"], epsilon_rows()),
        "gdp_mu": (["epsilon", "delta", "mu", "kappa"], mu_rows()),
        "eps_delta_tradeoff": (["alpha", "epsilon0", "delta0", "beta", "kappa"], eps_delta_tradeoff),
        "eps_delta_profile": (["epsilon", "epsilon0", "delta0", "delta"], eps_delta_profile),
        "laplace_tradeoff": (["alpha", "epsilon0", "beta"], laplace_tradeoff),
        "laplace_profile": (["epsilon", "epsilon0", "delta"], laplace_profile),
    }
    for name, (columns, rows) in tables.items():
        document = {
            "columns": columns,
            "generator": "tools/reference/generate_kernels.py (mpmath, 60 digits; see its docstring)",
            "rows": rows,
        }
        (OUT / f"{name}.json").write_text(json.dumps(document, separators=(",", ":")) + "\n")
        print(f"{name}: {len(rows)} rows")


if __name__ == "__main__":
    main()
