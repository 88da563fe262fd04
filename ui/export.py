"""Export helpers: a widget to PNG at 2-3x (crisp text), a widget or a plot to SVG, a plot's data or a table
to CSV, an image to the clipboard, images to a PDF (one page each). Qt and pyqtgraph only; knows nothing about
the app or a particular panel.

`export_widget_svg` draws the whole panel (every plot of a multi-plot panel, with axes, labels and legends as
they are laid out) through QSvgGenerator, so nothing is cut at a plot's bounds. CSV series are named after what
they are: the plot's legend entry, else the item's name, else the attribute of the panel holding the item
(`item_names`), never after the item's class.

pyqtgraph's ImageExporter renders at the logical size; `export_widget_png` instead renders the widget into a
QImage whose device pixel ratio is the scale, so Qt draws text and lines at full resolution.
"""

from __future__ import annotations

import csv
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (registers SVGExporter on pg.exporters)
from PySide6 import QtCore, QtGui, QtWidgets

CSV_COLUMNS = ("series", "kind", "x", "y", "x0", "x1", "y0", "y1", "width", "height", "value")
MAX_SCALE = 4


def render_widget(widget: QtWidgets.QWidget, scale: int = 2) -> QtGui.QImage:
    """The widget drawn into a QImage of exactly scale x its size (device pixel ratio = scale)."""
    if isinstance(scale, bool) or not isinstance(scale, int) or not 1 <= scale <= MAX_SCALE:
        raise ValueError(f"scale = {scale!r} is not allowed: a whole number from 1 to {MAX_SCALE}")
    size = widget.size()
    if size.width() < 1 or size.height() < 1:
        raise ValueError(f"the widget has no area to render ({size.width()} x {size.height()} px)")
    image = QtGui.QImage(size.width() * scale, size.height() * scale, QtGui.QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(scale)
    image.fill(widget.palette().color(QtGui.QPalette.ColorRole.Window))
    painter = QtGui.QPainter(image)
    try:
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing)
        widget.render(painter, QtCore.QPoint(0, 0), QtGui.QRegion(),
                      QtWidgets.QWidget.RenderFlag.DrawChildren | QtWidgets.QWidget.RenderFlag.DrawWindowBackground)
    finally:
        painter.end()
    return image


def export_widget_png(widget: QtWidgets.QWidget, path: str | os.PathLike, scale: int = 2) -> QtCore.QSize:
    """Save the widget as a PNG of scale x its size, written atomically (png_output); returns the pixel size."""
    from trinity_desktop.png_output import save_png

    image = render_widget(widget, scale)
    save_png(image, path)
    return image.size()


def copy_widget_image(widget: QtWidgets.QWidget, scale: int = 2) -> QtGui.QImage:
    """Put the widget's image (scale x its size) on the clipboard; returns the image."""
    image = render_widget(widget, scale)
    QtGui.QGuiApplication.clipboard().setImage(image)
    return image


def _plot_item(plot) -> pg.PlotItem:
    if isinstance(plot, pg.PlotWidget):
        return plot.getPlotItem()
    if isinstance(plot, pg.PlotItem):
        return plot
    raise TypeError(f"expected a pyqtgraph PlotItem or PlotWidget, not {type(plot).__name__}")


def _close_paths_explicitly(d: str) -> str:
    """Replace each SVG close-path command (Z) by a line back to its subpath's start.

    Qt >= 6.x writes closed paths as "M0,0 L10,0 L10,5 Z"; pyqtgraph 0.14's SVGExporter expects every token
    to be a coordinate pair and raises on the bare "Z". The outline drawn is the same.
    """
    out, start = [], None
    for token in d.split():
        closes = token[-1] in "Zz"
        body = token[:-1] if closes else token
        if body:
            if body[0] in "Mm":
                start = body[1:]
            out.append(body)
        if closes and start is not None:
            out.append("L" + start)
    return " ".join(out)


def export_plot_svg(plot, path: str | os.PathLike) -> Path:
    """Save a plot (PlotItem or PlotWidget) as SVG with pyqtgraph's SVGExporter (closed paths made explicit)."""
    item = _plot_item(plot)
    module = sys.modules[pg.exporters.SVGExporter.__module__]
    original = module.correctCoordinates

    def correct(node, defs, svg_item, options):
        for element in node.getElementsByTagName("path"):
            d = element.getAttribute("d")
            if "Z" in d or "z" in d:
                element.setAttribute("d", _close_paths_explicitly(d))
        return original(node, defs, svg_item, options)

    module.correctCoordinates = correct
    try:
        pg.exporters.SVGExporter(item).export(fileName=str(path))
    finally:
        module.correctCoordinates = original
    return Path(path)


