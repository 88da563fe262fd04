"""The workload library: named scenarios (resources/workloads.toml) evaluated on any chosen hardware.

The heatmap and the triangle show the same `Results.pressure` for each row; nothing is typed in.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets, workload_library
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import Results, evaluate

_DESCRIPTIVE = {"key", "name", "description", "model", "source", "hardware"}
_SCENARIO_FIELDS = {f.name for f in fields(Scenario)} - {"hardware", "model", "efficiency", "techniques"}


@dataclass(frozen=True)
class WorkloadRow:
    key: str
    name: str
    description: str
    scenario: Scenario | None
    results: Results | None
    error: str = ""


def workload_scenario(entry: dict, hardware: Hardware, base: Scenario | None = None) -> Scenario:
    """Build the Scenario a library entry describes, on `hardware` (or the entry's own `hardware`, for
    workloads pinned to a device such as on-device inference), keeping `base`'s efficiency. GPUs per node
    are the hardware's `gpus_per_node_default` (an 8-GPU DGX node, a 4-chip TPU v5p host), not the entry's."""
    unknown = set(entry) - _DESCRIPTIVE - _SCENARIO_FIELDS
    if unknown:
        raise ValidationError(f"workload {entry.get('key')}", sorted(unknown), "Scenario field names")
    model = model_presets()[entry["model"]]
    if "hardware" in entry:
        hardware = hardware_presets()[entry["hardware"]]
    values = {k: v for k, v in entry.items() if k in _SCENARIO_FIELDS}
    if "hardware" not in entry:  # the node size belongs to the hardware the library is shown on
        values["gpus_per_node"] = hardware.gpus_per_node_default
    if base is not None:
        values["efficiency"] = base.efficiency
    return Scenario(hardware=hardware, model=model, **values)


_last: tuple | None = None  # ((hardware, efficiency), rows) of the latest call: the heatmap and triangle share it


def evaluate_library(hardware: Hardware, base: Scenario | None = None) -> list[WorkloadRow]:
    """Every library workload on `hardware`; a workload the hardware cannot run carries the reason.

    The rows depend only on the hardware and the base scenario's efficiency; the latest result is kept, so
    several panels showing the library evaluate it once per change of either."""
    global _last
    memo = (hardware, base.efficiency if base is not None else None)
    if _last is not None and _last[0] == memo:
        return list(_last[1])
    rows = []
    for key, entry in workload_library().items():
        try:
            sc = workload_scenario(entry, hardware, base)
            rows.append(WorkloadRow(key, entry["name"], entry.get("description", ""), sc, evaluate(sc)))
        except ValidationError as exc:
            rows.append(WorkloadRow(key, entry["name"], entry.get("description", ""), None, None, str(exc)))
    _last = (memo, tuple(rows))
    return rows
