"""Defaults shared by the accountants and the CLI (no numpy import, so the CLI can read them cheaply)."""

DEFAULT_ACCURACY = 0.005
"""The numerical (PLD) accountant refines its grid until upper / lower - 1 <= this (DESIGN: <= 1.005).
Round trips such as `calibrate sgd` -> `sgd` rely on every command using the same value."""
