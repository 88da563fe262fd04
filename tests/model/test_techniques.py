"""Techniques catalogue: each technique is a Scenario transform whose effect the model computes.

Direction signs follow the papers (ZeRO §7, Korthikanti Table 2, FlashAttention Thm 2, DGC, vLLM §3), and
hand-derived values pin the sizes where the formula gives them exactly.
"""

import math

import numpy as np
import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import Scenario, ValidationError, barycentric, evaluate
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets, references, workload_library
from trinity_desktop.model.views import techniques as tq
from trinity_desktop.model.views.workloads import evaluate_library, workload_scenario

H100 = hardware_presets()["h100-sxm"]
MODELS = model_presets()


@pytest.fixture(scope="module")
def catalogue():
    return tq.load_techniques()


@pytest.fixture(scope="module")
def decode_128k():
    return workload_scenario(workload_library()["long-context-decode"], H100)


# ------------------------------------------------------------------------------------------ catalogue
REQUIRED = {"recompute-selective", "recompute-full", "zero-1", "zero-2", "zero-3", "fsdp", "offload-optimizer",
            "offload-activations", "tensor-parallel-x2", "pipeline-parallel-x2", "flashattention", "dgc",
            "quantised-communication", "in-network-aggregation", "gradient-accumulation", "kv-fp8", "kv-int4",
            "kv-streaming", "kv-h2o", "kv-razor", "gqa-8", "mqa", "mla", "weight-int8", "weight-int4",
            "kv-offload", "prefix-caching", "cxl-memory-pool", "split-computing"}
NOT_MODELLED = {"split-computing"}


def test_catalogue_covers_the_issue_and_states_its_basis(catalogue):
    assert REQUIRED <= set(catalogue)
    refs = references()
    for t in catalogue.values():
        assert t.direction in tq.DIRECTIONS
        assert 0.0 <= t.relevance <= 1.0 and len(t.relevance_basis) > 20
        assert t.citation in refs, t.key
        assert t.modelled or t.reason
    for key in NOT_MODELLED:
        assert not catalogue[key].modelled
    assert len(tq.DIRECTIONS) == 6
    # FSDP FULL_SHARD is ZeRO-3.
    assert dict(catalogue["fsdp"].set) == dict(catalogue["zero-3"].set) == {"zero": 3}


def test_bad_catalogue_entries_are_refused_with_the_field():
    base = ('[[technique]]\nkey = "x"\nname = "X"\nspent = "compute"\nsaved = "memory"\ncitation = "zero"\n'
            'relevance = 0.5\nrelevance_basis = "because"\nkinds = ["train"]\n')
    assert tq.parse_techniques(base + 'set = { zero = 3 }\n')["x"].set["zero"] == 3
    with pytest.raises(ValidationError, match="relevance"):
        tq.parse_techniques(base.replace("0.5", "1.5") + 'set = { zero = 3 }\n')
    with pytest.raises(ValidationError, match="spent/saved"):
        tq.parse_techniques(base.replace('"memory"', '"compute"') + 'set = { zero = 3 }\n')
    with pytest.raises(ValidationError, match="set"):
        tq.parse_techniques(base + 'set = { not_a_field = 3 }\n')
    with pytest.raises(ValidationError, match="reason"):
        tq.parse_techniques(base + "modelled = false\n")


def test_not_modelled_techniques_never_produce_a_number(catalogue, decode_128k):
    for key in NOT_MODELLED:
        e = tq.technique_effect(decode_128k, key)
        assert not e.applicable and e.after is None and "Not modelled" in e.reason
        assert e.saved_pct == 0.0 and e.spent_pct == 0.0
        with pytest.raises(ValidationError):
            tq.apply(key, decode_128k)


# ------------------------------------------------------------------------------------------ applicability
def test_applicability_rules():
    sc = default_scenario()
    assert tq.applicable("recompute-full", sc) == (True, "")
    ok, why = tq.applicable("kv-fp8", sc)
    assert not ok and "decode" in why
    ok, why = tq.applicable("recompute-full", sc.replace(kind="decode"))
    assert not ok and "train" in why
    ok, why = tq.applicable("zero-1", sc)  # already ZeRO-1
    assert not ok and "Already" in why
    ok, why = tq.applicable("in-network-aggregation", sc)
    assert not ok and "ZeRO stage = 0" in why
    ok, why = tq.applicable("gradient-accumulation", sc)
    assert not ok and "micro-batch ≥ 2" in why
    # TP 8 -> 16 at 64 GPUs is valid for Llama-3-70B (64 heads); TP 64 -> 128 is not.
    assert tq.applicable("tensor-parallel-x2", sc)[0]
    ok, why = tq.applicable("tensor-parallel-x2", sc.replace(tp=64, pp=1))
    assert not ok and "tp" in why


