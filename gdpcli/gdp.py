"""The public Python API, `from gdpcli import gdp`: GDP conversions on scalars or numpy arrays.

gdp.delta(epsilon, mu)    delta(eps; mu), GDP paper Cor. 1
gdp.epsilon(delta, mu)    the smallest eps with delta(eps; mu) <= delta
gdp.mu(epsilon, delta)    the largest mu whose GDP guarantee implies (eps, delta)-DP
gdp.tradeoff(alpha, mu)   G_mu(alpha) = Phi(Phi^-1(1 - alpha) - mu)
"""

from gdpcli.core.gdp import delta, epsilon, mu, symmetric_point, tradeoff

__all__ = ["delta", "epsilon", "mu", "symmetric_point", "tradeoff"]
