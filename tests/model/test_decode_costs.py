"""Decode as measured (model/formulas/decode_costs.py): fixed cost per layer and step, HBM efficiency by kernel,
effective bits per weight, MoE experts touched, against published figures and hand-derived cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinity_desktop.model import Scenario, evaluate, evaluate_grid
from trinity_desktop.model.base.dtypes import WEIGHT_FORMAT
from trinity_desktop.model.formulas import decode_costs as dc
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.views.decode_sweep import decode_terms

HW, MODELS = hardware_presets(), model_presets()


def _decode(hw, model, gpus, batch, prompt, gen, weights="bf16", kv="bf16", **kw) -> Scenario:
    return Scenario(hardware=HW[hw], model=MODELS[model] if isinstance(model, str) else model, kind="decode",
                    gpus=gpus, batch=batch, prompt_len=prompt, gen_len=gen, weight_dtype=weights, kv_dtype=kv, **kw)


# ------------------------------------------------------------------------------------------ the decompositions
def test_gpt_fast_rows_decompose_into_49_us_per_layer():
    """gpt-fast README (A100-80GB, CUDA graphs, batch 1): 7B 8-bit 155.58 tok/s over 6.87 GB, 70B 8-bit 19.13
    tok/s over 69.1 GB -> c = 49 us per layer group, achieved 1.43 TB/s (0.70 of 2.039 TB/s)."""
    d = dc.two_row_decomposition(*dc.GPT_FAST_A100_INT8)
    assert d.fixed_per_group_s == pytest.approx(49.36e-6, rel=2e-3)
    assert d.bandwidth_bytes_per_s / HW["a100-80gb-sxm"].hbm_bw == pytest.approx(0.702, abs=2e-3)
    for row in dc.GPT_FAST_A100_INT8:  # the line passes through both rows exactly
        assert d.seconds_per_token(row.layers, row.bytes_per_token) == pytest.approx(row.seconds_per_token,
                                                                                     rel=1e-12)
    assert dc.CUDA_GRAPHS.fixed_per_group_s == d.fixed_per_group_s


def test_llama_cpp_m4_max_rows_predict_the_q8_0_row():
    """Discussion #4167, M4 Max: F16 and Q4_0 TG give 4.3 ms fixed per token and 493 GB/s (0.90 of 546 GB/s);
    the same line predicts Q8_0 (6.67 GiB) at 53.2 tok/s, measured 54.05."""
    d = dc.two_row_decomposition(*dc.LLAMA_CPP_M4_MAX)
    assert 33 * d.fixed_per_group_s == pytest.approx(4.29e-3, rel=5e-3)
    assert d.bandwidth_bytes_per_s / HW["m4-max"].hbm_bw == pytest.approx(0.904, abs=2e-3)
    q8 = dc.LLAMA_CPP_M4_MAX_Q8_0
    predicted = 1.0 / d.seconds_per_token(q8.layers, q8.bytes_per_token)
    assert predicted == pytest.approx(q8.tokens_per_s, rel=0.03)


def test_metal_decode_streams_at_its_lines_own_bandwidth():
    """The fixed cost and the bandwidth of a line are solved together, so they are used together: the F16 and
    Q4_0 rows give B_eff = 493.3 GB/s, 1.1295 x the assumption's 0.8 x 546 GB/s; Llama 2 7B F16 streams its
    6.6078e9 non-embedding parameters x 2 B = 13.216 GB per token in 13.216e9 / 493.3e9 = 26.79 ms (with the
    default 0.8 alone it was 30.25 ms, and tg128 came out 9.5% slow)."""
    d = dc.two_row_decomposition(*dc.LLAMA_CPP_M4_MAX)
    assert d.bandwidth_bytes_per_s == pytest.approx(493.3e9, rel=1e-3)
    assert dc.LLAMA_CPP_METAL.weight_stream_ratio == pytest.approx(493.3 / (546.0 * 0.8), rel=1e-3)
    assert dc.LLAMA_CPP_METAL.weight_stream_ratio == pytest.approx(1.1295, abs=1e-3)
    assert dc.CUDA_GRAPHS.weight_stream_ratio == 1.0 and dc.ROOFLINE_ONLY.weight_stream_ratio == 1.0
    arch = MODELS["llama-2-7b"]
    r = evaluate(_decode("m4-max", arch, 1, 1, 1, 128, "fp16", "fp16"))
    streamed = (arch.params_total() - arch.lookup_params()) * 2.0
    assert streamed == pytest.approx(13.216e9, rel=1e-3)
    assert r.time["gemms"] == pytest.approx(streamed / d.bandwidth_bytes_per_s, rel=1e-9)
    assert r.time["gemms"] == pytest.approx(26.79e-3, rel=2e-3)


def test_weight_stream_ratio_moves_decode_gemvs_only():
    """The ratio is the decode GEMVs' alone: M4 Max's prefill (llama.cpp's matrix-matrix kernels) and its
    KV reads keep hbm_bw x hbm_efficiency; a datacenter GPU (ratio 1) is unchanged."""
    arch = MODELS["llama-2-7b"]
    sc = _decode("m4-max", arch, 1, 1, 512, 128, "fp16", "fp16")
    x = evaluate(sc)
    bw = HW["m4-max"].hbm_bw * 0.8
    kv_read = 2 * 32 * 4096 * 2.0 * (512 + 64)  # K and V, 32 layers, 4,096 wide, fp16, at the mean context
    assert x.time["attention_kv_reads"] == pytest.approx(kv_read / bw, rel=1e-9)


def test_fastertransformer_tp_sweep_hand_derived():
    """FasterTransformer GPT guide, GPT-20B at batch 1, 80 in / 200 out on 1, 2, 4, 8 A100 (5,609, 3,532, 2,438,
    2,053 ms; not validation runs). Bytes per pass by hand: 2 x (44 x (12 x 6144^2 + 13 x 6144) + 2 x 6144 +
    6144 x 51200) = 40,498,864,128. Small all-reduces (nccl-tests): 10.0 us at 2 GPUs, 6.05 + 6 x 1.975 = 17.9 us at
    4. Solving t(n) / 201 = 45 c + S / (n B) + 88 (AR(n) + d) on n = 1, 2, 4 gives c = 74.5 us, B = 1.650 TB/s,
    d = 12.1 us, and the 8-GPU row comes out at 2,101 ms (+2.3%)."""
    assert dc.FT_GPT20B_BYTES == 40_498_864_128
    assert dc.a100_small_allreduce(2) == pytest.approx(10.0e-6, rel=1e-9)
    assert dc.a100_small_allreduce(4) == pytest.approx(17.9e-6, rel=1e-9)
    line = dc.FT_LINE
    assert line.fixed_per_group_s == pytest.approx(74.52e-6, rel=2e-3)
    assert line.bandwidth_bytes_per_s == pytest.approx(1.6495e12, rel=2e-3)
    assert line.bandwidth_bytes_per_s / HW["a100-80gb-sxm"].hbm_bw == pytest.approx(0.809, abs=2e-3)
    assert line.allreduce_call_s == pytest.approx(12.08e-6, rel=5e-3)
    for n, ms in dc.FT_GPT20B_TP_ROWS:
        ar = dc.a100_small_allreduce(n) if n > 1 else 0.0
        t = 201 * line.seconds_per_pass(n, 44, dc.FT_GPT20B_BYTES, ar)
        assert t == pytest.approx(ms * 1e-3, rel=1e-9 if n < 8 else 0.03)
    assert dc.runtime_for("datacenter-gpu", "fastertransformer") is dc.FASTERTRANSFORMER
    assert dc.runtime_for("datacenter-gpu") is dc.CUDA_GRAPHS and dc.CUDA_GRAPHS.allreduce_call_s == 0.0


def test_fastertransformer_line_in_the_step():
    """The same GPT-20B shape on 8 A100 at batch 1: FasterTransformer's line adds, per decode step, 45 groups x
    (74.5 - 49.4) us of fixed cost and 88 all-reduce calls x 12.1 us over the CUDA-graph default; one GPU has no
    all-reduce, so only the fixed cost moves there."""
    from trinity_desktop.model.search.published_runs import published_runs

    run = next(r for r in published_runs() if r.name.startswith("GPT-20B, TP 8, batch 1,"))
    assert run.scenario.decode_runtime == "fastertransformer"
    ft = evaluate(run.scenario)
    auto = evaluate(run.scenario.replace(decode_runtime="auto"))
    extra = 45 * (dc.FT_LINE.fixed_per_group_s - dc.CUDA_GRAPHS.fixed_per_group_s) + 88 * dc.FT_LINE.allreduce_call_s
    assert extra == pytest.approx(45 * 25.16e-6 + 88 * 12.08e-6, rel=5e-3)
    assert ft.infer["time_per_output_token_s"] - auto.infer["time_per_output_token_s"] == pytest.approx(extra,
                                                                                                        rel=1e-9)
    one = run.scenario.replace(gpus=1)
    d1 = evaluate(one).infer["time_per_output_token_s"] - evaluate(one.replace(decode_runtime="auto")).infer[
        "time_per_output_token_s"]
    assert d1 == pytest.approx(45 * (dc.FT_LINE.fixed_per_group_s - dc.CUDA_GRAPHS.fixed_per_group_s), rel=1e-9)
    with pytest.raises(Exception, match="decode_runtime"):
        run.scenario.replace(decode_runtime="vllm")


@settings(max_examples=60, deadline=None)
@given(c=st.floats(1e-6, 5e-4), bw=st.floats(1e10, 1e13), l1=st.integers(1, 200), l2=st.integers(1, 200),
       s1=st.floats(1e8, 1e12), s2=st.floats(1e8, 1e12))
def test_two_row_decomposition_recovers_any_line(c, bw, l1, l2, s1, s2):
    """Invariant: rows generated from t = (L + 1) c + S / B give back c and B (where the rows are independent)."""
    if abs((l1 + 1) * s2 - (l2 + 1) * s1) < 0.05 * (l1 + 1) * s2:
        return
    rows = [dc.BatchOneRow("r", L, S, 1.0 / ((L + 1) * c + S / bw)) for L, S in ((l1, s1), (l2, s2))]
    d = dc.two_row_decomposition(*rows)
    assert d.fixed_per_group_s == pytest.approx(c, rel=1e-6)
    assert d.bandwidth_bytes_per_s == pytest.approx(bw, rel=1e-6)


def test_paged_kv_reads_run_at_0_69_of_weight_streaming():
    """flash-attention issue #1572: 1,849 GB/s on H100 (3.35 TB/s) = 0.552, over the weight-streaming 0.8."""
    assert dc.KV_READ_RATIO == pytest.approx(1849 / 3350 / 0.8, rel=1e-12)
    assert dc.kv_read_bandwidth(3.35e12, 0.8, dc.CUDA_GRAPHS) == pytest.approx(1.849e12, rel=1e-12)


def test_devices_without_a_measured_table_keep_the_roofline():
    for kind in ("tpu", "laptop-cpu", "datacenter-accelerator"):
        rt = dc.runtime_for(kind)
        assert rt.fixed_per_group_s == 0.0 and rt.kv_read_ratio == 1.0
    assert dc.runtime_for("datacenter-gpu") is dc.CUDA_GRAPHS and dc.runtime_for("laptop-soc") is dc.LLAMA_CPP_METAL


# ------------------------------------------------------------------------------------ published decode points
def test_h100_batch1_tpot_llama_3_3_70b_fp8_tp2_nim():
    """NIM 1.8.0, Llama-3.3-70B-Instruct (Llama-3.1-70B's architecture), 2 x H100, FP8, TP2, 500 in / 2000 out,
    concurrency 1: ITL 18.91 ms. The pure bandwidth roofline gave 13.3 ms (-29%)."""
    r = evaluate(_decode("h100-sxm", "llama-3.1-70b", 2, 1, 500, 2000, "fp8", "fp8"))
    assert r.infer["time_per_output_token_s"] == pytest.approx(18.91e-3, rel=0.12)
    # 81 groups of fixed cost: the layers and the step
    assert r.time["fixed"] == pytest.approx(81 * dc.CUDA_GRAPHS.fixed_per_group_s, rel=1e-12)


def test_batch16_request_gpt_175b_tp8_fastertransformer():
    """FasterTransformer GPT-175B, TP8 on A100 (NVLink), FP16, batch 16, 512 in / 32 out: 3,706.23 ms."""
    gpt = MODELS["gpt3-175b"]
    r = evaluate(_decode("a100-80gb-sxm", gpt, 8, 16, 512, 32, "fp16", "fp16"))
    # decode (32 steps) holds; the prefill on the kernel curves (kernel_efficiency.py) is the faster part:
    # -18% in all, listed by `validate` with the other FasterTransformer rows
    assert r.infer["request_s"] == pytest.approx(3.70623, rel=0.20)


@pytest.mark.parametrize("model, tp, measured_ms", [("llama-3-8b", 1, 833.421), ("llama-3-70b", 4, 2077.53),
                                                    ("mixtral-8x7b", 2, 1917.44)])
def test_vllm_h200_batch8_latency(model, tp, measured_ms):
    """vLLM performance benchmark (Buildkite build 9515), H200, batch 8, 32 in / 128 out, mean latency. The MoE
    row (Mixtral 8x7B, TP2) lands within the same margin as the dense rows; the roofline alone was 25-39% fast."""
    r = evaluate(_decode("h200-sxm", model, tp, 8, 32, 128))
    assert r.infer["request_s"] == pytest.approx(measured_ms * 1e-3, rel=0.2)


@pytest.mark.parametrize("weights, measured", [("fp16", 31.64), ("q8_0", 54.05), ("q4_0", 83.06)])
def test_llama_cpp_m4_max_text_generation(weights, measured):
    """Discussion #4167, M4 Max, Llama 2 7B tg128 at batch 1. Q4_0 stored at 4.5 bits per weight (18 bytes per
    32 weights), Q8_0 at 8.5; the roofline alone put Q4_0 at 116 tok/s (+40%). With the line's fixed cost and
    its own bandwidth together, all three rows land within 3% (Q8_0 was not used to draw the line)."""
    sc = _decode("m4-max", "llama-2-7b", 1, 1, 1, 128, weights, "fp16")
    r = evaluate(sc)
    assert r.infer["tokens_per_s"] == pytest.approx(measured, rel=0.03)


def test_decode_reads_the_effective_bits_of_the_weight_format():
    """Q4_0: 4 + 16/32 = 4.5 bits per weight; the weight bytes read per step follow it, not 4.0."""
    arch = MODELS["llama-2-7b"]
    q4 = evaluate(_decode("m4-max", arch, 1, 1, 1, 128, "q4_0", "fp16"))
    assert WEIGHT_FORMAT["q4_0"].effective_bits == 4.5
    assert q4.infer["weights_bytes"] == pytest.approx(arch.params_total() * 4.5 / 8, rel=1e-12)
    int4 = evaluate(_decode("m4-max", arch, 1, 1, 1, 128, "int4", "fp16"))
    assert q4.time["gemms"] == pytest.approx(int4.time["gemms"] * 4.5 / 4.0, rel=1e-12)


# ------------------------------------------------------------------------------------------------------ MoE
def test_moe_experts_touched_hand_derived():
    """Mixtral 8x7B (E = 8, k = 2), one H200: at batch b the step reads the non-expert weights and a share
    1 - (1 - k/E)^b of the routed experts' (b = 1: 1/4; b = 4: 1 - 0.75^4 = 0.6836; b = 64: ~1)."""
    arch = MODELS["mixtral-8x7b"]
    expert = arch.expert_params() * 2.0
    rest = (arch.params_total() - arch.lookup_params()) * 2.0 - expert
    for b, share in ((1, 0.25), (4, 1 - 0.75 ** 4), (64, 1 - 0.75 ** 64)):
        terms = decode_terms(_decode("h200-sxm", arch, 1, 1, 128, 2), batch=np.array([float(b)]))
        assert float(terms["weights_read"][0]) == pytest.approx(rest + share * expert, rel=1e-12)


def test_moe_expert_gemms_sit_on_their_own_roofline():
    """Hand-derived at batch 4096 on H200: the dense GEMMs (all b tokens) and the expert GEMMs (b·k tokens over
    every expert) are each max(FLOPs / (P·η_c), bytes / (B·η_hbm)); their sum is the GEMM time."""
    arch, hw = MODELS["mixtral-8x7b"], HW["h200-sxm"]
    b = 4096.0
    sc = _decode("h200-sxm", arch, 1, 1, 128, 2)
    r = evaluate_grid(sc, batch=np.array([b]))
    peak, bw = hw.peak("bf16") * sc.efficiency.compute, hw.hbm_bw * sc.efficiency.hbm
    w_tok = arch.layers * arch.matmul_params_active_per_layer() + arch.hidden * arch.vocab
    expert_f = 2.0 * arch.expert_params() * arch.experts_per_token / arch.experts * b
    expert_b = arch.expert_params() * 2.0 * (1.0 - (1.0 - 2 / 8) ** b)
    dense_b = (arch.params_total() - arch.lookup_params()) * 2.0 - arch.expert_params() * 2.0
    dense_f = 2.0 * w_tok * b - expert_f
    expected = max(dense_f / peak, dense_b / bw) + max(expert_f / peak, expert_b / bw)
    assert float(r.decode_time["gemms"][0]) == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------------------------------------------------- invariants, shape
def test_fixed_cost_is_per_layer_and_step_not_per_byte():
    """The fixed part does not move with batch or context; TPOT = the roofline parts + it."""
    sc = _decode("h100-sxm", "llama-3-8b", 1, 1, 512, 256)
    g = evaluate_grid(sc, batch=np.array([1.0, 8.0, 64.0]), prompt_len=np.array([[512.0], [8192.0]]))
    fixed = np.asarray(g.decode_time["fixed"])
    assert np.allclose(fixed, 33 * dc.CUDA_GRAPHS.fixed_per_group_s, rtol=1e-12, atol=0)
    parts = sum(np.asarray(v) for v in g.decode_time.values())
    assert np.allclose(parts, np.asarray(g.time_per_output_token_s), rtol=1e-12, atol=0)


def test_grid_matches_scalar_evaluate():
    sc = _decode("h100-sxm", "llama-3-70b", 4, 16, 1024, 256, "fp8", "fp8")
    g = evaluate_grid(sc, batch=np.array([1.0, 16.0]), hbm_efficiency=np.array([[0.6], [0.92]]))
    for i, eta in enumerate((0.6, 0.92)):
        for j, b in enumerate((1, 16)):
            one = evaluate(sc.replace(batch=b, efficiency=sc.efficiency.__class__(
                compute=sc.efficiency.compute, hbm=eta, network=sc.efficiency.network)))
            assert float(np.asarray(g.time_per_output_token_s)[i, j]) == pytest.approx(
                one.infer["time_per_output_token_s"], rel=1e-12)


def test_hbm_assumption_still_moves_decode():
    """The assumption's range scales both the weight stream and the KV reads: lower η_hbm, slower step."""
    sc = _decode("h100-sxm", "llama-3-8b", 1, 64, 4096, 256)
    g = evaluate_grid(sc, hbm_efficiency=np.array([0.6, 0.8, 0.92]))
    t = np.asarray(g.time_per_output_token_s)
    assert t[0] > t[1] > t[2]
    kv = np.asarray(g.decode_time["attention_kv_reads"])
    assert kv[0] / kv[2] == pytest.approx(0.92 / 0.6, rel=1e-9)


def test_llama_cpp_cuda_graphs_rtx_4090_q4_0():
    """llama.cpp PR #6766 (CUDA graphs), LLaMA 2 7B q4_0 text generation on an RTX 4090: 146.81 t/s. An engine
    other than the gpt-fast rows the fixed cost comes from; the roofline alone gives 215 t/s (+46%)."""
    r = evaluate(_decode("rtx-4090", "llama-2-7b", 1, 1, 1, 128, "q4_0", "fp16"))
    assert r.infer["tokens_per_s"] == pytest.approx(146.81, rel=0.12)


def test_gpt_fast_bf16_row_implies_its_stated_1700_gb_s():
    """Consistency: with c from the 8-bit rows, gpt-fast's Llama-2-7B Base row (104.9 tok/s over 13.32 GB per
    token) leaves 13.32 GB / (1/104.9 - 33 c) = 1.69 TB/s for the bf16 GEMVs; the README states 'peak bandwidth is
    about 1700 GB/s' for that A100."""
    c = dc.CUDA_GRAPHS.fixed_per_group_s
    bytes_per_token = 1397.31e9 / 104.9
    achieved = bytes_per_token / (1.0 / 104.9 - 33 * c)
    assert achieved == pytest.approx(1700e9, rel=0.02)
