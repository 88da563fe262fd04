"""Roofline ceilings, operating points and the decode sweep (model/views/roofline.py)."""

import json
import math

import numpy as np
import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import Scenario
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.views import roofline as rl

HW = hardware_presets()
MODELS = model_presets()


@pytest.mark.parametrize("key", sorted(HW))
def test_each_preset_ridge_is_peak_over_bandwidth(key):
    hw = HW[key]
    ceils = rl.ceilings(hw)
    hbm = rl.link_ceiling(ceils, "hbm")
    assert hbm.value == hw.hbm_bw
    for dtype, peak in hw.peak_flops.items():
        assert rl.compute_ceiling(ceils, dtype).value == peak
        assert rl.ridge_flop_per_byte(hw, dtype) == pytest.approx(peak / hw.hbm_bw, rel=1e-12)
    # Links with no bandwidth are absent; present ones carry the preset value.
    for link, bw in (("scale-up", hw.scaleup_bw), ("host", hw.host_link_bw), ("scale-out", hw.scaleout_bw),
                     ("nvme", hw.nvme_bw)):
        names = [c.link for c in ceils if c.kind == "bandwidth"]
        assert (link in names) == (bw > 0)
        if bw > 0:
            assert rl.link_ceiling(ceils, link).value == bw
    assert not any(c.link in ("sram", "l2") for c in ceils)   # no published on-chip bandwidth: omitted


def test_h100_ridge_and_merged_roofs():
    ceils = rl.ceilings(HW["h100-sxm"])
    names = [c.name for c in ceils if c.kind == "compute"]
    assert names == ["FP32", "TF32", "BF16/FP16", "FP8/INT8"]
    assert rl.ridge_flop_per_byte(HW["h100-sxm"], "bf16") == pytest.approx(295.3, abs=0.1)
    assert rl.ridge_flop_per_byte(HW["h100-sxm"], "fp8") == pytest.approx(590.7, abs=0.1)
    assert rl.ridge_flop_per_byte(HW["a100-80gb-sxm"], "bf16") == pytest.approx(153, abs=0.5)


def test_attainable_broadcasts():
    out = rl.attainable(np.array([1.0, 100.0, 1e4]), 1e15, 3e12)
    np.testing.assert_allclose(out, [3e12, 3e14, 1e15])


def _check_point(p, r, hw):
    ceils = {c.name: c for c in r.ceilings}
    peak = hw.peak(p.dtype)
    bw = next(c.value for c in r.ceilings if c.kind == "bandwidth" and c.link == p.link)
    expected = float(rl.attainable(p.intensity, peak, bw))
    assert p.attainable_flops_per_s == pytest.approx(expected, rel=1e-9)
    assert p.time_s == pytest.approx(max(p.flops / peak, p.bytes / bw), rel=1e-12)
    binding = ceils[p.bound_by]
    if binding.kind == "compute":
        assert p.intensity >= peak / bw and binding.value == peak and p.resource == "compute"
    else:
        assert binding.link == p.link and p.intensity < peak / bw and p.resource == "bandwidth"
        assert p.attainable_flops_per_s == pytest.approx(p.intensity * binding.value, rel=1e-9)
    for v in (p.flops, p.bytes, p.intensity, p.attainable_flops_per_s, p.time_s):
        assert math.isfinite(v) and v >= 0


