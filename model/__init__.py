"""The Trinity model core: numpy/scipy only, SI units, every formula broadcasting over arrays."""

from .architecture import Architecture
from .errors import ValidationError
from .evaluate import Results, evaluate, evaluate_grid
from .hardware import Hardware
from .pressure import Pressure, barycentric, binding_resource
from .scenario import Efficiency, Scenario

__all__ = ["Architecture", "Efficiency", "Hardware", "Pressure", "Results", "Scenario", "ValidationError",
           "barycentric", "binding_resource", "evaluate", "evaluate_grid"]
