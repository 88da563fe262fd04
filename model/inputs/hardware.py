"""An accelerator and the links around it. Every value is SI (bytes, bytes/s, FLOP/s, seconds)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.base.ranges import HARDWARE_RULES, check_all
from trinity_desktop.model.inputs.text_guard import NAME, NOTE, check_text

LINKS = ("scale-up", "scale-out", "host", "hbm")
# Optional values: a preset or user file may leave them out, and then they are explicitly absent (0 here). An
# option that needs one is refused by name (inputs/needed_links.py); a panel draws "not available on this
# hardware".
OPTIONAL = ("sram_bytes", "sram_per_core_bytes", "l2_bytes", "scaleup_bw", "scaleup_latency_s", "host_link_bw",
            "host_dram_bytes", "scaleout_bw", "scaleout_latency_s", "nvme_bw")


@dataclass(frozen=True)
class Hardware:
    """One device: dense peak FLOP/s per format, its memory, and its links (bandwidth per direction)."""

    key: str
    name: str
    vendor: str
    kind: str
    peak_flops: Mapping[str, float]
    hbm_bytes: float
    hbm_bw: float
    sram_bytes: float = 0.0
    sram_per_core_bytes: float = 0.0
    l2_bytes: float = 0.0
    scaleup_name: str = "none"
    scaleup_bw: float = 0.0
    scaleup_latency_s: float = 0.0
    host_link_name: str = "PCIe"
    host_link_bw: float = 0.0
    host_dram_bytes: float = 0.0
    scaleout_name: str = "none"
    scaleout_bw: float = 0.0
    scaleout_latency_s: float = 0.0
    nvme_bw: float = 0.0
    gpus_per_node_default: int = 1
    tdp_w: float = 0.0  # board power (TDP), watts; 0 = not published (model/views/cost.py, #23)
    sources: Mapping[str, str] = field(default_factory=dict)
    status: Mapping[str, str] = field(default_factory=dict)
    notes: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        for name in ("key", "name", "vendor", "kind", "scaleup_name", "host_link_name", "scaleout_name"):
            check_text(f"{self.key if name != 'key' else 'hardware'}.{name}", getattr(self, name), NAME)
        object.__setattr__(self, "peak_flops", MappingProxyType(dict(self.peak_flops)))
        for name in ("sources", "status", "notes"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
            for k, v in getattr(self, name).items():
                check_text(f"{self.key}.{name}", k, NAME)
                check_text(f"{self.key}.{name}.{k}", v, NOTE)
        for name in ("hbm_bytes", "hbm_bw"):
            if not getattr(self, name) > 0:
                raise ValidationError(f"{self.key}.{name}", getattr(self, name), "a positive number")
        if not self.peak_flops or min(self.peak_flops.values()) <= 0:
            raise ValidationError(f"{self.key}.peak_flops", dict(self.peak_flops), "positive dense FLOP/s per format")
        if not {"bf16", "fp16"} & set(self.peak_flops):  # the 16-bit peak every view and default precision uses
            raise ValidationError(f"{self.key}.peak_flops", ", ".join(self.peak_flops),
                                  "a bf16 or fp16 dense peak among the formats")
        check_all(self, f"{self.key}.", HARDWARE_RULES)

    def absent(self, name: str) -> bool:
        """Whether an optional value (OPTIONAL) was left out of this hardware's file: its field is 0."""
        if name not in OPTIONAL:
            raise KeyError(f"{name} is not an optional hardware value (one of {', '.join(OPTIONAL)})")
        return not getattr(self, name) > 0

    def peak(self, dtype: str) -> float:
        """Dense peak FLOP/s for a format; fp16 and bf16 stand in for each other (same tensor-core rate)."""
        for candidate in (dtype, {"bf16": "fp16", "fp16": "bf16", "tf32": "fp32"}.get(dtype, dtype)):
            if candidate in self.peak_flops:
                return float(self.peak_flops[candidate])
        raise ValidationError("precision", dtype, f"a format {self.name} has a published peak for: "
                              + ", ".join(self.peak_flops))

    def ridge_point(self, dtype: str = "bf16") -> float:
        """Roofline ridge point, FLOP per byte of HBM traffic: peak / bandwidth (Williams et al. 2009)."""
        return self.peak(dtype) / self.hbm_bw
