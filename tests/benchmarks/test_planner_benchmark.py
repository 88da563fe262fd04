"""Throughput of the training and serving planners: configurations per second, the ratio to one bare `evaluate_grid` call of
the same size, the ratio to a per-configuration Python loop (our scalar `evaluate`; llm-analysis when it is
installed), and the peak RSS of a 10^7-configuration search (in a fresh process).

Runs once (as a correctness check) under the default `--benchmark-disable`; for real numbers:
    .venv/bin/python -m pytest tests/benchmarks/test_planner_benchmark.py --benchmark-enable -s
(the 10^7 peak-RSS test is marked slow: add `-m slow` or run the file by name).
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import time

import numpy as np
import pytest

from trinity_desktop.model import Scenario, evaluate, evaluate_grid
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.search.planner import AXES, plan_training, training_space

MODEL = presets.model_presets()["llama-3.1-405b"]
HW = presets.hardware_presets()["h100-sxm"]
GPUS, GLOBAL_BATCH, SEQ = 16384, 2048, 8192


def _per_call(benchmark, elapsed: float) -> float:
    stats = getattr(benchmark, "stats", None)
    mean = stats.stats.mean if stats is not None and getattr(stats, "stats", None) is not None else None
    return mean if mean else elapsed


def test_training_planner_throughput(benchmark):
    space = training_space(MODEL, GPUS, GLOBAL_BATCH, SEQ)
    assert space.size >= 1_000_000
    t0 = time.perf_counter()
    plan = benchmark(plan_training, MODEL, HW, GPUS, GLOBAL_BATCH, SEQ, space=space)
    per_call = _per_call(benchmark, time.perf_counter() - t0)
    rate = space.size / per_call
    benchmark.extra_info.update(configs=space.size, configs_per_s=rate)
    print(f"\nplanner: {space.size:,} configurations in {per_call:.2f} s, {rate:,.0f} configs/s "
          f"({plan.feasible:,} fit)")
    assert plan.configurations_evaluated == space.size and plan.best is not None


def test_planner_against_a_bare_evaluate_grid_and_a_python_loop():
    """The same space as one bare open-grid call (every configuration, no reductions), and the planner's rate
    against a loop of scalar evaluations (llm-analysis-style: one Python call per configuration)."""
    space = training_space(MODEL, GPUS, GLOBAL_BATCH, SEQ)
    base = Scenario(hardware=HW, model=MODEL, gpus=GPUS, tp=8, pp=16, global_batch=GLOBAL_BATCH, seq_len=SEQ)
    n = len(AXES)
    axes = {a: np.asarray(getattr(space, a)).reshape([-1 if i == k else 1 for i in range(n)])
            for k, a in enumerate(AXES)}
    t0 = time.perf_counter()
    plan = plan_training(MODEL, HW, GPUS, GLOBAL_BATCH, SEQ, space=space)
    t_plan = time.perf_counter() - t0
    t0 = time.perf_counter()
    with np.errstate(all="ignore"):
        out = evaluate_grid(base, **axes)
    t_bare = time.perf_counter() - t0
    assert np.shape(out.time_total) == space.shape
    del out
    samples = [plan.best.scenario, *(c.scenario for c in plan.pareto[:19])]
    t0 = time.perf_counter()
    for sc in samples:
        evaluate(sc)
    t_scalar = (time.perf_counter() - t0) / len(samples)
    rate = space.size / t_plan
    line = {"configs": space.size, "planner_s": t_plan, "bare_evaluate_grid_s": t_bare,
            "planner_over_bare": t_plan / t_bare, "scalar_evaluate_s": t_scalar,
            "planner_over_scalar_loop": rate * t_scalar}
    try:
        line["llm_analysis"] = _llm_analysis_per_config()
        line["planner_over_llm_analysis"] = rate * line["llm_analysis"]
    except ImportError:  # llm-analysis is not a dependency; the comparison runs where it is installed
        pass
    print("\n" + json.dumps(line))
    assert math.isfinite(t_plan / t_bare) and rate > 0  # figures, not timed assertions (the machine is shared)


def test_serving_planner_throughput(benchmark):
    """`plan infer` for Llama-3.1-405B on 16 H100: TP x PP x batch x formats x offload, one open-grid call per
    weight format; the same search with PP fixed to 1 (the space before pipeline-parallel serving) alongside."""
    from trinity_desktop.model.search.serving_planner import plan_serving, serving_space

    space = serving_space(MODEL, HW, 16)
    tp_only = dataclasses.replace(space, pp=(1,))
    t0 = time.perf_counter()
    plan = benchmark(plan_serving, MODEL, HW, 16, 2048, 512, space=space)
    per_call = _per_call(benchmark, time.perf_counter() - t0)
    t0 = time.perf_counter()
    plan_serving(MODEL, HW, 16, 2048, 512, space=tp_only)
    t_tp_only = time.perf_counter() - t0
    line = {"configs": space.size, "seconds": per_call, "configs_per_s": space.size / per_call,
            "tp_only_configs": tp_only.size, "tp_only_seconds": t_tp_only,
            "tp_only_configs_per_s": tp_only.size / t_tp_only}
    benchmark.extra_info.update(line)
    print("\n" + json.dumps(line))
    assert plan.configurations_evaluated == space.size and plan.best is not None


def _llm_analysis_per_config() -> float:
    """Seconds per configuration of llm-analysis's training analysis (one LLMAnalysis object and call each)."""
    from llm_analysis.analysis import train

    kw = dict(model_name="facebook_opt-1.3b", gpu_name="a100-sxm-80gb", seq_len=2048, total_num_gpus=64,
              output_dir=None, log_level="CRITICAL")
    train(tp_size=1, batch_size_per_gpu=1, **kw)  # warm-up: configuration files read once
    t0 = time.perf_counter()
    n = 0
    for tp in (1, 2, 4, 8):
        for mb in (1, 2, 4):
            train(tp_size=tp, batch_size_per_gpu=mb, **kw)
            n += 1
    return (time.perf_counter() - t0) / n


PEAK_RSS_SCRIPT = """
import json, resource, sys, time
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.search.planner import plan_training, training_space
m, hw = presets.model_presets()["llama-3.1-405b"], presets.hardware_presets()["h100-sxm"]
counts = [2048, 4096, 8192, 16384]
space = training_space(m, counts, 2048, 8192, max_micro_batch=2048)
t0 = time.perf_counter()
plan = plan_training(m, hw, counts, 2048, 8192, space=space, objective="tokens-per-gpu")
dt = time.perf_counter() - t0
try:   # VmHWM: this address space's peak; ru_maxrss keeps the peak of the process that exec'd us (Linux)
    peak = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:"))
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"configs": plan.configurations_evaluated, "seconds": dt, "peak_rss_bytes": peak}))
"""


@pytest.mark.slow
def test_peak_rss_of_a_ten_million_configuration_search():
    out = subprocess.run([sys.executable, "-c", PEAK_RSS_SCRIPT], capture_output=True, text=True, check=True)
    rep = json.loads(out.stdout.strip().splitlines()[-1])
    print("\n" + json.dumps(rep))
    assert rep["configs"] >= 10_000_000
    assert rep["peak_rss_bytes"] < 1 << 30
