"""Capacity planner: the fewest GPUs, and their layout, that serve a request rate R within p95 TTFT and TPOT targets
(aiconfigurator's `recommend` question), on top of the serving planner's layout space.

The layouts are the serving planner's (`serving_planner.serving_space`): TP (divisors of the heads) x PP (divisors
of the layers) with TP x PP up to the largest replica searched, every weight and KV-cache format the hardware
computes or stores (no KV offload: each replica keeps its KV in HBM). For each weight format one open-grid
`evaluate_grid` call times every (TP, PP, KV format) replica over the decode batches of the load model
(model/search/load.py), whose bisections then give each replica's highest rate within the targets, r_max.
Requests are spread evenly and at random over n identical replicas, so each sees a Poisson stream of R / n
(thinning); the layout needs n = ceil(R / r_max) replicas and n x TP x PP GPUs. The plan is the layout with the
fewest GPUs (ties: the most headroom, n r_max / R); it is re-evaluated with the scalar path, so `calc infer --gpus
TPxPP --pp PP --rate R/n` with the same options prints the same latencies.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.dtypes import BYTES_PER_ELEMENT
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.base.ranges import SCENARIO_LIMITS
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.search.hooks import NO_HOOKS, SearchHooks
from trinity_desktop.model.search.load import (
    LoadReport,
    StepCosts,
    batch_grid,
    load_report,
    max_rate_within_slo,
    saturation_rate,
    step_costs_from_grid,
)
from trinity_desktop.model.search.serving_planner import scenario_for, serving_space
from trinity_desktop.model.step.evaluation import evaluate_grid


@dataclass(frozen=True)
class CapacityOption:
    """One replica layout that meets the targets at some rate: its highest rate within them, r_max, and the GPUs
    it needs for the plan's rate, ceil(R / r_max) x TP x PP."""

    layout: Mapping[str, object]
    max_rate_per_replica: float
    gpus: int


@dataclass(frozen=True)
class CapacityPlan:
    """The fewest GPUs serving `rate` within the targets: the layout (None when no layout meets them), replicas,
    GPUs, each replica's highest rate within the targets and its load read-out at rate / replicas."""

    rate_per_s: float
    ttft_slo_s: float | None
    tpot_slo_s: float | None
    layouts_searched: int
    layouts_meeting_targets: int
    search_seconds: float
    layout: Mapping[str, object] | None
    gpus: int | None
    max_rate_per_replica: float | None
    replica_load: LoadReport | None
    scenario: Scenario | None
    options: tuple[CapacityOption, ...] = ()  # every layout meeting the targets, fewest GPUs first
    cancelled: bool = False

    def as_json(self) -> dict:
        return {"rate_per_s": self.rate_per_s, "ttft_slo_s": self.ttft_slo_s, "tpot_slo_s": self.tpot_slo_s,
                "layouts_searched": self.layouts_searched, "layouts_meeting_targets": self.layouts_meeting_targets,
                "search_seconds": self.search_seconds, "gpus": self.gpus,
                "layout": dict(self.layout) if self.layout else None,
                "max_rate_per_replica": self.max_rate_per_replica,
                "replica_load": self.replica_load.as_json() if self.replica_load else None}


