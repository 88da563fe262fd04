"""Colours, pens and fonts shared by every panel: one colour per resource, used everywhere.

Resource colours come from the Okabe-Ito colour-blind-safe palette; heatmaps use cividis.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtGui

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
    "GEMMs (weights)": RESOURCE_COLORS["compute"],
    "attention": "#CC79A7",
    "attention (KV reads)": "#CC79A7",
    "TP communication": RESOURCE_COLORS["bandwidth"],
}
LABELS = {
    "weights": "Weights", "gradients": "Gradients", "optimizer": "Optimizer states",
    "activations": "Activations", "kv_cache": "KV cache", "reserved": "Reserved (runtime, 10%)",
    "compute": "Compute", "communication_exposed": "Exposed communication", "pipeline_bubble": "Pipeline bubble",
}
HEATMAP_COLORMAP = "cividis"
FALLBACK_COLOR = "#777777"


def color_for(name: str) -> str:
    return COMPONENT_COLORS.get(name) or STAGE_COLORS.get(name) or FALLBACK_COLOR


# Time stages whose keys are also memory components, or that need a longer name on a time bar.
TIME_LABELS = {"optimizer": "Optimizer step", "gradient_compression": "DGC top-k selection",
               "offload_transfer": "Offload transfer (exposed)"}


def label_for(name: str, section: str = "memory") -> str:
    """Display name of a memory component (section "memory") or a time stage (section "time")."""
    if section == "time" and name in TIME_LABELS:
        return TIME_LABELS[name]
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
# axes, titles and default-coloured labels. "system" follows the OS colour scheme (Qt >= 6.5).
THEMES = {
    "light": {"window": "#F5F5F5", "base": "#FFFFFF", "text": "#222222", "plot_bg": "#FFFFFF",
              "plot_fg": "#222222", "highlight": "#0072B2"},
    "dark": {"window": "#2B2B2B", "base": "#1E1E1E", "text": "#E8E8E8", "plot_bg": "#1E1E1E",
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
        app.setPalette(palette)
    pg.setConfigOptions(background=colors["plot_bg"], foreground=colors["plot_fg"])
    if root is not None:
        restyle_plots(root)
    return _current


def restyle_plots(root) -> None:
    """Recolour every pyqtgraph view under `root` for the current theme: backgrounds, axes, titles and
    labels drawn in a default text colour (colours chosen for contrast with data, e.g. heatmap cell labels,
    are left alone)."""
    colors = THEMES[_current]
    fg = QtGui.QColor(colors["plot_fg"])
    for view in root.findChildren(pg.GraphicsView):
        view.setBackground(colors["plot_bg"])
        scene = view.scene()
        if scene is None:
            continue
        for item in scene.items():
            if isinstance(item, pg.AxisItem):
                item.setPen(pg.mkPen(fg))
                item.setTextPen(pg.mkPen(fg))
            elif isinstance(item, pg.LabelItem):
                if item.opts.get("color") is None or str(item.opts.get("color")).lower() in DEFAULT_LABEL_COLORS:
                    item.setText(item.text, color=colors["plot_fg"])
            elif isinstance(item, pg.TextItem):
                if item.color.name().lower() in DEFAULT_LABEL_COLORS:
                    item.setColor(fg)
            elif isinstance(item, (pg.InfiniteLine, pg.PlotCurveItem)):
                pen = QtGui.QPen(item.pen if isinstance(item, pg.InfiniteLine) else item.opts["pen"])
                if pen.color().name().lower() in DEFAULT_LABEL_COLORS | {"#444444"}:
                    pen.setColor(fg)
                    item.setPen(pen)
