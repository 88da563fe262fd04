"""Pressure is one rule everywhere: hot = constrained, and the CLI, heatmap, triangle and status bar agree."""

from __future__ import annotations

import json

import numpy as np
import pytest

from trinity_desktop.cli import run_cli
from trinity_desktop.model.formulas.pressure import RESOURCES, binding_resource
from trinity_desktop.model.inputs.presets import hardware_presets
from trinity_desktop.model.views.workloads import evaluate_library
from trinity_desktop.ui.heatmap_panel import NA_VALUE, HeatmapPanel

HARDWARE = ("h100-sxm", "a100-80gb-sxm", "mi300x", "m4-max")


def _hardware(key):
    presets = hardware_presets()
    if key not in presets:
        pytest.skip(f"no hardware preset {key}")
    return presets[key]


def test_ties_go_to_memory_then_bandwidth():
    assert binding_resource(0.5, 0.5, 0.5) == "memory"
    assert binding_resource(0.5, 0.5, 0.1) == "bandwidth"
    assert binding_resource(0.6, 0.5, 0.1) == "compute"
    assert binding_resource(1.0, 1.0, 1.3) == "memory"   # does not fit: memory binds


@pytest.mark.parametrize("hw_key", HARDWARE)
def test_hottest_cell_is_the_outlined_binding_one_in_every_library_row(qtbot, hw_key):
    hw = _hardware(hw_key)
    rows = evaluate_library(hw)
    panel = HeatmapPanel()
    qtbot.addWidget(panel)
    panel.update_rows(rows, hw.name)
    values = panel.cell_values()
    checked = 0
    for i, row in enumerate(rows):
        if values[i, 0] == NA_VALUE:
            continue
        hottest = RESOURCES[int(np.argmax(values[i]))]
        if values[i].max() - np.sort(values[i])[-2] < 1e-12:
            continue  # an exact tie: either cell is as hot
        assert hottest == row.results.bottleneck, (row.key, values[i])
        # The drawn label says the same number.
        j = RESOURCES.index(hottest)
        assert panel.cell_label(i, j).split()[0] == f"{values[i, j]:.2f}"
        checked += 1
    assert checked >= len(rows) // 2


def _cli_args(row) -> list[str]:
    sc = row.scenario
    if sc.kind == "train":
        return ["calc", "train", "--model", sc.model.key, "--hardware", sc.hardware.key, "--gpus", str(sc.gpus),
                "--gpus-per-node", str(sc.gpus_per_node), "--tp", str(sc.tp), "--pp", str(sc.pp),
                "--cp", str(sc.cp), "--ep", str(sc.ep), "--zero", str(sc.zero), "--recompute", sc.recompute,
                "--sequence-parallel" if sc.sequence_parallel else "--no-sequence-parallel",
                "--flash-attention" if sc.flash_attention else "--no-flash-attention",
                "--micro-batch", str(sc.micro_batch), "--global-batch", str(sc.global_batch),
                "--seq-len", str(sc.seq_len), "--json"]
    return None


def test_cli_and_heatmap_agree_on_library_training_workloads(qtbot, capsys):
    hw = _hardware("h100-sxm")
    rows = [r for r in evaluate_library(hw) if r.results is not None and r.scenario.kind == "train"
            and r.scenario.precision == "bf16" and r.scenario.optimizer == "adamw" and not r.scenario.techniques]
    assert rows
    panel = HeatmapPanel()
    qtbot.addWidget(panel)
    all_rows = evaluate_library(hw)
    panel.update_rows(all_rows, hw.name)
    keys = panel.row_keys()
    for row in rows:
        capsys.readouterr()
        assert run_cli(_cli_args(row)) == 0
        rep = json.loads(capsys.readouterr().out)
        shown = panel.cell_values()[keys.index(row.key)]
        assert [rep["pressure"][k] for k in RESOURCES] == pytest.approx(list(shown), rel=1e-9), row.key
        assert rep["bottleneck"] == row.results.bottleneck


def test_status_bar_quotes_the_same_pressures(qtbot):
    from trinity_desktop.defaults import default_scenario
    from trinity_desktop.main_window import MainWindow
    from trinity_desktop.store import ScenarioStore

    win = MainWindow(ScenarioStore(default_scenario()), None)
    qtbot.addWidget(win)
    r = win.store.results
    text = win.status.full_text()
    for name, value in zip(RESOURCES, r.pressure.as_tuple(), strict=True):
        assert f"{name} {value:.2f}" in text
    assert text.startswith(f"{r.bottleneck.capitalize()} binds")
