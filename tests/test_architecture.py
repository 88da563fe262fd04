"""Architecture and packaging checks: the wheel, the import-linter layer contracts, ruff."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())

# pyproject's package-dir mapping: installed package -> source folder in the repo.
PACKAGE_DIR: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]
SKIP_DIRS = shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.egg-info", "build", "dist", ".venv")


def _run(cmd: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kwargs)
    return result


def _describe(result: subprocess.CompletedProcess) -> str:
    return f"exit {result.returncode}\n--- stdout ---\n{result.stdout[-6000:]}\n--- stderr ---\n{result.stderr[-6000:]}"


def stage_package(dest: Path) -> Path:
    """Copy the sources into dest/ the way the wheel lays them out (trinity_desktop/{model,ui,resources}).

    Copies, not symlinks: grimp walks package directories with os.walk, which does not follow
    symlinked folders.
    """
    for package, folder in sorted(PACKAGE_DIR.items()):
        target = dest.joinpath(*package.split("."))
        shutil.copytree(ROOT / folder, target, ignore=SKIP_DIRS, dirs_exist_ok=True)
    return dest


def repo_toml_resources() -> list[str]:
    return sorted(p.name for p in (ROOT / PACKAGE_DIR["trinity_desktop.resources"]).glob("*.toml"))


# --- the wheel ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_wheel_installs_into_a_clean_venv(tmp_path):
    # Build from a copy so stale build/ or egg-info folders in the work tree cannot leak into it.
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=SKIP_DIRS)
    wheelhouse = tmp_path / "wheelhouse"
    result = _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(wheelhouse), str(src)],
        timeout=600,
    )
    assert result.returncode == 0, _describe(result)
    (wheel,) = wheelhouse.glob("trinity_desktop-*.whl")

    # The wheel holds trinity_desktop/ and its dist-info only: no top-level model/ ui/ resources/.
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    top_level = {name.split("/")[0] for name in names}
    assert {t for t in top_level if not t.endswith(".dist-info")} == {"trinity_desktop"}, top_level
    for package in PACKAGE_DIR:
        assert f"{package.replace('.', '/')}/__init__.py" in names, f"{package} missing from {wheel.name}"
    tomls = repo_toml_resources()
    assert tomls, "resources/ has no *.toml presets"
    missing = [t for t in tomls if f"trinity_desktop/resources/{t}" not in names]
    assert not missing, f"resources missing from the wheel: {missing}"

    # A clean venv (no system site-packages); dependencies come from the index / pip's cache.
    venv = tmp_path / "venv"
    result = _run([sys.executable, "-m", "venv", str(venv)], timeout=300)
    assert result.returncode == 0, _describe(result)
    vpy = venv / "bin" / "python"
    result = _run([str(vpy), "-m", "pip", "install", str(wheel)], timeout=900)
    assert result.returncode == 0, _describe(result)

    check = f"""
import importlib.resources, importlib.util, json, pathlib, sys, sysconfig
import trinity_desktop, trinity_desktop.model, trinity_desktop.ui, trinity_desktop.resources
site = pathlib.Path(sysconfig.get_paths()["purelib"]).resolve()
for mod in (trinity_desktop, trinity_desktop.model, trinity_desktop.ui, trinity_desktop.resources):
    assert pathlib.Path(mod.__file__).resolve().is_relative_to(site), (mod.__name__, mod.__file__)
leaked = [name for name in ("model", "ui", "resources") if importlib.util.find_spec(name) is not None]
assert not leaked, f"top-level packages installed: {{leaked}}"
assert not any((site / name).exists() for name in ("model", "ui", "resources"))
found = sorted(p.name for p in importlib.resources.files("trinity_desktop.resources").iterdir()
               if p.name.endswith(".toml"))
