"""Per-token decode cost of gated short-convolution, attention and hybrid block stacks (LFM2-style).

Per block and decoded token (d = hidden, f = FFN width, h / g = query / KV heads of width e, L = conv kernel,
n = tokens in context, w = bytes per weight, c = bytes per cached value):
- attention block (GQA): weights 2·d·h·e + 2·d·g·e; FLOPs 2·weights + 4·n·h·e (scores and values);
  reads weights·w + KV 2·n·g·e·c; state 2·n·g·e·c grows with n.
- gated short-conv block (LFM2: in_proj d -> 3d giving B, C and x; y = C ⊙ conv_L(B ⊙ x); out_proj d -> d):
  weights 4·d² + L·d; FLOPs 2·weights + 2·d (the two gates); reads weights·w + state L·d·c; the state
  L·d·c is fixed, whatever n.
- every block has a SwiGLU FFN: 3·d·f weights, 2·3·d·f FLOPs.
Time per token = max(FLOPs / (peak·η_c), bytes / (bandwidth·η_m)) (roofline, Williams et al. 2009).
All functions broadcast over n (and over the byte widths).
"""

from __future__ import annotations

import numpy as np

from trinity_desktop.model.inputs.edge_architectures import BlockStack


def attention_block_weights(s: BlockStack) -> float:
    return 2.0 * s.hidden * s.heads * s.head_dim + 2.0 * s.hidden * s.kv_heads * s.head_dim


def conv_block_weights(s: BlockStack) -> float:
    return 4.0 * s.hidden * s.hidden + s.conv_cache * s.hidden


def ffn_weights(s: BlockStack) -> float:
    return 3.0 * s.hidden * s.ffn_hidden


def stack_weights(s: BlockStack) -> float:
    """Weights of the blocks (embeddings excluded: a tied embedding is read once per token as the head)."""
    return (s.attention_layers * attention_block_weights(s) + s.conv_layers * conv_block_weights(s)
            + len(s.layer_types) * ffn_weights(s))


def head_weights(s: BlockStack) -> float:
    return float(s.hidden * s.vocab)


def state_bytes(s: BlockStack, context, cache_bytes=2.0):
    """Per-sequence state: the attention layers' KV cache (grows with n) + the conv layers' fixed rows."""
    n = np.asarray(context, dtype=float)
    kv = s.attention_layers * 2.0 * n * s.kv_heads * s.head_dim * cache_bytes
    return kv + s.conv_layers * s.conv_cache * s.hidden * cache_bytes


def decode_flops(s: BlockStack, context):
    """FLOPs of one decoded token at context n (weights' 2 FLOPs each + attention over n + conv gates)."""
    n = np.asarray(context, dtype=float)
    return (2.0 * (stack_weights(s) + head_weights(s)) + s.attention_layers * 4.0 * n * s.heads * s.head_dim
            + s.conv_layers * 2.0 * s.hidden)


def decode_bytes(s: BlockStack, context, weight_bytes=2.0, cache_bytes=2.0):
    """Bytes read per decoded token: every weight once (blocks + head) and the whole per-sequence state."""
    return (stack_weights(s) + head_weights(s)) * np.asarray(weight_bytes, dtype=float) + state_bytes(
        s, context, cache_bytes)


def decode_time(s: BlockStack, context, peak, bandwidth, eff_compute, eff_memory, weight_bytes=2.0,
                cache_bytes=2.0):
    """Seconds per decoded token: the roofline max of the compute and the memory time."""
    compute = decode_flops(s, context) / (peak * eff_compute)
    memory = decode_bytes(s, context, weight_bytes, cache_bytes) / (bandwidth * eff_memory)
    return np.maximum(compute, memory)