# ---------------------------------------------------------------------------------------------------------
# plot data -> rows
# ---------------------------------------------------------------------------------------------------------

def export_widget_svg(widget: QtWidgets.QWidget, path: str | os.PathLike, title: str = "") -> Path:
    """Save the whole widget as SVG (vector paths and text), every child plot included."""
    from PySide6.QtSvg import QSvgGenerator

    size = widget.size()
    if size.width() < 1 or size.height() < 1:
        raise ValueError(f"the widget has no area to export ({size.width()} x {size.height()} px)")
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(size)
    generator.setViewBox(QtCore.QRect(0, 0, size.width(), size.height()))
    generator.setTitle(title or widget.accessibleName() or "Trinity Desktop panel")
    generator.setDescription("Exported by Trinity Desktop")
    painter = QtGui.QPainter()
    if not painter.begin(generator):
        raise OSError(f"could not write the SVG {path}")
    try:
        widget.render(painter, QtCore.QPoint(0, 0), QtGui.QRegion(),
                      QtWidgets.QWidget.RenderFlag.DrawChildren | QtWidgets.QWidget.RenderFlag.DrawWindowBackground)
    finally:
        painter.end()
    return Path(path)


def _label(attribute: str) -> str:
    return attribute.strip("_").replace("_item", "").replace("_", " ").strip()


def item_names(owner, depth: int = 0) -> dict[int, str]:
    """id(item) -> a readable series name for the pyqtgraph items `owner` (a panel) holds: legend entries of
    its plots first, then the attribute (or dict key / list position) it keeps the item under."""
    names: dict[int, str] = {}
    for attribute, value in vars(owner).items():
        helper = not isinstance(value, (QtCore.QObject, type)) and hasattr(value, "__dict__") and depth < 1
        if helper:  # a drawing helper (e.g. a stacked bar) holding items: "<helper> <item>"
            for key, name in item_names(value, depth + 1).items():
                inner = name if name not in ("bar", "bars") else ""
                names.setdefault(key, f"{_label(attribute)} {inner}".strip())
        elif isinstance(value, pg.GraphicsObject):
            names.setdefault(id(value), _label(attribute))
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, pg.GraphicsObject):
                    names.setdefault(id(item), f"{_label(attribute)} {key}".strip())
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                if isinstance(item, pg.GraphicsObject):
                    names.setdefault(id(item), f"{_label(attribute)} {i + 1}".strip())
    if isinstance(owner, QtWidgets.QWidget):
        for view in owner.findChildren(pg.GraphicsView):
            scene = view.scene()
            for legend in [it for it in (scene.items() if scene is not None else [])
                           if isinstance(it, pg.LegendItem)]:
                for sample, label in legend.items:
                    if getattr(sample, "item", None) is not None and label.text:
                        names[id(sample.item)] = label.text
    return names


def plain_text(html: str) -> str:
    """A plot title without its HTML markup (line breaks become spaces)."""
    import re

    text = re.sub(r"<br\s*/?>", " ", html or "")
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").strip()


def table_csv(view: QtWidgets.QAbstractItemView, path: str | os.PathLike) -> int:
    """Write what a table view shows (its header and rows, as displayed) to CSV; returns the data rows."""
    model = view.model()
    columns = range(model.columnCount())
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([model.headerData(c, QtCore.Qt.Orientation.Horizontal) or f"column {c + 1}"
                         for c in columns])
        for r in range(model.rowCount()):
            writer.writerow([model.index(r, c).data() or "" for c in columns])
    return model.rowCount()


def _name(item, index: int, names: dict[int, str] | None = None) -> str:
    if names and id(item) in names:
        return names[id(item)]
    name = None
    getter = getattr(item, "name", None)
    if callable(getter):
        try:
            name = getter()
        except (TypeError, AttributeError):
            name = None
    if not name and hasattr(item, "opts") and isinstance(item.opts, dict):
        name = item.opts.get("name")
    if not name and hasattr(item, "objectName"):
        name = item.objectName()
    if name:
        return str(name)
    kind = {pg.BarGraphItem: "bars", pg.ImageItem: "image", pg.ScatterPlotItem: "points",
            pg.InfiniteLine: "line"}.get(type(item), "curve")
    return f"{kind} {index + 1}"


def _arr(values) -> np.ndarray:
    return np.asarray([] if values is None else values, dtype=float).ravel()


def _bar_rows(item: pg.BarGraphItem, name: str) -> list[dict]:
    """One row per bar; a bar item whose bars are named segments (`segment_names`) names each row after its
    segment."""
    x0, y0, x1, y1 = (np.ravel(a) for a in item._getNormalizedCoords())
    x0, y0, x1, y1 = np.broadcast_arrays(x0, y0, x1, y1)
    segments = list(getattr(item, "segment_names", []) or [])
    rows = []
    for i, (a, b, c, d) in enumerate(zip(x0, y0, x1, y1, strict=True)):
        series = f"{name}: {segments[i]}" if i < len(segments) else name
        rows.append({"series": series, "kind": "bar", "x": (a + c) / 2, "y": d, "x0": a, "x1": c, "y0": b,
                     "y1": d, "width": c - a, "height": d - b})
    return rows


