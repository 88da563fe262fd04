"""Complete training peak memory (model/formulas/memory.py): logits and loss buffers, the recompute working set,
ZeRO-3 gathers, NCCL channel buffers, CUDA context and allocator reserve; the published layouts that must fit;
torchtitan's measured peaks within a stated tolerance; invariants."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.formulas import memory as mem
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets

M, H = model_presets(), hardware_presets()
GIB = 2**30
MIB = 2**20


# --- hand-derived cases -----------------------------------------------------------------------------------------

def test_logits_buffer_at_a_128k_vocabulary():
    """b = 1, s = 8192, V = 128,256, t = 1: the fp32 logits alone are 4.2 GB; the loss's forward holds 16-bit logits,
    their fp32 copy and the fp32 log-softmax (10 B per logit), its backward the saved log-softmax, the gradient
    nll_loss hands it and its output, all fp32: 12 bytes per logit = 12.6 GB, the peak; TP 8 shards the vocabulary."""
    n = 1 * 8192 * 128256
    assert n * 4 == pytest.approx(4.2e9, rel=0.01)
    assert mem.LOSS_FORWARD_BYTES_PER_LOGIT == 10.0 and mem.LOSS_BACKWARD_BYTES_PER_LOGIT == 12.0
    assert mem.LOSS_FREED_LOGITS_BYTES == 2.0  # the freed 16-bit logits stay reserved at the peak
    assert mem.logits_buffer_bytes(1, 8192, 128256) == n * (12.0 + 2.0)
    assert mem.logits_buffer_bytes(2, 8192, 128256, tp=8, bytes_per_logit=12.0) == pytest.approx(2 * n * 12.0 / 8)


def test_loss_parallel_logits_at_tp8():
    """TP 8 (vocabulary-parallel, torchtitan's loss_parallel): the fused nll + log-softmax backward holds the saved
    fp32 log-softmax, zeros_like of it, its exp and their sum, 4 x 4 = 16 B per local logit, and the freed BF16 logits
    2 B more. Llama 3.1 70B, local batch 16 x 8192 on TP 8: 16 x 8192 x 128,256 / 8 = 2,101,346,304 logits x 18 B =
    37,824,233,472 B; 12 + 2 B without TP."""
    assert mem.LOSS_PARALLEL_BACKWARD_BYTES_PER_LOGIT == 16.0
    assert 16 * 8192 * 128256 / 8 == 2_101_346_304
    assert mem.logits_buffer_bytes(16, 8192, 128256, tp=8) == 37_824_233_472
    assert mem.logits_buffer_bytes(16, 8192, 128256, tp=1) == 16 * 8192 * 128256 * 14.0


def test_nccl_buffers_are_a_few_hundred_mib():
    """TP 8 and DP 4 rings: 16 channels x 2 connections x 4 MiB = 128 MiB each; PP 2: two 4 MiB peers; no EP."""
    assert mem.NCCL_BUFFSIZE == 4 * MIB
    assert mem.nccl_buffer_bytes(tp=8, cp=1, dp=4, pp=2, ep=1) == 2 * 128 * MIB + 2 * 4 * MIB
    # EP 64 over DP 128: the all-to-all's 63 peers and the expert-data-parallel ring (DP / EP = 2) add
    assert mem.nccl_buffer_bytes(tp=1, cp=1, dp=128, pp=16, ep=64) == (2 * 128 + 2 * 4 + 63 * 4) * MIB
    assert mem.nccl_buffer_bytes(tp=1, cp=1, dp=1, pp=1, ep=1) == 0.0


def test_zero3_gathers_two_layers():
    assert mem.zero3_gather_buffer_bytes(1e9, 3, 2.0, dp=8, layers=40) == 1e9 * 2 * 2.0
    assert mem.zero3_gather_buffer_bytes(1e9, 3, 2.0, dp=8, layers=1) == 1e9 * 2.0   # one layer on the stage
    assert mem.zero3_gather_buffer_bytes(1e9, 3, 2.0, dp=1, layers=40) == 0.0        # nothing sharded
    assert mem.zero3_gather_buffer_bytes(1e9, 2, 2.0, dp=8, layers=40) == 0.0


def test_fsdp_root_group_stays_gathered_at_the_loss():
    """Llama 3 8B's root group (torchtitan's fully_shard(model)): embedding and output 128,256 x 4,096 each plus the
    final norm's 4,096 = 1,050,677,248 parameters, unsharded in BF16 from the forward to the backward (FSDP2's root
    keeps post_forward_mesh_info None); FSDP 8 already counts 1/8: 1,050,677,248 x 2 x 7/8 = 1,838,685,184 B. Nothing
    without ZeRO-3, at DP 1, or under PP (the stage stays gathered there)."""
    root = 2 * 128256 * 4096 + 4096
    assert root == 1_050_677_248
    assert mem.fsdp_root_unsharded_bytes(root, 3, 8, 1) == 1_838_685_184
    assert mem.fsdp_root_unsharded_bytes(root, 2, 8, 1) == 0.0
    assert mem.fsdp_root_unsharded_bytes(root, 3, 1, 1) == 0.0
    assert mem.fsdp_root_unsharded_bytes(root, 3, 8, 8) == 0.0


def test_recompute_working_set():
    """Full: the layer's activations without recomputation less its stored input; selective: the scores only;
    none: nothing."""
    args = dict(s=4096, b=1, widths=mem.LayerWidths(4096, 32), tp=1)
    none = mem.activation_bytes_per_layer(**args, recompute=mem.RECOMPUTE_NONE)
    for mode in (mem.RECOMPUTE_SELECTIVE, mem.RECOMPUTE_FULL):
        stored = mem.activation_bytes_per_layer(**args, recompute=mode)
        assert mem.recompute_working_set_bytes(none, stored, mode) == pytest.approx(none - stored, rel=1e-12)
    assert mem.recompute_working_set_bytes(none, none, mem.RECOMPUTE_NONE) == 0.0
    sel = mem.activation_bytes_per_layer(**args, recompute=mem.RECOMPUTE_SELECTIVE)
    assert none - sel == pytest.approx(5 * 32 * 4096**2 * 1, rel=1e-12)  # Korthikanti's 5as²b


def test_breakdown_has_the_network_buffer_tier_and_adds_up():
    r = evaluate(default_scenario())
    assert set(r.memory) >= {"network_buffers", "runtime"}
    assert sum(r.memory.values()) == pytest.approx(r.memory_total, rel=1e-12)
    assert 0 < r.memory["network_buffers"] < 1e9  # a small tier
    assert r.memory["runtime"] >= mem.CUDA_CONTEXT_BYTES
    assert set(mem.MEMORY_PART_NOTES) == {"activations", "network_buffers", "runtime"}


# --- layouts that ran in public must fit -------------------------------------------------------------------------

def deepseek_v3(**changes):
    """DeepSeek-V3 report §3.2: 2,048 H800, PP16, EP64, ZeRO-1 (DP 128), no TP; 15,360 x 4,096 tokens per step;
    FP8 GEMMs; §3.2.3/§3.3.3 recipe: RMSNorm and MLA up-projections recomputed, FP8/E5M6 activations, BF16
    AdamW moments."""
    base = dict(hardware=H["h800-sxm"], model=M["deepseek-v3"], kind="train", gpus=2048, tp=1, pp=16, ep=64,
                zero=1, micro_batch=1, global_batch=15360, seq_len=4096, precision="fp8", recompute="selective",
                activation_recipe="deepseek-v3", optimizer="adamw-bf16")
    return Scenario(**{**base, **changes})


def test_deepseek_v3_own_layout_fits_with_its_memory_recipe():
    r = evaluate(deepseek_v3())
    assert r.fits, r.memory_total
    # Megatron's tensor set instead (the pre-#22 reading): > 120 GB on 80 GB
    plain = evaluate(deepseek_v3(activation_recipe="megatron", optimizer="adamw"))
    assert not plain.fits and plain.memory_total > 120e9
    assert r.train["stored_activation_bytes"] < 0.5 * plain.train["stored_activation_bytes"]


def test_deepseek_v3_61_layers_pipeline_with_uneven_stages():
    sc = deepseek_v3(first_stage_layers=3, last_stage_layers=2)  # 14 middle stages x 4 layers
    assert evaluate(sc).fits


def test_llama3_70b_tp4_pp8_vp5_fp8_on_64_h100_fits():
    """Megatron-Bridge's H100 FP8 pretraining recipe (reference "megatron-bridge-llama3-perf"): 64 GPUs, TP 4, PP 8,
    VP 5, global batch 256 (DP 2, distributed optimizer). With Korthikanti's 16-bit tensor set it needs 94 GB; with
    Transformer Engine's FP8 GEMM inputs cached for the backward ("te-fp8") it fits."""
    sc = Scenario(hardware=H["h100-sxm"], model=M["llama-3-70b"], kind="train", gpus=64, tp=4, pp=8,
                  virtual_stages=5, micro_batch=1, global_batch=256, seq_len=8192, precision="fp8", zero=1,
                  recompute="selective", activation_recipe="te-fp8")
    r = evaluate(sc)
    assert r.fits, r.memory_total
    assert not evaluate(sc.replace(activation_recipe="megatron")).fits


