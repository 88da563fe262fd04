"""Slide transitions: intermediate Results between two scenarios, so bars, markers and curves glide.

Numbers that both results share (memory and time components, bytes per link, pressures, totals) are
interpolated linearly; anything else takes the target's value. Results of different kinds (a training
step and a decode step) have nothing to glide between, so the transition jumps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from trinity_desktop.model import Pressure, Results

DURATION_MS = 300


def _mix(a: float, b: float, t: float) -> float:
    return a + (b - a) * t


def _mix_map(a: Mapping[str, float], b: Mapping[str, float], t: float) -> dict[str, float]:
    return {k: _mix(a.get(k, 0.0), v, t) for k, v in b.items()}


def can_glide(a: Results, b: Results) -> bool:
    return a.kind == b.kind and set(a.memory) == set(b.memory) and set(a.time) == set(b.time)


def interpolate(a: Results, b: Results, t: float) -> Results:
    """Results a fraction t (0..1) of the way from a to b; t = 1 gives b itself."""
    if t >= 1.0 or not can_glide(a, b):
        return b
    p = Pressure(*(_mix(x, y, t) for x, y in zip(a.pressure.as_tuple(), b.pressure.as_tuple(), strict=True)))
    return dataclasses.replace(
        b, memory=_mix_map(a.memory, b.memory, t), memory_total=_mix(a.memory_total, b.memory_total, t),
        capacity=_mix(a.capacity, b.capacity, t), time=_mix_map(a.time, b.time, t),
        time_total=_mix(a.time_total, b.time_total, t), flops=_mix(a.flops, b.flops, t),
        bytes_by_link=_mix_map(a.bytes_by_link, b.bytes_by_link, t), pressure=p,
        train=_mix_map(a.train, b.train, t), infer=_mix_map(a.infer, b.infer, t))
