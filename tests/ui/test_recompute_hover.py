"""The breakdown's activations hover puts the seed's recompute claim next to the scenario's computed values."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from trinity_desktop.model import evaluate  # noqa: E402
from trinity_desktop.model.claims.catalogue import all_claims  # noqa: E402
from trinity_desktop.model.claims.scale import recompute_scenario  # noqa: E402
from trinity_desktop.model.views.recompute import SEED_MEMORY_SAVED_PCT, recompute_effects  # noqa: E402
from trinity_desktop.ui.breakdown_panel import BreakdownPanel  # noqa: E402


@pytest.fixture
def breakdown(shown_panel):
    return shown_panel(BreakdownPanel, size=(900, 600))


def test_activation_hover_shows_claim_and_computed(breakdown):
    sc = recompute_scenario()
    r = evaluate(sc)
    breakdown.update_results(r)
    gb = {n: v / 1e9 for n, v in r.memory.items()}
    text = breakdown.hover_text_at("memory", 0.0, sum(gb.values()) - gb["activations"] / 2)
    assert "Seed: recomputation saves 50–90% memory for 15–20% more compute" in text
    effects = recompute_effects(sc)
    for mode, e in effects.items():
        assert f"Here, {mode}: −{100 * e.memory_saved:.0f}% activations for {100 * e.extra_compute:+.1f}% FLOPs" in text
    # the same numbers as the claim rows (one home)
    rows = {c.id: c for c in all_claims()}
    assert rows["recompute-selective-memory"].computed == pytest.approx(100 * effects["selective"].memory_saved)
    assert rows["recompute-full-compute"].computed == pytest.approx(100 * effects["full"].extra_compute)
    assert rows["recompute-selective-memory"].claimed == sum(SEED_MEMORY_SAVED_PCT) / 2
    # the weights segment does not carry it
    assert "Seed:" not in breakdown.hover_text_at("memory", 0.0, gb["weights"] / 2)
