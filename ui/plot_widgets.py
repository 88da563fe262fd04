"""Shared pyqtgraph helpers for the panels: legible plots, stacked bars, hover read-outs, rectangles.

Nothing here knows about a particular panel; panels build on these and keep the items they create.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.ui import theme
from trinity_desktop.ui.axes import LogSIAxis, WrappedLabelAxis, si_decade, wrapped_label_axes  # noqa: F401 (pw.*)

TITLE_SIZE = "14pt"
TITLE_LINES = 3       # a finding's sentence wraps onto at most three lines
LABEL_SIZE = "12pt"
READOUT_ALPHA = 235   # the hover box: the plot background, nearly opaque


def font(point_size: int | None = None, bold: bool = False) -> QtGui.QFont:
    f = theme.axis_font(max(point_size or theme.base_font_size(), theme.base_font_size()))
    f.setBold(bold)
    return f


def style_plot(plot: pg.PlotItem, title: str = "", left: str = "", bottom: str = "") -> None:
    """Projector-legible fonts (>= 11 pt) on the ticks, axis labels and title; no SI auto-prefixing. The title
    and the axis labels fit the plot's size (`fit_plot_text`); the side axes make room for a wrapped label."""
    wrapped_label_axes(plot)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.setStyle(tickFont=font(), tickTextOffset=6)
        axis.enableAutoSIPrefix(False)
        axis.setTextPen(pg.mkPen(theme.plot_text_color()))   # the theme's, so a re-style never darkens it
        axis.setPen(pg.mkPen(theme.plot_text_color()))
    if left:
        set_axis_label(plot, "left", left)
    if bottom:
        set_axis_label(plot, "bottom", bottom)
    if title:
        set_title(plot, title)
    else:
        _watch_size(plot)
        fit_plot_text(plot)


def set_title(plot: pg.PlotItem, html: str, size: str = TITLE_SIZE, color: str | None = None) -> None:
    """Set a plot's title (HTML-escaped text); it wraps at whole words (never elided) to fit the plot width
    (the full title is the tooltip when cut), and never widens the plot."""
    plot._full_title = (html, size, color or theme.plot_text_color())
    if not getattr(plot, "_title_spans", False):   # the title spans the axes' columns too: a sentence fits
        plot.layout.removeItem(plot.titleLabel)
        plot.layout.addItem(plot.titleLabel, 0, 0, 1, 3)
        plot._title_spans = True
    _watch_size(plot)
    fit_plot_text(plot)


def title_text(plot: pg.PlotItem) -> str:
    """The plot's whole title as plain text (what `set_title` was given, before any wrapping)."""
    import html as html_module

    return html_module.unescape(getattr(plot, "_full_title", ("",))[0])


def set_axis_label(plot: pg.PlotItem, side: str, text: str, color: str | None = None) -> None:
    """Set an axis label (plain text) wrapped at whole words to the axis length (the full text is its tooltip)."""
    labels = getattr(plot, "_full_labels", {})
    labels[side] = (text, {"font-size": LABEL_SIZE} | ({"color": color} if color else {}))
    plot._full_labels = labels
    plot.getAxis(side)._shown_label = None
    _watch_size(plot)
    fit_plot_text(plot)


def fit_axis_label(axis: pg.AxisItem, text: str) -> None:
    """Keep an axis label (plain text) wrapped at whole words to the axis length as the axis is resized (for axes
    outside a PlotItem, e.g. a colour bar's); the full text is the axis tooltip when wrapped."""
    def fit() -> None:
        length = axis.geometry().height() if axis.orientation in ("left", "right") else axis.geometry().width()
        metrics = QtGui.QFontMetrics(font(int(float(LABEL_SIZE.rstrip("pt")))))
        lines, _cut = _wrap(text, metrics, max(int(length or 400) - 12, 10), AXIS_LABEL_LINES)
        shown = "<br>".join(html_escape(line) for line in lines)   # wrapped at whole words, never elided
        if shown != getattr(axis, "_shown_label", None):
            axis._shown_label = shown
            axis.setLabel(shown, **{"font-size": LABEL_SIZE})
            axis.resizeEvent()   # re-centre the new text on the axis (pyqtgraph does so only on a resize)
            axis.setToolTip(text if len(lines) > 1 else "")

    axis.geometryChanged.connect(fit)
    fit()


