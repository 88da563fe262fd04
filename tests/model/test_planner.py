"""The training planner: on small spaces its best layout, Pareto front and counts equal a brute-force loop of
scalar `evaluate` calls; chunking does not change the answer; the map is the best over the other axes."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest

from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.inputs.scenario import OFFLOAD_MODES, RECOMPUTE
from trinity_desktop.model.search.hooks import SearchHooks
from trinity_desktop.model.search.planner import AXES, TrainSpace, plan_training, training_space

HW = presets.hardware_presets()
MODELS = presets.model_presets()


@functools.cache
def brute_force(model_key, hw_key, gpus, global_batch, seq_len, space):
    """Every layout of the space through the scalar model: (fitting [(time, memory, layout)], invalid, over)."""
    model, hardware = MODELS[model_key], HW[hw_key]
    fitting, invalid, over = [], 0, 0
    for values in itertools.product(*(getattr(space, a) for a in AXES)):
        v = dict(zip(AXES, values, strict=True))
        try:
            sc = Scenario(hardware=hardware, model=model, kind="train", gpus=gpus, global_batch=global_batch,
                          seq_len=seq_len, tp=v["tp"], pp=v["pp"], cp=v["cp"], ep=v["ep"], zero=v["zero"],
                          recompute=RECOMPUTE[v["recompute"]], micro_batch=v["micro_batch"],
                          virtual_stages=v["virtual_stages"], offload=OFFLOAD_MODES[v["offload"]])
        except ValidationError:
            invalid += 1
            continue
        r = evaluate(sc)
        if r.fits:
            fitting.append((r.time_total, r.memory_total, v))
        else:
            over += 1
    return fitting, invalid, over


def _key(layout):
    return tuple(layout[a] for a in ("tp", "pp", "cp", "ep", "zero", "recompute", "micro_batch", "virtual_stages",
                                     "offload"))


CASES = {
    "llama-3-8b on 16 H100": ("llama-3-8b", "h100-sxm", 16, 64, 4096,
                              TrainSpace(tp=(1, 2, 4, 8), pp=(1, 2, 4), cp=(1, 2), ep=(1,), micro_batch=(1, 2),
                                         virtual_stages=(1, 2))),
    "llama-3-70b on 64 A100 (memory-bound)": ("llama-3-70b", "a100-80gb-sxm", 64, 128, 4096,
                                              TrainSpace(tp=(2, 4, 8), pp=(2, 4, 8), cp=(1,), ep=(1,),
                                                         micro_batch=(1, 2), virtual_stages=(1, 2, 5))),
    "mixtral on 32 H100 (MoE, EP)": ("mixtral-8x7b", "h100-sxm", 32, 64, 4096,
                                     TrainSpace(tp=(1, 2, 4), pp=(1, 2), cp=(1,), ep=(1, 2, 4, 8),
                                                micro_batch=(1,), virtual_stages=(1, 2))),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_planner_equals_a_brute_force_loop_of_evaluate(case):
    model_key, hw_key, gpus, gb, seq, space = case
    model, hardware = MODELS[model_key], HW[hw_key]
    fitting, invalid, over = brute_force(model_key, hw_key, gpus, gb, seq, space)
    plan = plan_training(model, hardware, gpus, gb, seq, space=space, top=3, chunk_size=500)
    assert plan.configurations_evaluated == space.size
    assert (plan.feasible, plan.invalid, plan.not_fitting) == (len(fitting), invalid, over)
    assert fitting, "the case should have fitting layouts"
    best_t, best_m, best_v = min(fitting, key=lambda x: (x[0], x[1]))
    assert plan.best.time_per_step_s == best_t
    assert plan.best.memory_per_gpu_bytes == best_m
    assert [c.time_per_step_s for c in plan.top] == sorted(f[0] for f in fitting)[:3]
    # the Pareto front: no fitting layout is both faster and smaller than a front point, and every
    # non-dominated (time, memory) pair is on it
    pts = np.array([(t, m) for t, m, _ in fitting])
    front = {(c.time_per_step_s, c.memory_per_gpu_bytes) for c in plan.pareto}
    expected = {(t, m) for t, m in pts if not np.any((pts[:, 0] <= t) & (pts[:, 1] <= m)
                                                      & ((pts[:, 0] < t) | (pts[:, 1] < m)))}
    assert front == expected


def test_chunk_size_does_not_change_the_answer():
    model, hardware = MODELS["llama-3-70b"], HW["h100-sxm"]
    a = plan_training(model, hardware, 64, 256, 8192, chunk_size=1 << 17)
    b = plan_training(model, hardware, 64, 256, 8192, chunk_size=3000)
    assert a.as_json() | {"search_seconds": 0} == b.as_json() | {"search_seconds": 0}


def test_map_is_the_best_over_the_other_axes():
    model, hardware = MODELS["llama-3-8b"], HW["h100-sxm"]
    space = CASES["llama-3-8b on 16 H100"][5]
    fitting, _, _ = brute_force("llama-3-8b", "h100-sxm", 16, 64, 4096, space)
    plan = plan_training(model, hardware, 16, 64, 4096, space=space, map_axes=("micro_batch", "tp"),
                         chunk_size=400)
    for i, mb in enumerate(space.micro_batch):
        for j, tp in enumerate(space.tp):
            times = [t for t, _, v in fitting if v["micro_batch"] == mb and v["tp"] == tp]
            assert plan.map_time[i, j] == (min(times) if times else np.inf)


def test_reasons_and_cancel():
    model, hardware = MODELS["llama-3-70b"], HW["h100-sxm"]
    plan = plan_training(model, hardware, 64, 256, 8192)
    assert plan.invalid_reasons["gpus"] == max(plan.invalid_reasons.values())  # TP x PP x CP must divide 64
    assert sum(plan.invalid_reasons.values()) == plan.invalid
    assert sum(plan.not_fitting_reasons.values()) == plan.not_fitting
    assert plan.configurations_evaluated == plan.feasible + plan.invalid + plan.not_fitting
    calls = []
    stopped = plan_training(model, hardware, 64, 256, 8192, chunk_size=2000,
                            hooks=SearchHooks(progress=calls.append, cancelled=lambda: len(calls) >= 2))
    assert stopped.cancelled and len(calls) == 2 and stopped.configurations_evaluated < plan.configurations_evaluated


def test_default_space_covers_mla_and_moe_presets():
    sp = training_space(MODELS["deepseek-v3"], 2048, 4096, 4096)
    assert 256 in sp.ep and 1 in sp.virtual_stages and sp.size > 1e5
    plan = plan_training(MODELS["deepseek-v3"], HW["h100-sxm"], 2048, 4096, 4096, space=TrainSpace(
        tp=(4, 8), pp=(8, 16), cp=(1,), ep=(8, 16, 32), micro_batch=(1,), virtual_stages=(1, 2)))
    assert plan.best is not None and plan.best.results.fits


def test_bad_objective_names_the_field():
    with pytest.raises(ValidationError, match="objective"):
        plan_training(MODELS["llama-3-8b"], HW["h100-sxm"], 8, 8, 1024, objective="cost")


def test_serving_planner_equals_a_brute_force_loop_of_evaluate():
    from trinity_desktop.model.search.serving_planner import ServingSpace, plan_serving

    model, hardware = MODELS["llama-3-70b"], HW["h100-sxm"]
    space = ServingSpace(tp=(1, 2, 4, 8), batch=(1, 4, 16, 64, 256), weight_dtype=("bf16", "fp8", "int4"),
                         kv_dtype=("bf16", "fp8"), kv_offload=(0.0, 0.5))
    ttft, tpot = 1.0, 0.03
    good = []
    for tp, b, wd, kd, off in itertools.product(space.tp, space.batch, space.weight_dtype, space.kv_dtype,
                                                space.kv_offload):
        r = evaluate(Scenario(hardware=hardware, model=model, kind="decode", gpus=tp, batch=b, prompt_len=2048,
                              gen_len=256, weight_dtype=wd, kv_dtype=kd, kv_offload_fraction=off))
        if r.fits and r.infer["prefill_s"] <= ttft and r.infer["time_per_output_token_s"] <= tpot:
            good.append((r.infer["tokens_per_s"] * (8 // tp) / 8, r.infer["time_per_output_token_s"]))  # per budget GPU
    plan = plan_serving(model, hardware, 8, 2048, 256, ttft_slo=ttft, tpot_slo=tpot, space=space)
    assert plan.feasible == len(good) and plan.configurations_evaluated == space.size
    assert plan.best.tokens_per_s_per_gpu == max(g[0] for g in good)
    assert plan.best.layout["replicas"] * plan.best.layout["tp"] <= 8
    pts = np.array(good)
    expected = {(thr, lat) for thr, lat in good if not np.any(
        (pts[:, 0] >= thr) & (pts[:, 1] <= lat) & ((pts[:, 0] > thr) | (pts[:, 1] < lat)))}
    assert {(c.tokens_per_s_per_gpu, c.tpot_s) for c in plan.pareto} == expected


def test_serving_planner_with_pipeline_stages_equals_a_brute_force_loop_of_evaluate():
    """TP x PP up to 16 GPUs: pairs beyond the budget (and PP3, which does not divide 80 layers) are invalid;
    every other layout is checked by the scalar `evaluate` of a `calc infer --gpus TPxPP --pp PP` scenario."""
    from trinity_desktop.model.search.serving_planner import ServingSpace, plan_serving

    model, hardware, gpus = MODELS["llama-3-70b"], HW["h100-sxm"], 16
    space = ServingSpace(tp=(2, 4, 8, 16), pp=(1, 2, 3, 4), batch=(1, 8, 64), weight_dtype=("bf16", "int4"),
                         kv_dtype=("bf16", "fp8"), kv_offload=(0.0,))
    tpot_slo = 0.05
    good, invalid = [], 0
    for tp, pp, b, wd, kd, off in itertools.product(space.tp, space.pp, space.batch, space.weight_dtype,
                                                    space.kv_dtype, space.kv_offload):
        if tp * pp > gpus or model.layers % pp:
            invalid += 1
            continue
        r = evaluate(Scenario(hardware=hardware, model=model, kind="decode", gpus=tp * pp, pp=pp, batch=b,
                              prompt_len=2048, gen_len=256, weight_dtype=wd, kv_dtype=kd, kv_offload_fraction=off))
        if r.fits and r.infer["time_per_output_token_s"] <= tpot_slo:
            good.append((r.infer["tokens_per_s"] * (gpus // (tp * pp)) / gpus, r.infer["time_per_output_token_s"],
                         pp))
    plan = plan_serving(model, hardware, gpus, 2048, 256, tpot_slo=tpot_slo, space=space)
    assert plan.invalid == invalid and plan.feasible == len(good) and plan.configurations_evaluated == space.size
    assert plan.best.tokens_per_s_per_gpu == max(g[0] for g in good)
    lay = plan.best.layout
    assert lay["replicas"] == gpus // (lay["tp"] * lay["pp"])
    pts = np.array([g[:2] for g in good])
    expected = {(thr, lat) for thr, lat, _ in good if not np.any(
        (pts[:, 0] >= thr) & (pts[:, 1] <= lat) & ((pts[:, 0] > thr) | (pts[:, 1] < lat)))}
    assert {(c.tokens_per_s_per_gpu, c.tpot_s) for c in plan.pareto} == expected
    assert any(pp > 1 for _, _, pp in good)
