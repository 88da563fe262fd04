"""On-device LLM decode at narrow weight widths (16, 8, 4, 3, 2 bits) against a per-token latency target.

Everything goes through the core's decode roofline (inference.py, via `evaluate_grid` with the weight bytes
per parameter as an array axis): weights = params × bits / 8; each decode step reads the streamed weights
and the KV cache, time per token = max(FLOPs / achievable peak, bytes / achievable memory bandwidth) per kernel
group (Williams et al. 2009; the scaling book's decode analysis, `scaling-book`). Widths without a core dtype
(3 and 2 bits) are just smaller weight_bytes on the same formula. Integer weights are dequantised to 16-bit
before the multiply, so the compute peak stays the 16-bit one (dtypes.compute_dtype_for_weights). Scales,
zero-points and outlier channels of real quantisers are not counted (nominal bits only).

The seed notes' quality observations (4-bit generally keeps structured output, 2-bit often breaks it) are not
modelled here; the quantisation panel shows them as cited observations.
"""

from __future__ import annotations

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.presets import find, model_presets
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import evaluate_grid
from trinity_desktop.model.views.split import EdgeDevice, edge_devices

BITS = (16, 8, 4, 3, 2)
SMALL_MODELS = ("llama-3.2-1b", "llama-3.2-3b")
DEFAULT_TARGET_S = 0.100  # "sub-100 ms" per token: the seed notes' edge latency requirement


def on_device_table(model: str, device: str | EdgeDevice, bits=BITS, *, prompt_len: int = 512,
                    gen_len: int = 256, target_s=DEFAULT_TARGET_S, kv_dtype: str = "fp16") -> dict:
    """Memory, bytes read per token, time per token and tokens/s of batch-1 decode at each weight width.

    Returns arrays over `bits`: weight_bytes (total), memory_total (weights + KV + 10% reserve, per device),
    fits, bytes_per_token (HBM/DRAM bytes read per decode step), time_per_token_s, tokens_per_s,
    meets_target (time per token <= target_s), storage_saved and bandwidth_saved (fractions vs 16 bits),
    plus capacity (bytes) and target_s.
    """
    arch = find(model_presets(), model, "model")
    dev = device if isinstance(device, EdgeDevice) else find(edge_devices(), device, "device")
    b = np.asarray(bits, dtype=float)
    if b.ndim != 1 or b.size == 0 or np.any(~np.isfinite(b)) or np.any(b < 1) or np.any(b > 32):
        raise ValidationError("bits", bits, "weight widths from 1 to 32 bits")
    target = np.asarray(target_s, dtype=float)
    if np.any(~np.isfinite(target)) or np.any(target <= 0) or np.any(target > 60):
        raise ValidationError("target_s", target_s, "a latency target from >0 to 60 s per token")
    sc = Scenario(hardware=dev.hardware, model=arch, kind="decode", gpus=1, gpus_per_node=1, batch=1,
                  prompt_len=prompt_len, gen_len=gen_len, weight_dtype="bf16", kv_dtype=kv_dtype)
    # First cell: the 16-bit reference the savings are measured against; the rest: the requested widths.
    r = evaluate_grid(sc, weight_bytes=np.concatenate([[2.0], b / 8.0]))
    tpot = np.asarray(r.time_per_output_token_s, dtype=float)[1:]
    read_all = np.asarray(r.decode_bytes["hbm"], dtype=float)
    read, ref_read = read_all[1:], read_all[0]
    weights = np.asarray(r.weights_bytes, dtype=float)[1:]
    mem = np.asarray(r.memory_total, dtype=float)[1:]
    ref_w = float(np.asarray(r.weights_bytes)[0])
    return {
        "bits": b, "weight_bytes": weights, "memory_total": mem, "capacity": float(dev.hardware.hbm_bytes),
        "fits": mem <= dev.hardware.hbm_bytes, "bytes_per_token": read, "time_per_token_s": tpot,
        "tokens_per_s": 1.0 / tpot, "target_s": target, "meets_target": tpot <= target,
        "storage_saved": 1.0 - weights / ref_w,
        "bandwidth_saved": 1.0 - read / ref_read,
    }
