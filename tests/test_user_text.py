"""Nothing shown to users refers to the project's own notes, seed files or issue numbers: user-facing text
cites a paper or states its assumption."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INTERNAL = re.compile(r"(?<![-\w])seeds?/|seed notes|the seed'?s?\b|project's (own )?notes|\bissue ?#?\d", re.IGNORECASE)


def _user_strings(path: Path) -> list[tuple[int, str]]:
    """String literals of a module that are not docstrings (docstrings document code, not the UI)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_user_text_refers_to_project_notes():
    hits = []
    for folder in ("ui", "trinity_desktop"):
        for path in sorted((ROOT / folder).glob("*.py")):
            hits += [f"{path.relative_to(ROOT)}:{line}: {text[:80]}" for line, text in _user_strings(path)
                     if INTERNAL.search(text)]
    for path in sorted((ROOT / "resources").rglob("*")):
        if path.suffix in (".toml", ".json"):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if INTERNAL.search(line) and not line.lstrip().startswith("#"):
                    hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    assert hits == []


# --- code names and file names -------------------------------------------------------------------------------
# A field or function name (snake_case, two letters or more before the first underscore: "request_s",
# "kv_heads"; "m_i" is notation) or a file or source path ("memory_tiers.toml", "model/views/split.py") in what a
# person reads. A name in braces is a caption template a person types ("{step_time}").
CODE_NAME = re.compile(r"(?<![\w{./-])[a-z][a-z0-9]+(?:_[a-z0-9]+)+(?![\w}(/-])")
FILE_NAME = re.compile(r"\b[\w-]+\.(?:py|toml|json|csv|md)\b|\b(?:model|ui|resources|trinity_desktop|tests|formulas)/\w")
# Names a person types in another tool, cited as such (not this project's own names).
EXTERNAL = {"tp_comm_overlap": "Transformer Engine's option", "max_num_batched_tokens": "vLLM's engine argument",
            "config.json": "a Hugging Face model's configuration file"}


def code_names(text: str) -> list[str]:
    """The code and file names in `text` that are not another tool's published names."""
    from trinity_desktop.model.base.dtypes import (
        WEIGHT_FORMAT,  # "q4_k", "gptq4_g128": the formats' own names
    )

    found = CODE_NAME.findall(text) + FILE_NAME.findall(text)
    return [name for name in found if name not in EXTERNAL and name not in WEIGHT_FORMAT]


def test_the_check_finds_code_names():
    assert code_names("request_s moves the off-HBM KV") == ["request_s"]
    assert code_names("at a latency the memory_tiers.toml states") == ["memory_tiers", "memory_tiers.toml"]
    assert code_names("the Split computing panel (model/views/split.py) computes it") == ["model/v", "split.py"]
    assert code_names("Names in braces: {step_time}, {kv_cache}; q4_k weights; m_i per tile; off-HBM") == []


def test_no_code_names_in_help_welcome_tour_or_the_technique_catalogue():
    from trinity_desktop.audit_text import plain
    from trinity_desktop.defaults import default_scenario
    from trinity_desktop.help_texts import PRESSURE_HELP
    from trinity_desktop.model.views import stages
    from trinity_desktop.model.views.techniques import load_techniques, previewable
    from trinity_desktop.tour import STOPS
    from trinity_desktop.ui.deck_panel import EMPTY_TEXT
    from trinity_desktop.welcome import FIRST_STEPS, SENTENCES

    texts = {"help": plain(PRESSURE_HELP), "welcome": " ".join(SENTENCES + sum(FIRST_STEPS, ())),
             "tour": " ".join(s.note for s in STOPS), "slides": EMPTY_TEXT}
    sc = default_scenario()
    texts["flow notes"] = " ".join(stages.notes(sc))
    for key, t in load_techniques().items():   # their hovers in the triangle, trade-offs and technique lists
        texts[f"technique {key}"] = " ".join((t.name, t.note, t.reason, previewable(t, sc)[1]))
    hits = {where: code_names(text) for where, text in texts.items() if code_names(text)}
    assert hits == {}
    assert "`" not in texts["help"] and "`" not in texts["welcome"]


def _shown_texts(window) -> list[tuple[str, str]]:
    """Every text the window shows or shows on hover: labels, buttons, titles, tooltips, placeholders, list,
    table and combo-box entries, menu entries and every text drawn on a plot."""
    from PySide6 import QtCore, QtGui, QtWidgets

    from trinity_desktop.audit_text import plain

    out = []

    def add(where, text):
        if text:
            out.append((where, plain(text)))

    tip = QtCore.Qt.ItemDataRole.ToolTipRole
    for w in window.findChildren(QtWidgets.QWidget):
        where = w.accessibleName() or w.objectName() or type(w).__name__
        add(where, w.toolTip())
        add(where, w.windowTitle())
        if isinstance(w, (QtWidgets.QLabel, QtWidgets.QAbstractButton, QtWidgets.QLineEdit)):
            add(where, w.text())
        if isinstance(w, QtWidgets.QLineEdit):
            add(where, w.placeholderText())
        if isinstance(w, QtWidgets.QGroupBox):
            add(where, w.title())
        if isinstance(w, QtWidgets.QComboBox):
            for i in range(w.count()):
                add(where, w.itemText(i))
                add(where, w.itemData(i, tip) or "")
        if isinstance(w, QtWidgets.QListWidget):
            for i in range(w.count()):
                add(where, w.item(i).text())
                add(where, w.item(i).toolTip())
        if isinstance(w, QtWidgets.QTableWidget):
            items = [w.item(r, c) for r in range(w.rowCount()) for c in range(w.columnCount())]
            items += [w.horizontalHeaderItem(c) for c in range(w.columnCount())]
            for item in filter(None, items):
                add(where, item.text())
                add(where, item.toolTip())
        if isinstance(w, QtWidgets.QGraphicsView) and w.scene() is not None:
            for item in w.scene().items():
                if isinstance(item, QtWidgets.QGraphicsTextItem):
                    add(where, item.toPlainText())
    for action in window.findChildren(QtGui.QAction):
        add("menu", action.text())
        add("menu", action.toolTip())
    return out


def test_no_code_names_in_what_the_window_shows(qtbot):
    """Every dock built and brought to the front once (the default scenario), the welcome page shown."""
    from trinity_desktop.app import build_window
    from trinity_desktop.presentation import settle_background_work

    window = build_window(settings=None)
    qtbot.addWidget(window, before_close_func=lambda w: w.stop_background_work())
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    for name, dock in window.docks.items():
        window.panels[name]
        dock.show()
        dock.raise_()
        qtbot.wait(10)
    settle_background_work(window)
    qtbot.wait(50)
    window.welcome.show()
    texts = _shown_texts(window)
    assert len(texts) > 1000   # the check reads the window, not an empty one
    hits = sorted({f"{where}: {names} in {text[:100]!r}" for where, text in texts if (names := code_names(text))})
    assert hits == []
