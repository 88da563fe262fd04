"""Which time-bar segments a step-through stage belongs to (the Memory and time panel follows the flow)."""

from __future__ import annotations


def time_segments_for_stage(name: str, numbers: dict, kind: str, present) -> list[str]:
    """The time-bar segments a flow stage belongs to (only those in `present`, the drawn segment names).

    Training: forward/backward/recompute compute → "compute"; the optimizer → "optimizer"; communication
    → "communication_exposed"; the 1F1B bubble → "pipeline_bubble"; waiting after the pipeline → exposed
    communication and offload; DGC selection → "gradient_compression"; host transfers → "offload_transfer";
    the prefetched data load → none. Inference: a prefill stage is the whole prefill bar, a decode step the
    whole per-token bar (each holds every segment); otherwise none."""
    present = list(present)
    n = name.lower()
    stage_kind = str(numbers.get("kind", ""))
    if kind in ("prefill", "decode"):
        whole = (kind == "prefill" and n.startswith("prefill")) or (kind == "decode" and n.startswith("decode step"))
        return present if whole else []
    if stage_kind == "idle":
        want = ["pipeline_bubble"] if "bubble" in n else ["communication_exposed", "offload_transfer"]
    elif stage_kind == "compute":
        want = ["optimizer"] if n.startswith("optimizer") else ["compute"]
    elif stage_kind == "communication":
        want = ["communication_exposed"]
    elif stage_kind == "memory-transfer":
        want = ["gradient_compression"] if "dgc" in n else ["offload_transfer"]
    else:
        want = []
    return [w for w in want if w in present]
