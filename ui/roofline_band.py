"""The roofline's uncertainty band: the attainable FLOP/s the model assumes, between the efficiency ranges' ends.

The datasheet roofs are what the hardware could do; the model times every kernel at min(peak x
compute_efficiency, HBM bandwidth x hbm_efficiency x intensity). This layer shades that achievable roofline
between its values with every efficiency at the low end of its range and at the high end (model.uncertainty.
efficiency_extremes, centred on the scenario's own efficiencies, so the point estimate's curve lies inside).
It is the envelope of the ranges' ends, not a percentile band: attainable FLOP/s rises with each efficiency,
so no sample of the ranges falls outside it.

Mixed into RooflinePanel, whose state (`_results`, `_roof`, `_x_range`, `plot`) it reads. `set_bands(u)` is the
View > Uncertainty bands hook (ui/bands.py): None, or bands of another scenario, hide the band. The band is
translucent in the theme's plot foreground, under the ceilings, points and labels, and adds no text on the plot
(its numbers are in the hover and one legend entry under the plot).
"""

from __future__ import annotations

import math

import numpy as np

from trinity_desktop.model.search.uncertainty import Uncertainty, efficiency_extremes
from trinity_desktop.ui import theme
from trinity_desktop.ui.bands import FillBand, attainable_range, matches
from trinity_desktop.ui.units import fmt_flops_rate

BAND_LEGEND = "attainable at the efficiency ranges' ends"
BAND_SWATCH = theme.MUTED_COLOR  # the legend's swatch: between the band's tint on a light and on a dark plot


class RooflineBand:
    _bands: Uncertainty | None = None
    _band: FillBand | None = None
    _band_ends = None  # (low Efficiency, high Efficiency) of the band shown, or None when hidden

    def set_bands(self, u: Uncertainty | None) -> None:
        """Show the band for the bands `u` of the scenario shown; None (bands off or stale) hides it."""
        self._bands = u
        self._update_band()

    def _band_geometry(self) -> tuple[float, float, str]:
        hw = self._results.scenario.hardware
        return hw.peak(self._roof.dtype), hw.hbm_bw, self._roof.dtype

    def _update_band(self) -> None:
        self._draw_band()
        if self._roof is not None:
            self._update_legend()  # its entry comes and goes with the band (unchanged entries cost nothing)

    def _draw_band(self) -> None:
        if self._band is None:
            self._band = FillBand(self.plot, theme.plot_foreground())
            for item in (self._band.low, self._band.high):
                item.setZValue(-4)  # under the roofs (0), the points and every label
        u, r = self._bands, self._results
        if u is None or r is None or self._roof is None or not matches(u, r):
            self._band_ends = None
            self._band.clear()
            return
        low, high = efficiency_extremes(r.scenario, u.set_name)
        peak, bw, _ = self._band_geometry()
        x_lo, x_hi = self._x_range
        knees = [peak * e.compute / (bw * e.hbm) for e in (low, high, r.scenario.efficiency)]
        xs = np.unique(np.clip([x_lo, x_hi, *knees], x_lo, x_hi))  # exact: each curve is two lines in log-log
        lo, hi = attainable_range(xs, peak, bw, low, high)
        self._band.set_color(theme.plot_foreground())
        self._band.set(np.log10(xs), np.log10(lo), np.log10(hi))
        self._band_ends = (low, high)

    def band_visible(self) -> bool:
        return self._band_ends is not None

    def band_values(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(intensity FLOP/B, low, high attainable FLOP/s) as drawn, in data units; None when hidden."""
        if self._band_ends is None:
            return None
        return 10.0 ** self._band.low.xData, 10.0 ** self._band.low.yData, 10.0 ** self._band.high.yData

    def band_text_at(self, lx: float, ly: float) -> str:
        """The band's range at the cursor's intensity when the cursor (log10 x, log10 y) is inside it, else ""."""
        if self._band_ends is None:
            return ""
        low, high = self._band_ends
        x = 10.0 ** lx
        peak, bw, dtype = self._band_geometry()
        lo, hi = (float(v[0]) for v in attainable_range([x], peak, bw, low, high))
        if not (math.log10(lo) - 1e-9 <= ly <= math.log10(hi) + 1e-9):
            return ""
        eff = self._results.scenario.efficiency
        likely = min(peak * eff.compute, bw * eff.hbm * x)
        return "\n".join([
            f"attainable {fmt_flops_rate(lo)} – {fmt_flops_rate(hi)} at {x:,.3g} FLOP/B",
            "(every efficiency at its range's low end – at its high end; an envelope, not percentiles)",
            f"compute_efficiency {low.compute:.0%}–{high.compute:.0%}, hbm_efficiency {low.hbm:.0%}–{high.hbm:.0%} "
            f"of the {dtype.upper()} peak and HBM bandwidth",
            f"point estimate: {fmt_flops_rate(likely)} (compute {eff.compute:.0%}, HBM {eff.hbm:.0%}); "
            f"ranges: {self._bands.set_name} set (resources/assumptions.toml)"])
