"""Multi-token prediction in training (model/formulas/train_mtp.py; DeepSeek-V3 §2.2): the module's parameters
against the model card, its FLOPs hand-derived, its memory on the last stage, and nothing where the architecture
has no MTP module."""

import dataclasses

import pytest

from trinity_desktop.model.formulas.flops import attention_core_flops_per_token
from trinity_desktop.model.inputs.hf_config import architecture_from_hf_config
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.layout import train_inputs
from trinity_desktop.model.step.training import training_step

DSV3 = model_presets()["deepseek-v3"]
H800 = hardware_presets()["h800-sxm"]


def _step(model, **changes):
    sc = Scenario(**{**dict(hardware=H800, model=model, kind="train", gpus=64, gpus_per_node=8, tp=1, pp=1, cp=1,
                            ep=64, zero=0, recompute="none", micro_batch=1, global_batch=64, seq_len=4096,
                            precision="bf16"), **changes})
    return training_step(sc.model, sc.hardware, train_inputs(sc))


def test_deepseek_v3_trains_one_mtp_module_from_its_config():
    assert DSV3.mtp_depth == 1  # config.json num_nextn_predict_layers (deepseek-v3-config)
    assert train_inputs(Scenario(hardware=H800, model=DSV3, kind="train")).mtp_depth == 1
    assert train_inputs(Scenario(hardware=H800, model=DSV3, kind="train", mtp_training=False)).mtp_depth == 0
    llama = model_presets()["llama-3-8b"]
    assert llama.mtp_depth == 0 and train_inputs(Scenario(hardware=H800, model=llama, kind="train")).mtp_depth == 0


