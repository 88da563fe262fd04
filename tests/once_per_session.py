"""A value computed once per test session, even across pytest-xdist workers (the packaging tests' bundle build,
the layout audits' reports): the first worker to take a file lock computes it, the others read its record."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path


@contextlib.contextmanager
def exclusive(lock_path: Path):
    """Hold an exclusive lock on `lock_path` across processes (flock; elsewhere nothing: no xdist builds there)."""
    try:
        import fcntl
    except ImportError:   # Windows: no flock
        yield
        return
    with open(lock_path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def built_once(tmp_path_factory, name: str, build) -> dict:
    """`build(folder) -> a JSON object` (paths, a report), run once per test session even across xdist workers.

    Workers share the parent of their base temporary folders (pytest-xdist's documented pattern for a session
    fixture computed once); the first one to hold the lock builds there and records the result in a JSON file,
    the others read it. A failed build records nothing, so its error is raised again where it is needed."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return build(tmp_path_factory.mktemp(name))
    shared = tmp_path_factory.getbasetemp().parent
    record = shared / f"{name}.json"
    with exclusive(shared / f"{name}.lock"):
        if record.is_file():
            return json.loads(record.read_text())
        folder = shared / name
        shutil.rmtree(folder, ignore_errors=True)   # a build a crashed worker left half done
        folder.mkdir()
        built = build(folder)
        record.write_text(json.dumps(built))
        return built
