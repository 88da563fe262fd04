"""Quality against storage for weight formats, from published perplexity tables (resources/quant_quality.toml),
and where the curve has a cliff.

Along the formats from fp16 to the narrowest, each step saves a share s_i of the whole storage reduction and
costs a share q_i of the whole perplexity rise. "Quality falls faster than storage shrinks" on a step where
q_i / s_i > 1; the cliff is the first such step. Bits per weight of a published file = 16 x size / fp16 size.

A second table, low-bit group quantisation of Llama-3-8B (Huang et al. 2024), gives perplexity by code bits b at
a group size g; its bits per weight as stored are b + (16 + b) / g (an fp16 scale and a b-bit zero point per
group, the GPTQ / AWQ layout of model/base/dtypes.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from trinity_desktop.model.inputs.presets import _resource_text, read_toml


@dataclass(frozen=True)
class QualityPoint:
    format: str
    model: str
    size_gib: float
    perplexity: float
    source: str


@dataclass(frozen=True)
class QualityCurve:
    """Points from widest to narrowest; bits (16 x size / fp16 size), delta_pct (perplexity rise over fp16,
    %), step_ratio[i] = q_i / s_i of the step into point i + 1, and cliff: the index of the first point reached
    by a step with ratio > 1 (None if no step)."""

    model: str
    points: tuple[QualityPoint, ...]
    bits: tuple[float, ...]
    delta_pct: tuple[float, ...]
    step_ratio: tuple[float, ...]
    cliff: int | None


@cache
def quality_points() -> tuple[QualityPoint, ...]:
    doc = read_toml("quant_quality.toml", _resource_text("quant_quality.toml"))
    return tuple(QualityPoint(p["format"], p["model"], float(p["size_gib"]), float(p["perplexity"]), p["source"])
                 for p in doc["point"])


def quality_curve(points: tuple[QualityPoint, ...] | None = None) -> QualityCurve:
    pts = tuple(sorted(points or quality_points(), key=lambda p: -p.size_gib))
    size = np.array([p.size_gib for p in pts])
    ppl = np.array([p.perplexity for p in pts])
    s = -np.diff(size) / (size[0] - size[-1])
    q = np.diff(ppl) / (ppl[-1] - ppl[0])
    ratio = q / s
    above = np.flatnonzero(ratio > 1.0)
    return QualityCurve(model=pts[0].model, points=pts, bits=tuple(float(b) for b in 16.0 * size / size[0]),
                        delta_pct=tuple(float(d) for d in 100.0 * (ppl / ppl[0] - 1.0)), step_ratio=tuple(float(r) for r in ratio),
                        cliff=int(above[0]) + 1 if above.size else None)


@dataclass(frozen=True)
class LowBitPoint:
    """One row of a low-bit table: a method at b code bits with groups of g weights, and its perplexity."""

    method: str
    model: str
    bits: int
    group: int
    perplexity: float
    fp16_perplexity: float
    source: str

    @property
    def stored_bits(self) -> float:
        """b + (16 + b) / g: the code bits plus an fp16 scale and a b-bit zero point per group."""
        return self.bits + (16.0 + self.bits) / self.group

    @property
    def delta_pct(self) -> float:
        """Perplexity rise over fp16, %."""
        return 100.0 * (self.perplexity / self.fp16_perplexity - 1.0)


@cache
def low_bit_points() -> tuple[LowBitPoint, ...]:
    doc = read_toml("quant_quality.toml", _resource_text("quant_quality.toml"))
    return tuple(LowBitPoint(p["method"], p["model"], int(p["bits"]), int(p["group"]), float(p["perplexity"]),
                             float(p["fp16_perplexity"]), p["source"]) for p in doc.get("low_bit", []))
