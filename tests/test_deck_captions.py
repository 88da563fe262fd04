"""The shipped decks' captions quote the panels' numbers: every number a caption shows is a template value
filled from the slide's own Results (or the previous slide's, `{prev_...}`), so a caption cannot disagree
with the panels on its slide. A number typed into a shipped caption is refused, except in a name ("int4",
"ZeRO-3", "1F1B") or a citation ("Llama 3 §3.3.2", "Table 4")."""

from __future__ import annotations

import re

import pytest

from trinity_desktop import session_file
from trinity_desktop.captions import CaptionError, caption_values, fill_caption, slide_caption, template_names
from trinity_desktop.deck import example_decks
from trinity_desktop.model import evaluate

TYPED_NUMBER = re.compile(r"(?<![\w.\-·/(])\d[\d,.]*(?![\w\-])")
CITATION = re.compile(r"§\d+(?:\.\d+)*|Table \d+|Llama \d+|AIME \d{4}|[Oo]pen question \d+")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def _slides():
    for path in example_decks():
        _, deck = session_file.load(path)
        yield from ((path.stem, i, slide, deck) for i, slide in enumerate(deck.slides))


SLIDES = list(_slides())
IDS = [f"{name}-{i + 1}" for name, i, *_ in SLIDES]


@pytest.mark.parametrize("deck_name, index, slide, deck", SLIDES, ids=IDS)
def test_a_caption_types_no_number_of_its_own(deck_name, index, slide, deck):
    text = CITATION.sub("", PLACEHOLDER.sub("", slide.caption))
    assert TYPED_NUMBER.findall(text) == [], f"{deck_name} slide {index + 1}: typed numbers in {slide.caption!r}"


@pytest.mark.parametrize("deck_name, index, slide, deck", SLIDES, ids=IDS)
def test_a_caption_fills_from_its_slide(deck_name, index, slide, deck):
    results = evaluate(slide.scenario)
    previous = evaluate(deck.slides[index - 1].scenario) if index else None
    text = fill_caption(slide.caption, results, previous)
    assert "{" not in text and "nan" not in text.lower() and "—" not in text
    values = caption_values(results)
    for name in template_names(slide.caption):
        source = caption_values(previous) if name.startswith("prev_") else values
        assert source[name.removeprefix("prev_")] in text
    assert slide_caption(deck, index) == text   # what the presenter shows


def test_an_unknown_value_is_refused_in_one_line():
    _, _, slide, _ = SLIDES[0]
    with pytest.raises(CaptionError, match=r"\{tokens_per_watt\}.*known: "):
        fill_caption("{tokens_per_watt} per token", evaluate(slide.scenario))
    with pytest.raises(CaptionError, match="previous slide"):
        fill_caption("from {prev_memory}", evaluate(slide.scenario))


def test_a_caption_typed_by_a_speaker_is_shown_as_typed():
    _, _, slide, deck = SLIDES[0]
    typed = deck.with_caption(0, "Braces {like this} are text here")
    assert slide_caption(typed, 0) == "Braces {like this} are text here"


def test_the_captions_quote_the_published_cases_as_computed():
    """Spot checks against hand-derived values: the first planner slide is Llama 3 405B's published layout
    (TP8 x PP16 x DP128, 16 micro-batches: bubble (p-1)/(m+p-1) = 15/31 of the pipeline phase)."""
    planner = [(i, s, d) for name, i, s, d in SLIDES if name == "layout_planner"]
    i, slide, deck = planner[0]
    text = slide_caption(deck, i)
    r = evaluate(slide.scenario)
    assert "TP8" in slide.title and "DP128" in slide.title
    assert f"{r.train['micro_batches']:.0f} micro-batches" in text and "16 micro-batches" in text
    assert "16,384 GPUs" in text and "does not fit" in text


def test_the_planner_slides_open_the_flow_where_the_bubble_shows():
    for name, _, slide, _ in SLIDES:
        if name == "layout_planner" and "dock_flow" in slide.docks and "bubble" in slide.caption:
            assert slide.flow_phase == "forward"


def test_the_laptop_slide_is_about_that_model_on_that_laptop():
    for _, i, slide, deck in SLIDES:
        if slide.scenario.hardware.key == "m4-max":
            text = slide_caption(deck, i)
            assert slide.scenario.hardware.name in text and slide.scenario.model.name in text
            assert "dock_split" not in slide.docks   # the split panel cuts other models: it would disagree