class NextPass(QtCore.QObject):
    """Calls `fn` once at the next pass of the event loop however often `poke` is called before it (a 0 ms
    single-shot timer): a burst of resizes (a dock dragged, a window laid out) is laid out once, at its last size."""

    def __init__(self, owner: QtCore.QObject, fn: Callable[[], None]):
        super().__init__(owner)
        self._fn = fn
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(fn)

    def poke(self, *_args) -> None:
        self._timer.start()


class SizeWatcher(QtCore.QObject):
    """Calls `fit` when `items` change size, coalesced so that a layout whose fit changes its own size cannot
    loop: a size equal to the last one fitted is ignored, a poke during the fit is deferred, and a size fitted
    in the last SETTLE_MS again (an oscillation: the fit wraps a title, an axis widens, the view narrows, the
    title unwraps...) waits until the layout settles, then is fitted once. A resize-relayout feedback loop of
    this kind stopped every timer of the window after about 4,500 random actions."""

    SETTLE_MS = 300

    def __init__(self, owner: QtCore.QObject, items: Sequence[QtWidgets.QGraphicsWidget], fit: Callable[[], None]):
        super().__init__(owner)
        self._items, self._fit = tuple(items), fit
        self._last: tuple | None = None
        self._recent: dict[tuple, float] = {}
        self._fitting = False
        self._settle = QtCore.QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(self.SETTLE_MS)
        self._settle.timeout.connect(self._settled)
        self._next = NextPass(self, self._poked)

    def _size(self) -> tuple:
        return tuple(round(v) for item in self._items for v in (item.size().width(), item.size().height()))

    def poke(self, *_args) -> None:
        """A size change: looked at on the event loop's next pass (`NextPass`), once for a burst of them."""
        self._next.poke()

    def _poked(self) -> None:
        key = self._size()
        if key == self._last:
            return
        now = QtCore.QDateTime.currentMSecsSinceEpoch()
        self._recent = {k: t for k, t in self._recent.items() if now - t < self.SETTLE_MS}
        if self._fitting or key in self._recent:
            if not self._settle.isActive():
                self._settle.start()
            return
        self._run(key, now)

    def _run(self, key: tuple, now: int) -> None:
        self._fitting = True
        try:
            self._fit()
        finally:
            self._fitting = False
        self._last, self._recent[key] = key, now

    def _settled(self) -> None:
        key = self._size()
        if key != self._last:
            now = QtCore.QDateTime.currentMSecsSinceEpoch()
            self._recent = {}
            self._run(key, now)


def _watch_size(plot: pg.PlotItem) -> None:
    """Refit the plot's texts when it is resized (coalesced: `SizeWatcher`); its title never asks for more
    width than the view has."""
    if getattr(plot, "_fits_text", False):
        return
    plot._fits_text = True
    watcher = SizeWatcher(plot, (plot, plot.getViewBox()), lambda: fit_plot_text(plot))
    plot.geometryChanged.connect(watcher.poke)
    plot.getViewBox().sigResized.connect(watcher.poke)   # axes can narrow the view alone
    label = plot.titleLabel
    measured = label.updateMin

    def height_only() -> None:   # pyqtgraph's LabelItem makes its text width the minimum width
        measured()
        label.setMinimumWidth(0)
        label._sizeHint[QtCore.Qt.SizeHint.MinimumSize] = (0, label._sizeHint[QtCore.Qt.SizeHint.MinimumSize][1])
        label.updateGeometry()

    label.updateMin = height_only


def _fit_scene_to_view(plot: pg.PlotItem) -> None:
    """After a minimum size shrank, lay the view's central item out to the view again (pyqtgraph only does so
    on a resize of the view)."""
    scene = plot.scene()
    for view in scene.views() if scene is not None else ():
        central = getattr(view, "centralWidget", None)
        if central is not None and central.geometry().width() > view.range.width() + 0.5:
            central.setGeometry(view.range)


UNITS = frozenset("s ms µs ns h GB TB MB kB GiB TiB MiB B W kW J mJ kWh % × x GB/s TB/s MB/s FLOP/s TFLOP/s PFLOP/s "
                  "tokens tokens/s bits".split())
_NUMBER = re.compile(r"[−+-]?[\d.,]+[kMGT]?$")


def _words(text: str) -> list[str]:
    """The words a title wraps between, a number and its unit kept as one ("29 s", "80 GB"): a line never ends
    with a bare number whose unit starts the next."""
    words: list[str] = []
    for word in text.split():
        if words and _NUMBER.match(words[-1]) and word.rstrip(",.;:)") in UNITS:
            words[-1] += " " + word
        else:
            words.append(word)
    return words


