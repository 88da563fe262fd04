"""The window's File > Load model file path takes a Hugging Face config.json; the new hardware presets are in the
Scenario form's hardware list."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6 import QtCore

from trinity_desktop.defaults import default_scenario
from trinity_desktop.main_window import MainWindow
from trinity_desktop.store import ScenarioStore

CONFIG = Path(__file__).parents[1] / "model" / "hf_configs" / "deepseek-v3" / "config.json"
NEW_HARDWARE = ("gb200-nvl72", "gb300-nvl72", "b300", "h800-sxm", "h20", "mi325x", "tpu-v6e", "gaudi3")


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.Format.IniFormat)
    win = MainWindow(ScenarioStore(default_scenario()), settings)
    qtbot.addWidget(win)
    return win


def test_loading_a_config_json_adds_the_model(window):
    assert window.load_model_file(CONFIG) == ""
    assert "deepseek-v3" in window.models and window.models["deepseek-v3"].attention == "mla"
    assert window.controls.model_combo.findData("deepseek-v3") >= 0


def test_a_bad_config_json_is_reported_not_raised(window, tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text('{"model_type": "gpt2"}')
    message = window.load_model_file(bad)
    assert "model_type: 'gpt2' is not supported" in message and "\n" not in message


def test_new_hardware_is_in_the_scenario_form(window):
    combo = window.controls.hardware_combo
    assert all(combo.findData(key) >= 0 for key in NEW_HARDWARE)
