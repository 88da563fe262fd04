"""The one error type the model raises for bad input."""

from __future__ import annotations


class ValidationError(ValueError):
    """An input outside its allowed range: names the field, the value and what is allowed."""

    def __init__(self, field: str, value: object, allowed: str):
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field} = {value!r} is not allowed: {allowed}")
