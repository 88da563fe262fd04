"""The stages of one inference request: prefill, KV moves between tiers, grouped decode steps. Qt-free.

Inference request (lane "GPU (TP group)"): prefill, then the decode steps grouped into at most
DECODE_GROUPS bars (`request.decode_plan`, the one computation behind both the bars and `request_s`). A group of
steps [a, b) lasts the core's decode_s of b - a steps from context prompt + a (`evaluate_grid(prompt_len=
prompt + a, gen_len=b - a)`): a step's attention is linear in the tokens kept, so the groups add up to the
core's decode_s, for every KV policy and the model's own sliding window (kv_policy.mean_kept). The bars'
FLOPs and bytes are the core's step at the group's mean context prompt + (a + b)/2, times its steps.
With pipeline stages (pp > 1) the lane is one GPU of one stage: the bars last as long as the core's pipelined
prefill (the stages in turn plus the sends) and decode steps (pp slots each), and carry that GPU's FLOPs and bytes.

KV offload and onload (model/step/kv_residency.py; vllm §3 paging, pcie-spec host link, memory_tiers.toml tiers): when
the request's KV cache does not fit in the HBM that weights and the runtime reserve leave (residency's "spill"
placement at the request's final context), the request is timed by residency's effective decode step instead
of the core's. One `residency_curve` call over [prompt, each group's mean context, each group's end context]
places the cache on HBM, host DRAM, the CXL pool and NVMe SSD. Per decode step and tier the off-HBM bytes are
moved over the host link in  T_tier = bytes_tier / (B_tier · η_net) + ceil(bytes_tier / page) · latency_tier
(residency's formula; no overlap of transfers with compute, residency's stated assumption). A decode group
of n steps at mean context c is drawn as one "KV onload from <tier>" stage per used tier on the host-link
lane (n · T_tier(c), bytes n · bytes_tier(c) on the host link), followed by the decode compute
n · (step_time_s(c) - Σ T_tier(c)): the group lasts n · step_time_s(c) exactly. Prefill is followed by one
"KV offload to <tier>" stage per tier holding part of the prompt's KV (T_tier at context = prompt, written
once; the one token per step that decode appends is not drawn). The request then ends at
    prefill_s + Σ_tier T_tier(prompt) + Σ_groups n_g · step_time_s(c_g).
Live memory per tier: HBM = the core's memory at the stage's context minus the KV placed off HBM (or beyond
every tier); host, and cxl / ssd when the request uses them, = residency's resident bytes. When the cache
fits in HBM nothing of this is drawn and the request is the core's. With `kv_placement="evict"` (residency's
other policy) what HBM cannot hold is dropped: no transfer stages, residency's (shorter) step time, and the
evicted bytes leave the live memory.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.step.request import decode_plan
from trinity_desktop.model.step.run import infer_step_at
from trinity_desktop.model.views.ep_stages import with_ep_all_to_all
from trinity_desktop.model.views.speculative_stages import speculative_stages
from trinity_desktop.model.views.stage import (
    GPU_LANE,
    HOST_LANE,
    TIER_NAMES,
    Stage,
    _f,
    _links,
)


def request_stages(sc: Scenario, r: Results, kv_placement: str = "spill") -> list[Stage]:
    """The stages of one inference request (module docstring): prefill, the KV offload to slower tiers, and the
    decode groups of `request.decode_plan` with their KV onloads; `r` is `evaluate(sc)`."""
    s, tp = sc.prompt_len, sc.gpus  # all tp x pp devices: the FLOPs below are totals over them
    capacity = r.capacity
    plan = decode_plan(sc, kv_placement)
    full, n, lo, hi, steps, kv = plan.step, plan.n, plan.lo, plan.hi, plan.steps, plan.kv
    # the core's step at the prompt, each group's mean context and each group's end context, in one call
    grid = infer_step_at(sc, prompt_len=np.concatenate([[float(s)], plan.mid, plan.ctx_end]), gen_len=0)
    flops = np.asarray(grid.decode_flops, dtype=float)[1:n + 1] / tp
    c_share, b_share = (np.asarray(x, dtype=float)[1:n + 1] for x in grid.decode_shares)
    link_arr = {k: np.broadcast_to(np.asarray(v, dtype=float), (2 * n + 1,))[1:n + 1]
                for k, v in grid.decode_bytes.by_name().items()}
    mem_end = np.asarray(grid.memory_total, dtype=float)[n + 1:]
    prefill_mem = float(np.asarray(grid.memory_total, dtype=float)[0])
    hbm_limit = capacity * (1.0 + 1e-9) if kv is not None else capacity

    def live(i: int, core_mem: float) -> dict:
        """Live memory per tier at residency point i (0 prompt, 1..n group means, n+1..2n group ends)."""
        if kv is None:
            return {"hbm": core_mem, "host": 0.0}
        out = {"hbm": max(core_mem - kv.off_hbm[i], 0.0)}
        out.update({t: float(kv.resident[t][i]) for t in kv.used})
        out.setdefault("host", 0.0)
        return out

    out: list[Stage] = []
    prefill = plan.prefill_s
    pc, pb = (_f(x) for x in full.prefill_shares)
    lm = live(0, prefill_mem)
    binding = "memory" if lm["hbm"] > hbm_limit else ("compute" if pc >= pb else "bandwidth")
    out.append(Stage(f"prefill ({s:,} prompt tokens × {sc.batch})", "compute", GPU_LANE, 0.0, prefill,
                     _f(full.prefill_flops) / tp, {k: _f(v) for k, v in full.prefill_bytes.by_name().items()}, lm,
                     binding, -1, role="prefill"))
    t = prefill
    for tier, nbytes, dur in plan.offload:
        if nbytes > 0:
            out.append(Stage(f"KV offload to {TIER_NAMES[tier]} ({nbytes / 1e9:,.1f} GB of the prompt's KV)",
                             "memory-transfer", HOST_LANE, t, t + dur, 0.0, _links(host=nbytes), lm, "bandwidth", -1, role="kv_offload"))
            t += dur
    if r.speculative is not None and kv is None:  # speculative decoding (#23): draft and verify bars per group
        return out + speculative_stages(sc, r, plan, t, [live(n + 1 + i, float(mem_end[i])) for i in range(n)])
    for i in range(n):
        lm = live(n + 1 + i, float(mem_end[i]))
        label = f"decode step {lo[i] + 1}" if steps[i] == 1 else f"decode steps {lo[i] + 1}-{hi[i]}"
        dur = float(plan.group_s[i])
        if kv is not None:
            for tier in kv.used:
                nbytes, xfer = float(kv.resident[tier][1 + i]), float(kv.transfer_s[tier][1 + i])
                if nbytes > 0:
                    d = float(steps[i] * xfer)
                    out.append(Stage(f"KV onload from {TIER_NAMES[tier]} ({label.replace('decode ', '')}, "
                                     f"{nbytes / 1e9:,.1f} GB per step)", "memory-transfer", HOST_LANE, t, t + d,
                                     0.0, _links(host=steps[i] * nbytes), lm, "bandwidth", -1, role="kv_onload"))
                    t += d
                    dur -= d
            dur = max(dur, 0.0)
        binding = "memory" if lm["hbm"] > hbm_limit else ("compute" if c_share[i] >= b_share[i] else "bandwidth")
        out.append(Stage(f"{label} (context {int(s + lo[i]):,}-{int(s + hi[i]):,})", "compute", GPU_LANE, t, t + dur,
                         float(steps[i] * flops[i]), {k: float(steps[i] * v[i]) for k, v in link_arr.items()}, lm,
                         binding, -1, role="decode"))
        t += dur
    if r.disaggregated is not None:  # disaggregated serving (#23): the pools' own stages
        return pooled_stages(sc, r, kv_placement)
    return with_ep_all_to_all(out, full, steps)  # MoE serving (#23): the EP all-to-all bars, where EP is on


# disaggregated serving (#23): the request on the prefill pool, its KV cache over the link, then the decode pool;
# lane names that `stages.lane_order` sorts in the request's order (pool 1, the link 1→2, pool 2), each one GPU's
POOL_LANES = ("pool 1: prefill", "pool 1→2: KV link", "pool 2: decode")
def pooled_stages(sc: Scenario, r: Results, kv_placement: str) -> list[Stage]:
    """A disaggregated request's stages: the prefill instance's prefill of one prompt (lane "prefill pool"), the
    KV transfer over the pools' link (its exposed part delays the decode; layer-wise it starts inside the
    prefill), then the decode instance's decode groups (lane "decode pool"), each instance's own stages
    (`step.disaggregated.pool_scenarios`), per GPU of that pool."""
    from trinity_desktop.model.step.disaggregated import pool_scenarios  # step -> views, imported when drawn
    from trinity_desktop.model.step.evaluation import evaluate

    d, lay = r.disaggregated, r.disaggregated.layout
    p_sc, d_sc = pool_scenarios(sc)
    prefill = next(st for st in request_stages(p_sc, evaluate(p_sc), kv_placement) if st.role == "prefill")
    decode = [st for st in request_stages(d_sc, evaluate(d_sc), kv_placement) if st.role != "prefill"]
    ttft, t = float(d.served.ttft_s), float(d.served.kv_transfer_s)
    exposed = float(d.served.kv_transfer_exposed_s)
    p_lane, link_lane, d_lane = POOL_LANES
    shard = float(d.served.kv_transfer_bytes) / lay.prefill.instance_gpus  # the bytes one prefill GPU sends
    out = [dataclasses.replace(prefill, lane=p_lane, start_s=0.0, end_s=ttft,
                               name=f"{prefill.name} on TP{lay.prefill.tp} PP{lay.prefill.pp}"),
           Stage(f"KV transfer ({float(d.served.kv_transfer_bytes) / 1e9:,.2f} GB over {lay.link})", "communication",
                 link_lane, ttft + exposed - t, ttft + exposed, 0.0, {lay.link: shard},
                 prefill.live_memory_by_tier, "bandwidth", -1, role="kv_transfer")]
    shift = ttft + exposed - decode[0].start_s
    out += [dataclasses.replace(st, lane=d_lane if st.lane == GPU_LANE else st.lane, start_s=st.start_s + shift,
                                end_s=st.end_s + shift, name=f"{st.name} on TP{lay.decode.tp} PP{lay.decode.pp}")
            for st in decode]
    return out

