"""Every text a panel draws reads in every theme: WCAG 2.1 contrast of at least 4.5:1 between each text
item's rendered colour and what it is drawn on (plot background, its own fill, or the window), for plot
titles, axis labels and ticks, legends, labels, rich-text captions, check boxes and list items."""

from __future__ import annotations

import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.defaults import default_scenario
from trinity_desktop.main_window import MainWindow
from trinity_desktop.store import ScenarioStore
from trinity_desktop.ui import theme
from trinity_desktop.ui.theme import CONTRAST_COLORS, MIN_TEXT_CONTRAST, contrast_ratio, text_colors_in_html

MIN_DISABLED_CONTRAST = 3.0


def _plot_problems(name, view) -> list[str]:
    bg = view.backgroundBrush().color()
    out = []

    def check(what, color, against=bg):
        color = pg.mkColor(color)
        if color.name().lower() in CONTRAST_COLORS and what.startswith("text"):
            return  # black or white chosen against the data it sits on (heatmap cells)
        ratio = contrast_ratio(color, against)
        if ratio < MIN_TEXT_CONTRAST:
            out.append(f"{name}: {what} {color.name()} on {pg.mkColor(against).name()} = {ratio:.2f}")

    for item in view.scene().items():
        if not item.isVisible() or not item.isVisibleTo(None) if hasattr(item, "isVisibleTo") else False:
            continue
        if isinstance(item, pg.AxisItem) and item.style.get("showValues", True) and item.isVisible():
            check(f"axis {item.orientation} ticks", item.textPen().color())
            for c in text_colors_in_html(item.label.toHtml() if item.label.isVisible() else ""):
                check(f"axis {item.orientation} label", c)
        elif isinstance(item, pg.LabelItem) and item.text:
            for c in text_colors_in_html(item.item.toHtml()):
                check(f"label {item.text[:30]!r}", c)
        elif isinstance(item, pg.TextItem) and item.toPlainText().strip():
            fill = item.fill
            against = fill.color() if fill.style() != QtCore.Qt.BrushStyle.NoBrush else bg
            check(f"text {item.toPlainText()[:30]!r}", item.color, against)
            for c in text_colors_in_html(item.textItem.toHtml()):
                check(f"text {item.toPlainText()[:30]!r}", c, against)
    return out


def _widget_problems(name, panel) -> list[str]:
    out = []
    for label in panel.findChildren(QtWidgets.QLabel):
        if not label.isVisible() or not label.text().strip():
            continue
        window = label.palette().color(label.backgroundRole())
        fg = label.palette().color(label.foregroundRole())
        if contrast_ratio(fg, window) < MIN_TEXT_CONTRAST:
            out.append(f"{name}: label {label.text()[:30]!r} {fg.name()} on {window.name()}")
        for c in text_colors_in_html(label.text()):
            if contrast_ratio(c, window) < MIN_TEXT_CONTRAST:
                out.append(f"{name}: label {label.text()[:30]!r} inline {c} on {window.name()}"
                           f" = {contrast_ratio(c, window):.2f}")
    for box in panel.findChildren(QtWidgets.QAbstractButton):
        if box.isVisible() and box.text():
            fg, bg = box.palette().color(box.foregroundRole()), box.palette().color(box.backgroundRole())
            # WCAG 1.4.3 exempts inactive controls; a disabled one is drawn dimmer on purpose, still at 3:1
            if contrast_ratio(fg, bg) < (MIN_TEXT_CONTRAST if box.isEnabled() else MIN_DISABLED_CONTRAST):
                out.append(f"{name}: button {box.text()[:30]!r} {fg.name()} on {bg.name()}")
    for lst in panel.findChildren(QtWidgets.QListWidget):
        if not lst.isVisible():
            continue
        base = lst.palette().color(QtGui.QPalette.ColorRole.Base)
        for i in range(lst.count()):
            brush = lst.item(i).foreground()
            fg = brush.color() if brush.style() != QtCore.Qt.BrushStyle.NoBrush else lst.palette().color(
                QtGui.QPalette.ColorRole.Text)
            if contrast_ratio(fg, base) < MIN_TEXT_CONTRAST:
                out.append(f"{name}: list item {lst.item(i).text()[:30]!r} {fg.name()} on {base.name()}")
    return out


