"""The main window: one dock per panel, menus, undo/redo, and a saved layout with a version number."""

from __future__ import annotations

import base64
from pathlib import Path

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop.dock_tabs import DockHolder, DockScroll, tidy_tab_bars
from trinity_desktop.docks import DOCKS
from trinity_desktop.help_texts import PRESSURE_HELP
from trinity_desktop.layout_plan import (
    FORM_DOCKS,
    available_geometry,
    keep_on_screen,
    lead_row_heights,
    plan_for,
)
from trinity_desktop.layout_state import check_layout
from trinity_desktop.lazy_panels import LazyPanels
from trinity_desktop.menus import build_menus
from trinity_desktop.model import Results, ValidationError
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets, workload_library
from trinity_desktop.model.views.workloads import evaluate_library, workload_scenario
from trinity_desktop.shortcuts import ShortcutsOverlay
from trinity_desktop.status_bar import StatusSummary
from trinity_desktop.store import ScenarioStore
from trinity_desktop.talk import TalkController
from trinity_desktop.ui import panel_protocol as pp
from trinity_desktop.ui.bands import install as install_bands
from trinity_desktop.ui.controls import ScenarioControls
from trinity_desktop.ui.panel_problem import update_or_explain
from trinity_desktop.ui.theme import apply_theme, current_theme, restyle_plots, restyle_widget_text
from trinity_desktop.welcome import Welcome
from trinity_desktop.workspace import Workspace

LAYOUT_VERSION = 2


