"""Build the Linux installers from the one-folder bundle (`make installer` runs this after `make bundle`).

    python packaging/linux_installers.py [--bundle dist/trinity-desktop] [--out dist] [--only deb|tar]

writes
  OUT/trinity-desktop_<version>_amd64.deb            dpkg-deb, xz; the bundle in /opt/trinity-desktop,
                                                     /usr/bin/trinity-desktop, desktop entry, hicolor icons,
                                                     MIME type, man page; Depends computed by dpkg-shlibdeps
  OUT/trinity-desktop-<version>-linux-x86_64.tar.xz  a portable folder with a launcher script

and prints each file's size. Needs dpkg-deb and dpkg-shlibdeps (Debian package dpkg-dev), tar and xz; runs in the
build environment (PySide6 and Pillow render the icons).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from make_icons import HICOLOR_SIZES, make_icons  # noqa: E402
from version import version  # noqa: E402

NAME = "trinity-desktop"
INSTALL_DIR = Path("opt") / NAME
DEB_MAINTAINER = os.environ.get("DEB_MAINTAINER", "Trinity Desktop developers <noreply@trinity-desktop.invalid>")
SUMMARY = "compute, bandwidth and memory of AI workloads as one design space"
DESCRIPTION = """\
 Trinity Desktop maps the "AI Trinity" of arXiv 2601.11577 (compute,
 interconnect and IO bandwidth, and memory) as one coupled design space.
 Pick a model, some hardware, a workload, a parallel layout and techniques;
 every panel shows the same computed scenario: memory per GPU, step time by
 stage, rooflines, the trade-off triangle, KV-cache residency and more.
 .
 This package ships a self-contained build (Python, Qt 6 through PySide6,
 pyqtgraph, numpy, scipy) in /opt/trinity-desktop."""


def source_date_epoch() -> int:
    """Reproducible archives: every file gets SOURCE_DATE_EPOCH (reproducible-builds.org), else the last commit's
    time, else the start of 2024."""
    if "SOURCE_DATE_EPOCH" in os.environ:
        return int(os.environ["SOURCE_DATE_EPOCH"])
    git = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct"], capture_output=True, text=True)
    return int(git.stdout.strip()) if git.returncode == 0 and git.stdout.strip() else 1704067200


EPOCH = source_date_epoch()


def run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, text=True, **kwargs)


def elf_files(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def shlib_depends(bundle: Path) -> str:
    """The Depends: line for the system libraries the bundle's ELF files need (Qt's xcb plugin: libxcb-*,
    libxkbcommon-x11, libX11, libGL, fontconfig, dbus ...), computed by dpkg-shlibdeps from each ELF's NEEDED
    entries; libraries inside the bundle are private (-l) and need no package."""
    elves = elf_files(bundle)
    private = sorted({str(p.parent) for p in elves if ".so" in p.name})
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "debian").mkdir()
        (Path(tmp) / "debian" / "control").write_text(
            f"Source: {NAME}\n\nPackage: {NAME}\nArchitecture: amd64\n")
        out = run(["dpkg-shlibdeps", "-O", "--ignore-missing-info", "--warnings=0",
                   *[f"-l{d}" for d in private], *[f"-e{p}" for p in elves]],
                  cwd=tmp, capture_output=True)
    line = next(x for x in out.stdout.splitlines() if x.startswith("shlibs:Depends="))
    return line.split("=", 1)[1]


def installed_size_kib(folder: Path) -> int:
    return sum((p.lstat().st_size + 1023) // 1024 for p in folder.rglob("*") if not p.is_dir())


def write(path: Path, text: str | bytes, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    path.chmod(mode)


def gzipped(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=9, mtime=0)


def copyright_text() -> str:
    """DEP-5 copyright file: the app (MIT) and each bundled component with its licence, from trinity_desktop.about."""
    sys.path.insert(0, str(ROOT))
    from trinity_desktop.about import APP_LICENCE, DEPENDENCIES, PYTHON_LICENCE

    parts = [
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        f"Upstream-Name: {NAME}\n"
        "Comment: This package bundles its own Python and libraries in /opt/trinity-desktop.\n"
        " Their full licence texts are in /opt/trinity-desktop/_internal/licenses/.\n",
        f"Files: *\nCopyright: {time.gmtime(EPOCH).tm_year} Trinity Desktop contributors\nLicense: {APP_LICENCE}\n",
        f"Files: opt/trinity-desktop/_internal/libpython*\nCopyright: Python Software Foundation\n"
        f"License: {PYTHON_LICENCE}\n See /opt/trinity-desktop/_internal/licenses/Python/.\n",
    ]
    globs = {"PySide6-Essentials": "opt/trinity-desktop/_internal/PySide6/*",
             "shiboken6": "opt/trinity-desktop/_internal/shiboken6/*",
             "numpy": "opt/trinity-desktop/_internal/numpy/* opt/trinity-desktop/_internal/numpy.libs/*",
             "scipy": "opt/trinity-desktop/_internal/scipy/* opt/trinity-desktop/_internal/scipy.libs/*",
             "pyqtgraph": "opt/trinity-desktop/_internal/pyqtgraph/*"}
    for dep in DEPENDENCIES:
        parts.append(f"Files: {globs[dep.dist]}\nCopyright: the {dep.dist} authors\nLicense: {dep.licence}\n"
                     f" See /opt/trinity-desktop/_internal/licenses/{dep.dist}/.\n")
    parts.append(
        f"License: {APP_LICENCE}\n"
        " Permission is hereby granted, free of charge, to any person obtaining a copy of this software\n"
        " and associated documentation files (the \"Software\"), to deal in the Software without\n"
        " restriction, including without limitation the rights to use, copy, modify, merge, publish,\n"
        " distribute, sublicense, and/or sell copies of the Software, and to permit persons to whom the\n"
        " Software is furnished to do so, subject to the following conditions:\n .\n"
        " The above copyright notice and this permission notice shall be included in all copies or\n"
        " substantial portions of the Software.\n .\n"
        " THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING\n"
        " BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND\n"
        " NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,\n"
        " DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,\n"
        " OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.\n")
    texts = {"LGPL-3.0-only": "/usr/share/common-licenses/LGPL-3",
             "BSD-3-Clause": "/opt/trinity-desktop/_internal/licenses/numpy/LICENSE.txt",
             "PSF-2.0": "/opt/trinity-desktop/_internal/licenses/Python/LICENSE.txt"}
    for spdx, where in texts.items():
        parts.append(f"License: {spdx}\n The full text is in {where}.\n")
    return "\n".join(parts)


def changelog_text(ver: str) -> str:
    from email.utils import formatdate

    return (f"{NAME} ({ver}) unstable; urgency=medium\n\n"
            f"  * Release {ver}: see the project's git history.\n\n"
            f" -- {DEB_MAINTAINER}  {formatdate(EPOCH)}\n")


def lay_out_deb(bundle: Path, root: Path, icons: Path, ver: str) -> None:
    shutil.copytree(bundle, root / INSTALL_DIR, symlinks=True)
    bin_link = root / "usr" / "bin" / NAME
    bin_link.parent.mkdir(parents=True)
    bin_link.symlink_to(Path("/") / INSTALL_DIR / NAME)  # across top-level dirs: absolute (Debian policy 10.5)
    share = root / "usr" / "share"
    write(share / "applications" / f"{NAME}.desktop", (HERE / f"{NAME}.desktop").read_text())
    write(share / "mime" / "packages" / f"{NAME}.xml", (HERE / f"{NAME}-mime.xml").read_text())
    for n in HICOLOR_SIZES:
        write(share / "icons" / "hicolor" / f"{n}x{n}" / "apps" / f"{NAME}.png",
              (icons / "hicolor" / f"{n}x{n}" / "apps" / f"{NAME}.png").read_bytes())
    write(share / "icons" / "hicolor" / "scalable" / "apps" / f"{NAME}.svg",
          (ROOT / "resources" / "icon.svg").read_bytes())
    write(share / "man" / "man1" / f"{NAME}.1.gz", gzipped((HERE / f"{NAME}.1").read_bytes()))
    doc = share / "doc" / NAME
    write(doc / "copyright", copyright_text())
    write(doc / "changelog.gz", gzipped(changelog_text(ver).encode()))
    write(share / "lintian" / "overrides" / NAME, (HERE / "lintian-overrides").read_text())
    for path in root.rglob("*"):  # dpkg-deb takes modes from the tree: directories 755, files 644 or 755
        if path.is_symlink():
            continue
        if path.is_dir():
            path.chmod(0o755)
        else:  # programs 755; shared objects (loaded, not run) and data 644
            program = os.access(path, os.X_OK) and ".so" not in path.name
            path.chmod(0o755 if program else 0o644)


def md5sums(root: Path) -> str:
    """DEBIAN/md5sums: what `dpkg --verify` checks the installed files against."""
    lines = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink() and path.relative_to(root).parts[0] != "DEBIAN":
            lines.append(f"{hashlib.md5(path.read_bytes()).hexdigest()}  {path.relative_to(root).as_posix()}")
    return "\n".join(lines) + "\n"


def build_deb(bundle: Path, out: Path, icons: Path, ver: str, depends: str) -> Path:
    deb = out / f"{NAME}_{ver}_amd64.deb"
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "root"
        lay_out_deb(bundle, root, icons, ver)
        control = (f"Package: {NAME}\nVersion: {ver}\nArchitecture: amd64\nMaintainer: {DEB_MAINTAINER}\n"
                   f"Installed-Size: {installed_size_kib(root)}\nDepends: {depends}\n"
                   f"Section: science\nPriority: optional\nDescription: {SUMMARY}\n{DESCRIPTION}\n")
        write(root / "DEBIAN" / "control", control)
        write(root / "DEBIAN" / "md5sums", md5sums(root))
        out.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "SOURCE_DATE_EPOCH": str(EPOCH)}
        run(["dpkg-deb", "--root-owner-group", "-Zxz", "-z6", "--build", str(root), str(deb)],
            env=env, capture_output=True)
    return deb


LAUNCHER = """\
#!/bin/sh
# Trinity Desktop, portable build: runs the bundled app from wherever this folder was unpacked.
# Put this script (or a link to it) on your PATH; `trinity-desktop --help` lists the options.
here=$(dirname "$(readlink -f "$0")")
exec "$here/app/trinity-desktop" "$@"
"""

PORTABLE_README = """\
Trinity Desktop {ver}, portable build for Linux x86-64
======================================================

