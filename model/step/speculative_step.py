"""Speculative decoding of a decode scenario: the draft's steps and the target's verification step, timed by the
inference step's own formulas (model/step/inference.py), combined by model/formulas/speculative.py.

- Draft step: a decode step of the draft at the scenario's batch and context, on the same GPUs: a preset model
  (`Scenario.draft_model`, it must share the target's vocabulary) with TP = gcd(target TP, draft heads) and no
  pipeline, or the target's MTP modules (`Scenario.mtp_depth` = D, DeepSeek-V3 §2.2: each module one transformer
  layer of the target sharing its embedding and output head), a one-layer copy of the target, γ = D. A round's
  first draft step also takes in the tokens accepted in the last round; it is timed as a one-token step (while
  the draft is HBM-bound a few more tokens cost no more weight reads).
- Verify step: the target's decode step with γ + 1 tokens per sequence. Its GEMMs, routed experts touched,
  TP all-reduces, pipeline sends and fixed costs are the decode step's at batch b(γ + 1) tokens; its attention
  reads each sequence's KV cache once for all γ + 1 queries: max((γ + 1) · F / (peak · η), KV / B_kv) per slot,
  F and KV the plain step's attention FLOPs and KV bytes (a narrow KV format's dequantisation FLOPs are counted
  per query, an upper bound). The offloaded KV share is fetched once per step, as in plain decode.
With b < pp a sequence's γ + 1 tokens are spread over the micro-batches like b(γ + 1) sequences (GEMM rooflines
per slot); with b >= pp the slots are exact.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.decode_kernels import kv_bandwidth  # decode attention kernel (#22)
from trinity_desktop.model.formulas.speculative import (
    SpeculativeDecode,
    expected_tokens_per_step,
    round_time,
)
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.presets import model_presets
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.grid_results import InferGrid
from trinity_desktop.model.step.layout import infer_inputs
from trinity_desktop.model.step.request import DecodePlan, decode_plan
from trinity_desktop.model.step.run import infer_step_of

ATTENTION = "attention_kv_reads"   # evaluate_grid's decode_time role ids (evaluation.DECODE_TIME_IDS)
KV_FETCH = "kv_fetch"


def speculative_on(sc: Scenario) -> bool:
    """Whether the scenario decodes speculatively: a decode workload with a draft model or MTP modules."""
    return sc.kind == "decode" and (bool(sc.draft_model) or sc.mtp_depth > 0)


def draft_tokens_of(sc: Scenario) -> int:
    """γ: the draft model's proposed tokens, or one per MTP module."""
    return sc.mtp_depth if sc.mtp_depth > 0 else sc.draft_tokens


def draft_scenario(sc: Scenario) -> tuple[Scenario, str, float]:
    """(the draft's decode scenario, its name, the bytes per GPU it adds to the target's) for `sc`."""
    if sc.draft_model and sc.mtp_depth > 0:
        raise ValidationError("draft_model", sc.draft_model, "no draft model when MTP modules draft (mtp_depth > 0)")
    arch = sc.model
    if sc.mtp_depth > 0:
        draft = dataclasses.replace(arch, key=f"{arch.key}-mtp", name=f"{arch.name} MTP", layers=1,
                                    dense_layers=0, global_layers=min(arch.global_layers, 1))
        shared = draft.embedding_params() + draft._norm_params()  # the embedding and head are the target's own
        tp, name = sc.inference_tp, "MTP"
    else:
        presets = model_presets()
        if sc.draft_model not in presets:
            raise ValidationError("draft_model", sc.draft_model, "a model preset key (resources/models.toml)")
        draft = presets[sc.draft_model]
        if draft.vocab != arch.vocab:
            raise ValidationError("draft_model", sc.draft_model, f"a draft with the target's vocabulary of "
                                  f"{arch.vocab:,} tokens ({draft.name} has {draft.vocab:,})")
        shared, tp, name = 0, math.gcd(sc.inference_tp, draft.heads), draft.name
    # the draft runs on one attention group's TP GPUs, without the target's serving EP, DP-attention or pools
    dsc = sc.replace(model=draft, gpus=tp, pp=1, draft_model="", mtp_depth=0, kv_offload_fraction=0.0,
                     first_stage_layers=0, last_stage_layers=0, inference_ep=1, attention_dp=1, redundant_experts=0,
                     prefill_gpus=0, decode_gpus=0, prefill_tp=0, prefill_pp=0, decode_tp=0, decode_pp=0)
    return dsc, name, _draft_memory(draft, dsc, shared)


