"""Defaults shared by the accountants and the CLI (no numpy import, so the CLI can read them cheaply)."""

DEFAULT_ACCURACY = 0.005
"""The numerical (PLD) accountant refines its grid until upper / lower - 1 <= this (DESIGN: <= 1.005).
Round trips such as `calibrate sgd` -> `sgd` rely on every command using the same value."""

EPSILON_SCALE = 0.1
"""Below this epsilon --accuracy is an absolute width (accuracy x EPSILON_SCALE) rather than a relative
one: the PLD's epsilon bounds are refined until upper - lower <= accuracy x (lower + EPSILON_SCALE)."""
