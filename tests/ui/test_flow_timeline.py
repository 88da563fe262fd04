"""The flow's timeline is laid out once per scenario, ahead of time for a deck's training slides, and a bad
scenario still explains itself (the error reaches the caller)."""

from __future__ import annotations

import time

import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.views.phases import phases
from trinity_desktop.model.views.stages import stages
from trinity_desktop.ui import flow_timeline


def test_a_timeline_is_laid_out_once():
    sc = default_scenario().replace(seq_len=6144)
    first = flow_timeline.timeline(sc, evaluate(sc))
    assert first == (stages(sc, evaluate(sc)), phases(stages(sc), "train"))
    assert flow_timeline.timeline(sc.replace()) is first   # an equal scenario: the same stages, not again


def test_prefetch_lays_out_training_slides_in_the_worker():
    sc = default_scenario().replace(seq_len=3072)
    decode = default_scenario().replace(kind="decode", gpus=8, pp=1)
    flow_timeline.prefetch([sc, decode])
    future, mine = flow_timeline._claim(sc)
    assert not mine                                        # queued or done by the worker
    deadline = time.monotonic() + 60
    while not future.done() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert future.result()[0] == stages(sc)
    assert all(not (known == decode) for known, _ in flow_timeline._cache)   # inference is left to timeline()


def test_an_error_reaches_the_caller():
    sc = default_scenario().replace(seq_len=5120)   # laid out by no other test: timelines are kept per scenario
    with pytest.raises(ValidationError):
        flow_timeline.timeline(sc, evaluate(sc.replace(seq_len=2048)))   # results of another scenario
    assert flow_timeline.timeline(sc, evaluate(sc))[0] == stages(sc)      # the failure was not kept


def test_the_cache_keeps_the_newest_timelines_within_its_bar_budget(monkeypatch):
    """A 16,384-GPU step has 68,745 bars: the cache holds the last CACHE_SIZE scenarios only while their bars
    stay within MAX_CACHED_BARS, the newest always kept."""
    monkeypatch.setattr(flow_timeline, "_cache", [])
    scenarios = [default_scenario().replace(seq_len=1024 * k) for k in (1, 2, 3)]
    sizes = [len(flow_timeline.timeline(sc)[0]) for sc in scenarios]
    assert [known for known, _ in flow_timeline._cache] == scenarios   # all three fit the default budget
    monkeypatch.setattr(flow_timeline, "MAX_CACHED_BARS", sizes[-1] + sizes[-2])
    flow_timeline.timeline(scenarios[0].replace(seq_len=512))          # a fourth: the oldest two go
    kept = [known for known, _ in flow_timeline._cache]
    assert kept[-1].seq_len == 512 and scenarios[0] not in kept and len(kept) <= 3
    monkeypatch.setattr(flow_timeline, "MAX_CACHED_BARS", 0)
    flow_timeline.timeline(scenarios[1])
    assert [known for known, _ in flow_timeline._cache] == [scenarios[1]]   # the newest stays, even over budget
