"""Split computing between an edge device and the cloud (Neurosurgeon, Kang et al. 2017, `neurosurgeon`).

A network of N layers can be cut after layer k, k = 0..N: the device runs layers 1..k, sends layer k's output
activation over the uplink, and a cloud GPU runs layers k+1..N. k = 0 is all-cloud (the input is sent);
k = N is all-device (nothing is sent). For each split point:

* device time = Σ_{i≤k} roofline_i on the device, roofline_i = max(FLOPs_i / (peak · eff · speed),
  weight bytes_i / (memory B/s · eff · speed)) (Williams et al. 2009, inference.py's `_roofline`); `speed`
  scales the device (the panel's device-speed slider);
* transfer time = RTT + bytes_k / uplink for k < N, 0 for k = N: one request/response round trip; the result
  download (a label or a token) is neglected. bytes_k = input bytes (k = 0) or the activation elements × the
  activation format's bytes (fp32 4, fp16 2, int8 1), divided by a compression ratio;
* cloud time = Σ_{i>k} roofline_i on the cloud GPU (batch 1, same efficiencies);
* end-to-end latency = device + transfer + cloud (sequential, as in Neurosurgeon);
* device energy = P_device · device time + P_radio · bytes_k / uplink (the mobile side only, as Neurosurgeon
  counts it; radio tail energy, idle power while waiting and the download are not counted).

Every function broadcasts: uplink, RTT, device speed and compression may be arrays; split points are the
last axis. `optimal_split` picks the split minimising latency or device energy, as Neurosurgeon does.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.layer_profiles import LayerProfile, edge_document, profile
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.presets import (
    PresetError,
    _number,
    find,
    hardware_from_dict,
    hardware_presets,
)
from trinity_desktop.model.inputs.scenario import Efficiency
from trinity_desktop.model.step.inference import _roofline

ACTIVATION_BYTES = {"fp32": 4.0, "fp16": 2.0, "int8": 1.0}
OBJECTIVES = ("latency", "energy")
DEFAULT_CLOUD = "h100-sxm"


@dataclass(frozen=True)
class EdgeDevice:
    """A device that runs the first layers: its Hardware (peaks, memory, bandwidth) and its active power."""

    key: str
    name: str
    kind: str
    hardware: Hardware
    power_w: float
    power_source: str = ""
    power_note: str = ""


@dataclass(frozen=True)
class Network:
    """The device's uplink to the cloud: bytes/s, round-trip time, and radio power while sending."""

    key: str
    name: str
    uplink_bytes_per_s: float
    rtt_s: float
    radio_power_w: float
    sources: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def energy_per_byte(self, uplink_bytes_per_s=None):
        """Radio energy per byte sent, J/B = P_radio / uplink (broadcasts over uplink arrays)."""
        bw = self.uplink_bytes_per_s if uplink_bytes_per_s is None else np.asarray(uplink_bytes_per_s, dtype=float)
        return self.radio_power_w / bw


@cache
def edge_devices() -> dict[str, EdgeDevice]:
    """Devices of resources/edge.toml; `hardware = "<key>"` entries reuse hardware.toml presets."""
    out = {}
    for i, entry in enumerate(edge_document().get("device", [])):
        where = f"edge.toml [device {entry.get('key', i + 1)}]"
        hw = entry.get("hardware")
        if isinstance(hw, str):
            if hw not in hardware_presets():
                raise PresetError(where, "hardware", f"{hw!r} is not a hardware.toml key")
            hardware = hardware_presets()[hw]
        elif isinstance(hw, dict):
            hardware = hardware_from_dict(hw, where)
        else:
            raise PresetError(where, "hardware", "a hardware.toml key or a [device.hardware] table")
        power, source, _, note = _number(where, "power_w", entry.get("power_w"))
        if power <= 0:
            raise PresetError(where, "power_w", "must be > 0")
        out[entry["key"]] = EdgeDevice(key=entry["key"], name=entry.get("name", entry["key"]),
                                       kind=entry.get("kind", hardware.kind), hardware=hardware, power_w=power,
                                       power_source=source, power_note=note)
    return out


