"""The roofline's hover read-outs: the point or ceiling under the mouse and its numbers, with units.

Mixed into RooflinePanel, whose state (`_roof`, `_sweep`, `_compare_roofs`, `_results`) it reads.
"""

from __future__ import annotations

import math

from trinity_desktop.model.views.roofline import STAGE_POINT, OperatingPoint
from trinity_desktop.ui.roofline_style import (
    HOVER_PX,
    LINK_WORDS,
    SWEEP_GEMM,
    SWEEP_STEP,
    fmt_count,
    fmt_intensity,
)
from trinity_desktop.ui.units import fmt_bytes, fmt_flops, fmt_flops_rate, fmt_rate, fmt_seconds


class RooflineHover:
    def _point_index(self) -> list[tuple[str, float, float]]:
        out = []
        if self._roof is not None:
            out += [(p.name, p.intensity, p.attainable_flops_per_s) for p in self._roof.points]
        if self._sweep is not None:
            gx, gy = self.decode_marker()
            sx, sy = self.decode_step_marker()
            out += [(SWEEP_GEMM, gx, gy), (SWEEP_STEP, sx, sy)]
        t = self._stage_target
        if self._stage is not None and t is not None and t[0] == STAGE_POINT:
            out.append((STAGE_POINT, t[3], t[4]))
        for key, roof, _ in self._compare_roofs:
            if roof is not None:
                out += [(f"{p.name} @ {key}", p.intensity, p.attainable_flops_per_s) for p in roof.points]
        return out

    def point_at(self, lx: float, ly: float) -> str:
        """Name of the point within HOVER_PX pixels of view position (log10 x, log10 y), or ""."""
        px_x, px_y = self._px_per_decade()
        best, best_d = "", HOVER_PX
        for name, x, y in self._point_index():
            d = math.hypot((math.log10(x) - lx) * px_x, (math.log10(max(y, 1.0)) - ly) * px_y)
            if d <= best_d:
                best, best_d = name, d
        return best

    def ceiling_at(self, lx: float, ly: float) -> str:
        px_x, px_y = self._px_per_decade()
        for name, (xs, _ys) in self.ceiling_items().items():
            c = self._ceilings[name]
            if c.kind == "compute":
                if math.log10(xs[0]) <= lx <= math.log10(xs[-1]) and abs(ly - math.log10(c.value)) * px_y < 6:
                    return name
            elif math.log10(xs[0]) <= lx <= math.log10(xs[-1]):
                dy = abs(ly - (lx + math.log10(c.value))) * px_y
                if dy * px_x / math.hypot(px_x, px_y) < 6:
                    return name
        return ""

    def hover_text_at(self, lx: float, ly: float) -> str:
        name = self.point_at(lx, ly)
        if name:
            return self.hover_text_for(name)
        ceiling = self.ceiling_at(lx, ly)
        return self.ceiling_text(ceiling) if ceiling else self.band_text_at(lx, ly)

    def _hover_moved(self, lx: float, ly: float) -> None:
        name = self.point_at(lx, ly)
        if name != self._hovered:
            self._hovered = name
            self.pointHovered.emit(name)

    def _hover_left(self) -> None:
        if self._hovered:
            self._hovered = ""
            self.pointHovered.emit("")

    def ceiling_text(self, name: str) -> str:
        c = self._ceilings[name]
        hw = self._results.scenario.hardware
        if c.kind == "compute":
            what = f"{c.name} dense peak: {fmt_flops_rate(c.value)}"
            ridge = f"ridge with HBM: {c.value / hw.hbm_bw:,.0f} FLOP/B"
        else:
            what = f"{c.name} roof ({c.detail}): {fmt_rate(c.value)} per direction"
            ridge = f"meets the {self._roof.dtype.upper()} peak at {hw.peak(self._roof.dtype) / c.value:,.0f} FLOP/B"
        return f"{what}\n{ridge}\nsource: {c.source or '—'}"

    def _find_point(self, name: str) -> tuple[OperatingPoint | None, str]:
        if self._roof is not None:
            for p in self._roof.points:
                if p.name == name:
                    return p, self._results.scenario.hardware.name
        if " @ " in name:
            base, key = name.rsplit(" @ ", 1)
            for k, roof, _ in self._compare_roofs:
                if k == key and roof is not None:
                    for p in roof.points:
                        if p.name == base:
                            return p, self._hardware[key].name
        return None, ""

    def hover_text_for(self, point_name: str) -> str:
        """The read-out for an operating point (or a sweep marker): FLOPs, bytes, intensity, attainable
        FLOP/s, predicted time and the binding roof, with units."""
        if point_name in (SWEEP_GEMM, SWEEP_STEP) and self._sweep is not None:
            return self._sweep_text(point_name)
        if point_name == STAGE_POINT:
            return self._stage_hover_text()
        p, hw_name = self._find_point(point_name)
        if p is None:
            return ""
        bound = "compute-bound" if p.resource == "compute" else f"bandwidth-bound ({LINK_WORDS.get(p.link, p.link)})"
        lines = [p.name + ("" if hw_name == self._results.scenario.hardware.name else f" — {hw_name}"),
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

    def _sweep_text(self, which: str) -> str:
        s, i = self._sweep, self.slider.value()
        sc = self._results.scenario
        where = (f"batch {s.batch[i]:,.0f}, context {fmt_count(float(s.context[i]))}")
        if which == SWEEP_GEMM:
            f, b, x, a, bound = (s.gemm_flops[i], s.weights_bytes[i], s.intensity[i],
                                 s.attainable_flops_per_s[i], s.bound[i])
            title = "Decode GEMMs (weights streamed)"
        else:
            f, b, x, a, bound = (s.step_flops[i], s.step_bytes[i], s.step_intensity[i],
                                 s.step_attainable_flops_per_s[i], s.step_bound[i])
            title = "Decode step: GEMMs + KV-cache reads (one kernel on the roofline)"
        lines = [title, f"({where}; per token step, one GPU, {sc.weight_dtype} weights)",
                 f"FLOPs: {fmt_flops(float(f))}", f"bytes: {fmt_bytes(float(b))} over HBM",
                 f"intensity: {fmt_intensity(float(x))}", f"attainable: {fmt_flops_rate(float(a))}",
                 f"predicted time: {fmt_seconds(float(f) / float(a)) if a > 0 else '—'} (roofline)",
                 "binding roof: " + ("compute (" + s.dtype.upper() + ")" if bound else "HBM bandwidth"),
                 f"KV cache held: {fmt_bytes(float(s.kv_bytes[i]))}"
                 + ("" if s.fits[i] else " — weights + KV exceed 90% of HBM")]
        return "\n".join(lines)

