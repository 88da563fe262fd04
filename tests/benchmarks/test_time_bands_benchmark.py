"""Error bars of a planner front (model/uncertainty.time_bands) against one propagate per point. Run:

    .venv/bin/python -m pytest tests/benchmarks/test_time_bands_benchmark.py --benchmark-enable -s
"""

from __future__ import annotations

import time

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model.search.planner import plan_training
from trinity_desktop.model.search.uncertainty import FRONT_SAMPLES, propagate, time_bands


def test_time_bands_of_the_default_training_front(benchmark):
    sc = default_scenario()
    plan = plan_training(sc.model, sc.hardware, sc.gpus, sc.global_batch, sc.seq_len, map_axes=("pp", "tp"))
    scenarios = [c.scenario for c in plan.pareto]
    time_bands(scenarios[:1], samples=16)  # scipy's import is paid once per process
    t0 = time.perf_counter()
    for s in scenarios:
        propagate(s, samples=FRONT_SAMPLES, sensitivity=False)
    looped = time.perf_counter() - t0
    t0 = time.perf_counter()
    bands = benchmark(time_bands, scenarios, FRONT_SAMPLES)
    per_call = getattr(getattr(benchmark, "stats", None), "stats", None)
    per_call = per_call.mean if per_call is not None else time.perf_counter() - t0
    benchmark.extra_info["points"] = len(scenarios)
    benchmark.extra_info["ratio_to_one_propagate_per_point"] = per_call / looped
    print(f"\n{len(scenarios)} Pareto points x {2 * FRONT_SAMPLES + 1} samples: {per_call * 1e3:.0f} ms in one "
          f"evaluate_grid call; one propagate per point: {looped * 1e3:.0f} ms")
    assert len(bands) == len(scenarios)
