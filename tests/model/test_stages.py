"""Stage model and variants: the timeline adds up to the core's step time, the 1F1B bubble is the other stages'
fill and drain (balanced: (p-1)/(m+p-1)),
overlap hides no more than the backward, decode slows as the cache grows, and techniques move the bottleneck."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trinity_desktop.model.step.request as request_mod
import trinity_desktop.model.views.stages as stages_mod
import trinity_desktop.model.views.train_stages as train_stages_mod
from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.formulas.overlap import DDP_BUCKET_BYTES
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.inputs.tiers import tier_map
from trinity_desktop.model.step.evaluation import evaluate_grid
from trinity_desktop.model.step.kv_residency import residency_at, residency_curve
from trinity_desktop.model.views.stages import (
    LINKS,
    Stage,
    bubble_fraction,
    one_f_one_b,
    stages,
    stages_json,
    training_pieces,
)
from trinity_desktop.model.views.variants import VARIANTS, baseline, compare, variant_scenarios

MODELS = presets.model_presets()
HARDWARE = presets.hardware_presets()
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ONE_GPU_LANES = ("stage 0", "DP network", "host link", "host CPU")


def makespan(items) -> float:
    return max(s.end_s for s in items) - min(s.start_s for s in items)


def pipeline_end(items) -> float:
    return max(s.end_s for s in items if s.name.startswith("backward"))


TRAIN_CASES = {
    "default (TP8 PP2 DP4, ZeRO-1, selective)": {},
    "ZeRO-3": dict(zero=3),
    "ZeRO-0 full recompute": dict(zero=0, recompute="full"),
    "optimizer offload": dict(offload="optimizer"),
    "activation offload": dict(offload="activations"),
    "DGC 270x": dict(grad_compression=270.0),
    "PP4, 512 micro-batches (grouped steady state)": dict(pp=4, global_batch=1024),
    "PP8, fewer micro-batches than stages": dict(pp=8, global_batch=4 * 4),
    "CP2": dict(cp=2, gpus=128),
    "single node, no pipeline": dict(gpus=8, pp=1, global_batch=8),
    "everything at once": dict(zero=3, offload="activations", pp=4, global_batch=800, grad_compression=300.0),
    "interleaved PP4 v2": dict(pp=4, virtual_stages=2, global_batch=32),
    "interleaved PP4 v5, 256 micro-batches (grouped)": dict(pp=4, virtual_stages=5, global_batch=512),
    "interleaved PP8 v2, ZeRO-3, activation offload": dict(pp=8, virtual_stages=2, global_batch=16, zero=3,
                                                           offload="activations"),
}


@pytest.fixture(scope="module")
def default_stages():
    sc = default_scenario()
    r = evaluate(sc)
    return sc, r, stages(sc, r)


# --- training: the timeline is the core's step ---------------------------------------------------------

@pytest.mark.parametrize("changes", list(TRAIN_CASES.values()), ids=list(TRAIN_CASES))
def test_training_stages_add_up_to_the_core_step_time(changes):
    sc = default_scenario().replace(**changes)
    r = evaluate(sc)
    items = stages(sc, r)
    assert makespan(items) == pytest.approx(r.time_total, rel=1e-6)
    assert min(s.start_s for s in items) == 0.0
    # bytes of one GPU of stage 0 (its lane plus the network and host lanes drawn for it) are the core's
    for link in LINKS:
        drawn = sum(s.bytes_by_link[link] for s in items if s.lane in ONE_GPU_LANES and s.kind != "io")
        assert drawn == pytest.approx(r.bytes_by_link[link], rel=1e-9, abs=1e-3)
    # the peak live HBM is the core's memory per GPU (first stage, min(p, m) micro-batches in flight)
    assert max(s.live_memory_by_tier["hbm"] for s in items) == pytest.approx(r.memory_total, rel=1e-9)


@pytest.mark.parametrize("changes", list(TRAIN_CASES.values()), ids=list(TRAIN_CASES))
def test_pipeline_lanes_are_tiled_without_overlap(changes):
    sc = default_scenario().replace(**changes)
    r = evaluate(sc)
    items = stages(sc, r)
    for k in range(sc.pp):
        lane = sorted((s for s in items if s.lane == f"stage {k}"), key=lambda s: s.start_s)
        assert lane[0].start_s == 0.0
        for a, b in zip(lane, lane[1:], strict=False):
            assert b.start_s == pytest.approx(a.end_s, rel=1e-9, abs=1e-12), (a.name, b.name)
        assert lane[-1].end_s == pytest.approx(r.time_total, rel=1e-9)


def stage_times(sc) -> np.ndarray:
    """Each stage's seconds per micro-batch from the core's pieces: its compute and the busiest's exposed comm."""
    P = training_pieces(sc)
    comm = P.tp_exposed_mb_s + P.cp_mb_s + P.ep_exposed_mb_s + P.pp_exposed_mb_s
    p = int(P.pp)
    if p == 1:
        return np.array([P.compute_mb_s + comm])
    return np.array([P.first_stage_mb_s, *[P.middle_stage_mb_s] * (p - 2), P.last_stage_mb_s]) + comm


