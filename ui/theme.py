"""Colours, pens and fonts shared by every panel: one colour per resource, used everywhere.

Resource colours come from the Okabe-Ito colour-blind-safe palette; heatmaps use cividis.
"""

from __future__ import annotations

import re

import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from trinity_desktop.ui.stage_labels import INFER_TIME_PART_TEXT, TIME_PART_TEXT

# Okabe & Ito (2008) palette: distinguishable under the common colour-vision deficiencies.
RESOURCE_COLORS = {
    "compute": "#E69F00",    # orange
    "bandwidth": "#0072B2",  # blue
    "memory": "#009E73",     # bluish green
}
RESOURCE_LABELS = {"compute": "Compute", "bandwidth": "Bandwidth", "memory": "Memory"}

# Memory components and time stages map onto the resource they load.
COMPONENT_COLORS = {
    "weights": "#56B4E9",
    "gradients": "#CC79A7",
    "optimizer": "#D55E00",
    "activations": "#009E73",
    "kv_cache": "#009E73",
    "reserved": "#999999",
}
STAGE_COLORS = {
    "compute": RESOURCE_COLORS["compute"],
    "communication_exposed": RESOURCE_COLORS["bandwidth"],
    "pipeline_bubble": "#BBBBBB",
    "optimizer": "#56B4E9",
    "gemms": RESOURCE_COLORS["compute"],
    "attention": "#CC79A7",
    "attention_kv_reads": "#CC79A7",
    "tp_comm": RESOURCE_COLORS["bandwidth"],
}
LABELS = {
    "weights": "Weights", "gradients": "Gradients", "optimizer": "Optimizer states",
    "activations": "Activations", "kv_cache": "KV cache", "reserved": "Reserved (runtime, 10%)",
    "compute": TIME_PART_TEXT["compute"], "communication_exposed": TIME_PART_TEXT["communication_exposed"],
    "pipeline_bubble": TIME_PART_TEXT["pipeline_bubble"],
}
HEATMAP_COLORMAP = "cividis"
FALLBACK_COLOR = "#777777"
# Roles the panels share beyond the resources: one home for each colour a panel draws with.
FOCUS_COLOR = "#D55E00"    # the one marked element: the scenario in force, a focus ring, an optimum (vermilion)
MUTED_COLOR = "#9A9A9A"    # what does not apply or stays quiet: hatches, n/a cells, grid and guide lines
BAD_COLOR = "#C0392B"      # does not fit
ACCENT_COLORS = {"pink": "#CC79A7", "sky": "#56B4E9", "yellow": "#F0E442"}   # Okabe-Ito's remaining hues
ON_LIGHT, ON_DARK = "#000000", "#FFFFFF"   # text on a data colour: whichever contrasts more

# Named colour roles: every colour a panel draws with that is not a resource or component colour. Values are
# the light theme's; `restyle_plots` recolours the text-like ones (INK, AXIS, ...) for the dark themes.
INK = "#222222"          # plot text, outlines of marks, the current point
INK_SOFT = "#333333"     # secondary text and traces on a plot
AXIS = "#444444"         # axes, frames, reference lines
MUTED = "#555555"        # footnotes and secondary series
LEADER = "#888888"       # leader lines, identity lines, what does not apply
LEADER_STRONG = "#666666"  # leader lines that must read on a light bar
NEUTRAL = "#999999"      # neutral marks (a centroid, a band's swatch, a point that does not fit)
HATCH = "#9A9A9A"        # hatching of infeasible regions
NEUTRAL_FILL = "#CCCCCC"  # a bar before it has data
NA_FILL = "#DDDDDD"      # a mark for a technique that does not apply
PAPER = "#FFFFFF"        # a plot's background in the light theme; halos and hollow marks
CONTRAST_DARK = "#000000"  # black on a white halo: reads on every fill and for every viewer
READOUT_INK = "#111111"  # the hover read-out's text
BAD = "#C0392B"          # "does not fit": text and lines
ERROR_TEXT = "#B00020"   # a refused input in the Scenario form
FOCUS = "#D55E00"        # Okabe-Ito vermillion: the focused or current item, never a resource colour
ACCENT = "#CC79A7"       # Okabe-Ito reddish purple: a second highlighted series
READOUT_BG = (255, 255, 255, 235)   # the read-out box and on-plot label fills (RGBA)
LEGEND_BG = (255, 255, 255, 220)    # a legend box over the data, light theme (RGBA)


