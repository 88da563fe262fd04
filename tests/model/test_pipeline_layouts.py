"""Layouts that could not be stated before #22: uneven first / last pipeline stages (Megatron-LM's
--decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers, Llama 3 §3.3.2) and virtual stages that
need not divide the layers (model/inputs/layout_rules.py, model/formulas/memory.py)."""

import numpy as np
import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas import memory as mem
from trinity_desktop.model.inputs.layout_rules import interleaving_ok, uneven_stages_ok
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets

M, H = model_presets(), hardware_presets()


def dsv3(**changes):
    base = dict(hardware=H["h800-sxm"], model=M["deepseek-v3"], kind="train", gpus=2048, tp=1, pp=16, ep=64,
                zero=1, micro_batch=1, global_batch=15360, seq_len=4096)
    return Scenario(**{**base, **changes})


def test_stage_layer_counts():
    # DeepSeek-V3: 61 layers on 16 stages, 3 on the first and 2 on the last: 14 stages x 4 in between
    assert [float(x) for x in mem.stage_layer_counts(61, 16, 3, 2)] == [3.0, 4.0, 2.0]
    assert float(mem.layers_per_stage(61, 16, 3, 2)) == 4.0
    # even split: ceil(61 / 16) = 4 on the first 15, the 1 they leave on the last (the compute's count too)
    assert [float(x) for x in mem.stage_layer_counts(61, 16)] == [4.0, 4.0, 1.0]
    assert float(mem.layers_per_stage(61, 16)) == 4.0
    # only the first set: the other 15 stages share 58 -> ceil 4 (Llama 3: 126 layers, PP16, one fewer each end)
    assert [float(x) for x in mem.stage_layer_counts(126, 16, 7, 7)] == [7.0, 8.0, 7.0]
    assert float(mem.layers_per_stage(80, 1)) == 80.0


def test_stored_loads_follow_1f1b_per_stage():
    """1F1B: stage r holds min(p - r, m) micro-batches; with fewer layers on the first stage the second one holds
    the most: first 3 x 16 = 48 < second 4 x 15 = 60 layer-micro-batches; the last holds 2 x 1."""
    peak, last = mem.stored_layer_loads(61, 16, 120, 1, 3, 2)
    assert float(peak) == 60.0 and float(last) == 2.0
    peak, last = mem.stored_layer_loads(64, 16, 120)
    assert float(peak) == 4 * 16 and float(last) == 4.0
    # interleaved: stage r holds (2(p-1-r) + (v-1)p + 1) / v stage-loads; the first one p + (p-1)/v
    assert float(mem.in_flight_at_stage(4, 64, 5, 0)) == pytest.approx(4 + 3 / 5)
    assert float(mem.in_flight_at_stage(4, 64, 5, 3)) == pytest.approx((16 + 1) / 5)


def test_deepseek_v3_61_layers_can_be_pipelined_with_uneven_stages():
    sc = dsv3(first_stage_layers=3, last_stage_layers=2)
    r = evaluate(sc)
    assert r.train["dp"] == 128
    even = evaluate(dsv3())
    # the second stage (4 layers x 15 micro-batches) now holds the most: less than the even first stage's 4 x 16
    assert r.memory["activations"] == pytest.approx(even.memory["activations"] * 60 / 64, rel=1e-12)


@pytest.mark.parametrize("first,last,needle", [
    (40, 40, "first_stage_layers"),   # 80 of 61 layers
    (3, 58, "first_stage_layers"),    # nothing left for the 14 stages between
])
def test_impossible_uneven_stages_are_refused_with_the_field(first, last, needle):
    with pytest.raises(ValidationError, match=needle) as exc:
        dsv3(first_stage_layers=first, last_stage_layers=last)
    assert "\n" not in str(exc.value)


def test_uneven_stages_need_a_pipeline():
    with pytest.raises(ValidationError, match="first_stage_layers"):
        default_scenario().replace(pp=1, gpus=8, global_batch=8, first_stage_layers=10)
    assert bool(uneven_stages_ok(80, 2, 30, 50))      # PP 2: first + last = L
    assert not bool(uneven_stages_ok(80, 2, 30, 40))
    assert not bool(uneven_stages_ok(80, 4, 2, 2, virtual_stages=4))  # a set stage holds its v chunks


def test_virtual_stages_need_not_divide_the_layers():
    """--virtual-stages 4 on Llama-3-70B's 80 layers with PP 6 was refused (24 chunks divide neither 80 nor 82)."""
    sc = default_scenario().replace(pp=6, gpus=8 * 6 * 4, virtual_stages=4, global_batch=6 * 4 * 4)
    assert sc.virtual_stages == 4 and evaluate(sc).time_total > 0
    assert bool(interleaving_ok(80, 6, 4, 24))
    assert bool(interleaving_ok(126, 16, 8, 32))      # Llama 3: 128 slots for 126 layers + embedding + head
    assert not bool(interleaving_ok(80, 8, 11, 32))   # 88 chunks > 82
    rules = interleaving_ok(80, np.array([4, 8, 8]), np.array([4, 10, 11]), 32)
    assert rules.tolist() == [True, True, False]


def test_cli_states_uneven_stages(capsys):
    import json

    from trinity_desktop.cli import run_cli

    assert run_cli(["calc", "train", "--model", "deepseek-v3", "--hardware", "h800-sxm", "--gpus", "2048", "--tp", "1",
              "--pp", "16", "--ep", "64", "--global-batch", "15360", "--seq-len", "4096", "--first-stage-layers",
              "3", "--last-stage-layers", "2", "--activation-recipe", "deepseek-v3", "--optimizer", "adamw-bf16",
              "--precision", "fp8", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["fits"] is True
