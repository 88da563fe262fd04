"""Which roofline operating point a step-through stage is: the flow panel drives the roofline with it.

A stage is matched by its role id (model/views/stages.ROLES) to the points' role ids (`POINT_ROLES`), never by
its name; a stage with FLOPs, bytes and a duration is also drawn as its own kernel (intensity FLOPs / bytes,
attainable FLOPs / stage time, Williams et al. 2009).
"""

from __future__ import annotations

import math

# --- which operating point a step-through stage is (the flow panel drives the roofline with it) -------
STAGE_POINT = "highlighted stage (FLOPs ÷ bytes, FLOPs ÷ stage time)"


def stage_bytes(numbers: dict) -> tuple[float, str]:
    """(bytes, link) a stage streams: its HBM bytes, or its largest link's when it moves none over HBM."""
    links = {k: float(v) for k, v in dict(numbers.get("bytes_by_link") or {}).items()
             if math.isfinite(float(v)) and float(v) > 0}
    if links.get("hbm", 0.0) > 0:
        return links["hbm"], "hbm"
    if not links:
        return 0.0, ""
    link = max(links, key=links.get)
    return links[link], link


def stage_duration(numbers: dict) -> float:
    d = numbers.get("duration_s")
    if d is None:
        d = float(numbers.get("end_s", 0.0)) - float(numbers.get("start_s", 0.0))
    d = float(d)
    return d if math.isfinite(d) and d > 0 else 0.0


DP_STAGE_ROLES = ("dp_grad_sync", "zero3_gather_fwd", "zero3_gather_bwd", "zero3_gather_prefetched",
                  "zero3_gather_exposed", "param_gather")
KERNEL_STAGE_ROLES = ("forward", "backward", "steady", "prefill")


def stage_operating_point(numbers: dict, point_roles: dict[str, str]) -> tuple[str, tuple[str, ...], str]:
    """Which roofline point a flow stage corresponds to: (primary, related, note), matched by the stage's
    `role` (model/views/stages.ROLES) and the points' roles (`point_roles`: point name -> `POINT_ROLES` id).

    `primary` is an operating point name, `STAGE_POINT` (the stage drawn as one kernel at intensity
    FLOPs / bytes and attainable FLOPs / stage time, when it has both) or "" (no point: `note` says why);
    `related` are the kernels the stage is made of (circled lightly). Forward, backward, steady 1F1B and
    prefill stages → their own point, related to the layer's GEMMs and the selected attention; recompute →
    the attention (selective, FlashAttention) or the GEMMs (full); TP collectives → the TP all-reduce;
    DP gradient sync and ZeRO gathers → the DP gradient point; the optimizer → the optimizer step; decode
    steps → their own point, related to the decode GEMM and KV-read points."""
    role = str(numbers.get("role", ""))
    kind = str(numbers.get("kind", ""))
    flops = float(numbers.get("flops", 0.0) or 0.0)
    nbytes, _ = stage_bytes(numbers)
    own = math.isfinite(flops) and flops > 0 and nbytes > 0 and stage_duration(numbers) > 0

    def named(*roles: str) -> list[str]:
        return [name for name, r in point_roles.items() if r in roles]

    gemms, attention, dp = named("gemm"), named("attention"), named("dp_grad_sync")
    if role in ("bubble", "waiting"):
        return "", (), "idle: no kernel runs, no point"
    if role == "optimizer_host":
        return "", (), "runs on the host CPU: no GPU point"
    if role == "optimizer":
        opt = named("optimizer")
        return (opt[0], (), "") if opt else ("", (), "no optimizer point")
    if role in DP_STAGE_ROLES:
        return (dp[0], (), "") if dp else ("", (), "no DP gradient point (data parallelism 1)")
    if kind == "communication":
        tp = named("tp_allreduce")
        if role in ("forward_tp_comm", "backward_tp_comm") and tp:
            return tp[0], (), ""
        return "", (), "PP send / CP / EP traffic: no point"
    if kind != "compute":
        return "", (), f"{kind or 'transfer'}: no point (host or HBM traffic only)"
    if role == "speculative_draft":  # speculative decoding (#23)
        return "", (), "the draft model's step: its own kernels, no point"
    if role == "speculative_verify":
        verify = named("speculative_verify")
        return (verify[0], (), "") if verify else ("", (), "no verify point")
    if role == "decode":
        related = named("decode_gemms", "decode_kv_reads")
    elif role == "recompute_attention":
        related = attention
    elif role == "recompute_layer":
        related = gemms + attention
    elif role in KERNEL_STAGE_ROLES:
        related = gemms + attention
    else:
        return "", (), "no operating point on the roofline"
    if own:
        return STAGE_POINT, tuple(related), ""
    if related:
        return related[0], tuple(related[1:]), ""
    return "", (), "no operating point on the roofline"
