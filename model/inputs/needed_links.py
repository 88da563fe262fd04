"""What a scenario's options need from the hardware: the one home of the "needs a link" rules.

A hardware value left out of a preset or user file is explicitly absent (`Hardware.absent`, 0 in the field):
an option that moves bytes over it is refused here with the missing field's name, never computed as free (an
offload over an absent host link moved 4 GB per step in 0 s):

- optimizer or activation offload (ZeRO-Offload, vDNN) and NVMe offload (ZeRO-Infinity) need the host link;
  NVMe offload also needs the local NVMe bandwidth;
- offloading part of the KV cache (FlexGen) needs the host link (a CXL pool hangs off it too) and, for a CXL
  target, a CXL pool in memory_tiers.toml (Pond). Both are refused for every workload kind, since the residency and
  roofline views serve a training scenario as decode (`kv_residency.serving_scenario`) and place its KV cache whatever
  the kind (a training step with a KV share on a device without a host link raised from those views).

Scenario validation calls `check_needed_links` once, after its layout rules.
"""

from __future__ import annotations

from trinity_desktop.model.base.errors import MissingLinkError

HOST_OFFLOADS = ("optimizer", "activations", "nvme")


def check_needed_links(scenario) -> None:
    """Raise MissingLinkError naming the option and the hardware field it lacks; None when all are present."""
    hw = scenario.hardware
    if scenario.kind == "train" and scenario.offload in HOST_OFFLOADS:
        if hw.absent("host_link_bw"):
            _refuse("offload", scenario.offload, "none", "host_link_bw", f"{hw.name} has no host link")
        if scenario.offload == "nvme" and hw.absent("nvme_bw"):
            _refuse("offload", scenario.offload, "none, optimizer or activations", "nvme_bw",
                    f"{hw.name} has no local NVMe")
    if scenario.kv_offload_fraction > 0 and hw.absent("host_link_bw"):
        _refuse("kv_offload_fraction", scenario.kv_offload_fraction, "0", "host_link_bw",
                f"{hw.name} has no host link to offload the KV cache over")
    if scenario.kv_offload_tier == "cxl":
        from trinity_desktop.model.inputs.tiers import (
            tier_map,  # reads the tier presets: imported when needed
        )

        if "cxl" not in tier_map(hw):
            why = f"{hw.name} has no CXL memory pool in memory_tiers.toml"
            raise MissingLinkError("kv_offload_tier", "cxl", f"host ({why})", "cxl tier", why)


def _refuse(field: str, value: object, allowed: str, missing: str, lacks: str):
    """"<allowed> (<device> has no <link>: <field> is absent)", typed with the absent field."""
    why = f"{lacks}: {missing} is absent"
    raise MissingLinkError(field, value, f"{allowed} ({why})", missing, why)
