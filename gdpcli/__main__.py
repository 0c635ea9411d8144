"""Entry point of `gdpcli` and `python -m gdpcli`.

`--version` is answered before the CLI framework is imported: it needs nothing but the package itself.
The process is ours here (not a library user's), so it is also where the allocator is tuned.
"""

from __future__ import annotations

import gc
import sys

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3  # glibc's mallopt parameters
_LARGEST_HEAP_BLOCK = 32 * 2**20  # glibc's ceiling on the mmap threshold (64-bit)
_KEPT = 2**30  # freed memory kept for reuse, rather than given back to the system
_GROWTH = 2**28  # the least the heap grows by (address space: untouched pages cost nothing)


def _keep_freed_memory() -> None:
    """Let glibc's malloc serve the accountant's arrays (a grid of 10^5 to 10^6 points is 1 to 16 MB)
    from memory it keeps, rather than mapping fresh pages for each and unmapping them when freed: every
    fresh page is a fault, and a long DP-SGD run allocates such arrays hundreds of times (q 1e-5, sigma
    1.1, 1e7 steps spent 0.40 s of its 1.9 s in the kernel; with this 0.15 s, the same peak memory:
    benchmarks/README.md). Elsewhere (no glibc) nothing changes."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return
    mallopt(_M_MMAP_THRESHOLD, _LARGEST_HEAP_BLOCK)
    mallopt(_M_TRIM_THRESHOLD, _KEPT)
    mallopt(_M_TOP_PAD, _GROWTH)


def main() -> None:
    """Console-script entry point."""
    if sys.argv[1:] == ["--version"]:
        from gdpcli import __version__

        print(f"gdpcli {__version__}")
        return
    _keep_freed_memory()
    gc.disable()  # start-up creates long-lived objects, not garbage: app.main freezes them and re-enables
    from gdpcli.cli.app import main as run_cli

    run_cli()


if __name__ == "__main__":
    main()
