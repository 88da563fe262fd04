"""The audit of what a person sees: is every dock presentable, in every theme, on every slide, after edits?

`audit(window)` brings each centre dock to the front in turn (and each tab of a panel's own tab widget) and
reports, dock by dock: a panel under its declared minimum size (`docks.DockSpec.min_size`, as on slides),
overlapping plot texts, texts clipped by their plot or shortened with an ellipsis, labels and buttons cut by
their width, cut tabs, faint texts (measured on the rendered pixels against what is behind them:
`audit_contrast`) and a chart dock that scrolls. The window itself is checked for cut dock tabs, cut
Scenario-form values and a cut status bar. `audit_edits.edit_sequence` checks the layout's stability under
edits and `audit_slides.audit_deck` every slide of a deck as presented.

Run `python -m trinity_desktop.layout_audit 1366x768 [--theme dark] [--no-edits] [--no-slides] [--json]` to
build the window on an offscreen screen of that size and print what it finds (tests/ui/test_presentable_
layout.py runs it at both sizes in all three themes). The exit status is 1 when anything is found.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field

from trinity_desktop.audit_contrast import (
    FLOOR_RATIO,
    GOAL_RATIO,
    faint_cells,
    frameless_fields,
    view_contrast,
)
from trinity_desktop.audit_curves import hidden_curves
from trinity_desktop.audit_slides import crushed
from trinity_desktop.audit_text import (
    cut_form_values,
    cut_table_cells,
    cut_tabs,
    cut_widget_texts,
    scene_report,
)
from trinity_desktop.docks import DOCKS
from trinity_desktop.layout_plan import FORM_DOCKS, offscreen_platform

THEMES = ("light", "dark", "high-contrast")


@dataclass
class DockReport:
    name: str
    overlaps: list[tuple[str, str]] = field(default_factory=list)
    clipped: list[str] = field(default_factory=list)
    shortened: list[str] = field(default_factory=list)
    cut: list[str] = field(default_factory=list)         # labels, buttons, tabs cut by their width
    faint: list[str] = field(default_factory=list)       # below FLOOR_RATIO
    below_goal: list[str] = field(default_factory=list)  # FLOOR_RATIO to GOAL_RATIO (reported, not failed)
    scrolls: bool = False
    size: tuple[int, int] = (0, 0)
    crushed: list[str] = field(default_factory=list)     # the panel under its declared minimum size (docks.DOCKS)

    def problems(self) -> list[str]:
        return ([f"overlap: {a!r} and {b!r}" for a, b in self.overlaps] + [f"clipped: {t!r}" for t in self.clipped]
                + [f"shortened: {t!r}" for t in self.shortened] + [f"cut: {t}" for t in self.cut]
                + [f"faint: {t}" for t in self.faint] + (["the dock scrolls"] if self.scrolls else [])
                + [f"crushed: {t}" for t in self.crushed])

    def as_dict(self) -> dict:
        return {"name": self.name, "overlaps": self.overlaps, "clipped": self.clipped, "shortened": self.shortened,
                "cut": self.cut, "faint": self.faint, "below_goal": self.below_goal, "scrolls": self.scrolls,
                "size": list(self.size), "crushed": self.crushed}


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


def _each_tab(panel, app):
    """Yield once per tab of each QTabWidget in the panel (once if it has none), that tab in front; the
    panel's tabs are put back as they were."""
    from PySide6 import QtWidgets

    tabs = [t for t in panel.findChildren(QtWidgets.QTabWidget) if t.isVisible()]
    yield None
    for widget in tabs:
        current = widget.currentIndex()
        for index in range(widget.count()):
            if index != current:
                widget.setCurrentIndex(index)
                settle(app)
                yield index
        widget.setCurrentIndex(current)
        settle(app)


def _add(target: list, items) -> None:
    target += [item for item in items if item not in target]


