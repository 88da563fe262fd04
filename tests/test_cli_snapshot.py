"""`calc`, `plan` and `validate --json` print the same numbers as the stored snapshot (tests/data/cli_snapshot.json).

The snapshot was generated from the code before the typed-step refactor (issue #20); every number is compared at
rel 1e-9 and every string exactly. Regenerate only for a change that legitimately moves a number, and say why in
the commit: `python tests/test_cli_snapshot.py --write`.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import sys
from pathlib import Path

import pytest

from trinity_desktop.__main__ import main

SNAPSHOT = Path(__file__).parent / "data" / "cli_snapshot.json"
REL = 1e-9
WALL_CLOCK_KEYS = {"search_seconds"}  # measured, not computed: left out of the snapshot

_TRAIN = ["calc", "train", "--json"]
_INFER = ["calc", "infer", "--json"]
CASES: dict[str, list[str]] = {
    "train-llama3-8b-8xh100": [*_TRAIN, "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8"],
    "train-llama3-70b-tp8-pp2-zero1": [*_TRAIN, "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "64",
                                       "--tp", "8", "--pp", "2", "--zero", "1", "--global-batch", "32",
                                       "--seq-len", "8192"],
    "train-llama3-8b-offload-optimizer": [*_TRAIN, "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8",
                                          "--offload", "optimizer"],
    "train-llama3-8b-offload-activations": [*_TRAIN, "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus",
                                            "8", "--tp", "2", "--offload", "activations", "--recompute", "none"],
    "train-llama3-8b-nvme-zero3": [*_TRAIN, "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "16",
                                   "--zero", "3", "--offload", "nvme", "--global-batch", "32"],
    "train-mixtral-ep": [*_TRAIN, "--model", "mixtral-8x7b", "--hardware", "h100-sxm", "--gpus", "32", "--tp", "2",
                         "--ep", "4", "--zero", "2", "--recompute", "full", "--global-batch", "64"],
    "train-llama3-70b-interleaved": [*_TRAIN, "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "32",
                                     "--tp", "8", "--pp", "4", "--virtual-stages", "2", "--global-batch", "8"],
    "train-llama3-70b-cp": [*_TRAIN, "--model", "llama-3-70b", "--hardware", "a100-80gb-sxm", "--gpus", "64",
                            "--tp", "8", "--cp", "2", "--zero", "3", "--seq-len", "32768", "--global-batch", "16"],
    "infer-dense-llama2-7b": [*_INFER, "--model", "llama-2-7b", "--hardware", "h100-sxm", "--batch", "4",
                              "--prompt-len", "1000", "--gen-len", "24", "--kv-dtype", "fp16"],
    "infer-gqa-llama3-70b-tp8": [*_INFER, "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "8",
                                 "--batch", "16", "--prompt-len", "4096", "--gen-len", "512"],
    "infer-moe-mixtral": [*_INFER, "--model", "mixtral-8x7b", "--hardware", "h100-sxm", "--gpus", "2",
                          "--batch", "8", "--weight-dtype", "fp8"],
    "infer-pp-llama3-70b": [*_INFER, "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "8", "--pp", "2",
                            "--batch", "8"],
    "infer-kv-spill": [*_INFER, "--model", "llama-3-8b", "--hardware", "h100-sxm", "--batch", "64",
                       "--prompt-len", "32768", "--gen-len", "1024"],
    "infer-kv-evict": [*_INFER, "--model", "llama-3-8b", "--hardware", "h100-sxm", "--batch", "64",
                       "--prompt-len", "32768", "--gen-len", "1024", "--kv-placement", "evict"],
    "infer-kv-offload": [*_INFER, "--model", "llama-3-8b", "--hardware", "h100-sxm", "--batch", "8",
                         "--prompt-len", "8192", "--kv-offload-fraction", "0.5"],
    "infer-kv-policy-window": [*_INFER, "--model", "mistral-7b", "--hardware", "a100-80gb-sxm", "--batch", "4",
                               "--prompt-len", "16384", "--kv-policy", "window", "--kv-window", "2048"],
    "plan-train": ["plan", "train", "--json", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "16",
                   "--global-batch", "64", "--seq-len", "4096", "--top", "3"],
    "plan-infer": ["plan", "infer", "--json", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8",
                   "--prompt-len", "2048", "--gen-len", "256"],
    "validate": ["validate", "--json", "--samples", "16"],
}


def _computed(value):
    if isinstance(value, dict):
        return {k: _computed(v) for k, v in value.items() if k not in WALL_CLOCK_KEYS}
    if isinstance(value, list):
        return [_computed(v) for v in value]
    return value


def run(argv: list[str]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(list(argv))
    assert rc == 0, f"{' '.join(argv)} exited {rc}"
    return _computed(json.loads(out.getvalue()))


def differences(expected, actual, path: str = "$") -> list[str]:
    """Every place where `actual` differs from `expected`: numbers beyond rel 1e-9, strings, keys, lengths."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = [f"{path}.{k}: missing" for k in expected if k not in actual]
        out += [f"{path}.{k}: unexpected" for k in actual if k not in expected]
        for k in expected:
            if k in actual:
                out += differences(expected[k], actual[k], f"{path}.{k}")
        return out
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{path}: {len(expected)} items expected, {len(actual)} found"]
        return [d for i, (e, a) in enumerate(zip(expected, actual, strict=True))
                for d in differences(e, a, f"{path}[{i}]")]
    numbers = (int, float)
    if isinstance(expected, numbers) and isinstance(actual, numbers) and not isinstance(expected, bool) \
            and not isinstance(actual, bool):
        if math.isclose(expected, actual, rel_tol=REL, abs_tol=1e-300) or expected == actual:
            return []
        return [f"{path}: {expected!r} expected, {actual!r} found"]
    return [] if expected == actual else [f"{path}: {expected!r} expected, {actual!r} found"]


@pytest.fixture(scope="module")
def snapshot() -> dict:
    return json.loads(SNAPSHOT.read_text())


def test_snapshot_covers_every_case(snapshot):
    assert sorted(snapshot) == sorted(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_cli_prints_the_snapshot_numbers(snapshot, case):
    diff = differences(snapshot[case], run(CASES[case]))
    assert not diff, f"{case}: {len(diff)} differences\n" + "\n".join(diff[:40])


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    SNAPSHOT.write_text(json.dumps({k: run(v) for k, v in CASES.items()}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {SNAPSHOT}")
