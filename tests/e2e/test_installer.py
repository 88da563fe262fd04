"""End to end: the Linux installers built from the bundle (conftest.py builds both once per session).

The .deb is installed with apt-get, run from PATH under Xvfb, asked to open a shipped deck through its desktop
entry's Exec line, and removed again; that part needs root and apt (CI runs as root) and skips otherwise.
"""

from __future__ import annotations

import configparser
import os
import shlex
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from trinity_desktop import __version__
from trinity_desktop.app import APPLICATION, ORGANIZATION

from .test_real_window import MIN_COLOURS, MIN_HEIGHT, MIN_WIDTH

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.bundle]  # one bundle build for all workers (tests/e2e/conftest.py)

BUDGET_MB = 70  # issue 13: each compressed installer
PACKAGE = "trinity-desktop"
# System libraries the xcb platform plugin links (ldd PySide6/Qt/plugins/platforms/libqxcb.so, libQt6XcbQpa):
# the .deb must depend on their packages.
XCB_PACKAGES = {"libxcb-cursor0", "libxkbcommon-x11-0", "libxcb-icccm4", "libxcb-keysyms1", "libxcb-shape0",
                "libxcb-randr0", "libxcb-render-util0", "libxcb-image0", "libx11-xcb1", "libxcb1", "libfontconfig1"}
INSTALLED_FILES = ["./opt/trinity-desktop/trinity-desktop", "./usr/bin/trinity-desktop",
                   "./usr/share/applications/trinity-desktop.desktop", "./usr/share/mime/packages/trinity-desktop.xml",
                   "./usr/share/icons/hicolor/48x48/apps/trinity-desktop.png",
                   "./usr/share/icons/hicolor/scalable/apps/trinity-desktop.svg",
                   "./usr/share/doc/trinity-desktop/copyright", "./usr/share/man/man1/trinity-desktop.1.gz"]


def deb_field(deb: Path, field: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), field], capture_output=True, text=True, check=True).stdout.strip()


def deb_paths(deb: Path) -> list[str]:
    """Paths in the package's data archive, as dpkg-deb -c lists them (./usr/bin/...), symlink targets dropped."""
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    return [line.split(None, 5)[5].split(" -> ")[0] for line in listing.splitlines()]


def test_installers_fit_the_size_budget(linux_installers, capsys):
    with capsys.disabled():
        for path in linux_installers.values():
            print(f"\n[installer] {path.name}: {path.stat().st_size / 1e6:.1f} MB")
    for path in linux_installers.values():
        assert path.stat().st_size / 1e6 <= BUDGET_MB, f"{path.name} is over {BUDGET_MB} MB"


def test_deb_metadata_contents_and_dependencies(linux_installers):
    deb = linux_installers["deb"]
    assert deb.name == f"{PACKAGE}_{__version__}_amd64.deb"
    assert deb_field(deb, "Package") == PACKAGE and deb_field(deb, "Version") == __version__
    assert deb_field(deb, "Architecture") == "amd64"
    depends = {alt.split()[0] for dep in deb_field(deb, "Depends").split(",") for alt in dep.split("|")}
    assert XCB_PACKAGES | {"libc6"} <= depends, f"missing: {XCB_PACKAGES - depends}"
    members = subprocess.run(["ar", "t", str(deb)], capture_output=True, text=True, check=True).stdout.split()
    assert members[0] == "debian-binary" and "data.tar.xz" in members and "control.tar.xz" in members
    paths = deb_paths(deb)
    assert set(INSTALLED_FILES) <= set(paths), set(INSTALLED_FILES) - set(paths)
    assert all(p.startswith(("./opt/trinity-desktop", "./usr/")) or p in ("./", "./opt/") for p in paths)


def test_deb_passes_lintian(linux_installers, capsys):
    """Clean but for the tags packaging/lintian-overrides explains (each with its reason)."""
    if shutil.which("lintian") is None:
        pytest.skip("lintian is not installed (apt-get install lintian)")
    run = subprocess.run(["lintian", "--fail-on", "error,warning", "--display-info", str(linux_installers["deb"])],
                         capture_output=True, text=True, timeout=900)
    with capsys.disabled():
        print(f"\n[lintian] exit {run.returncode}\n{run.stdout[-3000:]}{run.stderr[-2000:]}")
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]


def test_portable_tarball_launcher_runs_the_app(linux_installers, tmp_path, png_info):
    with tarfile.open(linux_installers["tar"]) as tar:
        tar.extractall(tmp_path, filter="tar")
    folder = tmp_path / f"{PACKAGE}-{__version__}-linux-x86_64"
    launcher = folder / PACKAGE
    assert os.access(launcher, os.X_OK) and launcher.read_text().startswith("#!/bin/sh")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path / "home"))
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / PACKAGE).symlink_to(launcher)  # a link on PATH still finds the folder
    version = subprocess.run([str(tmp_path / "bin" / PACKAGE), "--version"], env=env, capture_output=True,
                             text=True, timeout=120)
    assert version.stdout.strip() == f"trinity-desktop {__version__}", version.stderr[-2000:]
    out = tmp_path / "shot.png"
    shot = subprocess.run([str(launcher), "--screenshot", str(out)], env=env, capture_output=True, text=True,
                          timeout=180)
    assert shot.returncode == 0, shot.stderr[-3000:]
    width, height, colours = png_info(out)
    assert width >= MIN_WIDTH and height >= MIN_HEIGHT and colours > MIN_COLOURS


