"""The layout rules of MoE serving with expert parallelism (model/formulas/moe_serving.py), scalar and broadcast.

A stage of G = gpus / pp GPUs: EP is 1 (off: experts TP-split with the rest) or G on an MoE model (DeepSeek-V3
§3.4: EP32 over the 32 GPUs of a prefill unit, EP320 over the 320 of a decode unit); the attention data-parallel
degree DP divides G and needs EP (TP = G / DP must then divide the heads, checked where TP is); redundant expert
copies per GPU need EP.
"""

from __future__ import annotations

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars


def serving_rules_hold(is_moe: bool, stage_gpus, ep, attention_dp, redundant):
    """Where the EP-serving rules hold (the module docstring), broadcast over arrays."""
    g, e = xp.asarray(stage_gpus), xp.asarray(ep)
    a, r = xp.asarray(attention_dp), xp.asarray(redundant)
    ep_ok = (e == 1) | ((e == g) & is_moe)
    return ep_ok & ((a == 1) | (e > 1)) & (g % xp.maximum(a, 1) == 0) & ((r == 0) | (e > 1))


def serving_layout_problem(is_moe: bool, model_name: str, gpus: int, pp: int, ep: int, attention_dp: int,
                           redundant: int, heads: int | None = None) -> tuple[str, int, str] | None:
    """(field, value, what it must be) of the first EP-serving rule a layout breaks, or None; with `heads`, also
    that the attention TP, gpus / (pp x attention_dp), divides them where DP-attention is on."""
    stage = gpus // pp if pp > 0 and gpus % pp == 0 else None
    if ep > 1 and not is_moe:
        return "inference_ep", ep, f"1 ({model_name} has no routed experts to spread)"
    if ep > 1 and stage is not None and ep != stage:
        return "inference_ep", ep, (f"1 (off) or the GPUs of one pipeline stage, gpus / PP = {stage} (serving EP "
                                    "spreads the experts over every GPU of a stage)")
    if attention_dp > 1 and ep <= 1:
        return "attention_dp", attention_dp, "1 unless expert parallelism is on (DP-attention serves MoE with EP)"
    if stage is not None and stage % attention_dp:
        return "attention_dp", attention_dp, f"a divisor of the GPUs of one pipeline stage, gpus / PP = {stage}"
    if redundant > 0 and ep <= 1:
        return "redundant_experts", redundant, "0 unless expert parallelism is on (extra experts of EP ranks)"
    if heads and stage is not None and attention_dp > 1 and heads % (stage // attention_dp):
        return "attention_dp", attention_dp, (f"a divisor of gpus / PP = {stage} that leaves an attention TP "
                                              f"(gpus / (PP x DP-attention), now {stage // attention_dp}) dividing "
                                              f"the model's {heads} heads")
    return None