@pytest.mark.parametrize("pp,global_batch", [(2, 256), (4, 64), (8, 16), (8, 4 * 3), (4, 1024)])
def test_bubble_fraction_is_one_f_one_b(pp, global_batch):
    """The last stage (the output head and the loss) is the busiest: the pipeline lasts m·t_max + the other stages'
    t_s once (formulas/pipeline_bubble.py), and each lane idles all of it but its own m·t_s."""
    sc = default_scenario().replace(pp=pp, global_batch=global_batch)
    r = evaluate(sc)
    p, m = sc.pp, r.train["micro_batches"]
    items = stages(sc, r)
    t = stage_times(sc)
    assert t[-1] == t.max() and t[-1] > t[0]
    pipeline = m * t.max() + t.sum() - t.max()
    assert pipeline_end(items) == pytest.approx(pipeline, rel=1e-9)
    for k in range(p):
        assert bubble_fraction(items, f"stage {k}") == pytest.approx(1.0 - m * t[k] / pipeline, rel=1e-9)
    # and the core agrees: bubble / pipeline
    assert r.time["pipeline_bubble"] / pipeline_end(items) == pytest.approx((t.sum() - t.max()) / pipeline, rel=1e-9)


def test_one_f_one_b_hand_schedule():
    """p = 2, m = 2, t_f = 1, t_b = 2, derived by hand: stage 1 runs F0 B0 F1 B1 back to back after F0 of
    stage 0; stage 0 runs F0 F1, waits for B0 of stage 1, then B0 and B1. Makespan (m+p-1)(t_f+t_b) = 9."""
    f, b = one_f_one_b(2, 2, 1.0, 2.0)
    np.testing.assert_array_equal(f, [[0.0, 1.0], [1.0, 4.0]])
    np.testing.assert_array_equal(b, [[4.0, 7.0], [2.0, 5.0]])
    assert b[0, -1] + 2.0 == 9.0
    with pytest.raises(ValidationError):
        one_f_one_b(0, 3, 1.0, 1.0)


def test_grouped_steady_state_matches_the_full_schedule(monkeypatch):
    sc = default_scenario().replace(pp=4, global_batch=2 * 150, zero=3, offload="activations")
    grouped = {(s.lane, s.name): (s.start_s, s.end_s) for s in stages(sc) if s.kind != "idle"}
    assert any(name.startswith("steady 1F1B") for _, name in grouped)
    monkeypatch.setattr(train_stages_mod, "MAX_SIMULATED_MICRO_BATCHES", 10_000)
    full = {(s.lane, s.name): (s.start_s, s.end_s) for s in stages(sc) if s.kind != "idle"}
    common = set(grouped) & set(full)
    assert len(common) > 0.9 * len(grouped)
    for key in common:
        assert grouped[key] == pytest.approx(full[key], rel=1e-12, abs=1e-9), key


def test_overlapped_gradient_sync_hides_no_more_than_the_backward():
    """ZeRO-0 on 8 nodes: the DP all-reduce of a 70B model's stage is far longer than one backward."""
    sc = default_scenario().replace(zero=0, pp=1, gpus=64, global_batch=64, offload="optimizer")
    r = evaluate(sc)
    items = stages(sc, r)
    end = pipeline_end(items)
    t_bwd = r.train["backward_time_last_micro_batch"]
    sync = [s for s in items if s.name.startswith(("DP gradient", "gradients to host"))]
    hidden = sum(max(0.0, min(s.end_s, end) - s.start_s) for s in sync)
    total = sum(s.duration_s for s in sync)
    assert total > t_bwd                                    # this case does expose communication
    assert hidden <= t_bwd * (1 + 1e-9)
    assert hidden == pytest.approx(t_bwd, rel=1e-9)          # the whole backward is used for overlap
    assert min(s.start_s for s in sync) == pytest.approx(end - t_bwd, rel=1e-12)
    # what is not hidden is the core's exposed time: step = pipeline + (sync - t_bwd) + optimizer + ...
    assert max(s.end_s for s in sync) - end == pytest.approx(total - t_bwd, rel=1e-9)


def test_default_overlap_is_hidden_but_the_last_bucket(default_stages):
    sc, r, items = default_stages
    end = pipeline_end(items)
    sync = [s for s in items if s.name.startswith("DP gradient")]
    assert len(sync) == stages_mod.GRAD_BUCKETS
    # 0.33 s of reduce-scatter behind a 0.35 s backward: all but the last 25 MiB DDP bucket (formulas/overlap.py)
    p = training_pieces(sc)
    total = sum(s.duration_s for s in sync)
    last_bucket = total * DDP_BUCKET_BYTES / p.dense_grad_bytes  # a dense model: every gradient is dense
    assert max(s.end_s for s in sync) - end == pytest.approx(last_bucket, rel=1e-6)
    assert sum(s.duration_s for s in sync) <= r.train["backward_time_last_micro_batch"]


def test_stage_numbers_are_the_cores_pieces(default_stages):
    sc, r, items = default_stages
    p = training_pieces(sc)
    m = r.train["micro_batches"]
    assert p.compute_mb_s * m == pytest.approx(r.time["compute"], rel=1e-12)
    assert p.backward_mb_s == pytest.approx(r.train["backward_time_last_micro_batch"], rel=1e-12)
    assert p.optimizer_s == pytest.approx(r.time["optimizer"], rel=1e-12)
    # the FLOPs of one stage-0 GPU over the step: hardware FLOPs / (DP x TP x PP x CP)
    flops = sum(s.flops for s in items if s.lane == "stage 0")
    assert flops == pytest.approx(r.train["hardware_flops"] / sc.gpus, rel=1e-9)
    fwd = next(s for s in items if s.name == "forward mb 0" and s.lane == "stage 0")
    bwd = next(s for s in items if s.name == "backward mb 0" and s.lane == "stage 0")
    assert fwd.binding == bwd.binding == "compute"
    # 1F1B in-flight activations on stage 0 at the first forward of the steady phase: p micro-batches
    steady = next(s for s in items if s.name == f"forward mb {sc.pp - 1}" and s.lane == "stage 0")
    assert steady.live_memory_by_tier["hbm"] == pytest.approx(r.memory_total, rel=1e-12)