def _draft_memory(draft: Architecture, dsc: Scenario, shared_params: float) -> float:
    """Draft weights (less what it shares with the target) and its KV cache per GPU of the target's."""
    r = infer_step_of(dsc)
    weights = float(r.memory.weights) * (1.0 - shared_params / draft.params_total())
    return weights + float(r.memory.kv_cache)


def speculative_grid(sc: Scenario, grid, batch=None, draft_tokens=None, acceptance=None, **contexts) -> dict:
    """The speculative decode of `sc` over arrays of batch, γ and α (broadcast together; None = the scenario's),
    and optionally `prompt_len` / `gen_len` (the decode step at context prompt + gen/2), with `grid` =
    evaluate_grid. Returns arrays: decode_step_s, draft_step_s, verify_step_s, round_s, expected_tokens_per_step,
    time_per_output_token_s, speedup, and per GPU the verify, plain decode and draft steps' FLOPs and HBM bytes."""
    b = np.asarray(sc.batch if batch is None else batch, dtype=float)
    g = np.asarray(draft_tokens_of(sc) if draft_tokens is None else draft_tokens, dtype=float)
    a = np.asarray(sc.acceptance if acceptance is None else acceptance, dtype=float)
    b, g, a, *ctx = np.broadcast_arrays(b, g, a, *(np.asarray(v, dtype=float) for v in contexts.values()))
    contexts = dict(zip(contexts, ctx, strict=True))
    q = g + 1.0
    target = grid(sc, batch=np.stack([b, b * q]), **contexts)
    plain, wide = target.at(0), target.at(1)
    dsc, _, _ = draft_scenario(sc)
    drafted = grid(dsc, batch=b, **contexts)
    draft_step = np.asarray(drafted.time_per_output_token_s, dtype=float)
    x = infer_inputs(sc)
    tp, pp = float(x.tp), float(x.pp)
    verify = verify_step_time(sc, plain, wide, b, q, tp, pp)
    f_off = sc.kv_offload_fraction
    verify_hbm = wide.decode_bytes["hbm"] - (wide.decode_kv_read_bytes - plain.decode_kv_read_bytes) * (1 + f_off)
    verify_flops = wide.decode_flops / (tp * pp)
    rnd = round_time(draft_step, verify, g)
    tokens = expected_tokens_per_step(a, g)
    tpot = rnd / tokens
    decode = plain.time_per_output_token_s
    return dict(decode_step_s=decode, draft_step_s=draft_step, verify_step_s=verify, round_s=rnd,
                expected_tokens_per_step=tokens, time_per_output_token_s=tpot, speedup=decode / tpot,
                verify_flops=verify_flops, verify_hbm_bytes=verify_hbm,
                decode_flops=plain.decode_flops / (tp * pp), decode_hbm_bytes=plain.decode_bytes["hbm"],
                draft_flops=np.asarray(drafted.decode_flops, dtype=float) / dsc.gpus,
                draft_hbm_bytes=np.asarray(drafted.decode_bytes["hbm"], dtype=float))


