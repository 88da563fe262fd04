"""Text from a file goes through one guard (model/inputs/text_guard.py): valid Unicode, no unpaired surrogate,
names <= 200, titles <= 300, captions <= 2,000 characters; a save that cannot be written is refused and the
previous file kept (issue 26, "Text")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from trinity_desktop import session_file
from trinity_desktop.deck import Deck, Slide, example_decks
from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import ValidationError
from trinity_desktop.model.inputs.text_guard import CAPTION, NAME, TITLE, check_text, escaped, shortened
from trinity_desktop.session_file import SessionFileError


def _deck_doc() -> dict:
    return json.loads(example_decks()[0].read_text(encoding="utf-8"))


@pytest.mark.parametrize("kind, limit", [(NAME, 200), (TITLE, 300), (CAPTION, 2_000)])
def test_limits_are_the_stated_ones(kind, limit):
    assert check_text("f", "x" * limit, kind) == "x" * limit
    with pytest.raises(ValidationError, match=f"at most {limit:,} characters"):
        check_text("f", "x" * (limit + 1), kind)


def test_a_100000_character_slide_title_is_refused_in_one_short_line(tmp_path):
    """The reproducer: such a deck made --present-to die with SIGSEGV."""
    doc = _deck_doc()
    doc["deck"]["slides"][0]["title"] = "T" * 100_000
    path = tmp_path / "huge_title.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(SessionFileError) as info:
        session_file.load(path)
    message = str(info.value)
    assert "deck.slides[0].title" in message and "at most 300" in message
    assert len(message) < 250 and "\n" not in message


def test_present_to_refuses_the_huge_title_with_exit_2(tmp_path):
    doc = _deck_doc()
    doc["deck"]["slides"][0]["title"] = "T" * 100_000
    path = tmp_path / "huge_title.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    run = subprocess.run([sys.executable, "-m", "trinity_desktop", str(path), "--present-to", str(tmp_path / "o")],
                         capture_output=True, text=True, env=env, timeout=180)
    assert run.returncode == 2, run.stderr[-2000:]
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "at most 300" in lines[0] and "Traceback" not in run.stderr


@pytest.mark.parametrize("where", ["deck.title", "slide.caption", "hardware.name", "model.name", "technique"])
def test_an_unpaired_surrogate_is_refused_on_load(where):
    doc = _deck_doc()
    bad = "name \ud800 here"
    if where == "deck.title":
        doc["deck"]["title"] = bad
    elif where == "slide.caption":
        doc["deck"]["slides"][0]["caption"] = bad
    elif where == "hardware.name":
        doc["scenario"]["hardware"]["name"] = bad
    elif where == "model.name":
        doc["scenario"]["model"]["name"] = bad
    else:
        doc["scenario"]["techniques"] = [bad]
    text = json.dumps(doc)  # ASCII JSON with a "\ud800" escape: valid JSON
    with pytest.raises(SessionFileError, match="unpaired surrogate"):
        session_file.loads(text)


def test_a_save_that_cannot_be_written_is_refused_and_the_previous_file_kept(tmp_path):
    path = tmp_path / "work.trinity.json"
    good = default_scenario()
    session_file.save(path, good)
    before = path.read_bytes()
    hardware = good.hardware
    object.__setattr__(hardware := replace(hardware), "name", "H\ud800")  # past every check, as a bug might
    bad = good.replace(hardware=hardware)
    with pytest.raises(SessionFileError, match="not valid Unicode") as info:
        session_file.save(path, bad)
    assert "scenario.hardware.name" in str(info.value)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind


def test_the_window_refuses_such_a_save_with_a_message(qtbot, tmp_path):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from trinity_desktop.app import build_window

    window = build_window(None)
    qtbot.addWidget(window)
    hardware = replace(window.store.scenario.hardware)
    object.__setattr__(hardware, "name", "H\ud800")
    window.store._scenario = window.store.scenario.replace(hardware=hardware)
    message = window.workspace.save_path(tmp_path / "x.trinity.json")
    assert "not valid Unicode" in message and not (tmp_path / "x.trinity.json").exists()


def test_hardware_text_goes_through_the_guard():
    hw = default_scenario().hardware
    with pytest.raises(ValidationError, match="at most 200"):
        replace(hw, name="n" * 201)
    with pytest.raises(ValidationError, match="unpaired surrogate"):
        replace(hw, vendor="\udfff")


def test_typed_text_is_shortened_with_a_note_and_never_refused():
    slide = Slide("t", "c", default_scenario())
    deck = Deck("talk", (slide,)).with_title(0, "x" * 1000).with_caption(0, "y" * 5000)
    assert len(deck.slides[0].title) == 300 and deck.slides[0].title.endswith("…")
    assert len(deck.slides[0].caption) == 2000
    assert shortened("a\ud800b", NAME) == "a\ufffdb"


def test_names_print_escaped_on_one_line():
    assert escaped("evil\nname\x1b[31m") == "evil\\nname\\x1b[31m"
