"""`trinity-desktop bench --welcome`: the welcome page's cost as same-run ratios (hand-derived figures), and
one real start that measures it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from trinity_desktop.bench_welcome import BUDGET, ratio_stats, welcome_cost


def test_the_ratios_are_the_runs_own():
    in_process = {"welcome_s": [0.1, 0.2, 0.05], "first_paint_s": [2.0, 4.0, 1.0]}   # 5% of each start
    paired = {"with_s": [2.2, 3.0, 4.4, 1.0], "without_s": [2.0, 3.0, 4.0, 1.0]}
    cost = welcome_cost(in_process, paired)
    assert cost["in_process"]["median"] == pytest.approx(1.05)
    assert cost["in_process"]["min"] == pytest.approx(1.05) and cost["in_process"]["max"] == pytest.approx(1.05)
    assert cost["in_process"]["welcome_median_s"] == pytest.approx(0.1)
    assert cost["paired"]["ratios"] == pytest.approx([1.1, 1.0, 1.1, 1.0])
    assert cost["paired"]["median"] == pytest.approx(1.05)
    assert cost["within_budget"] is (1.05 <= BUDGET)


def test_ratio_stats_quartiles():
    s = ratio_stats([1.0, 1.1, 1.2, 1.3, 1.4])
    assert (s["median"], s["q25"], s["q75"], s["min"], s["max"]) == pytest.approx((1.2, 1.1, 1.3, 1.0, 1.4))


def test_one_start_measures_the_page():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-m", "trinity_desktop.bench", "--child", "welcome-cost"], env=env,
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    rep = json.loads([line for line in out.stdout.splitlines() if line.startswith("{")][-1])
    assert rep["first_paint_wall"] > 0 and 0 < rep["welcome_s"] < 5
