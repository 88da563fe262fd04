"""The trade-off explorer's hover: one technique's computed effect as lines of text (name, direction, the
saved and spent percentages, the deltas of FLOPs, time, bytes, memory and pressure, relevance and source).
Signed numbers use the typographic minus (U+2212), as the panel's title and axes."""

from __future__ import annotations

from trinity_desktop.model.formulas.pressure import RESOURCES
from trinity_desktop.model.inputs.presets import references
from trinity_desktop.model.views import techniques as tq
from trinity_desktop.ui import theme
from trinity_desktop.ui.units import fmt_bytes, fmt_flops, fmt_seconds

MEASURE_NAMES = {"compute": "hardware FLOPs", "bandwidth": "link occupancy (Σ bytes / link bandwidth)",
                 "memory": "HBM bytes per device"}


def sign(v: float) -> str:
    return "+" if v >= 0 else "−"


def signed(v: float, fmt: str = ".1f") -> str:
    """'+2.5' or '−2.5' (U+2212)."""
    return f"{sign(v)}{abs(v):{fmt}}"


def signed_bytes(v: float) -> str:
    return ("+" if v > 0 else "−" if v < 0 else "±") + fmt_bytes(abs(v))


def hover_lines(t, e) -> list[tuple[str, bool]]:
    """(text, bold) lines for technique `t` with its effect `e` (None before a scenario)."""
    ref = references()[t.citation]
    cite = f"{ref.authors} ({ref.year}). {ref.title}."
    lines = [(t.name, True), (tq.direction_label(t.spent, t.saved), False)]
    if e is None or not e.applicable:
        lines.append((e.reason if e is not None else "No scenario yet.", True))
    else:
        saved = f"{e.saved_pct:.1f}".replace("-", "−")
        lines.append((f"{theme.RESOURCE_LABELS[t.saved]} saved: {saved}% of {MEASURE_NAMES[t.saved]}", True))
        lines.append((f"{theme.RESOURCE_LABELS[t.spent]} spent: {signed(e.spent_pct)}% "
                      f"{MEASURE_NAMES[t.spent]}", True))
        lines.append((f"Δ FLOPs {sign(e.d_flops)}{fmt_flops(abs(e.d_flops))}; Δ FLOP-bound time "
                      f"{sign(e.d_compute_time)}{fmt_seconds(abs(e.d_compute_time))}; "
                      f"Δ {'step' if e.before.kind == 'train' else 'time'} "
                      f"{sign(e.d_time)}{fmt_seconds(abs(e.d_time))}", False))
        links = ", ".join(f"{k} {signed_bytes(v)}" for k, v in e.d_bytes.items())
        lines.append((f"Δ bytes per GPU: {links}", False))
        lines.append((f"Δ memory: HBM {signed_bytes(e.d_memory['hbm'])} per device "
                      f"({e.before.memory_total / 1e9:.1f} → {e.after.memory_total / 1e9:.1f} GB); host "
                      f"{signed_bytes(e.d_memory['host'])}", False))
        dp = ", ".join(f"{r} {signed(v, '.2f')}" for r, v in zip(RESOURCES, e.d_pressure, strict=True))
        lines.append((f"Δ pressure: {dp}", False))
        if t.read_pattern:
            lines.append(("Computed here, not applied on click: a scenario has one attention span for the "
                          "keys kept and the keys read.", False))
    lines.append((f"Relevance {t.relevance:.1f}: {t.relevance_basis}", False))
    if t.note:
        lines.append((t.note, False))
    lines.append((f"Source: {cite}", False))
    return lines