@cache
def networks() -> dict[str, Network]:
    """Networks of resources/edge.toml (3G, 4G, 5G, Wi-Fi, Ethernet)."""
    out = {}
    for i, entry in enumerate(edge_document().get("network", [])):
        where = f"edge.toml [network {entry.get('key', i + 1)}]"
        vals, sources, notes = {}, [], []
        for name in ("uplink_bytes_per_s", "rtt_s", "radio_power_w"):
            value, source, _, note = _number(where, name, entry.get(name))
            vals[name] = value
            sources.append(source)
            notes.append(note)
        if vals["uplink_bytes_per_s"] <= 0:
            raise PresetError(where, "uplink_bytes_per_s", "must be > 0")
        out[entry["key"]] = Network(key=entry["key"], name=entry.get("name", entry["key"]), **vals,
                                    sources=tuple(sources), notes=tuple(notes))
    return out


def _positive(name, value, lo, hi):
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any(arr < lo) or np.any(arr > hi):
        raise ValidationError(name, value, f"a number from {lo:g} to {hi:g}")
    return arr


def layer_times(prof: LayerProfile, hw: Hardware, eff: Efficiency, speed=1.0, weight_bytes: float = 2.0):
    """Roofline time of each layer on `hw` (16-bit peak), scaled by `speed`; layers on the last axis."""
    speed = np.asarray(speed, dtype=float)[..., None]
    peak = hw.peak("bf16") * eff.compute * speed
    bw = hw.hbm_bw * eff.hbm * speed
    t, _, _ = _roofline(prof.flops, prof.params * weight_bytes, peak, bw)
    return t


def sent_bytes(prof: LayerProfile, activation: str = "fp16", compression=1.0):
    """Bytes sent at each split point k = 0..N (last axis): input, then layer k's output, 0 at k = N.
    The activation format sets bytes per element (int8 = quantised to 8 bits); `compression` divides all."""
    if activation not in ACTIVATION_BYTES:
        raise ValidationError("activation", activation, "one of " + ", ".join(ACTIVATION_BYTES))
    comp = _positive("compression", compression, 1.0, 1e4)[..., None]
    raw = np.concatenate([[prof.input_bytes], prof.out_elements[:-1] * ACTIVATION_BYTES[activation], [0.0]])
    return raw / comp


def split_table(prof: LayerProfile, device: EdgeDevice, network: Network, cloud: Hardware | None = None, *,
                uplink_bytes_per_s=None, rtt_s=None, device_speed=1.0, activation: str = "fp16",
                compression=1.0, weight_bytes: float = 2.0, efficiency: Efficiency | None = None) -> dict:
    """Device, transfer and cloud time, latency and device energy for every split point (last axis).

    uplink_bytes_per_s / rtt_s default to the network's values; they, device_speed and compression may be
    arrays and broadcast together in front of the split axis. Returns arrays keyed device_s, transfer_s,
    cloud_s, total_s, energy_j, compute_energy_j, radio_energy_j, sent_bytes, device_weight_bytes,
    device_fits (device's share of the weights fits its memory), plus split names.
    """
    cloud = cloud if cloud is not None else hardware_presets()[DEFAULT_CLOUD]
    eff = efficiency or Efficiency()
    bw = _positive("uplink_bytes_per_s", network.uplink_bytes_per_s if uplink_bytes_per_s is None
                   else uplink_bytes_per_s, 1.0, 1e12)[..., None]
    rtt = _positive("rtt_s", network.rtt_s if rtt_s is None else rtt_s, 0.0, 60.0)[..., None]
    speed = _positive("device_speed", device_speed, 0.01, 100.0)
    wb = float(_positive("weight_bytes", weight_bytes, 0.125, 4.0))
    n = prof.layers
    t_dev = layer_times(prof, device.hardware, eff, speed, wb)
    t_cloud = layer_times(prof, cloud, eff, 1.0, wb)
    zero = np.zeros(t_dev.shape[:-1] + (1,))
    device_s = np.concatenate([zero, np.cumsum(t_dev, axis=-1)], axis=-1)
    cloud_cum = np.concatenate([[0.0], np.cumsum(t_cloud[..., :])])
    cloud_s = cloud_cum[-1] - cloud_cum  # layers k+1..N
    nbytes = sent_bytes(prof, activation, compression)
    offload = np.arange(n + 1) < n
    upload_s = nbytes / bw
    transfer_s = np.where(offload, rtt + upload_s, 0.0)
    shape = np.broadcast_shapes(device_s.shape, transfer_s.shape, np.shape(cloud_s))
    device_s, transfer_s, cloud_s = (np.broadcast_to(x, shape) for x in (device_s, transfer_s, cloud_s))
    compute_energy = device.power_w * device_s
    radio_energy = np.broadcast_to(np.where(offload, network.radio_power_w * upload_s, 0.0), shape)
    weights_dev = np.concatenate([[0.0], np.cumsum(prof.params)]) * wb
    return {
        "names": split_names(prof),
        "device_s": device_s, "transfer_s": transfer_s, "cloud_s": cloud_s,
        "total_s": device_s + transfer_s + cloud_s,
        "compute_energy_j": compute_energy, "radio_energy_j": radio_energy,
        "energy_j": compute_energy + radio_energy,
        "sent_bytes": np.broadcast_to(nbytes, np.broadcast_shapes(np.shape(nbytes), (n + 1,))),
        "device_weight_bytes": weights_dev,
        "device_fits": weights_dev <= device.hardware.hbm_bytes,
    }