def test_hf_config_reads_num_nextn_predict_layers():
    doc = {"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
           "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 2048}
    assert architecture_from_hf_config(doc, "tiny").mtp_depth == 0
    assert architecture_from_hf_config({**doc, "num_nextn_predict_layers": 2}, "tiny").mtp_depth == 2


def test_mtp_module_parameters_match_the_model_card():
    # one MoE layer (MLA attention, 256 routed + 1 shared expert of 3 x 7168 x 2048, router), M_k 2h x h, 3 norms
    total, routed = DSV3.mtp_module_params()
    _, moe_layer, _ = DSV3.layer_params()
    assert total == moe_layer + 2 * 7168 * 7168 + 3 * 7168
    assert routed == 256 * 3 * 7168 * 2048
    # the weight README's 11.5B unique MTP parameters; 14B in the checkpoint with its copies of embedding and head
    assert total == pytest.approx(11.5e9, rel=0.02)
    assert total + 2 * 129280 * 7168 == pytest.approx(14e9, rel=0.05)


def test_mtp_flops_hand_derived():
    on, off = _step(DSV3), _step(DSV3, mtp_training=False)
    tokens = 64 * 4096
    attn = attention_core_flops_per_token(4096.0, 128, 192, 128)
    per_token_fwd = 2.0 * DSV3.mtp_matmul_params() + attn + 2.0 * 7168 * 129280
    assert float(on.model_flops - off.model_flops) == pytest.approx(3.0 * tokens * per_token_fwd)
    # the module multiplies one MoE layer's active weights (8 routed + 1 shared expert, attention, router) and M_k
    _, _, moe_active = DSV3.layer_params()
    assert DSV3.mtp_matmul_params() == moe_active - 2 * 7168 + 2 * 7168 * 7168
    assert float(on.time_total) > float(off.time_total)


def test_mtp_memory_on_the_one_stage():
    on, off = _step(DSV3), _step(DSV3, mtp_training=False)
    total, routed = DSV3.mtp_module_params()
    # ZeRO-0, TP 1, EP 64, BF16 weights: the module's dense part whole, its routed experts over the 64 EP ranks
    assert float(on.memory.weights - off.memory.weights) == pytest.approx(((total - routed) + routed / 64) * 2.0)
    # one micro-batch of 61 + 1 layers' activations against 61
    assert float(on.pieces.act_mb_bytes) == float(off.pieces.act_mb_bytes)
    assert float(on.memory.activations / off.memory.activations) == pytest.approx(62 / 61)


def test_mtp_on_the_last_pipeline_stage_only():
    # PP 16, one micro-batch in flight: DeepSeek's layout (1 layer on the last stage) keeps the 4-layer stages the
    # largest by parameters; the last stage, which peaks at the loss, holds its layer's and the MTP block's
    # activations and one more saved fp32 log-softmax (b·s·V x 4 B)
    kw = dict(gpus=1024, pp=16, last_stage_layers=1)
    on, off = _step(DSV3, **kw), _step(DSV3, **kw, mtp_training=False)
    assert float(on.memory.weights) == float(off.memory.weights)
    assert float(on.memory.activations / off.memory.activations) == pytest.approx(2.0)
    assert float(on.memory.transient - off.memory.transient) == pytest.approx(4096 * 129280 * 4.0)
    # the even split leaves the same 1 layer to the last stage (61 = 15 x 4 + 1, memory.stage_layer_counts)
    assert float(_step(DSV3, gpus=1024, pp=16).memory_total) == float(on.memory_total)
    # 4 layers on the last stage too (1 on the first): its 4 layers, head and MTP module are the most
    four = dict(gpus=1024, pp=16, first_stage_layers=1, last_stage_layers=4)
    assert float(_step(DSV3, **four).memory.weights) > float(_step(DSV3, **four, mtp_training=False).memory.weights)


def test_no_mtp_no_change():
    llama = model_presets()["llama-3-8b"]
    a, b = _step(llama, ep=1, gpus=8), _step(llama, ep=1, gpus=8, mtp_training=False)
    assert float(a.time_total) == float(b.time_total) and float(a.memory_total) == float(b.memory_total)
    # a dense model given an MTP module: a dense block, no EP traffic added
    dense_mtp = dataclasses.replace(llama, mtp_depth=1)
    c = _step(dense_mtp, ep=1, gpus=8)
    assert float(c.model_flops) > float(a.model_flops) and float(c.pieces.ep_mb_s) == 0.0


def test_cli_no_mtp_trains_without_the_module(capsys):
    import json

    from trinity_desktop.cli import run_cli
    argv = ["calc", "train", "--model", "deepseek-v3", "--hardware", "h800-sxm", "--gpus", "2048", "--tp", "1",
            "--pp", "16", "--ep", "64", "--global-batch", "15360", "--seq-len", "4096", "--json"]
    assert run_cli(argv) == 0
    with_mtp = json.loads(capsys.readouterr().out)
    assert run_cli([*argv, "--no-mtp"]) == 0
    without = json.loads(capsys.readouterr().out)
    assert without["time_per_step_s"]["total"] < with_mtp["time_per_step_s"]["total"]


def test_megatron_bridge_deepseek_v3_rows_train_mtp_as_they_ran():
    """The recipe trains one MTP module (megatron-bridge-deepseek-v3-recipe: mtp_num_layers 1); the 25.11 GB300 and
    GB200 rows are labelled w/o MTP in the table."""
    from trinity_desktop.model.search.published_runs import published_runs
    rows = [r for r in published_runs() if r.name.startswith("Megatron-Bridge") and "DeepSeekV3" in r.name]
    assert len(rows) == 9
    for r in rows:
        assert r.scenario.mtp_training == (not r.name.startswith("Megatron-Bridge 25.11")), r.name
        assert train_inputs(r.scenario).mtp_depth == (0 if r.name.startswith("Megatron-Bridge 25.11") else 1)
    gb300 = next(r for r in rows if r.name == "Megatron-Bridge 26.02 DeepSeekV3 on 256 GB300, MXFP8")
    assert gb300.scenario.virtual_stages == 8  # the table's VP 8
