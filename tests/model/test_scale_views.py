"""Memory wall, batch-size law, test-time compute and recompute views (issue 25), against hand-derived values
and the cited figures."""

import math

import numpy as np
import pytest

from trinity_desktop.model.formulas import batch_law as bl
from trinity_desktop.model.inputs.presets import hardware_presets, references
from trinity_desktop.model.inputs.scale_facts import (
    accuracy_rows,
    batch_law,
    growth_rates,
    published_batches,
    release_years,
    retrieval_points,
)
from trinity_desktop.model.views import memory_wall as mw
from trinity_desktop.model.views import test_time as tt
from trinity_desktop.model.views.recompute import recompute_effects

H100 = hardware_presets()["h100-sxm"]


def test_every_published_row_cites_a_known_reference():
    refs = references()
    rows = [*release_years().values(), *retrieval_points(), *published_batches(), *accuracy_rows(),
            batch_law(), growth_rates()]
    assert all(r.source in refs for r in rows)
    assert set(release_years()) <= set(hardware_presets())


def test_cited_figures_as_read():
    assert (batch_law().coefficient, batch_law().exponent) == (0.2920, 0.3271)
    g = growth_rates()
    assert (g.peak_flops, g.dram_bandwidth, g.interconnect_bandwidth) == (3.0, 1.6, 1.4)
    v3 = next(b for b in published_batches() if b.model == "DeepSeek-V3")
    assert v3.batch_tokens == 15360 * 4096
    qdrant = {(p.vectors, p.dim): p for p in retrieval_points() if p.engine == "Qdrant"}   # qdrant.tech/benchmarks
    assert (qdrant[(1e6, 1536)].qps, qdrant[(1e6, 1536)].recall, qdrant[(1e6, 1536)].latency_s) == (1238, 0.99, 3.54e-3)
    assert (qdrant[(1e7, 96)].qps, qdrant[(1e7, 96)].recall) == (1608.6, 0.9245)
    vdb = next(p for p in retrieval_points() if p.source == "vectordbbench")   # VectorDBBench case 10 (1536-d 500K)
    assert (vdb.vectors, vdb.dim, vdb.qps, vdb.recall, vdb.latency_s) == (5e5, 1536, 0.8836, 0.8528, 2.523)
    gpt3 = next(b for b in published_batches() if b.model == "GPT-3 175B")   # Brown et al. 2020 Table 2.1
    assert (gpt3.batch_tokens, gpt3.params, gpt3.train_tokens, gpt3.source) == (3.2e6, 175e9, 300e9, "gpt3")
    r1 = {(r.model, r.samples): r.accuracy for r in accuracy_rows()}
    assert r1[("DeepSeek-R1-Distill-Qwen-7B", 1)] == 0.555 and r1[("DeepSeek-R1-Distill-Llama-70B", 64)] == 0.867


def test_fit_growth_recovers_a_known_rate():
    years = np.array([2018.0, 2020.0, 2022.0, 2024.0])
    g = mw.fit_growth(years, 5.0 * 3.0 ** ((years - 2018) / 2))
    assert g.per_2y == pytest.approx(3.0)
    assert g.at(2026) == pytest.approx(5.0 * 81)
    assert mw.fit_growth([2020.0], [1.0]).per_2y == 1.0      # one point: no growth claimed


