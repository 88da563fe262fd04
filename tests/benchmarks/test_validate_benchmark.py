"""Cost of a cold `trinity-desktop validate --json` (issue 26: under 5 s for the whole published set), as a ratio to
a bare `python -c "import numpy"` measured in the same run, alternating the two so that the machine's load
weighs on both alike. Wall and CPU (user + system of the child) seconds, median of the repetitions.

A timing only (no assertion on it; the figures' equality with one-at-a-time fits is tests/model/
test_validation_speed.py's): skipped under the default `--benchmark-disable`. Numbers:
    .venv/bin/python -m pytest tests/benchmarks/test_validate_benchmark.py --benchmark-enable -s
    .venv/bin/python tests/benchmarks/test_validate_benchmark.py [repetitions]
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time

BASELINE = [sys.executable, "-c", "import numpy"]
VALIDATE = [sys.executable, "-m", "trinity_desktop", "validate", "--json"]


def _timed(argv: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out.stdout


def measure(repetitions: int = 5) -> dict[str, float]:
    """Median wall and CPU seconds of the baseline and of validate, and validate's ratios to the baseline."""
    base, valid = [], []
    for _ in range(repetitions):
        base.append(_timed(BASELINE)[:2])
        wall, cpu, out = _timed(VALIDATE)
        assert len(json.loads(out)["runs"]) >= 80
        valid.append((wall, cpu))
    med = {f"{name}_{kind}_s": statistics.median(x[k] for x in rows)
           for name, rows in (("baseline", base), ("validate", valid)) for k, kind in enumerate(("wall", "cpu"))}
    return {**med, "wall_ratio": med["validate_wall_s"] / med["baseline_wall_s"],
            "cpu_ratio": med["validate_cpu_s"] / med["baseline_cpu_s"]}


def test_cold_validate_against_importing_numpy(benchmark):
    import pytest

    if benchmark.disabled:
        pytest.skip("a timing only: run with --benchmark-enable")
    figures = benchmark.pedantic(measure, args=(3,), rounds=1, iterations=1)
    benchmark.extra_info.update(figures)
    print("\n" + json.dumps(figures, indent=1))


if __name__ == "__main__":
    print(json.dumps(measure(int(sys.argv[1]) if len(sys.argv) > 1 else 5), indent=1))
