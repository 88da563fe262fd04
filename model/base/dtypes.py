"""Number formats: bytes per element, and which peak FLOP/s a format computes at.

Mixed-precision training follows ZeRO §3.1 (Rajbhandari et al. 2020): 16-bit weights and gradients,
and an fp32 master copy kept with the optimizer state.
"""

from __future__ import annotations

from dataclasses import dataclass

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



@dataclass(frozen=True)
class WeightFormat:
    """A weight format as stored: `block` weights share `code_bits` each plus `overhead_bits` of scales, minima
    or zero points per block (`overhead_bits` may be fractional where a second-level scale covers many blocks).
    Effective bits per weight = code_bits + overhead_bits / block."""

    key: str
    name: str
    code_bits: float
    block: int
    overhead_bits: float
    layout: str
    source: str

    @property
    def effective_bits(self) -> float:
        return self.code_bits + self.overhead_bits / self.block


_HALF = 16.0  # ggml_half / fp16 scale
# Block layouts as the format definitions store them. GGUF: ggml/src/ggml-common.h block_* structs (QK_K = 256,
# K_SCALE_SIZE = 12 bytes); GPTQ/AWQ: an fp16 scale and a `bits`-wide packed zero point per group of 128 input
# weights (qweight, qzeros, scales buffers of GPTQModel / AutoAWQ); NF4: QLoRA §3 (blocks of 64, fp8 constants
# double-quantised in blocks of 256 with one fp32 constant each); NVFP4: one E4M3 scale per 16 E2M1 values;
# MXFP4: one E8M0 scale per 32 (OCP Microscaling spec v1.0).
WEIGHT_FORMATS_STORED: tuple[WeightFormat, ...] = (
    WeightFormat("q8_0", "GGUF Q8_0", 8, 32, _HALF, "32 int8 + fp16 scale (34 B / 32)", "ggml-common"),
    WeightFormat("q6_k", "GGUF Q6_K", 6, 256, 16 * 8 + _HALF, "256 6-bit + 16 int8 scales + fp16 d (210 B / 256)",
                 "ggml-common"),
    WeightFormat("q5_k", "GGUF Q5_K", 5, 256, 12 * 8 + 2 * _HALF,
                 "256 5-bit + 12 B of 6-bit scales/mins + fp16 d, dmin (176 B / 256)", "ggml-common"),
    WeightFormat("q4_k", "GGUF Q4_K", 4, 256, 12 * 8 + 2 * _HALF,
                 "256 4-bit + 12 B of 6-bit scales/mins + fp16 d, dmin (144 B / 256)", "ggml-common"),
    WeightFormat("q4_0", "GGUF Q4_0", 4, 32, _HALF, "32 4-bit + fp16 scale (18 B / 32)", "ggml-common"),
    WeightFormat("q3_k", "GGUF Q3_K", 3, 256, 12 * 8 + _HALF, "256 3-bit + 12 B of 6-bit scales + fp16 d "
                 "(110 B / 256)", "ggml-common"),
    WeightFormat("q2_k", "GGUF Q2_K", 2, 256, 16 * 8 + 2 * _HALF,
                 "256 2-bit + 16 B of 4-bit scales/mins + fp16 d, dmin (84 B / 256)", "ggml-common"),
    WeightFormat("gptq4_g128", "GPTQ 4-bit, group 128", 4, 128, _HALF + 4,
                 "4-bit + per group of 128: fp16 scale + 4-bit zero point", "gptq"),
    WeightFormat("awq4_g128", "AWQ 4-bit, group 128", 4, 128, _HALF + 4,
                 "4-bit + per group of 128: fp16 scale + 4-bit zero point", "awq"),
    WeightFormat("nf4_dq", "NF4 + double quantisation", 4, 64, 8 + 32 / 256,
                 "4-bit NF4 + fp8 constant per 64 + fp32 constant per 256 constants", "qlora"),
    WeightFormat("fp8", "FP8 (E4M3)", 8, 1, 0.0, "E4M3 codes + one fp32 scale per tensor (under 1e-6 bits per "
                 "weight on a 4096 x 4096 matrix)", "fp8-formats"),
    WeightFormat("nvfp4", "NVFP4", 4, 16, 8, "E2M1 + one E4M3 scale per 16 (+ one fp32 per tensor)", "nvfp4"),
    WeightFormat("mxfp4", "MXFP4", 4, 32, 8, "E2M1 + one E8M0 scale per 32", "ocp-mx"),
)
WEIGHT_FORMAT = {f.key: f for f in WEIGHT_FORMATS_STORED}
BYTES_PER_ELEMENT.update({f.key: f.effective_bits / 8.0 for f in WEIGHT_FORMATS_STORED})

TRAIN_PRECISIONS = ("bf16", "fp16", "fp8", "fp32")
WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")
# every format a Scenario's weight_dtype may take: the core widths and the stored formats above
WEIGHT_FORMATS = WEIGHT_DTYPES + tuple(k for k in WEIGHT_FORMAT if k not in WEIGHT_DTYPES)
KV_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")

# (weight bytes, gradient bytes, fp32 master bytes held by the optimizer) per parameter.
# bf16/fp16: ZeRO §3.1 mixed precision. fp32: plain fp32 training, no master copy.
# fp8: Transformer Engine's recipe: BF16 weights (cast to FP8 at each GEMM), BF16 gradients, an fp32 master;
# only the GEMM inputs are FP8 (the casts are timed in formulas/train_compute.py; attention stays in BF16).
TRAIN_PRECISION_BYTES: dict[str, tuple[float, float, float]] = {
    "bf16": (2.0, 2.0, 4.0),
    "fp16": (2.0, 2.0, 4.0),
    "fp8": (2.0, 2.0, 4.0),
    "fp32": (4.0, 4.0, 0.0),
}

# Optimizer state bytes per parameter, excluding the master copy.
# AdamW: fp32 momentum + variance (ZeRO's K = 12 = 4 master + 4 + 4). SGD: fp32 momentum.
# 8-bit Adam (Dettmers et al. 2022): 1-byte momentum and variance.
OPTIMIZER_STATE_BYTES: dict[str, float] = {"adamw": 8.0, "sgd": 4.0, "adam8bit": 2.0,
                                           "adamw-bf16": 4.0}  # BF16 moments: DeepSeek-V3 §3.3.3

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
