"""Throughput of the vectorized training model: one `evaluate_grid` call over ~1.5e5 layouts.

Runs once (as a correctness check) under the default `--benchmark-disable`; for real numbers:
    .venv/bin/python -m pytest tests/benchmarks --benchmark-enable
"""

from __future__ import annotations

import time

import numpy as np

from trinity_desktop.model import Scenario, evaluate_grid
from trinity_desktop.model.inputs import presets

AXES = dict(
    tp=[1, 2, 4, 8],
    pp=[1, 2, 4, 8],
    zero=[0, 1, 2, 3],
    recompute=[0, 1, 2],
    micro_batch=[1, 2, 4, 8],
    seq_len=[1024, 2048, 4096, 8192],
    gpus=[8, 16, 32, 64, 128, 256],
    cp=[1, 2],
    sp=[False, True],
    flash=[False, True],
)


def _grid():
    names = list(AXES)
    mesh = np.meshgrid(*[np.asarray(AXES[n]) for n in names], indexing="ij")
    return dict(zip(names, mesh, strict=True))


def test_training_grid_throughput(benchmark):
    base = Scenario(hardware=presets.hardware_presets()["h100-sxm"], model=presets.model_presets()["llama-3-70b"],
                    gpus=64, tp=8, global_batch=512)
    axes = _grid()
    n = axes["tp"].size
    assert n >= 100_000

    t0 = time.perf_counter()
    out = benchmark(evaluate_grid, base, **axes)
    elapsed = time.perf_counter() - t0

    stats = getattr(benchmark, "stats", None)
    mean = stats.stats.mean if stats is not None and getattr(stats, "stats", None) is not None else None
    per_call = mean if mean else elapsed
    benchmark.extra_info["configs"] = n
    benchmark.extra_info["configs_per_s"] = n / per_call
    print(f"\n{n} configurations, {per_call * 1e3:.1f} ms per call, {n / per_call:,.0f} configs/s")

    assert np.shape(out.time_total) == axes["tp"].shape
    valid = np.broadcast_to(out.valid, axes["tp"].shape)
    assert valid.any()
    assert np.all(np.isfinite(out.time_total[valid])) and np.all(out.time_total[valid] > 0)
    # The speed itself is the benchmark's figure (--benchmark-enable, `trinity-desktop bench`), never a timed
    # assertion: on a loaded machine one call took 1.6 s and the old "> 1e5 configurations/s" check failed.