# --- install, run, open a deck, remove (root + apt) --------------------------------------------------------------


def _require_root_and_apt() -> None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("installing the .deb needs root (CI runs as root): run the suite as root to include it")
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        pytest.skip("apt-get/dpkg are not available: not a Debian-based system")
    if subprocess.run(["dpkg", "-s", PACKAGE], capture_output=True).returncode == 0:
        pytest.skip(f"{PACKAGE} is already installed on this machine: not touching it")


def _named(roots: tuple[str, ...]) -> set[str]:
    found = set()
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            found.update(os.path.join(dirpath, n) for n in dirnames + filenames if PACKAGE in n)
    return found


def _installed_env(tmp_path: Path, display: str) -> dict[str, str]:
    """A user's environment: PATH without any venv, a fresh HOME, the X display."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "QT_PLUGIN_PATH", "WAYLAND_DISPLAY")}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env.update(PATH="/usr/local/bin:/usr/bin:/bin", HOME=str(home), DISPLAY=display, QT_QPA_PLATFORM="xcb",
               XDG_SESSION_TYPE="x11")
    return env


def _window_titles(display: str) -> str:
    return subprocess.run(["xwininfo", "-root", "-tree", "-display", display], capture_output=True,
                          text=True).stdout


def test_deb_installs_runs_opens_a_deck_and_removes_cleanly(linux_installers, tmp_path, xvfb_display, png_info):
    _require_root_and_apt()
    deb = linux_installers["deb"]
    before = _named(("/opt", "/usr"))
    env = _installed_env(tmp_path, xvfb_display)
    apt_env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", f"./{deb.name}"],
                             cwd=deb.parent, env=apt_env, capture_output=True, text=True, timeout=900)
    try:
        assert install.returncode == 0, install.stdout[-4000:] + install.stderr[-4000:]
        assert shutil.which(PACKAGE, path=env["PATH"]) == f"/usr/bin/{PACKAGE}"

        # 1. the installed app, found on PATH, renders the window to a PNG
        out = tmp_path / "installed.png"
        shot = subprocess.run([PACKAGE, "--screenshot", str(out)], env=env, cwd=tmp_path, capture_output=True,
                              text=True, timeout=180)
        assert shot.returncode == 0, shot.stdout[-3000:] + shot.stderr[-3000:]
        width, height, colours = png_info(out)
        assert width >= MIN_WIDTH and height >= MIN_HEIGHT and colours > MIN_COLOURS

        # 2. a shipped deck opened the way a file manager does: the desktop entry's Exec line with %f
        entry = configparser.ConfigParser(interpolation=None)
        entry.read(f"/usr/share/applications/{PACKAGE}.desktop")
        exec_line = entry["Desktop Entry"]["Exec"]
        assert "application/x-trinity-session" in entry["Desktop Entry"]["MimeType"]
        decks = sorted(Path(f"/opt/{PACKAGE}").rglob("decks/*.json"))
        assert decks, "no shipped decks in the installed bundle"
        deck = decks[0]
        argv = [deck.as_posix() if a == "%f" else a for a in shlex.split(exec_line)]
        _open_like_the_desktop(argv, env, tmp_path, xvfb_display, deck)
        if shutil.which("update-mime-database"):  # shared-mime-info's trigger registered the type
            assert Path("/usr/share/mime/application/x-trinity-session.xml").is_file()
    finally:
        remove = subprocess.run(["apt-get", "purge", "-y", PACKAGE], env=apt_env, capture_output=True, text=True,
                                timeout=600)
    # 3. nothing is left behind
    assert remove.returncode == 0, remove.stdout[-3000:] + remove.stderr[-3000:]
    assert not Path(f"/opt/{PACKAGE}").exists()
    leftovers = [p for p in deb_paths(deb) if p.startswith(("./opt/", "./usr/")) and
                 os.path.lexists(p[1:]) and not os.path.isdir(p[1:])]
    assert not leftovers, f"left behind after purge: {leftovers[:20]}"
    assert _named(("/opt", "/usr")) == before, f"left behind: {_named(('/opt', '/usr')) - before}"


def _open_like_the_desktop(argv: list[str], env: dict[str, str], cwd: Path, display: str, deck: Path) -> None:
    """Start the app like a file manager does; it must show its window and open the deck (a shipped deck keeps the
    window untitled, so the sign is the deck in the app's recent files), then it is closed."""
    if shutil.which("xwininfo") is None:
        pytest.fail("xwininfo is not installed (apt-get install x11-utils): cannot see the window")
    settings = Path(env["HOME"]) / ".config" / ORGANIZATION / f"{APPLICATION}.conf"
    log = cwd / "exec-line.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            shown = opened = False
            while not (shown and opened) and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.5)
                shown = "Trinity Desktop" in _window_titles(display)
                opened = settings.is_file() and deck.name in settings.read_text(errors="replace")
            assert shown, f"no Trinity Desktop window (exit {proc.poll()})\n{log.read_text()[-3000:]}"
            assert opened, f"{deck} is not among the recent files in {settings}\n{log.read_text()[-3000:]}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
