"""Compared hardware on the roofline: up to three other devices' HBM and scenario-format roofs (dashed, each its
own colour) and the same scenario's points on them (hollow markers).

A layer the panel owns: it holds the compare menu and its items, evaluates `roofline(scenario on device)` for
each compared device (`evaluate`), and draws them in the view's x range (`draw`). It tells the panel through
`on_change` when the user picks other devices.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.views.roofline import OperatingPoint, Roofline, roofline
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.roofline_frame import ceiling_geometry, compute_roof_name
from trinity_desktop.ui.roofline_style import COMPARE_STYLES, LINK_SYMBOLS, MAX_COMPARE


class RooflineCompare:
    """The compared devices' roofs and points on `plot`, and the menu that picks them."""

    def __init__(self, plot: pg.PlotItem, on_change: Callable[[], None]):
        self._plot = plot
        self._on_change = on_change
        self.hardware: dict[str, Hardware] = {}
        self.keys: list[str] = []
        self.roofs: list[tuple[str, Roofline | None, str]] = []   # (key, roofline or None, error)
        self.button = QtWidgets.QToolButton()
        self.button.setText("Compare hardware ▾")
        self.button.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        self.button.setAccessibleName("Compare hardware")
        self.button.setToolTip(f"Overlay up to {MAX_COMPARE} other devices' rooflines (dashed) and "
                               "the same scenario's points on them (hollow markers).")
        self.menu = QtWidgets.QMenu(self.button)
        self.button.setMenu(self.menu)
        self.actions: dict[str, QtGui.QAction] = {}
        # per slot, a pool of ceiling curves and one scatter
        self.curves: list[dict[str, pg.PlotDataItem]] = [{} for _ in range(MAX_COMPARE)]
        self.points: list[pg.PlotDataItem] = []
        for color, _ in COMPARE_STYLES:
            item = pg.PlotDataItem(pen=None, symbolSize=11, symbolBrush=pg.mkBrush(pw.plot_background()),
                                   symbolPen=pg.mkPen(color, width=2))
            item.setVisible(False)
            plot.addItem(item)
            self.points.append(item)

    # ------------------------------------------------------------------ choice
    def set_hardware_choices(self, hardware: dict[str, Hardware]) -> None:
        """The devices offered in the compare menu (keys → Hardware)."""
        self.hardware = dict(hardware)
        self.menu.clear()
        self.actions = {}
        for key, hw in self.hardware.items():
            action = self.menu.addAction(hw.name)
            action.setCheckable(True)
            action.setData(key)
            action.setChecked(key in self.keys)
            action.toggled.connect(lambda checked, k=key: self._toggled(k, checked))
            self.actions[key] = action
        self.keys = [k for k in self.keys if k in self.hardware]
        self._sync_actions()

    def set_keys(self, keys) -> None:
        """Compare the devices `keys` (known ones, at most MAX_COMPARE) and tell the panel."""
        keys = [k for k in keys if k in self.hardware][:MAX_COMPARE]
        self.keys = keys
        for key, action in self.actions.items():
            action.blockSignals(True)
            action.setChecked(key in keys)
            action.blockSignals(False)
        self._sync_actions()
        self._on_change()

    def _toggled(self, key: str, checked: bool) -> None:
        keys = [k for k in self.keys if k != key]
        if checked:
            keys.append(key)
        self.set_keys(keys)

    def _sync_actions(self) -> None:
        full = len(self.keys) >= MAX_COMPARE
        for key, action in self.actions.items():
            action.setEnabled(key in self.keys or not full)
        n = len(self.keys)
        self.button.setText(f"Compare hardware ({n}) ▾" if n else "Compare hardware ▾")

    # ------------------------------------------------------------------ model and drawing
    def evaluate(self, scenario: Scenario | None) -> None:
        """The scenario's roofline on each compared device (an error message where it does not apply)."""
        self.roofs = []
        if scenario is None:
            return
        for key in self.keys:
            roof, error = None, ""
            try:
                roof = roofline(scenario.replace(hardware=self.hardware[key]))
            except (ValidationError, KeyError, ValueError) as exc:
                error = str(exc)
            self.roofs.append((key, roof, error))

    def draw(self, x_range: tuple[float, float]) -> None:
        """Each compared device's HBM roof, its scenario-format roof and its points, across `x_range`."""
        for slot in range(MAX_COMPARE):
            curves = self.curves[slot]
            color, style = COMPARE_STYLES[slot]
            key, roof, _ = self.roofs[slot] if slot < len(self.roofs) else ("", None, "")
            drawn = set()
            if roof is not None:
                hw = self.hardware[key]
                for c in roof.ceilings:
                    if c.kind == "compute" and c.name != compute_roof_name(roof):
                        continue   # compared devices: only the scenario format's roof, to keep it readable
                    if c.kind == "bandwidth" and c.link != "hbm":
                        continue
                    if c.name not in curves:
                        curves[c.name] = pg.PlotDataItem()
                        self._plot.addItem(curves[c.name])
                    curves[c.name].setPen(pg.mkPen(color, width=2.2, style=style))
                    curves[c.name].setData(*ceiling_geometry(c, roof, hw, x_range))
                    drawn.add(c.name)
                pts = roof.points
                self.points[slot].setData([p.intensity for p in pts], [max(p.attainable_flops_per_s, 1.0) for p in pts],
                                          symbol=[LINK_SYMBOLS.get(p.link, "o") for p in pts])
            for name, curve in curves.items():
                curve.setVisible(name in drawn)
            self.points[slot].setVisible(roof is not None)

    # ------------------------------------------------------------------ what other layers read
    def extents(self) -> tuple[list[float], list[float], list[float]]:
        """(intensities, attainable FLOP/s, compute peaks) the view must hold for the compared devices."""
        xs, ys, peaks = [], [], []
        for _, roof, _ in self.roofs:
            if roof is not None:
                xs += [p.intensity for p in roof.points] + [roof.ridge_flop_per_byte]
                ys += [p.attainable_flops_per_s for p in roof.points if p.attainable_flops_per_s > 0]
                peaks += [c.value for c in roof.ceilings if c.kind == "compute"]
        return xs, ys, peaks

    def legend_entries(self) -> list[tuple[str, str, str]]:
        """(glyph, colour, device name) per compared device."""
        return [("╌", COMPARE_STYLES[slot][0], self.hardware[key].name) for slot, key in enumerate(self.keys)]

    def errors(self) -> list[tuple[str, str]]:
        """(device name, why) for each compared device the scenario cannot run on."""
        return [(self.hardware[k].name, e) for k, roof, e in self.roofs if roof is None]

    def hover_points(self) -> list[tuple[str, float, float]]:
        """("<point> @ <key>", intensity, attainable FLOP/s) of every compared point."""
        return [(f"{p.name} @ {key}", p.intensity, p.attainable_flops_per_s)
                for key, roof, _ in self.roofs if roof is not None for p in roof.points]

    def find_point(self, name: str) -> tuple[OperatingPoint | None, str]:
        """The compared point named "<point> @ <key>" and its device's name, or (None, "")."""
        if " @ " not in name:
            return None, ""
        base, _, key = name.rpartition(" @ ")
        for k, roof, _ in self.roofs:
            if k == key and roof is not None:
                for p in roof.points:
                    if p.name == base:
                        return p, self.hardware[key].name
        return None, ""

    def ceiling_items(self, key: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """A compared device's roofs as drawn (name → xs, ys in data units)."""
        for slot, (k, roof, _) in enumerate(self.roofs):
            if k == key and roof is not None:
                return {n: tuple(np.asarray(a) for a in c.getOriginalDataset()) for n, c in self.curves[slot].items()
                        if c.isVisible()}
        return {}

    def point_items(self, key: str) -> dict[str, tuple[float, float]]:
        for k, roof, _ in self.roofs:
            if k == key and roof is not None:
                return {p.name: (p.intensity, p.attainable_flops_per_s) for p in roof.points}
        return {}
