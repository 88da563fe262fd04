"""Small functions at the model's seams: no function or lambda in model/ takes more than 12 parameters (a longer
list is a typed value waiting to be named: LayerWidths, StepShape, KernelRates, PoolTimes, SearchHooks); and small
modules: no source module of model/, ui/ or trinity_desktop/ is over 500 lines (read as text: ui/ is not imported,
so this runs without Qt)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import trinity_desktop
import trinity_desktop.model as model_package

MAX_PARAMETERS = 12
MAX_MODULE_LINES = 500
MODEL_DIR = Path(model_package.__file__).parent


def _package_dir(name: str) -> Path:
    """A package's folder, found without importing it (ui/ imports Qt)."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations)))


def _over_limit(files) -> list[str]:
    return [f"{p} has {n} lines" for p in files
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]


def _parameter_count(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> int:
    a = node.args
    return (len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + (a.vararg is not None)
            + (a.kwarg is not None))


def _too_long(source: str, where: str) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            n = _parameter_count(node)
            if n > MAX_PARAMETERS:
                out.append(f"{where}:{node.lineno} {getattr(node, 'name', 'lambda')} takes {n} parameters")
    return out


def test_no_model_function_takes_more_than_12_parameters():
    files = sorted(MODEL_DIR.rglob("*.py"))
    assert len(files) > 100  # the whole model package is walked
    found = [hit for p in files for hit in _too_long(p.read_text(encoding="utf-8"), str(p.relative_to(MODEL_DIR)))]
    assert found == []


def test_the_walk_counts_every_kind_of_parameter():
    src = "def f(a, /, b, *args, c, d=1, **kw): pass\nmany = lambda " + ", ".join(f"x{i}" for i in range(13)) + ": 0"
    assert _too_long(src, "m.py") == ["m.py:2 lambda takes 13 parameters"]
    tree = ast.parse(src)
    assert _parameter_count(tree.body[0]) == 6


def test_no_source_module_is_over_500_lines():
    roots = {MODEL_DIR, _package_dir("trinity_desktop.ui"), Path(trinity_desktop.__file__).parent}
    files = sorted({p.resolve() for root in roots for p in root.rglob("*.py")})
    assert len(files) > 200 and any(p.name == "main_window.py" for p in files)  # all three packages are walked
    assert _over_limit(files) == []


def test_the_module_size_check_counts_lines(tmp_path):
    short, long = tmp_path / "short.py", tmp_path / "long.py"
    short.write_text("x = 1\n" * MAX_MODULE_LINES, encoding="utf-8")
    long.write_text("x = 1\n" * (MAX_MODULE_LINES + 1), encoding="utf-8")
    assert _over_limit([short, long]) == [f"{long} has 501 lines"]