assert found == {tomls!r}, found
print(json.dumps({{"ok": True}}))
"""
    # -I: isolated mode, so neither the cwd nor PYTHONPATH can put the work tree on sys.path.
    result = _run([str(vpy), "-I", "-c", check], timeout=300, cwd=tmp_path)
    assert result.returncode == 0, _describe(result)
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {"ok": True}

    assert (venv / "bin" / "trinity-desktop").exists(), "console script trinity-desktop not installed"


# --- import-linter layer contracts -----------------------------------------------------------------


def _lint_imports(src: Path) -> subprocess.CompletedProcess:
    """Run lint-imports with pyproject's contracts against the staged tree under src/.

    With the package-dir mapping, trinity_desktop/ in the work tree has no model/ or ui/ folder, so
    grimp (which walks package folders) would miss them; the staged copy has the wheel's layout.
    Run from src/ with `-c`, so sys.path[0] is the staged tree; the check below makes sure of it.
    """
    code = (
        "import sys, trinity_desktop\n"
        f"assert trinity_desktop.__file__.startswith({str(src)!r}), trinity_desktop.__file__\n"
        "from importlinter.cli import lint_imports_command\n"
        f"sys.argv = ['lint-imports', {str(ROOT / 'pyproject.toml')!r}, '--no-cache']\n"
        "lint_imports_command()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(src), "NO_COLOR": "1", "COLUMNS": "200"}
    return _run([sys.executable, "-c", code], timeout=300, cwd=src, env=env)


def test_import_contracts_are_kept(tmp_path):
    src = stage_package(tmp_path / "src")
    result = _lint_imports(src)
    assert result.returncode == 0, _describe(result)
    assert "0 broken" in result.stdout, _describe(result)
    contracts = PYPROJECT["tool"]["importlinter"]["contracts"]
    assert f"Contracts: {len(contracts)} kept, 0 broken" in result.stdout, _describe(result)


def test_import_contracts_catch_a_qt_import_in_model(tmp_path):
    """The contract is not vacuous: a model module importing PySide6 breaks it."""
    src = stage_package(tmp_path / "src")
    (src / "trinity_desktop" / "model" / "_contract_probe.py").write_text("import PySide6  # noqa\n")
    result = _lint_imports(src)
    assert result.returncode != 0, _describe(result)
    assert "BROKEN" in result.stdout and "_contract_probe" in result.stdout, _describe(result)


def test_every_panel_is_in_the_independence_contract():
    """A new ui/*_panel.py module joins the panels' independence contract (they meet only via the window)."""
    contract = next(c for c in PYPROJECT["tool"]["importlinter"]["contracts"] if c["type"] == "independence")
    panels = {f"trinity_desktop.ui.{p.stem}" for p in (ROOT / "ui").glob("*_panel.py")}
    assert panels == set(contract["modules"])


def test_import_contracts_catch_a_panel_importing_another(tmp_path):
    """The independence contract is not vacuous: one panel importing another breaks it."""
    src = stage_package(tmp_path / "src")
    probe = src / "trinity_desktop" / "ui" / "split_panel.py"
    probe.write_text(probe.read_text() + "\nfrom trinity_desktop.ui import routing_panel  # noqa\n")
    result = _lint_imports(src)
    assert result.returncode != 0, _describe(result)
    assert "BROKEN" in result.stdout and "independent" in result.stdout, _describe(result)


# --- ruff --------------------------------------------------------------------------------------------


def test_ruff_check_passes():
    ruff = shutil.which("ruff", path=str(BIN)) or shutil.which("ruff")
    if ruff is None:
        pytest.fail("ruff is not installed (pip install -e '.[test]')")
    result = _run([ruff, "check", "--no-cache", str(ROOT)], timeout=300, cwd=ROOT)
    assert result.returncode == 0, _describe(result)


def test_a_panels_own_modules_serve_only_that_panel():
    """ui/<stem>_<part>.py beside ui/<stem>_panel.py is that panel's own layer (the roofline's sweep, the triangle's
    pools): no other panel imports it, directly or through one of its own layers. Code two panels share lives
    in a shared module (docs/architecture.md, "Shared UI modules"); the independence contract covers the panels."""
    import ast

    ui = ROOT / "ui"
    stems = sorted((p.name[: -len("_panel.py")] for p in ui.glob("*_panel.py")), key=len, reverse=True)

    def owner(module: str) -> str:
        """The panel stem a ui module belongs to ("" for a shared module)."""
        return next((s for s in stems if module == f"{s}_panel" or module.startswith(f"{s}_")), "")

    wrong = []
    for path in sorted(ui.glob("*.py")):
        mine = owner(path.stem)
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module == "trinity_desktop.ui":
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("trinity_desktop.ui."):
                names = [node.module.split(".")[2]]
            elif isinstance(node, ast.Import):
                names = [a.name.split(".")[2] for a in node.names if a.name.startswith("trinity_desktop.ui.")]
            for name in names:
                theirs = owner(name)
                if theirs and not name.endswith("_panel") and theirs != mine:
                    wrong.append(f"ui/{path.name} imports {name}, a layer of {theirs}_panel")
    assert not wrong, "\n".join(wrong)