Run ./trinity-desktop (a launcher script; it starts app/trinity-desktop). Nothing is installed: delete the
folder to remove it. Settings and autosaves go to ~/.config/Trinity Desktop and ~/.local/share.

Needs the X11 client libraries Qt's xcb plugin loads (Debian/Ubuntu: {depends}).
Icon: trinity-desktop.svg. Licences of the bundled libraries: app/_internal/licenses/.
"""


def build_tar(bundle: Path, out: Path, ver: str, depends: str) -> Path:
    folder = f"{NAME}-{ver}-linux-x86_64"
    tar = out / f"{folder}.tar.xz"
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp) / folder
        shutil.copytree(bundle, top / "app", symlinks=True)
        write(top / NAME, LAUNCHER, 0o755)
        write(top / f"{NAME}.svg", (ROOT / "resources" / "icon.svg").read_bytes())
        packages = ", ".join(sorted({d.split()[0] for d in depends.split(", ") if d.startswith("lib")}))
        write(top / "README.txt", PORTABLE_README.format(ver=ver, depends=packages))
        out.mkdir(parents=True, exist_ok=True)
        with open(tar, "wb") as f:
            tar_proc = subprocess.Popen(
                ["tar", "--sort=name", f"--mtime=@{EPOCH}", "--owner=0", "--group=0", "--numeric-owner",
                 "-C", tmp, "-cf", "-", folder], stdout=subprocess.PIPE)
            run(["xz", "-6", "-T0", "-c"], stdin=tar_proc.stdout, stdout=f)
            if tar_proc.wait() != 0:
                raise subprocess.CalledProcessError(tar_proc.returncode, "tar")
    return tar


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bundle", type=lambda p: Path(p).resolve(), default=ROOT / "dist" / NAME, help="the one-folder bundle")
    parser.add_argument("--out", type=lambda p: Path(p).resolve(), default=ROOT / "dist", help="where the installers go")
    parser.add_argument("--only", choices=("deb", "tar"), help="build one of the two")
    args = parser.parse_args(argv)
    if not (args.bundle / NAME).is_file():
        parser.error(f"--bundle: no {NAME} executable in {args.bundle} (run `make bundle` first)")
    for tool in ("dpkg-deb", "dpkg-shlibdeps", "tar", "xz"):
        if shutil.which(tool) is None:
            parser.error(f"{tool} is not installed (Debian: apt-get install dpkg-dev xz-utils)")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    ver, depends = version(), shlib_depends(args.bundle)
    print(f"Depends: {depends}")
    built = []
    with tempfile.TemporaryDirectory() as icons:
        make_icons(Path(icons))
        if args.only in (None, "deb"):
            built.append(build_deb(args.bundle, args.out, Path(icons), ver, depends))
    if args.only in (None, "tar"):
        built.append(build_tar(args.bundle, args.out, ver, depends))
    for path in built:
        print(f"{path}: {path.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
