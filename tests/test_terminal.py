"""Terminal hygiene (issue 26, "Terminal"): without a display the GUI commands say so in one line and exit 2
(Qt aborted with SIGABRT and a six-line message); file names with newlines or control characters are printed
escaped, on one line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _env_without_display() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return env


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux session without a display")
@pytest.mark.parametrize("args", [["--screenshot", "out.png"], ["deck.json", "--present-to", "slides"],
                                  ["--startup-time"], [], ["bench"]],
                         ids=["screenshot", "present-to", "startup-time", "window", "bench"])
def test_no_display_is_one_line_and_exit_2(tmp_path, args):
    run = subprocess.run([sys.executable, "-m", "trinity_desktop", *args], cwd=tmp_path, env=_env_without_display(),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2, (run.returncode, run.stderr[-1000:])
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "no display found" in lines[0], run.stderr
    assert not (tmp_path / "out.png").exists()


def test_a_file_name_with_a_newline_and_control_characters_is_printed_escaped(tmp_path):
    name = "bad\nname\x1b[31m.json"
    path = tmp_path / name
    path.write_text("{not json", encoding="utf-8")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    run = subprocess.run([sys.executable, "-m", "trinity_desktop", str(path), "--screenshot", str(tmp_path / "o.png")],
                         env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "bad\\nname\\x1b[31m.json" in lines[0] and "\x1b" not in run.stderr
