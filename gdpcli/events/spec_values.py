"""The key=value pairs of a spec word as a mechanism's `from_spec` reads them (`SpecValues`), the ranges a
key allows (`Interval`) and how the spec language writes a number (`spec_number`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gdpcli.errors import InputError


@dataclass(frozen=True)
class Interval:
    """The values a spec key allows: low < value < high, each end closed when its flag says so."""

    low: float
    high: float = math.inf
    low_closed: bool = False
    high_closed: bool = False

    def contains(self, value: float) -> bool:
        above = value >= self.low if self.low_closed else value > self.low
        below = value <= self.high if self.high_closed else value < self.high
        return above and below

    def describe(self, key: str) -> str:
        """The rule in words, e.g. 'sigma > 0' or '0 <= delta < 1'."""
        if self.high == math.inf:
            return f"{key} {'>=' if self.low_closed else '>'} {spec_number(self.low)}"
        low, high = ("<=" if self.low_closed else "<"), ("<=" if self.high_closed else "<")
        return f"{spec_number(self.low)} {low} {key} {high} {spec_number(self.high)}"


POSITIVE = Interval(0.0)
NON_NEGATIVE = Interval(0.0, low_closed=True)


class SpecValues:
    """The key=value pairs of one spec word (gdpcli.events.spec), for a mechanism's `from_spec`: each check
    raises InputError (exit 2) naming the spec and the key."""

    def __init__(self, spec: str, kind: str, pairs: list[tuple[str, float]], help_text: str) -> None:
        self.spec, self.kind, self.pairs, self.help_text = spec, kind, pairs, help_text
        self.values = dict(pairs)

    def has(self, key: str) -> bool:
        return key in self.values

    def get(self, key: str, default: float) -> float:
        return self.values.get(key, default)

    def need(self, key: str) -> float:
        if key not in self.values:
            raise InputError(f"spec {self.spec!r}: {self.kind} needs {key}=...", self.help_text)
        return self.values[key]

    def listed(self, key: str) -> list[float]:
        """Every value of a key that may repeat (rdp's alpha and eps), in order."""
        return [value for k, value in self.pairs if k == key]

    def require(self, key: str, value: float, allowed: Interval) -> float:
        if not allowed.contains(value):
            raise InputError(
                f"spec {self.spec!r}: {key}={value!r} is out of range", f"allowed: {allowed.describe(key)}"
            )
        return value

    def number(self, key: str, allowed: Interval, default: float | None = None) -> float:
        """The key's value (or the default when it is optional and absent), checked against `allowed`."""
        value = self.need(key) if default is None else self.get(key, default)
        return self.require(key, value, allowed)

    def error(self, message: str, hint: str | None = None) -> InputError:
        return InputError(f"spec {self.spec!r}: {message}", hint)

    def refuse_perfect_privacy(self, **parameters: float) -> None:
        """InputError when every parameter of the guarantee is 0 (eps=0 and delta=0): nothing to account."""
        if all(value == 0.0 for value in parameters.values()):
            zeros = " and ".join(f"{key}=0" for key in parameters)
            raise self.error(f"{zeros} is perfect privacy; nothing to account")

    def file_text(self, hint: str) -> str:
        """The text of file= (a path, or - for stdin), read and refused as every input file is."""
        from gdpcli.textfiles import read_text

        return read_text(str(self.values["file"]), f"spec {self.spec!r}", hint)


def spec_number(value: float) -> str:
    """A float as the spec language writes it: shortest round-trip form, integers without '.0'."""
    return repr(int(value)) if float(value).is_integer() and abs(value) < 1e16 else repr(float(value))
