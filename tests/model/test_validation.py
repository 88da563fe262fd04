"""The published runs file (training and inference): complete, sourced, its conversions consistent with the
sources' own arithmetic, and its loader strict."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop.model import evaluate
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.decode_costs import FASTERTRANSFORMER
from trinity_desktop.model.formulas.decode_kernels import LARGE_PAGE_RATIO
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.search.published_runs import (
    INFER_METRICS,
    megatron_recompute_flops,
    published_runs,
    runs_from_text,
)
from trinity_desktop.model.search.validation_fit import (
    calibrated_ranges,
    fit_efficiencies,
    fitted_errors,
    predicted_times,
)


def test_at_least_twelve_sourced_runs_with_full_layouts():
    runs = published_runs()
    refs = presets.references()
    assert len(runs) >= 12
    assert len({r.name for r in runs}) == len(runs)
    for r in runs:
        assert r.source in refs, r.name
        assert r.where and r.measured > 0
        evaluate(r.scenario)  # a valid layout the model computes


def test_mt_nlg_iteration_time_and_tflops_agree_through_megatrons_flop_count():
    """Smith et al. 2022: 60.1 s per iteration on 2240 A100s is 126 TFLOP/s per GPU (batch 1920, s 2048)."""
    f = megatron_recompute_flops(1920, 2048, 105, 20480, 51200)
    assert f / (2240 * 60.1) == pytest.approx(126e12, rel=0.005)


def test_narayanan_one_trillion_converts_to_a_step_time():
    """Table 1: 1008B on 3072 GPUs at 163 TFLOP/s per GPU, batch 3072 -> 96 B s l h^2 (...) / (3072 x 163e12)."""
    run = next(r for r in published_runs() if "1008.0B" in r.name)
    assert run.measured_value == pytest.approx(102.6, rel=0.002)


def test_korthikanti_table5_iteration_times_match_their_mfu():
    """Table 5's 1T 'present work' row: 71.49 s is 56.3% MFU by Eq. 7 (72 B L s h^2 (1 + s/6h + v/12hL))."""
    run = next(r for r in published_runs() if r.name.startswith("Megatron 1T, selective"))
    sc = run.scenario
    b, s, L, h, v = sc.global_batch, sc.seq_len, sc.model.layers, sc.model.hidden, sc.model.vocab
    model_flops = 72 * b * L * s * h ** 2 * (1 + s / (6 * h) + v / (12 * h * L))
    assert model_flops / (run.measured_value * sc.gpus * 312e12) == pytest.approx(0.563, abs=0.002)


def test_predicted_times_fall_with_efficiency_and_ranges_stay_ordered():
    runs = published_runs()[:3]
    t = predicted_times(runs, np.array([[0.4, 0.8, 0.8], [0.6, 0.8, 0.8], [0.6, 0.9, 0.8]]))
    assert np.all(t[:, 0] > t[:, 1]) and np.all(t[:, 1] >= t[:, 2])
    for hbm_fitted in (False, True):
        ranges = calibrated_ranges(np.array([0.7, 0.4, 0.6]), np.array([-0.2, 0.0, 0.1, 0.3]), hbm_fitted=hbm_fitted)
        for low, likely, high in ranges.values():
            assert 0.01 <= low <= likely <= high <= 1.0
        assert (ranges["hbm_efficiency"][1] == 0.6) == hbm_fitted


def test_inference_runs_state_their_layout_and_fit_the_device():
    runs = [r for r in published_runs() if r.kind == "inference"]
    assert len(runs) >= 4
    assert {r.quantity for r in runs} >= {"request_s", "ttft_s"}
    refs = presets.references()
    for r in runs:
        assert r.source in refs and r.where and r.metric in INFER_METRICS
        sc = r.scenario
        assert sc.kind == "decode" and sc.batch >= 1 and sc.prompt_len >= 1 and sc.gen_len >= 1
        assert evaluate(r.scenario).fits, r.name  # request_s is then the grid's (all KV in HBM)


def test_throughput_per_gpu_converts_to_the_batch_time():
    """TensorRT-LLM 0.6.1, H100 FP8, LLaMA 70B, batch 64, TP 2, 2048/2048: 547 tok/s per GPU ->
    64 x 2048 / (547 x 2) = 119.8 s for the static batch."""
    run = next(r for r in published_runs() if r.name.startswith("Llama 2 70B, TP 2, batch 64"))
    assert run.quantity == "request_s"
    assert run.measured_value == pytest.approx(64 * 2048 / (547 * 2))


