"""MoE serving with expert parallelism (EP) and data-parallel attention (DP-attention), per GPU. Vectorised.

A pipeline stage of G = gpus / pp GPUs serves one MoE model as DeepSeek-V3 §3.4 runs it ("deepseek-v3-serving"):
- attention (and every other non-routed weight: embeddings, dense layers, norms, routers, shared experts) is split
  over TP = G / DP heads-wise and replicated on each of the DP attention groups, each holding a 1/DP share of the
  batch and of its KV cache (DeepSeek-V3 prefill: TP4 + SP with DP8; decode: TP4 + SP with DP80). Head
  divisibility is needed only for that TP;
- the routed experts are spread over all G GPUs (EP = G; prefill EP32, decode EP320), ceil(E / EP) per GPU plus
  `redundant` extra copies of heavy-load experts per GPU (prefill: 32 redundant experts on 32 GPUs, 8 + 1 per GPU;
  decode: 256 + 64 copies on 320 GPUs, one per GPU);
- each MoE layer sends every token's hidden vector to its top-k experts and back: a dispatch all-to-all (FP8 with
  `fp8_dispatch`, §3.3.4) and a combine all-to-all (BF16, the activation format), per decode step and per prefill
  chunk. Each GPU sends its 1/G share of the tokens (DP over the attention groups, SP inside them). Prefill (and
  an EP group inside one node) moves them as training does, `comms.moe_all_to_all` (§3.4.1); decode across
  nodes sends every copy point to point over IB at once (§3.4.2; DeepEP's low-latency kernels, "deepep":
  `direct_pass`, within 8% of its measured dispatch and combine at EP 16 to 256).
With EP = 1 and DP = 1 nothing here applies: the experts are TP-split with the rest (model/step/inference.py).
The FLOPs per GPU are the same either way (the work is spread evenly over G GPUs); EP changes the weight bytes each
GPU holds and reads, the KV per GPU (DP-attention: an MLA latent is no longer replicated over G ranks), the TP
all-reduce group and adds the all-to-all.
Stated simplifications: tokens are spread evenly over the experts (what the redundant copies are for); the
all-to-all is not hidden behind a second micro-batch (DeepSeek overlaps it, so the model's throughput is a lower
bound: 0.66x (decode) and 0.79x (prefill) of the online service's per-GPU figures, "deepseek-inference-overview");
shared experts stay with the dense weights on every attention group (DeepSeek's decode hosts them as routed
experts on the 64 extra GPUs).
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.base.numeric import safe_div
from trinity_desktop.model.formulas.comms import moe_all_to_all, moe_dispatch_bytes
from trinity_desktop.model.inputs.architecture import Architecture


def serving_ep_on(ep, attention_dp, redundant):
    """Where the EP serving layout is switched on (any of EP > 1, DP-attention > 1, redundant experts > 0)."""
    return ((xp.asarray(ep, dtype=float) > 1.0) | (xp.asarray(attention_dp, dtype=float) > 1.0)
            | (xp.asarray(redundant, dtype=float) > 0.0))


def experts_per_gpu(experts: int, ep, redundant):
    """Routed experts one GPU holds: ceil(E / EP) + redundant copies (DeepSeek-V3 §3.4.1: 256 / 32 + 1 = 9)."""
    ep = xp.asarray(ep, dtype=float)
    return xp.ceil(experts / ep) + xp.asarray(redundant, dtype=float)


def expert_weight_bytes_per_gpu(arch: Architecture, weight_bytes, ep, redundant, pp):
    """Bytes of routed-expert weights on one GPU: the stage's L_moe / pp MoE layers x experts_per_gpu x one expert's
    parameters x bytes (EP = G, no expert TP)."""
    if not arch.is_moe:
        return 0.0 * xp.asarray(ep, dtype=float)
    share = experts_per_gpu(arch.experts, ep, redundant) / arch.experts
    return arch.expert_params() * xp.asarray(weight_bytes, dtype=float) * share / xp.asarray(pp, dtype=float)


def dense_weight_bytes_per_gpu(arch: Architecture, params, weight_bytes, attention_tp, pp):
    """Bytes of the non-routed weights among `params` on one GPU: (params - routed expert params) x bytes / (TP x pp);
    each attention DP group holds a whole copy (shared experts replicated with them)."""
    routed = arch.expert_params() if arch.is_moe else 0
    return (params - routed) * xp.asarray(weight_bytes, dtype=float) / (xp.asarray(attention_tp, dtype=float)
                                                                       * xp.asarray(pp, dtype=float))


@dataclass(frozen=True)
class EpTraffic:
    """One phase's EP all-to-all on one GPU, over the stage's MoE layers (dispatch + combine): seconds, bytes sent
    over the scale-out network and over the scale-up fabric."""

    time: object
    scale_out: object
    scale_up: object


def direct_pass(tokens_per_gpu, hidden, top_k, bytes_per_element, ep, link):
    """(time, bytes) of one decode all-to-all pass as DeepSeek-V3 runs it across nodes (§3.4.2: "direct
    point-to-point transfers over IB", DeepEP's low-latency kernels): every copy of a token that leaves its GPU,
    k (EP - 1) / EP of them, goes straight to its expert's GPU over the scale-out network, all sends in flight at
    once: one alpha + bytes / bandwidth. `link` is (bandwidth, alpha)."""
    ep = xp.asarray(ep, dtype=float)
    nbytes = xp.asarray(tokens_per_gpu, dtype=float) * hidden * bytes_per_element * top_k * (ep - 1.0) / ep
    bw, alpha = link
    return xp.where(ep > 1.0, alpha + safe_div(nbytes, bw), 0.0), nbytes


def ep_all_to_all(arch: Architecture, hw, tokens_per_gpu, ep, gpus_per_node, pp, act_bytes, fp8_dispatch,
                  node_limit, eff_network, decode=False) -> EpTraffic:
    """Dispatch (FP8 with `fp8_dispatch`, else the activation format) + combine (activation format) of each of
    the stage's L_moe / pp MoE layers, for the GPU's `tokens_per_gpu`. Prefill, and any EP group inside one node:
    the training all-to-all, `comms.moe_all_to_all` (DeepSeek-V3 §3.4.1: "the same method as in training", IB
    then NVLink forwarding, node-limited routing), the EP group min(ep, gpus_per_node) GPUs to a node. Decode
    across nodes: `direct_pass` over the scale-out network (§3.4.2). Zero where EP = 1."""
    if not arch.is_moe:
        zero = 0.0 * xp.asarray(tokens_per_gpu, dtype=float)
        return EpTraffic(zero, zero, zero)
    layers = arch.moe_layers / xp.asarray(pp, dtype=float)
    per_node = xp.minimum(xp.asarray(ep, dtype=float), xp.asarray(gpus_per_node, dtype=float))
    has_up = hw.scaleup_bw > 0
    out_link = (hw.scaleout_bw * eff_network, hw.scaleout_latency_s)
    in_link = (hw.scaleup_bw * eff_network if has_up else hw.scaleout_bw * eff_network,
               hw.scaleup_latency_s if has_up else hw.scaleout_latency_s)
    widths = (moe_dispatch_bytes(act_bytes, fp8_dispatch), xp.asarray(act_bytes, dtype=float))
    k, h = arch.experts_per_token, arch.hidden
    passes = [moe_all_to_all(tokens_per_gpu, h, k, w, ep, per_node, node_limit, out_link, in_link) for w in widths]
    t, b_out, b_in = (layers * (passes[0][i] + passes[1][i]) for i in range(3))
    if decode:
        direct = [direct_pass(tokens_per_gpu, h, k, w, ep, out_link) for w in widths]
        across = (xp.asarray(ep, dtype=float) > per_node) & (hw.scaleout_bw > 0)
        t = xp.where(across, layers * (direct[0][0] + direct[1][0]), t)
        b_out = xp.where(across, layers * (direct[0][1] + direct[1][1]), b_out)
        b_in = xp.where(across, 0.0, b_in)
    return EpTraffic(time=t, scale_out=b_out, scale_up=b_in)