def test_backward_to_forward_flop_ratio():
    """No recomputation, no FlashAttention: hardware = model FLOPs, backward = 2 x forward."""
    sc = default_scenario().replace(recompute="none", flash_attention=False, zero=3)
    items = stages(sc)
    fwd = next(s for s in items if s.name == "forward mb 0" and s.lane == "stage 0")
    bwd = next(s for s in items if s.name == "backward mb 0" and s.lane == "stage 0")
    assert bwd.flops == pytest.approx(2.0 * fwd.flops, rel=1e-12)
    assert bwd.duration_s == pytest.approx(2.0 * fwd.duration_s, rel=1e-12)
    assert not any(s.name.startswith("recompute") for s in items)


def test_does_not_fit_binds_memory():
    sc = default_scenario().replace(recompute="none", flash_attention=False)
    r = evaluate(sc)
    assert not r.fits
    items = stages(sc, r)
    peak = max(items, key=lambda s: s.live_memory_by_tier["hbm"])
    assert peak.binding == "memory"


# --- inference ---------------------------------------------------------------------------------------

def _infer(**changes) -> Scenario:
    return default_scenario().replace(kind="decode", gpus=8, pp=1, **changes)  # one TP8 group


@pytest.mark.parametrize("changes", [{}, dict(gen_len=5), dict(batch=256, kv_dtype="int4"), dict(gen_len=1000)])
def test_request_stages_add_up_to_the_request_time(changes):
    sc = _infer(**changes)
    r = evaluate(sc)
    items = stages(sc, r)
    assert items[0].name.startswith("prefill")
    assert items[0].duration_s == pytest.approx(r.infer["prefill_s"], rel=1e-12)
    # full cache: the time per step is linear in the context, so the grouped sum is exact
    assert makespan(items) == pytest.approx(r.infer["request_s"], rel=1e-6)
    assert len(items) == 1 + min(sc.gen_len, stages_mod.DECODE_GROUPS)
    # the last decode group ends with the cache at prompt + gen: the core's memory per GPU
    assert items[-1].live_memory_by_tier["hbm"] == pytest.approx(r.memory_total, rel=1e-12)


@pytest.mark.parametrize("changes", [{}, dict(kv_policy="window", kv_window=4500), dict(batch=64)])
def test_decode_steps_slow_down_as_the_cache_grows(changes):
    sc = _infer(gen_len=1024, **changes)  # 32 groups of 32 steps: durations compare per step
    decode = [s for s in stages(sc) if s.name.startswith("decode")]
    times = np.array([s.duration_s for s in decode])
    assert np.all(np.diff(times) >= -1e-12 * times[:-1])
    live = np.array([s.live_memory_by_tier["hbm"] for s in decode])
    assert np.all(np.diff(live) >= 0)
    if not changes:
        assert times[-1] > times[0]  # full cache: strictly slower at 5k than at 4k context
    assert all(s.binding == "bandwidth" for s in decode)  # decode at small batch streams weights and cache


def test_prefill_kind_gives_the_same_request():
    a, b = stages(_infer()), stages(_infer().replace(kind="prefill"))
    assert [s.name for s in a] == [s.name for s in b]
    assert evaluate(_infer().replace(kind="prefill")).time_total == pytest.approx(b[0].duration_s, rel=1e-12)


# --- JSON and validation -----------------------------------------------------------------------------

def test_stages_json_is_plain_and_finite(default_stages):
    sc, r, items = default_stages
    out = stages_json(sc, r)
    assert len(out) == len(items)
    text = json.dumps(out)
    assert "NaN" not in text and "Infinity" not in text
    first = out[0]
    assert {"name", "start_s", "end_s", "flops", "bytes_by_link", "binding", "lane", "kind"} <= set(first)
    assert set(first["bytes_by_link"]) == set(LINKS)
    for d in out:
        assert d["end_s"] >= d["start_s"] >= 0
        assert d["binding"] in ("compute", "bandwidth", "memory")
        assert all(math.isfinite(v) and v >= 0 for v in d["bytes_by_link"].values())


def test_bad_input_is_refused():
    sc = default_scenario()
    with pytest.raises(ValidationError) as e:
        stages("not a scenario")
    assert e.value.field == "scenario"
    with pytest.raises(ValidationError) as e:
        stages(sc, evaluate(sc.replace(zero=3)))
    assert e.value.field == "results"
    with pytest.raises(ValidationError) as e:
        Stage("x", "sleeping", "stage 0", 0.0, 1.0)
    assert e.value.field == "stage.kind"
    with pytest.raises(ValidationError):
        Stage("x", "compute", "stage 0", 0.0, 1.0, binding="luck")


# --- property: any valid training layout --------------------------------------------------------------

