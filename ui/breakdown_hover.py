"""The breakdown panel's hover read-outs as text: a memory component, the live memory of the followed stage, the
HBM capacity line, a time segment. Plain functions of the numbers drawn (GB, seconds), so each reads the same
wherever the panel's geometry put the mouse."""

from __future__ import annotations

from trinity_desktop.model.formulas.memory import MEMORY_PART_NOTES
from trinity_desktop.ui import theme
from trinity_desktop.ui.units import fmt_seconds


def share(part: float, total: float) -> str:
    """`part` as a whole-number percentage of `total` ("<1%" for a sliver, "—" when there is no total)."""
    if total <= 0:
        return "—"
    s = part / total
    return "<1%" if 0 < s < 0.005 else f"{100 * s:.0f}%"


def live_memory_text(stage: str, live_gb: float, host_gb: float, cap_gb: float) -> str:
    """The followed stage's live memory per GPU in HBM (and host memory, where it offloads) against capacity."""
    return (f"Live at {stage}\n{live_gb:.2f} GB per GPU in HBM"
            + (f" + {host_gb:.2f} GB in host memory" if host_gb > 0 else "")
            + f"\n{share(live_gb, cap_gb)} of HBM {cap_gb:.0f} GB")


def capacity_text(cap_gb: float, hardware: str) -> str:
    return f"HBM capacity: {cap_gb:.0f} GB per GPU ({hardware})"


def memory_part_text(name: str, gb: float, total_gb: float, cap_gb: float, extra_lines: list[str] | None = None) -> str:
    """One memory component: GB per GPU, its share of the memory used, what it holds (memory.MEMORY_PART_NOTES)
    and any `extra_lines` (the activations' recompute claim)."""
    note = MEMORY_PART_NOTES.get(name, "")
    text = (f"{theme.label_for(name)}\n{gb:.2f} GB per GPU\n"
            f"{share(gb, total_gb)} of {total_gb:.1f} GB used; HBM {cap_gb:.0f} GB" + (f"\n{note}" if note else ""))
    return text if extra_lines is None else text + "\n" + "\n".join(extra_lines)


def time_part_text(name: str, seconds: float, total_s: float, title: str) -> str:
    """One time segment: its seconds and its share of the step (or prefill, or output token) time `title`."""
    return (f"{theme.label_for(name, 'time')}\n{fmt_seconds(seconds)}\n"
            f"{share(seconds, total_s)} of {title} ({fmt_seconds(total_s)})")