def color_for(name: str) -> str:
    return COMPONENT_COLORS.get(name) or STAGE_COLORS.get(name) or FALLBACK_COLOR


# Time stages whose keys are also memory components, or that need a longer name on a time bar.
TIME_LABELS = {k: TIME_PART_TEXT[k] for k in ("optimizer", "gradient_compression", "offload_transfer")}


def label_for(name: str, section: str = "memory") -> str:
    """Display name of a memory component (section "memory") or a time stage (section "time")."""
    if section == "time" and name in TIME_LABELS:
        return TIME_LABELS[name]
    if section == "time" and name in INFER_TIME_PART_TEXT:
        text = INFER_TIME_PART_TEXT[name]
        return text[:1].upper() + text[1:]
    return LABELS.get(name, name[:1].upper() + name[1:].replace("_", " "))


def base_font_size() -> int:
    return 11


def configure_pyqtgraph() -> None:
    """Global pyqtgraph look: light background, antialiased lines."""
    pg.setConfigOptions(antialias=True, background="w", foreground="#222222")


def axis_font(point_size: int | None = None) -> QtGui.QFont:
    font = QtGui.QFont()
    font.setPointSize(point_size or base_font_size())
    return font


# --- colour themes ----------------------------------------------------------------------------
# Light is the default look; dark and high-contrast recolour the Qt palette and every plot's background,
# axes, titles and default-coloured labels, and make every text colour readable on what it is drawn on
# (`readable`, WCAG 4.5:1). Dark's base (fields, lists, check boxes) is lighter than its window, so an
# unchecked box stands out from the panel. "system" follows the OS colour scheme (Qt >= 6.5).
THEMES = {
    "light": {"window": "#F5F5F5", "base": "#FFFFFF", "text": "#222222", "plot_bg": "#FFFFFF",
              "plot_fg": "#222222", "highlight": "#0072B2"},
    "dark": {"window": "#2B2B2B", "base": "#3A3A3A", "text": "#E8E8E8", "plot_bg": "#1E1E1E",
             "plot_fg": "#E8E8E8", "highlight": "#56B4E9"},
    "high-contrast": {"window": "#000000", "base": "#000000", "text": "#FFFFFF", "plot_bg": "#000000",
                      "plot_fg": "#FAFAFA", "highlight": "#F0E442"},
}
THEME_NAMES = ("system", "light", "dark", "high-contrast")
# Label colours a theme may recolour: the themes' own text colours. Pure black and white are contrast
# colours chosen against data (heatmap cell labels) and are left alone.
DEFAULT_LABEL_COLORS = {"#222222", "#e8e8e8", "#fafafa"}
_current = "light"


def resolve_theme(name: str) -> str:
    """'system' -> 'dark' or 'light' from the OS colour scheme; other names pass through."""
    if name != "system":
        return name if name in THEMES else "light"
    from PySide6 import QtCore, QtWidgets

    app = QtWidgets.QApplication.instance()
    if app is not None and app.styleHints().colorScheme() == QtCore.Qt.ColorScheme.Dark:
        return "dark"
    return "light"


def current_theme() -> str:
    return _current


def plot_foreground() -> str:
    return THEMES[_current]["plot_fg"]


def apply_theme(name: str, root=None) -> str:
    """Set the application palette for a theme and restyle the plots under `root`; returns the theme used."""
    global _current
    from PySide6 import QtWidgets

    _current = resolve_theme(name)
    colors = THEMES[_current]
    app = QtWidgets.QApplication.instance()
    if app is not None:
        palette = QtGui.QPalette()
        role = QtGui.QPalette.ColorRole
        for r, key in ((role.Window, "window"), (role.Base, "base"), (role.AlternateBase, "window"),
                       (role.Button, "window"), (role.WindowText, "text"), (role.Text, "text"),
                       (role.ButtonText, "text"), (role.ToolTipBase, "base"), (role.ToolTipText, "text"),
                       (role.Highlight, "highlight")):
            palette.setColor(r, QtGui.QColor(colors[key]))
        palette.setColor(role.HighlightedText, QtGui.QColor(colors["base"]))
        palette.setColor(role.PlaceholderText, placeholder_text_color(colors))   # Qt's default is black: unseen
        # A disabled control's text half-way to the background: visibly off (Cancel while no search runs), still
        # readable. A palette built from scratch would otherwise give disabled text the enabled colour.
        off = disabled_text_color(colors)
        for r in (role.WindowText, role.Text, role.ButtonText):
            palette.setColor(QtGui.QPalette.ColorGroup.Disabled, r, off)
        app.setPalette(palette)
        app.setStyleSheet(indicator_style(_current))
        from trinity_desktop.ui.field_frames import frame_fields  # #21: fields with a visible outline
        frame_fields(app, field_frame_color(_current))
    pg.setConfigOptions(background=colors["plot_bg"], foreground=colors["plot_fg"])
    if root is not None:
        restyle_plots(root)
    return _current


