"""What the step-through flow says about a bar or a phase: role colours, the legend, the side read-out and
the hover text and the time ticks (ui/flow_panel.py draws them)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from trinity_desktop.model.views.phases import Phase
from trinity_desktop.model.views.request_stages import POOL_LANES
from trinity_desktop.model.views.stages import Stage
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.stage_labels import LEGEND_ROLE_OF_STAGE, LEGEND_TEXT
from trinity_desktop.ui.units import fmt_bytes, fmt_flops, fmt_flops_rate, fmt_seconds, unbroken_units

# Roles of a bar -> (colour, legend text). Okabe-Ito colours; compute is the theme's compute colour and
# communication the theme's bandwidth colour; idle is light grey with hatching. Forward (orange) and backward
# (reddish purple) differ in hue and lightness, so they stay apart for colour-blind viewers too.
ROLE_COLORS = {
    "forward": theme.RESOURCE_COLORS["compute"],   # orange
    "backward": theme.ACCENT_COLORS["pink"],                          # reddish purple
    "recompute": theme.ACCENT_COLORS["yellow"],                         # yellow
    "communication": theme.RESOURCE_COLORS["bandwidth"],  # blue
    "memory-transfer": theme.RESOURCE_COLORS["memory"],   # bluish green
    "optimizer": theme.FOCUS_COLOR,                         # vermillion
    "io": theme.ACCENT_COLORS["sky"],                                # sky blue
    "idle": theme.MUTED_COLOR,
    "bandwidth-bound": theme.RESOURCE_COLORS["bandwidth"],
    "compute-bound": theme.RESOURCE_COLORS["compute"],
    "memory-bound": theme.RESOURCE_COLORS["memory"],
    "draft": theme.ACCENT_COLORS["pink"],  # speculative decoding (#23): the draft's steps (inference only)
}
ROLE_LABELS = LEGEND_TEXT
PER_GPU_LANES = ("stage 0", "GPU (TP group)", "DP network", "host link", "host CPU",  # one GPU's view
                 *POOL_LANES)  # disaggregated serving (#23): one GPU of each pool


def role_of(stage: Stage, kind: str) -> str:
    """The legend role of a stage (colour key). Inference: KV offload/onload transfers are "memory-transfer",
    prefill and decode are coloured by their binding resource."""
    if kind != "train":
        if stage.role == "speculative_draft":  # speculative decoding (#23); its verify steps keep their binding
            return "draft"
        return "memory-transfer" if stage.kind == "memory-transfer" else f"{stage.binding}-bound"
    if stage.kind in ("idle", "io", "communication", "memory-transfer"):
        return stage.kind
    return LEGEND_ROLE_OF_STAGE.get(stage.role, "forward")


HIDDEN_MARK = "(communication hidden behind it)"  # train_stages' name of a compute bar that hides traffic


def overlap_line(train: dict) -> str:
    """The step's communication, hidden versus exposed (Results.train: communication_total / _overlapped;
    model/formulas/overlap.py), or "" where the step moves nothing."""
    total = train.get("communication_total", 0.0)
    if total <= 0:
        return ""
    hidden = train.get("communication_overlapped", 0.0)
    return (f"Communication per step: {fmt_seconds(total)}, {fmt_seconds(hidden)} hidden behind compute, "
            f"{fmt_seconds(max(0.0, total - hidden))} exposed")


def phase_html(ph: Phase, items: Sequence[Stage], train: dict | None = None) -> str:
    """The side read-out of one phase: its span, and per GPU (one GPU of pipeline stage 0) its busy time,
    FLOPs and bytes; for training (`train` = Results.train) the step's hidden and exposed communication."""
    own = [items[i] for i in ph.members if items[i].lane in PER_GPU_LANES]
    busy = sum(st.duration_s for st in own)
    flops = sum(st.flops for st in own)
    moved: dict[str, float] = {}
    for st in own:
        for k, v in st.bytes_by_link.items():
            moved[k] = moved.get(k, 0.0) + v
    lanes = list(dict.fromkeys(items[i].lane for i in ph.members))
    lines = [f"<b>{pw.html_escape(ph.name[:1].upper() + ph.name[1:])}</b>",
             f"<span style='color:{pw.secondary_text()}'>{len(ph.members):,} bar{'s' if len(ph.members) != 1 else ''} "
             f"on {pw.html_escape(', '.join(lanes) if len(lanes) <= 4 else f'{len(lanes)} lanes, {lanes[0]} to {lanes[-1]}')}"
             "</span>",
             f"{fmt_seconds(ph.start_s)} → {fmt_seconds(ph.end_s)} (spans {fmt_seconds(ph.duration_s)})",
             f"Busy per GPU: {fmt_seconds(busy)}"]
    if flops > 0:
        lines.append(f"FLOPs per GPU: {fmt_flops(flops)}")
    used = [(k, v) for k, v in moved.items() if v > 0]
    lines.append("Bytes per GPU: " + (", ".join(f"{k} {fmt_bytes(v)}" for k, v in used) if used else "none"))
    if train and overlap_line(train):
        lines.append(overlap_line(train))
    if ph.name in ("forward", "backward"):
        lines.append("1F1B interleaves the micro-batches' forwards and backwards on every stage.")   # a fact:
        # the read-out is on slides too, where the "1F1B detail" box that steps through them is hidden
    return unbroken_units("<br>".join(lines))