def test_memory_wall_uses_the_presets_and_its_fit_is_least_squares():
    wall = mw.memory_wall()
    fit = [d for d in wall.devices if d.in_fit]
    assert {d.key for d in fit} == {"a100-80gb-sxm", "h100-sxm", "h200-sxm", "b200", "mi300x", "tpu-v5e", "tpu-v5p",
                                  "gb200-nvl72", "gb300-nvl72", "b300", "h800-sxm", "h20", "mi325x", "tpu-v6e",
                                  "gaudi3", "mi355x"}
    slope = np.polyfit([d.year for d in fit], np.log10([d.values["hbm_bytes"] for d in fit]), 1)[0]
    assert wall.growth["hbm_bytes"].per_2y == pytest.approx(10 ** (2 * slope))
    assert wall.growth["peak_flops"].published_per_2y == 3.0
    h100 = next(d for d in wall.devices if d.key == "h100-sxm")
    assert h100.ridge == pytest.approx(989.4e12 / 3.35e12)
    assert wall.left_out == ("laptop-x86-ddr5", "h100-96gb-500w")  # no cited release year (hardware_years.toml)
    # DeepSeek-V3 weights in bf16: 671B x 2 bytes within 1% (embeddings, MTP excluded)
    v3 = next(m for m in wall.models if m.key == "deepseek-v3")
    assert v3.weights_bytes == pytest.approx(2 * 671e9, rel=0.01)
    assert "falls further behind" in mw.open_question_4(wall) or "keeps pace" in mw.open_question_4(wall)


def test_batch_law_by_hand():
    c = bl.training_compute(37e9, 14.8e12)
    assert c == pytest.approx(3.2856e24)
    assert bl.optimal_batch_tokens(c) == pytest.approx(0.2920 * 3.2856e24 ** 0.3271)
    s = bl.scenario_batch(1024, 4096, 70e9)
    assert s.batch_tokens == 4194304 and s.train_tokens == 20 * 70e9
    assert s.optimal_tokens == pytest.approx(0.2920 * (6 * 70e9 * 1.4e12) ** 0.3271)


def test_test_time_costs_come_from_the_decode_model_and_the_crossover_is_where_costs_meet():
    c = tt.compare(H100, 0.70)
    assert c.small.row.model == "DeepSeek-R1-Distill-Llama-8B" and c.small.row.samples == 64
    assert c.large.row.model == "DeepSeek-R1-Distill-Llama-70B" and c.large.row.samples == 1
    # KV at the end of the trace = S x (P + T) x KV bytes per token (Llama-3-8B: 32 x 8 x 128 x 2 x 2 B)
    assert c.small.kv_end_bytes[0] == pytest.approx(64 * (tt.PROMPT + 1024) * 131072)
    assert np.all(c.small.gpus >= 1) and c.large.gpus[0] == 2          # 70B bf16 needs two H100s
    assert np.all(np.diff(c.small.gpus) >= 0)                            # the KV grows, so do the GPUs
    assert np.all(c.small.gpu_seconds == c.small.latency_s * c.small.gpus)
    assert 8192 < c.crossover_tokens < 32768 and c.small_wins_below
    # at the crossover the two log-interpolated cost curves meet
    lt = np.log(c.small.tokens)
    a = np.interp(math.log(c.crossover_tokens), lt, np.log(c.small.gpu_seconds))
    b = np.interp(math.log(c.crossover_tokens), lt, np.log(c.large.gpu_seconds))
    assert a == pytest.approx(b, rel=1e-9)


def test_recompute_effects_match_korthikanti_table2_ratios():
    from trinity_desktop.model.claims.scale import recompute_scenario

    sc = recompute_scenario()
    e = recompute_effects(sc)
    # TP + SP, stored scores: sbh(34/t + 5as/(ht)) -> selective 34 sbh/t: saved share = (5as/h) / (34 + 5as/h)
    # for a GPT-style layer; Llama's SwiGLU MLP stores more than the 34 sbh term, so the share is a bit lower
    a, s, h = 64, 8192, 8192
    x = 5 * a * s / h
    assert x / (34 + x) * 0.95 < e["selective"].memory_saved < x / (34 + x)
    assert 0 < e["selective"].extra_compute < e["full"].extra_compute
    assert e["full"].memory_saved > e["selective"].memory_saved


def test_calc_train_json_has_tokens_per_step_and_the_laws_optimum(capsys):
    import json

    from trinity_desktop.cli import run_cli

    assert run_cli(["calc", "train", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "64", "--tp", "8",
                    "--pp", "4", "--seq-len", "8192", "--global-batch", "512", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["batch_tokens"] == 512 * 8192
    n = rep["params_active"]
    assert rep["batch_tokens_optimal"] == pytest.approx(0.2920 * (6 * n * 20 * n) ** 0.3271)
