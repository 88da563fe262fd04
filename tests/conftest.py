"""Shared test setup. UI fixtures live in tests/ui/conftest.py."""

import os

# Before anything imports Qt: unit and UI tests render offscreen, on one 1920 x 1080 screen (the projector
# size the default layout is planned for). The e2e tests that need a real X window set QT_QPA_PLATFORM=xcb
# for their own subprocess.
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    from trinity_desktop.layout_plan import offscreen_platform

    os.environ["QT_QPA_PLATFORM"] = offscreen_platform(1920, 1080)

import shutil  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402


def _skip_or_fail(reason: str) -> None:
    """Skip locally, fail under CI: a CI run must exercise the real window."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (CI=true: refusing to skip)")
    pytest.skip(reason)


@pytest.fixture
def xvfb_display(tmp_path):
    """Start a private Xvfb server and yield its DISPLAY (":NN"); torn down after the test.

    Skips with a reason if Xvfb is not installed, fails instead when CI=true.
    """
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        _skip_or_fail("Xvfb is not installed (apt-get install xvfb)")
    log = open(tmp_path / "xvfb.log", "wb")
    # -displayfd: Xvfb picks a free display number itself and writes it to the pipe.
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [xvfb, "-displayfd", str(write_fd), "-screen", "0", "1920x1200x24", "-nolisten", "tcp", "-noreset"],
        pass_fds=(write_fd,),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    os.close(write_fd)
    display = b""
    deadline = time.monotonic() + 30
    try:
        with os.fdopen(read_fd, "rb") as pipe:
            while not display.endswith(b"\n") and time.monotonic() < deadline:
                chunk = pipe.read(1)
                if not chunk:
                    break
                display += chunk
        if not display.strip():
            proc.kill()
            proc.wait()
            log.close()
            _skip_or_fail(f"Xvfb did not start: {(tmp_path / 'xvfb.log').read_text(errors='replace')[-2000:]}")
        yield f":{display.decode().strip()}"
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()


@pytest.fixture
def png_info():
    """Function (path) -> (width, height, distinct colours) of a PNG, read with QImage (no display needed)."""

    def read(path: Path) -> tuple[int, int, int]:
        import numpy as np
        from PySide6.QtGui import QImage

        image = QImage(str(path))
        assert not image.isNull(), f"{path} is not a readable image"
        image = image.convertToFormat(QImage.Format.Format_RGB32)
        width, height, stride = image.width(), image.height(), image.bytesPerLine() // 4
        data = np.frombuffer(image.constBits(), dtype=np.uint32, count=stride * height)
        return width, height, int(np.unique(data.reshape(height, stride)[:, :width]).size)

    return read
