"""Is every dock presentable? Counts overlapping and cut text, and chart docks that scroll.

`audit(window)` brings each centre dock to the front in turn, lets it draw, and walks the text items of
its plots (every visible, non-empty QGraphicsTextItem: on-plot labels, titles, legend entries, axis
labels). Two texts *overlap* when their drawn glyph boxes (the text without the document margin, rotated
as drawn) share more than `TOLERANCE_PX` in both directions; a text is *clipped* when it reaches outside
the area that shows it: its ViewBox (which clips its children) or the visible part of its GraphicsView.
A chart dock *scrolls* when a scroll area between the dock and its panel has a scroll bar with range.

Run `python -m trinity_desktop.layout_audit 1366x768` to build the window on an offscreen screen of that
size and print the counts as JSON (tests/ui/test_presentable_layout.py does this at two sizes).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field

from trinity_desktop.layout_plan import FORM_DOCKS, offscreen_platform

TOLERANCE_PX = 1.0


@dataclass
class DockReport:
    name: str
    overlaps: list[tuple[str, str]] = field(default_factory=list)
    clipped: list[str] = field(default_factory=list)
    scrolls: bool = False
    size: tuple[int, int] = (0, 0)

    def as_dict(self) -> dict:
        return {"name": self.name, "overlaps": self.overlaps, "clipped": self.clipped, "scrolls": self.scrolls,
                "size": list(self.size)}


def _texts(view):
    """(label, glyph polygon in scene pixels, the scene rect that shows it) for each visible text."""
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    scene = view.scene()
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    out = []
    for item in scene.items():
        if not isinstance(item, QtWidgets.QGraphicsTextItem) or not item.isVisible():
            continue
        text = item.toPlainText().strip()
        if not text or item.effectiveOpacity() <= 0.01:
            continue
        margin = item.document().documentMargin()
        rect = item.boundingRect().adjusted(margin, margin, -margin, -margin)
        polygon = item.mapToScene(rect)
        clip = visible
        parent = item.parentItem()
        while parent is not None:
            if isinstance(parent, pg.ViewBox):
                clip = clip.intersected(parent.sceneBoundingRect())
                break
            parent = parent.parentItem()
        out.append((text.replace("\n", " / ")[:60], polygon, clip))
    return out


def scene_report(view) -> tuple[list[tuple[str, str]], list[str]]:
    """(overlapping pairs, clipped texts) of one GraphicsView."""
    texts = _texts(view)
    overlaps, clipped = [], []
    for i, (name_a, poly_a, clip) in enumerate(texts):
        box = poly_a.boundingRect()
        if box.width() > 0 and not clip.adjusted(-TOLERANCE_PX, -TOLERANCE_PX, TOLERANCE_PX,
                                                  TOLERANCE_PX).contains(box):
            clipped.append(name_a)
        for name_b, poly_b, _ in texts[i + 1:]:
            if not box.intersects(poly_b.boundingRect()):
                continue
            common = poly_a.intersected(poly_b).boundingRect()
            if common.width() > TOLERANCE_PX and common.height() > TOLERANCE_PX:
                overlaps.append((name_a, name_b))
    return overlaps, clipped


def dock_scrolls(dock, panel) -> bool:
    """True when a scroll area between the dock and its panel has room to scroll."""
    from PySide6 import QtWidgets

    widget = panel.parentWidget()
    while widget is not None and widget is not dock:
        if isinstance(widget, QtWidgets.QAbstractScrollArea):
            if widget.horizontalScrollBar().maximum() > 0 or widget.verticalScrollBar().maximum() > 0:
                return True
        widget = widget.parentWidget()
    return False


def settle(app, rounds: int = 6) -> None:
    from PySide6 import QtCore

    for _ in range(rounds):
        app.processEvents()
        QtCore.QThread.msleep(15)


def audit(window, names=None) -> list[DockReport]:
    """Bring each centre dock (or each of `names`) to the front and report its texts and scrolling."""
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    app = QtWidgets.QApplication.instance()
    settle(app)
    reports = []
    for name in names or [n for n in window.docks if n not in ("controls", "deck")]:
        dock, panel = window.docks[name], window.panels[name]
        dock.show()
        dock.raise_()
        settle(app)
        report = DockReport(name, size=(dock.width(), dock.height()))
        if name not in FORM_DOCKS:
            report.scrolls = dock_scrolls(dock, panel)
        for view in panel.findChildren(pg.GraphicsView):
            if not view.isVisible():
                continue
            overlaps, clipped = scene_report(view)
            report.overlaps += overlaps
            report.clipped += clipped
        reports.append(report)
    return reports


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or "x" not in argv[0]:
        print("usage: python -m trinity_desktop.layout_audit WIDTHxHEIGHT", file=sys.stderr)
        return 2
    width, height = (int(v) for v in argv[0].split("x"))
    if not os.environ.get("DISPLAY") or os.environ.get("QT_QPA_PLATFORM", "").startswith("offscreen"):
        os.environ["QT_QPA_PLATFORM"] = offscreen_platform(width, height)
    from trinity_desktop.app import build_window, ensure_application

    app = ensure_application()
    app.setProperty("trinity_quiet", True)
    window = build_window(settings=None)
    window.show()
    settle(app, 12)
    screen = window.screen().availableGeometry()
    frame = window.frameGeometry()
    reports = audit(window)
    print(json.dumps({"screen": [screen.width(), screen.height()],
                      "window": [frame.x(), frame.y(), frame.width(), frame.height()],
                      "fits": screen.contains(frame),
                      "docks": [r.as_dict() for r in reports]}, indent=1))
    window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
