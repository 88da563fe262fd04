from trinity_desktop.ui.routing_panel import RoutingPanel, routing_title


def test_title_and_split_point(shown_panel, qtbot):
    panel = shown_panel(RoutingPanel, size=(683, 700))
    assert panel.title.text() == routing_title(panel.x)
    assert "85%" in panel.title.text()
    before = len(panel.lat_points.data)
    panel.set_split_position(0.5)
    assert len(panel.lat_points.data) == before + 1
    panel.set_split_position(1.0)   # beyond the published points: not drawn
    assert len(panel.lat_points.data) == before
    best = panel.lat_labels.items[0]
    qtbot.wait(30)
    assert best.isVisible() and "r = 85%" in best.toPlainText()
    assert "quality kept" in panel.hover_text(97.0, 0)
