"""The catalogue techniques modelled for issue #4's second pass: quantised gradient communication (QSGD),
NVMe offload (ZeRO-Infinity), KV-cache offload to host DRAM (FlexGen), prefix caching (vLLM) and MLA
(DeepSeek-V3's latent sizes). Each is a Scenario field (or an Architecture transform) computed by the core:
direction signs, hand-derived sizes, grid/evaluate agreement, validation, and "off changes nothing".
"""

import dataclasses

import numpy as np
import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.formulas.comms import allreduce_bus_factor
from trinity_desktop.model.formulas.decode_costs import kv_read_bandwidth, runtime_for
from trinity_desktop.model.formulas.flops import attention_core_flops_per_token
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets, workload_library
from trinity_desktop.model.inputs.scenario import OFFLOAD_CODE
from trinity_desktop.model.step.evaluation import evaluate_grid
from trinity_desktop.model.step.kv_residency import residency_at
from trinity_desktop.model.step.train_memory import stage_params
from trinity_desktop.model.step.training import QUANT_FLOPS_PER_ELEMENT
from trinity_desktop.model.views import techniques as tq
from trinity_desktop.model.views.workloads import workload_scenario

HW = hardware_presets()
H100 = HW["h100-sxm"]
MODELS = model_presets()


@pytest.fixture(scope="module")
def decode_128k():
    return workload_scenario(workload_library()["long-context-decode"], H100)


def _dp_only_train():
    """Llama-3-70B, TP 8 inside each node, PP 1, ZeRO-0: the only scale-out traffic is the DP all-reduce."""
    return default_scenario().replace(pp=1, zero=0, global_batch=64)


# ------------------------------------------------------------------------------ quantised communication
def test_quantised_communication_scales_dp_bytes_by_the_byte_ratio():
    sc = _dp_only_train()
    assert sc.dp == 8 and sc.tp == 8
    before = evaluate(sc)
    psi_dense, _ = stage_params(sc.model, sc.tp, sc.pp, sc.ep)
    # hand: ring all-reduce of the bf16 gradients, 2(n-1)/n · 2Ψ per GPU, all on the scale-out network
    assert before.bytes_by_link["scale-out"] == pytest.approx(float(allreduce_bus_factor(8)) * 2.0 * psi_dense,
                                                              rel=1e-12)
    for width, ratio in ((1.0, 0.5), (0.5, 0.25), (0.125, 0.0625), (4.0, 2.0)):
        after = evaluate(sc.replace(grad_comm_bytes=width))
        assert after.bytes_by_link["scale-out"] == pytest.approx(ratio * before.bytes_by_link["scale-out"], rel=1e-12)
        assert after.memory_total == before.memory_total
    # Quantising costs compute: 4 FLOPs per local gradient element on every GPU, and a stage of its own.
    q = evaluate(sc.replace(grad_comm_bytes=1.0))
    assert q.flops - before.flops == pytest.approx(QUANT_FLOPS_PER_ELEMENT * float(psi_dense) * sc.gpus, rel=1e-9)
    assert q.time["gradient_compression"] > 0 and "gradient_compression" not in before.time
    assert q.bytes_by_link["hbm"] > before.bytes_by_link["hbm"]
    # Sending wider than the gradient format (fp32 reduction) costs no quantisation.
    wide = evaluate(sc.replace(grad_comm_bytes=4.0))
    assert wide.flops == before.flops and "gradient_compression" not in wide.time


def test_quantised_communication_technique_saves_bandwidth_spends_compute():
    sc = default_scenario()
    e = tq.technique_effect(sc, "quantised-communication")
    assert e.applicable
    assert (e.spent, e.saved) == ("compute", "bandwidth")
    assert e.d_bytes["scale-out"] < 0 and e.d_flops > 0
    assert e.after.scenario.grad_comm_bytes == 1.0
    ok, why = tq.applicable("quantised-communication", sc.replace(gpus=16, global_batch=16))  # DP = 1
    assert not ok and "data parallelism ≥ 2" in why


def test_equal_width_is_the_same_as_off():
    sc = default_scenario()
    a, b = evaluate(sc), evaluate(sc.replace(grad_comm_bytes=2.0))  # bf16 gradients: 2 bytes already
    assert a.time == b.time and a.bytes_by_link == b.bytes_by_link and a.flops == b.flops


