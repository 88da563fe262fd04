"""Disaggregated serving of a scenario (#23): its prefill pool and decode pool timed with the inference step,
the KV transfer between them and each pool's rate (formulas/disaggregation.py has the formulas and sources), next
to aggregated serving on the same number of GPUs (replicas of the scenario's own layout).

`pools_served` is the one composition, on arrays: `disaggregated_serving(scenario)` calls it on the scenario's
numbers, the disaggregation planner (model/search/disagg_planner.py) on a grid of pool layouts.
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp
from trinity_desktop.model.base.dtypes import BYTES_PER_ELEMENT
from trinity_desktop.model.formulas.disaggregation import (
    aggregated_rate,
    aggregated_tpot,
    exposed_transfer,
    kv_transfer_bytes,
    kv_transfer_time,
    pool_rates,
    served_rate,
)
from trinity_desktop.model.formulas.kv_policy import KV_POLICY_CODE, arch_kept, kept_tokens
from trinity_desktop.model.inputs.disaggregation_layout import DisaggregatedLayout, disaggregated_layout
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.inference import kv_bytes_per_token, kv_share_per_gpu
from trinity_desktop.model.step.run import infer_step_of

POOLS_OFF = {"prefill_gpus": 0, "decode_gpus": 0, "prefill_tp": 0, "prefill_pp": 0, "decode_tp": 0, "decode_pp": 0}
BINDING = ("prefill pool", "decode pool", "KV link")


@dataclass(frozen=True)
class PoolsServed:
    """Arrays (or floats) of one or many disaggregated deployments: the KV transfer and the pools' rates."""

    kv_transfer_bytes: object
    kv_transfer_s: object
    kv_transfer_exposed_s: object
    ttft_s: object
    tpot_s: object
    prefill_rate: object
    decode_rate: object
    link_rate: object
    requests_per_s: object


def kv_prompt_bytes(sc: Scenario) -> float:
    """One request's KV at the end of its prompt, whole model: the tokens the KV policy and the model's own
    window keep at the prompt's length x `inference.kv_bytes_per_token` at the KV format."""
    arch = sc.model
    kept = kept_tokens(KV_POLICY_CODE[sc.kv_policy], sc.prompt_len, sc.kv_window, sc.kv_sinks, sc.kv_heavy_ratio,
                       sc.razor_retrieval_fraction)
    kept = arch_kept(kept, arch.sliding_window, arch.window_layer_share)
    return float(kv_transfer_bytes(kept, kv_bytes_per_token(arch, BYTES_PER_ELEMENT[sc.kv_dtype])))


@dataclass(frozen=True)
class PoolTimes:
    """The pools' instance times (the core's inference step): one prompt's prefill, a decode of `batch` sequences
    (its decode_s, the time per output token)."""

    prefill_s_one: object
    decode_s: object
    tpot: object
    batch: object


def pools_served(sc: Scenario, request_bytes, times: PoolTimes, *, prefill_tp, prefill_pp, decode_tp, decode_pp,
                 prefill_instances, decode_instances, intra) -> PoolsServed:
    """The KV transfer over the pools' link (scale-up where `intra`) and the pools' rates at the instances'
    `times`, broadcast over every argument (formulas/disaggregation.py)."""
    prefill_s_one, decode_s, tpot, batch = times.prefill_s_one, times.decode_s, times.tpot, times.batch
    arch, hw, eta = sc.model, sc.hardware, sc.efficiency.network
    share_p = kv_share_per_gpu(arch, prefill_tp) / xp.asarray(prefill_pp, dtype=float)
    share_d = kv_share_per_gpu(arch, decode_tp) / xp.asarray(decode_pp, dtype=float)
    bw = xp.where(intra, hw.scaleup_bw, hw.scaleout_bw)
    alpha = xp.where(intra, hw.scaleup_latency_s, hw.scaleout_latency_s)
    t = kv_transfer_time(request_bytes, share_p, share_d, bw, alpha, eta)
    exposed = exposed_transfer(t, prefill_s_one, arch.layers, sc.kv_transfer_layerwise)
    r_p, r_d, r_l = pool_rates(prefill_instances, prefill_s_one, decode_instances, batch, decode_s, t)
    # the exposed transfer is one longer gap before the request's second token, in the mean over its g tokens
    tpot_seen = tpot + exposed / sc.gen_len
    return PoolsServed(kv_transfer_bytes=request_bytes * xp.ones_like(t), kv_transfer_s=t,
                       kv_transfer_exposed_s=exposed, ttft_s=prefill_s_one * xp.ones_like(t), tpot_s=tpot_seen,
                       prefill_rate=r_p, decode_rate=r_d, link_rate=r_l, requests_per_s=served_rate(r_p, r_d, r_l))