def verify_step_time(sc: Scenario, plain: InferGrid, wide: InferGrid, batch, q, tp, pp):
    """Seconds of the verify step: the decode step at batch x q tokens (`wide`, grid outputs) with its attention
    replaced by each sequence's KV read once for all q queries, max(q · F / (peak · η), KV / B_kv) per slot, F and
    KV the plain step's (`plain`) per micro-batch slot; broadcasts over arrays of batch, q, tp and pp."""
    x, hw = infer_inputs(sc), sc.hardware
    n_mb = np.minimum(batch, pp)
    flops_slot = plain.decode_attention_flops / (n_mb * tp * pp)  # per GPU, one micro-batch's attention
    kv_slot = plain.decode_kv_read_bytes / n_mb
    bw_kv = kv_bandwidth(hw, x.eff_hbm, x.decode_attention_kernel)  # the decode attention kernel's rate (#22)
    attention = pp * np.maximum(q * flops_slot / (x.peak * x.eff_compute), kv_slot / bw_kv)
    return (wide.time_per_output_token_s - wide.decode_time[ATTENTION] - wide.decode_time.get(KV_FETCH, 0.0)
            + attention + plain.decode_time.get(KV_FETCH, 0.0))


def speculative_groups(sc: Scenario, grid) -> tuple[DecodePlan, dict]:
    """The request's decode groups (`request.decode_plan`) decoded speculatively: the speculative grid at each
    group's mean context, and per group its rounds = steps / E, draft_s = rounds · γ · t_draft and verify_s =
    rounds · t_verify. The KV cache is taken as held in HBM (the tier transfers of a spilling cache are not
    added to the speculative request)."""
    plan = decode_plan(sc)
    out = speculative_grid(sc, grid, prompt_len=plan.mid, gen_len=0.0)
    rounds = plan.steps / out["expected_tokens_per_step"]
    out.update(rounds=rounds, draft_s=rounds * draft_tokens_of(sc) * out["draft_step_s"],
               verify_s=rounds * out["verify_step_s"])
    return plan, out


def speculative_decode(sc: Scenario, grid) -> SpeculativeDecode | None:
    """The scenario's speculative decode as one typed value (None when it is off); `grid` = evaluate_grid."""
    if not speculative_on(sc):
        return None
    dsc, name, draft_memory = draft_scenario(sc)
    v = {k: float(np.asarray(val)) for k, val in speculative_grid(sc, grid).items()}
    plan, groups = speculative_groups(sc, grid)
    request = plan.prefill_s + float(np.sum(groups["draft_s"]) + np.sum(groups["verify_s"]))
    x = infer_inputs(sc)
    ridge = x.peak * x.eff_compute / (sc.hardware.hbm_bw * x.eff_hbm)
    return SpeculativeDecode(
        method="mtp" if sc.mtp_depth > 0 else "draft", draft_name=name, draft_tokens=draft_tokens_of(sc),
        acceptance=float(sc.acceptance), expected_tokens_per_step=v["expected_tokens_per_step"],
        decode_step_s=v["decode_step_s"], draft_step_s=v["draft_step_s"], verify_step_s=v["verify_step_s"],
        round_s=v["round_s"], time_per_output_token_s=v["time_per_output_token_s"],
        tokens_per_s=sc.batch / v["time_per_output_token_s"], speedup=v["speedup"],
        draft_cost_ratio=v["draft_step_s"] / v["decode_step_s"], verify_cost_ratio=v["verify_step_s"] / v["decode_step_s"],
        verify_flops=v["verify_flops"], verify_hbm_bytes=v["verify_hbm_bytes"],
        verify_intensity=v["verify_flops"] / v["verify_hbm_bytes"],
        decode_intensity=v["decode_flops"] / v["decode_hbm_bytes"], ridge=float(ridge),
        draft_memory_bytes=draft_memory, request_s=request)


def speculative_notes(spec: SpeculativeDecode | None, memory_total: float, capacity: float) -> list[str]:
    """A warning when the draft does not fit beside the target (the target's memory plus the draft's per device)."""
    if spec is None or memory_total + spec.draft_memory_bytes <= capacity:
        return []
    return [f"Draft does not fit: the target's {memory_total / 1e9:.1f} GB plus the draft's "
            f"{spec.draft_memory_bytes / 1e9:.1f} GB per device exceed {capacity / 1e9:.0f} GB."]
