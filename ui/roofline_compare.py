"""Compared hardware on the roofline: up to three other devices' HBM and scenario-format roofs (dashed, each its
own colour) and the same scenario's points on them (hollow markers). Mixed into RooflinePanel.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.views.roofline import roofline
from trinity_desktop.ui.roofline_style import COMPARE_STYLES, LINK_SYMBOLS, MAX_COMPARE


class RooflineCompare:
    def set_hardware_choices(self, hardware: dict[str, Hardware]) -> None:
        """The devices offered in the compare menu (keys → Hardware)."""
        self._hardware = dict(hardware)
        self.compare_menu.clear()
        self.compare_actions = {}
        for key, hw in self._hardware.items():
            action = self.compare_menu.addAction(hw.name)
            action.setCheckable(True)
            action.setData(key)
            action.setChecked(key in self._compare_keys)
            action.toggled.connect(lambda checked, k=key: self._compare_toggled(k, checked))
            self.compare_actions[key] = action
        self._compare_keys = [k for k in self._compare_keys if k in self._hardware]
        self._sync_compare_actions()

    def set_compared_hardware(self, keys) -> None:
        keys = [k for k in keys if k in self._hardware][:MAX_COMPARE]
        self._compare_keys = keys
        for key, action in self.compare_actions.items():
            action.blockSignals(True)
            action.setChecked(key in keys)
            action.blockSignals(False)
        self._sync_compare_actions()
        if self._results is None:
            return
        self._update_compare()
        self._update_legend()
        self._set_ranges()
        self._layout_labels()
        self._update_info()

    def compared_hardware(self) -> list[str]:
        return list(self._compare_keys)

    def _compare_toggled(self, key: str, checked: bool) -> None:
        keys = [k for k in self._compare_keys if k != key]
        if checked:
            keys.append(key)
        self.set_compared_hardware(keys)

    def _sync_compare_actions(self) -> None:
        full = len(self._compare_keys) >= MAX_COMPARE
        for key, action in self.compare_actions.items():
            action.setEnabled(key in self._compare_keys or not full)
        n = len(self._compare_keys)
        self.compare_button.setText(f"Compare hardware ({n}) ▾" if n else "Compare hardware ▾")

    def _update_compare(self) -> None:
        self._compare_roofs = []
        if self._results is None:
            return
        sc = self._results.scenario
        for slot in range(MAX_COMPARE):
            curves = self.compare_curves[slot]
            color, style = COMPARE_STYLES[slot]
            key = self._compare_keys[slot] if slot < len(self._compare_keys) else ""
            roof, error = None, ""
            if key:
                try:
                    roof = roofline(sc.replace(hardware=self._hardware[key]))
                except (ValidationError, KeyError, ValueError) as exc:
                    error = str(exc)
                self._compare_roofs.append((key, roof, error))
            drawn = set()
            if roof is not None:
                hw = self._hardware[key]
                for c in roof.ceilings:
                    if c.kind == "compute" and c.name != self._compute_roof_name(roof):
                        continue   # compared devices: only the scenario format's roof, to keep it readable
                    if c.kind == "bandwidth" and c.link not in ("hbm",):
                        continue
                    if c.name not in curves:
                        curves[c.name] = pg.PlotDataItem()
                        self.plot.addItem(curves[c.name])
                    curves[c.name].setPen(pg.mkPen(color, width=2.2, style=style))
                    curves[c.name].setData(*self._geometry(c, roof, hw))
                    drawn.add(c.name)
                pts = roof.points
                self.compare_points[slot].setData([p.intensity for p in pts],
                                                  [max(p.attainable_flops_per_s, 1.0) for p in pts],
                                                  symbol=[LINK_SYMBOLS.get(p.link, "o") for p in pts])
                self.compare_labels[slot].setText(hw.name)
            for name, curve in curves.items():
                curve.setVisible(name in drawn)
            self.compare_points[slot].setVisible(roof is not None)
            self.compare_labels[slot].setVisible(False)   # the legend names compared devices

    def compared_ceiling_items(self, key: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        for slot, (k, roof, _) in enumerate(self._compare_roofs):
            if k == key and roof is not None:
                return {n: tuple(np.asarray(a) for a in c.getOriginalDataset()) for n, c in self.compare_curves[slot].items()
                        if c.isVisible()}
        return {}

    def compared_point_items(self, key: str) -> dict[str, tuple[float, float]]:
        for k, roof, _ in self._compare_roofs:
            if k == key and roof is not None:
                return {p.name: (p.intensity, p.attainable_flops_per_s) for p in roof.points}
        return {}