@st.composite
def train_scenarios(draw) -> Scenario:
    arch = MODELS[draw(st.sampled_from(("llama-3-8b", "gpt2-medium", "mixtral-8x7b", "llama-2-7b")))]
    hw = HARDWARE[draw(st.sampled_from(("h100-sxm", "a100-80gb-sxm", "mi300x", "tpu-v5e")))]
    tp = draw(st.sampled_from([t for t in (1, 2, 4, 8) if arch.heads % t == 0]))
    pp = draw(st.sampled_from([1, 2, 3, 4, 8]))
    dp = draw(st.sampled_from([1, 2, 4, 8]))
    ep = draw(st.sampled_from([e for e in (1, 2, 4, 8) if dp % e == 0 and arch.experts % e == 0]))
    mb = draw(st.sampled_from([1, 2]))
    k = draw(st.integers(1, 12))
    return Scenario(hardware=hw, model=arch, kind="train", gpus=tp * pp * dp, gpus_per_node=draw(st.sampled_from([4, 8])),
                    tp=tp, pp=pp, ep=ep, zero=draw(st.integers(0, 3)),
                    recompute=draw(st.sampled_from(("none", "selective", "full"))),
                    flash_attention=draw(st.booleans()), micro_batch=mb, global_batch=mb * dp * k,
                    seq_len=draw(st.sampled_from([512, 2048])),
                    offload=draw(st.sampled_from(("none", "optimizer", "activations"))),
                    grad_compression=draw(st.sampled_from([1.0, 100.0])))


@SETTINGS
@given(train_scenarios())
def test_any_layout_adds_up(sc):
    r = evaluate(sc)
    items = stages(sc, r)
    assert makespan(items) == pytest.approx(r.time_total, rel=1e-6)
    m, t = r.train["micro_batches"], stage_times(sc)
    end = pipeline_end(items)  # stage 0's lane holds its own m·t_0 of blocks, idle the rest
    assert bubble_fraction(items, "stage 0") == pytest.approx(1.0 - m * t[0] / end, rel=1e-9, abs=1e-12)
    assert bubble_fraction(items) == pytest.approx(1.0 - m * t.max() / end, rel=1e-9, abs=1e-12)  # the busiest lane
    pipeline = m * t.max() + r.time["pipeline_bubble"]
    assert end <= pipeline * (1 + 1e-9)  # the core's pipeline bounds the schedule, exactly when the last stage paces
    if t[-1] >= t.max():
        assert end == pytest.approx(pipeline, rel=1e-9)
    for s in items:
        assert s.end_s >= s.start_s >= 0
        assert all(math.isfinite(v) for v in (s.start_s, s.end_s, s.flops, *s.bytes_by_link.values(),
                                                *s.live_memory_by_tier.values()))
    for link in LINKS:
        drawn = sum(s.bytes_by_link[link] for s in items if s.lane in ONE_GPU_LANES and s.kind != "io")
        assert drawn == pytest.approx(r.bytes_by_link[link], rel=1e-9, abs=1e-3)


# --- variants ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def default_variants():
    return {v.name: v for v in compare(default_scenario())}


def test_variant_set_and_baseline():
    base = baseline(default_scenario())
    assert (base.recompute, base.zero, base.flash_attention, base.offload, base.grad_compression) == (
        "none", 1, False, "none", 1.0)
    names = [name for name, _, _ in variant_scenarios(default_scenario())]
    assert names == [v.name for v in VARIANTS]
    rows = dict((n, (sc, why)) for n, sc, why in variant_scenarios(default_scenario()))
    assert rows["+ KV quantisation"][0] is None and "KV cache" in rows["+ KV quantisation"][1]
    assert rows["+ ZeRO-3"][0] == base.replace(zero=3)
    infer = dict((n, sc) for n, sc, _ in variant_scenarios(_infer(kv_dtype="int8")))
    assert infer["baseline"].kv_dtype == "bf16" and infer["+ KV quantisation"].kv_dtype == "fp8"
    assert infer["+ full recompute"] is None and infer["+ FlashAttention"] is None


def test_recompute_spends_compute_to_save_activation_memory(default_variants):
    b = default_variants["baseline"]
    for name in ("+ selective recompute", "+ full recompute"):
        v = default_variants[name]
        assert v.time_by_stage["compute"] > b.time_by_stage["compute"]
        assert v.memory["activations"] < b.memory["activations"]
    full, sel = default_variants["+ full recompute"], default_variants["+ selective recompute"]
    assert full.time_by_stage["compute"] > sel.time_by_stage["compute"]
    assert full.memory["activations"] < sel.memory["activations"]
    # full recompute redoes every layer's forward (not the logits): just under 4/3 of the model FLOPs (8ND/6ND)
    t = full.results.train
    assert 1.32 < t["hardware_flops"] / t["model_flops"] < 4.0 / 3.0


def test_zero3_adds_all_gather_time(default_variants):
    b, z3 = default_variants["baseline"], default_variants["+ ZeRO-3"]
    assert z3.results.train["dp_comm_time"] > b.results.train["dp_comm_time"]
    gathers = [s for s in stages(z3.scenario, z3.results) if "all-gather" in s.name]
    base_gathers = [s for s in stages(b.scenario, b.results) if "all-gather" in s.name]
    assert sum(s.duration_s for s in gathers) > sum(s.duration_s for s in base_gathers) > 0
    # two gathers per micro-batch (ZeRO §7: 1.5x the baseline's traffic, here as 2m parameter gathers)
    assert len([s for s in gathers if "prefetched" in s.name]) == 2 * int(z3.results.train["micro_batches"])
    if z3.scenario.pp == 1:
        assert z3.memory["weights"] < b.memory["weights"]
    else:  # under PP the stage's weights stay gathered (memory.zero3_pipeline_resident_bytes)
        assert z3.memory["weights"] == pytest.approx(b.memory["weights"], rel=1e-12)