def split_names(prof: LayerProfile) -> tuple[str, ...]:
    n = prof.layers
    return ("all cloud (send input)", *(f"after {name}" for name in prof.layer_names[:-1]),
            f"all device ({prof.layer_names[n - 1]} on device)")


def optimal_split(table: dict, objective: str = "latency"):
    """Index of the split minimising end-to-end latency or device energy (Neurosurgeon), per broadcast cell.
    Ties go to the lower index (more work in the cloud)."""
    if objective not in OBJECTIVES:
        raise ValidationError("objective", objective, "latency or energy")
    key = "total_s" if objective == "latency" else "energy_j"
    return np.argmin(table[key], axis=-1)


def lookup(model: str, device: str, network: str, cloud: str = DEFAULT_CLOUD, tokens: int = 512):
    """(profile, EdgeDevice, Network, cloud Hardware) by key or name (case-insensitive)."""
    return (profile(model, tokens), find(edge_devices(), device, "device"), find(networks(), network, "network"),
            find(hardware_presets(), cloud, "cloud"))


def split_json(model: str, device: str, network: str, objective: str = "latency") -> dict:
    """The CLI's `calc split --json` payload: split_points [{index, name, device_s, transfer_s, cloud_s,
    total_s, energy_j}], optimal_index, all_device_s, all_cloud_s (SI: seconds, joules)."""
    prof, dev, net, cloud = lookup(model, device, network)
    t = split_table(prof, dev, net, cloud)
    best = int(optimal_split(t, objective))
    points = [{"index": k, "name": t["names"][k], "device_s": float(t["device_s"][k]),
               "transfer_s": float(t["transfer_s"][k]), "cloud_s": float(t["cloud_s"][k]),
               "total_s": float(t["total_s"][k]), "energy_j": float(t["energy_j"][k])}
              for k in range(prof.layers + 1)]
    return {"split_points": points, "optimal_index": best, "all_device_s": float(t["total_s"][-1]),
            "all_cloud_s": float(t["total_s"][0])}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g} ms"


def split_summary(model: str, device: str, network: str, objective: str = "latency") -> str:
    """A few lines of text for the CLI: where to split, and why (latency parts and energy at the optimum)."""
    prof, dev, net, cloud = lookup(model, device, network)
    t = split_table(prof, dev, net, cloud)
    k = int(optimal_split(t, objective))
    n = prof.layers
    where = "all cloud" if k == 0 else "all device" if k == n else f"split after {prof.layer_names[k - 1]}"
    lines = [
        f"{prof.name} on {dev.name} over {net.name} (uplink {net.uplink_bytes_per_s * 8 / 1e6:.3g} Mbit/s, "
        f"RTT {_ms(net.rtt_s)}), cloud {cloud.name}; objective: {objective}",
        f"Optimum: {where} (split point {k} of {n})",
        f"  latency {_ms(t['total_s'][k])} = device {_ms(t['device_s'][k])} + transfer {_ms(t['transfer_s'][k])} "
        f"({t['sent_bytes'][k] / 1e3:.4g} kB) + cloud {_ms(t['cloud_s'][k])}; device energy "
        f"{t['energy_j'][k] * 1e3:.3g} mJ",
        f"  all device: {_ms(t['total_s'][-1])}, {t['energy_j'][-1] * 1e3:.3g} mJ; "
        f"all cloud: {_ms(t['total_s'][0])}, {t['energy_j'][0] * 1e3:.3g} mJ",
        f"Energy model: {dev.power_w:g} W device power x device time + {net.radio_power_w:g} W radio power x "
        "upload time (tail, idle and download not counted).",
    ]
    return "\n".join(lines)
