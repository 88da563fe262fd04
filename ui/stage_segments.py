"""Which time-bar segments a step-through stage belongs to (the Memory and time panel follows the flow)."""

from __future__ import annotations


def time_segments_for_stage(numbers: dict, kind: str, present) -> list[str]:
    """The time-bar segments a flow stage belongs to, by the stage's `role` (only those in `present`, the drawn
    segment names).

    Training: forward/backward/recompute compute → "compute"; the optimizer → "optimizer"; communication
    → "communication_exposed"; the 1F1B bubble → "pipeline_bubble"; waiting after the pipeline → exposed
    communication and offload; DGC selection → "gradient_compression"; host transfers → "offload_transfer";
    the prefetched data load → none. Inference: a prefill stage is the whole prefill bar, a decode step the
    whole per-token bar (each holds every segment); otherwise none."""
    present = list(present)
    role = str(numbers.get("role", ""))
    stage_kind = str(numbers.get("kind", ""))
    if kind in ("prefill", "decode"):
        return present if role == kind else []
    if stage_kind == "idle":
        want = ["pipeline_bubble"] if role == "bubble" else ["communication_exposed", "offload_transfer"]
    elif stage_kind == "compute":
        want = ["optimizer"] if role in ("optimizer", "optimizer_host") else ["compute"]
    elif stage_kind == "communication":
        want = ["communication_exposed"]
    elif stage_kind == "memory-transfer":
        want = ["gradient_compression"] if role == "grad_compress" else ["offload_transfer"]
    else:
        want = []
    return [w for w in want if w in present]
