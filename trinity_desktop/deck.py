"""Talk decks: an ordered list of slides, each a scenario plus which docks show, their layout and a caption.

Pure values (frozen dataclasses, no Qt): every edit returns a new `Deck`, so a deck can be saved in a
session file (trinity_desktop.session_file), compared, and put on the undo stack like a scenario.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from trinity_desktop.model import Scenario, ValidationError
from trinity_desktop.model.inputs.text_guard import (
    CAPTION,
    LAYOUT,
    NAME,
    TITLE,
    check_text,
    check_texts,
    shortened,
)

MAX_SLIDE_PANELS = 4   # a slide lays out one to four panels side by side (MainWindow.arrange)
EDITING_DOCK_NAMES = ("dock_controls", "dock_deck")   # shown while editing a slide, never presented


def panel_docks(docks) -> tuple[str, ...]:
    """The chart docks of a slide's dock list (the editing docks left out)."""
    return tuple(d for d in docks if d not in EDITING_DOCK_NAMES)


@dataclass(frozen=True)
class Slide:
    """One slide.

    docks: objectNames of the visible docks (e.g. "dock_breakdown"); layout: base64 of the bytes of
    `QMainWindow.saveState()` for this slide, or "" for the app's default layout; focus: the linked focus
    (what, key), ("", "") for none; flow_phase: the step-through flow's phase the slide opens at, zoomed to it
    (e.g. "forward", where a pipeline's bubble shows), or "" for the whole step.
    """

    title: str
    caption: str
    scenario: Scenario
    docks: tuple[str, ...] = ()
    layout: str = ""
    focus: tuple[str, str] = ("", "")
    flow_phase: str = ""

    def __post_init__(self):
        check_text("title", self.title, TITLE)
        check_text("caption", self.caption, CAPTION)
        if not isinstance(self.scenario, Scenario):
            raise ValidationError("scenario", type(self.scenario).__name__, "a Scenario")
        if isinstance(self.docks, str):
            raise ValidationError("docks", self.docks, "a list of dock objectNames")
        object.__setattr__(self, "docks", check_texts("docks", tuple(self.docks), NAME))
        check_text("layout", self.layout, LAYOUT)
        focus = tuple(self.focus)
        if len(focus) != 2 or not all(isinstance(x, str) for x in focus):
            raise ValidationError("focus", self.focus, "a pair (what, key) of text; ('', '') for none")
        object.__setattr__(self, "focus", check_texts("focus", focus, NAME))
        check_text("flow_phase", self.flow_phase, NAME)

    def replace(self, **changes) -> Slide:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class Deck:
    """A titled, ordered tuple of slides. Helpers return edited copies; indices are 0-based."""

    title: str
    slides: tuple[Slide, ...] = ()

    def __post_init__(self):
        check_text("title", self.title, TITLE)
        slides = tuple(self.slides)
        for slide in slides:
            if not isinstance(slide, Slide):
                raise ValidationError("slides", type(slide).__name__, "Slide values")
        object.__setattr__(self, "slides", slides)

    def __len__(self) -> int:
        return len(self.slides)

    def _index(self, i: int, name: str = "index", extra: int = 0) -> int:
        n = len(self.slides) + extra
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
            raise IndexError(f"{name} {i!r} is outside the deck: slides are numbered 0 to {n - 1}"
                             if n else f"{name} {i!r}: the deck has no slides")
        return i

    def add_slide(self, slide: Slide, index: int | None = None) -> Deck:
        """A copy with `slide` inserted before `index` (appended when None)."""
        if not isinstance(slide, Slide):
            raise ValidationError("slide", type(slide).__name__, "a Slide")
        slides = list(self.slides)
        if index is None:
            slides.append(slide)
        else:
            slides.insert(self._index(index, extra=1), slide)
        return dataclasses.replace(self, slides=tuple(slides))

    def move_slide(self, i: int, j: int) -> Deck:
        """A copy with slide i moved so that it ends up at position j (others keep their order)."""
        self._index(i, "from")
        self._index(j, "to")
        slides = list(self.slides)
        slides.insert(j, slides.pop(i))
        return dataclasses.replace(self, slides=tuple(slides))

    def remove_slide(self, i: int) -> Deck:
        self._index(i)
        return dataclasses.replace(self, slides=self.slides[:i] + self.slides[i + 1:])

    def replace_slide(self, i: int, slide: Slide) -> Deck:
        """A copy with slide i replaced (e.g. "update slide from the current state")."""
        self._index(i)
        if not isinstance(slide, Slide):
            raise ValidationError("slide", type(slide).__name__, "a Slide")
        return dataclasses.replace(self, slides=self.slides[:i] + (slide,) + self.slides[i + 1:])

    def with_caption(self, i: int, caption: str) -> Deck:
        """A copy with slide i's caption changed; typed text past the caption limit is shortened (with "…")."""
        self._index(i)
        return self.replace_slide(i, self.slides[i].replace(caption=shortened(str(caption), CAPTION)))

    def with_title(self, i: int, title: str) -> Deck:
        """A copy with slide i's title changed (the deck's own title: `with_deck_title`), shortened to the limit."""
        self._index(i)
        return self.replace_slide(i, self.slides[i].replace(title=shortened(str(title), TITLE)))

    def with_deck_title(self, title: str) -> Deck:
        return dataclasses.replace(self, title=shortened(str(title), TITLE))


def example_decks() -> list[Path]:
    """The example decks shipped in resources/decks/ (session files; open with session_file.load), by name."""
    folder = resources.files("trinity_desktop.resources").joinpath("decks")
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".json"))
