"""The planner's hover read-outs as rich text: a Pareto dot (its layout, its numbers, its p05-p95 bar, what binds
it) and a cell of the 2-D map (the two axis values and the best step time over every other axis)."""

from __future__ import annotations

import math

from trinity_desktop.model.search.layouts import layout_text
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.planner_search import axis_value
from trinity_desktop.ui.units import fmt_bytes, fmt_seconds


def point_text(c, bar: str) -> str:
    """Pareto candidate `c` (training or serving) with `bar`, its uncertainty bar's text ("" when hidden)."""
    r = c.results
    if r.kind == "train":
        numbers = (f"{fmt_seconds(r.time_total)} per step, {fmt_bytes(r.memory_total)} per GPU, "
                   f"MFU {r.train['mfu'] * 100:.1f}%")
    else:
        numbers = (f"{c.tokens_per_s_per_gpu:,.0f} tokens/s per GPU, TPOT {fmt_seconds(c.tpot_s)}, "
                   f"TTFT {fmt_seconds(r.infer['prefill_s'])}")
    return pw.hover_html([(layout_text(c.layout), True), (numbers, False)] + ([(bar, False)] if bar else [])
                         + [(f"bound by {r.bottleneck}; click to load", False)])


def map_cell_text(plan, x: float, y: float) -> str:
    """The training plan's map cell under map coordinates (x, y), or "" outside the map (or with no map)."""
    if plan is None or getattr(plan, "map_time", None) is None:
        return ""
    i, j = int(math.floor(x)), int(math.floor(y))
    if not (0 <= i < plan.map_time.shape[0] and 0 <= j < plan.map_time.shape[1]):
        return ""
    ax, ay = plan.map_axes
    where = f"{axis_value(ax, plan.map_values[0][i])}, {axis_value(ay, plan.map_values[1][j])}"
    t = plan.map_time[i, j]
    what = (f"best step time {fmt_seconds(t)} (over every other axis)" if math.isfinite(t)
            else "no layout fits" if plan.map_valid[i, j] else "no valid layout")
    return pw.hover_html([(where, True), (what, False)])
