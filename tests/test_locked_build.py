"""Locked builds (issue 26, "Locked builds"): the bundle's dependencies are pinned with hashes in
packaging/requirements-bundle.lock, used by the bundle script and the release workflow; the runtime
dependencies have upper bounds that the installed (tested) versions satisfy."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "packaging" / "requirements-bundle.lock"


def _runtime() -> dict[str, Requirement]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    return {Requirement(d).name.lower(): Requirement(d) for d in deps}


def _pins() -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes) from the lock."""
    pins, current = {}, None
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==([^ ;\\]+)", line)
        if match:
            current = match.group(1).lower()
            pins[current] = (match.group(2), 0)
        elif "--hash=sha256:" in line and current:
            version, n = pins[current]
            pins[current] = (version, n + 1)
    return pins


def test_every_runtime_dependency_has_an_upper_bound():
    for name, req in _runtime().items():
        assert any(s.operator in ("<", "<=", "==", "~=") for s in req.specifier), f"{name} has no upper bound"


def test_the_installed_versions_the_tests_run_on_are_inside_the_bounds():
    for name, req in _runtime().items():
        assert req.specifier.contains(metadata.version(name), prereleases=True), (name, metadata.version(name))


def test_the_lock_pins_every_dependency_with_hashes_inside_the_bounds():
    pins = _pins()
    for name, req in _runtime().items():
        assert name in pins, f"{name} is not in the lock"
        assert req.specifier.contains(pins[name][0]), (name, pins[name][0], str(req.specifier))
    assert all(n > 0 for _v, n in pins.values()), [k for k, (_v, n) in pins.items() if n == 0]
    assert pins["numpy"][1] > 10 and pins["pyside6-essentials"][1] >= 3  # wheels for every platform
    assert "pyinstaller" in pins


def test_the_bundle_script_and_the_release_workflow_install_from_the_lock():
    script = (ROOT / "packaging" / "build_bundle.sh").read_text(encoding="utf-8")
    workflow = (ROOT / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")
    assert "--require-hashes" in script and "requirements-bundle.lock" in script
    assert "--require-hashes --no-deps -r packaging/requirements-bundle.lock" in workflow
