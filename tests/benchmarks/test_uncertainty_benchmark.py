"""Cost of the bands: 4,096 Sobol samples with first-order and total indices for one scenario, as a ratio to
one `evaluate` of the same scenario (the issue's budget: about 0.2 s).

Runs once (as a correctness check) under the default `--benchmark-disable`; for real numbers:
    .venv/bin/python -m pytest tests/benchmarks/test_uncertainty_benchmark.py --benchmark-enable -s
"""

from __future__ import annotations

import time

from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.search.uncertainty import propagate


def _scenario() -> Scenario:
    return Scenario(hardware=presets.hardware_presets()["a100-80gb-sxm"],
                    model=presets.model_presets()["korthikanti-175b"], kind="train", gpus=64, tp=8, pp=8,
                    global_batch=64, micro_batch=1, seq_len=2048)


def _mean(benchmark, fallback: float) -> float:
    stats = getattr(benchmark, "stats", None)
    mean = stats.stats.mean if stats is not None and getattr(stats, "stats", None) is not None else None
    return mean or fallback


def test_bands_with_sensitivity_against_one_evaluate(benchmark):
    sc = _scenario()
    propagate(sc, samples=64)  # scipy's import is paid once per process, not per edit
    t0 = time.perf_counter()
    for _ in range(20):
        evaluate(sc)
    single = (time.perf_counter() - t0) / 20

    t0 = time.perf_counter()
    u = benchmark(propagate, sc, 4096)
    per_call = _mean(benchmark, time.perf_counter() - t0)
    benchmark.extra_info["ratio_to_evaluate"] = per_call / single
    print(f"\n4096 samples + Sobol indices ({u.evaluations} evaluations): {per_call * 1e3:.0f} ms; one evaluate "
          f"{single * 1e3:.2f} ms; ratio {per_call / single:.0f}")
    assert u.evaluations == 4096 * (len(u.sensitivity) + 2) + 1