def test_apply_records_the_technique_and_validates(catalogue):
    sc = default_scenario()
    after = tq.apply("zero-3", sc)
    assert after.zero == 3 and after.techniques == ("zero-3",)
    assert tq.apply("tensor-parallel-x2", sc).tp == 16
    inf = sc.replace(kind="decode", gpus=8)
    assert tq.apply("tensor-parallel-x2", inf).gpus == 16  # inference TP spans every GPU
    with pytest.raises(ValidationError) as err:
        tq.apply("kv-fp8", sc)
    assert err.value.field == "technique"
    with pytest.raises(ValidationError):
        tq.apply("no-such-technique", sc)


def test_path_applies_in_order_and_skips_when_asked():
    sc = default_scenario()
    steps = tq.path(sc, ["zero-3", "recompute-full"])
    assert len(steps) == 3
    assert steps[1][0].zero == 3 and steps[1][0].recompute == "selective"
    assert steps[2][0].techniques == ("zero-3", "recompute-full")
    assert steps[2][1] == evaluate(steps[2][0])
    with pytest.raises(ValidationError):
        tq.path(sc, ["kv-fp8"])
    assert len(tq.path(sc, ["kv-fp8", "zero-3"], skip_inapplicable=True)) == 2


# ------------------------------------------------------------------------------------------ measures
def test_measures_are_defined_once_and_by_hand():
    r = evaluate(default_scenario())
    m = tq.measures_of(r)
    hw = r.scenario.hardware
    occupancy = (r.bytes_by_link["hbm"] / hw.hbm_bw + r.bytes_by_link["scale-up"] / hw.scaleup_bw
                 + r.bytes_by_link["scale-out"] / hw.scaleout_bw + r.bytes_by_link["host"] / hw.host_link_bw)
    assert m == {"compute": r.flops, "bandwidth": pytest.approx(occupancy, rel=1e-12), "memory": r.memory_total}
    # Broadcasting: the same function over arrays.
    c, b, mem = tq.resource_measures(np.array([1.0, 2.0]), {"hbm": np.array([3.35e12, 0.0])},
                                     {"hbm": 3.35e12}, np.array([5.0, 6.0]))
    assert b.tolist() == [1.0, 0.0] and c.tolist() == [1.0, 2.0] and mem.tolist() == [5.0, 6.0]


def test_effects_are_finite_everywhere(catalogue):
    for row in evaluate_library(H100):
        if row.scenario is None:
            continue
        for key in catalogue:
            e = tq.technique_effect(row.scenario, key, before=row.results)
            values = [e.saved_pct, e.spent_pct, e.d_flops, e.d_time, e.d_compute_time, *e.d_bytes.values(),
                      *e.d_memory.values(), *e.d_pressure, *e.pct_change.values()]
            assert all(math.isfinite(v) for v in values), (row.key, key)
            if e.applicable:
                assert e.saved_pct == pytest.approx(-e.pct_change[e.saved])
                assert e.spent_pct == pytest.approx(e.pct_change[e.spent])


# ------------------------------------------------------------------------------------------ direction signs
def test_recomputation_lowers_activation_memory_and_raises_flops():
    sc = default_scenario()  # Llama-3-70B, TP8 x PP2, s = 8192, b = 1, selective + FlashAttention
    e = tq.technique_effect(sc, "recompute-full")
    before, after = e.before, e.after
    assert after.memory["activations"] < before.memory["activations"]
    assert e.d_flops > 0 and e.saved_pct > 0 and e.spent_pct > 0
    # Full recomputation keeps 2sbh/t per layer (Korthikanti Table 2, SP shards it). The first stage holds 40
    # layers x min(p, m) = 2 micro-batches in flight (1.34 GB) plus one recomputed layer (0.36 GB); the last stage
    # peaks higher: 40 layers x 1 micro-batch plus the loss's logits, b·s·V/t x 18 bytes (TP 8's loss-parallel
    # backward: the saved fp32 log-softmax, zeros_like of it, its exp and their sum, 16 B, and the freed BF16 logits
    # the allocator keeps reserved, 2 B) = 2.36 GB at a 128,256-token vocabulary.
    s, b, h, t, vocab = 8192, 1, 8192, 8, 128256
    assert after.train["stored_activation_bytes"] == pytest.approx(2 * s * b * h / t * 40 * 1, rel=1e-12)
    assert after.train["transient_bytes"] == pytest.approx(b * s * vocab / t * 18.0, rel=1e-12)
    assert after.memory["activations"] == pytest.approx(2 * s * b * h / t * 40 + b * s * vocab / t * 18.0, rel=1e-12)
    # Selective recomputation recomputes the attention core: hardware FLOPs rise less than with full.
    sel = tq.technique_effect(sc.replace(recompute="none", flash_attention=False), "recompute-selective")
    assert 0 < sel.d_flops < e.d_flops
    assert sel.after.memory["activations"] < sel.before.memory["activations"]


