"""The scalar fast path (model/base/xp.py): the formulas give the same numbers on plain numbers, numpy scalars
and numpy arrays, and xp's functions agree with numpy's."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate, evaluate_grid
from trinity_desktop.model.base import xp
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.step.inference import inference_step
from trinity_desktop.model.step.layout import infer_inputs as _infer_inputs
from trinity_desktop.model.step.layout import train_inputs as _train_inputs
from trinity_desktop.model.step.run import numpy_scalars
from trinity_desktop.model.step.training import training_step


def _leaves(tree, prefix=""):
    if dataclasses.is_dataclass(tree):
        tree = {f.name: getattr(tree, f.name) for f in dataclasses.fields(tree)}
    if isinstance(tree, tuple):
        tree = dict(enumerate(tree))
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _leaves(v, f"{prefix}{k}.")
    else:
        yield prefix[:-1], tree


SCENARIOS = [
    default_scenario(),
    default_scenario().replace(zero=3, recompute="full", offload="nvme"),
    default_scenario().replace(tp=1, pp=1, zero=0, grad_compression=100.0),
    default_scenario().replace(model=presets.model_presets()["deepseek-v3"], gpus=256, tp=8, pp=4, ep=8,
                               global_batch=512),
]


@pytest.mark.parametrize("sc", SCENARIOS, ids=lambda sc: f"{sc.model.key}-zero{sc.zero}-{sc.offload}")
def test_training_step_is_the_same_on_plain_numbers_numpy_scalars_and_arrays(sc):
    inputs = _train_inputs(sc)
    plain = dict(_leaves(training_step(sc.model, sc.hardware, inputs)))
    scalars = dict(_leaves(training_step(sc.model, sc.hardware, numpy_scalars(inputs))))
    arrays = dict(_leaves(training_step(sc.model, sc.hardware,
                                        inputs.replace(**{k: np.asarray([v]) for k, v in inputs.as_dict().items()}))))
    assert plain.keys() == scalars.keys() == arrays.keys()
    for k, v in plain.items():
        assert np.asarray(scalars[k]).item() == np.asarray(v).item(), k  # bit for bit
        assert np.asarray(arrays[k]).ravel()[0] == np.asarray(v).item(), k


def test_inference_step_is_the_same_on_plain_numbers_and_numpy_scalars():
    sc = default_scenario().replace(kind="decode", gpus=8, kv_policy="h2o", kv_offload_fraction=0.3)
    inputs = _infer_inputs(sc)
    plain = dict(_leaves(inference_step(sc.model, sc.hardware, inputs)))
    scalars = dict(_leaves(inference_step(sc.model, sc.hardware, numpy_scalars(inputs))))
    assert plain.keys() == scalars.keys()
    for k, v in plain.items():
        np.testing.assert_array_equal(np.asarray(scalars[k]), np.asarray(v), err_msg=k)


def test_evaluate_equals_the_grid_for_one_configuration():
    sc = default_scenario()
    grid = evaluate_grid(sc, tp=np.array([sc.tp]))
    assert evaluate(sc).time_total == grid.time_total[0]
    assert evaluate(sc).memory_total == grid.memory_total[0]


numbers = st.one_of(st.floats(-1e6, 1e6, allow_nan=False), st.integers(-1000, 1000))


@given(numbers, numbers, st.booleans())
def test_xp_scalar_functions_agree_with_numpy(a, b, c):
    for f in ("maximum", "minimum"):
        assert getattr(xp, f)(a, b) == getattr(np, f)(a, b)
    assert xp.where(c, a, b) == np.where(c, a, b)
    assert xp.ceil(a) == np.ceil(a)
    assert xp.clip(a, -10, 10) == np.clip(a, -10, 10)
    assert xp.asarray(a, dtype=float) == np.asarray(a, dtype=float)
    assert ~xp.asarray(c, dtype=bool) == ~np.asarray(c, dtype=bool)  # logical not, not -1 / -2
    assert xp.select([a > b, a < b], [a, b], 0.0) == np.select([a > b, a < b], [a, b], 0.0)


def test_xp_keeps_numpy_semantics_for_arrays_and_nan():
    x = np.array([1.0, np.nan, 3.0])
    np.testing.assert_array_equal(xp.maximum(x, 2.0), np.maximum(x, 2.0))
    np.testing.assert_array_equal(xp.where(x > 2, x, 0.0), np.where(x > 2, x, 0.0))
    assert np.isnan(xp.maximum(float("nan"), 1.0)) and np.isnan(xp.minimum(1.0, float("nan")))
    assert xp.where(True, "scale-up", "scale-out") == "scale-up"
    assert xp.inf == np.inf  # everything else is numpy's


def test_inputs_plain_numbers_would_not_compute_as_numpy_take_numpy_scalars():
    plain = _train_inputs(default_scenario()).as_dict()
    assert xp.step_inputs(plain) == plain and all(type(v) in (int, float, bool) for v in xp.step_inputs(plain).values())
    for odd in (float("nan"), float("inf"), 1 << 70):
        chosen = xp.step_inputs({**plain, "peak": odd})
        assert type(chosen["tp"]) is np.float64 and type(chosen["sp"]) is np.bool_


def test_a_division_by_zero_on_plain_numbers_is_not_hidden(monkeypatch):
    import importlib

    evaluate_module = importlib.import_module("trinity_desktop.model.step.run")  # where the steps run

    def plain_numbers_divide_by_zero(arch, hw, inputs):
        return inputs.tp / 0

    monkeypatch.setattr(evaluate_module, "training_step", plain_numbers_divide_by_zero)
    with pytest.raises(ZeroDivisionError):
        evaluate(default_scenario().replace(seq_len=1024))


def test_one_evaluation_per_scenario_serves_the_roofline_and_the_stage_pieces(monkeypatch):
    import importlib

    from trinity_desktop.model.views.roofline import roofline
    from trinity_desktop.model.views.stages import training_pieces

    evaluate_module = importlib.import_module("trinity_desktop.model.step.run")  # where the steps run
    sc = default_scenario().replace(seq_len=6144)
    results = evaluate(sc)
    expected_points = roofline(sc).points
    calls = []
    real = evaluate_module.training_step
    monkeypatch.setattr(evaluate_module, "training_step", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert roofline(sc).points == expected_points
    assert training_pieces(sc).optimizer_s == results.time["optimizer"]
    assert calls == []  # both reused the step `evaluate` computed
    evaluate_grid(sc.replace(seq_len=2048))  # another scenario is computed
    assert calls == [1]
