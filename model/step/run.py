"""Run the typed steps of a scenario once: the scalar fast path, and a cache every view of one scenario shares.

`train_step_of(scenario)` and `infer_step_of(scenario)` compute a scenario's `TrainStep` / `InferStep` on plain
numbers (model/base/xp.py) and keep the last few, so `evaluate`, the stage timeline, the roofline and the KV
residency of one edit run each step once. `infer_step_at(scenario, **axes)` runs the inference step with some
inputs replaced by arrays (a context or batch sweep) and is not cached.
"""

from __future__ import annotations

from trinity_desktop.model.base import xp
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.inference import InferStep, inference_step
from trinity_desktop.model.step.layout import InferInputs, TrainInputs, infer_inputs, train_inputs
from trinity_desktop.model.step.training import TrainStep, training_step


def _run_step(step, arch, hw, inputs):
    """A core step on plain numbers (the fast path, model/base/xp.py) when every input follows numpy's rules,
    else on numpy scalars: an explicit check made before the step runs (`xp.follows_numpy`), never a caught
    ZeroDivisionError, so a division by zero is a bug that surfaces."""
    if xp.follows_numpy(inputs.as_dict().values()):
        return step(arch, hw, inputs)
    return step(arch, hw, numpy_scalars(inputs))


# The typed step of the last few scenarios computed: `evaluate`, the stage timeline, the roofline and the KV
# residency of one scenario share it, so one edit runs each step once.
_RECENT_STEPS: list[tuple[Scenario, TrainStep | InferStep]] = []
RECENT_STEPS = 4


def _remember_step(scenario: Scenario, out) -> None:
    _RECENT_STEPS.insert(0, (scenario, out))
    del _RECENT_STEPS[RECENT_STEPS:]


def _recent_step(scenario: Scenario):
    for sc, out in _RECENT_STEPS:
        if sc is scenario or sc == scenario:
            return out
    return None


def numpy_scalars(inputs: TrainInputs | InferInputs):
    """The inputs with each plain number as a numpy scalar (np.float64, np.bool_)."""
    return inputs.replace(**xp.numpy_scalars(inputs.as_dict()))


def infer_step_at(scenario: Scenario, **axes) -> InferStep:
    """The inference step of a scenario (of any kind: its inference fields, TP = `Scenario.inference_tp`) with
    some inputs replaced by numbers or arrays (`InferInputs` field names), broadcast together."""
    return inference_step(scenario.model, scenario.hardware, infer_inputs(scenario).replace(**axes))


def _step_of(step, inputs_of, scenario: Scenario, fresh: bool):
    """A scenario's step, computed once for every view of it (`_RECENT_STEPS`); `fresh` computes it again."""
    known = None if fresh else _recent_step(scenario)
    if known is None:
        known = _run_step(step, scenario.model, scenario.hardware, inputs_of(scenario))
        _remember_step(scenario, known)
    return known


def train_step_of(scenario: Scenario, fresh: bool = False) -> TrainStep:
    """The training step of a training scenario, computed once for every view of it; `fresh` computes it
    again (what `evaluate` does) and remembers it."""
    return _step_of(training_step, train_inputs, scenario, fresh)


def infer_step_of(scenario: Scenario, fresh: bool = False) -> InferStep:
    """The inference step of an inference scenario, computed once for every view of it; `fresh` computes it
    again (what `evaluate` does) and remembers it."""
    return _step_of(inference_step, infer_inputs, scenario, fresh)