def stage_html(st: Stage, capacity: float | None = None) -> str:
    """The side read-out of one stage (rich text)."""
    color = theme.RESOURCE_COLORS.get(st.binding, theme.plot_text_color())
    lines = [f"<b>{pw.html_escape(st.name)}</b>",
             f"<span style='color:{pw.secondary_text()}'>{pw.html_escape(st.lane)} · {st.kind}</span>",
             f"{fmt_seconds(st.start_s)} → {fmt_seconds(st.end_s)} (lasts {fmt_seconds(st.duration_s)})"]
    if st.flops > 0:
        rate = st.flops / st.duration_s if st.duration_s > 0 else 0.0
        lines.append(f"FLOPs per GPU: {fmt_flops(st.flops)} ({fmt_flops_rate(rate)})")
    moved = [(k, v) for k, v in st.bytes_by_link.items() if v > 0]
    if moved:
        lines.append("Bytes per GPU: " + ", ".join(f"{k} {fmt_bytes(v)}" for k, v in moved))
    else:
        lines.append("Bytes per GPU: none")
    if HIDDEN_MARK in st.name:
        lines.append("Its bytes include communication that runs behind this compute (an overlap option is on)")
    hbm, host = st.live_memory_by_tier.get("hbm", 0.0), st.live_memory_by_tier.get("host", 0.0)
    mem = f"Live memory: HBM {hbm / 1e9:.1f} GB"
    if capacity is not None:
        mem += f" of {capacity / 1e9:.0f} GB"
    if host > 0:
        mem += f", host {host / 1e9:.1f} GB"
    for tier, label in (("cxl", "CXL"), ("ssd", "SSD")):
        v = st.live_memory_by_tier.get(tier, 0.0)
        if v > 0:
            mem += f", {label} {v / 1e9:.1f} GB"
    lines.append(mem)
    lines.append(f"Binding: <b><span style='color:{color}'>{theme.RESOURCE_LABELS.get(st.binding, st.binding)}"
                 f"</span></b>")
    return unbroken_units("<br>".join(lines))


def stage_hover_text(st: Stage) -> str:
    """The hover read-out of one bar (plain text)."""
    text = (f"{st.name}\n{st.lane}: {fmt_seconds(st.start_s)} → {fmt_seconds(st.end_s)} "
            f"({fmt_seconds(st.duration_s)})")
    if st.flops > 0:
        text += f"\n{fmt_flops(st.flops)} per GPU"
    moved = [(k, v) for k, v in st.bytes_by_link.items() if v > 0]
    if moved:
        text += "\n" + ", ".join(f"{k} {fmt_bytes(v)}" for k, v in moved)
    return text + f"\nbinding: {st.binding}"


def time_ticks(lo: float, hi: float, scale: float, count: int = 4) -> list[tuple[float, str]]:
    """About `count` round ticks over [lo, hi] (axis units, seconds × `scale`), each labelled with its own
    unit (fmt_seconds), so a zoomed phase of 41.6 µs reads "20 µs", not "2e-05"."""
    span = max(hi - lo, 1e-15)
    raw = span / count
    step = 10.0 ** math.floor(math.log10(raw))
    step *= next((m for m in (1, 2, 5, 10) if step * m >= raw), 10)
    first = math.ceil(lo / step) * step
    return [(v, fmt_seconds(v / scale)) for v in np.arange(first, hi + step * 1e-9, step)]

