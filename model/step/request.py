"""One inference request's timing: the prefill, the decode steps in groups, and the KV moves between memory tiers.

`decode_plan(scenario)` is the one computation behind both `request_s` (`evaluate`) and the request's stages
(model/views/stages.py). The decode steps are grouped into at most DECODE_GROUPS groups [a, b); a group lasts
the core's decode_s of b - a steps from context prompt + a (`inference_step` at prompt_len = prompt + a,
gen_len = b - a): a step's attention is linear in the tokens kept, so the groups add up to the core's decode_s
for every KV policy and the model's own sliding window (kv_policy.mean_kept).

When the request's KV cache does not fit in the HBM that weights and the runtime reserve leave (residency's
"spill" placement, model/step/kv_residency.py; vllm §3 paging, pcie-spec host link, memory_tiers.toml tiers), a
group of n steps at mean context c lasts n · step_time_s(c), residency's effective decode step with the tier
transfers  T_tier = bytes_tier / (B_tier · η_net) + ceil(bytes_tier / page) · latency_tier  (no overlap of
transfers with compute, residency's stated assumption), and the prompt's off-HBM KV is written once after the
prefill. The request then ends at  prefill_s + Σ_tier T_tier(prompt) + Σ_groups n_g · step_time_s(c_g).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.numeric import safe_div
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.inputs.tiers import tier_map
from trinity_desktop.model.step.inference import InferStep
from trinity_desktop.model.step.kv_residency import RESIDENCY_TIERS, residency_curve, serving_scenario
from trinity_desktop.model.step.run import infer_step_at, infer_step_of

DECODE_GROUPS = 32     # decode steps are grouped into at most this many bars
OFF_HBM_TIERS = tuple(t for t in RESIDENCY_TIERS if t != "hbm")  # host, cxl, ssd: KV spill order


@dataclass(frozen=True)
class KvTiers:
    """Residency of the request's KV at the plan's contexts (index 0 the prompt, 1..n the groups' mean contexts,
    n+1..2n their end contexts): residency's effective decode step, the bytes per GPU on each slower tier, the
    KV bytes not in HBM, the off-HBM tiers used, and each tier's per-step transfer time T_tier."""

    step_time_s: np.ndarray
    resident: dict
    off_hbm: np.ndarray
    used: tuple[str, ...]
    transfer_s: dict


@dataclass(frozen=True)
class DecodePlan:
    """The request's timing (module docstring): the core's step, the decode groups [lo, hi) with their steps,
    mean and end contexts and seconds, the KV tiers (None when the cache fits in HBM), the offload after the
    prefill [(tier, bytes, seconds)], and where the request ends."""

    step: InferStep
    n: int
    lo: np.ndarray
    hi: np.ndarray
    steps: np.ndarray
    mid: np.ndarray
    ctx_end: np.ndarray
    kv: KvTiers | None
    group_s: np.ndarray
    offload: list
    prefill_s: float
    request_s: float


# The plans of the last few requests: `evaluate` and the request's stages share one.
_RECENT_PLANS: list[tuple[Scenario, str, DecodePlan]] = []
RECENT_PLANS = 4


def decode_plan(sc: Scenario, kv_placement: str = "spill") -> DecodePlan:
    """The request's timing, the one computation its stages and `request_s` share (module docstring)."""
    for known, placement, plan in _RECENT_PLANS:
        if placement == kv_placement and (known is sc or known == sc):
            return plan
    plan = _plan(sc, kv_placement)
    _RECENT_PLANS.insert(0, (sc, kv_placement, plan))
    del _RECENT_PLANS[RECENT_PLANS:]
    return plan


def _plan(sc: Scenario, kv_placement: str) -> DecodePlan:
    s, g = sc.prompt_len, sc.gen_len
    full = infer_step_of(sc)
    n = min(g, DECODE_GROUPS)
    edges = np.round(np.linspace(0.0, g, n + 1)).astype(int)
    lo, hi = edges[:-1], edges[1:]
    steps = (hi - lo).astype(float)
    mid = s + (lo + hi) / 2.0
    ctx_end = s + hi.astype(float)
    kv = kv_tiers(sc, np.concatenate([[float(s)], mid, ctx_end]), kv_placement)
    if kv is None:  # the core's own sum over each group's steps: the groups add up to its decode_s exactly
        group_s = np.asarray(infer_step_at(sc, prompt_len=s + lo.astype(float), gen_len=steps).decode_s, dtype=float)
        offload = []
    else:  # the cache spills: residency's effective step (with the tier transfers) at each group's mean context
        group_s = steps * kv.step_time_s[1:n + 1]
        offload = [(tier, float(kv.resident[tier][0]), float(kv.transfer_s[tier][0])) for tier in kv.used]
    prefill = float(full.prefill_s)
    request = prefill + sum(d for _, b, d in offload if b > 0) + float(np.sum(group_s))
    return DecodePlan(step=full, n=n, lo=lo, hi=hi, steps=steps, mid=mid, ctx_end=ctx_end, kv=kv, group_s=group_s,
                      offload=offload, prefill_s=prefill, request_s=request)


def request_time(sc: Scenario, kv_placement: str = "spill") -> float:
    """Seconds of one inference request: where its last stage ends (`decode_plan`)."""
    return decode_plan(sc, kv_placement).request_s


def kv_spills(scenario: Scenario) -> bool:
    """True when an inference request's KV cache at its final context (prompt + gen) does not fit in the HBM
    that weights and the runtime reserve leave (model/step/kv_residency.py, "spill" placement). False for training."""
    if not isinstance(scenario, Scenario) or scenario.kind == "train":
        return False
    rc = residency_curve(scenario, context=scenario.prompt_len + scenario.gen_len, sessions=scenario.batch)
    return bool(np.any(rc.needed - rc.resident["hbm"] > 0))


def kv_tiers(sc: Scenario, context: np.ndarray, policy: str = "spill") -> KvTiers | None:
    """Residency of the request's KV cache at the given contexts (one vectorized `residency_curve` call,
    sessions = batch, `policy` "spill" or "evict"), or None when it fits in HBM at every one of them (then
    nothing changes). With "evict" no slower tier holds bytes: no transfers, the step reads only what is kept.
    T_tier = bytes / (B_tier · η_net) + ceil(bytes / page) · latency_tier, residency's per-step tier transfer
    (vllm §3 pages, pcie-spec, memory_tiers.toml)."""
    rc = residency_curve(sc, context=context, sessions=sc.batch, policy=policy)
    needed = np.asarray(rc.needed, dtype=float)
    off_hbm = needed - np.asarray(rc.resident["hbm"], dtype=float)
    if not np.any(off_hbm > 0):
        return None
    tiers = tier_map(serving_scenario(sc).hardware)
    eta = sc.efficiency.network
    page = float(rc.page_bytes)
    resident = {t: np.asarray(rc.resident[t], dtype=float) for t in OFF_HBM_TIERS}
    transfer = {}
    for name in OFF_HBM_TIERS:  # a loop over the three slower tiers, not over configurations
        b = resident[name]
        if name in tiers:
            tier = tiers[name]
            transfer[name] = b / (tier.bandwidth * eta) + np.ceil(safe_div(b, page)) * tier.latency_s
        else:
            transfer[name] = np.zeros_like(b)
    used = tuple(t for t in OFF_HBM_TIERS if np.any(resident[t] > 0))
    return KvTiers(step_time_s=np.asarray(rc.step_time_s, dtype=float), resident=resident,
                   off_hbm=np.maximum(off_hbm, 0.0), used=used, transfer_s=transfer)