def _wrap(text: str, metrics: QtGui.QFontMetrics, width: float, max_lines: int) -> tuple[list[str], bool]:
    """Words of `text` in at most `max_lines` lines of `width` pixels, broken only between whole words and
    never elided ("st…", "ti…" read as nothing): the last line takes every word left; (lines, cut), cut when a
    line is still wider than `width` (the full text is then the item's tooltip)."""
    width = int(width)   # whole pixels: a line that fits is never counted as cut
    lines: list[str] = []
    words = _words(text)
    while words and len(lines) < max_lines:
        line = words.pop(0)
        while words and metrics.horizontalAdvance(line + " " + words[0]) <= width:
            line += " " + words.pop(0)
        lines.append(line)
    if words and lines:
        lines[-1] = " ".join([lines[-1], *words])
    return lines, any(metrics.horizontalAdvance(line) > width for line in lines)


NARROW_AXIS_PX = 90   # a bottom axis narrower than this hides its tick labels
AXIS_LABEL_LINES = 3  # an axis label wraps onto up to three lines before anything is cut


def fit_plot_text(plot: pg.PlotItem) -> None:
    """Fit the title (TITLE_LINES at most) and the axis labels (wrapped onto up to AXIS_LABEL_LINES lines,
    never shortened) to the plot's current size; what had to be cut is the item's tooltip."""
    import html as html_module

    width = (plot.geometry().width() if getattr(plot, "_title_spans", False) else
             plot.getViewBox().geometry().width()) or 600.0   # the title's columns
    title, size, color = getattr(plot, "_full_title", ("", TITLE_SIZE, theme.plot_text_color()))
    if str(color).lower() in theme.DEFAULT_LABEL_COLORS:  # the default text colour is the theme's
        color = theme.plot_text_color()
    if title:
        plain = html_module.unescape(title)
        title_font = font(int(float(size.rstrip("pt"))))
        lines, cut = _wrap(plain, QtGui.QFontMetrics(title_font), width - 16, TITLE_LINES)
        plot.setTitle("<br>".join(html_escape(line) for line in lines), size=size, color=color)
        height = QtGui.QFontMetrics(title_font).lineSpacing() * len(lines) + 10   # pyqtgraph fixes 30 px
        plot.titleLabel.setMaximumHeight(height)
        plot.layout.setRowFixedHeight(0, height)
        plot.titleLabel.setToolTip(plain if cut else "")
    for side in ("left", "right"):   # tick labels of a short axis never touch
        axis = plot.getAxis(side) if side in plot.axes else None
        height = axis.geometry().height() if axis is not None else 0.0
        short = axis is not None and height < 160
        if axis is not None and not getattr(axis, "thinned_ticks", False) and (short or getattr(axis, "_short", False)):
            axis._short = short
            axis.setStyle(maxTextLevel=0 if short else 2)   # a short axis labels its major ticks only
    bottom = plot.getAxis("bottom") if "bottom" in plot.axes else None
    if bottom is not None:
        # pyqtgraph always draws the major tick labels, even when they overlap: a very narrow axis shows none
        # (the hover reads the values out)
        narrow = 0 < bottom.geometry().width() < NARROW_AXIS_PX
        if narrow or getattr(bottom, "_narrow", False):
            bottom._narrow = narrow
            bottom.setStyle(showValues=not narrow)
    label_font = font(int(float(LABEL_SIZE.rstrip("pt"))))
    metrics = QtGui.QFontMetrics(label_font)
    background = theme.THEMES[theme.current_theme()]["plot_bg"]
    for side, (text, style) in getattr(plot, "_full_labels", {}).items():
        axis = plot.getAxis(side)
        length = (axis.geometry().height() if side in ("left", "right") else axis.geometry().width()) or 400.0
        lines, cut = _wrap(text, metrics, max(length - 12, 10), AXIS_LABEL_LINES)   # wrapped, not shortened
        shown = "<br>".join(html_escape(line) for line in lines)
        if "color" in style:   # a label's own colour, made readable on the theme's plot background
            style = {**style, "color": theme.readable(style["color"], background)}
        if (shown, style.get("color")) != getattr(axis, "_shown_label", None):
            axis._shown_label = (shown, style.get("color"))
            # a label without its own colour keeps the axis' text colour (the theme's, set by setTextPen):
            # pyqtgraph's setLabel would otherwise replace the style and drop it
            plot.setLabel(side, shown, **({"color": axis.textPen().color().name()} | style))
            axis.resizeEvent()   # pyqtgraph centres the label on its axis only on a resize: re-centre the new text
            axis.setToolTip(text if cut else "")
    _fit_scene_to_view(plot)