def test_zero3_lowers_memory_and_moves_one_and_a_half_times_the_dp_traffic():
    # One micro-batch per step (global batch = DP), TP8 inside the node: scale-out carries only DP traffic.
    sc = Scenario(hardware=H100, model=MODELS["llama-3-8b"], kind="train", gpus=64, tp=8, pp=1, zero=0,
                  micro_batch=1, global_batch=8, seq_len=4096)
    assert sc.micro_batches == 1
    e = tq.technique_effect(sc, "zero-3")
    assert e.d_memory["hbm"] < 0 and e.saved_pct > 0
    assert e.d_bytes["scale-out"] > 0 and e.spent_pct > 0
    # ZeRO §7.2: baseline all-reduce 2Ψ, P_os+g+p 3Ψ (reduce-scatter + two all-gathers) = 1.5x.
    ratio = e.after.bytes_by_link["scale-out"] / e.before.bytes_by_link["scale-out"]
    assert ratio == pytest.approx(1.5, rel=1e-12)
    # ZeRO-1 and ZeRO-2 move the same 2Ψ as the all-reduce (§7.2.1).
    for key in ("zero-1", "zero-2"):
        z = tq.technique_effect(sc, key)
        assert z.after.bytes_by_link["scale-out"] == pytest.approx(z.before.bytes_by_link["scale-out"], rel=1e-12)
        assert z.d_memory["hbm"] < 0


def test_gradient_compression_lowers_bytes_moved_and_raises_hbm_work():
    sc = default_scenario()
    e = tq.technique_effect(sc, "dgc")
    assert e.d_bytes["scale-out"] < 0          # the gradient exchange shrinks
    assert e.d_bytes["hbm"] > 0                # top-k selection streams the gradients through HBM
    assert e.after.time["gradient_compression"] > 0
    assert e.saved_pct > 0                     # net link occupancy falls


def test_in_network_aggregation_on_the_zero0_all_reduce():
    sc = Scenario(hardware=H100, model=MODELS["llama-3-8b"], kind="train", gpus=64, tp=8, pp=1, zero=0,
                  micro_batch=1, global_batch=8, seq_len=4096)
    e = tq.technique_effect(sc, "in-network-aggregation")
    # nccl-tests: bus factor 2(n-1)/n -> (n-1)/(n+1); n = DP = 8: ratio (7/9) / (14/8) = 4/9.
    ratio = e.after.bytes_by_link["scale-out"] / e.before.bytes_by_link["scale-out"]
    assert ratio == pytest.approx((7 / 9) / (2 * 7 / 8), rel=1e-12)


def test_kv_quantisation_lowers_kv_memory_and_bytes_read(decode_128k):
    for key, factor in (("kv-fp8", 0.5), ("kv-int4", 0.25)):
        e = tq.technique_effect(decode_128k, key)
        assert e.after.memory["kv_cache"] == pytest.approx(factor * e.before.memory["kv_cache"], rel=1e-12)
        assert e.d_bytes["hbm"] < 0
        assert e.d_flops > 0                    # dequantisation FLOPs: compute spent
        assert e.saved_pct > 0 and e.spent_pct > 0


def test_kv_eviction_lowers_kv_memory(decode_128k):
    for key in ("kv-streaming", "kv-h2o", "kv-razor"):
        e = tq.technique_effect(decode_128k, key)
        assert e.after.memory["kv_cache"] < e.before.memory["kv_cache"], key
        assert e.d_bytes["hbm"] < 0
    # RazorAttention > 70% KV reduction (Tang et al. 2024) at 15% retrieval heads over a 128k context.
    razor = tq.technique_effect(decode_128k, "kv-razor")
    assert razor.after.memory["kv_cache"] < 0.3 * razor.before.memory["kv_cache"]


def test_flash_attention_lowers_hbm_traffic():
    sc = default_scenario().replace(flash_attention=False, recompute="none")
    e = tq.technique_effect(sc, "flashattention")
    assert e.d_bytes["hbm"] < 0 and e.saved_pct > 0
    assert e.d_flops > 0                       # the backward pass recomputes the scores
    assert e.d_memory["hbm"] < 0