@pytest.fixture(scope="module")
def window():
    from trinity_desktop.app import ensure_application, tear_down

    ensure_application()
    win = MainWindow(ScenarioStore(default_scenario()), None)
    win.resize(1920, 1080)
    win.show()
    QtWidgets.QApplication.processEvents()
    yield win
    win.set_theme("light")
    tear_down(win)


@pytest.mark.parametrize("name", ["light", "dark", "high-contrast"])
def test_every_panel_text_reads_in_every_theme(window, name):
    window.set_theme(name)
    assert theme.current_theme() == name
    problems = []
    for dock_name, dock in window.docks.items():
        dock.show()
        dock.raise_()
        QtWidgets.QApplication.processEvents()
        window.refresh_all()
        window.store.set_scenario(window.store.scenario.replace(seq_len=window.store.scenario.seq_len))
        panel = window.panels[dock_name]
        if hasattr(panel, "update_results"):
            panel.update_results(window.store.results)
        window._restyle_for_theme()
        QtWidgets.QApplication.processEvents()
        for view in panel.findChildren(pg.GraphicsView):
            if view.isVisible() and view.scene() is not None:
                problems += _plot_problems(dock_name, view)
        problems += _widget_problems(dock_name, panel)
    assert problems == [], "\n".join(sorted(set(problems))[:60])


@pytest.mark.parametrize("name", sorted(theme.THEMES))
def test_a_disabled_button_looks_disabled_in_every_theme(qtbot, name):
    """Seen after a theme switch: Cancel (disabled while no search runs) drawn like an enabled button."""
    try:
        theme.apply_theme(name)
        button = QtWidgets.QPushButton("Cancel")
        qtbot.addWidget(button)
        button.setEnabled(False)
        pal = button.palette()
        group, role = QtGui.QPalette.ColorGroup, QtGui.QPalette.ColorRole
        off, on = pal.color(group.Disabled, role.ButtonText), pal.color(group.Active, role.ButtonText)
        background = pal.color(group.Disabled, role.Button)
        assert off != on
        assert MIN_DISABLED_CONTRAST <= contrast_ratio(off, background) < contrast_ratio(on, background)
    finally:
        theme.apply_theme("light")


def test_a_legend_marker_keeps_the_colour_of_what_it_keys():
    """A key's marker is the data's own colour in every theme (the flow's sky-blue "data load" square was
    darkened to steel blue on the light theme, so it matched the "communication" square, not its bars);
    the key's words are still made readable."""
    from trinity_desktop.ui import plot_widgets as pw

    sky = theme.ACCENT_COLORS["sky"]
    for entry in (pw.key_entry("■", "data load", sky), pw.key_entry("●", "HBM", sky, marker_pt=13)):
        assert theme.readable_html(entry, "#FFFFFF") == entry
    words = f"<span style='color:{sky}'>a sky-blue sentence</span>"
    assert theme.readable_html(words, "#FFFFFF") != words


def test_a_theme_change_redraws_the_markers_a_panel_colours_as_it_draws(window):
    """The roofline's ★ is outlined in the plot's text colour when it is drawn; after light → dark it kept the
    black outline (invisible on the dark plot) until the next edit. A theme change now redraws what is shown."""
    window.set_theme("light")
    dock = window.docks["roofline"]
    dock.show()
    dock.raise_()
    QtWidgets.QApplication.processEvents()
    star = window.panels["roofline"].sweep_layer.gemm_marker
    for name in ("dark", "light", "high-contrast"):
        window.set_theme(name)
        QtWidgets.QApplication.processEvents()
        outline = pg.mkPen(star.opts["symbolPen"]).color().name()
        assert outline == pg.mkColor(theme.plot_text_color()).name(), name
    window.set_theme("light")
