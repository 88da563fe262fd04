"""The roofline point of speculative decoding's verify step (#23): the target's whole decode step with γ + 1
tokens per sequence on one GPU (model/step/speculative_step.py): FLOPs (γ + 1) times the plain step's GEMM and
attention FLOPs, HBM bytes the weights once plus each sequence's KV once. Left of the ridge it costs about a plain
decode step (speculation helps); right of it the extra tokens cost compute (speculation can hurt)."""

from __future__ import annotations

from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import evaluate_grid
from trinity_desktop.model.step.speculative_step import draft_tokens_of, speculative_grid, speculative_on
from trinity_desktop.model.views.roofline_ceilings import OperatingPoint, _point


def verify_points(sc: Scenario, ceils, dtype: str, scope: str) -> list[OperatingPoint]:
    """[the verify step's point] when the scenario decodes speculatively, else []."""
    if not speculative_on(sc):
        return []
    v = speculative_grid(sc, evaluate_grid)
    q = draft_tokens_of(sc) + 1
    return [_point(f"verify step ({q} tokens per sequence)", float(v["verify_flops"]), float(v["verify_hbm_bytes"]),
                   "hbm", dtype, ceils, scope, f"speculative decoding: batch {sc.batch} × {q} tokens, weights and "
                   "KV read once", role="speculative_verify")]
