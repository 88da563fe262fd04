"""Serving planner: every tensor- and pipeline-parallel serving layout within a GPU budget, under TTFT and TPOT
targets.

For a model, hardware, GPU budget N, prompt and generation lengths, the space is TP (divisors of the attention
heads up to N) x DP-attention x expert parallelism (off / on) x PP (divisors of the layers up to N) x batch
(sequences decoded together) x weight format x KV-cache format x KV offload (the share of the KV cache kept in
host DRAM, FlexGen; 0 = off). A replica is one TP x DP-attention x PP deployment (the pipeline-parallel inference
of model/step/inference.py: L/PP layers per stage, the batch circulating as PP micro-batches; MoE serving,
model/formulas/moe_serving.py: a stage of TP x DP GPUs, EP over all of them when on). For an MoE model
DP-attention runs over the powers of two and the divisors of N, with EP on and off; a dense model keeps DP 1 and EP
off. Combinations with TP x DP x PP > N, or that break the EP serving rules (DP > 1 without EP, EP on a dense
model), are invalid. Replicas are the deployments the
budget holds, N // (TP x DP x PP), each serving its own batch. Throughput per GPU is per GPU of the budget:
replicas x batch / TPOT / N, so GPUs a layout leaves idle (TP2 x PP6 on 16) count against it. For each weight format (whose compute format sets the peak FLOP/s,
`dtypes.compute_dtype_for_weights`) one open-grid `evaluate_grid` call times every other combination with the
core's inference formulas.

Speculative decoding (#23, model/search/speculative_search.py): given a draft model or MTP modules and an acceptance
rate in the fixed fields, γ (draft tokens per round, 0 = plain decode) is one more axis, each layout's TPOT the
speculative one and its memory the draft's added.

A layout is feasible when it fits in HBM (weights + KV + the runtime reserve) and meets the targets: TTFT =
prefill of the prompt (stage by stage through the pipeline), TPOT = decode time per output token at the mean
context. The best is the highest tokens/s per GPU; the Pareto front is throughput per GPU against TPOT. The
reported layouts are re-evaluated with the scalar `evaluate`, so `calc infer --gpus TPxDPxPP --pp PP [--ep TPxDP
--attention-dp DP]` with the same options prints the same numbers.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.dtypes import (
    BYTES_PER_ELEMENT,
    KV_DTYPES,
    WEIGHT_DTYPES,
    compute_dtype_for_weights,
)
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.inputs.serving_rules import serving_rules_hold
from trinity_desktop.model.search.hooks import NO_HOOKS, SearchHooks
from trinity_desktop.model.search.speculative_search import speculative_layouts, split_setting
from trinity_desktop.model.step.evaluation import Results, evaluate, evaluate_grid

KV_OFFLOAD_SHARES = (0.0, 0.5, 1.0)
REASONS = {"memory": "does not fit in HBM", "ttft": "misses the TTFT target", "tpot": "misses the TPOT target"}


@dataclass(frozen=True)
class ServingSpace:
    tp: tuple[int, ...]
    batch: tuple[int, ...]
    weight_dtype: tuple[str, ...]
    kv_dtype: tuple[str, ...]
    kv_offload: tuple[float, ...] = KV_OFFLOAD_SHARES
    pp: tuple[int, ...] = (1,)
    attention_dp: tuple[int, ...] = (1,)        # MoE serving (#23): attention data-parallel groups per stage
    expert_parallel: tuple[bool, ...] = (False,)  # EP over the stage's TP x DP GPUs, off / on
    draft_tokens: tuple[int, ...] = (0,)  # speculative decoding (#23): γ per round, 0 = plain decode

    @property
    def stage_layouts(self) -> int:
        """TP x DP-attention x EP combinations: the first axis of each grid."""
        return len(self.tp) * len(self.attention_dp) * len(self.expert_parallel)

    @property
    def size(self) -> int:
        return (self.stage_layouts * len(self.pp) * len(self.batch) * len(self.weight_dtype) * len(self.kv_dtype)
                * len(self.kv_offload) * len(self.draft_tokens))


def serving_space(model: Architecture, hardware, gpus: int, max_batch: int = 1024) -> ServingSpace:
    """TP: divisors of the heads up to the budget; PP: divisors of the layers up to the budget; batch: powers of
    two up to `max_batch`; every weight and KV format the hardware computes or stores; KV offload shares 0, 1/2, 1
    (only 0 without a host link). MoE models: DP-attention over the powers of two and the divisors of the budget,
    EP off and on."""
    tp = tuple(d for d in range(1, min(gpus, model.heads) + 1) if model.heads % d == 0)
    pp = tuple(d for d in range(1, min(gpus, model.layers) + 1) if model.layers % d == 0)
    batch = tuple(1 << k for k in range(int(math.log2(max_batch)) + 1))
    offload = KV_OFFLOAD_SHARES if hardware.host_link_bw > 0 else (0.0,)
    moe = {}
    if model.is_moe:
        dp = {1 << k for k in range(int(math.log2(gpus)) + 1)} | {d for d in range(1, gpus + 1) if gpus % d == 0}
        moe = {"attention_dp": tuple(sorted(dp)), "expert_parallel": (False, True)}
    peaks = dict(hardware.peak_flops)  # weight formats whose compute format has a published peak (H800: no fp32)
    weights = tuple(w for w in WEIGHT_DTYPES if compute_dtype_for_weights(w, peaks) in peaks)
    return ServingSpace(tp=tp, batch=batch, weight_dtype=weights, kv_dtype=KV_DTYPES, kv_offload=offload,
                        pp=pp, **moe)


def _stage_layouts(model: Architecture, space: ServingSpace):
    """(tp, attention_dp, ep, ok) arrays over the TP x DP-attention x EP combinations of `space`; ok where TP
    divides the heads and the EP serving rules hold (inputs/serving_rules.py), ep = TP x DP where EP is on."""
    tp, dp, on = (a.reshape(-1) for a in np.meshgrid(np.asarray(space.tp, dtype=np.int64),
                                                      np.asarray(space.attention_dp, dtype=np.int64),
                                                      np.asarray(space.expert_parallel, dtype=bool), indexing="ij"))
    ep = np.where(on, tp * dp, 1)
    ok = (model.heads % tp == 0) & serving_rules_hold(model.is_moe, tp * dp, ep, dp, 0) & (~on | (tp * dp > 1))
    return tp, dp, ep, ok


@dataclass(frozen=True)
class ServingCandidate:
    layout: Mapping[str, object]
    scenario: Scenario  # one replica: gpus = TP x PP
    results: Results
    budget: int  # the GPUs the search had, N

    @property
    def speedup(self) -> float:
        """Speculative decoding's speed-up over plain decode (1 without it)."""
        spec = self.results.speculative
        return spec.speedup if spec is not None else 1.0

    @property
    def tokens_per_s_per_gpu(self) -> float:
        """Tokens/s of every replica the budget holds, per GPU of the budget (idle GPUs included)."""
        return self.results.infer["tokens_per_s"] * self.speedup * self.layout["replicas"] / self.budget

    @property
    def tpot_s(self) -> float:
        return self.results.infer["time_per_output_token_s"] / self.speedup

    @property
    def memory_per_gpu_bytes(self) -> float:
        """The target's memory per GPU plus a speculative draft's."""
        spec = self.results.speculative
        return self.results.memory_total + (spec.draft_memory_bytes if spec is not None else 0.0)

    def as_json(self) -> dict:
        i = self.results.infer
        return {"layout": dict(self.layout), "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
                "tokens_per_s": i["tokens_per_s"] * self.speedup * self.layout["replicas"], "ttft_s": i["prefill_s"],
                "tpot_s": self.tpot_s, "memory_per_gpu_bytes": self.memory_per_gpu_bytes,
                "bottleneck": self.results.bottleneck,
                **({"speculative_speedup": self.speedup} if self.results.speculative is not None else {})}


