from trinity_desktop.model.views.edge_matrix import edge_matrix
from trinity_desktop.ui.edge_matrix_panel import EdgeMatrixPanel, matrix_title


def test_title_counts_the_cells():
    m = edge_matrix()
    assert matrix_title(m).startswith(f"{int(m.meets.sum())} of {m.meets.size} cells")


def test_cells_and_click(shown_panel, qtbot):
    panel = shown_panel(EdgeMatrixPanel, size=(683, 700))
    m = panel.m
    assert len(panel.labels) == m.time_s.size
    assert sum("✓" in item.toPlainText() for item in panel.labels) == int(m.meets.sum())
    assert sum(item.toPlainText() == "✗" for item in panel.labels) == int((~m.fits).sum())
    assert "ms per token" in panel.hover_text(3.5, 1.5)
    sc = panel.scenario_of(0, 1, 3)
    assert sc.weight_dtype == m.formats[3] and sc.model.name == "Llama-3.2-3B"
