"""CLI regressions from the correctness audit (issue 16, items 1, 6-10): one-line errors that name the
options the user gave, a quiet closed pipe, the hardware's GPUs per node, named ridges and bubble share."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from trinity_desktop.__main__ import main


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def run_error(capsys, *argv) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_closed_pipe_exits_quietly():
    """`presets --json | head -c 10`: the reader is gone before the write; no BrokenPipeError traceback."""
    r, w = os.pipe()
    os.close(r)
    proc = subprocess.run([sys.executable, "-m", "trinity_desktop", "presets", "--json"], stdout=w,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(w)
    assert proc.stderr == ""
    assert proc.returncode == 141
