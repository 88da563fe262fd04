"""The main window's menu bar (File, Edit, View, Talk, Help) and the hardware and model files it loads."""

from __future__ import annotations

from pathlib import Path

from PySide6 import QtGui, QtWidgets

from trinity_desktop.about import show_about
from trinity_desktop.docks import DOCKS
from trinity_desktop.model.inputs.presets import PresetError, load_hardware_file, load_model_file
from trinity_desktop.ui import panel_protocol as pp
from trinity_desktop.ui.theme import THEME_NAMES


class FileLoader:
    """File ▸ Load hardware / model file: the definitions join the Scenario form's choices."""

    def __init__(self, window):
        self.window = window

    def ask_hardware_file(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self.window, "Load hardware file", "", "TOML (*.toml)")
        if path:
            self.load_hardware_file(path)

    def ask_model_file(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self.window, "Load model file", "", "Model files (*.toml *.json)")
        if path:
            self.load_model_file(path)

    def load_hardware_file(self, path: str | Path) -> str:
        """Add the file's hardware to the choices; returns "" or the error shown to the user."""
        try:
            items = load_hardware_file(path)
        except PresetError as exc:
            return self._report(str(exc))
        self.window.hardware.update({hw.key: hw for hw in items})
        for panel in self.window.panels.built().values():  # panels built before the file offer its devices too
            if isinstance(panel, pp.HardwareChoicesView):
                panel.set_hardware_choices(self.window.hardware)
        return self._loaded(f"Loaded {len(items)} hardware definition(s) from {path}")

    def load_model_file(self, path: str | Path) -> str:
        try:
            items = load_model_file(path)
        except PresetError as exc:
            return self._report(str(exc))
        self.window.models.update({m.key: m for m in items})
        return self._loaded(f"Loaded {len(items)} model(s) from {path}")

    def _loaded(self, message: str) -> str:
        win = self.window
        win.controls.set_choices(win.hardware, win.models)
        win.controls.show_scenario(win.store.scenario)
        win.statusBar().showMessage(message, 8000)
        return ""

    def _report(self, message: str) -> str:
        self.window.controls.show_error(message)
        self.window.statusBar().showMessage(message, 15000)
        return message


def build_menus(w) -> FileLoader:
    """Fill the window's menu bar; sets w.undo_action, w.redo_action, w.view_menu and w.theme_actions."""
    loader = FileLoader(w)
    bar = w.menuBar()
    file_menu = bar.addMenu("&File")
    w.workspace.build_file_menu(file_menu)
    file_menu.addSeparator()
    load_hw = file_menu.addAction("Load &hardware file…", loader.ask_hardware_file)
    load_hw.setToolTip("Add hardware definitions from a TOML file with the preset keys")
    load_model = file_menu.addAction("Load &model file…", loader.ask_model_file)
    load_model.setToolTip("Add model architectures from a TOML file with the preset keys, or a Hugging Face config.json")
    file_menu.addSeparator()
    quit_action = file_menu.addAction("&Quit", w.close)
    quit_action.setShortcut(QtGui.QKeySequence.StandardKey.Quit)

    edit_menu = bar.addMenu("&Edit")
    w.undo_action = w.store.undo_stack.createUndoAction(w, "&Undo")
    w.undo_action.setShortcut(QtGui.QKeySequence("Ctrl+Z"))
    w.redo_action = w.store.undo_stack.createRedoAction(w, "&Redo")
    w.redo_action.setShortcuts([QtGui.QKeySequence("Ctrl+Shift+Z"), QtGui.QKeySequence("Ctrl+Y")])
    edit_menu.addAction(w.undo_action)
    edit_menu.addAction(w.redo_action)

    w.view_menu = bar.addMenu("&View")
    for spec in DOCKS:
        action = w.docks[spec.name].toggleViewAction()
        action.setText(spec.title)   # the full name (the tab shows the short one)
        if spec.shortcut:
            action.setShortcut(QtGui.QKeySequence(spec.shortcut))
        w.view_menu.addAction(action)
    w.view_menu.addSeparator()
    w.view_menu.addAction("Reset &layout", w.reset_layout)
    theme_menu = w.view_menu.addMenu("&Theme")
    w.theme_actions = QtGui.QActionGroup(w)
    for name in THEME_NAMES:
        action = theme_menu.addAction(name.replace("-", " ").capitalize() if name != "system"
                                      else "Follow the system")
        action.setCheckable(True)
        action.setData(name)
        w.theme_actions.addAction(action)
        action.triggered.connect(lambda _on, n=name: w.set_theme(n))
    talk_menu = bar.addMenu("&Talk")
    for action in w.talk.actions():
        talk_menu.addAction(action)
    help_menu = bar.addMenu("&Help")
    welcome = help_menu.addAction("&Welcome and the 60-second tour", lambda: w.welcome.show())
    welcome.setToolTip("What the AI Trinity is, the example talks, and a tour of the main panels")
    keys = help_menu.addAction("&Keyboard shortcuts", w.show_shortcuts)
    keys.setShortcuts([QtGui.QKeySequence("F1"), QtGui.QKeySequence("?")])
    help_menu.addAction("How &pressures are computed", w.show_pressure_help)
    help_menu.addSeparator()
    about = help_menu.addAction("&About Trinity Desktop", lambda: show_about(w))
    about.setToolTip("Version, and the licences of the libraries the app ships with")
    return loader
