"""Renyi DP guarantees: RDP at listed orders, (xi, rho)-zCDP, and an RDP curve read from a file."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gdpcli.events.mechanism import RdpCurve, RdpOnly
from gdpcli.events.spec_values import NON_NEGATIVE, Interval, SpecValues, spec_number

if TYPE_CHECKING:
    from gdpcli.core.gdpt import PrivacyProfile


@dataclass(frozen=True)
class Renyi(
    RdpOnly,
    kind="rdp",
    keys=("alpha", "eps"),
    spec_help="rdp (alpha,eps[,alpha,eps...])",
    repeatable=("alpha", "eps"),
):
    """Renyi DP: D_alpha <= eps at each listed order alpha (Mironov 2017). No single trade-off function."""

    exact_rdp = True  # the guarantee as stated

    orders: tuple[float, ...]
    epsilons: tuple[float, ...]
    rdp_only = "an RDP guarantee bounds Renyi divergences only"

    @classmethod
    def from_spec(cls, values: SpecValues) -> Renyi:
        orders, epsilons = values.listed("alpha"), values.listed("eps")
        if not orders or len(orders) != len(epsilons):
            raise values.error("rdp needs alpha=...,eps=... pairs", "e.g. rdp:alpha=8,eps=0.5")
        for order, eps in zip(orders, epsilons, strict=True):
            values.require("alpha", order, Interval(1.0))
            values.require("eps", eps, NON_NEGATIVE)
        if len(set(orders)) != len(orders):
            raise values.error("an order alpha is given twice")
        return cls(tuple(orders), tuple(epsilons))

    @property
    def rdp_points(self) -> tuple[tuple[float, ...], tuple[float, ...]]:  # type: ignore[override]
        return self.orders, self.epsilons

    def describe(self) -> str:
        return "rdp:" + ",".join(
            f"alpha={spec_number(a)},eps={spec_number(e)}"
            for a, e in zip(self.orders, self.epsilons, strict=True)
        )

    def rdp_curve(self) -> RdpCurve:
        raise self.refused("curve beyond its listed orders")

    def gdpt_profile(self) -> PrivacyProfile:
        raise self.refused(
            "privacy profile",
            "convert it to (eps, delta) first (gdpcli convert --epsilon RANGE -f csv) and pipe the CSV in",
        )


@dataclass(frozen=True)
class ZeroConcentrated(Renyi, kind="zcdp", keys=("rho", "xi"), spec_help="zcdp (rho[,xi])"):
    """(xi, rho)-zCDP (Bun and Steinke 2016, Def. 1.1): D_alpha <= xi + alpha rho at EVERY order alpha > 1,
    a whole RDP curve (rho and xi add under composition, their Lemma 1.7). Like rdp:, no trade-off
    function of its own: accounted in RDP (--method rdp, every conversion, the optimal one included)."""

    rho: float = 0.0
    xi: float = 0.0

    @classmethod
    def from_spec(cls, values: SpecValues) -> ZeroConcentrated:
        rho, xi = values.number("rho", NON_NEGATIVE), values.number("xi", NON_NEGATIVE, 0.0)
        values.refuse_perfect_privacy(rho=rho, xi=xi)
        return cls((), (), rho, xi)

    @property
    def rdp_points(self) -> None:  # type: ignore[override]
        return None

    @property
    def zcdp_rho(self) -> float | None:  # type: ignore[override]
        return self.rho if self.xi == 0.0 else None

    @property
    def zcdp_statement(self) -> tuple[float, float]:  # type: ignore[override]
        return self.rho, self.xi

    def describe(self) -> str:
        xi = f",xi={spec_number(self.xi)}" if self.xi else ""
        return f"zcdp:rho={spec_number(self.rho)}{xi}"

    def rdp_curve(self) -> RdpCurve:
        from gdpcli.core import zcdp

        rho, xi = self.rho, self.xi
        return lambda order: zcdp.rdp(order, rho, xi)


@dataclass(frozen=True)
class RenyiCurve(
    Renyi,
    kind="rdp",
    keys=("alpha", "eps", "file"),
    spec_help="rdp (file=F.csv: a curve, columns alpha,eps)",
    repeatable=("alpha", "eps"),
):
    """The rdp kind with a whole curve from a CSV file (columns alpha,eps, or order,rdp_epsilon as `gdpcli
    convert SPEC --to rdp -f csv` writes them): an RDP guarantee at each listed order (events.Renyi), named
    by its file in messages."""

    source: str = ""

    @classmethod
    def from_spec(cls, values: SpecValues) -> Renyi:
        if not values.has("file"):
            return Renyi.from_spec(values)
        if values.listed("alpha") or values.listed("eps"):
            raise values.error("give alpha=...,eps=... pairs or file=..., not both")
        source = str(values.values["file"])
        orders, epsilons = cls.read(source, values)
        return cls(orders, epsilons, source)

    def describe(self) -> str:
        return f"rdp:file={self.source}"

    @classmethod
    def read(cls, path: str, values: SpecValues) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """(orders, epsilons) of a CSV file; InputError naming the line and column of a bad entry."""
        lines = cls._lines(values)
        header = [cell.strip().lower() for cell in lines[0][1]]
        known = (("alpha", "eps"), ("order", "rdp_epsilon"))
        columns = next((c for c in known if set(c) <= set(header)), None)
        if columns is None:
            raise values.error(
                f"{path} line 1: the header needs columns alpha,eps", "got " + ",".join(header)
            )
        at = [header.index(c) for c in columns]
        points = [cls._row(path, n, row, at, columns, values) for n, row in lines[1:]]
        if not points:
            raise values.error(f"{path}: no rows after the header")
        cls._check_order(path, [n for n, _ in lines[1:]], [o for o, _ in points], values)
        return tuple(o for o, _ in points), tuple(e for _, e in points)

    @staticmethod
    def _lines(values: SpecValues) -> list[tuple[int, list[str]]]:
        """The file's non-blank CSV rows with their line numbers (1 = the header)."""
        import csv
        import io

        text = values.file_text("give a CSV: header alpha,eps, then one row per order")
        rows = enumerate(csv.reader(io.StringIO(text)), 1)
        return [(n, row) for n, row in rows if any(cell.strip() for cell in row)]

    @staticmethod
    def _row(
        path: str, line: int, row: list[str], at: list[int], columns: tuple[str, str], values: SpecValues
    ) -> tuple[float, float]:
        """One (order, eps) row: a number in each column, order > 1, eps >= 0 and finite."""
        numbers = []
        for index, column, allowed in zip(at, columns, (Interval(1.0), NON_NEGATIVE), strict=True):
            text = row[index].strip() if index < len(row) else ""
            try:
                value = float(text)
            except ValueError:
                raise values.error(f"{path} line {line}, column {column}: {text!r} is not a number") from None
            if not (math.isfinite(value) and allowed.contains(value)):
                raise values.error(
                    f"{path} line {line}, column {column}: {text!r} is out of range",
                    f"allowed: {allowed.describe(column)}",
                )
            numbers.append(value)
        return numbers[0], numbers[1]

    @staticmethod
    def _check_order(path: str, lines: list[int], orders: list[float], values: SpecValues) -> None:
        """Orders strictly increasing: a repeated or unsorted order names its line."""
        for line, previous, order in zip(lines[1:], orders, orders[1:], strict=False):
            if order == previous:
                raise values.error(f"{path} line {line}, column alpha: order {order!r} is given twice")
            if order < previous:
                raise values.error(f"{path} line {line}, column alpha: orders must be sorted increasing")
