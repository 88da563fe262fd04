"""MoE expert-parallel all-to-all as DeepSeek-V3 trains it: volume, FP8 dispatch, node-limited routing, and the
planner's choice of EP on DeepSeek-V3's cluster (DeepSeek-V3 Technical Report, arXiv 2412.19437)."""

from __future__ import annotations

import pytest

from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.formulas.comms import moe_all_to_all, moe_copies_per_token, moe_dispatch_bytes
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.search.planner import plan_training
from trinity_desktop.model.step.layout import train_inputs
from trinity_desktop.model.step.training import training_step

HW = presets.hardware_presets()
MODELS = presets.model_presets()
DSV3, H800 = MODELS["deepseek-v3"], HW["h800-sxm"]
# DeepSeek-V3 §3.2: PP16, EP64 over 8 nodes, ZeRO-1 DP on 2,048 H800; §4.2: 4K sequences, batch 15,360 after the
# ramp; §3.3: FP8 training with FP8 dispatch; §2.1.2 / §3.2.2: each token to at most M = 4 nodes; §3.2.1 DualPipe.
# §3.3.2: fine-grained (blockwise) FP8 scales (Scenario.fp8_recipe "blockwise")
AS_TRAINED = dict(moe_fp8_dispatch=True, moe_node_limit=4, ep_comm_overlap=True, fp8_recipe="blockwise")
PUBLISHED = dict(hardware=H800, model=DSV3, kind="train", gpus=2048, gpus_per_node=8, tp=1, pp=16, cp=1, ep=64,
                 zero=1, micro_batch=1, global_batch=15360, seq_len=4096, precision="fp8")
# Table 1 / §1: 2,664K H800 GPU hours for 14.8T tokens of pre-training, "180K H800 GPU hours" per trillion tokens
PUBLISHED_GPU_HOURS_PER_T = 180e3


def _pieces(**changes):
    sc = Scenario(**{**PUBLISHED, **changes})
    return training_step(sc.model, sc.hardware, train_inputs(sc)).pieces


def test_copies_per_token_hand_derived():
    # top-8 over EP64 on 8 GPUs per node: plain all-to-all sends 8 x 56/64 = 7 copies across nodes and
    # 8 x 7/64 = 0.875 inside the node; with M = 4 the token crosses once per target node, 4 x 7/8 = 3.5, and every
    # copy not on the receiving GPU is forwarded over NVLink, 8 x 7/8 = 7
    assert moe_copies_per_token(8, 64, 8, 0) == pytest.approx((7.0, 0.875))
    assert moe_copies_per_token(8, 64, 8, 4) == pytest.approx((3.5, 7.0))
    # an EP group inside one node sends nothing over the scale-out network, limit or not
    assert moe_copies_per_token(8, 8, 8, 4) == pytest.approx((0.0, 7.0))
    assert moe_copies_per_token(8, 8, 8, 0) == pytest.approx((0.0, 7.0))
    # fewer experts than the limit: the token reaches at most k nodes
    assert moe_copies_per_token(2, 64, 8, 4) == pytest.approx((2 * 7 / 8, 2 * 7 / 8))


def test_all_to_all_time_is_the_slower_link_plus_alphas():
    tokens, h = 4096, 7168
    t, b_out, b_in = moe_all_to_all(tokens, h, 8, 1.0, 64, 8, 4, (40e9, 8e-6), (160e9, 1e-6))
    assert b_out == pytest.approx(tokens * h * 3.5)
    assert b_in == pytest.approx(tokens * h * 7.0)
    assert t == pytest.approx(63 * 8e-6 + max(b_out / 40e9, b_in / 160e9))
    assert moe_all_to_all(tokens, h, 8, 1.0, 1, 8, 4, (40e9, 8e-6), (160e9, 1e-6))[0] == 0.0


def test_fp8_dispatch_keeps_the_combine_in_bf16():
    assert moe_dispatch_bytes(2.0, True) == 1.0 and moe_dispatch_bytes(2.0, False) == 2.0
    fp8 = _pieces(moe_fp8_dispatch=True).ep_mb_bytes
    bf16 = _pieces(moe_fp8_dispatch=False).ep_mb_bytes
    assert fp8 / bf16 == pytest.approx((2 * 1 + 2 * 2) / (4 * 2))  # two passes at 1 byte, two at 2


def test_ep_bytes_of_deepseek_v3_layout_hand_derived():
    # 4 layers on the busiest of 16 stages (ceil 61/16), 58 of 61 MoE, and the MTP module's MoE block averaged over
    # the 16 stages (train_mtp.py); 4,096 tokens per micro-batch; per pass 3.5 scale-out + 7 scale-up copies of
    # 7,168 elements; FP8 to the experts, BF16 back, forward and backward
    p = _pieces(**AS_TRAINED)
    moe_layers = 4 * 58 / 61 + 1 / 16
    per_pass_copies = 4096 * 7168 * (3.5 + 7.0)
    assert p.ep_mb_bytes == pytest.approx(moe_layers * 2 * per_pass_copies * (1.0 + 2.0))
    assert p.ep_mb_scaleout_bytes == pytest.approx(moe_layers * 2 * 4096 * 7168 * 3.5 * 3.0)


