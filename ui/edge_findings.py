"""The edge-architecture charts' titles: sentences computed from the curves they show (the ui/findings.py
pattern: one finding per chart, its numbers from the data, updated with it)."""

from __future__ import annotations

import numpy as np

from trinity_desktop.ui.units import fmt_bytes


def tokens_text(tokens: float) -> str:
    """A context length as a person says it: 4096 -> "4k", 131072 -> "128k"."""
    return f"{tokens / 1024:.0f}k" if tokens >= 1024 else f"{tokens:.0f}"


def speedup_chart_title(curves, name: str) -> str:
    """The hybrid's decode speed-up over attention at the shortest and longest context shown."""
    hybrid = curves.by_role("hybrid")
    lo, hi = float(hybrid.speedup[0]), float(hybrid.speedup[-1])
    return (f"{name}: {lo:.2f}× at {tokens_text(curves.context[0])} tokens, {hi:.2f}× at "
            f"{tokens_text(curves.context[-1])}")


def state_chart_title(curves, name: str) -> str:
    """At the longest context: the state each sequence keeps with attention against the hybrid."""
    attention, hybrid = curves.by_role("attention"), curves.by_role("hybrid")
    a, h = float(attention.state_bytes[-1]), float(hybrid.state_bytes[-1])
    ratio = a / h if h > 0 else np.inf
    return (f"At {tokens_text(curves.context[-1])}: {fmt_bytes(h)} per sequence, {ratio:.1f}× less than "
            f"attention's {fmt_bytes(a)}")