class MainWindow(QtWidgets.QMainWindow):
    def __init__(self, store: ScenarioStore, settings: QtCore.QSettings | None = None,
                 autosave_dir: Path | None = None):
        super().__init__()
        self.store = store
        self.settings = settings
        self.setWindowTitle("Trinity Desktop — compute · bandwidth · memory")
        self.setObjectName("MainWindow")
        self.layout_plan = plan_for(available_geometry())   # window size and tab groups for this screen
        self.resize(self.layout_plan.size)
        self.setDockOptions(QtWidgets.QMainWindow.DockOption.AnimatedDocks
                            | QtWidgets.QMainWindow.DockOption.AllowTabbedDocks)
        self.hardware = dict(hardware_presets())
        self.models = dict(model_presets())
        self._heatmap_hardware = None

        # Panels are built when their dock is first shown (or first asked for): see _build_panel.
        self.panels = LazyPanels((spec.name for spec in DOCKS), self._build_panel, self._panel_built)
        self.docks: dict[str, QtWidgets.QDockWidget] = {}
        self._stale: set[str] = set()
        self._wired = False
        self.talk = TalkController(self)
        self._build_docks()
        self.controls.set_choices(self.hardware, self.models)
        self._default_state = self.saveState(LAYOUT_VERSION)

        self.shortcuts_overlay: ShortcutsOverlay | None = None
        self.workspace = Workspace(self, autosave_dir)
        self._build_menus()
        self.status = StatusSummary()
        self.statusBar().addPermanentWidget(self.status, 1)

        self.controls.edited.connect(self._on_controls_edited)
        store.changed.connect(self._on_results)
        store.rejected.connect(self._on_rejected)
        store.focusChanged.connect(self._on_focus)
        for name, panel in self.panels.built().items():
            self._wire(name, panel)
        self._wired = True  # panels built from now on are wired as they are built (_panel_built)
        for name in self.panels:  # one delivery per panel, built or not (an unbuilt one is stale)
            if name not in self.EDITING_DOCKS:
                store.changed.connect(lambda results, n=name: self._deliver(n, results))
        store.changed.connect(self._restyle_for_theme)
        store.changed.connect(self._settle_layouts)  # last: after every panel has drawn the new results
        self._on_results(store.results)
        self.bands = install_bands(self)  # uncertainty bands: computed off the UI thread (ui/bands.py)
        QtWidgets.QApplication.instance().aboutToQuit.connect(self.stop_background_work)
        for name, dock in self.docks.items():  # a panel hidden behind a tab catches up when it is shown
            dock.visibilityChanged.connect(lambda shown, n=name: shown and self._catch_up(n))
        # Panels draw the first results when they are first shown (visibilityChanged), not all at start-up.
        self._stale = {n for n in self.panels if n not in self.EDITING_DOCKS}
        self._shown_once = False
        self._restored = self.restore_layout()
        self.set_theme(str(settings.value("view/theme", "system")) if settings is not None else "system")
        self.welcome = Welcome(self)   # the first-run page (shown by app.run on a first run, or Help ▸ Welcome)

    # --- docks and layout -----------------------------------------------------------------------
    @property
    def controls(self) -> ScenarioControls:
        return self.panels["controls"]

    @property
    def breakdown(self):
        return self.panels["breakdown"]

    @property
    def heatmap(self):
        return self.panels["heatmap"]

    def _build_docks(self) -> None:
        """Create every registered dock and lay them out: controls left, a 2 x 2 grid of tab groups right.
        Only the panels of the docks in front of each group are built now; the rest when first shown."""
        leaders: dict[str, QtWidgets.QDockWidget] = {}
        followers: list[tuple[str, QtWidgets.QDockWidget]] = []
        for spec in DOCKS:
            dock = QtWidgets.QDockWidget(spec.tab_title, self)   # the tab's short name; the full one beside it
            dock.setObjectName(f"dock_{spec.name}")
            dock.setProperty("fullTitle", spec.title)
            # Forms and lists scroll; chart panels shrink to their dock. The panel itself is built when the
            # dock is first shown (LazyPanels), or now for the dock in front of each group.
            dock.setWidget(DockScroll(None, self.layout_plan.controls_width if spec.position == "left" else None)
                           if spec.name in FORM_DOCKS else DockHolder())
            dock.setAccessibleName(f"{spec.title} panel")
            self.docks[spec.name] = dock
            position = self.layout_plan.group(spec.position)
            if position not in leaders:
                self.panels[spec.name]  # noqa: B018 (builds it: this dock is in front at start)
            if position == "left" and "left" not in leaders:
                self.addDockWidget(QtCore.Qt.DockWidgetArea.LeftDockWidgetArea, dock)
                leaders["left"] = dock
            elif position in leaders:
                followers.append((position, dock))
            else:
                self._place_leader(position, dock, leaders)
                leaders[position] = dock
        for position, dock in followers:
            self.tabifyDockWidget(leaders[position], dock)
        if self.layout_plan.folded:   # a small screen: the secondary docks wait in the View menu
            for spec in DOCKS:
                if spec.secondary:
                    self.docks[spec.name].hide()
        for dock in leaders.values():
            dock.raise_()
        self._group_leaders = leaders

    def showEvent(self, event: QtGui.QShowEvent) -> None:
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            keep_on_screen(self)
            if not self._restored:  # the default layout: controls narrow, the four centre groups equal
                # Settled now, before the first paint (a timer would paint the window twice at start-up).
                self.layout().activate()
                self._settle_default_layout()
                self._settle_layouts()
        QtCore.QTimer.singleShot(0, self.hide_stale_tab_bars)

    def _settle_default_layout(self) -> None:
        columns = [self._group_leaders[g] for g in ("top-left", "top-right") if g in self._group_leaders]
        if len(columns) == 2:   # the centre columns equally wide (before the controls take their width)
            sep = self.style().pixelMetric(QtWidgets.QStyle.PixelMetric.PM_DockWidgetSeparatorExtent)
            half = (self.width() - self.layout_plan.controls_width - 3 * sep) // 2
            self.resizeDocks(columns, [half, half], QtCore.Qt.Orientation.Horizontal)
        rows = [self._group_leaders[g] for g in ("top-left", "bottom-left") if g in self._group_leaders]
        if len(rows) == 2:   # the triangle's row taller: its drawing is limited by height (LEAD_ROW_SHARE)
            self.resizeDocks(rows, list(lead_row_heights(rows[0].height() + rows[1].height())),
                             QtCore.Qt.Orientation.Vertical)
        self.resizeDocks([self.docks["controls"]], [self.layout_plan.controls_width], QtCore.Qt.Orientation.Horizontal)
        self._default_state = self.saveState(LAYOUT_VERSION)

    def event(self, event: QtCore.QEvent) -> bool:
        if event.type() == QtCore.QEvent.Type.ChildPolished and isinstance(event.child(), QtWidgets.QTabBar):
            QtCore.QTimer.singleShot(0, self.hide_stale_tab_bars)   # a tab group made by a drag reads whole too
        return super().event(event)

    def hide_stale_tab_bars(self) -> None:
        """Dock tab bars: stale ones hidden, live ones with whole short names (dock_tabs.tidy_tab_bars)."""
        tidy_tab_bars(self)

    def _place_leader(self, position: str, dock, leaders: dict) -> None:
        horizontal, vertical = QtCore.Qt.Orientation.Horizontal, QtCore.Qt.Orientation.Vertical
        anchor = {"top-right": ("top-left", horizontal), "bottom-left": ("top-left", vertical),
                  "bottom-right": ("top-right", vertical)}.get(position)
        placed = [dock for pos, dock in leaders.items() if pos != "left"]
        if not placed:
            self.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, dock)
        elif anchor and anchor[0] in leaders:
            self.splitDockWidget(leaders[anchor[0]], dock, anchor[1])
        else:
            self.splitDockWidget(placed[0], dock, vertical if position.startswith("bottom") else horizontal)

    def _build_panel(self, name: str) -> QtWidgets.QWidget:
        spec = next(s for s in DOCKS if s.name == name)
        panel = spec.factory()
        self.docks[name].widget().set_panel(panel)
        return panel

    def _panel_built(self, name: str, panel: QtWidgets.QWidget) -> None:
        if name == "deck":
            self.talk.attach(panel)
        if self._wired:
            self._wire(name, panel)
            if current_theme() != "light":
                restyle_plots(panel)
            bands = getattr(self, "bands", None)
            if bands is not None and isinstance(panel, pp.BandsView):
                panel.set_bands(bands.current)

    def _wire(self, name: str, panel: QtWidgets.QWidget) -> None:
        """Connect a panel to the store by the methods and signals it offers (panels never see the store),
        and to the panels already built (splitChanged, stageFocused)."""
        if not isinstance(panel, pp.ResultsView):
            self._stale.discard(name)
        if isinstance(panel, pp.HardwareChoicesView):
            panel.set_hardware_choices(self.hardware)
        if isinstance(panel, pp.FocusView) and panel is not self.heatmap:
            self.store.focusChanged.connect(panel.set_focus)
        if isinstance(panel, pp.FocusSource):
            panel.focusRequested.connect(self.store.set_focus)
        if isinstance(panel, pp.EditSource):
            panel.editRequested.connect(lambda change: self.store.edit("Edit from panel", **change))
        if isinstance(panel, pp.ScenarioSource):
            panel.scenarioRequested.connect(lambda sc: self.store.set_scenario(sc, "Apply from panel"))
        if isinstance(panel, pp.WorkloadSource):
            panel.workloadActivated.connect(self.activate_workload)
        if isinstance(panel, pp.CitationsView):
            panel.set_panel_citations({s.title: list(s.citations) for s in DOCKS if s.citations})
        for other in self.panels.built().values():
            for source, target in ((panel, other), (other, panel)) if other is not panel else ():
                if isinstance(source, pp.SplitSource) and isinstance(target, pp.SplitView):
                    source.splitChanged.connect(target.set_split_position)
                    target.set_split_position(source.optimum_position())
                if isinstance(source, pp.StageSource) and isinstance(target, pp.StageView):
                    source.stageFocused.connect(target.show_stage)
        if isinstance(panel, pp.WorkloadHoverSource):
            panel.workloadHovered.connect(lambda key: self.store.set_focus("workload" if key else "", key))

    layout_version = LAYOUT_VERSION
    EDITING_DOCKS = ("controls", "deck")  # hidden while presenting; never part of a slide's dock set

    def slide_panels(self) -> list[QtWidgets.QWidget]:
        """The built panels a slide can show (every one but the controls and the slide list), Results or not
        (the claims table, the sources)."""
        return [p for n, p in self.panels.built().items() if n not in self.EDITING_DOCKS]

    def result_panels(self) -> list[QtWidgets.QWidget]:
        """The built panels that draw Results (everything but the controls and the slide list)."""
        return [p for n, p in self.panels.built().items()
                if isinstance(p, pp.ResultsView) and n not in self.EDITING_DOCKS]

    def show_slide_layout(self, slide) -> None:
        """Lay the docks out for a slide: in presentation mode (or for a slide without a saved layout) its
        panels side by side, one to four of them; otherwise the layout the slide recorded."""
        presenting = self.talk.presenter.active
        if slide.layout and not presenting:
            self.restore_checked(base64.b64decode(slide.layout), f"The layout of slide “{slide.title}”")
        else:
            names = [n for n in self.docks if f"dock_{n}" in slide.docks and n not in self.EDITING_DOCKS]
            self.arrange(names or ["breakdown"], keep_editing=not presenting)
        QtCore.QTimer.singleShot(0, self.hide_stale_tab_bars)

    def arrange(self, names: list[str], keep_editing: bool = True) -> None:
        """Show only the named panels, untabbed: 1 fills the centre, 2 side by side, 3 as one left and two
        stacked right, 4 as a 2 x 2 grid. The scenario controls and slides stay on the left if kept."""
        horizontal, vertical = QtCore.Qt.Orientation.Horizontal, QtCore.Qt.Orientation.Vertical
        for name, dock in self.docks.items():
            if name in self.EDITING_DOCKS:
                dock.setVisible(keep_editing)
            elif name not in names:
                dock.hide()
        docks = [self.docks[n] for n in names[:4]]
        for dock in docks:
            self.removeDockWidget(dock)
        self.addDockWidget(QtCore.Qt.DockWidgetArea.RightDockWidgetArea, docks[0])
        if len(docks) >= 2:
            self.splitDockWidget(docks[0], docks[1], horizontal)
        if len(docks) == 3:
            self.splitDockWidget(docks[1], docks[2], vertical)
        if len(docks) == 4:
            self.splitDockWidget(docks[0], docks[2], vertical)
            self.splitDockWidget(docks[1], docks[3], vertical)
        for dock in docks:
            dock.show()
        width = max(self.width() // 2, 1)
        if len(docks) >= 2:
            self.resizeDocks(docks[:2], [width, width], horizontal)
        if len(docks) == 4:
            self.resizeDocks([docks[0], docks[2]], [self.height() // 2] * 2, vertical)

    def _deliver(self, name: str, results: Results) -> None:
        """Redraw a panel the user can see now; remember that a hidden one is out of date."""
        dock = self.docks[name]
        if dock.isVisible() and not dock.visibleRegion().isEmpty():  # not hidden, not behind another tab
            panel = self.panels[name]  # built now if it never was
            if isinstance(panel, pp.ResultsView):
                update_or_explain(panel, results)  # a panel that cannot draw says so in place
            self._stale.discard(name)
        else:
            self._stale.add(name)

    def _catch_up(self, name: str) -> None:
        """A dock was shown: build its panel if it never was, and draw the current results if stale."""
        panel = self.panels[name]
        if name in self._stale:
            self._stale.discard(name)
            if isinstance(panel, pp.ResultsView):
                update_or_explain(panel, self.store.results)
            self._restyle_for_theme(root=panel)

    def refresh_all(self) -> None:
        """Bring every panel, hidden, unbuilt or not, up to date (exports and tests that read hidden panels)."""
        for name in list(self._stale):
            self._catch_up(name)

    def _settle_layouts(self, _results=None) -> None:
        """Settle what the new results changed before anything paints, so that each view paints once per edit:
        activate the invalidated layouts (titles, legends, labels resize the plots), then let each visible
        pyqtgraph view apply its deferred range (pyqtgraph does that at the start of a paint, and the moved
        items then ask for a second paint)."""
        for _ in range(3):  # a layout that changes a parent's size posts one more request
            QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)
        for view in self.findChildren(pg.GraphicsView):
            if view.isVisible():
                view.scene().prepareForPaint()

    def _restyle_for_theme(self, _results=None, root=None) -> None:
        """After a redraw: the theme's colours, and every text colour readable on its background (WCAG 4.5:1).
        The light theme's plot colours are the panels' own, so only their rich-text and list colours are
        checked there (a cheap walk)."""
        if current_theme() != "light":
            restyle_plots(root or self)
        else:
            restyle_widget_text(root or self)

    def set_theme(self, name: str) -> str:
        used = apply_theme(name, self)
        if self.isVisible():   # at start-up no panel has drawn yet
            self._redraw_for_theme()
        for action in self.theme_actions.actions():
            action.setChecked(action.data() == name)
        if self.settings is not None:
            self.settings.setValue("view/theme", name)
        return used

    def _redraw_for_theme(self) -> None:
        """Markers and fills whose colours a panel picks from the theme as it draws (the roofline's star outline)
        are drawn again: each built panel the user can see now redraws, a hidden one is redrawn when shown."""
        for name in self.panels.built():
            if name not in self.EDITING_DOCKS:
                self._deliver(name, self.store.results)
        self._restyle_for_theme()

    def pressure_help_text(self) -> str:
        """Help ▸ How pressures are computed, written for people (help_texts.py)."""
        return PRESSURE_HELP.strip()

    def show_pressure_help(self) -> None:
        box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Information, "How pressures are computed", "",
                                    QtWidgets.QMessageBox.StandardButton.Ok, self)
        box.setTextFormat(QtCore.Qt.TextFormat.RichText)
        box.setText(self.pressure_help_text())
        box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def show_shortcuts(self) -> None:
        if self.shortcuts_overlay is None:
            self.shortcuts_overlay = ShortcutsOverlay(self)
        self.shortcuts_overlay.refresh(self)
        self.shortcuts_overlay.show()
        self.shortcuts_overlay.raise_()

    def restore_layout(self) -> bool:
        """Restore the saved dock layout; fall back to the default if it is missing, stale or broken."""
        if self.settings is None:
            return False
        geometry = self.settings.value("window/geometry")
        state = self.settings.value("window/state")
        version = self.settings.value("window/layout_version")
        if state is None or str(version) != str(LAYOUT_VERSION):
            return False
        if isinstance(geometry, QtCore.QByteArray):
            self.restoreGeometry(geometry)
        if not self.restore_checked(state, "The saved window layout"):
            self.reset_layout()
            return False
        return True

    def restore_checked(self, state, where: str) -> bool:
        """Restore a saved layout only when layout_state finds it well formed (Qt's restoreState can crash on a
        damaged one); otherwise the default layout and a status-bar message saying why."""
        data = bytes(state) if isinstance(state, (QtCore.QByteArray, bytes, bytearray)) else b""
        toolbars = [bar.objectName() for bar in self.findChildren(QtWidgets.QToolBar)]
        problem = check_layout(data, LAYOUT_VERSION, [d.objectName() for d in self.docks.values()], toolbars)
        if not problem and self.restoreState(QtCore.QByteArray(data), LAYOUT_VERSION):
            return True
        self.restoreState(self._default_state, LAYOUT_VERSION)
        self.statusBar().showMessage(f"{where} was not used ({problem or 'Qt refused it'}); "
                                     "showing the default layout", 15000)
        return False

    def save_layout(self) -> None:
        if self.settings is None:
            return
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState(LAYOUT_VERSION))
        self.settings.setValue("window/layout_version", LAYOUT_VERSION)
        self.settings.sync()

    def reset_layout(self) -> None:
        self.restoreState(self._default_state, LAYOUT_VERSION)
        for dock in self.docks.values():
            dock.show()
        QtCore.QTimer.singleShot(0, self.hide_stale_tab_bars)

    def stop_background_work(self) -> None:
        """Before the app quits: the bands' worker, a planner search and the validation rows finish or stop, so
        that no worker thread reaches into a window being destroyed (seen: a segfault at exit, now and then)."""
        self.bands.shutdown(wait=True)
        for panel in self.panels.built().values():
            if isinstance(panel, pp.WorkerOwner):
                panel.stop_workers()

    def closeEvent(self, event: QtGui.QCloseEvent) -> None:
        self.save_layout()
        self.workspace.clean_exit()
        self.stop_background_work()   # no worker outlives its window (a closed window's threads leaked until exit)
        super().closeEvent(event)

    # --- menus and files -------------------------------------------------------------------------
    def _build_menus(self) -> None:
        self.file_loader = build_menus(self)

    def load_hardware_file(self, path: str | Path) -> str:
        """Add the file's hardware to the choices; returns "" or the error shown to the user."""
        return self.file_loader.load_hardware_file(path)

    def load_model_file(self, path: str | Path) -> str:
        return self.file_loader.load_model_file(path)

    # --- store wiring ---------------------------------------------------------------------------
    def _on_controls_edited(self, change: dict) -> None:
        change = dict(change)
        for field in ("hardware", "model"):   # the combo's data: a preset's key or a session's own item
            if field in change:
                change[field] = self.controls.choice(field, change[field])
        name = ", ".join(change)
        self.store.edit(f"Set {name}", **change)

    def _on_rejected(self, message: str) -> None:
        self.controls.show_error(message)
        self.controls.show_scenario(self.store.scenario)  # widgets go back to the last valid scenario

    def _on_results(self, results: Results) -> None:
        self.controls.clear_error()
        self.controls.show_scenario(results.scenario)
        hw = results.scenario.hardware
        if hw != self._heatmap_hardware:  # the library depends only on the hardware (and efficiency)
            self._heatmap_hardware = hw
            self.heatmap.update_rows(evaluate_library(hw, results.scenario), hw.name)
        self.status.show_results(results)

    def _on_focus(self, what: str, key: str) -> None:
        self.heatmap.set_focus(key if what == "workload" else "")

    def activate_workload(self, key: str) -> None:
        entry = workload_library().get(key)
        if entry is None:
            return
        try:
            scenario = workload_scenario(entry, self.store.scenario.hardware, self.store.scenario)
        except ValidationError as exc:
            self.controls.show_error(str(exc))
            return
        self.store.set_scenario(scenario, f"Load workload {entry['name']}")
