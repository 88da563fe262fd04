"""Presentable as it is, judged on what a person sees: at 1366 x 768 and 1920 x 1080, in the light, dark and
high-contrast themes, the window fits the screen, no chart dock scrolls, and with every dock brought to the
front in turn it has at least its declared minimum size, no drawn line runs through a label, no curve hides
under another, no text overlaps, is clipped, shortened with "…" or cut by its width, no tab or form value is
cut, and no plot text is faint (under 3:1 against the pixels behind it). In every theme the layout also
survives an edit sequence and its undo exactly, and every slide of every shipped deck gives its panels their room
and shows no faint text.

Each (size, theme) runs `python -m trinity_desktop.layout_audit WxH --theme T --json` once in its own process
(a QApplication's screen cannot change once it exists); the tests read that one report. No tolerance list.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from once_per_session import built_once  # tests/ is on sys.path

from trinity_desktop.layout_plan import lead_row_heights, parse_screen, plan_for

SIZES = ("1366x768", "1920x1080")
THEMES = ("light", "dark", "high-contrast")


pytestmark = pytest.mark.long(seconds=140)   # six audits of about 140 s each, edits and slides included (tests/long_first.py runs them first)


@pytest.fixture(scope="module", params=[(s, t) for s in SIZES for t in THEMES], ids=lambda p: f"{p[0]}-{p[1]}")
def audit(request, tmp_path_factory):
    """The audit's report at one size and theme, made once per session even when `--dist load` hands this
    module's tests to several workers (tests/once_per_session.py)."""
    size, theme = request.param
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env["QT_QPA_PLATFORM"] = "offscreen"

    def run(_folder) -> dict:   # every theme runs the edit sequence and presents every slide of every deck
        out = subprocess.run([sys.executable, "-m", "trinity_desktop.layout_audit", size, "--theme", theme, "--json"],
                             env=env, capture_output=True, text=True, timeout=900)
        assert out.returncode in (0, 1), out.stderr[-2000:]
        return json.loads(out.stdout)

    return f"{size} {theme}", built_once(tmp_path_factory, f"layout-audit-{size}-{theme}", run)


def _dump(value) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False)


def test_the_window_opens_inside_the_screen(audit):
    where, report = audit
    assert report["screen"] == list(parse_screen(where.split()[0]))
    assert report["fits"], f"window {report['window']} outside the {where} screen"


def test_no_chart_dock_scrolls(audit):
    where, report = audit
    scrolling = [d["name"] for d in report["docks"] if d["scrolls"]]
    assert scrolling == [], f"at {where} these chart docks scroll: {scrolling}"


def test_every_chart_dock_in_front_has_its_declared_room(audit):
    """In the default layout (and after the edits and their undo), each chart dock brought to the front is at
    least its declared minimum size (docks.DockSpec.min_size), by the rule the slides are checked with."""
    where, report = audit
    crushed = {d["name"]: d["crushed"] for d in report["docks"] if d["crushed"]}
    assert crushed == {}, f"at {where}: {_dump(crushed)}"
    assert {d["name"] for d in report["docks"]} >= {"triangle", "breakdown", "heatmap", "roofline"}


def test_no_text_overlaps_or_is_cut(audit):
    where, report = audit
    keys = ("overlaps", "clipped", "shortened", "cut")
    problems = {}
    for d in report["docks"]:
        found = {k: d[k] for k in keys if d[k]}
        if found:
            problems[d["name"]] = found
    assert problems == {}, f"at {where}: {_dump(problems)}"


def test_no_plot_text_is_faint(audit):
    where, report = audit
    faint = {d["name"]: d["faint"] for d in report["docks"] if d["faint"]}
    assert faint == {}, f"at {where}, under 3:1 against the pixels behind: {_dump(faint)}"


def test_tabs_form_values_and_status_bar_read_whole(audit):
    where, report = audit
    problems = {k: v for k, v in report["window_problems"].items() if v}
    assert problems == {}, f"at {where}: {_dump(problems)}"


def test_the_layout_survives_edits_and_undo(audit):
    where, report = audit
    assert len(report["edits"]["steps"]) >= 4
    assert report["edits"]["problems"] == [], f"at {where}: {_dump(report['edits']['problems'])}"


def test_every_slide_gives_its_panels_their_room(audit):
    where, report = audit
    assert len(report["slides"]) >= 20   # the four shipped decks
    bad = [s for s in report["slides"] if s["crushed"] or s["texts"] or s["outside"]]   # outside: past the screen
    assert bad == [], f"at {where}: {_dump(bad)}"


def test_the_plan_shows_fewer_panels_on_a_small_screen():
    from PySide6 import QtCore

    laptop, projector = plan_for(QtCore.QSize(1366, 768)), plan_for(QtCore.QSize(1920, 1080))
    assert (laptop.columns, laptop.rows) == (2, 1) and (projector.columns, projector.rows) == (2, 2)
    assert laptop.size == QtCore.QSize(1366, 768) and projector.size == QtCore.QSize(1920, 1080)
    assert laptop.group("bottom-right") == "top-right" and projector.group("bottom-right") == "bottom-right"
    # two rows: the triangle's group takes 56% of its column, the group below never under MIN_PANEL's height
    assert lead_row_heights(989) == (554, 435) and lead_row_heights(860) == (440, 420)
    tiny = plan_for(QtCore.QSize(900, 600))
    assert (tiny.columns, tiny.rows) == (1, 1) and tiny.group("bottom-right") == "top-left"


@pytest.mark.parametrize("text", ["12x", "1366by768", "100x100", "x768"])
def test_a_bad_screen_size_is_refused_with_a_clear_message(text):
    out = subprocess.run([sys.executable, "-m", "trinity_desktop", "--screen", text, "--version"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "--screen" in out.stderr and "Traceback" not in out.stderr