def test_gradient_compression_lowers_communication_time():
    """DP = 8 over the scale-out network (TP 8 fills a node); DGC's 270x beats the ring's n/2 = 4."""
    sc = default_scenario().replace(pp=1, gpus=64, global_batch=64, zero=0)
    rows = {v.name: v for v in compare(sc)}
    b, c = rows["baseline"], rows["+ gradient compression"]
    assert b.scenario.dp == 8 and 270.0 > b.scenario.dp / 2
    assert c.results.train["dp_comm_time"] < b.results.train["dp_comm_time"]
    assert c.bytes_by_link["scale-out"] < b.bytes_by_link["scale-out"]
    sync = {name: sum(s.duration_s for s in stages(v.scenario, v.results) if s.name.startswith("DP gradient"))
            for name, v in (("b", b), ("c", c))}
    assert sync["c"] < sync["b"]


def test_binding_resource_of_the_variants_of_the_default(default_variants):
    """Baseline (no recompute, no FlashAttention) stores the s x s scores: 289 GB per GPU, memory binds.
    Selective recompute or FlashAttention drop them: they fit (66 / 64 GB with the logits, the layer being
    recomputed, NCCL buffers and the runtime). Compute pressure is against the rate the H100's best GEMMs reach
    (80% of peak, pressure.achievable_compute), so FlashAttention's step at 56% MFU reads 0.73 and its 79% of HBM
    binds; full recomputation (38 GB, 48%) spends the step's time on recompute and communication, 0.43 of it on
    the tensor cores at that rate."""
    assert default_variants["baseline"].binding == "memory"
    assert not default_variants["baseline"].fits
    assert default_variants["+ selective recompute"].fits
    fa, full = default_variants["+ FlashAttention"], default_variants["+ full recompute"]
    assert fa.fits and 0.6 < fa.results.pressure.compute < fa.results.pressure.memory < 0.85
    assert full.fits and full.results.pressure.compute < full.results.pressure.memory < 0.5
    assert fa.binding == full.binding == "memory"
    assert not default_variants["+ KV quantisation"].applicable


def test_kv_quantisation_lowers_decode_bytes():
    rows = {v.name: v for v in compare(_infer())}
    b, q = rows["baseline"], rows["+ KV quantisation"]
    assert q.memory["kv_cache"] == pytest.approx(b.memory["kv_cache"] / 2, rel=1e-12)  # 2 -> 1 byte
    assert q.bytes_by_link["hbm"] < b.bytes_by_link["hbm"]
    assert b.binding == "bandwidth"


# --- inference: KV offload and onload when the cache spills beyond HBM ---------------------------------

def _long_context(**changes) -> Scenario:
    """Llama-3.1-70B on 8x H100 SXM, 16 sessions of a 128k prompt: 86.6 GB of KV per GPU at the end of the
    request against 54.4 GB of HBM left by the weights (17.6 GB) and the 10% runtime reserve (8 GB)."""
    sc = default_scenario().replace(kind="decode", model=MODELS["llama-3.1-70b"], hardware=HARDWARE["h100-sxm"],
                                    gpus=8, pp=1, batch=16, prompt_len=131072, gen_len=1024)
    return sc.replace(**changes)


def _groups(sc: Scenario):
    """Decode groups as stages.py cuts them: steps n_g, mean context c_g, end context."""
    n = min(sc.gen_len, stages_mod.DECODE_GROUPS)
    edges = np.round(np.linspace(0.0, sc.gen_len, n + 1)).astype(int)
    return (edges[1:] - edges[:-1]).astype(float), sc.prompt_len + (edges[:-1] + edges[1:]) / 2.0


def _transfer_s(sc: Scenario, tier: str, nbytes: float, page: float) -> float:
    """Hand formula (model/step/kv_residency.py): bytes / (B_tier x eta_net) + ceil(bytes / page) x latency_tier."""
    t = tier_map(sc.hardware)[tier]
    return nbytes / (t.bandwidth * sc.efficiency.network) + math.ceil(nbytes / page) * t.latency_s


def _decode_groups_of(items):
    """Per decode group: its onload stages and its decode compute stage, in timeline order."""
    groups, pending = [], []
    for s in items[1:]:
        if s.name.startswith("KV onload"):
            pending.append(s)
        elif s.name.startswith("decode step"):
            groups.append((pending, s))
            pending = []
    return groups


@pytest.fixture(scope="module")
def spill_case():
    sc = _long_context()
    r = evaluate(sc)
    return sc, r, stages(sc, r)


def test_long_context_request_spills_to_host_dram():
    at = residency_at(_long_context())
    assert at.resident["host"] > 30e9 and at.resident["cxl"] == 0.0 and at.unplaced_bytes == 0.0
    assert at.needed > at.resident["hbm"]
    assert stages_mod.kv_spills(_long_context()) and not stages_mod.kv_spills(_infer())
    assert "spills" in " ".join(stages_mod.notes(_long_context()))
    assert "fits in HBM" in " ".join(stages_mod.notes(_infer()))


