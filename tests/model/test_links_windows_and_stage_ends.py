"""ZeRO-3 step growth, refused layouts without a link, context past max_seq, the achievable ridge, sliding
windows (Mistral, Gemma-2), and a request's time where its stages end."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.views.stages import stages

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
    from trinity_desktop.model.views.stages import training_pieces

    p = training_pieces(sc)
    assert 2 * p.param_gather_s > p.compute_mb_s
    assert p.grad_overlap_s == 0.0
    r = evaluate(sc)
    expected = 2 * p.param_gather_s + p.grad_sync_s + p.optimizer_s + p.tp_mb_s + p.cp_mb_s + p.ep_mb_s + p.pp_mb_s
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
    assert grid.valid.tolist() == [True, False, False]
    inf = Scenario(hardware=_no_scale_out(), model=MODELS["llama-3-70b"], kind="decode", gpus=8)
    assert evaluate_grid(inf, tp=np.array([4, 8, 16, 32])).valid.tolist() == [True, True, False, False]


# --- item 3: contexts past the model's limit carry a note --------------------------------------------------

@pytest.mark.parametrize("model, kind, tokens, limit", [("llama-3-8b", "decode", 1 << 20, "8,192"),
                                                        ("gpt3-175b", "train", 65536, "2,048")])
def test_context_past_max_seq_is_noted(model, kind, tokens, limit):
    fields = dict(seq_len=tokens, global_batch=8) if kind == "train" else dict(prompt_len=tokens - 512, gen_len=512)
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS[model], kind=kind, gpus=8, tp=8 if kind == "train" else 1,
                  **fields)
    notes = [n for n in evaluate(sc).notes if "Beyond the model's limit" in n]
    assert len(notes) == 1 and limit in notes[0] and f"{tokens:,}" in notes[0]
    inside = sc.replace(**({"seq_len": 1024} if kind == "train" else {"prompt_len": 1000, "gen_len": 24}))
    assert not any("Beyond the model's limit" in n for n in evaluate(inside).notes)


# --- item 9: the achievable ridge is where the model's decode time turns ---------------------------------

def test_decode_gemms_turn_compute_bound_at_the_achievable_ridge_batch():
    from trinity_desktop.model.views.roofline import decode_sweep

    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=1,
                  prompt_len=512, gen_len=64)
    s = decode_sweep(sc)
    assert s.ridge_batch_achievable == pytest.approx(s.ridge_batch * 0.5 / 0.8, rel=1e-9)
    assert 180 < s.ridge_batch_achievable < 190
    below, above = (evaluate(sc.replace(batch=b)) for b in (int(s.ridge_batch_achievable) - 5,
                                                            int(s.ridge_batch_achievable) + 5))
    peak_eff = HW["h100-sxm"].peak("bf16") * 0.5

    def gemm_is_compute(r):
        flops = 2 * MODELS["llama-3-8b"].matmul_params_active_per_layer() * 32 + 2 * 4096 * 128256
        return r.time["gemms"] == pytest.approx(flops * r.scenario.batch / peak_eff, rel=1e-6)

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


# --- item 2: the architecture's own sliding window ----------------------------------------------------------

def _mistral(**changes):
    import dataclasses

    return dataclasses.replace(MODELS["mistral-7b"], **changes)


def _decode(model, prompt_len, gen_len=512, **kw):
    return Scenario(hardware=HW["h100-sxm"], model=model, kind="decode", gpus=1, prompt_len=prompt_len,
                    gen_len=gen_len, **kw)


def test_mistral_keeps_a_rolling_buffer_of_its_window():
    """32k context: 4,096 tokens x 32 layers x 2 x 8 KV heads x 128 x 2 B = 0.537 GB, not 4.29 GB."""
    per_token = 32 * 2 * 8 * 128 * 2
    r = evaluate(_decode(MODELS["mistral-7b"], 32768 - 512))
    assert r.infer["kv_bytes"] == 4096 * per_token == pytest.approx(0.537e9, rel=1e-3)
    assert evaluate(_decode(_mistral(sliding_window=0), 32768 - 512)).infer["kv_bytes"] == 32768 * per_token
    # a model mixing local and global layers keeps the window on its local half only
    half = evaluate(_decode(_mistral(global_layers=16), 32768 - 512))
    assert half.infer["kv_bytes"] == pytest.approx((16 * 4096 + 16 * 32768) * per_token / 32, rel=1e-12)
    # within the window nothing changes
    assert evaluate(_decode(MODELS["mistral-7b"], 2000)).infer["kv_bytes"] == 2512 * per_token


def test_decode_reads_and_attention_flops_stop_growing_past_the_window():
    from trinity_desktop.model import evaluate_grid

    per_token = 32 * 2 * 8 * 128 * 2
    short, long = (evaluate_grid(_decode(MODELS["mistral-7b"], p)) for p in (8192, 65536))
    assert float(short.decode_kv_read_bytes) == float(long.decode_kv_read_bytes) == 4096 * per_token
    assert float(short.decode_attention_flops) == float(long.decode_attention_flops)
    assert float(long.time_per_output_token_s) == pytest.approx(float(short.time_per_output_token_s))


def test_prefill_queries_attend_to_at_most_the_window():
    """Mean keys per prompt query: s/2 without a window; W - W²/(2s) with one (s > W)."""
    from trinity_desktop.model import evaluate_grid

    s, W = 32768, 4096
    win, full = (evaluate_grid(_decode(m, s)).prefill_flops for m in (MODELS["mistral-7b"], _mistral(sliding_window=0)))
    per_key = 32 * s * (2 * 32 * 128 + 2 * 32 * 128)  # layers x tokens x attention FLOPs per key
    assert float(full - win) == pytest.approx(per_key * (s / 2 - (W - W * W / (2 * s))), rel=1e-9)


def test_training_attention_flops_follow_the_window():
    def flops(model, s):
        sc = Scenario(hardware=HW["h100-sxm"], model=model, kind="train", gpus=8, global_batch=8, seq_len=s)
        return evaluate(sc).train["model_flops"]

    assert flops(MODELS["mistral-7b"], 4096) == flops(_mistral(sliding_window=0), 4096)
    assert flops(MODELS["mistral-7b"], 32768) < 0.6 * flops(_mistral(sliding_window=0), 32768)


# --- items 4 and 19: one request time, where the stages end ----------------------------------------------

@pytest.mark.parametrize("model, hw, gpus, gpn, sessions, context", [
    ("llama-3.1-70b", "h100-sxm", 8, 8, 2, 1_048_576),   # spills: stages 1218.9 s, request_s was 848.8 s
    ("llama-3-70b", "tpu-v5p", 8, 4, 32, 131_584),        # spills: 6.8x apart before
])
def test_spilled_request_time_is_where_its_stages_end(model, hw, gpus, gpn, sessions, context):
    sc = Scenario(hardware=HW[hw], model=MODELS[model], kind="decode", gpus=gpus, gpus_per_node=gpn, batch=sessions,
                  prompt_len=context - 512, gen_len=512)
    r = evaluate(sc)
    assert r.infer["request_s"] == pytest.approx(_end(sc, r), rel=1e-12)
    assert r.infer["request_s"] > 1.3 * (r.infer["prefill_s"] + 512 * r.infer["time_per_output_token_s"])
    assert any("beyond HBM" in n for n in r.notes)


@pytest.mark.parametrize("policy", ["window", "streaming", "h2o", "razor"])
def test_policy_request_time_is_where_its_stages_end(policy):
    sc = Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1, batch=8,
                  prompt_len=2000, gen_len=8000, kv_policy=policy, kv_window=1024)
    r = evaluate(sc)
    assert r.infer["request_s"] == pytest.approx(_end(sc, r), rel=1e-12)


@pytest.mark.parametrize("policy", ["full", "window", "streaming", "h2o", "razor"])
def test_kv_matrix_agrees_with_the_models_window(policy):
    from trinity_desktop.model.views.kv_matrix import kv_matrix

    sc = _decode(MODELS["mistral-7b"], 16000, gen_len=384, kv_policy=policy, kv_window=8192)
    k, r = kv_matrix(sc), evaluate(sc)
    assert k["kept_fraction"] == pytest.approx(k["kept_fraction_model"], rel=1e-3)
    assert k["bytes_kept"] == pytest.approx(r.infer["kv_bytes"], rel=1e-3)
    assert not k["grid"][:, : 16384 - 4096].any()  # nothing older than the rolling buffer
