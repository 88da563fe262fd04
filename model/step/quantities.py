"""Quantities the training and the inference step both return."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

LINKS = ("hbm", "scale-up", "scale-out", "host")  # the keys of `Results.bytes_by_link`


def record(cls):
    """A frozen dataclass whose `__init__` stores its fields in one dict update instead of one
    `object.__setattr__` per field: the steps return records of 20-50 fields on every scalar `evaluate`, where
    the per-field setattr of a frozen dataclass cost 10% of the call. Instances stay frozen (assignment raises
    FrozenInstanceError), compare and print as dataclasses."""
    cls = dataclass(frozen=True)(cls)
    fields = dataclasses.fields(cls)
    defaults = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    params = ", ".join(f"{f.name}=_defaults[{f.name!r}]" if f.name in defaults else f.name for f in fields)
    body = ", ".join(f"{f.name!r}: {f.name}" for f in fields)
    namespace: dict = {"_defaults": defaults}
    exec(f"def __init__(self, {params}):\n    self.__dict__.update({{{body}}})", namespace)  # noqa: S102
    namespace["__init__"].__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = namespace["__init__"]
    return cls


@record
class LinkBytes:
    """Bytes per GPU over each link: HBM, the scale-up fabric (NVLink), the scale-out network, the host link."""

    hbm: object
    scale_up: object
    scale_out: object
    host: object

    def by_name(self) -> dict:
        """{link name of `LINKS`: bytes}, the form `Results.bytes_by_link` publishes."""
        return {"hbm": self.hbm, "scale-up": self.scale_up, "scale-out": self.scale_out, "host": self.host}
