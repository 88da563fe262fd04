"""The shipped decks' captions quote numbers the panels on the slide show: every "x GB", "x ms", "x s" and
pressure ("0.xx") or percentage (a pressure, a share of the step time, a scenario fraction or efficiency, the
MFU) in a caption is a number the model computes for that slide's scenario (or, for a caption
that compares, for another slide of the same deck or the context it names)."""

from __future__ import annotations

import re

import pytest

from trinity_desktop import session_file
from trinity_desktop.deck import example_decks
from trinity_desktop.model import evaluate

QUANTITY = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) ?(GB|ms|s)\b")
PRESSURE = re.compile(r"(?<![\w.])([01]\.\d\d)(?![\d%])(?! ?(?:GB|ms|s)\b)")  # "0.99 s" is a time, not a pressure
PERCENT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)%")
CONTEXT = re.compile(r"at (\d+)k tokens of context")


def _facts(r) -> set[str]:
    """The numbers the panels show for one result, formatted as a caption would quote them."""
    gb = [*r.memory.values(), r.memory_total, r.capacity, *r.bytes_by_link.values(),
          r.train.get("host_bytes", 0.0), r.infer.get("kv_bytes", 0.0) / max(r.scenario.gpus, 1)]
    seconds = [r.time_total, *r.time.values()]
    out = {f"{x / 1e9:.1f} GB" for x in gb} | {f"{x / 1e9:.0f} GB" for x in gb}
    out |= {f"{x * 1e3:.1f} ms" for x in seconds} | {f"{x * 1e3:.2f} ms" for x in seconds}
    out |= {f"{x:.2f} s" for x in seconds}
    out |= {f"{x:.2f}" for x in r.pressure.as_tuple()}
    # percentages: pressures, shares of the step time, and the scenario's own fractions (e.g. retrieval heads)
    shares = [*r.pressure.as_tuple(), *(t / r.time_total for t in r.time.values()), r.memory_total / r.capacity]
    shares += [v for v in vars(r.scenario).values() if isinstance(v, float) and 0 < v < 1]
    eff = r.scenario.efficiency  # the assumed fractions of peak compute, HBM and network bandwidth
    shares += [eff.compute, eff.hbm, eff.network]
    out |= {f"{100 * x:.0f}%" for x in shares}
    mfu = r.train.get("mfu") if r.train else None  # the training panel's model FLOPs utilisation
    if mfu:
        out |= {f"{100 * mfu:.0f}%", f"{100 * mfu:.1f}%"}
    return out


def _slides():
    for path in example_decks():
        _, deck = session_file.load(path)
        yield from ((path.stem, i, slide, deck) for i, slide in enumerate(deck.slides))


@pytest.mark.parametrize("deck_name, index, slide, deck", list(_slides()),
                         ids=[f"{name}-{i + 1}" for name, i, *_ in _slides()])
def test_caption_numbers_are_the_panels_numbers(deck_name, index, slide, deck):
    facts = set()
    for other in deck.slides:
        facts |= _facts(evaluate(other.scenario))
    sc = slide.scenario
    for k in CONTEXT.findall(slide.caption):  # "at 8k tokens of context": the same scenario at that context
        facts |= _facts(evaluate(sc.replace(prompt_len=int(k) * 1024 - sc.gen_len)))
    own = _facts(evaluate(sc))
    quoted = [f"{n} {u}" for n, u in QUANTITY.findall(slide.caption)] + PRESSURE.findall(slide.caption)
    quoted += [f"{n}%" for n in PERCENT.findall(slide.caption)]
    missing = [q for q in quoted if q not in facts]
    assert missing == [], f"{deck_name} slide {index + 1}: {missing} not computed for its scenarios"
    # at least one quoted number is the slide's own (a caption is about its slide)
    if quoted:
        assert any(q in own for q in quoted), f"{deck_name} slide {index + 1} quotes no number of its own"


def test_the_m4_max_slide_is_about_that_model_on_that_laptop():
    for _, _, slide, _ in _slides():
        if "M4 Max" in slide.caption:
            assert slide.scenario.hardware.key == "m4-max"
            assert slide.scenario.model.name.split("-")[0] in slide.caption