def fit_legend(plot: pg.PlotItem, legend: pg.LegendItem, margin: float = 2.0) -> None:
    """Lay a legend inside the plot's view out in as few columns as let it fit the view's height (entries side
    by side when the plot is short), again whenever the view is resized."""
    vb = plot.getViewBox()

    def fit(*_) -> None:
        n = len(legend.items)
        if not n:
            return
        offset = legend.opts.get("offset") or (0, 0)
        room = vb.height() - abs(offset[1]) - margin
        for columns in range(1, n + 1):
            legend.setColumnCount(columns)
            if legend.geometry().height() <= room:
                break

    vb.sigResized.connect(fit)
    fit()


def freeze_view(plot: pg.PlotItem) -> None:
    """No accidental pan/zoom on a chart shown to an audience; ranges are set by the panel."""
    plot.setMouseEnabled(x=False, y=False)
    plot.hideButtons()
    plot.setMenuEnabled(False)
    plot.getViewBox().enableAutoRange(enable=False)


def contrast_text_color(rgb: Sequence[float]) -> str:
    """Black or white, whichever has the higher contrast on the given background."""
    lum = theme.luminance(QtGui.QColor.fromRgbF(*(min(max(c / 255.0, 0.0), 1.0) for c in rgb[:3])))
    return theme.ON_LIGHT if (lum + 0.05) / 0.05 >= 1.05 / (lum + 0.05) else theme.ON_DARK


THEME_EVENTS = (QtCore.QEvent.Type.PaletteChange, QtCore.QEvent.Type.ApplicationPaletteChange)


def is_theme_change(event: QtCore.QEvent) -> bool:
    """A panel's changeEvent got the new theme's palette: redraw what it coloured from the theme."""
    return event.type() in THEME_EVENTS


def plot_background() -> str:
    """The current theme's plot background colour."""
    return theme.THEMES[theme.current_theme()]["plot_bg"]


def secondary_text(background: str | None = None) -> str:
    """Quiet text (a detail, a comparison) that still reads at 4.5:1: the muted grey made readable on
    `background` (default: the theme's window, where labels sit); in the high-contrast theme at 12:1, light
    grey (mid-grey at 7.5:1 on black still read as faint from the back of a room)."""
    return theme.readable(theme.MUTED_COLOR, background or theme.THEMES[theme.current_theme()]["window"],
                          12.0 if theme.current_theme() == "high-contrast" else None)


def label_item(text: str = "", color: str | None = None, anchor=(0, 0.5), size: int | None = None,
               bold: bool = False) -> pg.TextItem:
    item = pg.TextItem(text, color=color or theme.plot_text_color(), anchor=anchor)
    item.setFont(font(size, bold))
    return item