def test_te_fp8_tensor_count():
    """Hand count, b = s = 1, gated MLP: 8h (norm inputs 4h, FP8 QKV and fc1 inputs, two masks) + 5q + 4k + 5f."""
    got = mem.te_fp8_activation_bytes_per_layer(1, 1, 8192, q_width=8192, kv_width=1024, ffn=28672)
    assert got == 8 * 8192 + 5 * 8192 + 4 * 1024 + 5 * 28672


def test_llama31_405b_on_128_b200_fits():
    """128 B200 (180 GB): TP 8 x PP 8 x DP 2, full recomputation, ZeRO-1, FP8 GEMMs, 8K sequences."""
    sc = Scenario(hardware=H["b200"], model=M["llama-3.1-405b"], kind="train", gpus=128, tp=8, pp=8, zero=1,
                  micro_batch=1, global_batch=64, seq_len=8192, recompute="full", precision="fp8")
    assert evaluate(sc).fits


# --- published peak memory -------------------------------------------------------------------------------------

def _allocator_bytes(r):
    """What torchtitan reports (the caching allocator's peak, maximum over GPUs): the peak less the CUDA context."""
    return r.memory_total - mem.CUDA_CONTEXT_BYTES


def test_torchtitan_llama31_8b_32k_full_recompute_within_5_percent():
    """torchtitan docs/performance.md Table 2, row FSDP 8 CP 1: Llama 3.1 8B, 8 H100, sequence 32,768, local batch
    1, full activation checkpointing: 83.9 GiB. Before the complete peak the model said 24.7 GB (-73%); the
    logits (b·s·V x 12 B = 50 GB) closed most of the gap (-11%); FSDP's root group kept gathered (1.7 GiB) and the
    freed BF16 logits the allocator keeps reserved (b·s·V x 2 B = 7.8 GiB) bring it to +1%. Stated tolerance: 5%."""
    sc = Scenario(hardware=H["h100-sxm"], model=M["llama-3-8b"], kind="train", gpus=8, tp=1, pp=1, zero=3,
                  micro_batch=1, global_batch=8, seq_len=32768, recompute="full")
    err = _allocator_bytes(evaluate(sc)) / (83.9 * GIB) - 1.0
    assert abs(err) <= 0.05, err


