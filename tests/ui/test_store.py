"""The scenario store: edits re-evaluate, undo restores, invalid edits are refused and change nothing."""

from __future__ import annotations

import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from trinity_desktop.model.inputs.presets import model_presets
from trinity_desktop.store import ScenarioStore


@pytest.fixture
def store(qtbot):
    return ScenarioStore(default_scenario())


def test_edit_emits_new_results_and_undo_restores(store, qtbot):
    before = store.results
    with qtbot.waitSignal(store.changed) as sig:
        assert store.edit(zero=3)
    after = sig.args[0]
    assert after.scenario.zero == 3
    assert after.memory["optimizer"] == pytest.approx(before.memory["optimizer"])  # ZeRO-1 already shards it
    # the default has PP 2: ZeRO-3 keeps each stage's weights gathered for the step and accumulates its gradients
    # unsharded in fp32 (torchtitan under PP, model/formulas/memory.zero3_pipeline_resident_bytes)
    assert store.scenario.pp > 1
    assert after.memory["weights"] == pytest.approx(before.memory["weights"], rel=1e-9)
    assert after.memory["gradients"] > before.memory["gradients"]
    store.undo_stack.undo()
    assert store.scenario.zero == 1
    assert store.results.memory == before.memory
    store.undo_stack.redo()
    assert store.scenario.zero == 3


def test_model_change_gives_that_models_numbers(store):
    model = model_presets()["llama-2-7b"]
    assert store.edit(model=model, tp=8, pp=1)
    expected = evaluate(store.scenario)
    assert store.results.memory == expected.memory
    assert store.results.params_total == pytest.approx(6.74e9, rel=1e-3)


def test_invalid_edit_is_rejected_and_keeps_the_last_valid_scenario(store, qtbot):
    before = store.scenario
    with qtbot.waitSignal(store.rejected) as sig:
        assert not store.edit(tp=3)
    assert "tp" in sig.args[0] or "TP" in sig.args[0]
    assert store.scenario is before
    assert store.undo_stack.count() == 0


def test_focus_is_store_state(store, qtbot):
    with qtbot.waitSignal(store.focusChanged) as sig:
        store.set_focus("workload", "dense-pretrain")
    assert sig.args == ["workload", "dense-pretrain"]
    assert store.focus == ("workload", "dense-pretrain")
