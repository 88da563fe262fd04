"""Exports carry the whole panel: SVG holds every plot of a multi-plot panel with its labels, CSV series are
named for what they are, and the matrix and references CSVs hold their data."""

from __future__ import annotations

import csv
import re
import xml.etree.ElementTree as ET

import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.main_window import MainWindow
from trinity_desktop.store import ScenarioStore

CLASS_NAMED = re.compile(r"\b(BarGraphItem|PlotCurveItem|ScatterPlotItem|PlotDataItem|ImageItem|InfiniteLine)\b")


@pytest.fixture(scope="module")
def window():
    from PySide6 import QtWidgets

    from trinity_desktop.app import ensure_application, tear_down

    ensure_application()
    win = MainWindow(ScenarioStore(default_scenario()), None)
    win.resize(1600, 1000)
    win.show()
    QtWidgets.QApplication.processEvents()
    yield win
    tear_down(win)


def _texts(path) -> list[str]:
    root = ET.parse(path).getroot()
    return ["".join(el.itertext()).strip() for el in root.iter() if el.tag.endswith("text")]


def test_svg_holds_every_plot_of_a_multi_plot_panel_with_its_labels(window, tmp_path):
    path = window.workspace.export_svg("breakdown", tmp_path / "breakdown.svg")
    texts = _texts(path)
    r = window.store.results
    panel = window.breakdown
    for plot in (panel.memory_plot, panel.time_plot):  # both plots' titles
        title = re.sub(r"<[^>]+>", "", plot.titleLabel.text)
        assert title in texts, title
    for name in ("Weights", "Optimizer states", "Activations", "Compute", "Exposed communication"):
        # segment labels, uncut: the name, alone or on one line with its value ("Weights 8.8 GB")
        assert any(t == name or t.startswith(name + " ") or t.startswith(name + "\n") for t in texts), name
    assert any(t.endswith(f"{r.memory['activations'] / 1e9:.1f} GB") for t in texts if t.startswith("Activations"))


@pytest.mark.parametrize("name", ["breakdown", "triangle", "heatmap", "roofline", "tradeoff", "residency",
                                  "tiled_io", "flow", "outcomes", "split", "quantisation", "matrix"])
def test_csv_series_are_named_for_what_they_are(window, tmp_path, name):
    path = tmp_path / f"{name}.csv"
    rows = window.workspace.export_csv(name, path)
    with open(path, newline="", encoding="utf-8") as f:
        data = list(csv.DictReader(f))
    assert rows == len(data) > 0
    bad = sorted({row["series"] for row in data if CLASS_NAMED.search(row["series"]) or not row["series"]})
    assert bad == []


def test_breakdown_csv_names_each_segment(window, tmp_path):
    path = tmp_path / "breakdown.csv"
    window.workspace.export_csv("breakdown", path)
    with open(path, newline="", encoding="utf-8") as f:
        series = {row["series"]: row for row in csv.DictReader(f)}
    weights = series["memory bar: Weights"]
    assert float(weights["height"]) == pytest.approx(window.store.results.memory["weights"] / 1e9, rel=1e-9)


def test_matrix_csv_holds_both_matrices(window, tmp_path):
    path = tmp_path / "matrix.csv"
    window.workspace.export_csv("matrix", path)
    with open(path, newline="", encoding="utf-8") as f:
        data = list(csv.DictReader(f))
    panel = window.panels["matrix"]
    kv = [r for r in data if r["plot"] == "Compressed KV cache" and r["kind"] == "cell"]
    sync = [r for r in data if r["plot"] == "Dense gradient sync"]
    assert len(kv) == panel.kv_grid().size > 0
    assert len(sync) == panel.sync_matrix().size > 0
    assert sum(float(r["value"]) for r in sync) == pytest.approx(float(panel.sync_matrix().sum()), rel=1e-9)


def test_references_csv_lists_the_references(window, tmp_path):
    path = tmp_path / "references.csv"
    rows = window.workspace.export_csv("references", path)
    with open(path, newline="", encoding="utf-8") as f:
        data = list(csv.reader(f))
    panel = window.panels["references"]
    assert rows == panel.row_count() == len(data) - 1 > 10
    assert any("Rajbhandari" in cell for row in data for cell in row)  # ZeRO


def test_heatmap_csv_is_the_pressures(window, tmp_path):
    path = tmp_path / "heatmap.csv"
    window.workspace.export_csv("heatmap", path)
    with open(path, newline="", encoding="utf-8") as f:
        cells = [r for r in csv.DictReader(f) if r["kind"] == "cell"]
    values = window.heatmap.cell_values()
    assert len(cells) == values.size
    first = [float(c["value"]) for c in cells[:3]]
    assert first == pytest.approx(list(values[0]), rel=1e-12)
