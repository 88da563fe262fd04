"""Matrix views: none opens as a flat field of one colour, the KV policies are compared on one colour scale,
and attention sinks (a few tokens of a long context) stay visible."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from trinity_desktop.ui.matrix_panel import COMPARED_POLICIES, KV_STATE_COLORS, SINK_PX, MatrixPanel


def _colours(image_item) -> int:
    rgba = np.asarray(image_item.image)
    return len(np.unique(rgba.reshape(-1, rgba.shape[-1]), axis=0))


@pytest.fixture
def matrix(shown_panel):
    return shown_panel(MatrixPanel)


def test_default_scenario_opens_on_views_with_structure(matrix):
    matrix.update_results(evaluate(default_scenario()))  # training: the scenario's own cache is full
    assert _colours(matrix.kv_image) > 2
    assert _colours(matrix.sync_image) >= 2
    policies = [b[0] for b in matrix._bands]
    assert policies == list(COMPARED_POLICIES)


def test_policies_share_one_colour_scale(matrix):
    matrix.update_results(evaluate(default_scenario().replace(kind="decode", gpus=8, batch=8,
                                                              prompt_len=28672, gen_len=4096)))
    rgb = np.asarray(matrix.kv_image.image)[..., :3].reshape(-1, 3).astype(float)
    ev, kept = np.array(KV_STATE_COLORS["evicted"], float), np.array(KV_STATE_COLORS["kept"], float)
    t = (rgb - ev) @ (kept - ev) / ((kept - ev) @ (kept - ev))
    assert np.allclose(ev + t[:, None] * (kept - ev), rgb, atol=1.0)  # every cell on the one kept-evicted scale


def test_attention_sinks_stay_visible_at_long_context(matrix):
    sc = default_scenario().replace(kind="decode", gpus=8, batch=8, prompt_len=126976, gen_len=4096,
                                    kv_policy="streaming")
    matrix.update_results(evaluate(sc))
    streaming = next(b for b in matrix._bands if b[0] == "streaming")
    assert matrix._kv_frac[streaming[1], 0] < 0.1  # 4 sinks in a 128-token cell: invisible as a colour
    xs, ys = matrix.sink_lines.getData()
    rows = {int(y) for y in ys}
    assert set(range(streaming[1], streaming[1] + len(streaming[3]))) <= rows
    assert matrix.sink_lines.opts["pen"].width() >= SINK_PX
    assert all(x > 0 for x in xs)  # inside the plot, not half cut at its edge


def test_sync_cells_read_against_the_plot_in_every_theme(matrix, qtbot):
    """#21: a cell beside a zero (drawn in the plot's colour) merged with it (cividis' yellow, 1.2:1 on white):
    every cell with traffic reads at 3:1 (WCAG 2.1 non-text contrast) against the plot in each theme."""
    from PySide6 import QtGui

    from trinity_desktop.ui import theme

    matrix.update_results(evaluate(default_scenario()))
    matrix.set_algorithm("tree")

    def worst(name: str) -> float:
        rgba, sent = np.asarray(matrix.sync_image.image), matrix.sync_matrix().T > 0
        background = theme.THEMES[name]["plot_bg"]
        return min(theme.contrast_ratio(QtGui.QColor(*(int(v) for v in c[:3])), background) for c in rgba[sent])

    try:
        for name in ("light", "dark", "high-contrast"):
            theme.apply_theme(name, matrix)
            qtbot.waitUntil(lambda name=name: worst(name) >= theme.MAP_MIN_CONTRAST, timeout=2000)
    finally:
        theme.apply_theme("light", matrix)
