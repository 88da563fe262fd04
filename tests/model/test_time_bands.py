"""Error bars of a planner front (model/uncertainty.time_bands): propagate's quantiles, one grid call per group."""

from __future__ import annotations

import pytest

from tests.model.test_uncertainty import _decode_8b, _train_175b
from trinity_desktop.model import ValidationError
from trinity_desktop.model.search.planner import plan_training
from trinity_desktop.model.search.serving_planner import plan_serving
from trinity_desktop.model.search.uncertainty import propagate, time_bands


@pytest.mark.parametrize("scenario", [_train_175b(), _decode_8b(), _decode_8b(gpus=4, batch=64)],
                         ids=["train", "decode", "decode-tp4"])
def test_one_scenario_gets_propagates_quantiles(scenario):
    (band,) = time_bands([scenario], samples=128)
    u = propagate(scenario, samples=128, sensitivity=False)
    ref = u.bands[u.headline]
    assert (band.p05, band.p50, band.p95, band.point) == pytest.approx((ref.p05, ref.p50, ref.p95, ref.point),
                                                                       rel=1e-12)


def test_a_training_front_in_one_call_matches_propagate_per_point():
    sc = _train_175b()
    plan = plan_training(sc.model, sc.hardware, 64, 64, 2048)
    front = list(plan.pareto)
    assert len(front) >= 3
    bands = time_bands([c.scenario for c in front], samples=64)
    for c, band in zip(front, bands, strict=True):
        assert band.point == pytest.approx(c.time_per_step_s, rel=1e-9)  # the dot the planner draws
        assert band.p05 <= c.time_per_step_s <= band.p95  # likely values sit inside the 5-95% range here
        assert band.p05 < band.p50 < band.p95
    for c, band in list(zip(front, bands, strict=True))[:: max(1, len(front) // 3)]:
        ref = propagate(c.scenario, samples=64, sensitivity=False).bands["time_per_step_s"]
        assert (band.p05, band.p95) == pytest.approx((ref.p05, ref.p95), rel=1e-12)


def test_a_serving_front_brackets_each_layouts_time_per_token():
    sc = _decode_8b()
    plan = plan_serving(sc.model, sc.hardware, 8, sc.prompt_len, sc.gen_len)
    front = list(plan.pareto)
    assert {c.layout["tp"] for c in front} != {1} or len(front) > 1
    bands = time_bands([c.scenario for c in front], samples=64)
    for c, band in zip(front, bands, strict=True):
        assert band.point == pytest.approx(c.tpot_s, rel=1e-9)
        assert band.p05 <= c.tpot_s <= band.p95
    # a layout alone (its own assumptions only) has the band it has inside the front when the sets match
    lone = [c for c in front if c.scenario.gpus > 1][0]
    i = front.index(lone)
    assert time_bands([lone.scenario], samples=64)[0].p95 == pytest.approx(bands[i].p95, rel=1e-12)


def test_bad_inputs_are_named():
    assert time_bands([]) == []
    with pytest.raises(ValidationError, match="samples"):
        time_bands([_decode_8b()], samples=100)
    with pytest.raises(ValidationError, match="scenarios"):
        time_bands([_decode_8b(), _train_175b()], samples=16)