@dataclass(frozen=True)
class ServingPlan:
    configurations_evaluated: int
    feasible: int
    invalid: int
    not_fitting: int
    missing_targets: int
    reasons: Mapping[str, int]
    search_seconds: float
    best: ServingCandidate | None
    pareto: tuple[ServingCandidate, ...]
    cancelled: bool = False

    def as_json(self) -> dict:
        common = max(self.reasons, key=self.reasons.get) if self.reasons else None
        return {"configurations_evaluated": self.configurations_evaluated, "feasible": self.feasible,
                "invalid": self.invalid, "not_fitting": self.not_fitting, "missing_targets": self.missing_targets,
                "most_common_reason": REASONS[common] if common else None,
                "reasons": {REASONS[k]: v for k, v in self.reasons.items()}, "search_seconds": self.search_seconds,
                "best": self.best.as_json() if self.best else None, "pareto": [c.as_json() for c in self.pareto]}


def _pareto_mask(throughput: np.ndarray, tpot: np.ndarray) -> np.ndarray:
    """Points no other point beats in both throughput per GPU (higher) and TPOT (lower)."""
    order = np.lexsort((-throughput, tpot))
    best = np.maximum.accumulate(throughput[order])
    keep = np.ones(order.size, dtype=bool)
    keep[1:] = throughput[order][1:] > best[:-1]
    mask = np.zeros(tpot.size, dtype=bool)
    mask[order[keep]] = True
    return mask


