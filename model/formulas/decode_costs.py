"""Decode as measured: a fixed cost per layer and per step, and HBM efficiency by kernel.

A decode step is not only bytes over bandwidth. Every layer launches a chain of small kernels (norms, the
projections, RoPE and the KV write, attention, the activation, the residual adds, the TP collectives) whose
start-up, drain and synchronisation cost does not shrink with the bytes; the step adds its own (final norm, LM
head, sampling). Measured batch-1 tables give both terms: the time per token of one engine on one device is
    t = groups · c + bytes / B_eff,    groups = layers + 1 (the step's own kernels counted as one more group),
so two rows that differ in bytes and layer count separate the fixed cost c per group from the achieved
bandwidth B_eff. The rows are kept here, and the constants are computed from them (`two_row_decomposition`),
not typed in:
- CUDA-graph engines on NVIDIA/AMD GPUs: gpt-fast (torch.compile, CUDA graphs, batch 1, 5-token prompt) on an
  A100-80GB, Llama-2-7B and Llama-2-70B with 8-bit weights: 155.58 tok/s at 1,069.20 GB/s and 19.13 tok/s at
  1,322.58 GB/s (README "Benchmarks" table): c = 49 us per group, i.e. 1.6 ms per token for a 32-layer model.
- llama.cpp on Apple GPUs (Metal): discussion #4167's summary table, M4 Max (546 GB/s, 40 GPU cores), Llama 2
  7B: F16 TG 31.64 tok/s (12.55 GiB) and Q4_0 TG 83.06 tok/s (3.56 GiB): c = 130 us per group (4.3 ms per
  token), B_eff = 493 GB/s. The same line predicts that row's Q8_0 TG (6.67 GiB) as 53.2 tok/s; measured 54.05.
The two constants of a line belong together: c was solved jointly with B_eff, so pairing c with another
bandwidth breaks the line that fits the rows. A runtime therefore carries its measured weight-streaming rate too,
as a ratio on the `hbm_efficiency` assumption (B_eff / (datasheet x the assumption's likely 0.8), so the range
still moves it): llama.cpp on Metal streams at 493 / (546 x 0.8) = 1.13 of it, the decode GEMV kernels only
(prompt processing runs llama.cpp's matrix-matrix kernels, not measured by these rows). The CUDA-graph class
keeps ratio 1: gpt-fast's 1.43 TB/s (0.70 of 2.039 TB/s) is of 8-bit weight-only kernels dequantising in the
GEMV on GPUs power-capped at 330 W (its README), not the 16-bit GEMV of the engines it stands for, so only its
fixed cost is transferred.
Devices of other kinds (TPU, CPU, Gaudi) have no such table read here: their fixed cost is 0 (the roofline).

An engine that launches its kernels and collectives eagerly has its own line. FasterTransformer's GPT guide
(key "fastertransformer-gpt") times one GPT-20B shape (44 layers, hidden 6,144, FP16, 40.5 GB streamed per pass)
at batch 1, 80 in / 200 out, on 1, 2, 4 and 8 A100s of one node: 5,609, 3,532, 2,438 and 2,053 ms. At batch 1
each of the 201 forward passes (the 80-token prefill is bound by reading the weights too) reads the weights once,
so a pass takes
    t(n) = (L + 1) c + S / (n B) + 2 L (AR(n) + d),
AR(n) the measured small all-reduce of formulas/allreduce_latency (nccl-tests, A100), d what each in-engine
all-reduce costs beyond it. The n = 1, 2, 4 rows give c = 74.5 us per group, B = 1.65 TB/s (0.81 of 2.039, the
assumption's likely 0.8, so the line keeps weight-streaming ratio 1) and d = 12.1 us per call; they predict the
8-GPU row at 2,101 ms (measured 2,053, +2.3%). The KV reads (contexts up to 280 tokens) are under 1% of a pass and are left out of
the solve. These rows are not among the validation runs (which take the 200 in / 200 out rows).

HBM efficiency by kernel: weight-streaming GEMVs run at the scenario's `hbm_efficiency` (the assumption, its
range and bands unchanged). Attention over a paged KV cache reads short rows through a block table and runs
lower: FlashAttention-3's paged decode kernel (page size 8, batch 16, 32 heads of 128, CUDA graphs) on an H100
reaches 1,796 GB/s at 2,000 tokens and 1,849 GB/s at 4,000 (Dao-AILab/flash-attention issue #1572), 0.55 of
the 3.35 TB/s datasheet; against the assumption's likely 0.8 for weight streaming that is a ratio of 0.69,
applied as a scale on `hbm_efficiency` so the assumption's range still moves it. Small elementwise kernels
(norms, activations, residuals: b · h bytes each) are inside the fixed cost per group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base import xp
from trinity_desktop.model.formulas.allreduce_latency import a100_latency, small_allreduce_latency

GIB = 1024.0 ** 3


@dataclass(frozen=True)
class BatchOneRow:
    """One measured batch-1 decode row: tokens per second of a model of `layers` layers that reads `bytes`
    of weights per token."""

    label: str
    layers: int
    bytes_per_token: float
    tokens_per_s: float

    @property
    def seconds_per_token(self) -> float:
        return 1.0 / self.tokens_per_s


@dataclass(frozen=True)
class Decomposition:
    """t = groups · fixed_per_group_s + bytes / bandwidth_bytes_per_s, from two rows."""

    fixed_per_group_s: float
    bandwidth_bytes_per_s: float

    def seconds_per_token(self, layers, bytes_per_token):
        return (xp.asarray(layers, dtype=float) + 1.0) * self.fixed_per_group_s + bytes_per_token / self.bandwidth_bytes_per_s


def two_row_decomposition(a: BatchOneRow, b: BatchOneRow) -> Decomposition:
    """Solve t_i = (L_i + 1) c + S_i / B for c and 1/B from two rows (Cramer's rule)."""
    g1, g2 = a.layers + 1.0, b.layers + 1.0
    s1, s2 = a.bytes_per_token, b.bytes_per_token
    t1, t2 = a.seconds_per_token, b.seconds_per_token
    det = g1 * s2 - g2 * s1
    c = (t1 * s2 - t2 * s1) / det
    inv_b = (g1 * t2 - g2 * t1) / det
    return Decomposition(fixed_per_group_s=c, bandwidth_bytes_per_s=1.0 / inv_b)


# gpt-fast README, "Benchmarks" (8xA100-80GB, power-limited to 330 W, batch 1): bytes per token = the
# table's GB/s divided by its tokens/s.
GPT_FAST_A100_INT8 = (
    BatchOneRow("Llama-2-7B 8-bit", 32, 1069.20e9 / 155.58, 155.58),
    BatchOneRow("Llama-2-70B 8-bit", 80, 1322.58e9 / 19.13, 19.13),
)
# llama.cpp discussion #4167 summary table (build 8e672ef), M4 Max 546 GB/s / 40 cores, Llama 2 7B.
LLAMA_CPP_M4_MAX = (
    BatchOneRow("Llama 2 7B F16", 32, 12.55 * GIB, 31.64),
    BatchOneRow("Llama 2 7B Q4_0", 32, 3.56 * GIB, 83.06),
)
LLAMA_CPP_M4_MAX_Q8_0 = BatchOneRow("Llama 2 7B Q8_0", 32, 6.67 * GIB, 54.05)
M4_MAX_DATASHEET_GBPS = 546.0  # the discussion's M4 Max row: 546 GB/s, 40 GPU cores (hardware.toml m4-max)

# FasterTransformer GPT guide, "Performance of GPT-20B", batch 1, input 80, output 200: (GPUs, latency ms)
FT_GPT20B_TP_ROWS = ((1, 5609.0), (2, 3532.0), (4, 2438.0), (8, 2053.0))
FT_GPT20B_LAYERS = 44
FT_GPT20B_HIDDEN = 6144
FT_GPT20B_VOCAB = 51200
FT_GPT20B_PASSES = 201  # the prefill and 200 decode steps, each reading the weights once at batch 1
# FP16 bytes of one pass: 12 h^2 weights and 13 h biases and norms per layer, the final norm, the tied LM head
FT_GPT20B_BYTES = 2.0 * (FT_GPT20B_LAYERS * (12 * FT_GPT20B_HIDDEN ** 2 + 13 * FT_GPT20B_HIDDEN)
                         + 2 * FT_GPT20B_HIDDEN + FT_GPT20B_HIDDEN * FT_GPT20B_VOCAB)


@dataclass(frozen=True)
class TpSweepLine:
    """t(n) = (L + 1) c + S / (n B) + 2 L (AR(n) + d): the fixed cost per group, the bandwidth, and the in-engine
    cost of one all-reduce beyond the measured small all-reduce AR(n)."""

    fixed_per_group_s: float
    bandwidth_bytes_per_s: float
    allreduce_call_s: float

    def seconds_per_pass(self, n, layers, bytes_per_pass, allreduce_s):
        return ((layers + 1.0) * self.fixed_per_group_s + bytes_per_pass / (n * self.bandwidth_bytes_per_s)
                + 2.0 * layers * xp.where(n > 1, allreduce_s + self.allreduce_call_s, 0.0))


def tp_sweep_decomposition(rows, layers, bytes_per_pass, passes, allreduce_s) -> TpSweepLine:
    """Solve the first three (GPUs, latency ms) rows for c, 1/B and d (module docstring); `allreduce_s(n)` is the
    measured small all-reduce of n GPUs."""
    a, t = [], []
    for n, ms in rows[:3]:
        ar = allreduce_s(n) if n > 1 else 0.0
        a.append([layers + 1.0, bytes_per_pass / n, 2.0 * layers * (n > 1)])
        t.append(ms * 1e-3 / passes - 2.0 * layers * ar)
    c, inv_b, d = np.linalg.solve(np.asarray(a), np.asarray(t))
    return TpSweepLine(float(c), float(1.0 / inv_b), float(d))


def a100_small_allreduce(n) -> float:
    """The measured small all-reduce of n A100s in one node (formulas/allreduce_latency)."""
    return float(small_allreduce_latency(a100_latency(), n, 1.0))


FT_LINE = tp_sweep_decomposition(FT_GPT20B_TP_ROWS, FT_GPT20B_LAYERS, FT_GPT20B_BYTES, FT_GPT20B_PASSES,
                                 a100_small_allreduce)

# Paged-KV decode attention, H100 (flash-attention issue #1572): achieved GB/s at 4,000 tokens over the datasheet
# 3.35 TB/s, against the assumption's likely weight-streaming efficiency.
PAGED_KV_H100_GBPS = 1849.0
H100_DATASHEET_GBPS = 3350.0
WEIGHT_STREAM_LIKELY = 0.8
KV_READ_RATIO = PAGED_KV_H100_GBPS / H100_DATASHEET_GBPS / WEIGHT_STREAM_LIKELY
KV_READ_SOURCE = "fa3-paged-decode-h100"


@dataclass(frozen=True)
class DecodeRuntime:
    """The fixed costs and KV-read efficiency of one class of inference engine (module docstring)."""

    key: str
    label: str
    fixed_per_group_s: float   # per layer per forward pass, and once more per step
    kv_read_ratio: float       # KV-read bandwidth / weight-streaming bandwidth (KV_READ_SOURCE where < 1)
    source: str                # references.toml key of the fixed cost
    weight_stream_ratio: float = 1.0  # decode weight streaming / (hbm_bw x hbm_efficiency): the line's own B_eff
    allreduce_call_s: float = 0.0     # each TP all-reduce's in-engine cost beyond the measured small all-reduce


def weight_stream_ratio(d: Decomposition, datasheet_bytes_per_s: float) -> float:
    """The line's achieved weight-streaming bandwidth over the assumption's likely share of the datasheet:
    B_eff / (datasheet x WEIGHT_STREAM_LIKELY) (module docstring)."""
    return d.bandwidth_bytes_per_s / (datasheet_bytes_per_s * WEIGHT_STREAM_LIKELY)


CUDA_GRAPHS = DecodeRuntime("cuda-graphs", "CUDA-graph engine (gpt-fast class)",
                            two_row_decomposition(*GPT_FAST_A100_INT8).fixed_per_group_s, KV_READ_RATIO,
                            "gpt-fast")
_METAL_LINE = two_row_decomposition(*LLAMA_CPP_M4_MAX)
LLAMA_CPP_METAL = DecodeRuntime("llama-cpp-metal", "llama.cpp on Metal", _METAL_LINE.fixed_per_group_s, 1.0,
                                "llama-cpp-apple-silicon",
                                weight_stream_ratio(_METAL_LINE, M4_MAX_DATASHEET_GBPS * 1e9))
ROOFLINE_ONLY = DecodeRuntime("roofline", "no measured fixed cost (roofline only)", 0.0, 1.0,
                              "roofline")
# KV reads: the decode attention kernel's rate (FasterTransformer's runs state masked-mha, decode_kernels.py),
# else the GPU default's; so the ratio here is the CUDA-graph class's, as decode_kernels.kv_bandwidth reads it.
FASTERTRANSFORMER = DecodeRuntime("fastertransformer", "FasterTransformer (eager kernels and NCCL calls)",
                                  FT_LINE.fixed_per_group_s, KV_READ_RATIO, "fastertransformer-gpt",
                                  allreduce_call_s=FT_LINE.allreduce_call_s)
# Scenario.decode_runtime -> the engine line it names ("auto": the device kind's, RUNTIME_FOR_KIND)
NAMED_RUNTIMES = {"fastertransformer": FASTERTRANSFORMER}
# hardware.toml `kind` -> the engine class its decode is measured with
RUNTIME_FOR_KIND = {"datacenter-gpu": CUDA_GRAPHS, "consumer-gpu": CUDA_GRAPHS, "laptop-soc": LLAMA_CPP_METAL}


def runtime_for(kind: str, engine: str = "auto") -> DecodeRuntime:
    """The decode runtime of a device kind, or the named engine's line (Scenario.decode_runtime); kinds without
    a measured table get the plain roofline."""
    if engine != "auto":
        return NAMED_RUNTIMES[engine]
    return RUNTIME_FOR_KIND.get(kind, ROOFLINE_ONLY)


def fixed_time(runtime: DecodeRuntime, layers, pp=1.0):
    """Seconds of fixed cost in one pipeline slot: its L/pp layers, plus the step's own group shared over the
    pp stages (a token passes all pp slots, so a token pays (L + 1) · c)."""
    pp = xp.asarray(pp, dtype=float)
    return (xp.asarray(layers, dtype=float) / pp + 1.0 / pp) * runtime.fixed_per_group_s


def kv_read_bandwidth(hbm_bw, eff_hbm, runtime: DecodeRuntime, ratio=None):
    """Achieved bandwidth of decode attention over the KV cache: hbm_bw · η_hbm · ratio (module docstring); `ratio`
    the decode attention kernel's own where it states one (decode_kernels.kv_read_ratio), else the runtime's."""
    return hbm_bw * eff_hbm * (runtime.kv_read_ratio if ratio is None else ratio)
