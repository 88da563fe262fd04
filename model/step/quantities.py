"""Quantities the training and the inference step both return."""

from __future__ import annotations

from dataclasses import dataclass

LINKS = ("hbm", "scale-up", "scale-out", "host")  # the keys of `Results.bytes_by_link`


@dataclass(frozen=True)
class LinkBytes:
    """Bytes per GPU over each link: HBM, the scale-up fabric (NVLink), the scale-out network, the host link."""

    hbm: object
    scale_up: object
    scale_out: object
    host: object

    def by_name(self) -> dict:
        """{link name of `LINKS`: bytes}, the form `Results.bytes_by_link` publishes."""
        return {"hbm": self.hbm, "scale-up": self.scale_up, "scale-out": self.scale_out, "host": self.host}