def plan_serving(model: Architecture, hardware, gpus: int, prompt_len: int, gen_len: int, *,
                 ttft_slo: float | None = None, tpot_slo: float | None = None, space: ServingSpace | None = None,
                 hooks: SearchHooks = NO_HOOKS, **fixed) -> ServingPlan:
    """Search `space` (default `serving_space`); `fixed` holds other Scenario fields (gpus_per_node, efficiency,
    the KV policy ...; a draft_model or mtp_depth with an acceptance adds the speculative γ axis,
    model/search/speculative_search.py). Targets in seconds; None = no target."""
    for name, slo in (("ttft_slo", ttft_slo), ("tpot_slo", tpot_slo)):
        if slo is not None and not 0 < slo < 1e6:
            raise ValidationError(name, slo, "a positive number of seconds")
    space = space or serving_space(model, hardware, gpus)
    setting, fixed = split_setting(fixed)  # speculative decoding (#23): γ searched when a draft or MTP is given
    space = dataclasses.replace(space, draft_tokens=setting.draft_tokens)
    t0 = time.perf_counter()
    totals, reasons = Counter(), Counter()
    found: list[tuple[float, float, dict]] = []   # (tokens/s per GPU, TPOT, layout values)
    stopped = False
    tp, dp, ep, stage_ok = _stage_layouts(model, space)
    keep = stage_ok & (tp * dp <= gpus)
    tp, dp, ep = tp[keep], dp[keep], ep[keep]
    pp = np.asarray([p for p in space.pp if p <= gpus and model.layers % p == 0], dtype=np.int64)
    per_layout = space.size // (space.stage_layouts * len(space.pp))
    n_gamma = len(space.draft_tokens)
    # a (stage, PP) pair is a layout when its rules hold and one replica, TP x DP x PP GPUs, fits the budget (and
    # the links it needs exist: evaluate_grid's `valid`)
    stage = tp * dp
    pairs_ok = (stage[:, None] * pp[None, :] <= gpus)
    totals["invalid"] = per_layout * (space.stage_layouts * len(space.pp) - tp.size * pp.size)
    totals["evaluated"] = space.size
    if not pairs_ok.any():
        totals["invalid"] = space.size
    for k, wd in enumerate(space.weight_dtype):
        if hooks.stopped():
            stopped = True
            break
        if not pairs_ok.any():
            break
        base = Scenario(hardware=hardware, model=model, kind="decode", gpus=int(tp[0]), batch=1,
                        prompt_len=prompt_len, gen_len=gen_len, weight_dtype=wd, **fixed)
        axes = {"tp": tp[:, None, None, None, None], "pp": pp[None, :, None, None, None],
                "attention_dp": dp[:, None, None, None, None], "ep": ep[:, None, None, None, None],
                "batch": np.asarray(space.batch)[None, None, :, None, None],
                "kv_bytes": np.asarray([BYTES_PER_ELEMENT[d] for d in space.kv_dtype])[None, None, None, :, None],
                "kv_offload_fraction": np.asarray(space.kv_offload)[None, None, None, None, :]}
        shape = (tp.size, pp.size, len(space.batch), len(space.kv_dtype), len(space.kv_offload), n_gamma)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = evaluate_grid(base, **axes)
            spec = (speculative_layouts(base, axes, out, setting, evaluate_grid) if setting.on else
                    {"tpot_s": np.asarray(out.time_per_output_token_s)[..., None], "speedup": 1.0,
                     "extra_memory": 0.0})
        valid = pairs_ok[:, :, None, None, None, None] & np.broadcast_to(np.asarray(out.valid)[..., None], shape)
        totals["invalid"] += int(np.count_nonzero(~valid))
        mem = np.broadcast_to(np.asarray(out.memory_total)[..., None] + spec["extra_memory"], shape)
        ttft = np.broadcast_to(np.asarray(out.prefill_s)[..., None], shape)
        tpot = np.broadcast_to(spec["tpot_s"], shape)
        replicas = gpus // (stage[:, None, None, None, None] * axes["pp"])  # 0 where TP x DP x PP > N: invalid
        per_gpu = np.broadcast_to(np.asarray(out.tokens_per_s * replicas)[..., None] * spec["speedup"], shape) / gpus
        fits = valid & (mem <= hardware.hbm_bytes)
        ok_ttft = np.ones(shape, bool) if ttft_slo is None else ttft <= ttft_slo
        ok_tpot = np.ones(shape, bool) if tpot_slo is None else tpot <= tpot_slo
        too_big = valid & ~fits
        for name, failing in (("memory", too_big), ("ttft", fits & ~ok_ttft), ("tpot", fits & ok_ttft & ~ok_tpot)):
            reasons[name] += int(np.count_nonzero(failing))
        totals["not_fitting"] += int(np.count_nonzero(too_big))
        totals["missing_targets"] += int(np.count_nonzero(fits & ~(ok_ttft & ok_tpot)))
        good = fits & ok_ttft & ok_tpot
        totals["feasible"] += int(np.count_nonzero(good))
        flat = np.flatnonzero(good)
        if flat.size:
            thr, lat = per_gpu.reshape(-1)[flat], tpot.reshape(-1)[flat]
            picks = np.union1d(np.flatnonzero(_pareto_mask(thr, lat)), [int(np.argmax(thr))])
            coords = np.unravel_index(flat[picks], shape)
            for j, pick in enumerate(picks):
                t, p, d = int(tp[coords[0][j]]), int(pp[coords[1][j]]), int(dp[coords[0][j]])
                found.append((float(thr[pick]), float(lat[pick]), {
                    "tp": t, "pp": p, "attention_dp": d, "ep": int(ep[coords[0][j]]), "replicas": gpus // (t * d * p),
                    "batch": int(space.batch[coords[2][j]]),
                    "weight_dtype": wd, "kv_dtype": space.kv_dtype[coords[3][j]],
                    "kv_offload": float(space.kv_offload[coords[4][j]]),
                    **(_speculative_layout(setting, int(space.draft_tokens[coords[5][j]])) if setting.on else {})}))
        hooks.report((k + 1) / len(space.weight_dtype))
    elapsed = time.perf_counter() - t0
    best = front = None
    if found:
        thr, lat = np.array([f[0] for f in found]), np.array([f[1] for f in found])
        best = _candidate(model, hardware, prompt_len, gen_len, found[int(np.lexsort((lat, -thr))[0])][2], fixed,
                          gpus)
        mask = _pareto_mask(thr, lat)
        front = tuple(sorted((_candidate(model, hardware, prompt_len, gen_len, f[2], fixed, gpus)
                              for f, keep in zip(found, mask, strict=True) if keep), key=lambda c: c.tpot_s))
    return ServingPlan(configurations_evaluated=totals["evaluated"], feasible=totals["feasible"],
                       invalid=totals["invalid"], not_fitting=totals["not_fitting"],
                       missing_targets=totals["missing_targets"], reasons={k: v for k, v in reasons.items() if v},
                       search_seconds=elapsed, best=best, pareto=front or (), cancelled=stopped)


