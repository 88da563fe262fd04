"""Export helpers (PNG at 2-3x, SVG, CSV, clipboard, PDF), the references dock, and shipped decks rendering."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import csv  # noqa: E402
import re  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402
from importlib import resources  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtCore, QtGui  # noqa: E402

from trinity_desktop import session_file  # noqa: E402
from trinity_desktop.defaults import default_scenario  # noqa: E402
from trinity_desktop.model import evaluate  # noqa: E402
from trinity_desktop.model.inputs.presets import hardware_presets, references  # noqa: E402
from trinity_desktop.model.views.provenance import FORMULAS  # noqa: E402
from trinity_desktop.ui import export  # noqa: E402
from trinity_desktop.ui.breakdown_panel import BreakdownPanel  # noqa: E402
from trinity_desktop.ui.references_panel import ReferencesPanel  # noqa: E402

DECK_DIR = Path(str(resources.files("trinity_desktop.resources").joinpath("decks")))


@pytest.fixture(scope="module")
def results():
    return evaluate(default_scenario())


@pytest.fixture
def breakdown(shown_panel, results):
    return shown_panel(BreakdownPanel, results, (640, 400))


@pytest.fixture
def plot(qtbot):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.resize(500, 350)
    item = widget.getPlotItem()
    item.addItem(pg.PlotDataItem([1.0, 2.0, 4.0], [0.5, 0.25, 0.125], name="curve", pen="b"))
    item.addItem(pg.ScatterPlotItem(x=[3.0, 5.0], y=[7.0, 11.0], name="points"))
    item.addItem(pg.BarGraphItem(x=[0.0, 1.0], height=[2.0, 3.0], width=0.5, y0=[1.0, 0.0], name="bars"))
    item.addItem(pg.InfiniteLine(pos=80.0, angle=0, name="capacity"))
    return widget


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# --- PNG ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("scale", [2, 3])
def test_png_is_exactly_scale_times_the_widget(breakdown, tmp_path, png_info, scale):
    path = tmp_path / f"panel@{scale}x.png"
    size = export.export_widget_png(breakdown, path, scale=scale)
    width, height, colours = png_info(path)
    assert (width, height) == (breakdown.width() * scale, breakdown.height() * scale) == (size.width(), size.height())
    assert colours > 20  # a real rendering (bars, text), not a blank image


def test_png_text_is_rendered_at_full_resolution(breakdown):
    """At 2x the text is drawn with 2x the pixels: more distinct anti-aliased colours than an upscaled 1x."""
    one = export.render_widget(breakdown, 1)
    two = export.render_widget(breakdown, 2)
    upscaled = one.scaled(two.size())

    def colours(image):
        image = image.convertToFormat(QtGui.QImage.Format.Format_RGB32)
        data = np.frombuffer(image.constBits(), dtype=np.uint32, count=image.bytesPerLine() // 4 * image.height())
        return np.unique(data).size

    assert two.devicePixelRatio() == 2
    assert colours(two) > colours(upscaled)


def test_png_rejects_bad_scale(breakdown, tmp_path):
    with pytest.raises(ValueError, match="scale"):
        export.export_widget_png(breakdown, tmp_path / "x.png", scale=0)


# --- SVG, CSV -------------------------------------------------------------------------------------------

def test_svg_is_valid_xml_with_svg_root(breakdown, tmp_path):
    path = export.export_plot_svg(breakdown.memory_plot, tmp_path / "memory.svg")
    root = ET.parse(path).getroot()
    assert root.tag.endswith("svg")
    assert len(list(root.iter())) > 10


def test_csv_columns_match_the_plotted_data(plot, tmp_path):
    n = export.plot_data_csv(plot, tmp_path / "data.csv")
    rows = _read_csv(tmp_path / "data.csv")
    assert n == len(rows) == 3 + 2 + 2 + 1
    assert list(rows[0]) == list(export.CSV_COLUMNS)
    by = {}
    for row in rows:
        by.setdefault(row["series"], []).append(row)
    assert [(float(r["x"]), float(r["y"])) for r in by["curve"]] == [(1.0, 0.5), (2.0, 0.25), (4.0, 0.125)]
    assert [(float(r["x"]), float(r["y"])) for r in by["points"]] == [(3.0, 7.0), (5.0, 11.0)]
    bars = [{k: float(r[k]) for k in ("x", "x0", "x1", "y0", "y1", "width", "height")} for r in by["bars"]]
    assert bars == [dict(x=0.0, x0=-0.25, x1=0.25, y0=1.0, y1=3.0, width=0.5, height=2.0),
                    dict(x=1.0, x0=0.75, x1=1.25, y0=0.0, y1=3.0, width=0.5, height=3.0)]
    assert by["capacity"][0]["kind"] == "horizontal line" and float(by["capacity"][0]["y"]) == 80.0
    assert by["curve"][0]["x0"] == ""  # columns a series does not have are empty, never NaN


def test_csv_writes_original_data_under_log_axes(plot, tmp_path):
    plot.getPlotItem().setLogMode(x=True, y=True)
    export.plot_data_csv(plot, tmp_path / "log.csv")
    curve = [r for r in _read_csv(tmp_path / "log.csv") if r["series"] == "curve"]
    assert [float(r["x"]) for r in curve] == [1.0, 2.0, 4.0]  # not log10


def test_csv_of_a_panel_is_the_model_numbers(breakdown, results, tmp_path):
    export.plot_data_csv(breakdown.memory_plot, tmp_path / "memory.csv")
    rows = _read_csv(tmp_path / "memory.csv")
    heights = [float(r["height"]) for r in rows if r["kind"] == "bar"]
    assert heights == pytest.approx([v / 1e9 for v in results.memory.values()], rel=1e-12)
    lines = [float(r["y"]) for r in rows if r["kind"] == "horizontal line"]
    assert results.capacity / 1e9 in lines  # the HBM capacity line


def test_image_item_rows(qtbot, tmp_path):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    data = np.arange(6, dtype=float).reshape(2, 3)
    widget.getPlotItem().addItem(pg.ImageItem(data, axisOrder="row-major"))
    export.plot_data_csv(widget, tmp_path / "img.csv")
    rows = _read_csv(tmp_path / "img.csv")
    assert len(rows) == 6
    assert all(float(r["value"]) == data[int(r["y"]), int(r["x"])] for r in rows)


# --- clipboard, PDF -------------------------------------------------------------------------------------

def test_clipboard_gets_the_2x_image(breakdown):
    QtGui.QGuiApplication.clipboard().clear()
    export.copy_widget_image(breakdown)
    image = QtGui.QGuiApplication.clipboard().image()
    assert not image.isNull()
    assert (image.width(), image.height()) == (2 * breakdown.width(), 2 * breakdown.height())


def test_pdf_one_page_per_image(breakdown, tmp_path):
    images = [export.render_widget(breakdown, 2), export.render_widget(breakdown, 1)]
    pages = export.export_pdf(images, tmp_path / "deck.pdf")
    data = (tmp_path / "deck.pdf").read_bytes()
    assert data.startswith(b"%PDF") and pages == 2
    assert len(re.findall(rb"/Type\s*/Page(?!s)", data)) == 2
    with pytest.raises(ValueError):
        export.export_pdf([], tmp_path / "empty.pdf")


# --- shipped decks render -------------------------------------------------------------------------------

def test_every_shipped_deck_slide_renders(breakdown, png_info, tmp_path):
    files = sorted(DECK_DIR.glob("*.json"))
    assert files
    for path in files:
        _, deck = session_file.load(path)
        for i, slide in enumerate(deck.slides):
            r = evaluate(slide.scenario)
            breakdown.update_results(r)
            out = tmp_path / f"{path.stem}-{i}.png"
            export.export_widget_png(breakdown, out, scale=1)
            assert png_info(out)[2] > 20, (path.name, slide.title)
            shown = [t.toPlainText() for t in breakdown.memory_bar.labels if t.isVisible()]
            assert shown and not any("nan" in t.lower() for t in shown), (path.name, slide.title)


# --- references dock ------------------------------------------------------------------------------------

@pytest.fixture
def refs(shown_panel):
    return shown_panel(ReferencesPanel)


def test_references_table_lists_every_reference(refs):
    assert refs.row_count() == len(references()) > 10
    assert refs.keys() == list(references())


def test_used_by_is_computed_from_presets_formulas_and_panels(refs):
    for name, formula in FORMULAS.items():
        assert f"formula: {name}" in refs.used_by(formula.source)
    h100 = hardware_presets()["h100-sxm"]
    datasheet = [u for u in refs.used_by("nvidia-h100-datasheet") if u.startswith(f"hardware: {h100.name}")]
    assert len(datasheet) == 1 and "hbm_bw" in datasheet[0]
    assert not any(u.startswith("panel:") for u in refs.used_by("zero"))
    refs.set_panel_citations({"Breakdown": ["zero", "korthikanti2022"]})
    assert "panel: Breakdown" in refs.used_by("zero")
    assert "panel: Breakdown" in refs.used_by("korthikanti2022")
    assert refs.row_count() == len(references())


def test_filter(refs):
    refs.filter("rajbhandari")
    shown = refs.keys()
    assert "zero" in shown and 0 < refs.row_count() < len(references())
    assert all("rajbhandari" in references()[k].authors.lower() for k in shown)
    refs.filter("1910.02054")  # arXiv id
    assert refs.keys() == ["zero"]
    refs.filter("no reference has this text")
    assert refs.row_count() == 0
    refs.filter("")
    assert refs.row_count() == len(references())


def test_copy_citation_button_and_ctrl_c(refs, qtbot):
    clipboard = QtGui.QGuiApplication.clipboard()
    clipboard.clear()
    assert refs.copy_selected() == ""  # nothing selected: nothing copied
    assert not refs.copy_button.isEnabled()
    assert refs.select("flashattention")
    qtbot.mouseClick(refs.copy_button, QtCore.Qt.MouseButton.LeftButton)
    expected = references()["flashattention"].citation()
    assert clipboard.text() == expected and "2205.14135" in expected
    refs.select("zero")
    refs.table.setFocus()
    qtbot.keyClick(refs.table, QtCore.Qt.Key.Key_C, QtCore.Qt.KeyboardModifier.ControlModifier)
    assert clipboard.text() == references()["zero"].citation()


def test_current_scenario_sources_are_bold_and_focus_links(refs, results, qtbot):
    refs.update_results(results)
    key_col = refs.model.index(list(references()).index("nvidia-h100-datasheet"), 0)
    assert refs.model.itemFromIndex(key_col).font().bold()
    other = refs.model.index(list(references()).index("rocm-mi300"), 0)
    assert not refs.model.itemFromIndex(other).font().bold()
    refs.set_focus("reference", "vllm")
    assert refs.selected_key() == "vllm"
    with qtbot.waitSignal(refs.focusRequested) as blocker:
        refs.table.selectRow(refs.keys().index("dgc"))
    assert blocker.args == ["reference", "dgc"]


def test_references_controls_are_accessible(refs):
    for widget in (refs.search, refs.copy_button, refs.table):
        assert widget.toolTip() and widget.accessibleName()
    assert refs.table.font().pointSize() >= 11 and refs.search.font().pointSize() >= 11