def disabled_text_color(colors: dict) -> QtGui.QColor:
    """The theme's text colour mixed half-way with its window colour."""
    text, window = QtGui.QColor(colors["text"]), QtGui.QColor(colors["window"])
    return QtGui.QColor(*((a + b) // 2 for a, b in ((text.red(), window.red()), (text.green(), window.green()),
                                                     (text.blue(), window.blue()))))


def placeholder_text_color(colors: dict) -> QtGui.QColor:
    """A field's hint ("Filter: author, title…"): the theme's text two thirds of the way from its field colour,
    quieter than text and still at least 4.5:1 on the field in every theme."""
    text, base = QtGui.QColor(colors["text"]), QtGui.QColor(colors["base"])
    return QtGui.QColor(*(b + (t - b) * 2 // 3 for t, b in ((text.red(), base.red()), (text.green(), base.green()),
                                                            (text.blue(), base.blue()))))


def legend_brush():
    """A legend box over the data in the current theme: the plot background, slightly translucent."""
    color = QtGui.QColor(THEMES[_current]["plot_bg"])
    color.setAlpha(LEGEND_BG[3])
    return pg.mkBrush(color)


def plot_text_color() -> str:
    """The current theme's default colour for text drawn on a plot."""
    return THEMES[_current]["plot_fg"]


def indicator_style(theme: str) -> str:
    """Check-box indicators drawn in the theme's text colour on dark themes: Fusion outlines them in the window
    colour darkened, which vanishes on a black or near-black window. Checked fills with the highlight colour."""
    if theme == "light":
        return ""
    c = THEMES[theme]
    return (f"QCheckBox::indicator, QGroupBox::indicator {{ width: 13px; height: 13px; "
            f"border: 2px solid {c['text']}; border-radius: 2px; background: {c['base']}; }}"
            f"QCheckBox::indicator:checked, QGroupBox::indicator:checked {{ background: {c['highlight']}; }}")


def _has_fill(item) -> bool:
    fill = getattr(item, "fill", None)
    return fill is not None and fill.style() != QtCore.Qt.BrushStyle.NoBrush


def restyle_widget_text(root) -> None:
    """Rich-text labels and list items under `root` whose own colours would not read on the current theme's
    window / base colour are recoloured (same hue, darker or lighter); swatches and palette text are left."""
    from PySide6 import QtWidgets

    colors = THEMES[_current]
    for label in root.findChildren(QtWidgets.QLabel):
        text = label.text()
        if "color" in text and text_colors_in_html(text):
            fixed = readable_html(text, colors["window"])
            if fixed != text:
                label.setText(fixed)
    for lst in root.findChildren(QtWidgets.QListWidget):
        for i in range(lst.count()):
            item = lst.item(i)
            brush = item.foreground()
            if brush.style() != QtCore.Qt.BrushStyle.NoBrush:
                color = readable(brush.color(), colors["base"])
                if color != brush.color().name():
                    item.setForeground(QtGui.QColor(color))


