"""The triangle's marker scale and read-out: a workload's GPU-seconds, its marker size, and the hover lines that
explain where it sits (its pressures from model/formulas/pressure.py, normalised by `barycentric`)."""

from __future__ import annotations

import math

from trinity_desktop.model import Results, barycentric
from trinity_desktop.ui import theme
from trinity_desktop.ui.units import fmt_seconds

TIME_NAMES = {"train": "step time", "prefill": "prefill time", "decode": "time per output token"}
# Marker size: log-scaled GPU-seconds (10 px at 0.01 GPU·s, +4 px per decade, 8 to 44 px).
SIZE_AT_REF, SIZE_REF_GPU_S, SIZE_PER_DECADE, SIZE_MIN, SIZE_MAX = 10.0, 0.01, 4.0, 8.0, 44.0


def gpu_seconds(results: Results) -> float:
    """Absolute scale: GPU-seconds per training step (gpus × step time), or per inference request
    (gpus × the batch's request or prefill time ÷ batch)."""
    sc = results.scenario
    if results.kind == "train":
        return sc.gpus * results.time_total
    seconds = results.infer.get("request_s", results.time_total) if results.kind == "decode" else \
        results.infer.get("prefill_s", results.time_total)
    return sc.gpus * seconds / max(sc.batch, 1)


def marker_size(gpu_s: float) -> float:
    if not (gpu_s > 0 and math.isfinite(gpu_s)):
        return SIZE_MIN
    size = SIZE_AT_REF + SIZE_PER_DECADE * (math.log10(gpu_s) - math.log10(SIZE_REF_GPU_S))
    return float(min(max(size, SIZE_MIN), SIZE_MAX))


def pressure_lines(res: Results, name: str) -> list[tuple[str, bool]]:
    """The hover read-out of one marker (text, bold): each pressure and what it means, the binding resource,
    the normalised place and the scale."""
    p = res.pressure
    w = barycentric(*p.as_tuple())
    time_name = TIME_NAMES.get(res.kind, "time")
    fit = "fits" if res.fits else "✗ does not fit"
    return [
        (name, True),
        (f"Compute pressure {p.compute:.2f}: {100 * p.compute:.0f}% of the {time_name} "
         f"({fmt_seconds(res.time_total)}) is FLOP-bound", False),
        (f"Bandwidth pressure {p.bandwidth:.2f}: {100 * p.bandwidth:.0f}% of it moves data", False),
        (f"Memory pressure {p.memory:.2f}: {res.memory_total / 1e9:.1f} GB of {res.capacity / 1e9:.0f} GB "
         f"HBM per device ({fit})", False),
        (f"Binding resource: {theme.RESOURCE_LABELS.get(res.bottleneck, res.bottleneck)}", True),
        (f"Placed at compute {w[0]:.2f} · bandwidth {w[1]:.2f} · memory {w[2]:.2f} (normalised)", False),
        (f"Scale: {gpu_seconds(res):.3g} GPU·s per {'step' if res.kind == 'train' else 'request'} "
         f"({res.scenario.gpus} GPU(s))", False),
    ]
