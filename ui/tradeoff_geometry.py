"""The trade-off explorer's geometry: the symmetric-log spend axis, bubble sizes, and the nearest library
workload where a direction applies (model-free helpers of ui/tradeoff_panel.py)."""

from __future__ import annotations

import math

import numpy as np

from trinity_desktop.model.views import techniques as tq

SIZE_MIN_PX, SIZE_PER_WEIGHT_PX = 14.0, 34.0     # bubble diameter = 14 px + 34 px × relevance
ARROW_STRIP_PX = 6.0   # the band along each arrow that the bubbles' names keep off


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