# ------------------------------------------------------------------------------ NVMe offload
def test_nvme_offload_moves_optimizer_states_to_nvme():
    sc = default_scenario()
    base, opt, nvme = (evaluate(sc.replace(offload=m)) for m in ("none", "optimizer", "nvme"))
    # HBM: as ZeRO-Offload, optimizer states and gradients leave the GPU.
    assert nvme.memory_total == pytest.approx(opt.memory_total, rel=1e-12)
    assert nvme.memory_total < base.memory_total
    assert nvme.memory["optimizer"] == 0 and nvme.memory["gradients"] == 0
    # The optimizer states (fp32 master + Adam moments) sit on NVMe; host DRAM keeps the gradients.
    assert nvme.train["nvme_bytes"] == pytest.approx(base.memory["optimizer"], rel=1e-12)
    assert nvme.train["host_bytes"] == pytest.approx(opt.train["host_bytes"] - base.memory["optimizer"], rel=1e-12)
    assert nvme.train["host_bytes"] == pytest.approx(base.memory["gradients"], rel=1e-12)
    # Each step reads and writes them: 2 x the NVMe-resident bytes; the host link carries what ZeRO-Offload does.
    assert nvme.train["nvme_traffic_bytes"] == pytest.approx(2.0 * nvme.train["nvme_bytes"], rel=1e-12)
    assert nvme.bytes_by_link["host"] == pytest.approx(opt.bytes_by_link["host"], rel=1e-12)
    assert nvme.bytes_by_link["host"] > 0
    # 7 GB/s NVMe: reads hide behind the last backward pass only in part, so the step is slower.
    read_s = nvme.train["nvme_bytes"] / H100.nvme_bw
    assert nvme.time["offload_transfer"] >= opt.time["offload_transfer"] + max(
        0.0, read_s - nvme.train["backward_time_last_micro_batch"]) * (1 - 1e-9)
    assert nvme.time_total > opt.time_total
    assert opt.train["nvme_bytes"] == 0 and base.train["nvme_traffic_bytes"] == 0


def test_nvme_offload_technique_effect_per_tier():
    sc = default_scenario()
    e = tq.technique_effect(sc, "offload-nvme")
    assert e.applicable and (e.spent, e.saved) == ("bandwidth", "memory")
    assert e.d_memory["hbm"] < 0 and e.d_memory["nvme"] > 0 and e.d_memory["host"] > 0
    assert e.d_bytes["nvme"] > 0 and e.d_bytes["host"] > 0
    assert e.saved_pct > 0 and e.spent_pct > 0
    # The NVMe link counts in the bandwidth measure: occupancy includes its bytes at its bandwidth.
    m = tq.measures_of(e.after)
    without = tq.resource_measures(e.after.flops, e.after.bytes_by_link, tq.link_bandwidths(H100),
                                   e.after.memory_total)[1]
    assert m["bandwidth"] == pytest.approx(float(without) + e.after.train["nvme_traffic_bytes"] / H100.nvme_bw)


def test_nvme_offload_needs_an_nvme_drive():
    tpu = HW["tpu-v5e"]
    assert tpu.nvme_bw == 0
    sc = default_scenario()
    with pytest.raises(ValidationError) as err:
        sc.replace(hardware=tpu, offload="nvme", precision="bf16")
    assert err.value.field == "offload"
    no_nvme = dataclasses.replace(H100, nvme_bw=0.0)
    ok, why = tq.applicable("offload-nvme", sc.replace(hardware=no_nvme))
    assert not ok and "NVMe" in why


