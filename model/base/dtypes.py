"""Number formats: bytes per element, and which peak FLOP/s a format computes at.

Mixed-precision training follows ZeRO §3.1 (Rajbhandari et al. 2020): 16-bit weights and gradients,
and an fp32 master copy kept with the optimizer state.
"""

from __future__ import annotations

from trinity_desktop.model.base.errors import ValidationError

BYTES_PER_ELEMENT: dict[str, float] = {
    "fp32": 4.0,
    "tf32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
}

TRAIN_PRECISIONS = ("bf16", "fp16", "fp8", "fp32")
WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")
KV_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")

# (weight bytes, gradient bytes, fp32 master bytes held by the optimizer) per parameter.
# bf16/fp16: ZeRO §3.1 mixed precision. fp32: plain fp32 training, no master copy.
# fp8: FP8 GEMMs with bf16 gradients and an fp32 master (as Transformer Engine keeps it).
TRAIN_PRECISION_BYTES: dict[str, tuple[float, float, float]] = {
    "bf16": (2.0, 2.0, 4.0),
    "fp16": (2.0, 2.0, 4.0),
    "fp8": (1.0, 2.0, 4.0),
    "fp32": (4.0, 4.0, 0.0),
}

# Optimizer state bytes per parameter, excluding the master copy.
# AdamW: fp32 momentum + variance (ZeRO's K = 12 = 4 master + 4 + 4). SGD: fp32 momentum.
# 8-bit Adam (Dettmers et al. 2022): 1-byte momentum and variance.
OPTIMIZER_STATE_BYTES: dict[str, float] = {"adamw": 8.0, "sgd": 4.0, "adam8bit": 2.0}

# Activations are stored in 16 bits in Korthikanti et al.; fp32 training stores them in 32 bits.
ACTIVATION_BYTES: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp8": 2.0, "fp32": 4.0}


def check_choice(field: str, value: str, allowed: tuple[str, ...] | list[str]) -> str:
    if value not in allowed:
        raise ValidationError(field, value, "one of " + ", ".join(allowed))
    return value


def compute_dtype_for_weights(weight_dtype: str, peaks: dict[str, float]) -> str:
    """Inference compute format: fp8 weights run fp8 GEMMs where the hardware has them; integer
    weight-only formats (int8, int4) are dequantised to bf16 before the multiply."""
    if weight_dtype == "fp8" and "fp8" in peaks:
        return "fp8"
    if weight_dtype == "fp32":
        return "fp32"
    return "bf16" if "bf16" in peaks else "fp16"
