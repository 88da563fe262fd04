"""DeepSeek-V3's blockwise FP8 GEMMs (§3.3.2: 1x128 activation tiles, 128x128 weight blocks) at the rate DeepSeek's
released training profile measures (deepseek-profile-data train.json: one DualPipe pair of a forward and a backward
chunk of 4 MoE layers, EP64, TP1, one 4,096-token sequence, on H800)."""

from __future__ import annotations

import pytest

from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas import kernel_efficiency as ke
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.step.layout import train_inputs
from trinity_desktop.model.step.training import training_step

HW, MODELS = presets.hardware_presets(), presets.model_presets()
PAIR_S = 129.0e-3          # the trace's GPU span of the pair
PAIR_GEMM_S = 74.53e-3     # its FP8 GEMM kernels
DSV3 = dict(hardware=HW["h800-sxm"], model=MODELS["deepseek-v3"], kind="train", gpus=2048, gpus_per_node=8, tp=1,
            pp=16, ep=64, zero=1, micro_batch=1, global_batch=15360, seq_len=4096, precision="fp8",
            recompute="selective", moe_fp8_dispatch=True, moe_node_limit=4, ep_comm_overlap=True,
            fp8_recipe="blockwise")


@pytest.fixture(scope="module")
def pieces():
    # the profiled pair is a chunk of 4 MoE layers of a middle stage: without the MTP module, which sits on the last
    # stage (formulas/train_mtp.py), whose compute the busiest stage would then carry
    sc = Scenario(**DSV3, mtp_training=False)
    return {recipe: training_step(sc.model, sc.hardware, train_inputs(sc.replace(fp8_recipe=recipe))).pieces
            for recipe in ("blockwise", "tensorwise")}


def test_blockwise_share_is_the_profiles_flops_over_its_gemm_time():
    # 3 passes x 2 FLOPs x (MLA 187.1M + 9 experts x 3 x 7168 x 2048) x 4,096 tokens x 4 layers, plus the
    # recomputed MLA up-projections, over 74.53 ms on the 112 of 132 SMs DeepEP leaves, against 1,978.9 TFLOP/s
    arch = MODELS["deepseek-v3"]
    active = arch.attention_params() + 9 * 3 * 7168 * 2048
    flops = 6 * active * 4096 * 4 + 2 * (1536 * 24576 + 512 * 32768) * 4096 * 4
    assert flops == pytest.approx(57.357e12 + 1.787e12, rel=1e-3)
    assert ke.BLOCKWISE_FP8_HOPPER == pytest.approx(flops / PAIR_GEMM_S / (112 / 132) / 1978.9e12, rel=1e-3)
    assert 0.46 < ke.BLOCKWISE_FP8_HOPPER < 0.48


def test_the_modelled_dualpipe_pair_is_within_20_percent_of_the_profile(pieces):
    """The published layout's busiest stage holds 4 layers, as the profiled chunk (61 layers on PP 16: 4 on each but
    the last, which holds 1 with the head; DualPipe's end ranks hold half of each, less than a middle rank): one
    micro-batch's forward and backward compute there is the pair's 129 ms (EP and PP hidden under DualPipe)."""
    p = pieces["blockwise"]
    assert float(p.layers_per_stage) == 4.0
    assert float(p.ep_exposed_mb_s) == 0.0
    assert float(p.compute_mb_s) == pytest.approx(PAIR_S, rel=0.20)
    # the tensorwise reading (cuBLAS MAMF GEMMs, Transformer Engine's cast-transposes) is 19% short of it
    assert float(pieces["tensorwise"].compute_mb_s) < 0.85 * PAIR_S


def test_blockwise_only_moves_fp8_on_hopper():
    base = Scenario(**DSV3)
    bf16 = base.replace(precision="bf16")
    assert evaluate(bf16).time_total == evaluate(bf16.replace(fp8_recipe="tensorwise")).time_total
    b200 = base.replace(hardware=HW["b200"])
    assert evaluate(b200).time_total == evaluate(b200.replace(fp8_recipe="tensorwise")).time_total
    assert evaluate(base).time_total > evaluate(base.replace(fp8_recipe="tensorwise")).time_total


def test_an_unknown_recipe_is_one_clear_line():
    with pytest.raises(ValidationError) as info:
        Scenario(**{**DSV3, "fp8_recipe": "rowwise"})
    assert "fp8_recipe" in str(info.value) and "\n" not in str(info.value)


def test_calc_train_states_the_recipe(capsys):
    import json

    from trinity_desktop.cli import run_cli

    argv = ["calc", "train", "--model", "deepseek-v3", "--hardware", "h800-sxm", "--gpus", "2048", "--pp", "16",
            "--ep", "64", "--zero", "1", "--global-batch", "15360", "--seq-len", "4096", "--precision", "fp8",
            "--json"]
    totals = []
    for extra in ([], ["--fp8-recipe", "blockwise"]):
        assert run_cli(argv + extra) == 0
        totals.append(json.loads(capsys.readouterr().out)["time_per_step_s"]["total"])
    sc = Scenario(**{**DSV3, "recompute": "none", "moe_fp8_dispatch": False, "moe_node_limit": 0,
                     "ep_comm_overlap": False})
    assert totals[1] == pytest.approx(evaluate(sc).time_total, rel=1e-9)
    assert totals[1] > totals[0]