# ------------------------------------------------------------------------------ KV offload to host
def test_kv_offload_halves_hbm_kv_and_fetches_over_the_host_link(decode_128k):
    sc = decode_128k
    before, after = evaluate(sc), evaluate(sc.replace(kv_offload_fraction=0.5))
    assert after.memory["kv_cache"] == pytest.approx(0.5 * before.memory["kv_cache"], rel=1e-12)
    assert after.infer["kv_host_bytes"] == pytest.approx(0.5 * before.memory["kv_cache"], rel=1e-12)
    assert before.bytes_by_link["host"] == 0 and before.infer["kv_host_bytes"] == 0
    # Decode reads the whole cache; half of it first crosses the host link: bytes / (B_host · η_net).
    kv_read_hbm = before.time["attention_kv_reads"] * kv_read_bandwidth(H100.hbm_bw, sc.efficiency.hbm,
                                                                          runtime_for(H100.kind))  # bandwidth-bound
    assert after.bytes_by_link["host"] == pytest.approx(0.5 * kv_read_hbm, rel=1e-9)
    fetch = after.bytes_by_link["host"] / (H100.host_link_bw * sc.efficiency.network)
    assert after.time["kv_fetch"] == pytest.approx(fetch, rel=1e-12)
    assert after.time_total == pytest.approx(before.time_total + fetch, rel=1e-12)
    assert "kv_fetch" not in before.time
    e = tq.technique_effect(sc, "kv-offload")
    assert e.applicable and e.d_memory["hbm"] < 0 and e.d_memory["host"] > 0 and e.d_bytes["host"] > 0
    assert e.saved_pct > 0 and e.spent_pct > 0 and e.d_time > 0


def test_kv_offload_in_prefill_and_residency(decode_128k):
    pre = decode_128k.replace(kind="prefill")
    before, after = evaluate(pre), evaluate(pre.replace(kv_offload_fraction=0.25))
    assert after.bytes_by_link["host"] > 0 and after.memory_total < before.memory_total
    assert after.time_total >= before.time_total
    # The residency panel honours the forced share: a quarter of the cache sits in host DRAM.
    res = residency_at(decode_128k.replace(kv_offload_fraction=0.25))
    total = sum(res.resident.values())
    assert res.resident["host"] == pytest.approx(0.25 * total, rel=1e-9)
    assert residency_at(decode_128k).resident["host"] == 0


def test_kv_offload_needs_a_host_link():
    no_link = dataclasses.replace(H100, host_link_bw=0.0)
    with pytest.raises(ValidationError) as err:
        Scenario(hardware=no_link, model=MODELS["llama-3-8b"], kind="decode", gpus=1, kv_offload_fraction=0.5)
    assert err.value.field == "kv_offload_fraction"


# ------------------------------------------------------------------------------ prefix caching
def test_prefix_caching_skips_the_cached_share_of_prefill():
    sc = Scenario(hardware=H100, model=MODELS["llama-3-8b"], kind="prefill", gpus=1, batch=4, prompt_len=8192)
    arch = sc.model
    h = 0.75
    before, after = evaluate(sc), evaluate(sc.replace(prefix_hit_fraction=h))
    s, b = sc.prompt_len, sc.batch
    w_layers = arch.layers * arch.matmul_params_active_per_layer()
    per_tok = float(attention_core_flops_per_token((s + h * s) / 2.0, arch.heads, arch.qk_dim, arch.v_dim))
    # the LM head runs on each sequence's last prompt token only (prefill-last-token-logits)
    expected = (2.0 * (w_layers * b * s * (1 - h) + arch.hidden * arch.vocab * b)
                + arch.layers * b * s * (1 - h) * per_tok)
    assert after.flops == pytest.approx(expected, rel=1e-12)
    # The layers' GEMM FLOPs fall by exactly the hit fraction; attention falls less (new queries see the whole
    # prefix) and the one-token LM head not at all, so the whole falls a little less than 1 - h.
    assert 1 - h < after.flops / before.flops < (1 - h) * 1.15
    assert after.time_total < before.time_total
    assert after.time_total / before.time_total == pytest.approx(1 - h, rel=0.15)
    assert after.memory_total == before.memory_total  # the prefix's KV is cached either way
    e = tq.technique_effect(sc, "prefix-caching")
    assert e.applicable and e.saved == "compute" and e.saved_pct == pytest.approx(50.0, rel=0.1)
    assert e.d_memory["hbm"] == 0
    ok, why = tq.applicable("prefix-caching", sc.replace(kind="decode"))
    assert not ok and "prefill" in why
    # A full hit still computes one token per sequence: finite, positive.
    full = evaluate(sc.replace(prefix_hit_fraction=1.0))
    assert 0 < full.time_total < before.time_total and np.isfinite(full.pressure.as_tuple()).all()


