"""Names on a chart's points (ui/point_labels.py): each beside its point, none over another; with `steps=0` a
name with no room beside its point is hidden (the hover names it), never drawn far away where it reads as
another point's (the quantisation-quality chart's "AWQ 4-bit" floated with no marker near it)."""

import numpy as np
import pyqtgraph as pg

from trinity_desktop.ui.point_labels import PointLabels


def _names(qtbot, steps):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.resize(300, 200)
    widget.show()
    plot = widget.getPlotItem()
    plot.setRange(xRange=(0, 10), yRange=(0, 10), padding=0)
    xs = np.array([5.0, 5.2, 5.4, 5.0, 5.2])   # five points in one crowded spot
    ys = np.array([5.0, 5.2, 5.0, 4.8, 4.6])
    labels = PointLabels(plot, len(xs), steps=steps)
    labels.set([(float(x), float(y), f"point number {k}", False) for k, (x, y) in enumerate(zip(xs, ys, strict=True))])
    qtbot.wait(30)
    vb = plot.getViewBox()
    out = []
    for (x, y, _t, _b), item in zip(labels.points, labels.items, strict=False):
        if item.isVisible():
            px = vb.mapViewToScene(pg.Point(x, y))
            r = item.sceneBoundingRect()
            out.append(max(abs(r.center().x() - px.x()) - r.width() / 2, abs(r.center().y() - px.y()) - r.height() / 2))
    return out


def test_a_crowded_name_stays_beside_its_point_or_is_hidden(qtbot):
    far = _names(qtbot, steps=3)
    near = _names(qtbot, steps=0)
    assert len(near) < len(far)                      # some names hidden rather than placed far off
    assert max(near) < 16 < max(far)                 # every name drawn within a marker's gap of its point
