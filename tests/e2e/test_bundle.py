"""End to end: build the PyInstaller one-folder bundle and run the frozen app in a real X window."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .test_real_window import MIN_COLOURS, MIN_HEIGHT, MIN_WIDTH, x11_env

ROOT = Path(__file__).resolve().parents[2]


def _pyinstaller_requirement() -> str:
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["package"]
    return next(req for req in extra if req.lower().startswith("pyinstaller"))


def _ensure_pyinstaller() -> None:
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", _pyinstaller_requirement()], check=True, timeout=600)


def _tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def _frozen_env(display: str) -> dict[str, str]:
    env = x11_env(display)
    for key in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"):
        env.pop(key, None)
    return env


@pytest.mark.slow
@pytest.mark.e2e
def test_frozen_bundle_renders_a_screenshot(tmp_path, xvfb_display, png_info, record_property, capsys):
    _ensure_pyinstaller()
    dist, work = tmp_path / "dist", tmp_path / "work"
    build = subprocess.run(
        ["bash", str(ROOT / "packaging" / "build_bundle.sh")],
        env={**os.environ, "PYTHON": sys.executable, "DIST": str(dist), "WORK": str(work)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert build.returncode == 0, f"bundle build failed\n{build.stdout[-6000:]}\n{build.stderr[-6000:]}"

    bundle = dist / "trinity-desktop"
    exe = bundle / "trinity-desktop"
    assert exe.is_file() and os.access(exe, os.X_OK), f"no executable at {exe}"
    size_mb = _tree_size(bundle) / 1e6
    record_property("bundle_size_mb", round(size_mb, 1))
    du = subprocess.run(["du", "-sh", str(bundle)], capture_output=True, text=True).stdout.split("\t")[0]
    with capsys.disabled():
        print(f"\n[bundle] {bundle}: {size_mb:.1f} MB (du -sh: {du})")

    # Frozen app: the presets come from the bundled TOML files through importlib.resources.
    presets = subprocess.run(
        [str(exe), "presets", "--json"], env=_frozen_env(xvfb_display), cwd=tmp_path,
        capture_output=True, text=True, timeout=120,
    )
    assert presets.returncode == 0, f"exit {presets.returncode}\n{presets.stdout[-3000:]}\n{presets.stderr[-3000:]}"
    assert json.loads(presets.stdout), "presets --json printed no presets"

    out = tmp_path / "out.png"
    run = subprocess.run(
        [str(exe), "--screenshot", str(out)], env=_frozen_env(xvfb_display), cwd=tmp_path,
        capture_output=True, text=True, timeout=180,
    )
    assert run.returncode == 0, f"exit {run.returncode}\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
    width, height, colours = png_info(out)
    assert width >= MIN_WIDTH and height >= MIN_HEIGHT, (width, height)
    assert colours > MIN_COLOURS, f"screenshot looks blank: {colours} distinct colours"