def scenario_for(model: Architecture, hardware, prompt_len: int, gen_len: int, layout: Mapping,
                 **fixed) -> Scenario:
    """One replica of a serving layout as a decode scenario (`calc infer --gpus tp x dp x pp --pp pp --ep ...
    --attention-dp dp --batch ... `)."""
    dp, ep = layout.get("attention_dp", 1), layout.get("ep", 1)
    spec = {k: layout[k] for k in ("draft_model", "mtp_depth") if k in layout}  # speculative decoding (#23)
    if layout.get("draft_model") and layout.get("draft_tokens", 0) > 0:
        spec["draft_tokens"] = layout["draft_tokens"]
    return Scenario(hardware=hardware, model=model, kind="decode", gpus=layout["tp"] * dp * layout["pp"], **spec,
                    pp=layout["pp"], batch=layout["batch"], attention_dp=dp, inference_ep=ep,
                    prompt_len=prompt_len, gen_len=gen_len, weight_dtype=layout["weight_dtype"],
                    kv_dtype=layout["kv_dtype"], kv_offload_fraction=layout["kv_offload"], **fixed)


def _speculative_layout(setting, gamma: int) -> dict:
    """The layout keys of one γ: draft_tokens (0 = plain decode), and the draft model or MTP depth run."""
    f = setting.fields(gamma)
    return {"draft_tokens": gamma, "draft_model": f["draft_model"], "mtp_depth": f["mtp_depth"]}


def _candidate(model, hardware, prompt_len, gen_len, layout: Mapping, fixed: Mapping, budget: int) -> ServingCandidate:
    sc = scenario_for(model, hardware, prompt_len, gen_len, layout, **fixed)
    return ServingCandidate(layout=layout, scenario=sc, results=evaluate(sc), budget=budget)

