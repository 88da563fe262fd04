"""The memory wall over time, from the app's own presets: peak FLOP/s, HBM bandwidth and capacity, scale-up and
scale-out bandwidth per device against the release year (resources/hardware_years.toml), with the growth per
two years fitted by least squares on log10 values (factor = 10^(2 x slope)), next to Gholami et al. 2024's
published rates (3.0x FLOP/s, 1.6x DRAM bandwidth, 1.4x interconnect per two years); the ridge point's drift
(peak / HBM bandwidth) and the models' memory needs (weights + KV cache at CONTEXT tokens, batch 1, from
`evaluate` on a one-GPU decode scenario) against the devices' HBM capacity.

Only datacenter accelerators (kinds datacenter-gpu, datacenter-accelerator and tpu) enter the fits; laptops and consumer GPUs are a
different market line. A zero bandwidth (no scale-up fabric) is left out of that quantity's fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.inputs.presets import hardware_presets, model_presets, references
from trinity_desktop.model.inputs.scale_facts import growth_rates, model_year_sources, release_years
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import evaluate

QUANTITIES = ("peak_flops", "hbm_bw", "hbm_bytes", "scaleup_bw", "scaleout_bw")
LABELS = {"peak_flops": "Peak 16-bit FLOP/s", "hbm_bw": "HBM bandwidth", "hbm_bytes": "HBM capacity",
          "scaleup_bw": "Scale-up bandwidth", "scaleout_bw": "Scale-out bandwidth"}
PUBLISHED_KEY = {"peak_flops": "peak_flops", "hbm_bw": "dram_bandwidth", "scaleup_bw": "interconnect_bandwidth",
                 "scaleout_bw": "interconnect_bandwidth"}
FIT_KINDS = ("datacenter-gpu", "tpu", "datacenter-accelerator")
CONTEXT = 32768   # tokens of KV cache in the models' memory needs (a long-context request)


@dataclass(frozen=True)
class Growth:
    """A least-squares line through (year, log10 value): factor per two years, its points and the published
    factor to compare with (0 where none is published)."""

    quantity: str
    per_2y: float
    intercept: float      # log10 value at year 0 of the fit's line: log10 v = intercept + slope * year
    slope: float
    points: int
    published_per_2y: float

    def at(self, year):
        return 10.0 ** (self.intercept + self.slope * np.asarray(year, dtype=float))


@dataclass(frozen=True)
class DevicePoint:
    key: str
    name: str
    kind: str
    year: float
    values: dict          # quantity -> value (SI)
    ridge: float          # FLOP per byte of HBM traffic
    in_fit: bool


@dataclass(frozen=True)
class ModelNeed:
    key: str
    name: str
    year: float
    weights_bytes: float
    kv_bytes: float

    @property
    def total(self) -> float:
        return self.weights_bytes + self.kv_bytes


@dataclass(frozen=True)
class MemoryWall:
    devices: tuple[DevicePoint, ...]
    growth: dict           # quantity -> Growth, plus "ridge" and "model_memory"
    models: tuple[ModelNeed, ...]
    left_out: tuple[str, ...]   # hardware presets without a cited release year
    context: int


def fit_growth(years, values, quantity: str = "", published: float = 0.0) -> Growth:
    """Least squares of log10(values) on years: factor per two years 10^(2 slope) (needs two distinct years)."""
    x, y = np.asarray(years, dtype=float), np.log10(np.asarray(values, dtype=float))
    if x.size < 2 or np.ptp(x) == 0:
        return Growth(quantity, 1.0, float(y.mean()) if y.size else 0.0, 0.0, int(x.size), published)
    slope, intercept = np.polyfit(x, y, 1)
    return Growth(quantity, float(10.0 ** (2 * slope)), float(intercept), float(slope), int(x.size), published)


def _peak(hw) -> float:
    return hw.peak("bf16") if any(k in hw.peak_flops for k in ("bf16", "fp16")) else max(hw.peak_flops.values())


def model_needs(context: int = CONTEXT) -> tuple[ModelNeed, ...]:
    """Weights + KV cache (bf16, batch 1, `context` tokens) of the dated model presets, from `evaluate`."""
    hw, models, refs = hardware_presets()["h100-sxm"], model_presets(), references()
    out = []
    for key, ref in model_year_sources().items():
        if key not in models or ref not in refs:
            continue
        arch = models[key]
        gen = min(512, context // 2)
        r = evaluate(Scenario(hardware=hw, model=arch, kind="decode", gpus=1, gpus_per_node=1, batch=1,
                              prompt_len=context - gen, gen_len=gen))
        out.append(ModelNeed(key, arch.name, float(refs[ref].year) + 0.5, float(r.memory.get("weights", 0.0)),
                             float(r.memory.get("kv_cache", 0.0))))
    return tuple(sorted(out, key=lambda m: m.year))


def memory_wall(context: int = CONTEXT) -> MemoryWall:
    years, presets, rates = release_years(), hardware_presets(), growth_rates()
    devices = []
    for key, hw in presets.items():
        if key not in years:
            continue
        values = {"peak_flops": _peak(hw), "hbm_bw": hw.hbm_bw, "hbm_bytes": hw.hbm_bytes,
                  "scaleup_bw": hw.scaleup_bw, "scaleout_bw": hw.scaleout_bw}
        devices.append(DevicePoint(key, hw.name, hw.kind, years[key].year, values, values["peak_flops"] / hw.hbm_bw,
                                   hw.kind in FIT_KINDS))
    devices.sort(key=lambda d: d.year)
    fit = [d for d in devices if d.in_fit]
    growth = {}
    for q in QUANTITIES:
        pts = [(d.year, d.values[q]) for d in fit if d.values[q] > 0]
        published = getattr(rates, PUBLISHED_KEY[q]) if q in PUBLISHED_KEY else 0.0
        growth[q] = fit_growth([p[0] for p in pts], [p[1] for p in pts], q, published)
    growth["ridge"] = fit_growth([d.year for d in fit], [d.ridge for d in fit], "ridge",
                                 rates.peak_flops / rates.dram_bandwidth)
    models = model_needs(context)
    growth["model_memory"] = fit_growth([m.year for m in models], [m.total for m in models], "model_memory")
    left_out = tuple(k for k in presets if k not in years)
    return MemoryWall(tuple(devices), growth, models, left_out, context)


def open_question_4(wall: MemoryWall) -> str:
    """Open question 4 of the synthesis seed, answered with the presets' numbers."""
    g = wall.growth
    newest_year = max(m.year for m in wall.models)
    biggest = max((m for m in wall.models if m.year == newest_year), key=lambda m: m.total)
    newest = max((d for d in wall.devices if d.in_fit), key=lambda d: d.year)
    cap = max(d.values["hbm_bytes"] for d in wall.devices if d.in_fit)
    capacity_behind = g["model_memory"].per_2y > g["hbm_bytes"].per_2y
    bandwidth_behind = g["peak_flops"].per_2y > g["hbm_bw"].per_2y
    verdict = {(True, True): "Memory falls further behind on both capacity and bandwidth",
               (True, False): "Capacity falls behind the models while bandwidth keeps pace with compute",
               (False, True): "Capacity keeps pace with the models while bandwidth falls behind compute",
               (False, False): "Memory keeps pace on these presets"}[(capacity_behind, bandwidth_behind)]
    return (f"On the app's datacenter presets ({wall.devices[0].year:.0f}-{newest.year:.0f}), peak FLOP/s grows "
            f"{g['peak_flops'].per_2y:.2f}× per two years, HBM bandwidth {g['hbm_bw'].per_2y:.2f}× and HBM capacity "
            f"{g['hbm_bytes'].per_2y:.2f}×, while the dated models' weights + {wall.context // 1024}k-token KV grow "
            f"{g['model_memory'].per_2y:.2f}×: the ridge point climbs {g['ridge'].per_2y:.2f}× per two years (to "
            f"{newest.ridge:.0f} FLOP/B on {newest.name}), and {biggest.name} needs {biggest.total / cap:.1f}× the "
            f"largest device's {cap / 1e9:.0f} GB. {verdict}: state has to spread over more devices (parallelism, "
            "offload, compression) or move to new memory tiers.")