def audit_dock(window, name: str, app, contrast: bool = True) -> DockReport:
    """What a person sees on the dock once it has settled: a finding counts only if a second look, after the
    dock's workers have drawn and its events have run again, still shows it (a relayout in flight on a loaded
    machine is not what the audience sees; a real defect stays)."""
    from trinity_desktop.presentation import settle_background_work

    first = _look(window, name, app, contrast)
    if not first.problems():
        return first
    settle_background_work(window)
    settle(app, 20)
    again = _look(window, name, app, contrast)
    return DockReport(name, overlaps=[o for o in again.overlaps if o in first.overlaps],
                      clipped=[c for c in again.clipped if c in first.clipped],
                      shortened=[t for t in again.shortened if t in first.shortened],
                      cut=[c for c in again.cut if c in first.cut], faint=[f for f in again.faint if f in first.faint],
                      below_goal=again.below_goal, scrolls=first.scrolls and again.scrolls, size=again.size,
                      crushed=again.crushed if first.crushed else [])


def _look(window, name: str, app, contrast: bool) -> DockReport:
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    from trinity_desktop.presentation import settle_background_work

    dock, panel = window.docks[name], window.panels[name]
    dock.show()
    dock.raise_()
    settle(app)
    # a panel that computes in a worker (the planner's search, then its error bars) is measured once it has
    # drawn its result: measured mid-search, its axes were still being laid out (a flaky overlap on a loaded machine)
    settle_background_work(window)
    settle(app)
    report = DockReport(name, size=(dock.width(), dock.height()))
    if name not in FORM_DOCKS:
        report.scrolls = dock_scrolls(dock, panel)
        spec = next(s for s in DOCKS if s.name == name)   # in front, the panel has at least its declared room
        report.crushed = [c for c in [crushed(spec, dock.widget().size())] if c]
    _add(report.cut, cut_table_cells(panel))   # every table reads whole (a long list may scroll, never sideways)
    if name != "controls":   # the Scenario form is checked as the window's ("form")
        _add(report.cut, cut_form_values(panel))
        if contrast:
            _add(report.faint, [f"field {line}" for line in frameless_fields(panel)])
    for _ in _each_tab(panel, app):   # a panel's own tabs (e.g. residency: curve, hierarchy) in turn
        _add(report.cut, cut_widget_texts(panel) + cut_tabs(panel.findChildren(QtWidgets.QTabBar)))
        for view in panel.findChildren(pg.GraphicsView):
            if not view.isVisible():
                continue
            overlaps, clipped, shortened = scene_report(view)
            _add(report.overlaps, overlaps)
            _add(report.clipped, clipped)
            _add(report.shortened, shortened)
            if contrast:
                _add(report.faint, faint_cells(view) + hidden_curves(view))
                for m in view_contrast(view):
                    target = report.faint if m.ratio < FLOOR_RATIO else report.below_goal if m.ratio < GOAL_RATIO \
                        else None
                    if target is not None:
                        _add(target, [m.describe()])
    return report


def audit(window, names=None, contrast: bool = True) -> list[DockReport]:
    """Bring each centre dock (or each of `names`) to the front and report what a person would see."""
    from PySide6 import QtWidgets

    app = QtWidgets.QApplication.instance()
    settle(app)
    return [audit_dock(window, name, app, contrast)
            for name in names or [n for n in window.docks if n not in ("controls", "deck")]]


def window_problems(window) -> dict[str, list[str]]:
    """Cut dock tabs, cut Scenario-form values and a cut status bar, in the layout shown now."""
    from PySide6 import QtWidgets

    window.hide_stale_tab_bars()
    bars = [b for b in window.findChildren(QtWidgets.QTabBar) if b.parent() is window]
    status = window.status
    need = status.fontMetrics().horizontalAdvance(status.text())
    status_cut = [f"status bar needs {need} px, has {status.width()}: {status.text()!r}"] \
        if not status.wordWrap() and need > status.width() + 1 else []
    form = window.docks["controls"]
    return {"tabs": cut_tabs(bars), "form": cut_form_values(form) + frameless_fields(form), "status bar": status_cut}


