"""Edge-cloud routing: a share r of queries answered on the device by a small model, the rest in the cloud by a
large one (open question 3 of the synthesis seed).

Per query (prompt P tokens, G generated): device latency t_d = the core's request time of the small model on the
edge device; cloud latency t_c = RTT + P·b / uplink + the core's request time of the large model on the cloud
hardware at the serving batch (b = bytes of prompt text per token, a stated assumption; the answer's download
is not counted). Expected latency L(r) = r·t_d + (1 − r)·t_c. Cost: cloud GPU-seconds per query =
(1 − r)·request_s·GPUs / batch, and device energy r·P_device·t_d. Quality kept Q(r), as a fraction of the large
model's, joins the published router results of resources/routing.toml with straight lines from (0, 1); r beyond
the last published point is not drawn. Everything broadcasts over r.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.presets import (
    _resource_text,
    find,
    hardware_presets,
    model_presets,
    read_toml,
)
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import evaluate
from trinity_desktop.model.views.split import edge_devices, networks

BYTES_PER_TOKEN_TEXT = 4.0   # assumed: ~4 bytes of UTF-8 text per BPE token of English prompt
CLOUD_BATCH = 32             # assumed serving batch of the cloud replica
QUALITY_TARGET = 0.95
CLOUD_KINDS = ("datacenter-gpu", "tpu")   # hardware a scenario must run on to be the cloud side


@dataclass(frozen=True)
class RouterPoint:
    share_small: float
    quality: float
    label: str
    source: str
    note: str


@dataclass(frozen=True)
class Routing:
    """r, Q(r), L(r) (s), cloud GPU-seconds and device energy (J) per query, the two ends' latencies, and r*:
    the largest share on device whose quality stays at the target."""

    r: np.ndarray
    quality: np.ndarray
    latency_s: np.ndarray
    cloud_gpu_s: np.ndarray
    device_energy_j: np.ndarray
    device_s: float
    cloud_s: float
    network_s: float
    best_r: float
    target: float
    device_scenario: Scenario
    cloud_scenario: Scenario
    points: tuple[RouterPoint, ...]


@cache
def router_points() -> tuple[RouterPoint, ...]:
    doc = read_toml("routing.toml", _resource_text("routing.toml"))
    return tuple(sorted((RouterPoint(float(p["share_small"]), float(p["quality"]), p["label"], p["source"],
                                     p["note"]) for p in doc["point"]), key=lambda p: p.share_small))


def quality_kept(r) -> np.ndarray:
    """Q(r) through (0, 1) and the published points; r beyond the last point is refused."""
    pts = router_points()
    r = np.asarray(r, dtype=float)
    if np.any(r < 0) or np.any(r > pts[-1].share_small + 1e-12):
        raise ValidationError("r", float(np.max(r)), f"a share from 0 to {pts[-1].share_small:g} (published points)")
    return np.interp(r, [0.0, *(p.share_small for p in pts)], [1.0, *(p.quality for p in pts)])


def largest_share(target: float) -> float:
    """The largest r with Q(r) >= target, exactly on the piecewise-linear Q (non-increasing)."""
    rs = [0.0, *(p.share_small for p in router_points())]
    qs = [1.0, *(p.quality for p in router_points())]
    best = 0.0
    for r0, r1, q0, q1 in zip(rs, rs[1:], qs, qs[1:], strict=False):
        if q1 >= target:
            best = r1
        elif q0 >= target:
            return r0 + (q0 - target) / (q0 - q1) * (r1 - r0)
    return best


def cloud_scenario(current: Scenario | None) -> Scenario:
    """The scenario's own inference deployment when it runs in a data centre; otherwise Llama-3-70B on 8 H100
    (TP8)."""
    if current is not None and current.kind != "train" and current.hardware.kind in CLOUD_KINDS:
        return current.replace(kind="decode", batch=CLOUD_BATCH)
    return Scenario(hardware=hardware_presets()["h100-sxm"], model=model_presets()["llama-3-70b"], kind="decode",
                    gpus=8, gpus_per_node=8, batch=CLOUD_BATCH, prompt_len=512, gen_len=256)


def routing(device: str = "phone-a17-pro", small_model: str = "llama-3.2-3b", network: str = "4g",
            weight_dtype: str = "q4_k", current: Scenario | None = None, target: float = QUALITY_TARGET,
            r=None) -> Routing:
    dev = find(edge_devices(), device, "device")
    net = find(networks(), network, "network")
    cloud = cloud_scenario(current)
    local = Scenario(hardware=dev.hardware, model=find(model_presets(), small_model, "model"), kind="decode",
                     gpus=1, gpus_per_node=1, batch=1, prompt_len=cloud.prompt_len, gen_len=cloud.gen_len,
                     weight_dtype=weight_dtype, kv_dtype="fp16")
    if not 0 < target <= 1:
        raise ValidationError("target", target, "a quality fraction from >0 to 1")
    rc = evaluate(cloud)
    t_d = float(evaluate(local).infer["request_s"])
    t_net = net.rtt_s + cloud.prompt_len * BYTES_PER_TOKEN_TEXT / net.uplink_bytes_per_s
    t_c = t_net + float(rc.infer["request_s"])
    last = router_points()[-1].share_small
    r = np.linspace(0.0, last, 86) if r is None else np.asarray(r, dtype=float)
    q = quality_kept(r)
    gpu_s = float(rc.infer["request_s"]) * cloud.gpus / cloud.batch
    return Routing(r=r, quality=q, latency_s=r * t_d + (1 - r) * t_c, cloud_gpu_s=(1 - r) * gpu_s,
                   device_energy_j=r * dev.power_w * t_d, device_s=t_d, cloud_s=t_c, network_s=t_net,
                   best_r=largest_share(target), target=target, device_scenario=local, cloud_scenario=cloud,
                   points=router_points())
