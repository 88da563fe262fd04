"""Decode attention kernels: how many times a step reads the KV cache, and at what bandwidth. Vectorized.

A decode step's attention reads each sequence's kept K and V once per layer, and is HBM-bound. Two properties
of the kernel that runs it change those bytes and their rate:
- GQA/MQA reads. A grouped kernel loads the K/V of one KV head once for the g = heads / kv_heads query heads
  that share it (FlashAttention's "pack GQA", FlashInfer, TensorRT-LLM's XQA: "reducing data loading" for
  MQA and GQA, key "trtllm-xqa-blog"). The masked multi-head attention kernel of FasterTransformer and of
  TensorRT-LLM before XQA (v0.5-v0.7; XQA is in v0.8) runs one thread block per query head, each loading its
  KV head's K/V: the shared cache is read g times. No L2 reuse between the g blocks is credited (an upper
  bound of the traffic, stated). TensorRT-LLM's blog measures XQA at 2.4x the throughput of the kernel before
  it on Llama-70B (8 query heads per KV head), 1 H200, 128 in / 2,048 out, within the same latency budget.
- Bandwidth by KV layout. A paged cache with small pages reads short rows through a block table: the
  FlashAttention-3 paged kernel at page size 8 on H100 reaches 1,849 GB/s (decode_costs.KV_READ_RATIO, 0.69 of
  the weight-streaming rate). Large pages read long contiguous rows: FlashAttention-2's paged decode at page
  size 256 on an H100 SXM (onnxruntime PR #21414, Llama-3-70B GQA 8 shapes, 64 sequences) takes 28.780 us to
  read 33 MiB and 43.563 us to read 65 MiB: the marginal rate of the two rows is 2.270 TB/s, 0.678 of the
  3.35 TB/s datasheet, 0.85 of the likely weight-streaming efficiency (0.8). A contiguous cache (FasterTransformer)
  or TensorRT-LLM's 64-token blocks are taken at that large-page rate (a stated transfer).

"auto" keeps the default engine class (decode_costs.CUDA_GRAPHS: grouped reads, small pages).
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp
from trinity_desktop.model.formulas.decode_costs import (
    H100_DATASHEET_GBPS,
    WEIGHT_STREAM_LIKELY,
    kv_read_bandwidth,
    runtime_for,
)

MIB = 1024.0 ** 2
# onnxruntime PR #21414, "FA2 - paged batch decode", H100 SXM, llama3 70B (GQA8) page_size=256, 64 sequences:
# (Read MiB, GPU time us) at seq_len 128 and 256
LARGE_PAGE_ROWS = ((33.0, 28.780), (65.0, 43.563))


def marginal_bandwidth(rows=LARGE_PAGE_ROWS) -> float:
    """Bytes per second between two (MiB read, microseconds) rows: ΔB / Δt (the fixed launch time cancels)."""
    (b1, t1), (b2, t2) = rows
    return (b2 - b1) * MIB / ((t2 - t1) * 1e-6)


LARGE_PAGE_RATIO = marginal_bandwidth() / (H100_DATASHEET_GBPS * 1e9) / WEIGHT_STREAM_LIKELY


@dataclass(frozen=True)
class DecodeAttentionKernel:
    """One decode attention kernel class: whether it reads a KV head once per query head, and its KV-read
    bandwidth over the weight-streaming bandwidth (None: the engine's, decode_costs.DecodeRuntime)."""

    key: str
    label: str
    reads_per_query_head: bool
    kv_read_ratio: float | None
    source: str


KERNELS = (
    DecodeAttentionKernel("auto", "the engine's grouped paged kernel (FlashAttention / FlashInfer / XQA class)",
                          False, None, "fa3-paged-decode-h100"),
    DecodeAttentionKernel("masked-mha", "masked multi-head attention (FasterTransformer, TensorRT-LLM before "
                          "XQA): one block per query head, contiguous or large-block KV", True, LARGE_PAGE_RATIO,
                          "trtllm-xqa-blog"),
)
KERNEL_KEYS = tuple(k.key for k in KERNELS)


def _pick(values, kernel_code):
    """values[kernel_code], a plain number for a plain code, an array for an array of codes."""
    if isinstance(kernel_code, (int, float)):
        return values[int(kernel_code)]
    return xp.asarray(values, dtype=float)[xp.asarray(kernel_code, dtype=int)]


def kv_read_multiplier(arch, kernel_code=0):
    """Times the kept KV cache is read per decode step: g = heads / kv_heads for a per-query-head kernel on a
    GQA/MQA model, else 1 (MLA caches one latent that every head's absorbed projection reads once)."""
    group = 1.0 if arch.attention == "mla" else arch.heads / arch.kv_heads
    return _pick([group if k.reads_per_query_head else 1.0 for k in KERNELS], kernel_code)


def kv_read_ratio(runtime_ratio, kernel_code=0):
    """KV-read bandwidth over the weight-streaming bandwidth: the kernel's own where it states one, else the
    engine's (`runtime_ratio`, decode_costs.DecodeRuntime.kv_read_ratio)."""
    own = _pick([k.kv_read_ratio or 0.0 for k in KERNELS], kernel_code)
    return xp.where(own > 0.0, own, runtime_ratio)


def kv_bandwidth(hw, eff_hbm, kernel_code=0):
    """Achieved KV-read bandwidth of a decode step on `hw`: its engine's (decode_costs.runtime_for) at the kernel's
    KV-read ratio; the one home for the inference step and the speculative verify step."""
    runtime = runtime_for(hw.kind)
    return kv_read_bandwidth(hw.hbm_bw, eff_hbm, runtime, kv_read_ratio(runtime.kv_read_ratio, kernel_code))
