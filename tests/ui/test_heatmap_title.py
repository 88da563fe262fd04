"""The heatmap's finding title reads whole at every width: wrapped, never shortened with "…" (issue #21: it was
cut on a slide's zoom, where its one line fitted to the pixel and was elided all the same)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6 import QtGui, QtWidgets  # noqa: E402

from trinity_desktop.model.inputs import presets  # noqa: E402
from trinity_desktop.model.views.workloads import evaluate_library  # noqa: E402
from trinity_desktop.ui import plot_widgets as pw  # noqa: E402
from trinity_desktop.ui.heatmap_panel import HeatmapPanel  # noqa: E402


def test_a_line_that_fits_to_the_pixel_is_not_shortened(qtbot):
    metrics = QtGui.QFontMetrics(pw.font(14))
    text = "Bandwidth binds 8 of 13 workloads on NVIDIA H100 SXM 80GB"
    width = metrics.horizontalAdvance(text)
    for limit in (width, width + 0.33, width + 0.9):
        assert pw._wrap(text, metrics, limit, 3) == ([text], False)
    lines, cut = pw._wrap(text, metrics, width - 1, 3)   # a pixel less: two lines, whole words, nothing cut
    assert not cut and len(lines) == 2 and " ".join(lines) == text


def test_the_heatmap_title_wraps_whole_at_every_width(qtbot):
    hw = presets.hardware_presets()["h100-sxm"]
    panel = HeatmapPanel()
    rows = evaluate_library(hw)
    panel.update_rows(rows, hw.name)
    panel.resize(900, 600)
    panel.show()
    whole = pw.title_text(panel.plot)
    binds = [r.results.bottleneck for r in rows]
    most = max(binds.count(b) for b in binds)  # the finding: the resource that binds the most workloads (a tie
    tied = [b for b in set(binds) if binds.count(b) == most]   # names one of those tied, whatever the set order)
    assert any(whole.lower().startswith(f"{b} binds {most} of {len(rows)}") for b in tied) and hw.name in whole
    for width in range(380, 1000, 9):
        panel.resize(width, 600)
        QtWidgets.QApplication.processEvents()
        pw.fit_plot_text(panel.plot)
        shown = panel.plot.titleLabel.text
        assert "…" not in shown, f"at {width} px: {shown!r}"
        assert " ".join(shown.split("<br>")) == pw.html_escape(whole)
    panel.close()
