"""`make test` runs a test whose worker process crashed once more, and never reruns an ordinary failure.

A segmentation fault inside Qt kills the pytest-xdist worker that ran the test; with the Makefile's options
(`PYTEST_PARALLEL`) pytest-rerunfailures puts that test back on a fresh worker, where it passes and is reported
as a rerun. This runs those options, read from the Makefile, on a generated suite in a subprocess: one test that
crashes its worker the first time, one that fails its assertion, and others that pass.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SUITE = '''
import ctypes
import pathlib

import pytest

MARK = pathlib.Path(__file__).with_name("crashed-once")


@pytest.mark.parametrize("i", range(6))
def test_passes(i):
    assert i >= 0


def test_crashes_its_worker_the_first_time():
    if not MARK.exists():
        MARK.write_text("crashed")
        ctypes.string_at(0)   # a read at address 0: SIGSEGV, as a Qt crash would


def test_fails_its_assertion():
    assert 1 == 2
'''


def parallel_options() -> list[str]:
    line = next(line for line in (ROOT / "Makefile").read_text().splitlines() if line.startswith("PYTEST_PARALLEL"))
    return shlex.split(line.split(":=", 1)[1])


def test_a_crashed_test_is_rerun_and_a_failed_one_is_not(tmp_path):
    (tmp_path / "test_generated.py").write_text(SUITE)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    run = subprocess.run([sys.executable, "-m", "pytest", *parallel_options(), "-p", "no:cacheprovider", "-q", "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300)
    summary = run.stdout.strip().splitlines()[-1]
    assert (tmp_path / "crashed-once").is_file(), run.stdout[-3000:]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|rerun)", summary)}
    assert counts == {"passed": 7, "failed": 1, "rerun": 1}, run.stdout[-3000:]
    assert "test_fails_its_assertion" in run.stdout and run.returncode == 1