def test_spilled_request_ends_at_prompt_phase_plus_residency_decode_groups(spill_case):
    """Invariant: end = prefill_s + sum_tier T_tier(prompt) + sum_g n_g x step_time_s(c_g), where step_time_s is
    residency_curve's effective decode step at group g's mean context c_g and T_tier is residency's transfer
    time of the prompt's KV placed on that tier (bytes / (B x eta) + ceil(bytes / page) x latency)."""
    sc, r, items = spill_case
    steps, mid = _groups(sc)
    rc = residency_curve(sc, context=mid, sessions=sc.batch)
    at_prompt = residency_curve(sc, context=sc.prompt_len, sessions=sc.batch)
    page = float(at_prompt.page_bytes)
    offload = [s for s in items if s.name.startswith("KV offload")]
    assert [s.name.split(" (")[0] for s in offload] == ["KV offload to host DRAM"]
    host_bytes = float(at_prompt.resident["host"])
    assert offload[0].bytes_by_link["host"] == pytest.approx(host_bytes, rel=1e-12)
    assert offload[0].duration_s == pytest.approx(_transfer_s(sc, "host", host_bytes, page), rel=1e-9)
    assert offload[0].start_s == pytest.approx(r.infer["prefill_s"], rel=1e-12)  # after prefill, not overlapped
    prompt_phase = r.infer["prefill_s"] + sum(s.duration_s for s in offload)
    expected = prompt_phase + float(np.sum(steps * rc.step_time_s))
    assert makespan(items) == pytest.approx(expected, rel=1e-6)
    assert items[-1].end_s == pytest.approx(expected, rel=1e-6)
    # every group lasts n_g x its effective step: onloads then compute, back to back on the timeline
    groups = _decode_groups_of(items)
    assert len(groups) == len(steps)
    t = prompt_phase
    for (onloads, comp), n_g, step in zip(groups, steps, rc.step_time_s, strict=True):
        first = onloads[0] if onloads else comp
        assert first.start_s == pytest.approx(t, rel=1e-12)
        assert comp.end_s - first.start_s == pytest.approx(n_g * step, rel=1e-9)
        t = comp.end_s
    # the spill makes the request slower than it would be all in HBM; request_s is where the stages end
    assert makespan(items) > 3.0 * (r.infer["prefill_s"] + sc.gen_len * r.infer["time_per_output_token_s"])
    assert r.infer["request_s"] == pytest.approx(makespan(items), rel=1e-12)
    decode = makespan(items) - prompt_phase
    assert decode == pytest.approx(sc.gen_len * residency_at(sc).effective_time_per_output_token_s, rel=1e-4)


def test_onload_bytes_are_residency_off_hbm_bytes_per_step_times_steps(spill_case):
    sc, r, items = spill_case
    steps, mid = _groups(sc)
    rc = residency_curve(sc, context=mid, sessions=sc.batch)
    page = float(rc.page_bytes)
    for g, (onloads, comp) in enumerate(_decode_groups_of(items)):
        assert [s.name.split(" (")[0] for s in onloads] == ["KV onload from host DRAM"]
        s = onloads[0]
        assert (s.kind, s.lane, s.binding) == ("memory-transfer", "host link", "bandwidth")
        per_step = float(rc.resident["host"][g])
        assert s.bytes_by_link["host"] == pytest.approx(steps[g] * per_step, rel=1e-12)
        assert s.bytes_by_link["hbm"] == s.bytes_by_link["scale-up"] == s.bytes_by_link["scale-out"] == 0.0
        assert s.duration_s == pytest.approx(steps[g] * _transfer_s(sc, "host", per_step, page), rel=1e-9)
        # the decode compute keeps the core's bytes and FLOPs per step; no host traffic
        assert comp.bytes_by_link["host"] == 0.0 and comp.flops > 0
    # all bytes over the host link: the prompt's offload once, then every decode step's off-HBM KV
    host_total = sum(s.bytes_by_link["host"] for s in items)
    assert host_total == pytest.approx(
        float(residency_curve(sc, context=sc.prompt_len, sessions=sc.batch).resident["host"])
        + float(np.sum(steps * rc.resident["host"])), rel=1e-9)


def test_spilled_decode_still_slows_down_as_the_cache_grows(spill_case):
    sc, r, items = spill_case
    groups = _decode_groups_of(items)
    steps, _ = _groups(sc)
    per_step = np.array([(comp.end_s - (on[0].start_s if on else comp.start_s)) for on, comp in groups]) / steps
    assert np.all(np.diff(per_step) >= -1e-12 * per_step[:-1])
    assert per_step[-1] > per_step[0]
    compute = np.array([comp.duration_s for _, comp in groups]) / steps
    assert np.all(np.diff(compute) >= -1e-12 * compute[:-1])
    # HBM is full (weights + reserve + the KV it holds = 80 GB); host DRAM grows by 16 tokens' KV per step
    hbm = np.array([comp.live_memory_by_tier["hbm"] for _, comp in groups])
    host = np.array([comp.live_memory_by_tier["host"] for _, comp in groups])
    assert hbm == pytest.approx(np.full_like(hbm, r.capacity), rel=1e-9)
    assert np.all(np.diff(host) > 0)
    # live tiers add up to the core's memory per GPU at the end of the request; binding is never "memory"
    assert items[-1].live_memory_by_tier["hbm"] + items[-1].live_memory_by_tier["host"] == pytest.approx(
        r.memory_total, rel=1e-12)
    assert all(s.binding != "memory" for s in items)
    assert set(items[-1].live_memory_by_tier) == {"hbm", "host"}  # CXL and SSD keys only when used


