"""A planner's layout in words: the one wording the `plan` command and the Layout planner dock both print."""

from __future__ import annotations

from collections.abc import Mapping


def layout_text(layout: Mapping) -> str:
    """A training layout (`planner` JSON: tp, pp, dp, cp, ep, virtual_stages, zero, recompute, micro_batch, offload)
    or a serving layout (`serving_planner` JSON: tp, pp, replicas, batch, weight_dtype, kv_dtype, kv_offload)."""
    if "replicas" in layout:
        # MoE serving (#23): attention DP groups and EP, where on
        ep = (f" DP-attention{layout['attention_dp']}" if layout.get("attention_dp", 1) > 1 else "") + (
            f" EP{layout['ep']}" if layout.get("ep", 1) > 1 else "")
        return (f"TP{layout['tp']}{ep} PP{layout['pp']} × {layout['replicas']} replicas, batch {layout['batch']}, "
                f"weights {layout['weight_dtype']}, KV {layout['kv_dtype']}, KV offload {layout['kv_offload']:g}"
                + _speculative_text(layout))
    return (f"TP{layout['tp']} PP{layout['pp']} DP{layout['dp']} CP{layout['cp']} EP{layout['ep']}, "
            f"v{layout['virtual_stages']}, ZeRO-{layout['zero']}, "
            f"{'no' if layout['recompute'] == 'none' else layout['recompute']} recompute, "
            f"micro-batch {layout['micro_batch']}, offload {layout['offload']}")


def _speculative_text(layout: Mapping) -> str:
    """Speculative decoding (#23) of a serving layout: the draft and γ, or nothing when off."""
    gamma = layout.get("draft_tokens", 0)
    if not gamma:
        return ", no speculation" if "draft_tokens" in layout else ""
    drafter = f"MTP x{layout['mtp_depth']}" if layout.get("mtp_depth") else f"draft {layout['draft_model']}"
    return f", {drafter} gamma {gamma}"
