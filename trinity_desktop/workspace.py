"""Keeping work: session files (open, save, recent), autosave with crash recovery, and exports.

File formats and their checks live in `session_file`; this module wires them to menus and the store.
"""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from trinity_desktop import session_file
from trinity_desktop.autosave import Autosaver
from trinity_desktop.deck import example_decks
from trinity_desktop.session_file import SessionFileError
from trinity_desktop.ui import export
from trinity_desktop.ui.presentation_protocol import IdleWaiter, RowsExporter
from trinity_desktop.welcome import deck_cards

MAX_RECENT = 8
FILE_FILTER = "Trinity session (*.trinity.json *.json)"


def panel_plots(panel: QtWidgets.QWidget) -> list[pg.PlotItem]:
    """Every pyqtgraph plot in a panel, in reading order (a panel may hold several)."""
    plots = []
    for view in panel.findChildren(pg.GraphicsView):
        scene = view.scene()
        if scene is not None:
            plots += [item for item in scene.items() if isinstance(item, pg.PlotItem) and item.isVisible()]
    return sorted(set(plots), key=lambda p: (p.scenePos().y(), p.scenePos().x(), id(p)))


class Workspace(QtCore.QObject):
    def __init__(self, window, autosave_dir: Path | None = None):
        super().__init__(window)
        self.window = window
        self.path: Path | None = None
        self.autosaver: Autosaver | None = None
        if autosave_dir is not None:
            self.autosaver = Autosaver(autosave_dir, parent=self)
            self.autosaver.failed.connect(lambda msg: window.statusBar().showMessage(f"Autosave failed: {msg}", 8000))
            window.store.changed.connect(lambda _r: self._schedule())
            window.talk.deckChanged.connect(lambda _d: self._schedule())
        self.recent_menu: QtWidgets.QMenu | None = None

    # --- menus ---------------------------------------------------------------------------------
    def build_file_menu(self, menu: QtWidgets.QMenu) -> None:
        win = self.window
        for text, keys, tip, slot in (
                ("&Open…", QtGui.QKeySequence.StandardKey.Open, "Open a session or talk deck file", self.ask_open),
                ("&Save", QtGui.QKeySequence.StandardKey.Save, "Save the scenario and the deck", self.save),
                ("Save &as…", QtGui.QKeySequence("Ctrl+Shift+S"), "Save to a new file", self.ask_save_as)):
            action = menu.addAction(text, slot)
            action.setShortcut(keys)
            action.setToolTip(tip)
        self.recent_menu = menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        examples = menu.addMenu("Open &example deck")
        for title, _count, path in deck_cards():   # by the titles the welcome page and the Slides dock show
            examples.addAction(title, lambda p=path: self.open_path(p))
        menu.addSeparator()
        exports = menu.addMenu("&Export")
        entries = (
            ("Window as PNG (2×)…", "", lambda: self._ask_export("window", "png", 2)),
            ("Current panel as PNG (2×)…", "", lambda: self._ask_export(None, "png", 2)),
            ("Current panel as PNG (3×)…", "", lambda: self._ask_export(None, "png", 3)),
            ("Current panel as SVG…", "", lambda: self._ask_export(None, "svg", 1)),
            ("Current panel data as CSV…", "", lambda: self._ask_export(None, "csv", 1)),
            ("Copy current panel image", "Ctrl+Shift+C", lambda: self.copy_panel(None)),
            ("Deck: PNG per slide and PDF…", "", self._ask_export_deck),
        )
        for text, keys, slot in entries:
            action = exports.addAction(text, slot)
            if keys:
                action.setShortcut(QtGui.QKeySequence(keys))
                action.setShortcutContext(QtCore.Qt.ShortcutContext.ApplicationShortcut)
        win.addActions(exports.actions())

    # --- files ---------------------------------------------------------------------------------
    def ask_open(self) -> None:
        path, _ = QtWidgets.QFileDialog.getOpenFileName(self.window, "Open session", "", FILE_FILTER)
        if path:
            self.open_path(path)

    def open_path(self, path: str | Path) -> str:
        """Load a session file; on any problem show the message and change nothing. Returns the error or ""."""
        try:
            scenario, deck = session_file.load(path)
        except SessionFileError as exc:
            return self._refuse(str(exc))
        win = self.window
        win.store.set_scenario(scenario, f"Open {Path(path).name}")
        win.talk.set_deck(deck, 0 if deck is not None and deck.slides else -1)
        example = str(Path(path).resolve()).startswith(str(Path(example_decks()[0]).parent.resolve())
                                                       if example_decks() else "\0")
        if not example:
            self.path = Path(path)
        self._remember(Path(path))
        self._update_title()
        opened = f"the example talk “{deck.title}”" if example and deck is not None else str(path)
        win.statusBar().showMessage(f"Opened {opened}", 6000)   # an example deck by its title, not its install path
        return ""

    def recover(self, path: str | Path) -> str:
        """Restore an autosave left by a crash: the work comes back untitled (the autosave is not the user's file,
        so neither the title nor Recent files name it) and is autosaved again at once by this instance."""
        try:
            scenario, deck = session_file.load(path)
        except SessionFileError as exc:
            return self._refuse(f"Could not restore the autosaved work: {exc}")
        win = self.window
        win.store.set_scenario(scenario, "Restore autosaved work")
        win.talk.set_deck(deck, 0 if deck is not None and deck.slides else -1)
        self.path = None
        self._update_title(recovered=True)
        win.statusBar().showMessage("Restored the work autosaved before Trinity Desktop last stopped", 8000)
        if self.autosaver is not None:
            self._schedule()
            if self.autosaver.flush():  # the work is safe in this instance's autosave: forget that one only
                Autosaver.discard_one(Path(path))
        return ""

    def save(self) -> str:
        if self.path is None:
            return self.ask_save_as()
        return self.save_path(self.path)

    def ask_save_as(self) -> str:
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self.window, "Save session", "untitled.trinity.json",
                                                        FILE_FILTER)
        return self.save_path(path) if path else ""

    def save_path(self, path: str | Path) -> str:
        win = self.window
        try:
            written = session_file.save(path, win.store.scenario, win.talk.deck)
        except (OSError, SessionFileError) as exc:
            return self._refuse(f"Could not save {path}: {exc}")
        self.path = written
        self._remember(written)
        self._update_title()
        win.statusBar().showMessage(f"Saved {written}", 6000)
        return ""

    def _refuse(self, message: str) -> str:
        win = self.window
        win.statusBar().showMessage(message, 15000)
        if win.isVisible() and not QtCore.QCoreApplication.instance().property("trinity_quiet"):
            box = QtWidgets.QMessageBox(QtWidgets.QMessageBox.Icon.Warning, "Trinity Desktop", message,
                                        QtWidgets.QMessageBox.StandardButton.Ok, win)
            box.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()
        return message

    def _update_title(self, recovered: bool = False) -> None:
        name = self.path.name if self.path else ("untitled (recovered)" if recovered else "untitled")
        self.window.setWindowTitle(f"{name} — Trinity Desktop")

    def recent_files(self) -> list[str]:
        settings = self.window.settings
        if settings is None:
            return []
        value = settings.value("files/recent", [])
        items = [value] if isinstance(value, str) else list(value or [])
        return [p for p in items if p]

    def _remember(self, path: Path) -> None:
        settings = self.window.settings
        if settings is None:
            return
        items = [str(path.resolve())] + [p for p in self.recent_files() if p != str(path.resolve())]
        settings.setValue("files/recent", items[:MAX_RECENT])

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        if not files:
            self.recent_menu.addAction("(none)").setEnabled(False)
        for path in files:
            self.recent_menu.addAction(path, lambda p=path: self.open_path(p))

    # --- autosave ------------------------------------------------------------------------------
    def _schedule(self) -> None:
        if self.autosaver is not None:
            self.autosaver.schedule(self.window.store.scenario, self.window.talk.deck)

    def clean_exit(self) -> None:
        if self.autosaver is not None:
            self.autosaver.clean_exit()

    def keep_for_recovery(self) -> None:
        """Terminated (SIGTERM): the unsaved work is written now and kept for the next start to offer."""
        if self.autosaver is not None:
            self.autosaver.keep_for_recovery()

    # --- exports -------------------------------------------------------------------------------
    def current_panel_name(self) -> str:
        """The panel the user is working in: the dock holding keyboard focus, else the first visible plot."""
        win = self.window
        focus = QtWidgets.QApplication.focusWidget()
        for name, dock in win.docks.items():
            if focus is not None and dock.isAncestorOf(focus) and name not in win.EDITING_DOCKS:
                return name
        for name, dock in win.docks.items():
            if dock.isVisible() and name not in win.EDITING_DOCKS and not dock.visibleRegion().isEmpty():
                return name
        return "breakdown"

    def _target(self, name: str | None) -> QtWidgets.QWidget:
        name = name or self.current_panel_name()
        self.window.refresh_all()
        panels = self.window.panels.values() if name == "window" else [self.window.panels[name]]
        for panel in panels:  # worker-thread panels (the planner) finish and draw before an export
            if isinstance(panel, IdleWaiter) and panel.wait_idle():
                QtCore.QCoreApplication.processEvents()
        return self.window if name == "window" else self.window.panels[name]

    def export_png(self, name: str | None, path: str | Path, scale: int = 2) -> QtCore.QSize:
        """The panel (or window) as a PNG of scale x its size, written atomically (png_output)."""
        from trinity_desktop.png_output import save_png

        image = export.render_widget(self._target(name), scale)
        save_png(image, path)
        return image.size()

    def export_svg(self, name: str | None, path: str | Path) -> Path:
        """The whole panel as SVG: every plot of a multi-plot panel, with its labels and legends as drawn."""
        target = self._target(name)
        if not panel_plots(target):
            raise ValueError("this panel has no plot to export as SVG")
        return export.export_widget_svg(target, path)

    def export_csv(self, name: str | None, path: str | Path) -> int:
        """The data behind every plot of the panel in one CSV (a 'plot' column says which; series are named
        after what they are). A panel that draws images of values offers them as `export_rows()`; a panel
        without plots (the references) writes its table."""
        import csv

        target = self._target(name)
        plots = panel_plots(target)
        extra = target.export_rows() if isinstance(target, RowsExporter) else []
        tables = target.findChildren(QtWidgets.QTableView)
        if not plots and not extra and tables:
            return export.table_csv(tables[0], path)
        names = export.item_names(target)
        rows = 0
        with open(path, "w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(("plot", *export.CSV_COLUMNS))
            for row in extra:
                writer.writerow([row.get("plot", ""), *(export._cell(row.get(c)) for c in export.CSV_COLUMNS)])
                rows += 1
            for index, plot in enumerate(plots):
                title = export.plain_text(plot.titleLabel.text) or f"plot {index + 1}"
                for row in export.plot_rows(plot, names):
                    writer.writerow([title, *(export._cell(row.get(c)) for c in export.CSV_COLUMNS)])
                    rows += 1
        return rows

    def copy_panel(self, name: str | None) -> QtGui.QImage:
        image = export.copy_widget_image(self._target(name))
        self.window.statusBar().showMessage("Panel image copied to the clipboard", 4000)
        return image

    def export_deck(self, folder: str | Path, scale: int = 2) -> list[Path]:
        """One PNG per slide, drawn as presented (title, caption and panels; no menus, controls or tab bars),
        and deck.pdf with the same pages."""
        from trinity_desktop.png_output import save_png
        from trinity_desktop.presentation import render_slides

        win, deck = self.window, self.window.talk.deck
        if deck is None or not deck.slides:
            raise ValueError("the deck has no slides")
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        before, focus = win.store.scenario, win.store.focus
        images, written = [], []
        for i, image in render_slides(win, scale):
            path = folder / f"slide_{i + 1:02d}.png"
            try:
                save_png(image, path)  # atomically: a failed export keeps the previous file
            except OSError as exc:
                raise OSError(f"could not write the PNG {path}: {exc}") from None
            images.append(image)
            written.append(path)
        export.export_pdf(images, folder / "deck.pdf")
        written.append(folder / "deck.pdf")
        win.store.set_scenario(before, "Back from deck export")
        win.store.set_focus(*focus)
        return written

    def _ask_export(self, name: str | None, kind: str, scale: int) -> None:
        suffix = {"png": "PNG image (*.png)", "svg": "SVG image (*.svg)", "csv": "CSV data (*.csv)"}[kind]
        target = name or self.current_panel_name()
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self.window, f"Export {target}", f"{target}.{kind}", suffix)
        if not path:
            return
        try:
            if kind == "png":
                self.export_png(name, path, scale)
            elif kind == "svg":
                self.export_svg(name, path)
            else:
                self.export_csv(name, path)
        except (OSError, ValueError) as exc:
            self._refuse(f"Export failed: {exc}")
            return
        self.window.statusBar().showMessage(f"Exported {path}", 6000)

    def _ask_export_deck(self) -> None:
        folder = QtWidgets.QFileDialog.getExistingDirectory(self.window, "Export deck to folder")
        if not folder:
            return
        try:
            written = self.export_deck(folder)
        except (OSError, ValueError) as exc:
            self._refuse(f"Deck export failed: {exc}")
            return
        self.window.statusBar().showMessage(f"Exported {len(written)} files to {folder}", 8000)