@pytest.mark.parametrize("gpus,measured_gib", [(8, 82.4), (128, 67.0)])
def test_torchtitan_llama31_8b_selective_op_ac_within_10_percent(gpus, measured_gib):
    """torchtitan Tables 1 and 3, row FSDP: Llama 3.1 8B on 8 / 128 H100, local batch 2, sequence 8192, selective
    op-level checkpointing: 82.4 / 67.0 GiB. With Megatron's selective tensor set (all but the attention core) the
    model read +23% / +30% before #22 (and +56% with the logits added); torchtitan's policy saves only every second
    matmul output (recipe "torchtitan-op-sac"), which brought it to -15% / -17%; FSDP's root group and the freed BF16
    logits kept reserved bring it to -3% / -3%. Stated tolerance: 10%."""
    sc = Scenario(hardware=H["h100-sxm"], model=M["llama-3-8b"], kind="train", gpus=gpus, tp=1, pp=1, zero=3,
                  micro_batch=2, global_batch=2 * gpus, seq_len=8192, recompute="selective",
                  activation_recipe="torchtitan-op-sac")
    err = _allocator_bytes(evaluate(sc)) / (measured_gib * GIB) - 1.0
    assert abs(err) <= 0.10, err


def test_op_sac_stores_every_second_matmul():
    """Hand count for Llama 3 8B at b = 1, s = 1: input 2h + Q 2q + V 2k + w1 out 2f + w2 out 2h + SDPA out 2q."""
    h, q, k, f = 4096, 4096, 1024, 14336
    got = mem.op_sac_activation_bytes_per_layer(1, 1, h, q_width=q, kv_width=k, ffn=f)
    assert got == 2 * h + 2 * q + 2 * k + 2 * f + 2 * h + 2 * q


