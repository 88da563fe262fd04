"""The Trinity model core: numpy/scipy only, SI units, every formula broadcasting over arrays."""

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.pressure import Pressure, barycentric, binding_resource
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.scenario import Efficiency, Scenario
from trinity_desktop.model.step.evaluation import Results, evaluate, evaluate_grid

__all__ = ["Architecture", "Efficiency", "Hardware", "Pressure", "Results", "Scenario", "ValidationError",
           "barycentric", "binding_resource", "evaluate", "evaluate_grid"]
