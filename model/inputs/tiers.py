"""Memory tiers of one device, fastest first: on-chip SRAM, HBM, host DRAM, a CXL pool, remote memory over
RDMA and NVMe SSD, each with a capacity, a bandwidth and a latency, and the source of each.

Values that hardware.toml already holds are read from `hardware_presets()` (HBM capacity and bandwidth, SRAM
and L2 capacity, host DRAM capacity, the host link, NVMe bandwidth, the scale-out link); only the extra tier
facts (SRAM bandwidth, latencies, CXL, SSD and remote capacities) live in resources/memory_tiers.toml. A
device without a tier simply lacks it (laptops: no CXL, no RDMA). Capacities are per GPU (the per-GPU share of
host DRAM, CXL and SSD); bandwidths are per direction as seen from the GPU.

Host DRAM is reached over the host link (pcie-spec); the CXL pool over PCIe 5.0 x16 lanes, 63 GB/s per
direction (pcie-spec), at 2-5x local DRAM latency (cxl-2405.14209, weak: an assumption, status A); remote
memory over the scale-out NIC (infiniband-ndr). The SSD tier's page cache lives in host DRAM and is counted
there.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType

from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.presets import (
    PresetError,
    _number,
    _resource_text,
    hardware_presets,
    read_toml,
)

TIER_NAMES = ("sram", "hbm", "host", "cxl", "rdma", "ssd")
TIER_LABELS = {"sram": "On-chip SRAM", "hbm": "HBM", "host": "Host DRAM", "cxl": "CXL pool",
               "rdma": "Remote memory (RDMA)", "ssd": "NVMe SSD"}
DEVICE_MEMORY_LABELS = {"consumer-gpu": "GPU memory (GDDR)", "laptop-soc": "Unified memory",
                        "laptop-cpu": "System DRAM"}
EXTRA_KEYS = ("sram_bw", "sram_latency_s", "hbm_latency_s", "host_latency_s", "cxl_bytes", "cxl_bw",
              "cxl_latency_s", "ssd_bytes", "ssd_latency_s", "rdma_bytes", "rdma_latency_s")
PAGING_KEYS = ("page_tokens", "local_dram_latency_s", "cxl_latency_factor")
FILE = "memory_tiers.toml"


@dataclass(frozen=True)
class Tier:
    """One memory tier: capacity (bytes, per GPU), bandwidth (bytes/s per direction, seen from the GPU),
    latency (s per access / page), and `source`: {"capacity"|"bandwidth"|"latency": references.toml key}."""

    name: str
    capacity_bytes: float
    bandwidth: float
    latency_s: float
    source: Mapping[str, str] = field(default_factory=dict)
    status: Mapping[str, str] = field(default_factory=dict)
    note: Mapping[str, str] = field(default_factory=dict)
    label: str = ""

    def __post_init__(self):
        for name in ("source", "status", "note"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))
        if not self.label:
            object.__setattr__(self, "label", TIER_LABELS.get(self.name, self.name))


@dataclass(frozen=True)
class _Fact:
    value: float
    source: str
    status: str
    note: str


def _facts(entry: Mapping, where: str, keys) -> dict[str, _Fact]:
    out = {}
    for key in keys:
        if key in entry:
            out[key] = _Fact(*_number(where, key, entry[key]))
    return out


@cache
def _tier_file() -> tuple[dict[str, _Fact], dict[str, dict[str, _Fact]]]:
    doc = read_toml(FILE, _resource_text(FILE))
    paging = _facts(doc.get("paging", {}), f"{FILE} [paging]", PAGING_KEYS)
    missing = set(PAGING_KEYS) - set(paging)
    if missing:
        raise PresetError(f"{FILE} [paging]", sorted(missing)[0], "is required")
    raw = {}
    for i, entry in enumerate(doc.get("tiers", [])):
        where = f"{FILE} #{i + 1} [{entry.get('hardware', 'unnamed')}]"
        unknown = set(entry) - set(EXTRA_KEYS) - {"hardware", "inherit"}
        if unknown:
            raise PresetError(where, sorted(unknown)[0], "is not a tier key (known: " + ", ".join(EXTRA_KEYS) + ")")
        raw[str(entry["hardware"])] = (entry, where)
    resolved: dict[str, dict[str, _Fact]] = {}

    def resolve(key: str, depth: int = 0) -> dict[str, _Fact]:
        if key in resolved:
            return resolved[key]
        entry, where = raw[key]
        base = {}
        if "inherit" in entry:
            parent = str(entry["inherit"])
            if parent not in raw or depth > 8:
                raise PresetError(where, "inherit", f"names no usable entry: {parent!r}")
            base = dict(resolve(parent, depth + 1))
        base.update(_facts(entry, where, EXTRA_KEYS))
        resolved[key] = base
        return base

    for key in raw:
        resolve(key)
    return paging, resolved


def page_tokens() -> int:
    """Tokens per KV page: vLLM's default block size, 16 (vllm)."""
    return int(_tier_file()[0]["page_tokens"].value)