def restyle_plots(root) -> None:
    """Recolour every pyqtgraph view under `root` for the current theme: backgrounds, axes, titles and
    labels drawn in a default text colour (colours chosen for contrast with data, e.g. heatmap cell labels,
    are left alone)."""
    colors = THEMES[_current]
    fg = QtGui.QColor(colors["plot_fg"])
    restyle_widget_text(root)
    for view in root.findChildren(pg.GraphicsView):
        view.setBackground(colors["plot_bg"])
        scene = view.scene()
        if scene is None:
            continue
        for item in scene.items():
            if isinstance(item, pg.LegendItem):
                item.setBrush(legend_brush())   # a legend's text follows the theme, so must its box
            if isinstance(item, pg.AxisItem):
                item.setPen(pg.mkPen(fg))
                item.setTextPen(pg.mkPen(fg))
            elif isinstance(item, pg.LabelItem):
                color = item.opts.get("color")
                if color is None or str(color).lower() in DEFAULT_LABEL_COLORS:
                    item.setText(item.text, color=colors["plot_fg"])
                else:
                    better = readable(pg.mkColor(color), colors["plot_bg"])
                    if better != pg.mkColor(color).name():
                        item.setText(item.text, color=better)
            elif isinstance(item, pg.TextItem):
                against = item.fill.color() if _has_fill(item) else QtGui.QColor(colors["plot_bg"])
                if item.color.name().lower() in DEFAULT_LABEL_COLORS:
                    item.setColor(QtGui.QColor(readable(fg, against)))
                elif item.color.name().lower() not in CONTRAST_COLORS:
                    item.setColor(QtGui.QColor(readable(item.color, against)))
            elif isinstance(item, (pg.InfiniteLine, pg.PlotCurveItem)):
                pen = QtGui.QPen(item.pen if isinstance(item, pg.InfiniteLine) else item.opts["pen"])
                if pen.color().name().lower() in DEFAULT_LABEL_COLORS | {"#444444"}:
                    pen.setColor(_with_alpha(fg, pen.color().alpha()))  # a translucent band edge stays one
                    item.setPen(pen)
            elif isinstance(item, pg.ErrorBarItem):
                pen = item.opts["pen"]
                if pen is not None and pg.mkPen(pen).color().name().lower() in DEFAULT_LABEL_COLORS:
                    item.setData(pen=pg.mkPen(fg, width=pg.mkPen(pen).widthF()))
            elif isinstance(item, pg.FillBetweenItem):
                brush = item.brush()
                if brush.color().name().lower() in DEFAULT_LABEL_COLORS:
                    item.setBrush(pg.mkBrush(_with_alpha(fg, brush.color().alpha())))


def _with_alpha(color: QtGui.QColor, alpha: int) -> QtGui.QColor:
    out = QtGui.QColor(color)
    out.setAlpha(alpha)
    return out


# --- text contrast (WCAG 2.1: 4.5:1 for text) ---------------------------------------------------------
MIN_TEXT_CONTRAST = 4.5
HIGH_CONTRAST_TEXT = 7.0   # WCAG 2.1 SC 1.4.6 (enhanced contrast) for the high-contrast theme
_COLOR_IN_HTML = re.compile(r"color\s*:\s*(#[0-9a-fA-F]{6})")
# a legend marker in the data's own colour (pw.key_entry: "color:#RRGGBB;" and perhaps a font size): it must
# match what it keys, so readable_html leaves it
_SWATCH_SPAN = re.compile(r"<span style='color:\s*#[0-9a-fA-F]{6};?(?:\s*font-size:\s*\d+pt;?)?'>\s*[■▨●▲▼◆★━]\s*</span>")
CONTRAST_COLORS = {"#000000", "#ffffff"}  # black or white chosen against data (heatmap cells): not recoloured


def luminance(color) -> float:
    """WCAG 2.1 relative luminance of a colour (QColor or '#rrggbb'): 0.2126 R + 0.7152 G + 0.0722 B of the
    linearised sRGB components."""
    color = QtGui.QColor(color)

    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * lin(color.redF()) + 0.7152 * lin(color.greenF()) + 0.0722 * lin(color.blueF())