def test_gpt20b_single_gpu_request_by_hand():
    """FasterTransformer GPT-20B, 1 A100, batch 1, 200 in / 200 out, FP16, default efficiencies:
    decode is bandwidth-bound: each step reads the weights W = L (12h^2 + 13h) + Vh (+2h final norm) at 2 bytes
    at 0.8 x 2.039 TB/s and the KV cache 2 L h x 2 bytes x the mean context 200 + 100 at 0.85 of that (the run's
    masked-MHA kernel over a contiguous cache: decode_kernels.LARGE_PAGE_RATIO), plus the fixed cost of L + 1 kernel
    groups (FasterTransformer's own 74.5 us each, decode_costs.FT_LINE; one GPU, so no all-reduce); the prefill is
    compute-bound: 2 (12 L h^2 + hV) x 200 FLOPs at 0.5 x 312 TFLOP/s (attention over 200 keys is < 1%), plus
    the same fixed cost once."""
    run = next(r for r in published_runs() if r.name.startswith("GPT-20B, 1 GPU, batch 1"))
    L, h, V = 44, 6144, 51200
    weights = L * (12 * h * h + 13 * h) + V * h + 2 * h
    assert run.scenario.decode_runtime == "fastertransformer"
    fixed = (L + 1) * FASTERTRANSFORMER.fixed_per_group_s
    step = 2 * weights / (0.8 * 2.039e12) + 2 * L * h * 2 * 300 / (0.8 * 2.039e12 * LARGE_PAGE_RATIO) + fixed
    prefill = 2 * (12 * L * h * h + h * V) * 200 / (0.5 * 312e12) + fixed
    predicted = predicted_times([run], np.array([[0.5, 0.8, 0.8]]))[0, 0]
    assert predicted == pytest.approx(200 * step + prefill, rel=2e-3)
    assert run.measured_value == 5.648


def test_hbm_efficiency_is_identified_by_decode_runs():
    """Decode-bound runs alone pin hbm_efficiency: fitting it to runs made with 0.6 recovers 0.6."""
    runs = [r for r in published_runs() if r.name.startswith(("GPT-20B, 1 GPU", "Llama 2 7B, 1 GPU, batch 112"))]
    truth = predicted_times(runs, np.array([[0.5, 0.8, 0.6]]))[:, 0]
    fake = [r.__class__(**{**r.__dict__, "metric": "request_latency_s", "measured": float(t)})
            for r, t in zip(runs, truth, strict=True)]
    x = fit_efficiencies(fake, (0.5, 0.8, 0.8), free=(False, False, True))
    assert x[2] == pytest.approx(0.6, rel=1e-3)
    assert np.all(np.abs(fitted_errors(fake, x)) < 1e-3)


GOOD = """
[[inference]]
name = "x"
source = "fastertransformer-gpt"
where = "row"
hardware = "a100-80gb-sxm"
model = "llama-2-7b"
gpus = 1
batch = 4
prompt_len = 128
gen_len = 32
weight_dtype = "fp16"
kv_dtype = "fp16"
metric = "request_latency_s"
measured = 1.5
"""


def test_a_complete_inference_entry_loads():
    (run,) = runs_from_text(GOOD)
    assert run.kind == "inference" and run.quantity == "request_s" and run.scenario.batch == 4


@pytest.mark.parametrize("change, needle", [
    (("batch = 4\n", ""), "batch"),
    (('metric = "request_latency_s"', 'metric = "tokens"'), "metric"),
    (("measured = 1.5", "measured = -1.5"), "measured"),
    (("measured = 1.5", 'measured = "fast"'), "measured"),
    (('hardware = "a100-80gb-sxm"', 'hardware = "a99"'), "a99"),
    (('model = "llama-2-7b"', 'model = "llama-9"'), "llama-9"),
    (("gpus = 1", "gpus = 3"), "gpus"),
    (('kv_dtype = "fp16"', 'kv_dtype = "fp12"'), "kv_dtype"),
    (("[[inference]]", "[[inference]"), "valid TOML"),
])
def test_malformed_entries_are_one_line_errors(change, needle):
    with pytest.raises(ValidationError) as info:
        runs_from_text(GOOD.replace(*change))
    message = str(info.value)
    assert needle in message and "\n" not in message
    if needle != "valid TOML":
        assert "inference run 'x'" in message


def test_a_malformed_training_entry_is_one_line_too():
    text = """
[[run]]
name = "t"
source = "korthikanti2022"
hardware = "a100-80gb-sxm"
model = "korthikanti-175b"
gpus = 64
tp = 8
pp = 8
virtual_stages = 13
global_batch = 64
seq_len = 2048
metric = "step_time_s"
measured = 13.75
"""
    with pytest.raises(ValidationError) as info:
        runs_from_text(text)
    message = str(info.value)
    assert "training run 't'" in message and "virtual_stages" in message and "\n" not in message
    (run,) = runs_from_text(text.replace("virtual_stages = 13", "virtual_stages = 3"))
    assert run.scenario.virtual_stages == 3 and run.quantity == "step_time_s"


def test_runs_take_the_hardwares_scale_up_domain_and_an_nvl72_ep64_all_to_all_stays_on_nvlink():
    """A run that states no gpus_per_node shares the hardware's own NVLink domain: 72 GPUs on a GB200/GB300
    NVL72 rack, 8 on HGX boards. DeepSeek-V3's EP 64 on GB200 then stays inside one NVLink 5 domain, and its
    exposed communication is far below the 8-GPU reading's (where 7/8 of each all-to-all crossed the NIC): about a
    third of it, with the rack's all-to-all at DeepEP's measured 400 / 190 GB/s (comms.moe_scaleup_bandwidths)."""
    runs = {r.name: r for r in published_runs()}
    gb200 = runs["Megatron-Bridge 26.02 DeepSeekV3 on 256 GB200, MXFP8"].scenario
    assert gb200.gpus_per_node == 72
    assert runs["Megatron-Bridge 26.02 DeepSeekV3 on 256 B200, MXFP8"].scenario.gpus_per_node == 8
    on_rack, on_boards = evaluate(gb200), evaluate(gb200.replace(gpus_per_node=8))
    assert on_rack.time["communication_exposed"] < 0.4 * on_boards.time["communication_exposed"]
