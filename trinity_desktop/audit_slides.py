"""Panels on slides: every slide of a deck, as presented, gives each of its panels at least the panel's
declared minimum size (`docks.DockSpec.min_size`) and shows no colliding, clipped, shortened or faint plot text
(under `audit_contrast.FLOOR_RATIO` against the pixels behind it, in the theme shown); the window lies inside its
screen (`outside_screen`: part of a slide past the screen's edge is never seen)."""

from __future__ import annotations

from dataclasses import dataclass, field

from trinity_desktop.audit_contrast import faint, faint_cells, view_contrast
from trinity_desktop.audit_curves import hidden_curves
from trinity_desktop.audit_text import scene_report


@dataclass
class SlideReport:
    deck: str
    index: int            # 0-based
    title: str
    crushed: list[str] = field(default_factory=list)   # "flow 612 x 20 px < 360 x 220"
    texts: list[str] = field(default_factory=list)     # overlapping, clipped, shortened or faint plot texts
    outside: list[str] = field(default_factory=list)   # "window 1920 x 1080 at (0, 0) outside its screen 1366 x 768"

    @property
    def ok(self) -> bool:
        return not self.crushed and not self.texts and not self.outside

    def as_dict(self) -> dict:
        return {"deck": self.deck, "slide": self.index + 1, "title": self.title, "crushed": self.crushed,
                "texts": self.texts, "outside": self.outside}


def outside_screen(window) -> list[str]:
    """One line when the window's frame is not inside its screen's free area, else none."""
    screen = window.screen()
    if screen is None:
        return []
    room, frame = screen.availableGeometry(), window.frameGeometry()
    if room.contains(frame):
        return []
    return [f"window {frame.width()} x {frame.height()} px at ({frame.x()}, {frame.y()}) falls outside its screen "
            f"{room.width()} x {room.height()} px"]


def crushed(spec, size) -> str | None:
    """'flow 612 x 20 px < 360 x 220' when a panel of `size` (a QSize) is under the spec's declared minimum."""
    if size.width() < spec.min_size[0] or size.height() < spec.min_size[1]:
        return f"{spec.name} {size.width()} x {size.height()} px < {spec.min_size[0]} x {spec.min_size[1]}"
    return None


def crushed_panels(window) -> list[str]:
    """The visible chart panels smaller than their declared minimum size."""
    from trinity_desktop.docks import DOCKS

    out = []
    for spec in DOCKS:
        dock = window.docks[spec.name]
        if spec.name in window.EDITING_DOCKS or not dock.isVisible():
            continue
        found = crushed(spec, dock.widget().size())
        if found:
            out.append(found)
    return out


def slide_texts(window) -> list[str]:
    """Overlapping, clipped, shortened or faint plot texts of the visible chart panels."""
    import pyqtgraph as pg

    out = []
    for name, panel in window.panels.built().items():
        if name in window.EDITING_DOCKS or not window.docks[name].isVisible():
            continue
        for view in panel.findChildren(pg.GraphicsView):
            if not view.isVisible():
                continue
            overlaps, clipped, shortened = scene_report(view)
            out += [f"{name}: {a!r} overlaps {b!r}" for a, b in overlaps]
            out += [f"{name}: {t!r} is clipped" for t in clipped]
            out += [f"{name}: {t!r} is shortened" for t in shortened]
            out += [f"{name}: faint {m.describe()}" for m in faint(view_contrast(view))]
            out += [f"{name}: faint {line}" for line in faint_cells(view)]
            out += [f"{name}: {line}" for line in hidden_curves(view)]
    return out


def check_presented_slide(window, deck_title: str, index: int) -> SlideReport:
    """The report of the slide on screen now (the presenter shows it)."""
    slide = window.talk.deck.slides[index]
    return SlideReport(deck_title, index, slide.title, crushed_panels(window), slide_texts(window),
                       outside_screen(window))


def audit_deck(window, path, settle_s: float = 0.3) -> list[SlideReport]:
    """Open the deck at `path`, present every slide and report each; leaves presentation mode."""
    from trinity_desktop.presentation import settle, settle_background_work

    error = window.workspace.open_path(path)
    if error:
        raise ValueError(error)
    deck = window.talk.deck
    presenter = window.talk.presenter
    reports = []
    try:
        for i in range(len(deck.slides)):
            presenter.start(deck, 0) if i == 0 else presenter.go(i, animate=False)
            settle(settle_s)
            settle_background_work(window)
            presenter.hide_tab_bars()
            reports.append(check_presented_slide(window, deck.title, i))
    finally:
        presenter.stop()
    return reports