# ------------------------------------------------------------------------------ MLA
def test_mla_transform_caches_the_latent(decode_128k):
    sc = decode_128k
    assert sc.model.key == "llama-3.1-70b"  # 80 layers, 64 heads, 8 KV heads of 128
    after = tq.apply("mla", sc)
    m = after.model
    assert (m.attention, m.kv_lora_rank, m.qk_rope_head_dim, m.qk_nope_head_dim, m.v_head_dim) == (
        "mla", 512, 64, 64, 128)
    r0, r1 = evaluate(sc), evaluate(after)
    assert r1.infer["kv_bytes_per_token"] == (512 + 64) * 80 * 2 == 92_160
    assert r0.infer["kv_bytes_per_token"] == 327_680
    # Parameters, by hand: per layer, W_K and W_V (2 x 8192 x 1024) give way to W_DKV (8192 x 576), the
    # latent norm (512) and W_UK, W_UV (512 x 64 x (64 + 128)); queries and output are unchanged.
    per_layer = (8192 * 576 + 512 + 512 * 64 * 192) - 2 * 8192 * 1024
    assert r1.params_total - r0.params_total == 80 * per_layer == -461_332_480
    # Attention FLOPs per token unchanged (qk width stays 128); on one GPU the KV memory falls 327680 -> 92160.
    assert m.qk_dim == sc.model.qk_dim
    one = Scenario(hardware=H100, model=sc.model, kind="decode", gpus=1, batch=1, prompt_len=32768)
    assert evaluate(tq.apply("mla", one)).memory["kv_cache"] == pytest.approx(
        evaluate(one).memory["kv_cache"] * 92_160 / 327_680, rel=1e-12)
    # With TP 8 over 8 KV heads, each GPU held 1/8 of the GQA cache but holds the whole (replicated) latent.
    assert r1.memory["kv_cache"] == pytest.approx(r0.memory["kv_cache"] * 92_160 / (327_680 / 8), rel=1e-12)
    ok, why = tq.applicable("mla", sc.replace(model=MODELS["deepseek-v3"]))
    assert not ok and "MLA" in why


# ------------------------------------------------------------------------------ grid == evaluate
def test_training_grid_matches_evaluate_for_new_axes():
    sc = default_scenario()
    widths = np.array([0.0, 0.5, 1.0, 4.0])[:, None]
    codes = np.array([OFFLOAD_CODE[m] for m in ("none", "optimizer", "activations", "nvme")])[None, :]
    out = evaluate_grid(sc, grad_comm_bytes=widths, offload=codes)
    names = {v: k for k, v in OFFLOAD_CODE.items()}
    for i, w in enumerate(widths[:, 0]):
        for j, c in enumerate(codes[0]):
            r = evaluate(sc.replace(grad_comm_bytes=float(w), offload=names[int(c)]))
            for key, ref in (("time_total", r.time_total), ("memory_total", r.memory_total),
                             ("hardware_flops", r.flops)):
                assert float(np.broadcast_to(getattr(out, key), (4, 4))[i, j]) == pytest.approx(ref, rel=1e-9), key
            for link in ("scale-out", "host", "hbm"):
                got = float(np.broadcast_to(out.bytes_by_link[link], (4, 4))[i, j])
                assert got == pytest.approx(r.bytes_by_link[link], rel=1e-9, abs=1e-300), link
            assert float(np.broadcast_to(out.nvme_bytes, (4, 4))[i, j]) == pytest.approx(r.train["nvme_bytes"])


