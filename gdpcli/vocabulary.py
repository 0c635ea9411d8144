"""The words options take, shared by every command (light: the CLI reads them at start-up)."""

from __future__ import annotations

from gdpcli.events import Sampling

METHODS = ("auto", "exact", "pld", "clt", "edgeworth", "berry-esseen", "rdp", "basic", "advanced", "all")
"""--method: auto is exact where a closed form exists, else the rigorous PLD bounds; exact the closed form
only; pld the PLD bounds; clt and berry-esseen GDP paper Thm 5 / Cor. 5; edgeworth the Edgeworth
accountant (Wang et al. 2022, an approximation); rdp RDP with a conversion; basic and advanced the textbook
composition theorems for (eps, delta)-DP mechanisms (valid, loose upper bounds); all every one that
applies."""
CONVERSIONS = ("classic", "improved", "lemma1", "lemma2", "optimal")
"""--conversion: the RDP -> (eps, delta) conversions (each a rigorous upper bound)."""
SAMPLING = tuple(scheme.value for scheme in Sampling)
"""--sampling of one step (spec key sampling=, subsample): Poisson (add/remove neighbours) or a fixed-size
sample (replace-one)."""
BATCHING = (*SAMPLING, "shuffle", "balls-in-bins", "truncated-poisson")
"""--sampling of a DP-SGD run (sgd, calibrate sgd): each step's batch drawn by a scheme of SAMPLING,
shuffle (each epoch a random permutation cut into batches; replace-one neighbours), balls-in-bins (each
epoch every example in one uniformly random batch; add/remove neighbours) or truncated-poisson
(Poisson batches cut to at most --max-batch-size; add/remove neighbours)."""
FORMATS = ("table", "csv", "json")
"""-f/--format."""
