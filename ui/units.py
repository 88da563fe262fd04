"""Formatting SI values for people. Decimal units (GB = 1e9 B) everywhere; each string names its unit."""

from __future__ import annotations

import math
import re

_PREFIXES = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]


def _scaled(value: float, unit: str, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    mag = abs(value)
    for factor, prefix in _PREFIXES:
        if mag >= factor:
            return f"{value / factor:.{digits}g} {prefix}{unit}"
    return f"{value:.{digits}g} {unit}"


def fmt_bytes(value: float) -> str:
    """Bytes in decimal units: 80e9 -> '80 GB'."""
    return _scaled(value, "B")


def fmt_flops(value: float) -> str:
    return _scaled(value, "FLOP")


def fmt_flops_rate(value: float) -> str:
    return _scaled(value, "FLOP/s")


def fmt_rate(value: float, unit: str = "B/s") -> str:
    return _scaled(value, unit)


def fmt_seconds(value: float) -> str:
    """Seconds with a sensible unit, 3 significant figures: 0.0123 -> '12.3 ms'; 1070.4 -> '1,070 s' (never
    '1.07e+03 s'); a value that rounds up to 1000 of a unit reads in the next one (0.9999 -> '1 s')."""
    if value is None or not math.isfinite(value):
        return "—"
    rounded = float(f"{value:.3g}")
    mag = abs(rounded)
    if mag >= 1000.0:   # whole seconds, thousands separated
        return f"{rounded:,.0f} s"
    if mag >= 1.0 or mag == 0:
        return f"{rounded:.3g} s"
    for scale, unit in ((1e3, "ms"), (1e6, "µs")):
        if mag * scale >= 1.0:
            return f"{rounded * scale:.3g} {unit}"
    return f"{value * 1e9:.3g} ns"


def choose_time_unit(seconds: float) -> tuple[float, str]:
    """(scale, unit) so that seconds * scale reads well: s, ms or µs."""
    mag = abs(seconds) if math.isfinite(seconds) else 0.0
    if mag >= 1.0 or mag == 0.0:
        return 1.0, "s"
    if mag >= 1e-3:
        return 1e3, "ms"
    return 1e6, "µs"


def fmt_value(value: float, unit: str) -> str:
    """A number with its unit, 3 significant figures, never NaN."""
    if value is None or not math.isfinite(value):
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:.3g} {unit}"


_NUMBER_UNIT = re.compile(r"(?<=\d) (?=(?:[kMGTP]i?)?(?:B|FLOP|B/s|FLOP/s)\b|(?:ms|µs|ns|s|h)\b|tokens?/s\b)")


def unbroken_units(html: str) -> str:
    """Rich text whose numbers stay on one line with their units ("537&nbsp;MB"): a wrapped read-out split
    "537 / MB" across two lines."""
    return _NUMBER_UNIT.sub("&nbsp;", html)
