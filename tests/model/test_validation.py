"""The published runs file: complete, sourced, and its conversions consistent with the sources' own arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop.model import evaluate, presets
from trinity_desktop.model.validation import (
    calibrated_ranges,
    megatron_recompute_flops,
    predicted_step_times,
    published_runs,
)


def test_at_least_twelve_sourced_runs_with_full_layouts():
    runs = published_runs()
    refs = presets.references()
    assert len(runs) >= 12
    assert len({r.name for r in runs}) == len(runs)
    for r in runs:
        assert r.source in refs, r.name
        assert r.where and r.measured > 0
        evaluate(r.scenario)  # a valid layout the model computes


def test_mt_nlg_iteration_time_and_tflops_agree_through_megatrons_flop_count():
    """Smith et al. 2022: 60.1 s per iteration on 2240 A100s is 126 TFLOP/s per GPU (batch 1920, s 2048)."""
    f = megatron_recompute_flops(1920, 2048, 105, 20480, 51200)
    assert f / (2240 * 60.1) == pytest.approx(126e12, rel=0.005)


def test_narayanan_one_trillion_converts_to_a_step_time():
    """Table 1: 1008B on 3072 GPUs at 163 TFLOP/s per GPU, batch 3072 -> 96 B s l h^2 (...) / (3072 x 163e12)."""
    run = next(r for r in published_runs() if "1008.0B" in r.name)
    assert run.measured_step_time_s == pytest.approx(102.6, rel=0.002)


def test_korthikanti_table5_iteration_times_match_their_mfu():
    """Table 5's 1T 'present work' row: 71.49 s is 56.3% MFU by Eq. 7 (72 B L s h^2 (1 + s/6h + v/12hL))."""
    run = next(r for r in published_runs() if r.name.startswith("Megatron 1T, selective"))
    sc = run.scenario
    b, s, L, h, v = sc.global_batch, sc.seq_len, sc.model.layers, sc.model.hidden, sc.model.vocab
    model_flops = 72 * b * L * s * h ** 2 * (1 + s / (6 * h) + v / (12 * h * L))
    assert model_flops / (run.measured_step_time_s * sc.gpus * 312e12) == pytest.approx(0.563, abs=0.002)


def test_predicted_times_fall_with_efficiency_and_ranges_stay_ordered():
    runs = published_runs()[:3]
    t = predicted_step_times(runs, np.array([[0.4, 0.8], [0.6, 0.8], [0.6, 0.9]]), 0.8)
    assert np.all(t[:, 0] > t[:, 1]) and np.all(t[:, 1] >= t[:, 2])
    ranges = calibrated_ranges(np.array([0.7, 0.4]), np.array([-0.2, 0.0, 0.1, 0.3]))
    for low, likely, high in ranges.values():
        assert 0.01 <= low <= likely <= high <= 1.0
