"""Every field of a session and a deck has a default or is refused by name when missing: each shipped deck
loaded with each field removed in turn (issue 26, "Files")."""

from __future__ import annotations

import copy
import json
from dataclasses import MISSING, fields

import pytest

from trinity_desktop import session_file
from trinity_desktop.deck import example_decks
from trinity_desktop.model import Architecture, Efficiency, Hardware, Scenario
from trinity_desktop.session_file import SessionFileError

SLIDES_PER_DECK = 2  # every field of the first two slides (the others repeat their layout)


def _field_paths(value, path=()):
    """Every key path in a JSON document (lists: their first SLIDES_PER_DECK items)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield path + (key,)
            yield from _field_paths(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value[:SLIDES_PER_DECK]):
            yield from _field_paths(item, path + (i,))


def _without(doc: dict, path: tuple) -> dict:
    doc = copy.deepcopy(doc)
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    return doc


REQUIRED = {cls: {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
            for cls in (Hardware, Architecture, Efficiency, Scenario)}


@pytest.mark.parametrize("deck", example_decks(), ids=lambda p: p.stem)
def test_each_field_removed_in_turn_loads_with_its_default_or_is_refused_by_name(deck):
    doc = json.loads(deck.read_text(encoding="utf-8"))
    paths = list(_field_paths(doc))
    assert len(paths) > 100
    loaded, refused = 0, 0
    for path in paths:
        name = str(path[-1])
        try:
            session_file.loads(json.dumps(_without(doc, path)))
        except SessionFileError as exc:
            message = str(exc)
            assert "\n" not in message and len(message) < 300, message
            # refused by name: the missing field itself, or (a default that breaks a layout rule) the rule's field
            named = name in message or "must be" in message
            assert named, (path, message)
            refused += 1
        else:
            loaded += 1
            owner = {"hardware": Hardware, "model": Architecture, "efficiency": Efficiency,
                     "scenario": Scenario}.get(str(path[-2]) if len(path) > 1 else "")
            assert owner is None or name not in REQUIRED[owner], f"{path}: a required field loaded without a value"
    assert loaded > 0 and refused > 0


def test_a_missing_required_field_is_named():
    doc = json.loads(example_decks()[0].read_text(encoding="utf-8"))
    for key, where in (("model", "scenario"), ("hardware", "scenario"), ("hbm_bw", "scenario.hardware")):
        broken = copy.deepcopy(doc)
        parent = broken
        for part in where.split("."):
            parent = parent[part]
        del parent[key]
        with pytest.raises(SessionFileError, match=rf"{where}\.{key}: is missing \(required\)"):
            session_file.loads(json.dumps(broken))


def test_the_planner_deck_without_gen_len_loads_with_the_default():
    deck = next(p for p in example_decks() if "planner" in p.name)
    doc = json.loads(deck.read_text(encoding="utf-8"))
    for scenario in [doc["scenario"]] + [s["scenario"] for s in doc["deck"]["slides"]]:
        del scenario["gen_len"]
    scenario, loaded = session_file.loads(json.dumps(doc))
    default = next(f.default for f in fields(Scenario) if f.name == "gen_len")
    assert scenario.gen_len == default and all(s.scenario.gen_len == default for s in loaded.slides)
