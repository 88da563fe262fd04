"""The pipeline paced by its busiest stage (train_compute.busiest_stage): the embedding on the first stage, the
output head, the losses and the MTP modules on the last (vocabulary-parallelism; megatron-uneven-pipeline),
DualPipe's end ranks holding half of each (DeepSeek-V3 §3.2.1); the head's GEMM timed at its own shape; standard
attention's elementwise passes over s² (flash_io); FlashAttention-4's share on B200 (flashattention4)."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop.model import evaluate
from trinity_desktop.model.formulas import flash_io as fio
from trinity_desktop.model.formulas import kernel_efficiency as ke
from trinity_desktop.model.formulas.train_compute import StepShape, busiest_stage
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.search.published_runs import published_runs

M, H = model_presets(), hardware_presets()


def _shape(pp, first=0, last=0, mtp=0, dualpipe=False):
    return StepShape(tp=1, pp=pp, cp=1, ep=1, dp=1, zero=1, recompute=0, m=8, v=1, s_local=4096, lps=0,
                     act_keep=1.0, mtp=mtp, first_layers=first, last_layers=last, dualpipe=dualpipe)


def _seconds(pp, layers=64, **kw):
    # one block: 1 s of GEMMs, 0.5 s attention, 0 bytes; the embedding 0 s, the head 3 s (bytes at 1 B/s)
    r = busiest_stage(layers, _shape(pp, **kw), (1.0, 0.5, 0.0), 0.0, (3.0, 0.0), 1.0)
    return float(r.total_s)


def test_the_last_stage_paces_an_even_pipeline():
    # 64 layers on PP 16: 4 per stage; the last holds 4 layers and the head: 4 x 1.5 + 3 = 9 s
    assert _seconds(16) == pytest.approx(4 * 1.5 + 3.0)
    # one MTP block more on the last stage
    assert _seconds(16, mtp=1) == pytest.approx(5 * 1.5 + 3.0)
    # one stage holds everything
    assert _seconds(1) == pytest.approx(64 * 1.5 + 3.0)


def test_an_even_split_leaves_its_remainder_to_the_last_stage():
    # 61 layers on PP 16: 4 on each of the first 15, the 1 left on the last (Megatron-Bridge's layout): the
    # 4-layer stages pace it; with the MTP block the last holds 2 blocks and the head, 6 s, as much
    assert _seconds(16, layers=61) == pytest.approx(4 * 1.5)
    assert _seconds(16, layers=61, mtp=1) == pytest.approx(4 * 1.5)
    # stated uneven stages: 3 and 2 at the ends, 4 on the 14 between; the last with the head is 6 s
    assert _seconds(16, layers=61, first=3, last=2) == pytest.approx(max(4 * 1.5, 2 * 1.5 + 3.0))
    # 61 on PP 4: 16, 16, 16 and 13 with the head: 13 x 1.5 + 3 = 22.5 < 24
    assert _seconds(4, layers=61) == pytest.approx(16 * 1.5)


def test_dualpipe_end_ranks_hold_half_the_first_and_half_the_last_stage():
    # 4 + 4 layers and the head over two: (4 x 1.5 + 4 x 1.5 + 3) / 2 = 7.5 s, above a middle rank's 6
    assert _seconds(16, dualpipe=True) == pytest.approx(7.5)
    assert _seconds(16, dualpipe=True) < _seconds(16)
    # PP 2: both ranks hold both stages (61 layers: 31 and 30)
    assert _seconds(2, layers=61, dualpipe=True) == pytest.approx((61 * 1.5 + 3.0) / 2.0)


def test_memory_and_compute_share_the_even_split_remainder():
    # 61 layers on PP 16: 4 on each of the first 15, the 1 left on the last, for the activations held as for
    # the compute
    from trinity_desktop.model.formulas.memory import stage_layer_counts
    assert tuple(float(x) for x in stage_layer_counts(61, 16)) == (4.0, 4.0, 1.0)
    assert tuple(float(x) for x in stage_layer_counts(61, 4)) == (16.0, 16.0, 13.0)
    assert tuple(float(x) for x in stage_layer_counts(64, 16)) == (4.0, 4.0, 4.0)


def test_busiest_stage_is_vectorised():
    pp = np.array([1.0, 2.0, 16.0])
    r = busiest_stage(64, _shape(pp), (1.0, 0.5, 0.0), 0.0, (3.0, 0.0), 1.0)
    assert np.asarray(r.total_s) == pytest.approx([64 * 1.5 + 3.0, 32 * 1.5 + 3.0, 4 * 1.5 + 3.0])


def test_llama3_stages_one_layer_fewer_at_each_end_speed_up_the_step():
    run = next(r for r in published_runs() if r.name.startswith("Llama 3 405B on 8192 H100"))
    assert (run.scenario.first_stage_layers, run.scenario.last_stage_layers) == (7, 7)
    even = evaluate(run.scenario.replace(first_stage_layers=0, last_stage_layers=0)).time_total
    assert evaluate(run.scenario).time_total < even


def test_the_deepseek_v3_rows_state_the_recipes_layouts():
    rows = {r.name: r.scenario for r in published_runs() if "DeepSeekV3" in r.name}
    layouts = {(s.pp, s.virtual_stages): (s.first_stage_layers, s.last_stage_layers) for s in rows.values()
               if s.last_stage_layers}
    # (16, 1) and (4, 4) of the recipe's layout map, GB300's PP 2 VP 8 and H100's PP 8 VP 4 performance layouts
    assert layouts[(16, 1)] == (4, 1) and layouts[(4, 4)] == (16, 13) and layouts[(2, 8)] == (32, 29)
    assert sum(1 for s in rows.values() if s.last_stage_layers) == 6


def test_the_head_gemm_is_timed_at_its_own_shape():
    arch, hw = M["llama-3-8b"], H["h100-sxm"]
    fam = ke.family_of(hw.key)
    args = (fam, hw.peak("bf16"), hw.hbm_bw, 0.8, 1.0)
    head = ke.seconds_per_flop(ke.with_backward([ke.logits_gemm(arch, 8192, 1)]), *args)
    layer = ke.seconds_per_flop(ke.with_backward(ke.layer_gemms(arch, 8192, 1)), *args)
    assert abs(head / layer - 1.0) > 0.005  # the blend of the two was one rate for both
    # the head's 8192 x 128256 x 4096 runs near the MAMF share
    assert 1.0 / (head * hw.peak("bf16")) == pytest.approx(fam.mamf_bf16, rel=0.05)


def test_standard_attention_elementwise_passes_count_each_pass_once():
    n, heads, batch = 2048.0, 16, 2
    one = float(fio.standard_attention_elementwise_bytes(n, heads, batch, 2.0))
    assert one == pytest.approx((2 + 3) * n * n * 2.0 * heads * batch)
    # a recomputed forward passes over the matrix again: the softmax forward's 2 passes once more
    two = float(fio.standard_attention_elementwise_bytes(n, heads, batch, 2.0, forward_passes=2))
    assert two - one == pytest.approx(2 * n * n * 2.0 * heads * batch)
    # dropout: 2 + 2 passes and its 1-byte mask written and read
    drop = float(fio.standard_attention_elementwise_bytes(n, heads, batch, 2.0, dropout=True))
    assert drop - one == pytest.approx((4 * 2.0 + 2.0) * n * n * heads * batch)
    # with the GEMMs' own S write, P read, dP write and two dS reads (2 + 4 passes) it is Algorithms 0 + 3's 11
    gemm_passes = 6.0 * n * n * 2.0 * heads * batch
    full = float(fio.standard_attention_hbm_bytes(n, 64, heads, batch, 2.0))
    nd = (fio.STD_FWD_ND_PASSES + fio.STD_BWD_ND_PASSES) * n * 64 * 2.0 * heads * batch
    assert one + gemm_passes + nd == pytest.approx(full)


def test_flashattention4_runs_at_its_published_share_of_b200():
    fwd, _ = ke.attention_shares(ke.family_of("b200"))
    assert fwd == pytest.approx(0.717, abs=5e-4)
    assert fwd * H["b200"].peak("bf16") == pytest.approx(1613e12, rel=1e-3)


def test_the_head_stays_in_bf16_under_te_and_deepseek_fp8():
    # Megatron-Core's output layer is not a Transformer Engine module (megatron-core-output-layer) and DeepSeek-V3
    # §3.3.1 keeps the output head in BF16: under FP8 training with either recipe the head is timed at the BF16
    # peak; torchtitan's Float8 converts it (filter_fqns empty by default)
    from trinity_desktop.model.formulas.train_compute import head_in_bf16
    assert bool(head_in_bf16(3)) and bool(head_in_bf16(1)) and not bool(head_in_bf16(2)) and not bool(head_in_bf16(0))
    run = next(r for r in published_runs() if r.name == "Megatron-Bridge 25.11 LLAMA3_8B on 8 H100, FP8-CS")
    assert run.scenario.activation_recipe == "te-fp8"
    te = evaluate(run.scenario).time_total
    assert evaluate(run.scenario.replace(activation_recipe="megatron")).time_total < te