def test_deeper_spill_uses_cxl_and_ssd():
    """128 sessions: 718 GB of KV per GPU fill HBM (54 GB), host DRAM (250 GB), the CXL pool (128 GB) and
    spill the rest to NVMe SSD; tiers fill fastest first and each gets its own offload and onload stages."""
    sc = _long_context(batch=128)
    r = evaluate(sc)
    items = stages(sc, r)
    tiers = ("host DRAM", "CXL pool", "NVMe SSD")
    assert [s.name.split(" (")[0] for s in items if s.name.startswith("KV offload")] == [
        f"KV offload to {t}" for t in tiers]
    for onloads, _ in _decode_groups_of(items):
        assert [s.name.split(" (")[0] for s in onloads] == [f"KV onload from {t}" for t in tiers]
    last = items[-1].live_memory_by_tier
    assert set(last) == {"hbm", "host", "cxl", "ssd"}
    assert (last["host"], last["cxl"]) == (pytest.approx(250e9), pytest.approx(128e9))
    assert sum(last.values()) == pytest.approx(r.memory_total, rel=1e-12)
    steps, mid = _groups(sc)
    expected = (r.infer["prefill_s"] + sum(s.duration_s for s in items if s.name.startswith("KV offload"))
                + float(np.sum(steps * residency_curve(sc, context=mid, sessions=sc.batch).step_time_s)))
    assert makespan(items) == pytest.approx(expected, rel=1e-6)
    out = stages_json(sc, r)
    assert {d["kind"] for d in out} == {"compute", "memory-transfer"}
    assert "NaN" not in json.dumps(out) and "Infinity" not in json.dumps(out)
    assert all(d["end_s"] >= d["start_s"] >= 0 for d in out)


def test_generation_that_starts_in_hbm_and_spills_later():
    """A prompt that fits and a generation that outgrows HBM (16 x 64k prompt = 43 GB of KV per GPU < 54 GB
    free; 16 x 96k at the end = 64 GB): no prefill offload; onloads only in the groups whose mean context
    spills; earlier groups keep the core's step time."""
    sc = _long_context(prompt_len=65536, gen_len=32768)
    r = evaluate(sc)
    items = stages(sc, r)
    rc = residency_curve(sc, context=[sc.prompt_len, sc.prompt_len + sc.gen_len], sessions=sc.batch)
    assert rc.resident["host"][0] == 0.0 < rc.resident["host"][1]
    assert not any(s.name.startswith("KV offload") for s in items)
    groups = _decode_groups_of(items)
    with_onload = [bool(on) for on, _ in groups]
    assert not with_onload[0] and with_onload[-1]
    assert with_onload == sorted(with_onload)  # once spilled, every later group spills
    steps, mid = _groups(sc)
    grid = evaluate_grid(sc, prompt_len=mid[:1], gen_len=0)
    assert groups[0][1].duration_s == pytest.approx(steps[0] * float(grid.time_per_output_token_s[0]), rel=1e-9)
    expected = r.infer["prefill_s"] + float(np.sum(steps * residency_curve(sc, context=mid, sessions=sc.batch)
                                                               .step_time_s))
    assert makespan(items) == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("sc", [_infer(), _infer(gen_len=5), _infer(batch=256, kv_dtype="int4"),
                                _infer().replace(kind="prefill"), _long_context(batch=1, prompt_len=8192)],
                         ids=["default", "gen 5", "batch 256 int4", "prefill kind", "70B short"])
def test_requests_that_fit_are_unchanged(sc, monkeypatch):
    """When the cache fits in HBM the stages equal those drawn with the tier model switched off, and none is a
    memory transfer."""
    assert not stages_mod.kv_spills(sc)
    items = stages(sc)
    assert not any(s.kind == "memory-transfer" for s in items)
    assert all(set(s.live_memory_by_tier) == {"hbm", "host"} and s.live_memory_by_tier["host"] == 0.0 for s in items)
    monkeypatch.setattr(request_mod, "kv_tiers", lambda *a, **k: None)
    monkeypatch.setattr(request_mod, "_RECENT_PLANS", [])   # a plan made before the patch is not reused
    assert stages(sc) == items
    assert makespan(items) == pytest.approx(evaluate(sc).infer["request_s"], rel=1e-6)


def test_switching_the_tier_model_off_gives_the_cores_request(spill_case, monkeypatch):
    sc, r, items = spill_case
    monkeypatch.setattr(request_mod, "kv_tiers", lambda *a, **k: None)
    monkeypatch.setattr(request_mod, "_RECENT_PLANS", [])   # a plan made before the patch is not reused
    plain = stages(sc, r)
    in_hbm = r.infer["prefill_s"] + sc.gen_len * r.infer["time_per_output_token_s"]  # the core's, cache in HBM
    assert makespan(plain) == pytest.approx(in_hbm, rel=1e-6)
    assert [s.name for s in plain] == [s.name for s in items if s.kind != "memory-transfer"]
    assert makespan(items) > makespan(plain)


