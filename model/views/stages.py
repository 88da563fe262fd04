"""Stage by stage: one training step or one inference request as a timeline of stages. Qt-free.

`stages(scenario, results=None) -> tuple[Stage, ...]` lays out the pieces the core times (model/step/training.py,
model/step/inference.py) on lanes, with start and end times, FLOPs and bytes per link per GPU, the live memory per
tier and the binding resource. The stage times are the core's own quantities (`TrainStep.pieces`; an inference request's
`request.decode_plan` and model/step/kv_residency.py); the last stage ends at `evaluate(scenario).time_total` for training and at `infer["request_s"]` for an inference request.

The training step's stages: model/views/train_stages.py; an inference request's: model/views/request_stages.py.
"""

from __future__ import annotations

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import Results, evaluate
from trinity_desktop.model.step.kv_residency import PLACEMENT_POLICIES
from trinity_desktop.model.step.request import DECODE_GROUPS, decode_plan, kv_spills, request_time
from trinity_desktop.model.views.request_stages import request_stages
from trinity_desktop.model.views.stage import (
    CPU_LANE,
    DP_LANE,
    GPU_LANE,
    GRAD_BUCKETS,
    HOST_LANE,
    LINKS,
    ROLES,
    Stage,
)
from trinity_desktop.model.views.train_stages import one_f_one_b, training_pieces, training_stages

__all__ = ["DECODE_GROUPS", "GRAD_BUCKETS", "LINKS", "ROLES", "Stage", "bubble_fraction", "kv_spills", "lane_order",
           "notes", "one_f_one_b", "refreshed_stage", "request_time", "stages", "stages_json", "training_pieces"]

def stages(scenario: Scenario, results: Results | None = None, kv_placement: str = "spill") -> tuple[Stage, ...]:
    """The stages of one training step (kind "train") or one inference request (prefill + decode), sorted by
    start time. `results` is `evaluate(scenario)`; passed in when the caller has it already. `kv_placement`
    ("spill" or "evict", model/step/kv_residency.py) decides what happens to KV that HBM cannot hold: spill draws
    offload/onload stages to the slower tiers; evict drops it (no transfers, residency's shorter step)."""
    if not isinstance(scenario, Scenario):
        raise ValidationError("scenario", type(scenario).__name__, "a Scenario")
    if kv_placement not in PLACEMENT_POLICIES:
        raise ValidationError("kv_placement", kv_placement, "one of " + ", ".join(PLACEMENT_POLICIES))
    r = evaluate(scenario) if results is None else results
    if r.scenario != scenario:
        raise ValidationError("results", "results of another scenario", "evaluate(scenario)")
    out = (training_stages(scenario, r) if scenario.kind == "train"
           else request_stages(scenario, r, kv_placement))
    lanes = lane_order(out)
    return tuple(sorted(out, key=lambda st: (st.start_s, lanes.index(st.lane), st.end_s)))


def stages_json(scenario: Scenario, results: Results | None = None, kv_placement: str = "spill") -> list[dict]:
    """`stages` as plain dicts for `calc train|infer --json`: name, kind, lane, start_s, end_s, duration_s,
    flops, bytes_by_link, live_memory_by_tier (hbm, host; cxl, ssd when the KV uses them), binding,
    micro_batch (SI units, per GPU)."""
    return [st.as_dict() for st in stages(scenario, results, kv_placement)]


def lane_order(items) -> list[str]:
    """Lanes top to bottom: pipeline stages in rank order, then the DP network, host link and host CPU."""
    names = {st.lane for st in items}
    pipe = sorted((n for n in names if n.startswith("stage ")), key=lambda n: int(n.split()[1]))
    rest = [n for n in (GPU_LANE, DP_LANE, HOST_LANE, CPU_LANE) if n in names]
    return pipe + rest + sorted(names - set(pipe) - set(rest))


def notes(scenario: Scenario) -> tuple[str, ...]:
    """The assumptions a reader of the timeline should see, in words."""
    if scenario.kind == "train":
        return ("Data load: m·b·s token ids at 4 bytes over the host link, prefetched (no exposed time).",
                "TP/CP/EP collectives and pipeline sends are drawn after each block's compute (they interleave "
                "with the layers in Megatron-LM; the block length is the core's).",
                "The DP network and host-link lanes show one GPU of pipeline stage 0.",
                f"The gradient sync is drawn as {GRAD_BUCKETS} equal buckets overlapping the last backward.")
    if scenario.kind != "train" and decode_plan(scenario).kv is not None:  # the KV cache spills (kv_spills)
        return ("Decode steps are grouped; each group is timed at its mean context by the KV residency model "
                "(the cache does not fit in HBM and spills to slower tiers).",
                "KV onload: every decode step reads the off-HBM KV over the host link (bytes / bandwidth + one "
                "latency per 16-token page), not overlapped with compute; prefill first offloads the prompt's "
                "spilled KV.")
    return ("Decode steps are grouped; each group is timed by the core at its mean context.",
            "The KV cache fits in HBM: no offload or onload between memory tiers.")


def bubble_fraction(items, lane: str | None = None) -> float:
    """Idle share of one pipeline lane over the pipeline phase (time 0 to the last backward on any stage); no lane:
    the least idle stage lane, the busiest stage's, whose idle time is the core's bubble when the last stage paces
    (formulas/pipeline_bubble.py). 1F1B with uniform blocks: (p-1)/(m+p-1) on every stage (Narayanan et al. 2021)."""
    ends = [st.end_s for st in items if st.role in ("backward", "steady")]
    if not ends:
        return 0.0
    end = max(ends)
    lanes = [lane] if lane else sorted({st.lane for st in items if st.lane.startswith("stage ")}) or ["stage 0"]
    idle = min(sum(max(0.0, min(st.end_s, end) - st.start_s) for st in items if st.lane == ln and st.kind == "idle")
               for ln in lanes)
    return idle / end if end > 0 else 0.0


def refreshed_stage(results, stage: tuple[str, dict] | None) -> tuple[str, dict] | None:
    """The same stage (name and lane, nearest start) in the stages of new `results`, as (name,
    `Stage.as_dict()`), so a highlight stays true when the scenario changes; None when it no longer exists."""
    if stage is None:
        return None
    name, numbers = stage
    try:
        fresh = stages(results.scenario, results)
    except (ValidationError, ValueError, KeyError, RuntimeError):
        return None
    lane = numbers.get("lane")
    same = [st for st in fresh if st.name == name and (lane is None or st.lane == lane)]
    if not same:
        return None
    start = float(numbers.get("start_s", 0.0))
    return name, min(same, key=lambda st: abs(st.start_s - start)).as_dict()