def test_ep_tokens_are_divided_by_tp_under_sequence_parallelism():
    sp = _pieces(tp=2, gpus=2048, sequence_parallel=True).ep_mb_bytes
    no_sp = _pieces(tp=2, gpus=2048, sequence_parallel=False).ep_mb_bytes
    assert no_sp / sp == pytest.approx(2.0)


def test_deepseek_v3_comm_to_compute_is_about_one_to_one_and_dualpipe_hides_it():
    # §3.2.1: cross-node EP "results in an inefficient computation-to-communication ratio of approximately 1:1";
    # DualPipe ensures "both all-to-all and PP communication can be fully hidden"
    plain = _pieces(moe_fp8_dispatch=True, moe_node_limit=4)
    ratio = float(plain.ep_mb_s / plain.compute_mb_s)
    assert 0.5 < ratio < 2.0, ratio
    dual = _pieces(**AS_TRAINED)
    assert float(dual.ep_exposed_mb_s) == 0.0 and float(dual.pp_exposed_mb_s) == 0.0
    r = evaluate(Scenario(**PUBLISHED, **AS_TRAINED))
    hidden_ep_pp = float(dual.micro_batches * (dual.ep_mb_s + dual.pp_mb_s))
    assert r.train["communication_overlapped"] >= hidden_ep_pp * (1 - 1e-12)


def test_node_limit_and_fp8_cut_the_old_all_to_all():
    # before: 2 bytes, plain routing, every copy over the slowest link: 4 x (63/64) x tokens x h x 2 x 8 per layer
    p = _pieces(**AS_TRAINED)
    old_bytes = (4 * 58 / 61 + 1 / 16) * 4 * (63 / 64) * 4096 * 7168 * 2 * 8
    # now 3.5 scale-out copies at 1.5 bytes on average (FP8 out, BF16 back) against 8 x 63/64 copies at 2 bytes
    assert p.ep_mb_scaleout_bytes / old_bytes == pytest.approx(3.5 * 1.5 / (8 * 63 / 64 * 2))


def _plan():
    """The whole default search space (training_space: every TP, PP, CP, EP, ZeRO, recompute, micro-batch up to 64,
    virtual stages and offload), DeepSeek-V3's communication options held fixed."""
    return plan_training(DSV3, H800, 2048, 15360, 4096, precision="fp8", gpus_per_node=8, **AS_TRAINED)


def test_planner_picks_expert_parallelism_for_deepseek_v3_on_2048_h800():
    plan = _plan()
    assert plan.best is not None
    assert plan.best.layout["ep"] > 1
    assert all(c.layout["ep"] > 1 for c in plan.top)


def test_planner_best_layout_within_20_percent_of_published_gpu_hours():
    """The planner's best layout with DeepSeek-V3's MTP module trained (formulas/train_mtp.py, §2.2: D = 1) and the
    memory-bound kernels counted by kernel: ~147K GPU hours per T tokens (PP8 CP2 EP128), -18% of the published
    180K; the rest of 180K is outside one step (the whole 14.8T-token run's GPU hours)."""
    best = _plan().best
    gpu_hours_per_t = best.as_json()["gpu_hours_per_trillion_tokens"]
    assert gpu_hours_per_t == pytest.approx(1e12 / (best.results.train["tokens_per_s"] / 2048) / 3600)
    assert gpu_hours_per_t == pytest.approx(PUBLISHED_GPU_HOURS_PER_T, rel=0.20)


def test_deepseek_layout_within_18_percent_of_published_gpu_hours():
    """DeepSeek-V3's own layout (§3.2: PP16 EP64 ZeRO-1 on 2,048 H800, DualPipe, FP8 dispatch, M = 4, blockwise FP8)
    with its memory-bound kernels counted by kernel (train_elementwise.py), its MTP module (train_mtp.py) and the
    pipeline paced by its busiest rank (the even split's 4 layers; under DualPipe an end rank holds half the first
    stage with the embedding and half the last, 1 layer with the head, the loss and the MTP module): ~151K GPU hours
    per T tokens, -16% of the published 180K."""
    r = evaluate(Scenario(**PUBLISHED, **AS_TRAINED))
    gpu_hours_per_t = 1e12 / (r.train["tokens_per_s"] / 2048) / 3600
    assert gpu_hours_per_t == pytest.approx(PUBLISHED_GPU_HOURS_PER_T, rel=0.18)


def test_megatron_bridge_dsv3_on_1024_h100_within_22_percent_with_group_limited_routing():
    """Megatron-Bridge 25.09's DeepSeek-V3 row (1,024 H100, TP2 PP8 EP64: 1,297 tokens/s/GPU) routes each token
    into at most 4 of 8 expert groups (DeepSeekV3ModelProvider: moe_router_num_groups 8, group_topk 4), one group
    per node at EP64 over 8-GPU nodes: node-limited M = 4, which halves the copies crossing InfiniBand. Its last
    stage (6 layers, the MTP module and two heads, the heads' GEMMs in BF16 outside Transformer Engine's FP8)
    paces it: +21%."""
    from trinity_desktop.model.search.published_runs import published_runs

    run = next(r for r in published_runs() if r.name.startswith("Megatron-Bridge 25.09 DeepSeekV3"))
    assert run.scenario.moe_node_limit == 4
    measured_s = run.measured_value
    limited = evaluate(run.scenario).time_total
    plain = evaluate(run.scenario.replace(moe_node_limit=0)).time_total
    assert limited == pytest.approx(measured_s, rel=0.22)
    assert plain > 1.3 * measured_s
