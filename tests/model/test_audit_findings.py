"""Regression tests for the model findings of the correctness audit (issue 16, items 1-11, 18, 19)."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.presets import hardware_presets, model_presets
from trinity_desktop.model.stages import stages

HW = hardware_presets()
MODELS = model_presets()


def _end(sc: Scenario, r=None) -> float:
    return max(st.end_s for st in stages(sc, r))


# --- item 18: ZeRO-3, a longer sequence never shortens the step ------------------------------------------

@pytest.mark.parametrize("hw", ["h100-sxm", "a100-80gb-sxm", "tpu-v5p"])
def test_zero3_step_grows_with_sequence_length(hw):
    base = Scenario(hardware=HW[hw], model=MODELS["gpt3-175b"], kind="train", gpus=32, zero=3, micro_batch=1,
                    global_batch=32, seq_len=1024, gpus_per_node=HW[hw].gpus_per_node_default)
    times = [evaluate(base.replace(seq_len=s)).time_total for s in (256, 512, 1024, 2048, 4096, 8192)]
    assert all(b >= a * (1 - 1e-12) for a, b in zip(times, times[1:], strict=False)), times


def test_zero3_gradient_sync_does_not_share_the_backward_with_the_gathers():
    """When the parameter gathers fill the DP link behind all of the compute, the gradient sync is fully
    exposed: step = 2·t_gather + t_grad + optimizer (pp = 1, m = 1)."""
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["gpt3-175b"], kind="train", gpus=32, zero=3,
                  micro_batch=1, global_batch=32, seq_len=1024)
    from trinity_desktop.model.stages import training_pieces

    p = training_pieces(sc)
    assert 2 * p["t_gather"] > p["t_c"]
    assert p["grad_overlap"] == 0.0
    r = evaluate(sc)
    expected = 2 * p["t_gather"] + p["t_grad"] + p["t_opt"] + p["t_tp"] + p["t_cp"] + p["t_ep"] + p["t_pp"]
    assert r.time_total == pytest.approx(expected, rel=1e-9)
    assert _end(sc, r) == pytest.approx(r.time_total, rel=1e-9)


# --- item 1: no free link ----------------------------------------------------------------------------------

def _no_scale_out(hw_key="h100-sxm"):
    import dataclasses

    return dataclasses.replace(HW[hw_key], key="no-scale-out", scaleout_bw=0.0)


@pytest.mark.parametrize("kind, gpus, tp", [("train", 64, 8), ("decode", 16, 16)])
def test_layout_across_nodes_without_scale_out_is_refused(kind, gpus, tp):
    from trinity_desktop.model import ValidationError

    with pytest.raises(ValidationError, match="scale-out") as err:
        Scenario(hardware=_no_scale_out(), model=MODELS["llama-3-70b"], kind=kind, gpus=gpus, tp=tp, global_batch=64)
    assert err.value.field == "gpus"
    # one node of it still runs, over the scale-up link
    one_node = Scenario(hardware=_no_scale_out(), model=MODELS["llama-3-70b"], kind=kind, gpus=8, tp=8, global_batch=64)
    assert evaluate(one_node).bytes_by_link["scale-out"] == 0.0


def test_grid_marks_layouts_without_a_link_invalid():
    from trinity_desktop.model import evaluate_grid

    sc = Scenario(hardware=_no_scale_out(), model=MODELS["llama-3-70b"], kind="train", gpus=8, tp=8, global_batch=64)
    grid = evaluate_grid(sc, gpus=np.array([8, 16, 64]), global_batch=np.array([64, 64, 64]))
    assert grid["valid"].tolist() == [True, False, False]
    inf = Scenario(hardware=_no_scale_out(), model=MODELS["llama-3-70b"], kind="decode", gpus=8)
    assert evaluate_grid(inf, tp=np.array([4, 8, 16, 32]))["valid"].tolist() == [True, True, False, False]


# --- item 3: contexts past the model's limit carry a note --------------------------------------------------

@pytest.mark.parametrize("model, kind, tokens, limit", [("llama-3-8b", "decode", 1 << 20, "8,192"),
                                                        ("gpt3-175b", "train", 65536, "2,048")])
def test_context_past_max_seq_is_noted(model, kind, tokens, limit):
    fields = dict(seq_len=tokens, global_batch=8) if kind == "train" else dict(prompt_len=tokens - 512, gen_len=512)
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS[model], kind=kind, gpus=8, tp=8 if kind == "train" else 1,
                  **fields)
    notes = [n for n in evaluate(sc).notes if "max_seq" in n]
    assert len(notes) == 1 and limit in notes[0] and f"{tokens:,}" in notes[0]
    inside = sc.replace(**({"seq_len": 1024} if kind == "train" else {"prompt_len": 1000, "gen_len": 24}))
    assert not any("max_seq" in n for n in evaluate(inside).notes)


# --- item 9: the achievable ridge is where the model's decode time turns ---------------------------------

def test_decode_gemms_turn_compute_bound_at_the_achievable_ridge_batch():
    from trinity_desktop.model.roofline import decode_sweep

    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=1,
                  prompt_len=512, gen_len=64)
    s = decode_sweep(sc)
    assert s["ridge_batch_achievable"] == pytest.approx(s["ridge_batch"] * 0.5 / 0.8, rel=1e-9)
    assert 180 < s["ridge_batch_achievable"] < 190
    below, above = (evaluate(sc.replace(batch=b)) for b in (int(s["ridge_batch_achievable"]) - 5,
                                                            int(s["ridge_batch_achievable"]) + 5))
    peak_eff = HW["h100-sxm"].peak("bf16") * 0.5

    def gemm_is_compute(r):
        flops = 2 * MODELS["llama-3-8b"].matmul_params_active_per_layer() * 32 + 2 * 4096 * 128256
        return r.time["GEMMs (weights)"] == pytest.approx(flops * r.scenario.batch / peak_eff, rel=1e-6)

    assert not gemm_is_compute(below) and gemm_is_compute(above)


# --- item 5: a degenerate number is refused as input, never an ArithmeticError -----------------------------

def test_degenerate_hardware_number_is_a_validation_error():
    import dataclasses

    from trinity_desktop.model import ValidationError

    try:
        hw = dataclasses.replace(HW["h100-sxm"], key="tiny", hbm_bw=1e-300)
    except ValidationError:
        return  # refused at construction (the physical-range table)
    sc = Scenario(hardware=hw, model=MODELS["llama-3-8b"], kind="decode", gpus=1)
    with pytest.raises(ValidationError, match="tiny"):
        evaluate(sc)
