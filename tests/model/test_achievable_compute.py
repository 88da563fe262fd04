"""One home for achievable compute (issue 20/22): the pressures and the roofline's derated ceilings take the rate
from `pressure.achievable_compute`, which is the kernel curves' best GEMM (model/formulas/kernel_efficiency.py)."""

from __future__ import annotations

import pytest

from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.formulas import kernel_efficiency as ke
from trinity_desktop.model.formulas.pressure import achievable_compute
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.views.roofline_ceilings import achievable_ridge

HW = presets.hardware_presets()
H100 = HW["h100-sxm"]


def test_h100_reaches_its_measured_mamf_share():
    """mamf-table: H100 SXM 794.5 of 989 TFLOP/s in BF16, 1402.6 of 1979 in FP8; the assumption scales it."""
    bf16, fp8 = H100.peak("bf16"), H100.peak("fp8")
    assert achievable_compute(H100, bf16, 0.5) == pytest.approx(bf16 * 794.5 / 989.0, rel=1e-12)
    assert achievable_compute(H100, fp8, 0.5) == pytest.approx(fp8 * 1402.6 / 1979.0, rel=1e-12)
    assert achievable_compute(H100, bf16, 0.6) == pytest.approx(bf16 * 794.5 / 989.0 * 1.2, rel=1e-12)


def test_decode_and_unmeasured_hardware_keep_peak_times_efficiency():
    assert achievable_compute(H100, H100.peak("bf16"), 0.5, "decode") == H100.peak("bf16") * 0.5
    tpu = HW["tpu-v5e"]
    assert ke.family_of(tpu.key) is None
    assert achievable_compute(tpu, tpu.peak("bf16"), 0.45) == tpu.peak("bf16") * 0.45


def test_it_is_the_curves_best_gemm():
    """A GEMM that fills whole tiles and one whole wave (12 x 11 tiles of 256 x 128 on 132 SMs) and is
    compute-bound runs exactly at the achievable rate."""
    g = ke.Gemm(12 * 256.0, 11 * 128.0, 8192.0)
    peak = H100.peak("bf16")
    t = ke.gemm_seconds(g, ke.family_of(H100.key), peak, H100.hbm_bw, 0.8, 1.0)
    assert g.flops / t == pytest.approx(achievable_compute(H100, peak, 0.5), rel=1e-12)


def test_training_pressure_and_ridge_use_it():
    sc = Scenario(hardware=H100, model=presets.model_presets()["llama-3-8b"], kind="train", gpus=8, tp=1, pp=1,
                  global_batch=16, micro_batch=1, seq_len=4096)
    r = evaluate(sc)
    rate = achievable_compute(H100, H100.peak("bf16"), 0.5)
    assert r.pressure.compute == pytest.approx(min(1.0, r.train["hardware_flops"] / (r.time_total * 8 * rate)),
                                               rel=1e-9)
    assert achievable_ridge(sc) == pytest.approx(rate / (H100.hbm_bw * 0.8), rel=1e-12)
