"""Stage model and variants: the timeline adds up to the core's step time, the 1F1B bubble is (p-1)/(m+p-1),
overlap hides no more than the backward, decode slows as the cache grows, and techniques move the bottleneck."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trinity_desktop.model.stages as stages_mod
from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import Scenario, ValidationError, evaluate, presets
from trinity_desktop.model.stages import (
    LINKS,
    Stage,
    bubble_fraction,
    one_f_one_b,
    stages,
    stages_json,
    training_pieces,
)
from trinity_desktop.model.variants import VARIANTS, baseline, compare, variant_scenarios

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


@pytest.mark.parametrize("pp,global_batch", [(2, 256), (4, 64), (8, 16), (8, 4 * 3), (4, 1024)])
def test_bubble_fraction_is_one_f_one_b(pp, global_batch):
    sc = default_scenario().replace(pp=pp, global_batch=global_batch)
    r = evaluate(sc)
    p, m = sc.pp, r.train["micro_batches"]
    items = stages(sc, r)
    expected = (p - 1) / (m + p - 1)
    for k in range(p):
        assert bubble_fraction(items, f"stage {k}") == pytest.approx(expected, rel=1e-9)
    # and the core agrees: bubble / pipeline
    assert r.time["pipeline_bubble"] / pipeline_end(items) == pytest.approx(expected, rel=1e-9)


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
    monkeypatch.setattr(stages_mod, "MAX_SIMULATED_MICRO_BATCHES", 10_000)
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


def test_default_overlap_is_fully_hidden(default_stages):
    sc, r, items = default_stages
    end = pipeline_end(items)
    sync = [s for s in items if s.name.startswith("DP gradient")]
    assert len(sync) == stages_mod.GRAD_BUCKETS
    assert max(s.end_s for s in sync) <= end  # 0.33 s of reduce-scatter behind a 0.35 s backward
    assert sum(s.duration_s for s in sync) <= r.train["backward_time_last_micro_batch"]


def test_stage_numbers_are_the_cores_pieces(default_stages):
    sc, r, items = default_stages
    p = training_pieces(sc)
    m = r.train["micro_batches"]
    assert p["t_c"] * m == pytest.approx(r.time["compute"], rel=1e-12)
    assert p["t_bwd"] == pytest.approx(r.train["backward_time_last_micro_batch"], rel=1e-12)
    assert p["t_opt"] == pytest.approx(r.time["optimizer"], rel=1e-12)
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
    return default_scenario().replace(kind="decode", gpus=8, **changes)


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
    m, p = r.train["micro_batches"], sc.pp
    assert bubble_fraction(items) == pytest.approx((p - 1) / (m + p - 1), rel=1e-9, abs=1e-12)
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
    assert z3.memory["weights"] < b.memory["weights"]


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


def test_binding_resource_shifts_between_variants_of_the_default(default_variants):
    """Baseline (no recompute, no FlashAttention) stores the s x s scores: 274 GB per GPU, memory binds.
    Selective recompute or FlashAttention drop them: 59 GB, compute binds."""
    assert default_variants["baseline"].binding == "memory"
    assert not default_variants["baseline"].fits
    assert default_variants["+ selective recompute"].binding == "compute"
    assert default_variants["+ FlashAttention"].binding == "compute"
    assert len({v.binding for v in default_variants.values() if v.applicable}) >= 2
    assert not default_variants["+ KV quantisation"].applicable


def test_kv_quantisation_lowers_decode_bytes():
    rows = {v.name: v for v in compare(_infer())}
    b, q = rows["baseline"], rows["+ KV quantisation"]
    assert q.memory["kv_cache"] == pytest.approx(b.memory["kv_cache"] / 2, rel=1e-12)  # 2 -> 1 byte
    assert q.bytes_by_link["hbm"] < b.bytes_by_link["hbm"]
    assert b.binding == "bandwidth"
