"""Inference TP all-reduces (model/formulas/comms.py `tp_allreduce_time`): a small NCCL all-reduce costs its
measured latency, not the ring's 2(n-1) alphas alone (Triton-distributed issue #57: 19.19 us at 128 B on 8 H100)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.formulas import comms
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets

HW, MODELS = hardware_presets(), model_presets()
NVLINK_BW = 300e9


def test_eight_ranks_and_a_tiny_buffer_take_the_measured_latency():
    """Triton-distributed #57, NCCL all-reduce on 8 H100 in one node: 128 B in 19.19 us."""
    t = comms.tp_allreduce_time(8, 128.0, NVLINK_BW, 1e-6)
    assert t == pytest.approx(19.19e-6, rel=1e-3)
    # the ring's own part is 2 x 7 x 1 us = 14 us: the call adds the 5.19 us it leaves unexplained
    assert comms.allreduce_call_overhead(1e-6) == pytest.approx(5.19e-6, rel=1e-9)


def test_one_rank_sends_nothing_and_pays_nothing():
    assert comms.tp_allreduce_time(1, 1e6, NVLINK_BW, 1e-6) == 0.0


def test_scale_out_alpha_already_exceeds_the_measured_latency():
    """An 8 us InfiniBand alpha makes the ring's 2 x 7 alphas 112 us > 19.19 us: no extra call cost."""
    assert comms.allreduce_call_overhead(8e-6) == 0.0
    assert comms.tp_allreduce_time(8, 128.0, 25e9, 8e-6) == pytest.approx(
        comms.allreduce_time(8, 128.0, 25e9, 8e-6), rel=1e-12)


def test_call_overhead_broadcasts_and_never_goes_negative():
    alpha = np.array([0.0, 1e-6, 19.19e-6 / 14.0, 5e-6])
    got = comms.allreduce_call_overhead(alpha)
    assert got == pytest.approx([19.19e-6, 5.19e-6, 0.0, 0.0], abs=1e-15)
    assert np.all(got >= 0.0)


def test_small_buffers_cost_the_same_at_tp8_whatever_alpha_below_the_measured_one():
    """Invariant at the measurement's own size: at TP 8 a decode all-reduce costs 19.19 us plus bytes, so a GPT-20B
    decode step on 8 A100 does not depend on how the assumed alpha splits that latency (1 us or 1.37 us)."""
    ft_20b = replace(MODELS["gpt3-175b"], layers=44, hidden=6144, heads=48, kv_heads=48, head_dim=128,
                     ffn_hidden=24576, vocab=51200, name="GPT-20B (FasterTransformer)")
    a100 = HW["a100-80gb-sxm"]
    runs = [evaluate(Scenario(hardware=replace(a100, scaleup_latency_s=alpha), model=ft_20b, kind="decode", gpus=8,
                              batch=1, prompt_len=200, gen_len=200, weight_dtype="fp16", kv_dtype="fp16"))
            for alpha in (1e-6, 19.19e-6 / 14.0)]
    t = [r.infer["time_per_output_token_s"] for r in runs]
    assert t[0] == pytest.approx(t[1], rel=1e-9)


def test_the_latency_cites_its_measurement():
    from trinity_desktop.model.inputs.presets import references
    assert comms.NCCL_SMALL_ALLREDUCE_SOURCE in references()


# ------------------------------------------------------------- Hopper NVLink 4: the measured size excess (#22)
def _hopper_allreduce(n, nbytes, hw_key="h100-sxm", intra=True):
    from trinity_desktop.model.formulas.allreduce_latency import inference_allreduce_time

    hw = HW[hw_key]
    return float(inference_allreduce_time(n, nbytes, hw.scaleup_bw * 0.8, hw, 8, intra))


@pytest.mark.parametrize("nbytes, measured_us", [(128, 19.19), (1024, 19.50), (16384, 20.71), (32768, 22.65),
                                                 (131072, 23.71), (524288, 25.24), (1048576, 32.42)])
def test_eight_h100_ranks_take_triton_distributed_57s_measured_time_at_every_size(nbytes, measured_us):
    """Triton-distributed #57, NCCL column, 8 x H100 in one node: every row, at the default network efficiency."""
    assert _hopper_allreduce(8, nbytes) == pytest.approx(measured_us * 1e-6, rel=1e-3)


def test_the_1_mb_excess_is_held_above_the_last_row_and_shared_by_h200():
    """1 MB: 32.42 us against the alpha-beta line's 19.19 + 2 x 7/8 x 1 MiB / 360 GB/s = 24.29 us, an excess of
    8.13 us that larger messages keep; the H200's NVLink 4 fabric gets the same."""
    line = 19.19e-6 + 2 * 7 / 8 * 8 * 2 ** 20 / 360e9
    assert _hopper_allreduce(8, 8 * 2 ** 20) == pytest.approx(line + 8.1328e-6, rel=1e-3)
    assert _hopper_allreduce(8, 8 * 2 ** 20, "h200-sxm") == pytest.approx(_hopper_allreduce(8, 8 * 2 ** 20), rel=1e-12)


def test_the_excess_is_intra_node_and_hopper_only():
    """Across nodes, and on other hardware (H800's 200 GB/s NVLink, B200), the former formula is unchanged."""
    from trinity_desktop.model.formulas.allreduce_latency import hopper_size_excess

    for key in ("h800-sxm", "b200"):
        hw = HW[key]
        assert _hopper_allreduce(8, 2 ** 20, key) == pytest.approx(
            comms.tp_allreduce_time(8, 2 ** 20, hw.scaleup_bw * 0.8, hw.scaleup_latency_s), rel=1e-12)
    hw = HW["h100-sxm"]
    assert _hopper_allreduce(16, 2 ** 20, intra=False) == pytest.approx(
        comms.tp_allreduce_time(16, 2 ** 20, hw.scaleup_bw * 0.8, hw.scaleout_latency_s), rel=1e-12)
    assert hopper_size_excess(64.0, 360e9) == 0.0