def test_default_scenario_points_sit_on_their_binding_roof():
    sc = default_scenario()
    r = rl.roofline(sc)
    assert r.ridge_flop_per_byte == pytest.approx(989.4e12 / 3.35e12)
    names = [p.name for p in r.points]
    for expected in ("QKV GEMM", "out-projection GEMM", "MLP up+gate GEMM", "MLP down GEMM",
                     "attention (FlashAttention)", "attention (standard) — comparison", "optimizer step",
                     "TP all-reduce", "DP gradient reduce-scatter (ZeRO-1)"):
        assert expected in names
    for p in r.points:
        _check_point(p, r, sc.hardware)
    # Large GEMMs are compute-bound, the optimizer and collectives bandwidth-bound on their own roofs.
    assert r.point("MLP up+gate GEMM").bound_by == "BF16/FP16"
    assert r.point("optimizer step").bound_by == "HBM"
    assert r.point("TP all-reduce").link == "scale-up"          # TP 8 inside an 8-GPU node
    assert r.point("TP all-reduce").intensity == pytest.approx(0.25)   # (n-1)/n adds per 2(n-1)/n·2 bytes
    assert r.point("DP gradient reduce-scatter (ZeRO-1)").link == "scale-out"
    # FlashAttention moves fewer bytes than the standard algorithm, at higher intensity.
    fa, std = r.point("attention (FlashAttention)"), r.point("attention (standard) — comparison")
    assert fa.bytes < std.bytes / 2 and fa.intensity > std.intensity
    assert fa.flops == pytest.approx(std.flops * 4 / 3)        # recomputed forward


def test_standard_attention_selected_names_flash_as_comparison():
    sc = default_scenario().replace(flash_attention=False)
    names = [p.name for p in rl.roofline(sc).points]
    assert "attention (standard)" in names and "attention (FlashAttention) — comparison" in names


@pytest.mark.parametrize("kind", ["prefill", "decode"])
def test_inference_points(kind):
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-70b"], kind=kind, gpus=8, batch=4)
    r = rl.roofline(sc)
    for p in r.points:
        _check_point(p, r, sc.hardware)
    assert "TP all-reduce" in [p.name for p in r.points]
    if kind == "decode":
        g = r.point("decode GEMMs (weights)")
        assert g.bound_by == "HBM" and g.intensity == pytest.approx(4.0, rel=0.02)   # 2·W·b / (2 bytes · W)
        kv = r.point("decode KV-cache reads")
        assert kv.bound_by == "HBM" and kv.intensity == pytest.approx(2 * 64 / 8 / 2, rel=1e-9)  # GQA 8:1


def test_decode_batch_1_llama3_8b_is_bandwidth_bound():
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=1)
    p = rl.roofline(sc).point("decode GEMMs (weights)")
    assert p.bound_by == "HBM" and p.resource == "bandwidth"
    assert p.intensity == pytest.approx(1.0, rel=0.01)
    assert p.attainable_flops_per_s == pytest.approx(3.35e12, rel=0.01)


def test_decode_sweep_walks_to_the_ridge_at_the_closed_form_batch():
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=1)
    b = np.arange(1, 1025, dtype=float)
    s = rl.decode_sweep(sc, batch=b)
    ridge = s.ridge_flop_per_byte
    # Intensity is linear in batch (weights bytes are fixed): I(b) = b · I(1).
    np.testing.assert_allclose(s.intensity, b * s.intensity[0], rtol=1e-9)
    assert s.bound[0] == 0
    first = int(b[np.argmax(s.bound == 1)])
    assert first == math.ceil(s.ridge_batch)
    assert 280 <= s.ridge_batch <= 310            # ≈ ridge 295 · 2 bytes / 2 FLOPs
    np.testing.assert_allclose(s.attainable_flops_per_s, np.minimum(989.4e12, s.intensity * 3.35e12))
    # With KV reads at 2.3k context the step never reaches the ridge: it tends to (2W + A)/K < ridge.
    assert s.ridge_batch_with_kv == 0.0 and s.step_intensity_limit < ridge
    assert np.all(s.step_intensity < s.step_intensity_limit) and not s.step_bound.any()


def test_decode_sweep_with_kv_closed_form_at_short_context():
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=1,
                  prompt_len=64, gen_len=2)
    b = np.arange(1, 2049, dtype=float)
    s = rl.decode_sweep(sc, batch=b)
    assert s.ridge_batch_with_kv > s.ridge_batch
    first = int(b[np.argmax(s.step_bound == 1)])
    assert first == math.ceil(s.ridge_batch_with_kv)


