"""Help -> About: the version from its one home, the bundled libraries' licences and where their texts are."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import tomllib
from pathlib import Path

import pytest
from PySide6 import QtWidgets

from trinity_desktop import __version__, about
from trinity_desktop.app import build_window

ROOT = Path(__file__).resolve().parents[2]


def test_version_has_one_home():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "trinity_desktop.__version__"
    assert importlib.metadata.version("trinity-desktop") == __version__


def test_every_bundled_library_has_its_licence_text():
    for dep in about.DEPENDENCIES:
        files = about.licence_files(dep)
        assert files, f"no licence text found for {dep.dist}"
        assert all(p.is_file() and p.stat().st_size > 200 for p in files), files
    lgpl = about.shipped_licence("LGPL-3.0.txt").read_text()
    assert "GNU LESSER GENERAL PUBLIC LICENSE" in lgpl and "Version 3" in lgpl
    assert "GNU GENERAL PUBLIC LICENSE" in about.shipped_licence("GPL-3.0.txt").read_text()


def test_bundle_licence_entries_have_one_folder_per_library():
    folders = {folder for _source, folder in about.bundle_licence_entries()}
    assert {f"licenses/{d.dist}" for d in about.DEPENDENCIES} <= {f.split("/", 2)[0] + "/" + f.split("/", 2)[1]
                                                                    for f in folders}
    assert all(f.startswith("licenses/") for f in folders)


def test_about_text_names_version_qt_licence_and_where_the_texts_are():
    html = about.about_html()
    assert f"Trinity Desktop {__version__}" in html
    assert about.qt_version() in html and "LGPL-3.0-only" in html
    for dep in about.DEPENDENCIES:
        assert dep.dist in html and dep.licence in html
    assert "LGPL-3.0.txt" in html  # not frozen: each text's path is listed


def test_help_menu_opens_the_about_dialog(qtbot):
    window = build_window(settings=None)
    qtbot.addWidget(window)
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    action = next(a for a in help_menu.actions() if a.text().startswith("&About"))
    assert action.toolTip()
    action.trigger()
    dialog = window.findChild(QtWidgets.QDialog, "about_dialog")
    assert dialog is not None and dialog.isVisible()
    text = dialog.findChild(QtWidgets.QTextBrowser, "about_text")
    assert __version__ in text.toPlainText() and "LGPL" in text.toPlainText()
    for widget in (text, *dialog.findChildren(QtWidgets.QPushButton)):
        assert widget.toolTip() and widget.accessibleName()
    dialog.close()


def test_icons_are_made_from_the_one_svg_source(tmp_path):
    """packaging/make_icons.py: hicolor PNGs at their sizes, a multi-size .ico and an .icns, all from icon.svg."""
    image = pytest.importorskip("PIL.Image", reason="Pillow comes with the package extra")
    spec = importlib.util.spec_from_file_location("make_icons", ROOT / "packaging" / "make_icons.py")
    make_icons = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_icons)
    written = make_icons.make_icons(tmp_path)
    for n in make_icons.HICOLOR_SIZES:
        png = image.open(tmp_path / "hicolor" / f"{n}x{n}" / "apps" / "trinity-desktop.png")
        assert png.size == (n, n) and png.mode == "RGBA"
        assert png.getpixel((0, 0))[3] == 0 and png.getpixel((n // 2, n // 2))[3] == 255  # rounded corner, body
    ico = image.open(tmp_path / "trinity-desktop.ico")
    assert {(n, n) for n in make_icons.ICO_SIZES} <= set(ico.info["sizes"])
    icns = image.open(tmp_path / "trinity-desktop.icns")
    assert icns.size == (1024, 1024)
    assert len(written) == len(make_icons.HICOLOR_SIZES) + 2
