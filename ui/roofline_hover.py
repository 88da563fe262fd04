"""The roofline's hover read-outs: the point or ceiling under the mouse and its numbers, with units.

A layer the panel owns: it reads the `RooflineFrame` it is handed and asks the other layers, through their
public methods, for their points and texts (the sweep's markers, the stage's own marker, the compared devices'
points, the band's range).
"""

from __future__ import annotations

import math

import pyqtgraph as pg

from trinity_desktop.model.views.roofline import STAGE_POINT, OperatingPoint
from trinity_desktop.ui.roofline_band import RooflineBand
from trinity_desktop.ui.roofline_compare import RooflineCompare
from trinity_desktop.ui.roofline_frame import RooflineFrame, px_per_decade
from trinity_desktop.ui.roofline_stage import RooflineStage
from trinity_desktop.ui.roofline_style import HOVER_PX, LINK_WORDS, SWEEP_GEMM, SWEEP_STEP, fmt_intensity
from trinity_desktop.ui.roofline_sweep import RooflineSweep
from trinity_desktop.ui.units import fmt_bytes, fmt_flops, fmt_flops_rate, fmt_rate, fmt_seconds


class RooflineHover:
    """What the cursor is over on `plot`, and its read-out."""

    def __init__(self, plot: pg.PlotItem, sweep: RooflineSweep, stage: RooflineStage, compare: RooflineCompare,
                 band: RooflineBand):
        self._plot = plot
        self._sweep = sweep
        self._stage = stage
        self._compare = compare
        self._band = band

    def _point_index(self, frame: RooflineFrame) -> list[tuple[str, float, float]]:
        out = [(p.name, p.intensity, p.attainable_flops_per_s) for p in frame.roof.points]
        out += self._sweep.hover_points()
        own = self._stage.own_point()
        if own is not None:
            out.append((STAGE_POINT, *own))
        return out + self._compare.hover_points()

    def point_at(self, frame: RooflineFrame | None, lx: float, ly: float) -> str:
        """Name of the point within HOVER_PX pixels of view position (log10 x, log10 y), or ""."""
        if frame is None:
            return ""
        px_x, px_y = px_per_decade(self._plot)
        best, best_d = "", HOVER_PX
        for name, x, y in self._point_index(frame):
            d = math.hypot((math.log10(x) - lx) * px_x, (math.log10(max(y, 1.0)) - ly) * px_y)
            if d <= best_d:
                best, best_d = name, d
        return best

    def ceiling_at(self, frame: RooflineFrame, lx: float, ly: float) -> str:
        """Name of the ceiling within 6 px of (log10 x, log10 y), or ""."""
        px_x, px_y = px_per_decade(self._plot)
        for c in frame.roof.ceilings:
            xs, _ = frame.geometry(c)
            if not math.log10(xs[0]) <= lx <= math.log10(xs[-1]):
                continue
            if c.kind == "compute":
                if abs(ly - math.log10(c.value)) * px_y < 6:
                    return c.name
            elif abs(ly - (lx + math.log10(c.value))) * px_y * px_x / math.hypot(px_x, px_y) < 6:
                return c.name
        return ""

    def text_at(self, frame: RooflineFrame | None, lx: float, ly: float) -> str:
        """The read-out under the cursor: a point's, else a ceiling's, else the band's ("" over nothing)."""
        if frame is None:
            return ""
        name = self.point_at(frame, lx, ly)
        if name:
            return self.text_for(frame, name)
        ceiling = self.ceiling_at(frame, lx, ly)
        return self.ceiling_text(frame, ceiling) if ceiling else self._band.text_at(lx, ly)

    @staticmethod
    def ceiling_text(frame: RooflineFrame, name: str) -> str:
        c = next(k for k in frame.roof.ceilings if k.name == name)
        hw = frame.hardware
        if c.kind == "compute":
            what = f"{c.name} dense peak: {fmt_flops_rate(c.value)}"
            ridge = f"ridge with HBM: {c.value / hw.hbm_bw:,.0f} FLOP/B"
        else:
            what = f"{c.name} roof ({c.detail}): {fmt_rate(c.value)} per direction"
            ridge = f"meets the {frame.roof.dtype.upper()} peak at {frame.peak / c.value:,.0f} FLOP/B"
        return f"{what}\n{ridge}\nsource: {c.source or '—'}"

    def _find_point(self, frame: RooflineFrame, name: str) -> tuple[OperatingPoint | None, str]:
        for p in frame.roof.points:
            if p.name == name:
                return p, frame.hardware.name
        return self._compare.find_point(name)

    def text_for(self, frame: RooflineFrame | None, point_name: str) -> str:
        """The read-out for an operating point (or a sweep marker): FLOPs, bytes, intensity, attainable
        FLOP/s, predicted time and the binding roof, with units."""
        if point_name in (SWEEP_GEMM, SWEEP_STEP) and self._sweep.sweep is not None:
            return self._sweep.hover_text(point_name)
        if point_name == STAGE_POINT:
            return self._stage.hover_text()
        if frame is None:
            return ""
        p, hw_name = self._find_point(frame, point_name)
        if p is None:
            return ""
        bound = "compute-bound" if p.resource == "compute" else f"bandwidth-bound ({LINK_WORDS.get(p.link, p.link)})"
        lines = [p.name + ("" if hw_name == frame.hardware.name else f" — {hw_name}"),
                 f"({p.scope})" if p.scope else "",
                 f"FLOPs: {fmt_flops(p.flops)}",
                 f"bytes: {fmt_bytes(p.bytes)} over {LINK_WORDS.get(p.link, p.link)}",
                 f"intensity: {fmt_intensity(p.intensity)}",
                 f"attainable: {fmt_flops_rate(p.attainable_flops_per_s)}",
                 f"predicted time: {fmt_seconds(p.time_s)} (roofline, datasheet peaks)",
                 f"binding roof: {p.bound_by} — {bound}"]
        if p.note:
            lines.append(p.note)
        return "\n".join(line for line in lines if line)
