"""Sparse attention and distillation as catalogue techniques: computed through the core, with their sources."""

import dataclasses

import pytest

from trinity_desktop.model import evaluate
from trinity_desktop.model.claims.trinity import workload
from trinity_desktop.model.inputs.presets import references
from trinity_desktop.model.views.techniques import apply, load_techniques, technique_effect

NEW = ("sliding-window-attention", "block-sparse-attention", "native-sparse-attention", "distillation-half-depth")


def test_in_catalogue_with_sources():
    cat = load_techniques()
    for key in NEW:
        assert key in cat and cat[key].citation in references()
    assert not cat["native-sparse-attention"].modelled and cat["native-sparse-attention"].reason


def test_sliding_window_caps_the_kv_cache():
    sc = workload("long-context-decode")
    after = apply("sliding-window-attention", sc)
    assert after.model.sliding_window == 4096
    r0, r1 = evaluate(sc), evaluate(after)
    ctx = sc.prompt_len + sc.gen_len
    # the KV cache shrinks by the window's share of the context (every layer windowed)
    assert r1.memory["kv_cache"] == pytest.approx(r0.memory["kv_cache"] * 4096 / ctx, rel=0.02)
    assert technique_effect(sc, "sliding-window-attention").saved_pct > 50


def test_distillation_halves_layers():
    sc = workload("long-context-decode")
    after = apply("distillation-half-depth", sc)
    assert after.model.layers == sc.model.layers // 2
    r0, r1 = evaluate(sc), evaluate(after)
    assert r1.memory["kv_cache"] == pytest.approx(r0.memory["kv_cache"] / 2)
    half = dataclasses.replace(sc.model, layers=sc.model.layers // 2)
    assert r1.memory["weights"] == pytest.approx(evaluate(sc.replace(model=half)).memory["weights"])
    assert "97%" in load_techniques()["distillation-half-depth"].note
