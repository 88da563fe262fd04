"""Print the app's version, read from its one home (trinity_desktop/__init__.py __version__) without importing it.

    python3 packaging/version.py
"""

import ast
from pathlib import Path

INIT = Path(__file__).resolve().parents[1] / "trinity_desktop" / "__init__.py"


def version() -> str:
    for node in ast.parse(INIT.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__version__" for t in node.targets):
            return str(ast.literal_eval(node.value))
    raise LookupError(f"{INIT}: no __version__ assignment")


if __name__ == "__main__":
    print(version())