@pytest.mark.parametrize("kind", ["prefill", "decode"])
def test_inference_grid_matches_evaluate_for_new_axes(decode_128k, kind):
    sc = decode_128k.replace(kind=kind)
    f = np.array([0.0, 0.3, 1.0])[:, None]
    h = np.array([0.0, 0.5, 0.99])[None, :]
    out = evaluate_grid(sc, kv_offload_fraction=f, prefix_hit_fraction=h)
    total = "prefill_s" if kind == "prefill" else "time_per_output_token_s"
    for i in range(3):
        for j in range(3):
            r = evaluate(sc.replace(kv_offload_fraction=float(f[i, 0]), prefix_hit_fraction=float(h[0, j])))
            assert float(np.broadcast_to(getattr(out, total), (3, 3))[i, j]) == pytest.approx(r.time_total, rel=1e-9)
            assert float(np.broadcast_to(out.memory_total, (3, 3))[i, j]) == pytest.approx(r.memory_total,
                                                                                             rel=1e-9)
            got = float(np.broadcast_to(getattr(out, f"{kind}_bytes")["host"], (3, 3))[i, j])
            assert got == pytest.approx(r.bytes_by_link["host"], rel=1e-9, abs=1e-300)
            for part, arr in getattr(out, f"{kind}_time").items():
                assert float(np.broadcast_to(arr, (3, 3))[i, j]) == pytest.approx(r.time.get(part, 0.0), rel=1e-9, abs=1e-300)


# ------------------------------------------------------------------------------ validation, defaults
@pytest.mark.parametrize("field, value", [
    ("grad_comm_bytes", -1.0), ("grad_comm_bytes", 0.05), ("grad_comm_bytes", 5.0), ("grad_comm_bytes", True),
    ("grad_comm_bytes", "8"), ("kv_offload_fraction", 1.5), ("kv_offload_fraction", -0.1),
    ("prefix_hit_fraction", 2.0), ("prefix_hit_fraction", -1.0), ("offload", "ssd"),
])
def test_bad_values_name_the_field(field, value):
    with pytest.raises(ValidationError) as err:
        default_scenario().replace(**{field: value})
    assert err.value.field == field


def test_new_fields_default_off():
    sc = default_scenario()
    assert (sc.grad_comm_bytes, sc.kv_offload_fraction, sc.prefix_hit_fraction) == (0.0, 0.0, 0.0)
    assert sc.offload == "none"


def test_modelled_flags():
    cat = tq.load_techniques()
    for key in ("quantised-communication", "offload-nvme", "kv-offload", "prefix-caching", "mla", "cxl-memory-pool"):
        assert cat[key].modelled and not cat[key].reason, key
    assert not cat["split-computing"].modelled and cat["split-computing"].reason


def test_cxl_pool_holds_the_offloaded_kv_and_is_read_over_its_own_link():
    from trinity_desktop.model import ValidationError, evaluate
    from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
    from trinity_desktop.model.inputs.tiers import tier_map
    from trinity_desktop.model.step.kv_residency import residency_at

    base = default_scenario().replace(kind="decode", model=model_presets()["llama-3.1-70b"], gpus=8, batch=8,
                                      prompt_len=32768, gen_len=1024)
    cxl = tq.apply(tq.load_techniques()["cxl-memory-pool"], base)
    assert (cxl.kv_offload_fraction, cxl.kv_offload_tier) == (0.5, "cxl")
    b, a = evaluate(base), evaluate(cxl)
    assert a.memory["kv_cache"] == pytest.approx(b.memory["kv_cache"] / 2, rel=1e-12)
    assert a.infer["kv_cxl_bytes"] == pytest.approx(b.memory["kv_cache"] / 2, rel=1e-12)
    assert a.infer["kv_host_bytes"] == 0.0
    host = evaluate(base.replace(kv_offload_fraction=0.5))
    # the same bytes over the CXL pool's link instead of the host link: the fetch time scales with bandwidth
    t_cxl, t_host = a.time["kv_fetch"], host.time["kv_fetch"]
    hw = base.hardware
    assert t_cxl / t_host == pytest.approx(hw.host_link_bw / tier_map(hw)["cxl"].bandwidth, rel=1e-9)
    res = residency_at(cxl)
    assert res.resident["cxl"] == pytest.approx(a.infer["kv_cxl_bytes"], rel=1e-6)
    assert res.resident["host"] == 0.0
    effect = tq.technique_effect(base, "cxl-memory-pool")
    assert effect.d_memory["hbm"] < 0 and effect.d_memory["cxl"] > 0
    with pytest.raises(ValidationError) as err:  # A100 hosts have no CXL pool in memory_tiers.toml
        base.replace(hardware=hardware_presets()["a100-80gb-sxm"], kv_offload_tier="cxl")
    assert err.value.field == "kv_offload_tier"
