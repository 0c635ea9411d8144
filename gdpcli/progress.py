"""Progress of long computations: the numerics report what they are doing, the CLI shows it.

Pure Python (importable from gdpcli.core): `report` is a no-op unless a listener is installed, which the
CLI does only while stderr is a terminal (gdpcli.cli.output.progress_shown).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

_listeners: list[Callable[[str], None]] = []


def report(message: str) -> None:
    """Tell the listener, if any, what the computation is doing now (one short line)."""
    for listener in _listeners:
        listener(message)


@contextmanager
def listening(listener: Callable[[str], None]) -> Iterator[None]:
    """Send every `report` to `listener` inside the block."""
    _listeners.append(listener)
    try:
        yield
    finally:
        _listeners.remove(listener)
