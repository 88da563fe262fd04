"""Presentable at any size: the window fits a 1366 x 768 laptop and a 1920 x 1080 projector, no chart dock
scrolls, and with every dock brought to the front in turn no two texts overlap and none is cut by its plot.

Each size runs `python -m trinity_desktop.layout_audit WxH` in its own process: the offscreen platform is
given one screen of that size (a QApplication's screen cannot change once it exists).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from trinity_desktop.layout_plan import parse_screen, plan_for

SIZES = ("1366x768", "1920x1080")


@pytest.fixture(scope="module", params=SIZES)
def audit(request):
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    env["QT_QPA_PLATFORM"] = "offscreen"
    out = subprocess.run([sys.executable, "-m", "trinity_desktop.layout_audit", request.param], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return request.param, json.loads(out.stdout)


def test_the_window_opens_inside_the_screen(audit):
    size, report = audit
    assert report["screen"] == list(parse_screen(size))
    assert report["fits"], f"window {report['window']} outside the {size} screen"


def test_no_chart_dock_scrolls(audit):
    size, report = audit
    scrolling = [d["name"] for d in report["docks"] if d["scrolls"]]
    assert scrolling == [], f"at {size} these chart docks scroll: {scrolling}"


def test_no_text_overlaps_or_is_cut(audit):
    size, report = audit
    problems = {d["name"]: {"overlaps": d["overlaps"], "clipped": d["clipped"]} for d in report["docks"]
                if d["overlaps"] or d["clipped"]}
    assert problems == {}, f"at {size}: {json.dumps(problems, indent=1, ensure_ascii=False)}"


def test_the_plan_shows_fewer_panels_on_a_small_screen():
    from PySide6 import QtCore

    laptop, projector = plan_for(QtCore.QSize(1366, 768)), plan_for(QtCore.QSize(1920, 1080))
    assert (laptop.columns, laptop.rows) == (2, 1) and (projector.columns, projector.rows) == (2, 2)
    assert laptop.size == QtCore.QSize(1366, 768) and projector.size == QtCore.QSize(1920, 1080)
    assert laptop.group("bottom-right") == "top-right" and projector.group("bottom-right") == "bottom-right"
    tiny = plan_for(QtCore.QSize(900, 600))
    assert (tiny.columns, tiny.rows) == (1, 1) and tiny.group("bottom-right") == "top-left"


@pytest.mark.parametrize("text", ["12x", "1366by768", "100x100", "x768"])
def test_a_bad_screen_size_is_refused_with_a_clear_message(text):
    out = subprocess.run([sys.executable, "-m", "trinity_desktop", "--screen", text, "--version"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "--screen" in out.stderr and "Traceback" not in out.stderr
