"""HBM bytes of a training layer's memory-bound kernels per token, kernel by kernel, from the architecture. Vectorized.

Each kernel reads and writes whole activations, so its bytes per token are counted from the widths it touches
(elements × bytes; act_bytes = 2 for BF16) and timed on HBM at hbm_bw × hbm_efficiency by train_compute.py:
- norms, residual adds, the MLP activation and the MoE permute / weighted un-permute: the forward passes of
  kernel_efficiency.elementwise_bytes_per_token (shared with prefill); the backward reads the saved input and
  the output gradient and writes the input gradient, 2 × the forward (stated assumption).
- RoPE (position "rope"): the rotation reads and writes the rotated part of the queries and keys, 2(q + k)
  elements per pass (MLA rotates a·d_rope of the queries and the one shared d_rope key, DeepSeek-V3 §2.1.1;
  others every query and key head). MLA's latent RMSNorms over q_lora_rank and kv_lora_rank, 2(r_q + r_kv), and
  the key each head hands the attention kernel, its k_nope read and [k_nope | k_pe] written: a(d_nope + d_qk).
- Router (MoE layers): the fp32 gate scores of the E experts are written by the router GEMM, read and written by
  the sigmoid / softmax, read by top-k: 3E × 4 B per pass.
- FP8 casts of the GEMM operands, from every GEMM's input width K and output width N per token (gemm_widths):
  tensorwise (Transformer Engine, delayed or current scaling): cast-transpose of each GEMM input in the forward
  (read 2 B, write the FP8 copy and its transpose for the wgrad, 1 + 1 B) and of each output gradient in the
  backward: 4(K + N) B per GEMM (TE's fused cast_transpose). Blockwise (DeepSeek-V3 §3.3.2): 1x128 tiles run
  along the row for the Fprop / Dgrad operand and along the column for the Wgrad one, so one FP8 copy does not
  serve both: the input is cast per token in the forward (3 B per element: read 2, write 1), cast and transposed
  per channel for the Wgrad (3 B), the output gradient cast per token for the Dgrad and per channel, transposed,
  for the Wgrad (3 + 3 B): 3·K_in + 3·K + 6·N. An input two GEMMs share (MLA's q_a and kv_a, the MoE input the
  shared and the routed experts read, dispatched in FP8) is cast once in the forward; each routed copy is a
  GEMM row of its expert for the Wgrad and its gradient. Scales (4 B per 128 elements) are left out (3%).
  Under tensorwise the routed experts' grouped GEMM quantises each permuted 16-bit copy (the flow key
  "te-fp8-flow-moe-2544" sets out to remove).
Rate: hbm_bw × hbm_efficiency (0.8, resources/assumptions.toml). Cast kernels reach 85%+ of the HBM peak (key
"torchao-mxfp8-moe-3379"); DeepSeek's training profile (key "deepseek-profile-data-kernels") shows these kernels
by name, 33.0 ms of the pair's 129 ms, its bf16 residual add over 4,096 x 7,168 at 3.1 TB/s = 0.92 of the
H800's 3.35 TB/s; its norms and casts run near 1-1.6 TB/s while DeepEP's kernels share the SMs and HBM, which
the one efficiency does not model, so the pair's modelled 24.5 ms is short of the 33 ms.
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.formulas import kernel_efficiency as ke

ROUTER_BYTES = 4.0 * 3.0     # fp32 gate scores: written, read + written by the gate, read by top-k
TENSORWISE_BYTES = 4.0       # TE cast_transpose: read 2 B, write FP8 + its transpose
BLOCKWISE_BYTES = 3.0        # one per-token or per-channel cast: read 2 B, write 1 B


@dataclass(frozen=True)
class GemmWidths:
    """Per token on one TP rank of an average layer (MoE and dense layers by their share): `k_in` the forward
    inputs cast once, `k` every GEMM's input per routed copy (the Wgrad operand), `n` every GEMM's output per
    routed copy (its gradient is the Dgrad / Wgrad operand)."""

    k_in: object
    k: object
    n: object


@dataclass(frozen=True)
class LayerBytes:
    """HBM bytes per token of one layer's memory-bound kernels: `forward` one forward pass (recomputation repeats
    it), `backward` the backward pass (FP8 casts of the output gradients included)."""

    forward: object
    backward: object


def _attention_widths(arch, tp):
    """(k_in, k, n) of the attention projections per token on one TP rank."""
    h, a = float(arch.hidden), float(arch.heads)
    o_in = a * arch.v_dim / tp
    if arch.attention == "mla":
        rq, rkv, rope = float(arch.q_lora_rank), float(arch.kv_lora_rank), float(arch.qk_rope_head_dim)
        q_out = a * arch.qk_dim / tp
        kv_out = a * (arch.qk_nope_head_dim + arch.v_head_dim) / tp
        if rq:
            ns = rq + (rkv + rope) + q_out + kv_out + h      # q_a, kv_a, q_b, kv_b, o
            ks = h + rq + rkv + o_in
        else:
            ns = q_out + (rkv + rope) + kv_out + h
            ks = h + rkv + o_in
        return ks, ks, ns
    qkv_out = (a + 2.0 * arch.kv_heads) * arch.head_dim / tp
    return h + o_in, h + o_in, qkv_out + h


def _mlp_widths(arch, tp, f, copies):
    """(k_in, k, n) of `copies` MLPs of width f per token; `copies` > 1 share one forward input cast."""
    h, up = float(arch.hidden), 2.0 if arch.gated_mlp else 1.0
    return h + copies * f / tp, copies * (h + f / tp), copies * (up * f / tp + h)


def gemm_widths(arch, tp) -> GemmWidths:
    """The GEMM operand widths of one average layer per token (module docstring)."""
    tp = xp.asarray(tp, dtype=float)
    k_in, k, n = _attention_widths(arch, tp)
    moe_share = arch.moe_layers / arch.layers
    dense = _mlp_widths(arch, tp, float(arch.ffn_hidden), 1.0)
    f = float(arch.moe_ffn_hidden or arch.ffn_hidden)
    copies = float(arch.experts_per_token + arch.shared_experts)
    moe = _mlp_widths(arch, tp, f, copies) if moe_share > 0 else (0.0, 0.0, 0.0)
    mix = [(1.0 - moe_share) * d + moe_share * m for d, m in zip(dense, moe, strict=True)]
    return GemmWidths(k_in=k_in + mix[0], k=k + mix[1], n=n + mix[2])


def fp8_cast_bytes(arch, tp, fp8, blockwise) -> LayerBytes:
    """HBM bytes per token of one layer's FP8 operand casts (module docstring): tensorwise 4K forward and 4N
    backward; blockwise 3·K_in forward and 3K + 6N backward. 0 without FP8 GEMMs."""
    w = gemm_widths(arch, tp)
    fp8 = xp.asarray(fp8, dtype=bool)
    block = xp.asarray(blockwise, dtype=bool)
    fwd = xp.where(block, BLOCKWISE_BYTES * w.k_in, TENSORWISE_BYTES * w.k)
    bwd = xp.where(block, BLOCKWISE_BYTES * (w.k + 2.0 * w.n), TENSORWISE_BYTES * w.n)
    return LayerBytes(forward=xp.where(fp8, fwd, 0.0), backward=xp.where(fp8, bwd, 0.0))


def rope_norm_router_elements(arch, tp):
    """Elements per token of one layer's forward RoPE and MLA latent norms and keys (module docstring), and the router's
    bytes per token (fp32, MoE layers by their share)."""
    tp = xp.asarray(tp, dtype=float)
    rope = 0.0
    if arch.position == "rope":
        if arch.attention == "mla":
            rope = 2.0 * (arch.heads * arch.qk_rope_head_dim / tp + arch.qk_rope_head_dim)
        else:
            rope = 2.0 * (arch.heads + arch.kv_heads) * arch.head_dim / tp
    latent = 0.0
    if arch.attention == "mla":  # latent norms; each head's key [k_nope | k_pe] written for the attention kernel
        latent = 2.0 * (arch.q_lora_rank + arch.kv_lora_rank) \
            + arch.heads * (arch.qk_nope_head_dim + arch.qk_dim) / tp
    router = arch.moe_layers / arch.layers * arch.experts * ROUTER_BYTES if arch.experts > 1 else 0.0
    return rope + latent, router


def layer_bytes_per_token(arch, tp, sp, act_bytes, fp8, blockwise) -> LayerBytes:
    """HBM bytes per token of one training layer's memory-bound kernels, forward and backward (module docstring)."""
    base = ke.elementwise_bytes_per_token(arch, tp, sp, act_bytes, False)
    extra, router = rope_norm_router_elements(arch, tp)
    fwd = base + extra * act_bytes + router
    casts = fp8_cast_bytes(arch, tp, fp8, blockwise)
    return LayerBytes(forward=fwd + casts.forward, backward=2.0 * fwd + casts.backward)
