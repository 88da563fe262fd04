"""Which small models meet sub-3B / sub-100 ms on which device: edge devices x models x weight formats.

Each (device, model) pair is one `evaluate_grid` call of the core's batch-1 decode with the formats' effective
bytes per weight as an array axis (model/base/dtypes.py), so every cell is the same roofline the rest of the app
computes: time per output token, memory per device (weights + KV + the runtime reserve) against capacity.
A cell meets the constraints when it fits, decodes within the target and has at most `param_limit` parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.dtypes import BYTES_PER_ELEMENT
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.presets import model_presets
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import evaluate_grid
from trinity_desktop.model.views.split import edge_devices

MODELS = ("llama-3.2-1b", "llama-3.2-3b", "llama-3-8b")
FORMATS = ("bf16", "q8_0", "q4_k", "q3_k", "q2_k")
TARGET_S = 0.100          # the seed's "sub-100 ms" (per output token)
PARAM_LIMIT = 3.0e9       # the seed's "sub-3B" (Llama-3.2-3B's 3.21B counts as the 3B class: limit x 1.1)
PROMPT, GENERATED = 1024, 256


@dataclass(frozen=True)
class EdgeMatrix:
    """Arrays [device, model, format]: time_s (per output token), memory_bytes, fits, meets (fits, on time and
    within the parameter limit); params [model]; capacity [device]."""

    devices: tuple[str, ...]
    models: tuple[str, ...]
    formats: tuple[str, ...]
    time_s: np.ndarray
    memory_bytes: np.ndarray
    fits: np.ndarray
    params: np.ndarray
    capacity: np.ndarray
    meets: np.ndarray
    target_s: float
    param_limit: float


def edge_matrix(devices=None, models=MODELS, formats=FORMATS, target_s: float = TARGET_S,
                param_limit: float = PARAM_LIMIT) -> EdgeMatrix:
    devs = edge_devices()
    devices = tuple(devices or devs)
    for name, values, known in (("device", devices, devs), ("model", models, model_presets()),
                                ("weight format", formats, BYTES_PER_ELEMENT)):
        bad = [v for v in values if v not in known]
        if bad or not values:
            raise ValidationError(name, bad or values, "known preset keys")
    if not 0 < target_s <= 60:
        raise ValidationError("target_s", target_s, "a latency target from >0 to 60 s per token")
    wb = np.array([BYTES_PER_ELEMENT[f] for f in formats])
    shape = (len(devices), len(models), len(formats))
    time_s, memory = np.zeros(shape), np.zeros(shape)
    params = np.array([model_presets()[m].params_total() for m in models])
    for i, d in enumerate(devices):
        for j, m in enumerate(models):
            sc = Scenario(hardware=devs[d].hardware, model=model_presets()[m], kind="decode", gpus=1,
                          gpus_per_node=1, batch=1, prompt_len=PROMPT, gen_len=GENERATED, kv_dtype="fp16")
            r = evaluate_grid(sc, weight_bytes=wb)
            time_s[i, j] = np.broadcast_to(r.time_per_output_token_s, wb.shape)
            memory[i, j] = np.broadcast_to(r.memory_total, wb.shape)
    capacity = np.array([devs[d].hardware.hbm_bytes for d in devices])
    fits = memory <= capacity[:, None, None]
    small = params <= param_limit * 1.1
    meets = fits & (time_s <= target_s) & small[None, :, None]
    return EdgeMatrix(devices, tuple(models), tuple(formats), time_s, memory, fits, params, capacity, meets,
                      target_s, param_limit)


def largest_meeting(m: EdgeMatrix, device: str, ignore_limit: bool = True) -> tuple[str, str] | None:
    """(model, format) of the largest model that fits and meets the latency target on `device` (its widest such
    format), ignoring the parameter limit by default: what the device itself allows."""
    i = m.devices.index(device)
    ok = m.fits[i] & (m.time_s[i] <= m.target_s)
    if not ignore_limit:
        ok &= (m.params <= m.param_limit * 1.1)[:, None]
    rows = [j for j in np.argsort(-m.params) if ok[j].any()]
    if not rows:
        return None
    j = rows[0]
    return m.models[j], m.formats[int(np.flatnonzero(ok[j])[0])]
