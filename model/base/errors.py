"""The one error type the model raises for bad input."""

from __future__ import annotations


class ValidationError(ValueError):
    """An input outside its allowed range: names the field, the value and what is allowed."""

    def __init__(self, field: str, value: object, allowed: str):
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field} = {shown(value)} is not allowed: {allowed}")


def shown(value: object) -> str:
    """A value as a reader typed it: numpy scalars and one-element sequences as the number itself, whole floats
    without the ".0" (16777217, not [16777217.0] or np.float64(16777217.0)); strings quoted."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        value = value.tolist()  # numpy scalar or array -> Python
    while isinstance(value, (list, tuple)) and len(value) == 1:
        value = value[0]
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)