def plot_rows(plot, names: dict[int, str] | None = None) -> list[dict]:
    """The data of every visible data item of a plot, as rows with the columns of CSV_COLUMNS.

    PlotDataItem (its original data, before log transforms), PlotCurveItem and ScatterPlotItem give x, y;
    BarGraphItem gives x (centre), y (top), x0, x1, y0, y1, width, height; InfiniteLine gives x (vertical) or
    y (horizontal); ImageItem gives one row per pixel: x = column, y = row, value.
    """
    item_list = [it for it in _plot_item(plot).items if it.isVisible()]
    rows: list[dict] = []
    for index, item in enumerate(item_list):
        name = _name(item, index, names)
        if isinstance(item, pg.PlotDataItem):
            x, y = item.getOriginalDataset() if hasattr(item, "getOriginalDataset") else (item.xData, item.yData)
            kind = "line" if item.opts.get("pen") is not None else "points"
            rows += [{"series": name, "kind": kind, "x": a, "y": b} for a, b in zip(_arr(x), _arr(y), strict=True)]
        elif isinstance(item, (pg.PlotCurveItem, pg.ScatterPlotItem)):
            x, y = item.getData()
            kind = "line" if isinstance(item, pg.PlotCurveItem) else "points"
            rows += [{"series": name, "kind": kind, "x": a, "y": b} for a, b in zip(_arr(x), _arr(y), strict=True)]
        elif isinstance(item, pg.BarGraphItem):
            try:
                rows += _bar_rows(item, name)
            except Exception:  # pyqtgraph raises a bare Exception for a bar item without data
                continue
        elif isinstance(item, pg.InfiniteLine):
            pos = item.value()
            angle = item.angle % 180
            if angle == 0:
                rows.append({"series": name, "kind": "horizontal line", "y": float(pos)})
            elif angle == 90:
                rows.append({"series": name, "kind": "vertical line", "x": float(pos)})
        elif isinstance(item, pg.ImageItem):
            image = item.image
            if image is None:
                continue
            data = np.asarray(image, dtype=float)
            if data.ndim != 2:
                continue
            # pyqtgraph's default image axis order is column-major: image[x, y]
            col_major = getattr(item, "axisOrder", pg.getConfigOption("imageAxisOrder")) == "col-major"
            for i, j in np.ndindex(data.shape):
                x, y = (i, j) if col_major else (j, i)
                rows.append({"series": name, "kind": "image", "x": x, "y": y, "value": data[i, j]})
    return rows


def _cell(value) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        return value
    value = float(value)
    if not math.isfinite(value):
        return ""
    return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def plot_data_csv(plot, path: str | os.PathLike) -> int:
    """Write the data behind a plot to CSV (columns: CSV_COLUMNS); returns the number of data rows."""
    rows = plot_rows(plot)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_COLUMNS)
        for row in rows:
            writer.writerow([_cell(row.get(col)) for col in CSV_COLUMNS])
    return len(rows)


# ---------------------------------------------------------------------------------------------------------
# PDF
# ---------------------------------------------------------------------------------------------------------

def export_pdf(images: Sequence[QtGui.QImage], path: str | os.PathLike, dpi: int = 192) -> int:
    """One page per image, each page the image's own size (at `dpi`), with Qt's QPdfWriter; returns pages."""
    images = list(images)
    if not images:
        raise ValueError("no images to write: the PDF needs at least one page")
    writer = QtGui.QPdfWriter(str(path))
    writer.setResolution(dpi)
    writer.setCreator("Trinity Desktop")
    writer.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))

    def page_size(image: QtGui.QImage) -> QtGui.QPageSize:
        points = QtCore.QSizeF(image.width() * 72.0 / dpi, image.height() * 72.0 / dpi)
        return QtGui.QPageSize(points, QtGui.QPageSize.Unit.Point, "", QtGui.QPageSize.SizeMatchPolicy.ExactMatch)

    writer.setPageSize(page_size(images[0]))
    painter = QtGui.QPainter()
    if not painter.begin(writer):
        raise OSError(f"could not write the PDF {path}")
    try:
        for n, image in enumerate(images):
            if n:
                writer.setPageSize(page_size(image))
                writer.newPage()
            target = QtCore.QRectF(0, 0, painter.device().width(), painter.device().height())
            painter.drawImage(target, image)
    finally:
        painter.end()
    return len(images)