def test_offload_lowers_hbm_memory_and_raises_host_link_bytes():
    sc = default_scenario()
    for key in ("offload-optimizer", "offload-activations"):
        e = tq.technique_effect(sc, key)
        assert e.d_memory["hbm"] < 0 and e.d_memory["host"] > 0, key
        assert e.before.bytes_by_link["host"] == 0 and e.d_bytes["host"] > 0, key
    opt = tq.technique_effect(sc, "offload-optimizer").after
    assert opt.memory["optimizer"] == 0 and opt.memory["gradients"] == 0


def test_gradient_accumulation_halves_activations_and_keeps_the_batch():
    sc = default_scenario().replace(micro_batch=2)
    e = tq.technique_effect(sc, "gradient-accumulation")
    after = e.after.scenario
    assert after.micro_batch == 1 and after.global_batch == sc.global_batch
    assert e.after.memory["activations"] == pytest.approx(e.before.memory["activations"] / 2, rel=1e-12)
    assert e.d_bytes["hbm"] > 0                # weights re-read once per extra micro-batch


def test_gqa_is_a_model_transform_that_shrinks_the_kv_cache_by_heads_over_8():
    sc = Scenario(hardware=H100, model=MODELS["llama-2-7b"], kind="decode", gpus=1, batch=8, prompt_len=4000,
                  gen_len=96)
    e = tq.technique_effect(sc, "gqa-8")
    assert e.after.scenario.model.kv_heads == 8 and sc.model.kv_heads == 32
    assert e.after.infer["kv_bytes_per_token"] * 4 == pytest.approx(e.before.infer["kv_bytes_per_token"])
    assert e.saved_pct > 0
    assert not tq.applicable("gqa-8", sc.replace(model=MODELS["llama-3-8b"]))[0]  # already 8 KV heads


def test_weight_quantisation_lowers_weight_memory(decode_128k):
    e = tq.technique_effect(decode_128k, "weight-int4")
    assert e.after.memory["weights"] == pytest.approx(e.before.memory["weights"] / 4, rel=1e-12)


# ------------------------------------------------------------------------------------------ the triangle
def test_barycentric_corners_and_centroid():
    assert barycentric(1.0, 0.0, 0.0).tolist() == [1.0, 0.0, 0.0]
    assert np.allclose(barycentric(0.4, 0.4, 0.4), [1 / 3] * 3)
    assert np.allclose(barycentric(0.0, 0.0, 0.0), [1 / 3] * 3)  # nothing loaded: centroid, never NaN


def test_long_context_decode_memory_pressure_grows_with_context(decode_128k):
    contexts = [8192, 16384, 32768, 65536, 131072]
    mem = [evaluate(decode_128k.replace(prompt_len=c - 4096, gen_len=4096)).pressure.memory for c in contexts]
    assert all(b > a for a, b in zip(mem, mem[1:], strict=False))


def test_long_context_moves_decode_toward_the_memory_corner(decode_128k):
    """Long contexts push decode toward memory (the KV cache): from 8k to 128k tokens the memory weight of the
    triangle position grows by 35% and more, memory passes compute, and HBM moves data for more of the step.
    (With the measured fixed cost per layer, model/formulas/decode_costs.py, HBM idles during the launch gaps,
    so its pressure no longer reaches the full cache's 0.86.)"""
    short = evaluate(decode_128k.replace(prompt_len=8192 - 4096, gen_len=4096)).pressure
    long = evaluate(decode_128k).pressure
    # (35%: the H100 TP all-reduces pay their measured size excess, allreduce_latency.hopper_size_excess, time
    # on neither HBM nor compute, in both steps)
    assert barycentric(*long.as_tuple())[2] > 1.35 * barycentric(*short.as_tuple())[2]
    assert long.memory > long.bandwidth > short.bandwidth
    assert long.memory > long.compute
    assert long.memory > 0.8


def test_training_leans_on_the_scale_out_network_when_experts_talk():
    """Dense pretraining is compute-bound. MoE pretraining's expert all-to-all (EP8 over four nodes) puts more bytes
    on the scale-out network, at several times the dense step's rate, but with each GPU dispatching only its
    tokens / TP under sequence parallelism, top-2 copies (the all-to-all was overstated before), compute still
    binds. (The busiest link, which the bandwidth pressure reads, is the dense step's TP traffic over NVLink, so
    the two pressures compare different links.)"""
    rows = {r.key: r for r in evaluate_library(H100)}
    dense, moe = rows["dense-pretrain"].results, rows["moe-pretrain"].results
    assert dense.bottleneck == "compute" and moe.bottleneck == "compute"
    assert moe.bytes_by_link["scale-out"] > 2 * dense.bytes_by_link["scale-out"]
    def scale_out_rate(r):
        return r.bytes_by_link["scale-out"] / r.time_total

    assert scale_out_rate(moe) > 3 * scale_out_rate(dense)
