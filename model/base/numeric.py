"""Small numpy helpers shared by the vectorized formulas."""

from __future__ import annotations

import numpy as np

from trinity_desktop.model.base.xp import SCALAR_TYPES


def safe_div(num, den):
    """num / den, broadcasting, with 0 where den == 0 (an absent link moves nothing in no time)."""
    if isinstance(num, SCALAR_TYPES) and isinstance(den, SCALAR_TYPES):  # the scalar path: no arrays
        return num / den if den != 0 else 0.0
    num, den = np.broadcast_arrays(np.asarray(num, dtype=float), np.asarray(den, dtype=float))
    out = np.zeros(num.shape, dtype=float)
    np.divide(num, den, out=out, where=den != 0)
    return out


def as_float(x):
    """A 0-d array becomes a Python float; larger arrays stay arrays."""
    if isinstance(x, SCALAR_TYPES):
        return float(x)
    a = np.asarray(x, dtype=float)
    return float(a) if a.ndim == 0 else a