def _print_human(result: dict) -> None:
    print(f"screen {result['screen'][0]}x{result['screen'][1]}, theme {result['theme']}: "
          f"window {'fits' if result['fits'] else 'does NOT fit'}")
    for section, lines in result["window_problems"].items():
        for line in lines:
            print(f"  [{section}] {line}")
    for dock in result["docks"]:
        problems = DockReport(**{**dock, "size": tuple(dock["size"]),
                                 "overlaps": [tuple(p) for p in dock["overlaps"]]}).problems()
        status = "ok" if not problems else f"{len(problems)} problem(s)"
        print(f"{dock['name']:>13} {dock['size'][0]}x{dock['size'][1]}: {status}")
        for line in problems:
            print(f"      {line}")
        for line in dock["below_goal"]:
            print(f"      (below {GOAL_RATIO}:1) {line}")
    if "edits" in result:
        print(f"edits ({', '.join(result['edits']['steps'])}):", "ok" if not result["edits"]["problems"] else "")
        for line in result["edits"]["problems"]:
            print(f"      {line}")
    for slide in result.get("slides", []):
        lines = ([f"crushed: {c}" for c in slide["crushed"]] + slide["texts"]
                 + [f"outside: {o}" for o in slide.get("outside", [])])
        print(f"slide {slide['deck']} #{slide['slide']} {slide['title']!r}: {'ok' if not lines else ''}")
        for line in lines:
            print(f"      {line}")
    if result.get("slides"):
        slides = result["slides"]
        count = {key: sum(len(s.get(key, [])) for s in slides) for key in ("crushed", "outside", "texts")}
        print(f"slides: {sum(1 for s in slides if s['crushed'] or s['texts'] or s.get('outside'))} of {len(slides)} "
              f"with findings ({count['crushed']} crushed panels, {count['outside']} outside the screen, "
              f"{count['texts']} texts)")


def found_anything(result: dict) -> bool:
    docks = any(DockReport(**{**d, "size": tuple(d["size"])}).problems() for d in result["docks"])
    slides = any(s["crushed"] or s["texts"] or s.get("outside") for s in result.get("slides", []))
    return (not result["fits"] or docks or slides or any(result["window_problems"].values())
            or bool(result.get("edits", {}).get("problems")))


def run(width: int, height: int, theme: str, edits: bool, slides: bool) -> dict:
    """Build the window on a screen of this size, in this theme, and audit it."""
    from trinity_desktop.app import build_window, ensure_application
    from trinity_desktop.audit_edits import edit_sequence
    from trinity_desktop.audit_slides import audit_deck
    from trinity_desktop.deck import example_decks

    app = ensure_application()
    app.setProperty("trinity_quiet", True)
    window = build_window(settings=None)
    window.show()
    settle(app, 12)
    window.set_theme(theme)
    settle(app)
    screen = window.screen().availableGeometry()
    frame = window.frameGeometry()
    result = {"screen": [screen.width(), screen.height()], "theme": theme,
              "window": [frame.x(), frame.y(), frame.width(), frame.height()], "fits": screen.contains(frame),
              "window_problems": window_problems(window)}
    if edits:   # first, from the default layout as it opens
        result["edits"] = vars(edit_sequence(window, lambda: settle(app)))
    result["docks"] = [r.as_dict() for r in audit(window)]
    after = window_problems(window)   # every dock came to the front: no tab bar shows a cut tab, no form squeezed
    for section in ("tabs", "form", "status bar"):
        _add(result["window_problems"][section],
             [f"after every dock came to the front: {line}" for line in after[section]])
    if slides:
        result["slides"] = [r.as_dict() for path in example_decks() for r in audit_deck(window, path)]
    window.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trinity_desktop.layout_audit",
                                     description="Audit what a person sees in the window, dock by dock.")
    parser.add_argument("screen", help="WIDTHxHEIGHT of the offscreen screen, e.g. 1366x768")
    parser.add_argument("--theme", choices=THEMES, default="light")
    parser.add_argument("--no-edits", action="store_true", help="skip the edit-and-undo sequence")
    parser.add_argument("--no-slides", action="store_true", help="skip the shipped decks' slides")
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    from trinity_desktop.layout_plan import parse_screen

    try:
        width, height = parse_screen(args.screen)
    except ValueError as exc:
        parser.error(str(exc))
    if not os.environ.get("DISPLAY") or os.environ.get("QT_QPA_PLATFORM", "").startswith("offscreen"):
        os.environ["QT_QPA_PLATFORM"] = offscreen_platform(width, height)
    result = run(width, height, args.theme, not args.no_edits, not args.no_slides)
    if args.json:
        print(json.dumps(result, indent=1, ensure_ascii=False))
    else:
        _print_human(result)
    return 1 if found_anything(result) else 0


if __name__ == "__main__":
    sys.exit(main())
