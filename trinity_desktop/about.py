"""Help → About: the app's version, the licences of the libraries it ships with, and where their texts are.

The dependency table below is the one list of what the installers bundle: the PyInstaller spec
(packaging/trinity.spec) copies each dependency's licence files from its installed metadata into the
bundle's `licenses/` folder with `licence_files`, so the About box and the bundle say the same.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import sys
from dataclasses import dataclass
from html import escape
from pathlib import Path

from trinity_desktop import __version__

APP_NAME = "Trinity Desktop"
APP_LICENCE = "MIT"  # pyproject.toml [project] license
LICENCE_DIR_NAME = "licenses"  # the folder in the bundle that holds every shipped licence text

# A file in a distribution's metadata is a licence text when its name says so (LICENSE.txt, COPYING, NOTICE ...).
_LICENCE_NAME = re.compile(r"licen[cs]e|copying|notice", re.IGNORECASE)


@dataclass(frozen=True)
class Dependency:
    """A library shipped inside the installers: the distribution, the module that carries its version, its licence
    (SPDX identifier, as each project's licence file states it) and what it is used for."""

    dist: str
    module: str
    licence: str
    role: str
    texts: tuple[str, ...] = ()  # licence texts the app ships in resources/licenses/ (the wheel carries none)


# The LGPL v3 adds permissions to the GPL v3, so both texts go with Qt (verbatim FSF texts).
QT_TEXTS = ("LGPL-3.0.txt", "GPL-3.0.txt")

DEPENDENCIES = (
    Dependency("PySide6-Essentials", "PySide6", "LGPL-3.0-only",
               "Qt 6 libraries and their Python binding (dynamically linked, replaceable)", QT_TEXTS),
    Dependency("shiboken6", "shiboken6", "LGPL-3.0-only", "binding runtime of PySide6", QT_TEXTS),
    Dependency("pyqtgraph", "pyqtgraph", "MIT", "plots"),
    Dependency("numpy", "numpy", "BSD-3-Clause", "arrays (its wheel bundles OpenBLAS, BSD-3-Clause)"),
    Dependency("scipy", "scipy", "BSD-3-Clause", "statistics and optimisation in the model core"),
)
PYTHON_LICENCE = "PSF-2.0"


def is_frozen() -> bool:
    """True inside the PyInstaller bundle."""
    return bool(getattr(sys, "frozen", False))


def bundle_licence_dir() -> Path | None:
    """The bundle's licence folder, or None when running from a source or venv install."""
    if not is_frozen():
        return None
    return Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent)) / LICENCE_DIR_NAME


def licence_files(dep: Dependency) -> list[Path]:
    """Absolute paths of a dependency's licence texts: those the app ships for it, then those in its installed
    distribution's metadata (LICENSE.txt, COPYING ... in *.dist-info)."""
    found = [shipped_licence(name) for name in dep.texts]
    try:
        distribution = importlib.metadata.distribution(dep.dist)
    except importlib.metadata.PackageNotFoundError:
        return found
    for entry in distribution.files or ():
        parts = entry.parts
        in_metadata = any(p.endswith((".dist-info", ".egg-info")) for p in parts[:-1])
        if in_metadata and _LICENCE_NAME.search(parts[-1]):
            found.append(Path(distribution.locate_file(entry)).resolve())
    return found


def shipped_licence(name: str) -> Path:
    """A licence text in the app's own resources (resources/licenses/NAME)."""
    from importlib.resources import files

    return Path(str(files("trinity_desktop.resources") / "licenses" / name))


def python_licence_file() -> Path | None:
    """The running Python's LICENSE.txt (it ships with the interpreter), or None if this install has none."""
    base = Path(sys.base_prefix)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (base / "lib" / version / "LICENSE.txt", base / "LICENSE.txt", base / "Lib" / "LICENSE.txt",
                      Path(f"/usr/share/doc/{version}/copyright")):
        if candidate.is_file():
            return candidate
    return None


def dependency_version(dep: Dependency) -> str:
    try:
        return str(importlib.import_module(dep.module).__version__)
    except ImportError:
        return "not installed"


def qt_version() -> str:
    from PySide6 import QtCore

    return QtCore.qVersion()


