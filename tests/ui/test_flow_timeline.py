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
