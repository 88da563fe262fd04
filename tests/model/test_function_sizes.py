"""Small functions at the model's seams: no function or lambda in model/ takes more than 12 parameters (a longer
list is a typed value waiting to be named: LayerWidths, StepShape, KernelRates, PoolTimes, SearchHooks)."""

from __future__ import annotations

import ast
from pathlib import Path

import trinity_desktop.model as model_package

MAX_PARAMETERS = 12
MODEL_DIR = Path(model_package.__file__).parent


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
