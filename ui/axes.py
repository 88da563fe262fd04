"""Axis items of the charts: side axes that make room for a wrapped label, and log axes labelled with SI
prefixes."""

from __future__ import annotations

import math

import pyqtgraph as pg


class WrappedLabelAxis(pg.AxisItem):
    """A side axis whose width counts its label's whole height: pyqtgraph's `AxisItem._updateWidth` counts
    0.8 of it (room for one rotated line), so a label wrapped onto several lines would run over the tick
    labels."""

    def _updateWidth(self) -> None:  # noqa: N802 (pyqtgraph name)
        super()._updateWidth()
        if (self.orientation in ("left", "right") and self.fixedWidth is None and self.isVisible()
                and self.label.isVisible() and "<br>" in (self.labelText or "")):
            width = self.maximumWidth() + 0.2 * self.label.boundingRect().height() + 2.0
            self.setMaximumWidth(width)
            self.setMinimumWidth(width)


def wrapped_label_axes(plot: pg.PlotItem) -> None:
    """Give the plot WrappedLabelAxis side axes (a plain AxisItem is replaced, keeping its visibility, grid and
    log mode; a panel's own subclass, e.g. LogSIAxis, already is one)."""
    for side in ("left", "right"):
        old = plot.getAxis(side)
        if isinstance(old, WrappedLabelAxis):
            continue
        new = WrappedLabelAxis(side)
        new.setGrid(old.grid)
        new.logMode = old.logMode
        shown = old.isVisible()
        plot.setAxisItems({side: new})
        plot.showAxis(side, shown)


def si_decade(value: float) -> str:
    """1e12 -> '1 T', 1e13 -> '10 T', 0.1 -> '0.1', 1e3 -> '1 k' (decimal prefixes)."""
    for factor, prefix in ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:g} {prefix}"
    return f"{value:g}"


class LogSIAxis(WrappedLabelAxis):
    """A log axis labelled at whole decades with decimal prefixes ("1 T", "10 T"); minor ticks unlabelled."""

    def logTickValues(self, minVal, maxVal, size, stdTicks):  # noqa: N802, N803 (pyqtgraph names)
        """pyqtgraph's levels, less the minor ticks that repeat a coarser level's (its minor level starts each
        decade at 1 x 10^n, which the decade level already has: the label would be drawn twice)."""
        levels, seen = [], set()
        for spacing, values in super().logTickValues(minVal, maxVal, size, stdTicks):
            kept = [v for v in values if round(float(v), 9) not in seen]
            seen.update(round(float(v), 9) for v in kept)
            levels.append((spacing, kept))
        return levels

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph name)
        """Whole decades by their prefix; a decade past float64 (a view zoomed or panned out that far) as 1e<n>,
        never an OverflowError out of the paint."""
        out = []
        for v in values:
            r = round(v)
            if abs(v - r) >= 1e-6:
                out.append("")
            elif abs(r) > 300:
                out.append(f"1e{r}")
            else:
                out.append(si_decade(10.0 ** r * scale))
        return out


def minus_sign(text: str) -> str:
    """A number's text with the typographic minus (U+2212) for the hyphen-minus that Python writes."""
    return text.replace("-", "\u2212")


class MinusSignAxis(WrappedLabelAxis):
    """A linear axis whose negative tick labels read with the typographic minus, as the panel's other numbers."""

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph name)
        return [minus_sign(s) for s in super().tickStrings(values, scale, spacing)]


ONE_TWO_FIVE = (1.0, 2.0, 5.0)
TICK_ROOM_PX = 26.0   # a labelled tick of a vertical log axis needs this much height for its 11-pt text


class OneTwoFiveAxis(LogSIAxis):
    """A log axis labelled at 1, 2 and 5 of each decade ("0.2", "0.5", "1", "2", "5", "10") where the axis is long
    enough for every label to read apart (TICK_ROOM_PX each); otherwise at whole decades, as LogSIAxis. All
    labelled ticks sit on one level, so none is dropped by pyqtgraph's text-fill limits."""

    def logTickValues(self, minVal, maxVal, size, stdTicks):  # noqa: N802, N803 (pyqtgraph names)
        ticks = [math.log10(m) + e for e in range(math.floor(minVal) - 1, math.ceil(maxVal) + 1)
                 for m in ONE_TWO_FIVE]
        ticks = [t for t in ticks if minVal <= t <= maxVal]
        self._decades_only = len(ticks) < 2 or size / len(ticks) < TICK_ROOM_PX
        if self._decades_only:   # too short for 1, 2 and 5: labelled at whole decades only
            return super().logTickValues(minVal, maxVal, size, stdTicks)
        return [(1.0, ticks)]

    def logTickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph name)
        """1, 2 and 5 of a decade by their decimal prefix ("2 k", "0.5"); any other minor tick unlabelled."""
        if getattr(self, "_decades_only", False):
            return super().logTickStrings(values, scale, spacing)
        out = []
        for v in values:
            e = math.floor(v + 1e-9)
            mantissa = 10.0 ** (v - e)
            m = next((m for m in ONE_TWO_FIVE if abs(mantissa - m) < 1e-6 * m), None)
            out.append("" if m is None or abs(e) > 300 else si_decade(float(f"{m * 10.0 ** e * scale:.12g}")))
        return out
