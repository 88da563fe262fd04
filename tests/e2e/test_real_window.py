"""End to end: the app opens a real X window (xcb under Xvfb) and renders its default layout."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# The window's default size is 1600x1000 logical pixels; the screenshot is a grab of the window,
# so allow for window-manager-less sizing and device pixel ratio rather than an exact match.
MIN_WIDTH, MIN_HEIGHT = 1200, 800
MIN_COLOURS = 32  # a blank or single-colour window has a handful at most


def x11_env(display: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "QT_PLUGIN_PATH")}
    env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb", XDG_SESSION_TYPE="x11")
    return env


@pytest.mark.e2e
def test_screenshot_from_a_real_x_window(tmp_path, xvfb_display, png_info):
    out = tmp_path / "out.png"
    # cwd=tmp_path: the installed package is used, not whatever `-m` would find in the work tree.
    result = subprocess.run(
        [sys.executable, "-m", "trinity_desktop", "--screenshot", str(out)],
        env=x11_env(xvfb_display),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    assert out.is_file() and out.stat().st_size > 0, "no screenshot written"
    width, height, colours = png_info(out)
    assert width >= MIN_WIDTH and height >= MIN_HEIGHT, (width, height)
    assert colours > MIN_COLOURS, f"screenshot looks blank: {colours} distinct colours"
