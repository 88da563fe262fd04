"""Issue 22, "validation that means something": the grown set of published runs (timed and peak memory) loads and
converts as its sources state, and the held-out errors (leave one run, hardware family or source out) are what a
hand-made case says they must be."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop.model import evaluate
from trinity_desktop.model.formulas.memory import CUDA_CONTEXT_BYTES
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.search.published_runs import (
    GIB,
    HARDWARE_FAMILY,
    published_memory_runs,
    published_runs,
)
from trinity_desktop.model.search.validation import memory_rows
from trinity_desktop.model.search.validation_fit import fit_and_hold_out, groups_by, predicted_times


def _run(prefix: str, runs=None):
    return next(r for r in (runs or published_runs()) if r.name.startswith(prefix))


def test_at_least_80_timed_runs_six_of_them_moe_over_four_families():
    runs = published_runs()
    assert len(runs) >= 80
    assert sum(r.scenario.model.experts > 1 for r in runs) >= 6
    assert {r.family for r in runs} >= {"Ampere", "Hopper", "Blackwell", "Apple silicon"}
    assert all(r.scenario.hardware.key in HARDWARE_FAMILY for r in runs)


def test_memory_runs_are_sourced_and_evaluate():
    runs = published_memory_runs()
    refs = presets.references()
    assert len(runs) >= 16
    for r in runs:
        assert r.kind == "memory" and r.quantity == "memory_bytes" and r.source in refs and r.where
        evaluate(r.scenario)
    rows = memory_rows(runs[:2])
    # torchtitan Table 1, FSDP row: 82.4 GiB, the caching allocator's peak, which leaves out the CUDA context
    assert rows[0]["measured"] == pytest.approx(82.4 * GIB + CUDA_CONTEXT_BYTES)
    assert rows[0]["predicted_gib"] == pytest.approx(rows[0]["predicted"] / GIB)


def test_tokens_per_gpu_is_the_global_batch_over_gpus():
    """torchtitan, Llama 3 70B on 64 A100, batch 1, full AC: 331 WPS -> 64 x 8192 / (331 x 64) s per step."""
    run = _run("torchtitan Llama 3 70B, full AC on 64 A100")
    assert run.measured_value == pytest.approx(64 * 8192 / (331 * 64))


def test_llama_cpp_rates_are_a_prefill_and_a_decode_step():
    """Discussion #4167, M4 Max Q4_0: pp512 885.68 t/s -> 512 / 885.68 s of prefill; tg128 83.06 t/s -> 1 / 83.06 s
    per token."""
    pp = _run("llama.cpp Llama 2 7B Q4_0, pp512")
    tg = _run("llama.cpp Llama 2 7B Q4_0, tg128")
    assert (pp.quantity, tg.quantity) == ("ttft_s", "time_per_output_token_s")
    assert pp.measured_value == pytest.approx(512 / 885.68)
    assert tg.measured_value == pytest.approx(1 / 83.06)
    assert tg.scenario.weight_dtype == "q4_0"


def test_groups_by_keeps_the_order_of_first_appearance():
    assert groups_by(["b", "a", "b", "c", "a"]) == [[0, 2], [1, 4], [3]]


def test_leaving_a_family_out_predicts_it_with_the_other_familys_fit():
    """Two compute-bound A100 training runs made at compute efficiency 0.5 and two H100 runs made at 0.6: the
    family held out is predicted with the other family's efficiency exactly (its fit is exact), so its error is
    t(other efficiency) / t(own efficiency) - 1 run by run; leaving a whole source out is the same partition here."""
    a100 = [r for r in published_runs() if r.source == "pipedream-1f1b"][:2]
    h100 = [r for r in published_runs() if r.source == "torchtitan-h100-2024-12"][:2]
    runs = a100 + h100
    truth = np.concatenate([predicted_times(a100, [[0.5, 0.8, 0.8]])[:, 0], predicted_times(h100, [[0.6, 0.8, 0.8]])[:, 0]])
    fake = [r.__class__(**{**r.__dict__, "metric": "step_time_s", "measured": float(t)})
            for r, t in zip(runs, truth, strict=True)]
    free = (True, False, False)
    groups = groups_by([r.family for r in fake])
    assert groups == [[0, 1], [2, 3]]
    done = fit_and_hold_out(fake, (0.55, 0.8, 0.8), [free], {"family": groups, "source": groups_by([r.source for r in fake])})
    errors = done.held_out[free]["family"]
    np.testing.assert_allclose(done.held_out[free]["source"], errors)  # one source per family here
    expected = np.concatenate([predicted_times(a100, [[0.6, 0.8, 0.8]])[:, 0] / truth[:2],
                               predicted_times(h100, [[0.5, 0.8, 0.8]])[:, 0] / truth[2:]]) - 1.0
    np.testing.assert_allclose(errors, expected, rtol=2e-3)
    assert np.all(errors[:2] < 0) and np.all(errors[2:] > 0)  # A100 predicted too fast, H100 too slow
    # fitted to all four, the one efficiency lies between the two families' and misses both
    assert 0.5 < done.fits[free][0] < 0.6 and np.all(np.abs(done.in_sample[free]) > 0.01)
