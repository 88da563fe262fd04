"""Cost of on-plot label placement (issue 12 asks for well under 1 ms per panel per edit).

Runs once (as a correctness check) under the default `--benchmark-disable`; for real numbers:
    .venv/bin/python -m pytest tests/benchmarks/test_label_placement_benchmark.py --benchmark-enable
"""

from __future__ import annotations

import numpy as np

from trinity_desktop.ui.label_layout import Label, LabelLayout, around, place

BOUNDS = (0.0, 0.0, 800.0, 500.0)


def _labels(n: int = 40, seed: int = 3) -> tuple[list[Label], list[tuple[float, float, float, float]]]:
    """n labels (a busy roofline or triangle) around random markers, and the markers as obstacles."""
    rng = np.random.default_rng(seed)
    xs, ys = rng.uniform(0, 800, n), rng.uniform(0, 500, n)
    labels = [Label(str(i), 110.0, 26.0, around(x, y, 110.0, 26.0, 9.0, steps=1)) for i, (x, y) in enumerate(zip(xs, ys, strict=True))]
    marks = [(x - 8, y - 8, x + 8, y + 8) for x, y in zip(xs, ys, strict=True)]
    return labels, marks


def test_placing_forty_labels(benchmark):
    labels, marks = _labels()
    boxes = benchmark(place, labels, BOUNDS, marks)
    assert len(boxes) == 40 and sum(b is not None for b in boxes.values()) >= 20


def test_an_unchanged_placement_is_cached(benchmark):
    labels, marks = _labels()
    layout = LabelLayout()
    first = layout.place(labels, BOUNDS, marks)
    again = benchmark(layout.place, labels, BOUNDS, marks)
    assert again is first and layout.computed == 1