def _hw_fact(hw: Hardware, key: str) -> tuple[str, str, str]:
    return hw.sources.get(key, ""), hw.status.get(key, ""), hw.notes.get(key, "")


def tiers_for(hardware: Hardware | str) -> tuple[Tier, ...]:
    """The memory tiers of one device, fastest first (bandwidth descending, then latency ascending).

    A tier exists when its capacity and bandwidth are both > 0. Hardware not listed in memory_tiers.toml
    (a user file) gets the tiers hardware.toml describes (HBM, host DRAM, SSD) with no latency facts (0 s).
    """
    hw = hardware_presets()[hardware] if isinstance(hardware, str) else hardware
    paging, per_hw = _tier_file()
    extra = per_hw.get(hw.key, {})

    def x(key: str) -> _Fact:
        return extra.get(key, _Fact(0.0, "", "", ""))

    def tier(name, cap, cap_key, bw, bw_key, lat: _Fact, label="") -> Tier | None:
        if not (cap > 0 and bw > 0):
            return None
        (cs, cst, cn), (bs, bst, bn) = cap_key, bw_key
        return Tier(name, float(cap), float(bw), float(lat.value),
                    source={"capacity": cs, "bandwidth": bs, "latency": lat.source},
                    status={"capacity": cst, "bandwidth": bst, "latency": lat.status},
                    note={"capacity": cn, "bandwidth": bn, "latency": lat.note}, label=label)

    def f(fact: _Fact) -> tuple[str, str, str]:
        return fact.source, fact.status, fact.note

    sram_cap_src = _hw_fact(hw, "sram_bytes") if hw.sram_bytes else _hw_fact(hw, "l2_bytes")
    sram_cap_src = (sram_cap_src[0], sram_cap_src[1], "L1/shared memory plus L2 (both on-chip SRAM)")
    cxl_lat = x("cxl_latency_s")
    if cxl_lat.value == 0 and x("cxl_bytes").value > 0:
        factor, local = paging["cxl_latency_factor"], paging["local_dram_latency_s"]
        host = x("host_latency_s").value
        cxl_lat = _Fact(host + (factor.value - 1.0) * local.value, factor.source, "A",
                        f"host-memory access ({host * 1e6:.3g} us) + ({factor.value:g} - 1) x "
                        f"{local.value * 1e9:.0f} ns local DRAM: {factor.note}")
    rdma_lat = x("rdma_latency_s")
    if rdma_lat.value == 0:
        rdma_lat = _Fact(hw.scaleout_latency_s, *_hw_fact(hw, "scaleout_latency_s"))
    candidates = [
        tier("sram", hw.sram_bytes + hw.l2_bytes, sram_cap_src, x("sram_bw").value, f(x("sram_bw")),
             x("sram_latency_s")),
        tier("hbm", hw.hbm_bytes, _hw_fact(hw, "hbm_bytes"), hw.hbm_bw, _hw_fact(hw, "hbm_bw"),
             x("hbm_latency_s"), DEVICE_MEMORY_LABELS.get(hw.kind, "HBM")),
        tier("host", hw.host_dram_bytes, _hw_fact(hw, "host_dram_bytes"), hw.host_link_bw,
             _hw_fact(hw, "host_link_bw"), x("host_latency_s")),
        tier("cxl", x("cxl_bytes").value, f(x("cxl_bytes")), min(x("cxl_bw").value, hw.host_link_bw),
             f(x("cxl_bw")), cxl_lat),
        tier("rdma", x("rdma_bytes").value, f(x("rdma_bytes")), hw.scaleout_bw, _hw_fact(hw, "scaleout_bw"),
             rdma_lat),
        tier("ssd", x("ssd_bytes").value, f(x("ssd_bytes")), hw.nvme_bw, _hw_fact(hw, "nvme_bw"),
             x("ssd_latency_s")),
    ]
    tiers = [t for t in candidates if t is not None]
    order = {name: i for i, name in enumerate(TIER_NAMES)}
    return tuple(sorted(tiers, key=lambda t: (-t.bandwidth, t.latency_s, order[t.name])))


def tier_map(hardware: Hardware | str) -> dict[str, Tier]:
    """{name: Tier} of `tiers_for(hardware)`."""
    return {t.name: t for t in tiers_for(hardware)}
