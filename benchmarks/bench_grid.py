"""The slow settings and the small deltas: `gdpcli sgd` (default options, whole process) against
dp-accounting's PLD accountant (pessimistic and optimistic, value_discretization_interval 1e-4) on the
same question, measured in the same script.

    PYTHONPATH=. python benchmarks/bench_grid.py          # about 3 minutes on 2 cores

Prints one Markdown row per setting: gdpcli's certified interval, its width and wall time (a note when the
refinement stopped at its budget), dp-accounting's [optimistic, pessimistic] and the time of both runs,
and the time ratio. The pessimistic figure is dp-accounting's upper estimate; its optimistic figure is
not a certified lower bound, so the two widths are compared as what each tool tells its user.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

SETTINGS = [  # (sampling rate, noise multiplier, steps, delta)
    (1e-4, 0.8, 10_000, 1e-5),
    (1e-4, 0.5, 100, 1e-5),
    (1e-4, 0.5, 10_000, 1e-5),
    (1e-4, 0.5, 100_000, 1e-5),
    (1e-4, 0.5, 1_000_000, 1e-5),
    (1e-3, 5.0, 1_000_000, 1e-5),
    (256 / 60000, 1.1, 14063, 1e-5),
    (256 / 60000, 1.1, 14063, 1e-8),
    (256 / 60000, 1.1, 14063, 1e-10),
    (256 / 60000, 1.1, 14063, 1e-12),
    (256 / 60000, 1.1, 10_000_000, 1e-5),
    (256 / 60000, 1.1, 10_000_000, 1e-10),
]


def gdpcli(rate: float, sigma: float, steps: int, delta: float) -> tuple[str, float]:
    """gdpcli's answer as text and the wall time of the whole process."""
    args = ["--sampling-rate", repr(rate), "--noise-multiplier", repr(sigma), "--steps", str(steps)]
    command = [sys.executable, "-m", "gdpcli", "sgd", *args, "--delta", repr(delta), "-f", "json"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - start
    if done.returncode:
        return f"exit {done.returncode}: {done.stderr.strip()[:80]}", seconds
    result = json.loads(done.stdout)
    bounds = {row["guarantee"]: row["epsilon"] for row in result["rows"]}
    upper, lower = bounds["upper_bound"], bounds["lower_bound"]
    note = " (budget)" if any("budget" in note for note in result.get("notes", [])) else ""
    return f"[{lower:.5f}, {upper:.5f}], width {upper - lower:.2g}{note}", seconds


def dp_accounting(rate: float, sigma: float, steps: int, delta: float) -> tuple[str, float]:
    """dp-accounting's optimistic and pessimistic epsilons and the time of both."""
    from dpacc_row import epsilon

    start = time.perf_counter()
    values = [epsilon(rate, sigma, steps, delta, pessimistic) for pessimistic in (False, True)]
    seconds = time.perf_counter() - start
    return f"[{values[0]:.5f}, {values[1]:.5f}], width {values[1] - values[0]:.2g}", seconds


def main() -> None:
    header = ["q, sigma, T, delta", "gdpcli sgd (default)", "time", "dp-accounting PLD 1e-4 [opt, pess]"]
    print("| " + " | ".join([*header, "time", "ratio"]) + " |")
    print("|---|---|---|---|---|---|")
    for rate, sigma, steps, delta in SETTINGS:
        ours, our_time = gdpcli(rate, sigma, steps, delta)
        theirs, their_time = dp_accounting(rate, sigma, steps, delta)
        setting = f"{rate:.3g}, {sigma:g}, {steps:.0e}, {delta:g}"
        ratio = our_time / their_time
        print(
            f"| {setting} | {ours} | {our_time:.1f} s | {theirs} | {their_time:.1f} s | {ratio:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
