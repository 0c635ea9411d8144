"""Defaults shared by the accountants and the CLI (no numpy import, so the CLI can read them cheaply)."""

DEFAULT_ACCURACY = 0.001
"""The numerical (PLD) accountant refines its grid until upper / lower - 1 <= this (the bounds within 0.1 %).
Round trips such as `calibrate sgd` -> `sgd` rely on every command using the same value. At 0.5 % the upper
bound was above dp-accounting's pessimistic estimate (interval 1e-4) by more than 2e-4 relative on long
DP-SGD runs (MNIST 60 epochs: 2.38230 against 2.38178; q 0.003, sigma 0.7, 2e5 steps: 20.302 against
20.281); at 0.1 % it is not on those (2.38196, 20.2827), for 0.2 s more on them (benchmarks/README.md)."""

EPSILON_SCALE = 0.1
"""Below this epsilon --accuracy is an absolute width (accuracy x EPSILON_SCALE) rather than a relative
one: the PLD's epsilon bounds are refined until upper - lower <= accuracy x (lower + EPSILON_SCALE)."""

STEP_SCALE = 0.025
"""With n mechanisms composed (n steps), --accuracy also caps the PLD's epsilon width at the absolute
accuracy x STEP_SCALE x n (2.5e-5 a step at the default): upper - lower <= accuracy x min(lower +
EPSILON_SCALE, STEP_SCALE n). A PLD accountant on a per-step grid of 1e-4 (dp-accounting's) leaves its
pessimistic and optimistic epsilons about 5e-5 a step apart, so a purely relative width would be wider
than that for a large epsilon after few steps (an epsilon of 137 after 100 steps: 0.07 against 0.0025),
where half of it costs little (0.33-0.43 s at 1 and 100 steps, benchmarks/README.md). (0.005 when the
default accuracy was 0.005: the same 2.5e-5 a step; a tenth of the gap cost 2x the time for nothing.)"""

NOISE_TOLERANCE = 1e-3
"""The relative tolerance on the noise multiplier that a noise search stops at (`calibrate sgd --tolerance`,
gdpcli.get_noise_multiplier): the noise found meets the target, and one this much lower does not. One value
for both, so that they return the same noise."""
