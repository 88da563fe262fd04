"""Published training runs as they ran (#22): the MoE all-to-all inside an NVL72 rack at NVIDIA's measured DeepEP
rates (megatron-dsv3-gb200 §2.2.1: EP 32 over GB200's multi-node NVLink with 24 SMs, "about 400 GB/s" dispatch and
"about 190 GB/s" combine algorithm bandwidth, against the link's 900 GB/s per direction), and torchtitan's H100 as
the 96 GB HBM2e, 500 W part its benchmarks state."""

from __future__ import annotations

import pytest

from trinity_desktop.model import evaluate
from trinity_desktop.model.formulas import comms
from trinity_desktop.model.inputs.presets import hardware_presets
from trinity_desktop.model.search.published_runs import published_runs


def test_nvl72_caps_dispatch_and_combine_at_the_measured_rates():
    assert comms.moe_scaleup_bandwidths("gb200-nvl72", 720e9) == pytest.approx((400e9, 190e9))
    assert comms.moe_scaleup_bandwidths("gb300-nvl72", 720e9) == pytest.approx((400e9, 190e9))
    # a slower link (low network efficiency) is not raised to the measured rate
    assert comms.moe_scaleup_bandwidths("gb200-nvl72", 180e9) == pytest.approx((180e9, 180e9))
    # other fabrics, HGX B200 included (no rate read), keep the link
    for key in ("h100-sxm", "h800-sxm", "b200"):
        assert comms.moe_scaleup_bandwidths(key, 720e9) == (720e9, 720e9)


@pytest.fixture(scope="module")
def nvl72_deepseek_rows():
    return [r for r in published_runs() if "DeepSeekV3" in r.name and r.scenario.hardware.key in
            comms.NVLINK5_A2A_HARDWARE]


def test_megatron_bridge_deepseek_v3_on_nvl72_within_20_percent(nvl72_deepseek_rows):
    """Megatron-Bridge 25.11 / 26.02 DeepSeek-V3 rows on 256 GB200 / GB300 (EP 32-64 inside the rack), each paced by
    its busiest pipeline stage (the recipe's layouts where they are stated; the output heads' GEMMs in BF16, outside
    Transformer Engine's FP8): every row within 20% of its measured step (GB300 MXFP8 +19%); at the link's
    720 GB/s they were 11-28% too fast."""
    assert len(nvl72_deepseek_rows) == 6
    for run in nvl72_deepseek_rows:
        assert evaluate(run.scenario).time_total == pytest.approx(run.measured_value, rel=0.20), run.name


def test_the_link_rate_would_predict_them_too_fast(nvl72_deepseek_rows, monkeypatch):
    monkeypatch.setattr(comms, "NVLINK5_A2A_HARDWARE", ())
    errors = [evaluate(r.scenario).time_total / r.measured_value - 1.0 for r in nvl72_deepseek_rows]
    assert max(errors) < -0.05


def test_torchtitans_h100_is_the_96_gb_hbm2e_part_and_its_published_layouts_fit():
    """torchtitan benchmarks/llama3_h100_202412_torchtitan.md, "Hardware": 96 GB HBM2e at 2.4 TB/s, a 500 W limit;
    its Tables 1-2 peaks (82.4-84.5 GiB allocator peak) ran on that part, so they fit its 96 GB (not an 80 GB one)."""
    runs = [r for r in published_runs() if r.source == "torchtitan-h100-2024-12"]
    assert len(runs) == 14
    hw = runs[0].scenario.hardware
    assert (hw.key, hw.hbm_bytes, hw.hbm_bw, hw.tdp_w) == ("h100-96gb-500w", 96e9, 2.4e12, 500)
    assert all(r.scenario.hardware.key == hw.key for r in runs)
    small = [r for r in runs if r.scenario.model.key == "llama-3-8b"]
    assert small and all(evaluate(r.scenario).fits for r in small)


def test_torchtitans_500_w_h100_peaks_lie_a_third_of_the_way_from_nvl_to_sxm():
    """Footnote 2 of torchtitan's H100 page puts the 500 W part's peak between the NVL and the SXM; linear in power
    from the NVL's 400 W to the SXM's 700 W, 500 W is a third of the way: BF16 835.5 + (989.4 - 835.5) / 3 = 886.8
    TFLOP/s and FP8 1,670.5 + (1,978.9 - 1,670.5) / 3 = 1,773.3 (H100 datasheet's dense columns)."""
    hw = hardware_presets()["h100-96gb-500w"]
    sxm = hardware_presets()["h100-sxm"]
    assert hw.peak_flops["bf16"] == pytest.approx(835.5e12 + (989.4e12 - 835.5e12) / 3, rel=1e-3)
    assert hw.peak_flops["fp8"] == pytest.approx(1670.5e12 + (1978.9e12 - 1670.5e12) / 3, rel=1e-3)
    assert hw.peak_flops["bf16"] < sxm.peak_flops["bf16"] and hw.peak_flops["fp8"] < sxm.peak_flops["fp8"]


def test_megatron_bridge_fp8_layouts_on_80_gb_h100_fit_with_transformer_engines_fp8_inputs():
    """Megatron-Bridge's H100 FP8 rows (Llama 3 8B / 70B / 405B, DeepSeek-V3 on 8-1,024 H100) ran on 80 GB: with the
    Linear's FP8 input cast kept for the weight gradient (activation_recipe te-fp8) they fit; with 16-bit inputs
    the 70B row needed 96.7 GB."""
    runs = [r for r in published_runs() if r.source == "megatron-bridge-performance"
            and r.scenario.hardware.key == "h100-sxm"]
    assert len(runs) == 9
    assert all(r.scenario.activation_recipe == "te-fp8" for r in runs)
    assert all(evaluate(r.scenario).fits for r in runs), [r.name for r in runs if not evaluate(r.scenario).fits]


def test_torchtitans_selective_op_checkpointing_rows_use_its_op_policy_and_fit():
    """torchtitan's performance page, Llama 2 70B on 64 A100 80 GB, batch 1, "selective op" AC: with torchtitan's
    op-level policy (every second matmul output saved) it fits; Megatron's tensor set would need 144 GB."""
    runs = [r for r in published_runs() if r.source == "torchtitan-performance" and "selective op" in r.name]
    assert len(runs) == 3 and all(r.scenario.activation_recipe == "torchtitan-op-sac" for r in runs)
    assert all(evaluate(r.scenario).fits for r in runs)
