"""Shared builds for the slow packaging tests: the one-folder bundle and the Linux installers are built once per
test session and used by tests/e2e/test_bundle.py and tests/e2e/test_installer.py.

`make test` runs on every core with `--dist worksteal` (so that a test whose worker crashes can be rerun), which
may give packaging tests to several workers: the first worker to take a file lock builds, the others wait for it
and use its build (`_built_once`, tests/once_per_session.py). tests/long_first.py keeps the packaging tests
together at the front of one worker's block, so nobody waits in practice."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from once_per_session import built_once as _built_once  # tests/ is on sys.path

ROOT = Path(__file__).resolve().parents[2]
NAME = "trinity-desktop"


def _pyinstaller_requirement() -> str:
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["package"]
    return next(req for req in extra if req.lower().startswith("pyinstaller"))


def _ensure_pyinstaller() -> None:
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", _pyinstaller_requirement()], check=True, timeout=600)


@pytest.fixture(scope="session")
def frozen_bundle(tmp_path_factory) -> Path:
    """dist/trinity-desktop built by packaging/build_bundle.sh from this environment, once per session.

    TRINITY_BUNDLE=path/to/trinity-desktop tests an existing build instead (for example `make bundle`'s).
    """
    given = os.environ.get("TRINITY_BUNDLE")
    if given:
        bundle = Path(given).resolve()
        assert (bundle / NAME).is_file(), f"TRINITY_BUNDLE={given}: no {NAME} executable there"
        return bundle
    _ensure_pyinstaller()
    return Path(_built_once(tmp_path_factory, "bundle", _build_bundle)["bundle"])


def _build_bundle(base: Path) -> dict[str, str]:
    dist, work = base / "dist", base / "work"
    start = time.monotonic()
    build = subprocess.run(
        ["bash", str(ROOT / "packaging" / "build_bundle.sh")],
        env={**os.environ, "PYTHON": sys.executable, "DIST": str(dist), "WORK": str(work)},
        cwd=ROOT, capture_output=True, text=True, timeout=1800,
    )
    assert build.returncode == 0, f"bundle build failed\n{build.stdout[-6000:]}\n{build.stderr[-6000:]}"
    print(f"\n[bundle] built in {time.monotonic() - start:.0f} s")
    shutil.rmtree(work, ignore_errors=True)  # PyInstaller's work dir: ~100 MB not needed after the build
    return {"bundle": str(dist / NAME)}


@pytest.fixture(scope="session")
def linux_installers(request, tmp_path_factory) -> dict[str, Path]:
    """{"deb": the .deb, "tar": the portable .tar.xz} built by packaging/linux_installers.py from the bundle.

    TRINITY_INSTALLERS=folder tests installers built before instead (for example `make installer`'s dist/).
    """
    if not sys.platform.startswith("linux"):
        pytest.skip("the .deb and .tar.xz are Linux installers")
    given = os.environ.get("TRINITY_INSTALLERS")
    if given:
        found = {"deb": sorted(Path(given).glob("*.deb")), "tar": sorted(Path(given).glob("*.tar.xz"))}
        assert all(found.values()), f"TRINITY_INSTALLERS={given}: no .deb and .tar.xz there"
        return {kind: paths[-1] for kind, paths in found.items()}
    missing = [tool for tool in ("dpkg-deb", "dpkg-shlibdeps", "xz", "tar") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (Debian: apt-get install dpkg-dev xz-utils)")
    frozen_bundle = request.getfixturevalue("frozen_bundle")

    def build(out: Path) -> dict[str, str]:
        run = subprocess.run(
            [sys.executable, str(ROOT / "packaging" / "linux_installers.py"), "--bundle", str(frozen_bundle),
             "--out", str(out)],
            capture_output=True, text=True, timeout=1800,
        )
        assert run.returncode == 0, f"installer build failed\n{run.stdout[-4000:]}\n{run.stderr[-4000:]}"
        return {"deb": str(next(out.glob("*.deb"))), "tar": str(next(out.glob("*.tar.xz")))}

    return {kind: Path(path) for kind, path in _built_once(tmp_path_factory, "installers", build).items()}


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
    from png_images import png_info as read  # tests/ is on sys.path: its conftest.py has no package

    return read
