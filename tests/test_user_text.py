"""Nothing shown to users refers to the project's own notes, seed files or issue numbers: user-facing text
cites a paper or states its assumption."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INTERNAL = re.compile(r"(?<![-\w])seeds?/|seed notes|the seed'?s?\b|project's (own )?notes|\bissue ?#?\d", re.IGNORECASE)


def _user_strings(path: Path) -> list[tuple[int, str]]:
    """String literals of a module that are not docstrings (docstrings document code, not the UI)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def test_no_user_text_refers_to_project_notes():
    hits = []
    for folder in ("ui", "trinity_desktop"):
        for path in sorted((ROOT / folder).glob("*.py")):
            hits += [f"{path.relative_to(ROOT)}:{line}: {text[:80]}" for line, text in _user_strings(path)
                     if INTERNAL.search(text)]
    for path in sorted((ROOT / "resources").rglob("*")):
        if path.suffix in (".toml", ".json"):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if INTERNAL.search(line) and not line.lstrip().startswith("#"):
                    hits.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()[:80]}")
    assert hits == []
