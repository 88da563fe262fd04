"""Disaggregated against aggregated serving at equal GPUs (#23; DistServe, Zhong et al. 2024, §4.1 searches
each phase's parallelism and the pools' sizes for the best goodput per GPU).

For a GPU budget N, prompt and generation lengths and optional TTFT / TPOT targets, over the serving planner's
space of TP (divisors of the heads), PP (divisors of the layers) and batch (`serving_planner.serving_space`), at
the scenario's weight and KV formats:
- aggregated: replicas = N // (TP x PP) of one layout, prefilling arrivals on the same GPUs (their stalls in the
  TPOT each decoding request sees; formulas/disaggregation.py);
- disaggregated: a prefill layout (one prompt at a time per instance) x a decode layout and batch x the number of
  prefill instances n_p, the decode pool taking the GPUs left, n_d = (N - n_p x TP_p x PP_p) // (TP_d x PP_d).
Both are timed by one open-grid `evaluate_grid` call over TP x PP x batch, then combined as arrays
(`step.disaggregated.pools_served`), one prefill layout at a time to bound the memory. A deployment is feasible
when every instance fits in HBM and it meets the targets; the best of each kind has the most requests/s.
Goodput per GPU = requests/s within the targets / N (idle GPUs count). Queueing is not modelled (each pool runs
at its steady rate), so the targets bound the latency of an unloaded deployment.

The serving planner's own throughput (`plan_serving`: batch / TPOT per replica) leaves out the time a replica
spends on prefills; the comparison here counts it on both sides, so it does not call `plan_serving`'s ranking.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.disaggregation import aggregated_rate, aggregated_tpot
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.search.serving_planner import serving_space
from trinity_desktop.model.step.disaggregated import PoolTimes, kv_prompt_bytes, pools_served
from trinity_desktop.model.step.evaluation import Results, evaluate, evaluate_grid


@dataclass(frozen=True)
class ServingChoice:
    """The best deployment of one kind: its layout, requests/s and latencies, and the scenario that reproduces it
    with `evaluate` (`calc infer` with the same options)."""

    kind: str                    # "aggregated" or "disaggregated"
    layout: Mapping[str, int]
    requests_per_s: float
    ttft_s: float
    tpot_s: float
    budget: int
    scenario: Scenario
    results: Results

    @property
    def requests_per_s_per_gpu(self) -> float:
        return self.requests_per_s / self.budget

    def as_json(self) -> dict:
        return {"layout": dict(self.layout), "requests_per_s": self.requests_per_s,
                "requests_per_s_per_gpu": self.requests_per_s_per_gpu,
                "tokens_per_s_per_gpu": self.requests_per_s_per_gpu * self.scenario.gen_len,
                "ttft_s": self.ttft_s, "tpot_s": self.tpot_s}


@dataclass(frozen=True)
class DisaggPlan:
    gpus: int
    configurations_evaluated: int
    search_seconds: float
    aggregated: ServingChoice | None
    disaggregated: ServingChoice | None

    @property
    def gain(self) -> float | None:
        """Disaggregated goodput per GPU over aggregated (None when either has no feasible deployment)."""
        if self.aggregated is None or self.disaggregated is None:
            return None
        return self.disaggregated.requests_per_s / self.aggregated.requests_per_s

    def as_json(self) -> dict:
        return {"gpus": self.gpus, "configurations_evaluated": self.configurations_evaluated,
                "search_seconds": self.search_seconds,
                "aggregated": self.aggregated.as_json() if self.aggregated else None,
                "disaggregated": self.disaggregated.as_json() if self.disaggregated else None,
                "disaggregated_over_aggregated": self.gain}


def _targets(values, ttft, tpot, ttft_slo, tpot_slo):
    ok = np.asarray(values, dtype=bool)
    if ttft_slo is not None:
        ok = ok & (ttft <= ttft_slo)
    if tpot_slo is not None:
        ok = ok & (tpot <= tpot_slo)
    return ok


def plan_disaggregated(model: Architecture, hardware, gpus: int, prompt_len: int, gen_len: int, *,
                       ttft_slo: float | None = None, tpot_slo: float | None = None, max_batch: int = 1024,
                       **fixed) -> DisaggPlan:
    """The best aggregated and the best disaggregated deployment on `gpus` (module docstring); `fixed` holds
    other Scenario fields (gpus_per_node, weight_dtype, kv_dtype, efficiency, kv_transfer_layerwise ...)."""
    for name, slo in (("ttft_slo", ttft_slo), ("tpot_slo", tpot_slo)):
        if slo is not None and not 0 < slo < 1e6:
            raise ValidationError(name, slo, "a positive number of seconds")
    t0 = time.perf_counter()
    space = serving_space(model, hardware, gpus, max_batch=max_batch)
    tp, pp = np.asarray(space.tp), np.asarray(space.pp)
    batch = np.asarray(space.batch, dtype=float)
    base = Scenario(hardware=hardware, model=model, kind="decode", gpus=int(tp[0]), batch=1, prompt_len=prompt_len,
                    gen_len=gen_len, **fixed)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = evaluate_grid(base, tp=tp[:, None, None], pp=pp[None, :, None], batch=batch[None, None, :])
    shape = (tp.size, pp.size, batch.size)
    inst = (tp[:, None] * pp[None, :]).reshape(-1)                               # GPUs per instance, layout l
    usable = (inst <= gpus) & np.broadcast_to(out.valid, shape)[:, :, 0].reshape(-1)
    fits = (np.broadcast_to(out.memory_total, shape) <= hardware.hbm_bytes).reshape(inst.size, batch.size)
    fits &= usable[:, None]
    p1 = np.broadcast_to(out.prefill_s, shape)[:, :, 0].reshape(-1)           # one prompt (batch 1)
    tpot = np.broadcast_to(out.time_per_output_token_s, shape).reshape(inst.size, batch.size)
    decode_s = np.broadcast_to(out.decode_s, shape).reshape(inst.size, batch.size)
    tp_l, pp_l = np.repeat(tp, pp.size), np.tile(pp, tp.size)
    evaluated = inst.size * batch.size

    # aggregated: replicas of layout l at batch b
    seen = aggregated_tpot(tpot, batch[None, :], p1[:, None], gen_len)
    agg = aggregated_rate((gpus // inst)[:, None], batch[None, :], seen, gen_len)
    agg = np.where(_targets(fits, p1[:, None], seen, ttft_slo, tpot_slo), agg, 0.0)
    best_agg = np.unravel_index(int(np.argmax(agg)), agg.shape) if agg.max() > 0 else None

    # disaggregated: prefill layout i (a loop over the few layouts), decode layout j x batch b x n_p
    request_bytes = kv_prompt_bytes(base)
    n_p = np.arange(1, gpus + 1, dtype=float)[None, None, :]
    best, best_rate = None, 0.0
    for i in np.flatnonzero(fits[:, 0]):
        n_d = np.floor((gpus - n_p * inst[i]) / inst[:, None, None])
        times = PoolTimes(prefill_s_one=p1[i], decode_s=decode_s[:, :, None], tpot=tpot[:, :, None],
                          batch=batch[None, :, None])
        served = pools_served(base, request_bytes, times, prefill_tp=tp_l[i], prefill_pp=pp_l[i],
                              decode_tp=tp_l[:, None, None], decode_pp=pp_l[:, None, None], prefill_instances=n_p,
                              decode_instances=n_d, intra=(inst[i] + inst[:, None, None] <= base.gpus_per_node)
                              & (hardware.scaleup_bw > 0))
        ok = _targets(fits[:, :, None] & (n_d >= 1), served.ttft_s, served.tpot_s, ttft_slo, tpot_slo)
        rate = np.where(ok, served.requests_per_s, 0.0)
        evaluated += rate.size
        k = int(np.argmax(rate))
        if rate.reshape(-1)[k] > best_rate:
            best_rate, best = float(rate.reshape(-1)[k]), (i, *np.unravel_index(k, rate.shape))
    elapsed = time.perf_counter() - t0
    aggregated = disaggregated = None
    if best_agg is not None:
        la, b = best_agg
        sc = base.replace(gpus=int(inst[la]), pp=int(pp_l[la]), batch=int(batch[b]))
        aggregated = ServingChoice("aggregated", {"tp": int(tp_l[la]), "pp": int(pp_l[la]), "batch": int(batch[b]),
                                                  "replicas": int(gpus // inst[la])}, float(agg[la, b]),
                                   float(p1[la]), float(seen[la, b]), gpus, sc, evaluate(sc))
    if best is not None:
        i, j, b, k = best
        n_prefill = int(k) + 1
        n_decode = int((gpus - n_prefill * inst[i]) // inst[j])
        sc = base.replace(gpus=int(inst[j]), pp=int(pp_l[j]), batch=int(batch[b]), prefill_gpus=int(n_prefill * inst[i]),
                          decode_gpus=int(n_decode * inst[j]), prefill_tp=int(tp_l[i]), prefill_pp=int(pp_l[i]),
                          decode_tp=int(tp_l[j]), decode_pp=int(pp_l[j]))
        r = evaluate(sc)  # the scalar path: its latencies (and requests/s, tested equal to the grid's)
        s = r.disaggregated.served
        disaggregated = ServingChoice("disaggregated", {
            "prefill_tp": int(tp_l[i]), "prefill_pp": int(pp_l[i]), "prefill_instances": n_prefill,
            "decode_tp": int(tp_l[j]), "decode_pp": int(pp_l[j]), "decode_instances": n_decode,
            "batch": int(batch[b])}, best_rate, float(s.ttft_s), float(s.tpot_s), gpus, sc, r)
    return DisaggPlan(gpus=gpus, configurations_evaluated=evaluated, search_seconds=elapsed, aggregated=aggregated,
                      disaggregated=disaggregated)
