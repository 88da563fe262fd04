"""The trade-off explorer's geometry: the symmetric-log spend axis and its ticks, bubble sizes, and the nearest
library workload where a direction applies (model-free helpers of ui/tradeoff_panel.py)."""

from __future__ import annotations

import math

import numpy as np

from trinity_desktop.model.views import techniques as tq
from trinity_desktop.ui.axes import minus_sign

Y_TICKS = (-1000, -100, -10, -1, 0, 1, 10, 100, 1000, 10000)  # percent

SIZE_MIN_PX, SIZE_PER_WEIGHT_PX = 14.0, 34.0  # bubble diameter = 14 px + 34 px × relevance
ARROW_STRIP_PX = 6.0  # the band along each arrow that the bubbles' names keep off


def symlog(v):
    """sign(v) · log10(1 + |v|) (percent → axis units). Broadcasts."""
    v = np.asarray(v, dtype=float)
    return np.sign(v) * np.log10(1.0 + np.abs(v))


def bubble_size(relevance: float) -> float:
    return SIZE_MIN_PX + SIZE_PER_WEIGHT_PX * float(relevance)


def nearest_workload(rows, pressure: tuple[float, float, float], spent: str, saved: str):
    """The library row, nearest to `pressure` (Euclidean over the three pressures), where at least one
    technique that spends `spent` to save `saved` applies; (row, keys that apply) or (None, ())."""
    best, best_keys, best_d = None, (), math.inf
    techniques = tq.techniques_in_direction(spent, saved)
    for row in rows:
        if row.scenario is None or row.results is None:
            continue
        keys = tuple(t.key for t in techniques if tq.applicable(t, row.scenario)[0])
        d = math.dist(pressure, row.results.pressure.as_tuple())
        if keys and d < best_d:
            best, best_keys, best_d = row, keys, d
    return best, best_keys


def spaced_ticks(px_per_unit: float, min_px: float) -> list[tuple[float, str]]:
    """The spend axis's ticks (symlog position, "+10%") at least `min_px` apart on screen: from 0% outward, a
    tick closer than that to the last one kept on its side is left out (on a low chart +1% and −1% sat on 0%)."""
    kept = [0]
    for side in (1, -1):
        last = 0.0
        for v in sorted((v for v in Y_TICKS if v * side > 0), key=abs):
            pos = float(symlog(v))
            if abs(pos - last) * px_per_unit >= min_px:
                kept.append(v)
                last = pos
    return [(float(symlog(v)), f"{minus_sign(f'{v:+,d}')}%" if v else "0%") for v in sorted(kept)]