def plan_capacity(model: Architecture, hardware, rate: float, prompt_len: int, gen_len: int, *,
                  ttft_slo_s: float = 0.0, tpot_slo_s: float = 0.0, max_replica_gpus: int = 8,
                  chunk_tokens: int = SCENARIO_LIMITS["prefill_chunk_tokens"].default,
                  hooks: SearchHooks = NO_HOOKS, **fixed) -> CapacityPlan:
    """Search every replica layout up to `max_replica_gpus` GPUs (module docstring); `fixed` holds other Scenario
    fields (gpus_per_node, efficiency, the KV policy ...). Targets in seconds, 0 = none. `hooks.progress` gets the
    share of weight formats timed; `hooks.cancelled` stops the search between them (the plan then has no layout)."""
    if not 0 < rate <= SCENARIO_LIMITS["request_rate"].highest:
        raise ValidationError("rate", rate, SCENARIO_LIMITS["request_rate"].describe())
    t0 = time.perf_counter()
    space = serving_space(model, hardware, max_replica_gpus)
    tp, pp = np.asarray(space.tp, dtype=np.int64), np.asarray(space.pp, dtype=np.int64)
    kv = np.asarray([BYTES_PER_ELEMENT[d] for d in space.kv_dtype], dtype=float)
    grid = batch_grid(chunk_tokens)
    fits_budget = (tp[:, None] * pp[None, :] <= max_replica_gpus)[:, :, None]
    tables, valids = [], []
    for n, wd in enumerate(space.weight_dtype):
        if hooks.stopped():
            return CapacityPlan(rate_per_s=rate, ttft_slo_s=ttft_slo_s or None, tpot_slo_s=tpot_slo_s or None,
                                layouts_searched=0, layouts_meeting_targets=0, search_seconds=time.perf_counter() - t0,
                                layout=None, gpus=None, max_rate_per_replica=None, replica_load=None, scenario=None,
                                cancelled=True)
        base = Scenario(hardware=hardware, model=model, kind="decode", gpus=int(tp[0]), batch=1,
                        prompt_len=prompt_len, gen_len=gen_len, weight_dtype=wd, prefill_chunk_tokens=chunk_tokens,
                        **fixed)
        axes = {"tp": tp[:, None, None, None], "pp": pp[None, :, None, None], "kv_bytes": kv[None, None, :, None],
                "batch": grid[None, None, None, :]}
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = evaluate_grid(base, **axes)
        tables.append(step_costs_from_grid(out, grid, gen_len, chunk_tokens, hardware.hbm_bytes))
        shape = tables[-1].max_running.shape
        valids.append(fits_budget & np.broadcast_to(out.valid, shape + grid.shape)[..., 0])
        hooks.report((n + 1) / (len(space.weight_dtype) + 1))
    costs = stack_costs(tables)  # (weight format, TP, PP, KV format): one bisection for every layout
    valid = np.stack(valids)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r_max = np.where(valid, max_rate_within_slo(costs, ttft_slo_s, tpot_slo_s, saturation_rate(costs)), 0.0)
    searched = int(np.count_nonzero(np.broadcast_to(fits_budget, valid.shape)))
    ok = valid & (r_max > 0)
    best, ranked = None, []  # (gpus, -headroom, layout, r_max)
    for w, i, j, k in zip(*np.nonzero(ok), strict=True):  # the layouts that meet the targets, in Python: a few hundred
        replicas = math.ceil(rate / float(r_max[w, i, j, k]) - 1e-12)
        gpus = replicas * int(tp[i]) * int(pp[j])
        key = (gpus, -replicas * float(r_max[w, i, j, k]) / rate)
        layout = {"tp": int(tp[i]), "pp": int(pp[j]), "replicas": replicas,
                  "weight_dtype": space.weight_dtype[w], "kv_dtype": space.kv_dtype[k]}
        ranked.append((key, CapacityOption(layout=layout, max_rate_per_replica=float(r_max[w, i, j, k]), gpus=gpus)))
        if best is None or key < best[:2]:
            best = (*key, layout, float(r_max[w, i, j, k]))
    options = tuple(o for _, o in sorted(ranked, key=lambda r: r[0]))
    meeting = int(np.count_nonzero(ok))
    elapsed = time.perf_counter() - t0
    if best is None:
        return CapacityPlan(rate_per_s=rate, ttft_slo_s=ttft_slo_s or None, tpot_slo_s=tpot_slo_s or None,
                            layouts_searched=searched, layouts_meeting_targets=0, search_seconds=elapsed, layout=None,
                            gpus=None, max_rate_per_replica=None, replica_load=None, scenario=None)
    gpus, _, layout, r_max_best = best
    # one replica as `calc infer` runs it: the batch is the load model's, the KV stays in HBM
    sc = scenario_for(model, hardware, prompt_len, gen_len, {**layout, "batch": 1, "kv_offload": 0.0},
                      prefill_chunk_tokens=chunk_tokens, **fixed)
    sc = sc.replace(request_rate=rate / layout["replicas"], ttft_slo_s=ttft_slo_s, tpot_slo_s=tpot_slo_s)
    return CapacityPlan(rate_per_s=rate, ttft_slo_s=ttft_slo_s or None, tpot_slo_s=tpot_slo_s or None,
                        layouts_searched=searched, layouts_meeting_targets=meeting, search_seconds=elapsed,
                        layout=layout, gpus=gpus, max_rate_per_replica=r_max_best, replica_load=load_report(sc),
                        scenario=sc, options=options)


def stack_costs(tables: list[StepCosts]) -> StepCosts:
    """Step costs of several grids (one per weight format) stacked on a new leading axis."""
    first = tables[0]
    return StepCosts(batch=first.batch, **{name: np.stack([getattr(c, name) for c in tables]) for name in (
        "decode_step_s", "prefill_token_s", "fixed_s", "prompt_tokens", "max_running")},
        gen_tokens=first.gen_tokens, chunk_tokens=first.chunk_tokens)