def bundle_licence_entries() -> list[tuple[Path, str]]:
    """(source file, folder under licenses/) for every licence text the bundle ships: one folder per dependency
    (the dist-info layout kept, e.g. numpy/numpy/random/LICENSE.md), plus Python's. Used by packaging/trinity.spec."""
    entries = []
    for dep in DEPENDENCIES:
        for path in licence_files(dep):
            inside = path.parts[next((i for i, p in enumerate(path.parts) if p.endswith(".dist-info")), -2) + 1:-1]
            inside = inside[1:] if inside[:1] == (LICENCE_DIR_NAME,) else inside  # dist-info/licenses/...
            entries.append((path, str(Path(LICENCE_DIR_NAME, dep.dist, *inside))))
    python = python_licence_file()
    if python is not None:
        entries.append((python, str(Path(LICENCE_DIR_NAME, "Python"))))
    return entries


def licence_locations() -> list[str]:
    """Where the licence texts are: the bundle's folder when frozen, else each installed file."""
    folder = bundle_licence_dir()
    if folder is not None:
        return [str(folder)]
    return list(dict.fromkeys(str(source) for source, _ in bundle_licence_entries()))


def about_html() -> str:
    """The About box's text (Qt rich text)."""
    rows = [f"<tr><td>Qt</td><td>{escape(qt_version())}</td><td>LGPL-3.0-only</td>"
            "<td>GUI toolkit (shipped as shared libraries of PySide6-Essentials)</td></tr>"]
    rows += [f"<tr><td>{escape(d.dist)}</td><td>{escape(dependency_version(d))}</td><td>{escape(d.licence)}</td>"
             f"<td>{escape(d.role)}</td></tr>" for d in DEPENDENCIES]
    rows.append(f"<tr><td>Python</td><td>{sys.version.split()[0]}</td><td>{PYTHON_LICENCE}</td>"
                "<td>interpreter</td></tr>")
    where = "".join(f"<li>{escape(p)}</li>" for p in licence_locations())
    return (
        f"<h2>{APP_NAME} {escape(__version__)}</h2>"
        "<p>Compute, bandwidth and memory of AI workloads as one design space (arXiv 2601.11577).<br>"
        f"Licensed under the {APP_LICENCE} licence.</p>"
        "<p>It ships with these libraries, each under its own licence:</p>"
        "<table cellspacing='6'><tr><th align='left'>library</th><th align='left'>version</th>"
        "<th align='left'>licence</th><th align='left'>used for</th></tr>" + "".join(rows) + "</table>"
        "<p>Qt and PySide6 are used under the GNU Lesser General Public License v3: they are separate shared "
        "libraries in the application folder, which you may replace with your own compatible builds; "
        "their source is at https://download.qt.io/official_releases/.</p>"
        f"<p>The full licence texts are here:</p><ul>{where}</ul>"
    )


def app_icon():
    """The app's icon (QIcon) from the one icon source, resources/icon.svg (packaging/make_icons.py renders the rest)."""
    from importlib.resources import files

    from PySide6 import QtGui

    return QtGui.QIcon(str(files("trinity_desktop.resources") / "icon.svg"))


def show_about(parent) -> None:
    """Open the About dialog (non-modal, deleted on close)."""
    from PySide6 import QtCore, QtGui, QtWidgets

    dialog = QtWidgets.QDialog(parent)
    dialog.setWindowTitle(f"About {APP_NAME}")
    dialog.setObjectName("about_dialog")
    dialog.setAccessibleName(f"About {APP_NAME}")
    dialog.setAttribute(QtCore.Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.setWindowIcon(app_icon())
    layout = QtWidgets.QVBoxLayout(dialog)
    text = QtWidgets.QTextBrowser(dialog)
    text.setObjectName("about_text")
    text.setHtml(about_html())
    text.setOpenLinks(False)
    text.setToolTip("Version and the licences of the bundled libraries")
    text.setAccessibleName("About text")
    text.setMinimumSize(640, 420)
    layout.addWidget(text)
    buttons = QtWidgets.QDialogButtonBox(QtWidgets.QDialogButtonBox.StandardButton.Close, dialog)
    close = buttons.button(QtWidgets.QDialogButtonBox.StandardButton.Close)
    close.setToolTip("Close this window")
    close.setAccessibleName("Close")
    folder = bundle_licence_dir()
    if folder is not None:
        open_folder = buttons.addButton("Open licence folder", QtWidgets.QDialogButtonBox.ButtonRole.ActionRole)
        open_folder.setToolTip(f"Show the licence texts in the file manager ({folder})")
        open_folder.setAccessibleName("Open licence folder")
        open_folder.clicked.connect(
            lambda: QtGui.QDesktopServices.openUrl(QtCore.QUrl.fromLocalFile(str(folder))))
    buttons.rejected.connect(dialog.close)
    layout.addWidget(buttons)
    dialog.show()
