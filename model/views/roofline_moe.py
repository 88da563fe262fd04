"""Roofline points of a decode step under MoE serving with expert parallelism (#23; model/formulas/moe_serving.py).

With EP over a stage of G GPUs and DP-attention (attention TP = G / DP), one GPU's decode step does two kinds of
GEMM at very different token counts, so they are two points:
- **dense GEMMs** (attention projections, dense layers, shared experts, the output head): its attention group's
  batch / DP sequences against the non-routed weights split over the attention TP;
  FLOPs per GPU = (all GEMM FLOPs − routed-expert FLOPs) / G; bytes = the non-routed weights on the GPU
  (`dense_weight_bytes_per_gpu`), streamed once per step.
- **expert GEMMs**: each of the GPU's n_e expert copies (`experts_per_gpu`, redundant copies included) sees
  m = b · k / (EP · n_e) tokens (b the whole batch, k experts per token; routing spread evenly over the copies, as
  the redundant experts are there for, DeepSeek-V3 §3.4); FLOPs = 2 · m · n_e · P_e per MoE layer (P_e one
  expert's parameters); bytes = the copies' weights, each read when touched (probability 1 − e^(−m), Poisson
  arrivals), plus the GEMMs' activations m · (2h + 3f) (gated: up+gate in h, out 2f; down in f, out h) per copy
  per layer. Intensity ≈ 2m / bytes-per-weight: DeepSeek-V3 decode at EP320, 56 sequences per GPU (b = 17,920),
  gives m = 448 tokens per expert, near the H800's FP8 ridge, not at b = 17,920.
- The KV-cache reads: the attention group's sequences, as `decode_terms` counts them per GPU.
Roofline conventions as model/views/roofline.py (datasheet ceilings; per output-token step, all layers, one GPU).
"""

from __future__ import annotations

import math

from trinity_desktop.model.base.dtypes import BYTES_PER_ELEMENT
from trinity_desktop.model.formulas.moe_serving import (
    dense_weight_bytes_per_gpu,
    experts_per_gpu,
    serving_ep_on,
)
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.layout import INFERENCE_ACT_BYTES
from trinity_desktop.model.views.roofline_ceilings import OperatingPoint, _point


def tokens_per_expert(sc: Scenario) -> float:
    """m = b · k / (EP · n_e): the tokens each expert copy on a GPU processes per decode step."""
    a = sc.model
    copies = sc.inference_ep * float(experts_per_gpu(a.experts, sc.inference_ep, sc.redundant_experts))
    return sc.batch * a.experts_per_token / copies


def ep_decode_points(sc: Scenario, terms: dict, ceils, dtype: str, scope: str) -> list[OperatingPoint] | None:
    """[dense GEMMs, expert GEMMs, KV-cache reads] of one GPU's decode step under EP serving (module docstring),
    or None where EP serving is off; `terms` = decode_sweep.decode_terms(sc)."""
    a = sc.model
    if not (a.is_moe and bool(serving_ep_on(sc.inference_ep, sc.attention_dp, sc.redundant_experts))):
        return None
    tp, pp, dp, gpus = float(sc.inference_tp), float(sc.pp), float(sc.attention_dp), float(sc.gpus)
    w_b = BYTES_PER_ELEMENT[sc.weight_dtype]
    m = tokens_per_expert(sc)
    n_e = float(experts_per_gpu(a.experts, sc.inference_ep, sc.redundant_experts))
    per_expert = a.expert_params() / a.experts / a.moe_layers  # one expert's parameters in one MoE layer
    layers = a.moe_layers / pp
    f, h = float(a.moe_ffn_hidden or a.ffn_hidden), float(a.hidden)
    act_per_token = (2.0 * h + (3.0 if a.gated_mlp else 2.0) * f) * INFERENCE_ACT_BYTES
    expert_flops = 2.0 * m * n_e * per_expert * layers
    expert_bytes = n_e * layers * (per_expert * w_b * -math.expm1(-m) + m * act_per_token)
    routed_total = 2.0 * sc.batch * a.experts_per_token * per_expert * a.moe_layers  # whole batch, every stage
    dense_flops = max(float(terms["gemm_flops"]) * gpus - routed_total, 0.0) / gpus
    dense_bytes = float(dense_weight_bytes_per_gpu(a, a.params_total(), w_b, tp, pp))
    return [
        _point("decode dense GEMMs (weights)", dense_flops, dense_bytes, "hbm", dtype, ceils, scope,
               f"{sc.batch / dp:,.0f} sequences of the attention group (batch {sc.batch:,} / DP {dp:.0f}) against "
               f"the non-routed {sc.weight_dtype} weights over TP {tp:.0f}", role="decode_gemms"),
        _point("decode expert GEMMs (per expert)", expert_flops, expert_bytes, "hbm", dtype, ceils, scope,
               f"{m:,.0f} tokens per expert copy (batch {sc.batch:,} × top-{a.experts_per_token} / "
               f"{sc.inference_ep * n_e:,.0f} copies on EP {sc.inference_ep}), {n_e:.0f} per GPU; weights and "
               "activations", role="decode_gemms"),
        _point("decode KV-cache reads", float(terms["attn_flops"]), float(terms["kv_read"]), "hbm", dtype,
               ceils, scope, f"attention over the average context {float(terms['context']):,.0f} tokens of the "
               f"attention group's {sc.batch / dp:,.0f} sequences ({sc.kv_dtype} KV cache)", role="decode_kv_reads")]
