"""Why this number? The formula behind each result and the reference it comes from.

Keys are "<section>.<name>" as they appear in `Results` (memory, time, pressure). Sources are keys of
resources/references.toml.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Formula:
    text: str
    source: str


FORMULAS: dict[str, Formula] = {
    "memory.weights": Formula("training: w·Ψ / (Nd if ZeRO-3); inference: params × weight bytes / TP "
                              "(Ψ = parameters on this TP×PP rank; w = 2 B in bf16)", "zero"),
    "memory.gradients": Formula("g·Ψ / (Nd if ZeRO ≥ 2)", "zero"),
    "memory.optimizer": Formula("K·Ψ / (Nd if ZeRO ≥ 1); K = 12 B for mixed-precision AdamW "
                                "(fp32 master, momentum, variance)", "zero"),
    "memory.activations": Formula("per layer sbh(10/t_sp + 24/t + 5as/(ht)) (Korthikanti Eq. 1–4), "
                                  "2sbh with full recompute; × layers per stage × min(p, m) in-flight micro-batches "
                                  "(interleaved: × min(p + (p−1)/v, m), Korthikanti §4.2.3)",
                                  "korthikanti2022"),
    "memory.kv_cache": Formula("2 (K and V) · L · n_kv · d_head · bytes · tokens · batch / TP", "vllm"),
    "memory.reserved": Formula("10% of device memory (vLLM gpu_memory_utilization = 0.9)", "vllm"),
    "time.compute": Formula("Σ kernels: GEMM FLOPs / (peak × MAMF share × tile/wave quantisation × compute "
                            "efficiency / 0.5) + flash attention's causal half at its measured share + memory-bound "
                            "bytes / HBM; FLOPs = 72BLsh²(1 + s/6h + v/12hL) plus recomputation", "mamf-table"),
    "time.communication_exposed": Formula("alpha-beta collectives: TP all-reduce 2(n−1)/n·S/B, gathers "
                                          "(n−1)/n·S/B, PP sends; DP sync beyond the last backward",
                                          "nccl-tests-performance"),
    "time.pipeline_bubble": Formula("(p − 1)/v · t_micro-batch; fraction (p−1)/(m+p−1) under 1F1B, (p−1)/(v·m) "
                                     "of the ideal time with v interleaved chunks per stage", "pipedream-1f1b"),
    "time.optimizer": Formula("local state bytes streamed through HBM: Ψ_local·(2K + g + w) / (HBM B/s × eff)",
                              "zero"),
    "time.gemms": Formula("roofline: max(2·W·tokens / peak, weight bytes / HBM B/s); decode on Apple GPUs streams "
                          "at llama.cpp's measured 493 GB/s on M4 Max (1.13 × the HBM efficiency)", "scaling-book"),
    "time.attention": Formula("roofline: max(attention FLOPs / peak, KV bytes / HBM B/s)", "flashattention"),
    "time.attention_kv_reads": Formula("roofline: max(4·c·a·d·L·batch / peak, KV bytes read / (HBM B/s · η · "
                                         "0.69)); paged KV reads at 0.69 of weight streaming (decode_costs)",
                                         "scaling-book"),
    "time.tp_comm": Formula("2 all-reduces per layer: 2(t−1)α + 2(t−1)/t · S / B", "megatron-lm"),
    "time.fixed": Formula("(layers + 1) · c per forward pass; c = 49 µs on GPUs, from gpt-fast's "
                                           "A100 8-bit rows t = (L+1)c + S/B (130 µs on Apple GPUs, llama.cpp "
                                           "#4167); model/formulas/decode_costs.py", "gpt-fast"),
    "pressure.compute": Formula("share of time in FLOP-bound work", "fan2026-trinity"),
    "pressure.bandwidth": Formula("share of time moving data (HBM-bound kernels, exposed communication)",
                                  "fan2026-trinity"),
    "pressure.memory": Formula("memory required / HBM capacity", "fan2026-trinity"),
}