def test_evict_placement_draws_no_transfers(spill_case):
    """Eviction drops the KV HBM cannot hold: residency's step reads only the kept part (faster than the
    core's all-in-HBM step), nothing moves over the host link, HBM stays within its capacity."""
    sc, r, _ = spill_case
    items = stages(sc, r, kv_placement="evict")
    assert not any(s.kind == "memory-transfer" for s in items)
    steps, mid = _groups(sc)
    evict = residency_curve(sc, context=mid, sessions=sc.batch, policy="evict").step_time_s
    assert makespan(items) == pytest.approx(r.infer["prefill_s"] + float(np.sum(steps * evict)), rel=1e-6)
    assert makespan(items) < r.infer["request_s"]
    assert all(s.live_memory_by_tier["hbm"] <= r.capacity * (1 + 1e-9) for s in items)
    assert all(s.live_memory_by_tier["host"] == 0.0 for s in items)
    assert [d["name"] for d in stages_json(sc, r, "evict")] == [s.name for s in items]
    with pytest.raises(ValidationError) as e:
        stages(sc, r, kv_placement="drop")
    assert e.value.field == "kv_placement"


@pytest.mark.parametrize("change", [{"offload": "nvme"}, {"grad_comm_bytes": 1.0}, {"offload": "optimizer"},
                                    {"grad_compression": 270.0}, {"offload": "activations"}])
def test_stages_follow_the_cores_pieces_for_every_technique(change):
    """The stage model draws the core's own pieces (training_step's `pieces`), so techniques added to the core
    (ZeRO-Infinity's NVMe traffic, quantised gradients) end the timeline exactly at the step time."""
    from trinity_desktop.defaults import default_scenario

    sc = default_scenario().replace(**change)
    r = evaluate(sc)
    items = stages(sc, r)
    assert max(s.end_s for s in items) == pytest.approx(r.time_total, rel=1e-9)
    if change.get("offload") == "nvme":
        assert any("NVMe" in s.name for s in items)
    if "grad_comm_bytes" in change:
        assert any(s.name == "gradient quantisation" for s in items)


def test_one_spilling_request_runs_its_step_once(monkeypatch):
    """`evaluate` of a request whose KV spills runs the request's inference step once and residency's step at
    its contexts once; its stages reuse both (the request's plan) and add one step at the groups' contexts."""
    import trinity_desktop.model.step.run as run_mod

    calls = []
    real = run_mod.inference_step

    def counted(arch, hw, inputs):
        calls.append("sweep" if np.ndim(inputs.prompt_len) else "request")
        return real(arch, hw, inputs)

    monkeypatch.setattr(run_mod, "inference_step", counted)
    sc = _long_context(gen_len=1000)  # a scenario no other test computed: nothing cached
    r = evaluate(sc)
    assert r.infer["request_s"] > r.infer["prefill_s"] + sc.gen_len * r.infer["time_per_output_token_s"]  # spills
    assert calls == ["request", "sweep"]
    items = stages(sc, r)
    assert calls == ["request", "sweep", "sweep"]
    assert makespan(items) == pytest.approx(r.infer["request_s"], rel=1e-9)


def test_bars_share_their_byte_and_memory_mixes_and_hold_no_instance_dict():
    """A 1F1B step repeats a few byte / memory mixes over its micro-batches: the bars share one read-only mapping
    per distinct mix (the flow keeps 68,745 bars of a 16,384-GPU step: 59 MB with a dict per bar, 19 MB so)."""
    sc = default_scenario().replace(pp=4, global_batch=1024)
    items = stages(sc, evaluate(sc))
    assert len(items) > 500
    assert len({id(s.bytes_by_link) for s in items}) < len(items) / 10
    assert len({id(s.live_memory_by_tier) for s in items}) < len(items) / 2
    assert not hasattr(items[0], "__dict__")
    with pytest.raises(TypeError):
        items[0].bytes_by_link["hbm"] = 1.0   # shared, so read-only


@pytest.mark.parametrize(("offload", "zero", "gpus", "global_batch", "compression"),
                         [("activations", 0, 8, 1, 1.0), ("none", 3, 64, 8, 100.0)])
def test_an_activation_prefetch_ends_with_stage_0s_own_backward(offload, zero, gpus, global_batch, compression):
    """Found by test_any_layout_adds_up: GPT-2 medium at PP 8, one micro-batch, activations offloaded. The last
    swap-in took the average stage's share of the swap (the last stage holds the LM head) and ran 0.59 ms past
    the step's end; it now ends with stage 0's backward, its bytes unchanged."""
    sc = Scenario(hardware=HARDWARE["a100-80gb-sxm"], model=MODELS["gpt2-medium"], kind="train", gpus=gpus,
                  gpus_per_node=4, tp=1, pp=8, ep=1, zero=zero, recompute="selective", flash_attention=False,
                  micro_batch=1, global_batch=global_batch, seq_len=2048, offload=offload, grad_compression=compression)
    r = evaluate(sc)
    items = stages(sc, r)
    assert makespan(items) == pytest.approx(r.time_total, rel=1e-9)   # ZeRO-3's backward gathers likewise
    swap_in = [s for s in items if s.role in ("activation_swap_in", "zero3_gather_bwd")]
    backward = max((s for s in items if s.role == "backward" and s.lane == "stage 0"), key=lambda s: s.end_s)
    assert swap_in and max(s.end_s for s in swap_in) <= backward.end_s * (1 + 1e-12)
