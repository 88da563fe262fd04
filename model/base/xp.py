"""numpy for the model's formulas, with fast paths for scalars: one home for each formula, two speeds.

Every formula is written once, over numpy arrays, so `evaluate_grid` runs a million configurations in one call.
`evaluate` runs the same code on plain numbers, where numpy's array machinery dominates: `np.asarray` of a
number makes a 0-d array, each later operation on it is a full ufunc call (~1 µs), and `np.where` builds three
arrays for three numbers. The core's modules import this module as `xp` (never as `np`, which is numpy). For
arrays each function below is numpy's own; for plain Python numbers it stays on plain numbers (IEEE-754 float64,
the same results bit for bit, tests/model/test_xp.py), except that booleans become numpy's (`~` is then a logical
not). Anything not defined here is numpy's.

Which numbers a step runs on is an explicit check (`step_inputs`), not a caught error: plain numbers where they
follow numpy's rules, numpy scalars where they might not (a NaN, an infinity, an int past int64). Plain
arithmetic raises ZeroDivisionError where numpy gives inf; the formulas divide by a value that may be 0 (an
absent link) only through `numeric.safe_div`, and every other divisor is a validated count, peak, bandwidth or
efficiency above 0 (model/base/ranges.py), so a ZeroDivisionError is a bug, and it is not hidden.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as _np

__all__ = ["SCALAR_TYPES", "asarray", "ceil", "clip", "maximum", "minimum", "follows_numpy", "numpy_scalars", "select",
           "step_inputs", "where"]  # and, through __getattr__, the rest of numpy

SCALAR_TYPES = (int, float, _np.generic)  # bool is an int; np.float64 is a float
_f64, _bool = _np.float64, _np.bool_


def __getattr__(name: str):  # everything else is numpy's
    return getattr(_np, name)


def _all_scalar(*xs) -> bool:
    for x in xs:
        if not isinstance(x, SCALAR_TYPES):
            return False
    return True


# Plain Python numbers: their arithmetic is the fastest IEEE-754 float64 there is.
_PLAIN = frozenset({float, int, bool})
# The scalar types the formulas meet, for quick `type(x) in _NUMBERS` tests (isinstance covers the rest).
_NUMBERS = frozenset({float, int, bool, _f64, _bool, _np.int64, _np.float32, _np.int32})


def asarray(x, dtype=None):
    t = type(x)
    if t in _PLAIN:
        if dtype is float:
            return float(x)
        if dtype is bool:
            return _bool(x)  # a numpy bool: `~` is logical not (on a Python bool it is -1 or -2)
        if dtype is None:  # plain numbers stay plain; a bool becomes numpy's (see dtype=bool)
            return _bool(x) if t is bool else x
    elif t is _f64 and (dtype is float or dtype is None):
        return x
    elif isinstance(x, _np.generic) and dtype in (float, bool, None) and not isinstance(x, str):
        return x if dtype is None else _f64(x) if dtype is float else _bool(x)
    return _np.asarray(x, dtype=dtype)


def where(condition, x, y):
    if type(condition) in _NUMBERS and (type(x) in _NUMBERS and type(y) in _NUMBERS
                                        or type(x) is str and type(y) is str):
        return x if condition else y
    if _all_scalar(condition, x, y) or isinstance(condition, SCALAR_TYPES) and isinstance(x, str) \
            and isinstance(y, str):
        return x if condition else y
    return _np.where(condition, x, y)


def maximum(a, b):
    if type(a) in _NUMBERS and type(b) in _NUMBERS or _all_scalar(a, b):
        if a != a or b != b:  # NaN propagates, as in numpy
            return _f64("nan")
        return a if a >= b else b
    return _np.maximum(a, b)


def minimum(a, b):
    if type(a) in _NUMBERS and type(b) in _NUMBERS or _all_scalar(a, b):
        if a != a or b != b:
            return _f64("nan")
        return a if a <= b else b
    return _np.minimum(a, b)


def ceil(x):
    if type(x) in _NUMBERS and math.isfinite(x):
        return float(math.ceil(x)) if type(x) in _PLAIN else _f64(math.ceil(x))
    return _np.ceil(x)


def clip(x, lo, hi):
    if _all_scalar(x, lo, hi):
        return minimum(maximum(x, lo), hi)
    return _np.clip(x, lo, hi)


def select(condlist, choicelist, default=0):
    if _all_scalar(*condlist, *choicelist, default):
        for condition, choice in zip(condlist, choicelist, strict=True):
            if condition:
                return choice
        return default
    return _np.select(condlist, choicelist, default)


_INT64_MAX = (1 << 63) - 1


def _follows_numpy(v) -> bool:
    """Whether a plain input computes as numpy would: a finite float, an int within int64, a bool."""
    t = type(v)
    if t is float:
        return math.isfinite(v)
    if t is int:
        return -_INT64_MAX <= v <= _INT64_MAX
    return True


def numpy_scalars(inputs: Mapping) -> dict:
    """The inputs with each plain number as a numpy scalar (np.float64, np.bool_)."""
    return {k: _bool(v) if type(v) is bool else _f64(v) if type(v) in (int, float) else v
            for k, v in inputs.items()}


def follows_numpy(values) -> bool:
    """Whether every plain input computes as numpy would (the fast path is exact for them)."""
    return all(_follows_numpy(v) for v in values)


def step_inputs(inputs: Mapping) -> dict:
    """The inputs a step runs on: as given (plain numbers: the fast path) when each follows numpy's rules, else
    all as numpy scalars. An explicit check, made before the step runs."""
    return dict(inputs) if follows_numpy(inputs.values()) else numpy_scalars(inputs)
