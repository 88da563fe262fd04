"""The roofline's uncertainty band: the attainable FLOP/s the model assumes, between the efficiency ranges' ends.

The datasheet roofs are what the hardware could do; the model times every kernel at min(peak x
compute_efficiency, HBM bandwidth x hbm_efficiency x intensity). This layer shades that achievable roofline
between its values with every efficiency at the low end of its range and at the high end (model.uncertainty.
efficiency_extremes, centred on the scenario's own efficiencies, so the point estimate's curve lies inside).
It is the envelope of the ranges' ends, not a percentile band: attainable FLOP/s rises with each efficiency,
so no sample of the ranges falls outside it.

A layer the panel owns: it draws on the plot from the `RooflineFrame` it is handed (ui/roofline_frame.py).
`set_bands(u)` is the View > Uncertainty bands hook (ui/bands.py): None, or bands of another scenario, hide the
band. The band is translucent in the theme's plot foreground, under the ceilings, points and labels, and adds no
text on the plot (its numbers are in the hover and one legend entry under the plot).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg

from trinity_desktop.model.search.uncertainty import Uncertainty, efficiency_extremes
from trinity_desktop.ui import theme
from trinity_desktop.ui.bands import FillBand, attainable_range, matches
from trinity_desktop.ui.roofline_frame import RooflineFrame
from trinity_desktop.ui.units import fmt_flops_rate

BAND_LEGEND = "attainable at the efficiency ranges' ends"
BAND_SWATCH = theme.MUTED_COLOR  # the legend's swatch: between the band's tint on a light and on a dark plot


class RooflineBand:
    """The shaded attainable range on `plot`, for the frame drawn last."""

    def __init__(self, plot: pg.PlotItem):
        self.fill = FillBand(plot, theme.plot_foreground())
        for item in (self.fill.low, self.fill.high):
            item.setZValue(-4)  # under the roofs (0), the points and every label
        self.fill.clear()
        self._bands: Uncertainty | None = None
        self._frame: RooflineFrame | None = None
        self._ends = None  # (low Efficiency, high Efficiency) of the band shown, or None when hidden

    def set_bands(self, u: Uncertainty | None) -> None:
        """Keep the bands `u` of the scenario shown (None: bands off or stale); `draw` shows them."""
        self._bands = u

    def draw(self, frame: RooflineFrame | None) -> None:
        """Shade the band across the frame's x range, or hide it (no frame, no bands, bands of another scenario)."""
        self._frame = frame
        u = self._bands
        if u is None or frame is None or not matches(u, frame.results):
            self._ends = None
            self.fill.clear()
            return
        sc = frame.scenario
        low, high = efficiency_extremes(sc, u.set_name)
        peak, bw = frame.peak, frame.hardware.hbm_bw
        x_lo, x_hi = frame.x_range
        knees = [peak * e.compute / (bw * e.hbm) for e in (low, high, sc.efficiency)]
        xs = np.unique(np.clip([x_lo, x_hi, *knees], x_lo, x_hi))  # exact: each curve is two lines in log-log
        lo, hi = attainable_range(xs, peak, bw, low, high)
        self.fill.set_color(theme.plot_foreground())
        self.fill.set(np.log10(xs), np.log10(lo), np.log10(hi))
        self._ends = (low, high)

    @property
    def visible(self) -> bool:
        return self._ends is not None

    def flat_edges(self) -> list[tuple[float, float]]:
        """(attainable FLOP/s, intensity where it starts) of the band's two flat edges right of their knees,
        peak x compute_efficiency at each range end: lines the compute roofs' labels keep off; [] when hidden."""
        if self._ends is None:
            return []
        peak, bw = self._frame.peak, self._frame.hardware.hbm_bw
        return [(peak * e.compute, peak * e.compute / (bw * e.hbm)) for e in self._ends]

    def values(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(intensity FLOP/B, low, high attainable FLOP/s) as drawn, in data units; None when hidden."""
        if self._ends is None:
            return None
        return 10.0 ** self.fill.low.xData, 10.0 ** self.fill.low.yData, 10.0 ** self.fill.high.yData

    def text_at(self, lx: float, ly: float) -> str:
        """The band's range at the cursor's intensity when the cursor (log10 x, log10 y) is inside it, else ""."""
        if self._ends is None or self._frame is None:
            return ""
        low, high = self._ends
        frame = self._frame
        x = 10.0 ** lx
        peak, bw, dtype = frame.peak, frame.hardware.hbm_bw, frame.roof.dtype
        lo, hi = (float(v[0]) for v in attainable_range([x], peak, bw, low, high))
        if not (math.log10(lo) - 1e-9 <= ly <= math.log10(hi) + 1e-9):
            return ""
        eff = frame.scenario.efficiency
        likely = min(peak * eff.compute, bw * eff.hbm * x)
        return "\n".join([
            f"attainable {fmt_flops_rate(lo)} – {fmt_flops_rate(hi)} at {x:,.3g} FLOP/B",
            "(every efficiency at its range's low end – at its high end; an envelope, not percentiles)",
            f"compute_efficiency {low.compute:.0%}–{high.compute:.0%}, hbm_efficiency {low.hbm:.0%}–{high.hbm:.0%} "
            f"of the {dtype.upper()} peak and HBM bandwidth",
            f"point estimate: {fmt_flops_rate(likely)} (compute {eff.compute:.0%}, HBM {eff.hbm:.0%}); "
            f"ranges: {self._bands.set_name} set of stated assumptions"])