@dataclass(frozen=True)
class DisaggregatedServing:
    """A disaggregated scenario's pools against aggregated replicas of its own layout on the same GPUs."""

    layout: DisaggregatedLayout
    served: PoolsServed
    prefill_fits: bool
    decode_fits: bool
    binding: str                 # the pool (or the link) that sets the served rate
    aggregated_requests_per_s: float
    aggregated_ttft_s: float
    aggregated_tpot_s: float     # with the stalls of the prefills that refill the batch
    gen_len: int

    def notes(self) -> list[str]:
        """What a reader of the scenario's other numbers should know: they are its own replica's, and a pool
        that does not fit in HBM."""
        lay, hbm = self.layout, "does not fit in HBM: its rate is computed, it would not run"
        out = [f"Disaggregated: prefill pool {lay.prefill.gpus} GPUs (TP{lay.prefill.tp} PP{lay.prefill.pp}) and "
               f"decode pool {lay.decode.gpus} GPUs (TP{lay.decode.tp} PP{lay.decode.pp}); the memory, time and "
               "pressures above are one replica of the scenario's own layout (aggregated serving)."]
        out += [f"The {name} instance {hbm}." for name, ok in (("prefill", self.prefill_fits),
                                                               ("decode", self.decode_fits)) if not ok]
        return out

    def as_json(self) -> dict:
        """The `disaggregated` object of `calc infer --json` (snake_case keys, SI units)."""
        lay, s, g = self.layout, self.served, self.layout.gpus
        gen = {"prefill": lay.prefill, "decode": lay.decode}
        pools = {name: {"gpus": p.gpus, "tp": p.tp, "pp": p.pp, "instances": p.instances} for name, p in gen.items()}
        rate, tokens = float(s.requests_per_s), float(s.requests_per_s) * self.gen_len
        return {
            "prefill_pool": {**pools["prefill"], "requests_per_s": float(s.prefill_rate),
                             "requests_per_s_per_gpu": float(s.prefill_rate) / lay.prefill.gpus,
                             "fits": self.prefill_fits},
            "decode_pool": {**pools["decode"], "requests_per_s": float(s.decode_rate),
                            "requests_per_s_per_gpu": float(s.decode_rate) / lay.decode.gpus,
                            "fits": self.decode_fits},
            "kv_transfer_link": lay.link, "kv_transfer_bytes": float(s.kv_transfer_bytes),
            "kv_transfer_s": float(s.kv_transfer_s), "kv_transfer_exposed_s": float(s.kv_transfer_exposed_s),
            "kv_link_requests_per_s": float(s.link_rate) if xp.isfinite(s.link_rate) else None,
            "ttft_s": float(s.ttft_s), "tpot_s": float(s.tpot_s), "requests_per_s": rate,
            "tokens_per_s_per_gpu": tokens / g, "binding": self.binding, "gpus": g,
            "aggregated": {"requests_per_s": self.aggregated_requests_per_s,
                           "tokens_per_s_per_gpu": self.aggregated_requests_per_s * self.gen_len / g,
                           "ttft_s": self.aggregated_ttft_s, "tpot_s": self.aggregated_tpot_s},
            "speedup_over_aggregated": rate / self.aggregated_requests_per_s if self.aggregated_requests_per_s else None,
        }


def pool_scenarios(sc: Scenario) -> tuple[Scenario, Scenario]:
    """One prefill instance (one prompt) and one decode instance (the scenario's batch) as plain serving
    scenarios, pools off: what the pools' times, and the flow's pool lanes, are computed from."""
    lay = disaggregated_layout(sc)
    base = sc.replace(**POOLS_OFF)
    return (base.replace(kind="prefill", gpus=lay.prefill.instance_gpus, pp=lay.prefill.pp, batch=1),
            base.replace(kind="decode", gpus=lay.decode.instance_gpus, pp=lay.decode.pp))


def disaggregated_serving(sc: Scenario) -> DisaggregatedServing:
    """Time the scenario's prefill instance (one prompt), decode instance (its batch) and aggregated replica,
    then combine them (`pools_served`)."""
    lay = disaggregated_layout(sc)
    base = sc.replace(**POOLS_OFF)
    p_sc, d_sc = pool_scenarios(sc)
    p, d = infer_step_of(p_sc), infer_step_of(d_sc)
    intra = lay.link == "scale-up"
    times = PoolTimes(prefill_s_one=float(p.prefill_s), decode_s=float(d.decode_s),
                      tpot=float(d.time_per_output_token_s), batch=sc.batch)
    served = pools_served(sc, kv_prompt_bytes(sc), times, prefill_tp=lay.prefill.tp, prefill_pp=lay.prefill.pp,
                          decode_tp=lay.decode.tp, decode_pp=lay.decode.pp, prefill_instances=lay.prefill.instances,
                          decode_instances=lay.decode.instances, intra=intra)
    rates = (float(served.prefill_rate), float(served.decode_rate), float(served.link_rate))
    # aggregated: replicas of the scenario's own layout on the pools' GPUs, prefilling arrivals one at a time
    agg_one = infer_step_of(base.replace(kind="prefill", batch=1))
    agg = infer_step_of(base.replace(kind="decode"))
    tpot_seen = float(aggregated_tpot(agg.time_per_output_token_s, sc.batch, agg_one.prefill_s, sc.gen_len))
    agg_rate = float(aggregated_rate(lay.gpus // sc.gpus, sc.batch, tpot_seen, sc.gen_len))
    hbm = sc.hardware.hbm_bytes
    return DisaggregatedServing(layout=lay, served=served, prefill_fits=bool(p.memory_total <= hbm),
                               decode_fits=bool(d.memory_total <= hbm), binding=BINDING[rates.index(min(rates))],
                               aggregated_requests_per_s=agg_rate, aggregated_ttft_s=float(agg_one.prefill_s),
                               aggregated_tpot_s=tpot_seen, gen_len=sc.gen_len)

