"""The figures of `trinity-desktop bench` under pytest-benchmark: start to first paint, edit -> repaint, scalar and
grid evaluation, each beside its baseline (the bare PySide6 + pyqtgraph window, llm-analysis).

Under the default `--benchmark-disable` each runs once as a correctness check (no timed assertions); numbers:
    QT_QPA_PLATFORM=offscreen .venv/bin/python -m pytest tests/benchmarks --benchmark-enable
Compare each app figure with the baseline beside it (the ratio is what `trinity-desktop bench` reports).
"""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop import bench
from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate, evaluate_grid


@pytest.fixture
def windows(qtbot):
    """The app's main window and the bare baseline window, both shown and settled."""
    from PySide6 import QtWidgets

    from trinity_desktop.app import build_window

    app = QtWidgets.QApplication.instance()
    window, bare = build_window(settings=None), bench.bare_window()
    for w in (window, bare):
        qtbot.addWidget(w)
        w.show()
        qtbot.waitExposed(w)
    counter = bench.PaintCounter(app)
    for _ in range(5):
        bench.settle(app, counter)
    yield app, window, bare, counter
    counter.remove(app)


def test_edit_to_repaint_app(benchmark, windows):
    app, window, _bare, counter = windows
    edits = iter(range(10_000))

    def edit():
        painted = counter.total
        elapsed = bench.timed(app, counter, bench.app_edit(window, next(edits)))
        return elapsed, counter.total - painted

    elapsed, paints = benchmark.pedantic(edit, rounds=10, warmup_rounds=2)
    assert paints > 0 and elapsed > 0
    assert window.store.scenario.seq_len in bench.EDIT_SEQUENCE


def test_edit_to_repaint_bare_window(benchmark, windows):
    app, _window, bare, counter = windows

    def update():
        painted = counter.total
        return bench.timed(app, counter, lambda: bench.bare_update(bare)), counter.total - painted

    elapsed, paints = benchmark.pedantic(update, rounds=10, warmup_rounds=2)
    assert paints > 0 and elapsed > 0


def test_edit_samples_alternate_and_count_every_edit(windows):
    app, window, bare, _counter = windows
    app_s, bare_s = bench.edit_samples(app, window, bare, 3)
    assert len(app_s) == len(bare_s) == 3 and min(app_s + bare_s) > 0


@pytest.mark.parametrize("kind", ["app", "bare"])
def test_start_to_first_paint(benchmark, kind):
    """Each start is a fresh interpreter (`python -m trinity_desktop.bench --child start-KIND`)."""

    def start():
        t0, rep = bench._run_child([f"start-{kind}"])
        return rep["first_paint_wall"] - t0, rep["peak_rss_bytes"]

    elapsed, rss = benchmark.pedantic(start, rounds=3)
    benchmark.extra_info["peak_rss_bytes"] = rss
    assert 0 < elapsed < 120 and rss > 50 * 2**20  # Qt, numpy and pyqtgraph alone take more than 50 MiB


def test_scalar_evaluate(benchmark):
    scenarios = bench.scalar_scenarios(100)
    layouts = {(sc.tp, sc.pp, sc.zero, sc.micro_batch, sc.seq_len) for sc in scenarios}
    assert len(layouts) == len(scenarios)  # distinct layouts: nothing can be served from a cache

    def run():
        return [evaluate(sc) for sc in scenarios]

    results = benchmark(run)
    benchmark.extra_info["configs"] = len(scenarios)
    by_layout = {(r.scenario.tp, r.scenario.pp, r.scenario.zero): r for r in results}
    # ZeRO-3 shards the weights over DP: less weight memory than ZeRO-1 in the same layout
    assert by_layout[(1, 1, 3)].memory["weights"] < by_layout[(1, 1, 1)].memory["weights"]


def test_scalar_evaluate_baseline_llm_analysis(benchmark):
    pytest.importorskip("llm_analysis")
    calls = bench.llm_analysis_calls()
    assert len(calls) >= 10  # the 70B layouts llm-analysis accepts on 64 GPUs

    def run():
        return [call() for call in calls]

    results = benchmark(run)
    assert all(isinstance(r, dict) and r.get("num_params_total", 0) > 0 for r in results)


def test_grid_evaluate_a_million_configurations(benchmark):
    axes = bench.grid_axes()
    n = bench.grid_size()
    assert n >= 1_000_000
    out = benchmark(evaluate_grid, default_scenario(), **axes)
    benchmark.extra_info["configs"] = n
    total = np.broadcast_to(out.time_total, out.valid.shape)
    assert out.valid.size == n and out.valid.any()
    assert np.all(np.isfinite(total[out.valid])) and np.all(total[out.valid] > 0)
    # the grid and the scalar path are the same formulas: the default layout's cell equals `evaluate`
    sc = default_scenario()
    index = tuple(bench.GRID_AXES[k].index(getattr(sc, {"sp": "sequence_parallel", "flash": "flash_attention",
                                                        "recompute": "recompute"}.get(k, k)))
                  if k != "recompute" else ["none", "selective", "full"].index(sc.recompute)
                  for k in bench.GRID_AXES)
    assert total[index] == pytest.approx(evaluate(sc).time_total, rel=1e-12)


@pytest.mark.slow
def test_bench_command_prints_every_figure_with_its_baseline():
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "trinity_desktop", "bench", "--json", "--starts", "1", "--edits", "3"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    rep = json.loads(proc.stdout)
    assert rep["start_to_first_paint_s"]["ratio"] > 0 and rep["peak_rss_at_first_paint_bytes"]["ratio"] > 0
    e = rep["edit_to_repaint_s"]
    assert e["app_p95"] >= e["app_p50"] > 0 and e["bare_p95"] >= e["bare_p50"] > 0 and e["ratio_p95"] > 0
    assert rep["scalar_evaluate_configs_per_s"]["app"] > 0
    assert rep["grid_evaluate_configs_per_s"]["configs"] >= 1_000_000


def test_bench_option_errors_exit_2(capsys):
    from trinity_desktop.cli import run_cli

    assert run_cli(["bench", "--edits", "0"]) == 2
    assert "--edits" in capsys.readouterr().err