class HoverReadout:
    """A hover read-out for one PlotItem: a boxed TextItem following the mouse, text from `text_at(x, y)`.

    `on_move(x, y)` and `on_leave()` let a panel emit its own signals (linked focus). The read-out hides
    when the text is empty or the mouse leaves the plot.
    """

    def __init__(self, plot: pg.PlotItem, text_at: Callable[[float, float], str],
                 on_move: Callable[[float, float], None] | None = None,
                 on_leave: Callable[[], None] | None = None, html: bool = False):
        self.plot = plot
        self.text_at = text_at
        self.on_move = on_move
        self.on_leave = on_leave
        self.html = html
        self.item = pg.TextItem("", anchor=(0, 1))
        self._recolour()
        self.item.setFont(font())
        self.item.setZValue(1000)
        self.item.setVisible(False)
        plot.addItem(self.item, ignoreBounds=True)
        self.inside = False
        plot.scene().sigMouseMoved.connect(self._moved)

    def _moved(self, scene_pos: QtCore.QPointF) -> None:
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            self.leave()
            return
        p = vb.mapSceneToView(scene_pos)
        self.inside = True
        self.show_at(p.x(), p.y())
        if self.on_move is not None:
            self.on_move(p.x(), p.y())

    def show_at(self, x: float, y: float) -> str:
        text = self.text_at(x, y)
        if not text:
            self.item.setVisible(False)
            return text
        self._recolour()
        if self.html:
            self.item.setHtml(text)
        else:
            self.item.setText(text)
        self.place(x, y)
        self.item.setVisible(True)
        return text

    def _recolour(self) -> None:
        """The current theme's text on its plot background (the theme may have changed since last shown)."""
        fill = QtGui.QColor(plot_background())
        fill.setAlpha(READOUT_ALPHA)
        self.item.fill = pg.mkBrush(fill)
        self.item.border = pg.mkPen(theme.plot_text_color())
        self.item.setColor(theme.plot_text_color())

    def place(self, x: float, y: float, offset: float = 14.0) -> None:
        """Put the box beside the cursor (data x, y), flipped and clamped so it stays inside the view."""
        vb = self.plot.getViewBox()
        rect = vb.sceneBoundingRect()
        cursor = vb.mapViewToScene(QtCore.QPointF(x, y))
        br = self.item.textItem.boundingRect()
        w, h = br.width(), br.height()
        left = cursor.x() + offset
        if left + w > rect.right():
            left = cursor.x() - offset - w
        left = max(rect.left(), min(left, rect.right() - w))
        top = cursor.y() + offset
        if top + h > rect.bottom():
            top = cursor.y() - offset - h
        top = max(rect.top(), min(top, rect.bottom() - h))
        self.item.setAnchor((0, 0))
        self.item.setPos(vb.mapSceneToView(QtCore.QPointF(left, top)))

    def leave(self) -> None:
        self.item.setVisible(False)
        if self.inside:
            self.inside = False
            if self.on_leave is not None:
                self.on_leave()


class LeaveFilter(QtCore.QObject):
    """Calls `callback` when the watched widget gets a Leave event (mouse left the plot widget)."""

    def __init__(self, widget, callback: Callable[[], None]):
        super().__init__(widget)
        self.callback = callback
        widget.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt name)
        if event.type() == QtCore.QEvent.Type.Leave:
            self.callback()
        return False


def rect_outline_points(rects: Sequence[tuple[float, float, float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """Point arrays for PlotCurveItem(connect='pairs') drawing the outline of each (x, y, w, h) rectangle."""
    xs, ys = [], []
    for x, y, w, h in rects:
        corners = [(x, y), (x + w, y), (x + w, y + h), (x, y + h), (x, y)]
        for (ax, ay), (bx, by) in zip(corners[:-1], corners[1:], strict=True):
            xs += [ax, bx]
            ys += [ay, by]
    return np.asarray(xs, float), np.asarray(ys, float)


def html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def key_entry(marker: str, text: str, color: str | None = None, marker_pt: int | None = None) -> str:
    """One legend entry as rich text: a (coloured, `marker_pt`-sized) marker and its words joined by non-breaking
    spaces, so a wrapping key never leaves a marker at a line's end and its label on the next."""
    style = (f"color:{color};" if color else "") + (f" font-size:{marker_pt}pt" if marker_pt else "")
    mark = f"<span style='{style}'>{marker}</span>" if style else marker
    return mark + "&nbsp;" + html_escape(text).replace(" ", "&nbsp;").replace("-", "\u2011")   # non-breaking hyphen


def key_line(entries) -> str:
    """Legend entries side by side, two spaces apart; a wrapped line starts at an entry's marker (the break
    falls after the gap, never leaves a blank at the next line's start)."""
    return "&nbsp;&nbsp; ".join(entries)


def clicked_view_point(plot: pg.PlotItem, event, left_only: bool = True) -> QtCore.QPointF | None:
    """Data coordinates of a scene mouse click inside the plot's view box, or None (outside, other button)."""
    if left_only and event.button() != QtCore.Qt.MouseButton.LeftButton:
        return None
    vb = plot.getViewBox()
    if not vb.sceneBoundingRect().contains(event.scenePos()):
        return None
    return vb.mapSceneToView(event.scenePos())


def hover_html(lines: Sequence[tuple[str, bool]], width: int = 60) -> str:
    """A hover read-out from (text, bold) lines, each wrapped at `width` characters, at 11 pt."""
    import textwrap

    parts = []
    for text, strong in lines:
        wrapped = "<br>".join(html_escape(line) for line in textwrap.wrap(text, width))
        parts.append(f"<b>{wrapped}</b>" if strong else wrapped)
    return "<div style='font-size:11pt'>" + "<br>".join(parts) + "</div>"