def test_torchtitan_llama31_70b_tp8_full_recompute_within_15_percent():
    """torchtitan Table 4, row 2D: Llama 3.1 70B, FSDP 32 x TP 8, local batch 16, sequence 8192, full
    activation checkpointing: 71.9 GiB. The model reads 63 GiB (-12%; -35% before the loss-parallel backward's
    16 B per local logit and the freed BF16 logits kept reserved, -66% before the logits and the recomputed layer
    were counted): the backward's activation gradients of the recomputed layer and Float8's buffers are not
    modelled. Stated tolerance: 15%."""
    sc = Scenario(hardware=H["h100-sxm"], model=M["llama-3.1-70b"], kind="train", gpus=256, tp=8, pp=1, zero=3,
                  micro_batch=16, global_batch=512, seq_len=8192, recompute="full")
    err = _allocator_bytes(evaluate(sc)) / (71.9 * GIB) - 1.0
    assert abs(err) <= 0.15, err


# --- invariants -------------------------------------------------------------------------------------------------

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(mb=st.sampled_from([1, 2, 4]), k=st.sampled_from([1, 2, 8]), recompute=st.sampled_from(
    ["none", "selective", "full"]), zero=st.integers(0, 3), pp=st.sampled_from([1, 2, 4]))
def test_memory_grows_with_the_micro_batch_and_the_sequence(mb, k, recompute, zero, pp):
    """At a fixed count of micro-batches per step, a larger micro-batch or a longer sequence never needs less."""
    base = default_scenario().replace(pp=pp, gpus=8 * pp * 4, zero=zero, recompute=recompute)
    dp = base.gpus // (base.tp * pp)
    r1 = evaluate(base.replace(micro_batch=mb, global_batch=mb * dp * k))
    r2 = evaluate(base.replace(micro_batch=2 * mb, global_batch=2 * mb * dp * k))
    r3 = evaluate(base.replace(micro_batch=mb, global_batch=mb * dp * k, seq_len=2 * base.seq_len))
    for r in (r2, r3):
        assert r.memory_total >= r1.memory_total * (1 - 1e-12)
        assert r.memory["activations"] >= r1.memory["activations"] * (1 - 1e-12)
    for r in (r1, r2, r3):
        assert sum(r.memory.values()) == pytest.approx(r.memory_total, rel=1e-12)
        assert all(v >= 0 for v in r.memory.values())
