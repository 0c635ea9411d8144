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
SAMPLING = tuple(scheme.value for scheme in Sampling if scheme.per_step)
"""--sampling of one step (spec key sampling=, subsample): Poisson (add/remove neighbours) or a fixed-size
sample (replace-one)."""
SAMPLING_HELP = " | ".join(f"{scheme} ({scheme.facts.help})" for scheme in Sampling if scheme.per_step) + "."
"""The --sampling help of one step (subsample), from the schemes' entries."""
BATCHING = tuple(scheme.value for scheme in Sampling)
"""--sampling of a DP-SGD run (sgd, calibrate sgd): every batch scheme (events.Sampling)."""
BATCHING_HELP = " | ".join(f"{scheme} ({scheme.facts.help})" for scheme in Sampling) + "."
"""The --sampling help of a DP-SGD run, from the schemes' entries."""
FORMATS = ("table", "csv", "json")
"""-f/--format."""