def test_decode_context_sweep_kv_fit_limit():
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=32)
    ctx = rl.context_values()
    s = rl.decode_sweep(sc, context=ctx)
    limit = s.kv_fit_limit_context
    np.testing.assert_array_equal(s.fits, ctx <= limit)
    assert s.fits[0] and not s.fits[-1]
    # weights + KV at the limit fit in 90% of HBM, one more token does not.
    w = 2 * (MODELS["llama-3-8b"].params_total())
    kv_tok = 2 * 32 * 8 * 128 * 2
    assert w + 32 * limit * kv_tok <= 0.9 * 80e9 < w + 32 * (limit + 1) * kv_tok
    # Longer contexts pull the step's intensity (batch 32: GEMMs at 32 FLOP/B) down towards the KV reads'
    # 4 FLOP/B (GQA 32:8 at 2 bytes): long contexts are memory-bound before they are compute-bound.
    assert np.all(np.diff(s.step_intensity) < 0)
    assert np.all(np.isfinite(s.time_per_token_s)) and np.all(np.diff(s.time_per_token_s) > 0)


def test_decode_sweep_from_a_training_scenario_uses_its_tp():
    s = rl.decode_sweep(default_scenario())
    assert s.mode == "batch" and s.batch[0] == 1 and s.batch[-1] == 4096
    for key in ("intensity", "attainable_flops_per_s", "time_per_token_s", "kv_bytes", "step_intensity"):
        assert np.all(np.isfinite(getattr(s, key)))


def test_zero_byte_point_is_clipped():
    p = rl.OperatingPoint("x", 1e9, 0.0, "hbm", "compute", 1.0, "BF16", 1e9)
    assert p.intensity == rl.INTENSITY_CAP


def test_roofline_json_shape():
    out = rl.roofline_json(default_scenario())
    json.dumps(out, allow_nan=False)
    assert set(out) == {"ridge_flop_per_byte", "ridge_achievable_flop_per_byte", "ridge_definitions", "ceilings",
                        "points"}
    assert all(set(c) == {"name", "kind", "value"} for c in out["ceilings"])
    assert all(set(p) == {"name", "flops", "bytes", "intensity", "attainable_flops_per_s", "bound_by",
                          "bound_by_achievable"} for p in out["points"])
    assert {c["kind"] for c in out["ceilings"]} == {"compute", "bandwidth"}


@pytest.mark.parametrize("offload", ["optimizer", "activations"])
def test_offload_transfer_is_a_point_on_the_host_roof(offload):
    from trinity_desktop.defaults import default_scenario
    from trinity_desktop.model import evaluate
    from trinity_desktop.model.views.roofline import operating_points

    sc = default_scenario().replace(offload=offload)
    points = {p.name: p for p in operating_points(sc)}
    point = points["offload transfer (host link)"]
    assert point.link == "host"
    assert point.bytes == pytest.approx(evaluate(sc).bytes_by_link["host"], rel=1e-12)
    assert "offload transfer (host link)" not in {p.name for p in operating_points(default_scenario())}


@pytest.mark.parametrize("offload", ["optimizer", "nvme"])
def test_offloaded_optimizer_point_streams_the_local_states_not_its_host_time(offload):
    """ZeRO-Offload times the optimizer at host bandwidth; its point still moves local x (2K + g + w) bytes:
    Llama-3-8B on 8 H100, ZeRO-1 over DP 8, AdamW (K = 4 + 8), bf16 weights and gradients: 28 B x psi / 8,
    2.81e10 bytes (it was taken from the optimizer's time x HBM bandwidth: 1.5e12 bytes, 54x too many)."""
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], gpus=8, tp=1, pp=1, zero=1,
                  global_batch=8, offload=offload)
    point = rl.roofline(sc).point("optimizer step")
    expected = (2 * (4 + 8) + 2 + 2) * MODELS["llama-3-8b"].params_total() / 8
    assert point.bytes == pytest.approx(expected, rel=1e-9)
    assert point.bytes == pytest.approx(rl.roofline(sc.replace(offload="none")).point("optimizer step").bytes,
                                        rel=1e-12)
    assert point.flops == pytest.approx(rl.ADAM_FLOPS_PER_PARAM * MODELS["llama-3-8b"].params_total() / 8, rel=1e-9)
