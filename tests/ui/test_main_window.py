"""The main window: docks, controls wired to the store, undo, inline validation, layout persistence."""

from __future__ import annotations

import pytest
from PySide6 import QtCore, QtWidgets

from trinity_desktop.defaults import default_scenario
from trinity_desktop.main_window import LAYOUT_VERSION, MainWindow
from trinity_desktop.model import evaluate
from trinity_desktop.model.inputs.presets import model_presets
from trinity_desktop.store import ScenarioStore


@pytest.fixture
def settings(tmp_path):
    return QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings):
    win = MainWindow(ScenarioStore(default_scenario()), settings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


def memory_gb(results):
    return {k: v / 1e9 for k, v in results.memory.items()}


def test_window_has_the_panels_and_controls(window):
    names = {d.objectName() for d in window.findChildren(QtWidgets.QDockWidget)}
    assert {"dock_controls", "dock_breakdown", "dock_heatmap"} <= names
    assert all(window.docks[n].isVisible() for n in ("controls", "breakdown", "heatmap"))
    view_actions = {a.text() for a in window.view_menu.actions()}
    assert {"Scenario", "Memory and time", "Workload pressure"} <= view_actions
    assert window.breakdown.memory_values() == pytest.approx(memory_gb(window.store.results))
    assert len(window.heatmap.row_keys()) >= 8


def test_changing_the_model_updates_the_bars_and_undo_restores(window, qtbot):
    before = window.breakdown.memory_values()
    combo = window.controls.model_combo
    combo.setCurrentIndex(combo.findData("llama-2-70b"))
    assert window.store.scenario.model.key == "llama-2-70b"
    expected = evaluate(default_scenario().replace(model=model_presets()["llama-2-70b"]))
    assert window.breakdown.memory_values() == pytest.approx(memory_gb(expected))
    assert window.breakdown.memory_values() != pytest.approx(before)
    window.undo_action.trigger()
    assert window.store.scenario.model.key == "llama-3-70b"
    assert window.breakdown.memory_values() == pytest.approx(before)
    assert combo.currentData() == "llama-3-70b"


def test_changing_zero_stage_updates_the_bars(window):
    combo = window.controls.widgets["zero"]
    combo.setCurrentIndex(combo.findData(3))
    expected = evaluate(default_scenario().replace(zero=3))
    assert window.breakdown.memory_values() == pytest.approx(memory_gb(expected))
    window.redo_action.trigger()  # nothing to redo: unchanged
    assert window.store.scenario.zero == 3
    window.undo_action.trigger()
    assert window.store.scenario.zero == 1


def test_invalid_value_shows_a_message_and_keeps_the_last_valid_scenario(window):
    before = window.store.scenario
    spin = window.controls.widgets["tp"]
    spin.setValue(3)  # 64 heads are not divisible by 3
    assert window.store.scenario is before
    assert window.controls.error_label.isVisible()
    assert "tp" in window.controls.error_label.text()
    assert spin.value() == before.tp  # the control shows the scenario that is in force
    window.controls.widgets["zero"].setCurrentIndex(0)  # a valid edit clears the message
    assert not window.controls.error_label.isVisible()


def test_clicking_a_heatmap_row_loads_that_workload(window):
    keys = window.heatmap.row_keys()
    row = keys.index("long-context-decode")
    window.heatmap.click_row(row)
    sc = window.store.scenario
    assert sc.kind == "decode" and sc.model.key == "llama-3.1-70b"
    assert sc.hardware.key == "h100-sxm"
    window.undo_action.trigger()
    assert window.store.scenario == default_scenario()


def test_hardware_change_recomputes_the_heatmap(window):
    before = window.heatmap.cell_values().copy()
    combo = window.controls.hardware_combo
    combo.setCurrentIndex(combo.findData("h200-sxm"))
    after = window.heatmap.cell_values()
    assert after.shape == before.shape
    assert (after[:, 2] <= before[:, 2] + 1e-12).all()  # 141 GB vs 80 GB: memory pressure never rises
    assert (after[:, 2] < before[:, 2]).any()


def test_layout_is_saved_with_a_version_and_restored(qtbot, settings):
    win = MainWindow(ScenarioStore(default_scenario()), settings)
    qtbot.addWidget(win)
    win.show()
    win.docks["heatmap"].hide()
    win.close()
    assert int(settings.value("window/layout_version")) == LAYOUT_VERSION
    again = MainWindow(ScenarioStore(default_scenario()), settings)
    qtbot.addWidget(again)
    again.show()
    assert not again.docks["heatmap"].isVisible()
    again.reset_layout()
    assert again.docks["heatmap"].isVisible()


def test_stale_layout_version_falls_back_to_default(qtbot, settings):
    settings.setValue("window/state", QtCore.QByteArray(b"garbage"))
    settings.setValue("window/layout_version", LAYOUT_VERSION + 99)
    win = MainWindow(ScenarioStore(default_scenario()), settings)
    qtbot.addWidget(win)
    win.show()
    assert all(d.isVisible() for d in win.docks.values())


def test_loading_a_bad_hardware_file_keeps_work_and_names_the_key(window, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('key = "x"\nname = "X"\nhbm_bytes = 1e9\nhbm_bw = -5\npeak_bf16 = 1e12\n')
    before = window.store.scenario
    message = window.load_hardware_file(bad)
    assert "hbm_bw" in message
    assert window.store.scenario is before
    good = tmp_path / "good.toml"
    good.write_text('key = "my-gpu"\nname = "My GPU"\nhbm_bytes = 48e9\nhbm_bw = 1e12\npeak_bf16 = 200e12\n'
                    'peak_fp32 = 50e12\nhost_link_bw = 32e9\nhost_dram_bytes = 64e9\n')
    assert window.load_hardware_file(good) == ""
    assert window.controls.hardware_combo.findData("my-gpu") >= 0


def test_split_optimum_moves_the_marker_on_the_compute_bandwidth_edge(window):
    from trinity_desktop.ui.triangle_panel import triangle_point

    split, triangle = window.panels["split"], window.panels["triangle"]
    split.set_network("ethernet")
    split.set_device_speed(0.01)  # a 2017-class phone: slow enough that a fast uplink wins
    split.set_uplink(1000.0)
    fast = triangle.split_position()
    split.set_uplink(0.1)
    slow = triangle.split_position()
    assert fast is not None and slow is not None
    cloud, device = triangle_point(0.0, 1.0, 0.0), triangle_point(1.0, 0.0, 0.0)
    # a slow uplink keeps the work on the device: the marker sits nearer the compute corner
    dist = lambda p, q: ((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2) ** 0.5  # noqa: E731
    assert dist(slow, device) < dist(fast, device)
    assert dist(fast, cloud) <= dist(slow, cloud)


def test_technique_controls_edit_the_scenario(window):
    offload = window.controls.widgets["offload"]
    offload.setCurrentIndex(offload.findData("optimizer"))
    assert window.store.scenario.offload == "optimizer"
    assert window.store.results.memory["optimizer"] == 0.0  # ZeRO-Offload: states live in host memory
    dgc = window.controls.widgets["grad_compression"]
    dgc.setValue(270.0)
    assert window.store.scenario.grad_compression == 270.0
    window.undo_action.trigger()
    assert window.store.scenario.grad_compression == 1.0 and dgc.value() == 1.0


def test_panels_behind_a_tab_catch_up_when_shown(window):
    window.store.edit(zero=3)
    assert "flow" in window._stale  # behind the "Memory and time" tab: not redrawn yet
    window.docks["flow"].raise_()
    QtWidgets.QApplication.processEvents()
    assert "flow" not in window._stale
    stages = window.panels["flow"].stage_count()
    from trinity_desktop.model.views.stages import stages as model_stages
    assert stages == len(model_stages(window.store.scenario, window.store.results))


def test_help_explains_the_pressures_in_words_for_people(window):
    import re

    from trinity_desktop.model.formulas import pressure

    text = window.pressure_help_text()
    doc = pressure.__doc__
    assert "busiest" in text and "1.0</b> means" in text and "Hot means constrained" in text
    for figure in re.findall(r"(\d+)% of", doc)[:3]:   # the default efficiencies the model's docstring names
        assert f"{figure}%" in text
    assert "`" not in text and ".py" not in text and "_" not in re.sub(r"<[^>]+>", "", text)   # no code names
    actions = {a.text().replace("&", "") for a in window.menuBar().actions()[-1].menu().actions()}
    assert "How pressures are computed" in actions


def test_virtual_stages_spin_box_interleaves_the_pipeline(window):
    spin = window.controls.widgets["virtual_stages"]
    assert spin.toolTip() and spin.accessibleName()
    spin.setValue(2)
    assert window.store.scenario.virtual_stages == 2
    assert window.breakdown.time_values()["pipeline_bubble"] == pytest.approx(
        evaluate(default_scenario().replace(virtual_stages=2)).time["pipeline_bubble"], rel=1e-9)
    spin.setValue(42)  # PP2 x 42 = 84 chunks: more than 80 layers + embedding + head
    assert "virtual_stages" in window.controls.error_label.text()
    assert window.store.scenario.virtual_stages == 2


def test_planner_click_loads_a_layout_as_one_undoable_edit(window, qtbot):
    dock = window.docks["planner"]
    dock.show()
    dock.raise_()
    window.refresh_all()
    panel = window.panels["planner"]
    qtbot.waitUntil(lambda: panel.plan is not None and not panel.cancel_button.isEnabled(), timeout=60000)
    before = window.store.scenario
    best = panel.plan.best
    panel.click_point(panel._points.index(best))
    sc = window.store.scenario
    assert (sc.tp, sc.pp, sc.zero, sc.micro_batch, sc.virtual_stages) == (
        best.layout["tp"], best.layout["pp"], best.layout["zero"], best.layout["micro_batch"],
        best.layout["virtual_stages"])
    assert window.store.results.time_total == best.time_per_step_s
    window.undo_action.trigger()
    assert window.store.scenario == before