def contrast_ratio(a, b) -> float:
    """WCAG contrast ratio of two colours (QColor or '#rrggbb')."""
    la, lb = sorted((luminance(QtGui.QColor(a)), luminance(QtGui.QColor(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def readable(color, background, minimum: float | None = None) -> str:
    """`color` if it reads on `background` at `minimum` contrast (default: WCAG's 4.5:1, 7:1 in the high-contrast
    theme, WCAG 1.4.6's enhanced level: a mid-grey footnote at 4.6:1 on black read as faint there), else the same
    hue made darker (on a light background) or lighter (on a dark one) until it does."""
    if minimum is None:
        minimum = HIGH_CONTRAST_TEXT if _current == "high-contrast" else MIN_TEXT_CONTRAST
    c, bg = QtGui.QColor(color), QtGui.QColor(background)
    if contrast_ratio(c, bg) >= minimum:
        return c.name()
    dark_bg = luminance(bg) < 0.18
    h, s, v, _ = c.getHsvF()
    h = max(h, 0.0)
    for step in range(1, 21):
        t = step / 20
        candidate = QtGui.QColor.fromHsvF(h, s * (1 - t) if dark_bg else s, v + (1 - v) * t if dark_bg
                                          else v * (1 - t))
        if contrast_ratio(candidate, bg) >= minimum:
            return candidate.name()
    return "#FFFFFF" if dark_bg else "#000000"


def readable_html(html: str, background) -> str:
    """Rich text with every inline text colour made readable on `background` (legend swatches are left)."""
    swatches = {m.group(0) for m in _SWATCH_SPAN.finditer(html)}
    parts = re.split("(" + "|".join(re.escape(s) for s in swatches) + ")", html) if swatches else [html]
    return "".join(p if p in swatches else _COLOR_IN_HTML.sub(lambda m: "color:" + readable(m.group(1), background),
                                                               p) for p in parts)


def text_colors_in_html(html: str) -> list[str]:
    """Inline text colours of rich text, legend swatches excluded."""
    return _COLOR_IN_HTML.findall(_SWATCH_SPAN.sub("", html))


# --- a sequential map that reads on the plot (#21: the planner map's best cells merged with dark backgrounds)
MAP_MIN_CONTRAST = 3.0   # WCAG 2.1 non-text contrast: every cell against the plot background


def readable_colormap(background, name: str = HEATMAP_COLORMAP, minimum: float = MAP_MIN_CONTRAST):
    """`name`'s colormap cut to its longest run of colours that read at `minimum` contrast against
    `background` (cividis's dark end on a dark plot, its light end on a white one), as a pyqtgraph ColorMap:
    no cell merges with the plot around it (cividis grows lighter from end to end, so the run is one end)."""
    import numpy as np
    import pyqtgraph as pg

    base = pg.colormap.get(name)
    t = np.linspace(0.0, 1.0, 256)
    colors = base.map(t, mode="qcolor")
    ok = np.array([contrast_ratio(c, background) >= minimum for c in colors])
    if not ok.any():
        return base
    best, start = (0, 0), None
    for i, good in enumerate([*ok, False]):
        if good and start is None:
            start = i
        elif not good and start is not None:
            best, start = max(best, (start, i), key=lambda r: r[1] - r[0]), None
    lo, hi = t[best[0]], t[best[1] - 1]
    stops = np.linspace(lo, hi, 16)
    return pg.ColorMap(np.linspace(0.0, 1.0, 16), base.map(stops, mode="byte"))


def line_on_map(background) -> str:
    """Contour lines over `readable_colormap(background)`'s cells: black where the cells are light (a dark
    plot), white where they are dark."""
    return CONTRAST_DARK if luminance(QtGui.QColor(background)) < 0.18 else PAPER


# --- form fields with a visible frame (#21: high-contrast fields had none; Fusion draws a field's outline in
# the window colour darkened, 1.3:1 on black, 1.9:1 on the dark window, 2.0:1 on the light one)
FIELD_FRAME_CONTRAST = 3.0   # WCAG 2.1 non-text contrast (1.4.11): a control's boundary


def field_frame_color(theme: str) -> str:
    """The outline of a form field: the theme's text colour halfway to its window colour, made to read at
    `FIELD_FRAME_CONTRAST` against the window."""
    c = THEMES[theme]
    text, window = QtGui.QColor(c["text"]), QtGui.QColor(c["window"])
    mid = QtGui.QColor(*((a + b) // 2 for a, b in ((text.red(), window.red()), (text.green(), window.green()),
                                                    (text.blue(), window.blue()))))
    return readable(mid, window, FIELD_FRAME_CONTRAST)


def restyle_markers(items, width: float = 1.0) -> None:
    """After a theme change: each marker's outline in the new theme's plot text colour (PlotDataItem or
    ScatterPlotItem), its fill kept, so a dark outline drawn for the light theme never sinks into a dark plot."""
    pen = pg.mkPen(plot_text_color(), width=width)
    for item in items:
        if isinstance(item, pg.PlotDataItem):
            item.setSymbolPen(pen)
        elif isinstance(item, pg.ScatterPlotItem):
            item.setPen(pen)
