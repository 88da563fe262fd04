"""Where the KV cache lives: placement over the memory tiers, and the effective decode step time.

Placement (per GPU, tensor parallelism as in `inference`): weights and the reserved runtime share (vLLM's
gpu_memory_utilization = 0.9: 10% for activations, CUDA graphs and the runtime; `inference.RESERVED_FRACTION`)
are pinned in HBM. The KV cache needed is sessions x kept_tokens(context) x KV bytes per token per GPU
(kept_tokens: the scenario's KV policy, `kv_policy`; bytes per token: `inference.kv_bytes_per_token` at the
scenario's KV dtype; vllm §3). It fills the tiers fastest first, HBM (what weights and the reserve leave),
host DRAM, the CXL pool, NVMe SSD (`tiers.tiers_for`). Policy "spill" moves what HBM cannot hold to the next
tier; policy "evict" drops it (the tokens are reported as evicted). Remote memory over RDMA is drawn in the
hierarchy but not used for KV spill. A scenario with kv_offload_fraction f > 0 (FlexGen-style offload, flexgen)
forces that share out of HBM: HBM offers at most (1 - f) of the cache and host DRAM takes the rest first (under
"evict" too, host DRAM then holds the forced share).

Effective decode step time (no overlap of transfers with compute, a stated assumption):
    t = t_weights + t_TP + t_attn · placed/needed + Σ_{tier ≠ HBM} [ bytes_tier / (B_tier · η_net)
                                                                   + ceil(bytes_tier / page) · latency_tier ]
t_weights (with the fixed cost per layer and step, formulas/decode_costs.py), t_TP and t_attn are the core's decode
roofline terms (`inference.inference_step`, Williams et al.
2009) at a cache of `context` tokens (all KV read from HBM once per step); off-HBM KV is additionally moved
over its tier's link at the scenario's network efficiency η_net each step. A page is vLLM's block of 16 tokens
(vllm; memory_tiers.toml) x KV bytes per token per GPU, fetched as one transfer. Every function broadcasts
over context and sessions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.dtypes import BYTES_PER_ELEMENT
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.base.numeric import safe_div
from trinity_desktop.model.formulas.kv_policy import KV_POLICY_CODE, arch_kept, kept_tokens
from trinity_desktop.model.inputs.scenario import MAX_CONTEXT_TOKENS, Scenario
from trinity_desktop.model.inputs.tiers import page_tokens, tier_map
from trinity_desktop.model.step.inference import kv_bytes_per_token
from trinity_desktop.model.step.run import infer_step_at

RESIDENCY_TIERS = ("hbm", "host", "cxl", "ssd")
PLACEMENT_POLICIES = ("spill", "evict")
MAX_CONTEXT = MAX_CONTEXT_TOKENS
MAX_SESSIONS = 1 << 20


def default_context_axis(n: int = 161) -> np.ndarray:
    """4,096 ... 1,048,576 tokens, log-spaced whole numbers."""
    return np.unique(np.round(np.geomspace(4096, 1 << 20, n)))


def default_sessions_axis(n: int = 121) -> np.ndarray:
    """1 ... 1,024 concurrent sessions, log-spaced whole numbers."""
    return np.unique(np.round(np.geomspace(1, 1024, n)))


def serving_scenario(scenario: Scenario) -> Scenario:
    """The decode scenario whose cache is placed: a decode or prefill scenario as it is; a training
    scenario is served on one tensor-parallel group of its layout (tp GPUs, no pipeline, its inference fields)."""
    if scenario.kind == "decode":
        return scenario
    if scenario.kind == "prefill":
        return scenario.replace(kind="decode")
    return scenario.replace(kind="decode", gpus=scenario.tp, pp=1, inference_ep=1, attention_dp=1,
                            redundant_experts=0,  # one TP group: no serving EP (#23)
                            prefill_gpus=0, decode_gpus=0)  # nor pools, which training ignores (#26)


def _check_axis(name: str, values, upper: int) -> np.ndarray:
    a = np.asarray(values, dtype=float)
    if a.size == 0 or not np.all(np.isfinite(a)) or np.any(a < 1) or np.any(a > upper):
        bad = a[~(np.isfinite(a) & (a >= 1) & (a <= upper))] if a.size else a
        raise ValidationError(name, float(bad.ravel()[0]) if bad.size else values, f"numbers from 1 to {upper}")
    return a


@dataclass(frozen=True)
class KvResidency:
    """Placement of the KV cache over the memory tiers and the effective decode step (module docstring's
    formula; vllm §3 pages, memory_tiers.toml tiers). Bytes per GPU, seconds; arrays over context x sessions."""

    context: object                  # tokens cached per sequence
    sessions: object                 # concurrent sequences
    policy: str                      # "spill" or "evict"
    tiers: tuple                     # the tiers the hardware has, fastest first
    resident: Mapping[str, object]   # tier -> KV bytes it holds
    capacity: Mapping[str, object]   # tier -> bytes it offers the KV cache
    tier_capacity: Mapping[str, float]  # tier -> its full capacity
    hbm_free_bytes: object           # HBM the weights and the reserve leave for the KV cache (its capacity line)
    needed: object                   # the KV cache the sessions need
    placed: object
    unplaced_bytes: object           # spill: beyond every tier
    evicted_bytes: object            # evict: dropped, total over sessions
    evicted_tokens: object
    time_by_tier: Mapping[str, object]  # tier -> seconds of its share of the step
    base_time_s: object              # weights + TP + PP + fixed + EP
    step_time_s: object
    tokens_per_s: object
    hbm_share: object                # share of the needed cache in HBM
    weights_bytes: object
    reserved_bytes: object
    weights_fit: object              # weights + runtime reserve fit in HBM
    kv_bytes_per_token_gpu: float
    page_bytes: float
    page_tokens: int
    gpus: int


@dataclass(frozen=True)
class KvResidencyAt(KvResidency):
    """The current point (`residency_at`): placement at the end of the request, as scalars, with the effective
    time per output token at the average context."""

    effective_time_per_output_token_s: float = 0.0
    effective_tokens_per_s: float = 0.0


def residency_curve(scenario: Scenario, context=None, sessions=None, policy: str = "spill") -> KvResidency:
    """Placement and effective decode step time over context length and/or concurrent sessions.

    `context`: tokens cached per sequence (prompt + generated so far); default 4k ... 1M tokens when neither
    axis is given, else the scenario's prompt_len + gen_len. `sessions`: concurrent sequences (the batch),
    default the scenario's batch. Both broadcast. Returns a `KvResidency` of arrays (bytes per GPU, seconds).
    """
    if policy not in PLACEMENT_POLICIES:
        raise ValidationError("policy", policy, "one of " + ", ".join(PLACEMENT_POLICIES))
    sc = serving_scenario(scenario)
    if context is None and sessions is None:
        context = default_context_axis()
    if context is None:
        context = sc.prompt_len + sc.gen_len
    if sessions is None:
        sessions = sc.batch
    c, b = np.broadcast_arrays(_check_axis("context", context, MAX_CONTEXT),
                               _check_axis("sessions", sessions, MAX_SESSIONS))
    c, b = c.astype(float), b.astype(float)
    # The core's decode step at a cache of c tokens: prompt c, nothing generated (its ctx = s + g/2 = c).
    # The whole cache as if it were in HBM; the forced offload share is placed below, by tier.
    f_off = float(sc.kv_offload_fraction)
    r = infer_step_at(sc, kv_offload_fraction=0.0, prompt_len=c, gen_len=np.zeros_like(c), batch=b)
    weights = np.broadcast_to(r.memory.weights, c.shape).astype(float)
    reserved = np.broadcast_to(r.memory.reserved, c.shape).astype(float)
    needed = np.broadcast_to(r.memory.kv_cache, c.shape).astype(float)
    # one GPU holds its TP share of the KV of its pipeline stage's layers / pp (the step's own figure)
    kv_tok_gpu = float(r.kv_bytes_per_token_gpu)
    page = page_tokens() * kv_tok_gpu

    tiers = tier_map(sc.hardware)
    full = {name: tiers[name].capacity_bytes if name in tiers else 0.0 for name in RESIDENCY_TIERS}
    hbm_free = np.maximum(full["hbm"] - weights - reserved, 0.0)
    capacity = {"hbm": np.minimum(hbm_free, needed * (1.0 - f_off))}
    for name in RESIDENCY_TIERS[1:]:
        capacity[name] = np.full(c.shape, full[name] if policy == "spill" else 0.0)
    target = sc.kv_offload_tier  # the forced offload share lives on its target tier (host DRAM or CXL)
    capacity[target] = np.maximum(capacity[target], np.minimum(needed * f_off, full[target]))
    resident, below = {}, np.zeros(c.shape)
    order = ("hbm", target) + tuple(n for n in RESIDENCY_TIERS if n not in ("hbm", target))
    for name in order:  # a loop over the four tiers, not over configurations
        resident[name] = np.clip(needed - below, 0.0, capacity[name])
        below = below + capacity[name]
    placed = sum(resident.values())
    dropped = needed - placed
    evicted = dropped if policy == "evict" else np.zeros(c.shape)
    unplaced = dropped if policy == "spill" else np.zeros(c.shape)

    dt = r.decode_time
    # weights, TP, PP, fixed costs and (MoE serving, #23) the EP all-to-all
    base = np.broadcast_to(dt.gemms + dt.tp_comm + dt.pp_comm + dt.fixed + dt.ep_comm, c.shape).astype(float)
    attn = np.broadcast_to(dt.attention, c.shape).astype(float)
    attn_per_byte = safe_div(attn, needed)
    eta = sc.efficiency.network
    time_by_tier = {}
    for name in RESIDENCY_TIERS:
        t = attn_per_byte * resident[name]
        if name != "hbm" and name in tiers:
            tier = tiers[name]
            t = t + resident[name] / (tier.bandwidth * eta) + np.ceil(safe_div(resident[name], page)) * tier.latency_s
        time_by_tier[name] = t
    step = base + sum(time_by_tier.values())
    return KvResidency(
        context=c, sessions=b, policy=policy, tiers=tuple(n for n in RESIDENCY_TIERS if n in tiers),
        resident=resident, capacity=capacity, tier_capacity=full, hbm_free_bytes=hbm_free, needed=needed, placed=placed,
        unplaced_bytes=unplaced, evicted_bytes=evicted, evicted_tokens=safe_div(evicted, kv_tok_gpu),
        time_by_tier=time_by_tier, base_time_s=base, step_time_s=step,
        tokens_per_s=safe_div(b, step), hbm_share=np.where(needed > 0, safe_div(resident["hbm"], needed), 1.0),
        weights_bytes=weights, reserved_bytes=reserved, weights_fit=weights + reserved <= full["hbm"],
        kv_bytes_per_token_gpu=kv_tok_gpu, page_bytes=page, page_tokens=page_tokens(), gpus=sc.gpus)


def _scalar(v):
    if isinstance(v, dict):
        return {k: _scalar(w) for k, w in v.items()}
    if isinstance(v, np.ndarray):
        return float(v.reshape(-1)[0]) if v.dtype != bool else bool(v.reshape(-1)[0])
    return v


def _scalars(r: KvResidency) -> dict:
    """The fields of a residency of one point, as plain numbers (its first element)."""
    return {f.name: _scalar(getattr(r, f.name)) for f in dataclasses.fields(r)}


def residency_at(scenario: Scenario, policy: str = "spill") -> KvResidencyAt:
    """The current point: placement at the end of the request (context = prompt_len + gen_len, sessions =
    batch, the peak the cache must hold), and the effective time per output token at the average context
    prompt_len + gen_len/2 (the core's convention: equal to its time_per_output_token_s while the cache fits
    in HBM). Scalars; the fields of `residency_curve` plus effective_time_per_output_token_s."""
    sc = serving_scenario(scenario)
    end = _scalars(residency_curve(sc, context=sc.prompt_len + sc.gen_len, sessions=sc.batch, policy=policy))
    mid = _scalars(residency_curve(sc, context=sc.prompt_len + sc.gen_len / 2.0, sessions=sc.batch, policy=policy))
    return KvResidencyAt(**end, effective_time_per_output_token_s=mid["step_time_s"],
                         effective_tokens_per_s=mid["tokens_per_s"])


def residency_json(scenario: Scenario, policy: str = "spill") -> dict:
    """For `calc infer --json`: kv_residency_bytes {hbm, host, cxl, ssd} per GPU at the end of the request,
    effective_time_per_output_token_s, and the evicted / unplaced amounts."""
    at = residency_at(scenario, policy)
    return {
        "kv_residency_bytes": {name: at.resident[name] for name in RESIDENCY_TIERS},
        "effective_time_per_output_token_s": at.effective_time_per_output_token_s,
        "kv_placement_policy": policy,
        "kv_evicted_tokens": at.evicted_tokens,
        "kv_unplaced_bytes": at.unplaced_bytes,
    }


def kv_bytes_per_token_after_policy(scenario: Scenario, context) -> np.ndarray:
    """Average KV bytes per context token for the whole model after the scenario's policy and dtype:
    kept_tokens(context) / context x kv_bytes_per_token (vllm §3; kv_policy's sources), the kept tokens capped by
    the architecture's sliding window on its windowed layers (kv_policy.arch_kept)."""
    sc = scenario
    c = _check_axis("context", context, MAX_CONTEXT)
    arch = sc.model
    per_tok = kv_bytes_per_token(arch, BYTES_PER_ELEMENT[sc.kv_dtype])
    kept = kept_tokens(KV_POLICY_CODE[sc.kv_policy], c, window=sc.kv_window, sinks=sc.kv_sinks,
                       heavy_ratio=sc.kv_heavy_ratio, retrieval_fraction=sc.razor_retrieval_fraction)
    kept = arch_kept(kept, arch.sliding_window, arch.window_layer_share)  # the model's own sliding window
    return kept / c * per_tok
