"""Property tests: invariants every valid scenario must satisfy, and the refusals of invalid input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.formulas.kernel_efficiency import (
    REFERENCE_COMPUTE_EFFICIENCY,
    model_flop_share_ceiling,
)
from trinity_desktop.model.formulas.pressure import achievable_compute
from trinity_desktop.model.inputs import presets

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MODELS = presets.model_presets()
HARDWARE = presets.hardware_presets()
TRAIN_MODELS = ("llama-3-8b", "llama-2-7b", "gpt2-medium", "mixtral-8x7b", "korthikanti-22b", "deepseek-v3")
TRAIN_HARDWARE = ("h100-sxm", "a100-80gb-sxm", "mi300x", "tpu-v5e", "b200")
RECOMPUTES = ("none", "selective", "full")


def divisors(n: int, upper: int = 64) -> list[int]:
    return [d for d in range(1, min(n, upper) + 1) if n % d == 0]


@st.composite
def train_scenarios(draw) -> Scenario:
    """A valid training scenario: gpus = tp·pp·cp·dp, global_batch = micro_batch·dp·k, seq_len = cp·x."""
    arch = MODELS[draw(st.sampled_from(TRAIN_MODELS))]
    hw = HARDWARE[draw(st.sampled_from(TRAIN_HARDWARE))]
    tp = draw(st.sampled_from(divisors(arch.heads)))
    pp = draw(st.sampled_from([p for p in (1, 2, 3, 4, 8, 16) if p <= arch.layers]))
    cp = draw(st.sampled_from([1, 2, 4]))
    dp = draw(st.sampled_from([1, 2, 4, 8, 16, 64]))
    ep = draw(st.sampled_from([e for e in divisors(arch.experts) if dp % e == 0])) if arch.is_moe else 1
    micro_batch = draw(st.sampled_from([1, 2, 4]))
    k = draw(st.integers(1, 8))
    seq_len = cp * draw(st.sampled_from([128, 512, 1024, 2048, 4096]))
    precision = draw(st.sampled_from([p for p in ("bf16", "fp16", "fp8", "fp32")
                                      if p in hw.peak_flops or p in ("bf16", "fp16", "fp32")]))
    return Scenario(
        hardware=hw, model=arch, kind="train", gpus=tp * pp * cp * dp,
        gpus_per_node=draw(st.sampled_from([1, 4, 8])), tp=tp, pp=pp, cp=cp, ep=ep,
        sequence_parallel=draw(st.booleans()), zero=draw(st.integers(0, 3)),
        recompute=draw(st.sampled_from(RECOMPUTES)), flash_attention=draw(st.booleans()),
        micro_batch=micro_batch, global_batch=micro_batch * dp * k, seq_len=seq_len, precision=precision,
        optimizer=draw(st.sampled_from(["adamw", "sgd", "adam8bit"])))


def _finite_nonneg(values, what):
    for name, v in values.items():
        assert math.isfinite(v), f"{what}[{name}] = {v}"
        assert v >= 0, f"{what}[{name}] = {v}"


# --- consistency of one evaluation ----------------------------------------------------------------

@SETTINGS
@given(train_scenarios())
def test_training_results_are_consistent(sc):
    r = evaluate(sc)
    _finite_nonneg(dict(r.memory), "memory")
    _finite_nonneg(dict(r.time), "time")
    _finite_nonneg(dict(r.bytes_by_link), "bytes_by_link")
    _finite_nonneg(dict(r.train), "train")
    assert set(r.memory) == {"weights", "gradients", "optimizer", "activations", "network_buffers", "runtime"}
    assert sum(r.memory.values()) == pytest.approx(r.memory_total, rel=1e-12)
    assert sum(r.time.values()) == pytest.approx(r.time_total, rel=1e-12)
    assert r.time_total > 0 and r.memory_total > 0
    assert r.train["hardware_flops"] >= r.train["model_flops"] > 0
    assert r.train["dp"] == sc.dp and r.train["micro_batches"] == sc.micro_batches
    # MFU can never exceed the largest achievable share of peak the kernel curves time FLOPs at
    # (model/formulas/kernel_efficiency.py), scaled by compute_efficiency / 0.5
    ceiling = model_flop_share_ceiling(sc.hardware.key) * sc.efficiency.compute / REFERENCE_COMPUTE_EFFICIENCY
    assert 0 < r.train["mfu_format_peak"] <= ceiling * (1 + 1e-12)
    assert r.train["mfu"] >= r.train["mfu_format_peak"]  # the BF16 peak is at most the GEMM format's
    assert r.train["tokens_per_s"] == pytest.approx(sc.global_batch * sc.seq_len / r.time_total, rel=1e-12)
    # pressures are shares of the achievable rates (model/formulas/pressure.py): compute = hardware FLOPs / (time x GPUs
    # x achievable FLOP/s) = MFU x HFU/MFU / (achievable share of peak: the kernel curves' best GEMM share x
    # efficiency / 0.5, or the efficiency), bandwidth = the busiest link's share of its achievable bandwidth,
    # memory = bytes / capacity
    c, b, m = r.pressure.as_tuple()
    assert 0 <= c <= 1 + 1e-9 and 0 <= b <= 1
    peak = sc.hardware.peak(sc.precision)
    share = achievable_compute(sc.hardware, peak, sc.efficiency.compute) / peak
    assert c == pytest.approx(min(1.0, r.train["mfu_format_peak"] * r.train["hardware_flops"] / r.train["model_flops"]
                                  / share), rel=1e-9)
    hw, eff = sc.hardware, sc.efficiency
    loads = [r.bytes_by_link[k] / (r.time_total * bw) for k, bw in
             (("hbm", hw.hbm_bw * eff.hbm), ("scale-up", hw.scaleup_bw * eff.network),
              ("scale-out", hw.scaleout_bw * eff.network), ("host", hw.host_link_bw * eff.network)) if bw > 0]
    assert b == pytest.approx(min(1.0, max(loads)), rel=1e-9)
    assert m == pytest.approx(r.memory_total / r.capacity, rel=1e-12)
    assert r.fits == (r.memory_total <= r.capacity)
    assert r.bottleneck in ("compute", "bandwidth", "memory")
    if not r.fits:
        assert r.bottleneck == "memory"
    if sc.pp == 1:
        assert r.time["pipeline_bubble"] == 0
    if sc.gpus == 1:
        assert r.bytes_by_link["scale-up"] == 0 and r.bytes_by_link["scale-out"] == 0


# --- monotonicity ---------------------------------------------------------------------------------

@SETTINGS
@given(train_scenarios())
def test_higher_zero_stage_never_needs_more_memory(sc):
    results = [evaluate(sc.replace(zero=z)) for z in range(4)]
    for lo, hi in zip(results, results[1:], strict=False):
        # ZeRO-3 adds its prefetched all-gather buffers (two layers unsharded, memory.zero3_gather_buffer_bytes),
        # which at small DP and few layers per stage outweigh what it shards: compare the rest of the peak
        def held(r):
            return r.memory_total - r.train["transient_bytes"] - r.memory["runtime"]
        # except ZeRO-3 under pipeline parallelism, which keeps the stage's weights gathered and its gradients
        # accumulated unsharded in fp32 (memory.zero3_pipeline_resident_bytes, torchtitan's FSDP under PP)
        if hi is results[3] and sc.pp > 1:
            continue
        assert held(hi) <= held(lo) * (1 + 1e-12)
        for part in ("weights", "gradients", "optimizer"):
            assert hi.memory[part] <= lo.memory[part] * (1 + 1e-12)
        assert hi.train["stored_activation_bytes"] == lo.train["stored_activation_bytes"]
    nd = sc.dp * sc.cp  # ZeRO shards over DP x CP (torchtitan's dp_shard_cp mesh)
    if nd > 1 and sc.ep == 1:  # each stage partitions one more state by Nd (experts: by Nd/ep)
        assert results[1].memory["optimizer"] == pytest.approx(results[0].memory["optimizer"] / nd, rel=1e-12)
        assert results[2].memory["gradients"] == pytest.approx(results[0].memory["gradients"] / nd, rel=1e-12)
        if sc.pp == 1:
            assert results[3].memory["weights"] == pytest.approx(results[0].memory["weights"] / nd, rel=1e-12)


@SETTINGS
@given(train_scenarios())
def test_selective_recompute_trades_flops_for_memory(sc):
    none, sel, full = (evaluate(sc.replace(recompute=rc)) for rc in RECOMPUTES)
    assert sel.memory["activations"] <= none.memory["activations"] * (1 + 1e-12)
    assert none.train["hardware_flops"] <= sel.train["hardware_flops"] <= full.train["hardware_flops"]
    # model FLOPs do not depend on recomputation
    assert none.train["model_flops"] == sel.train["model_flops"] == full.train["model_flops"]
    if sc.flash_attention:  # FlashAttention already never stores the scores: selective changes nothing
        assert sel.memory["activations"] == none.memory["activations"]
    else:
        assert sel.memory["activations"] < none.memory["activations"]


# A scenario where full recomputation needs MORE activation memory than selective recomputation:
# TP 32 with sequence parallelism shards the selective activations (43·sbh/32 for Llama-3-8B) below the
# 2·sbh the model keeps for full recomputation, although the checkpointed layer input is sequence-sharded too.
_FULL_VS_SELECTIVE = Scenario(hardware=HARDWARE["h100-sxm"], model=MODELS["llama-3-8b"], gpus=32, tp=32,
                              sequence_parallel=True, flash_attention=True, recompute="selective",
                              global_batch=64)


@SETTINGS
@example(_FULL_VS_SELECTIVE)
@given(train_scenarios())
def test_full_recompute_never_needs_more_activation_memory(sc):
    sel, full = (evaluate(sc.replace(recompute=rc)) for rc in ("selective", "full"))
    assert full.memory["activations"] <= sel.memory["activations"] * (1 + 1e-12)


def _doubled(sc: Scenario, axis: str) -> Scenario | None:
    try:
        if axis == "tp":
            return sc.replace(tp=2 * sc.tp, gpus=2 * sc.gpus)
        if axis == "pp":
            return sc.replace(pp=2 * sc.pp, gpus=2 * sc.gpus)
        return sc.replace(gpus=2 * sc.gpus, global_batch=2 * sc.global_batch)  # dp doubles
    except ValidationError:
        return None


@SETTINGS
@given(train_scenarios(), st.sampled_from(["tp", "pp", "dp"]))
def test_more_parallelism_never_increases_weights_per_gpu(sc, axis):
    bigger = _doubled(sc, axis)
    if bigger is None:
        return
    if axis == "dp":
        assert bigger.dp == 2 * sc.dp
    before, after = evaluate(sc), evaluate(bigger)
    if axis == "pp" and sc.zero == 3:  # a stage keeps its weights gathered under PP, where p = 1 kept 1/Nd of them
        return
    assert after.memory["weights"] <= before.memory["weights"] * (1 + 1e-12)
    if axis == "tp":  # TP shards every weight
        assert after.memory["weights"] == pytest.approx(before.memory["weights"] / 2, rel=1e-12)
    if axis == "dp" and sc.zero == 3 and sc.pp == 1:
        assert after.memory["weights"] == pytest.approx(before.memory["weights"] / 2, rel=1e-12)
    if axis == "dp" and (sc.zero < 3 or sc.pp > 1 and sc.dp > 1):  # under PP, ZeRO-3's weights stay gathered
        # equal up to float rounding (hypothesis found DeepSeek-V3, PP 4, ZeRO-3: ...700.06555 against .0656)
        assert after.memory["weights"] == pytest.approx(before.memory["weights"], rel=1e-12)


@SETTINGS
@given(train_scenarios())
def test_bigger_global_batch_same_layout(sc):
    """Doubling the global batch (more micro-batches) doubles model FLOPs and never lowers throughput."""
    big = sc.replace(global_batch=2 * sc.global_batch)
    a, b = evaluate(sc), evaluate(big)
    assert b.train["model_flops"] == pytest.approx(2 * a.train["model_flops"], rel=1e-12)
    assert b.train["tokens_per_s"] >= a.train["tokens_per_s"] * (1 - 1e-12)
    assert b.memory["weights"] == a.memory["weights"]


# --- invalid input is refused, naming the field ----------------------------------------------------

def _base(**changes):
    args = dict(hardware=HARDWARE["h100-sxm"], model=MODELS["llama-3-8b"], gpus=16, tp=4, pp=2,
                micro_batch=1, global_batch=64, seq_len=4096)
    args.update(changes)
    return Scenario(**args)


def test_base_scenario_is_valid():
    assert _base().dp == 2


@pytest.mark.parametrize("changes, field", [
    (dict(tp=3, gpus=12), "tp"),                      # 3 does not divide 32 heads
    (dict(tp=64, gpus=128), "tp"),
    (dict(zero=4), "zero"),
    (dict(zero=-1), "zero"),
    (dict(gpus=12), "gpus"),                          # not a multiple of tp·pp·cp = 8
    (dict(micro_batch=-1), "micro_batch"),
    (dict(micro_batch=0), "micro_batch"),
    (dict(global_batch=-64), "global_batch"),
    (dict(global_batch=63), "global_batch"),          # not a multiple of micro_batch·dp = 2
    (dict(micro_batch=4, global_batch=36), "global_batch"),
    (dict(precision="bf17"), "precision"),
    (dict(precision="int4"), "precision"),            # a weight format, not a training precision
    (dict(recompute="some"), "recompute"),
    (dict(kind="serve"), "kind"),
    (dict(optimizer="lion"), "optimizer"),
    (dict(pp=64, gpus=256), "pp"),                    # more stages than 32 layers
    (dict(cp=3, gpus=24), "cp"),                      # 3 does not divide seq_len 4096
    (dict(ep=2), "ep"),                               # a dense model has one expert
    (dict(seq_len=0), "seq_len"),
    (dict(tp=2.0), "tp"),                             # whole numbers only
    (dict(gpus=True), "gpus"),
    (dict(kind="decode", gpus=3), "gpus"),            # inference TP must divide heads
    (dict(kind="decode", weight_dtype="int3"), "weight_dtype"),
    (dict(kind="decode", kv_dtype="fp4"), "kv_dtype"),
    (dict(kind="decode", batch=0), "batch"),
])
def test_invalid_input_names_the_field(changes, field):
    with pytest.raises(ValidationError) as info:
        _base(**changes)
    exc = info.value
    assert exc.field == field
    assert field in str(exc)
    assert exc.allowed  # says what is allowed


def test_no_device_link_refuses_multi_gpu():
    laptop = HARDWARE["laptop-x86-ddr5"]
    if laptop.scaleup_bw > 0 or laptop.scaleout_bw > 0:
        pytest.skip("the laptop preset has a device-to-device link")
    with pytest.raises(ValidationError) as info:
        Scenario(hardware=laptop, model=MODELS["llama-3.2-1b"], gpus=2, tp=2, global_batch=2)
    assert info.value.field == "gpus"


def test_precision_without_a_published_peak_is_refused():
    """fp8 training on a TPU v5e (no fp8 peak): refused with a ValidationError naming `precision`
    (today at evaluate time; the Scenario itself does not check the hardware's formats)."""
    with pytest.raises(ValidationError) as info:
        evaluate(Scenario(hardware=HARDWARE["tpu-v5e"], model=MODELS["llama-3-8b"], gpus=8, precision="fp8"))
    assert info.value.field == "precision"


def test_efficiency_is_validated():
    from trinity_desktop.model import Efficiency
    with pytest.raises(ValidationError) as info:
        Efficiency(compute=1.5)
    assert info.value.field == "efficiency.compute"


# --- inference ----------------------------------------------------------------------------------

INFER_MODELS = ("llama-3-8b", "llama-2-7b", "llama-3-70b", "mixtral-8x7b", "deepseek-v3", "opt-13b")


@st.composite
def infer_scenarios(draw) -> Scenario:
    arch = MODELS[draw(st.sampled_from(INFER_MODELS))]
    hw = HARDWARE[draw(st.sampled_from(("h100-sxm", "a100-80gb-sxm", "h200-sxm", "mi300x")))]
    pp = draw(st.sampled_from([p for p in (1, 1, 2, 4) if arch.layers % p == 0]))  # pipeline stages
    return Scenario(hardware=hw, model=arch, kind=draw(st.sampled_from(["prefill", "decode"])), pp=pp,
                    gpus=pp * draw(st.sampled_from([g for g in (1, 2, 4, 8) if arch.heads % g == 0])),
                    batch=draw(st.sampled_from([1, 2, 3, 8, 64, 256])),
                    prompt_len=draw(st.sampled_from([1, 128, 2048, 32768])),
                    gen_len=draw(st.sampled_from([1, 64, 1024])),
                    weight_dtype=draw(st.sampled_from(["bf16", "fp8", "int8", "int4"])),
                    kv_dtype=draw(st.sampled_from(["bf16", "fp8", "int4"])))


@SETTINGS
@given(infer_scenarios())
def test_inference_results_are_consistent(sc):
    r = evaluate(sc)
    _finite_nonneg(dict(r.memory), "memory")
    _finite_nonneg(dict(r.time), "time")
    _finite_nonneg(dict(r.bytes_by_link), "bytes_by_link")
    _finite_nonneg(dict(r.infer), "infer")
    assert sum(r.memory.values()) == pytest.approx(r.memory_total, rel=1e-12)
    assert sum(r.time.values()) == pytest.approx(r.time_total, rel=1e-12)
    c, b, _ = r.pressure.as_tuple()
    assert 0 <= c <= 1 + 1e-9  # FLOPs never run faster than the achievable peak
    assert 0 <= b <= 1.0
    assert r.infer["kv_bytes"] == pytest.approx(sc.batch * (sc.prompt_len + sc.gen_len)
                                                * r.infer["kv_bytes_per_token"], rel=1e-12)
    from trinity_desktop.model.views.stages import kv_spills, stages

    if kv_spills(sc):  # the request is timed with the KV moves between tiers: it ends where its stages end
        assert r.infer["request_s"] == pytest.approx(max(x.end_s for x in stages(sc, r)), rel=1e-12)
    else:  # the full cache in HBM: attention linear in context, so g steps at the mean context
        assert r.infer["request_s"] == pytest.approx(r.infer["prefill_s"]
                                                     + sc.gen_len * r.infer["time_per_output_token_s"], rel=1e-12)


@SETTINGS
@given(infer_scenarios(), st.sampled_from([2, 3, 10]))
def test_kv_cache_is_linear_in_context_and_batch(sc, factor):
    base = evaluate(sc)
    more_batch = evaluate(sc.replace(batch=factor * sc.batch))
    longer = evaluate(sc.replace(prompt_len=factor * sc.prompt_len, gen_len=factor * sc.gen_len))
    for r in (more_batch, longer):
        assert r.infer["kv_bytes"] == pytest.approx(factor * base.infer["kv_bytes"], rel=1e-12)
        assert r.memory["kv_cache"] == pytest.approx(factor * base.memory["kv_cache"], rel=1e-12)
        assert r.memory["weights"] == base.memory["weights"]


@pytest.mark.parametrize("key", INFER_MODELS)
def test_weight_bytes_by_dtype(key):
    arch = MODELS[key]
    w = {d: evaluate(Scenario(hardware=HARDWARE["h200-sxm"], model=arch, kind="decode", gpus=1,
                              weight_dtype=d)).infer["weights_bytes"] for d in ("bf16", "fp8", "int8", "int4")}
    assert w["bf16"] == 2 * arch.params_total()
    assert w["int4"] == pytest.approx(w["bf16"] / 4, rel=1e-15)
    assert w["int8"] == w["fp8"] == pytest.approx(w["bf16"] / 2, rel=1e-15)


def test_kv_dtype_scales_the_cache():
    sc = Scenario(hardware=HARDWARE["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=4)
    bf16, fp8, int4 = (evaluate(sc.replace(kv_dtype=d)).infer["kv_bytes"] for d in ("bf16", "fp8", "int4"))
    assert fp8 == pytest.approx(bf16 / 2, rel=1e-15) and int4 == pytest.approx(bf16 / 4, rel=1e-15)


def test_decode_batch1_is_bandwidth_bound():
    sc = Scenario(hardware=HARDWARE["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=1)
    r = evaluate(sc)
    assert r.pressure.bandwidth > r.pressure.compute
    assert r.bottleneck == "bandwidth"


def test_prefill_long_prompt_is_compute_bound():
    sc = Scenario(hardware=HARDWARE["h100-sxm"], model=MODELS["llama-3-8b"], kind="prefill", gpus=1,
                  batch=1, prompt_len=8192)
    r = evaluate(sc)
    assert r.pressure.compute > r.pressure.bandwidth
    assert r.bottleneck == "compute"


def test_decode_throughput_rises_with_batch():
    sc = Scenario(hardware=HARDWARE["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1,
                  prompt_len=512, gen_len=256)
    batches = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    tps = [evaluate(sc.replace(batch=b)).infer["tokens_per_s"] for b in batches]
    # strictly rising while the weight GEMMs are bandwidth-bound (up to ~ the ridge point, 295 on H100),
    # then flat: compute-bound GEMMs and KV reads both grow linearly with the batch
    ridge = 128
    rising = [t for b, t in zip(batches, tps, strict=True) if b <= 2 * ridge]
    assert all(b > a for a, b in zip(rising, rising[1:], strict=False)), tps
    assert all(b >= a * (1 - 1e-12) for a, b in zip(tps, tps[1:], strict=False)), tps
    # batch 1 is bandwidth bound: doubling the batch nearly doubles the throughput
    assert tps[1] / tps[0] > 1.9
    tpot = [evaluate(sc.replace(batch=b)).infer["time_per_output_token_s"] for b in batches]
    assert all(b >= a for a, b in zip(tpot, tpot[1:], strict=False))


def test_tensor_parallel_inference_splits_weights_and_kv():
    arch = MODELS["llama-3-70b"]  # 8 KV heads
    one = evaluate(Scenario(hardware=HARDWARE["h200-sxm"], model=arch, kind="decode", gpus=1, batch=8))
    eight = evaluate(Scenario(hardware=HARDWARE["h200-sxm"], model=arch, kind="decode", gpus=8, batch=8))
    assert eight.memory["weights"] == pytest.approx(one.memory["weights"] / 8, rel=1e-12)
    assert eight.memory["kv_cache"] == pytest.approx(one.memory["kv_cache"] / 8, rel=1e-12)
    # 16-way TP on 8 KV heads replicates each KV head on two ranks: the per-GPU cache stops shrinking
    from trinity_desktop.model.step.inference import kv_share_per_gpu
    np.testing.assert_allclose(kv_share_per_gpu(arch, np.array([1, 8, 16, 64])), [1, 1 / 8, 1 / 8, 1 / 8])


def test_mfu_ceiling_without_a_measured_family_counts_the_causal_half():
    """Hypothesis found it: with no MAMF row (TPU v5e) attention runs at the reference share on the causal half of
    the s² FLOPs that MFU counts, so a 4,096-token step's MFU passes 0.5 and stays under twice it."""
    sc = Scenario(hardware=HARDWARE["tpu-v5e"], model=MODELS["llama-3-8b"], kind="train", gpus=8, tp=1, pp=1,
                  micro_batch=1, global_batch=64, seq_len=4096, precision="fp32")
    mfu = evaluate(sc).train["mfu_format_peak"]
    assert REFERENCE_COMPUTE_EFFICIENCY < mfu <= model_flop_share_ceiling("tpu-v5e")
