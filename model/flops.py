"""FLOP counts for transformers. Broadcast over arrays.

Training model FLOPs follow Korthikanti et al. 2022 Eq. 7, 72·B·L·s·h²·(1 + s/(6h) + v/(12hL)), which is
3 x forward, with the forward pass per token = 2 x (matmul weights) + attention 4·s·h per layer + logits 2hv
(App. A; full s² attention, no causal discount, the papers' MFU convention). The weight term is
generalised to GQA, gated MLPs and MoE by counting the weights actually multiplied per token.
"""

from __future__ import annotations

import numpy as np


def attention_core_flops_per_token(context, heads, qk_dim, v_dim):
    """Q·Kᵀ and softmax·V for one token attending to `context` keys, one layer: 2c·a·d_qk + 2c·a·d_v."""
    context = np.asarray(context, dtype=float)
    return 2.0 * context * heads * qk_dim + 2.0 * context * heads * v_dim


def forward_flops_per_token(matmul_params_per_layer, layers, context, heads, qk_dim, v_dim, hidden, vocab):
    """Forward FLOPs per token: 2·W per layer + attention core + 2hv logits (Korthikanti App. A)."""
    layers = np.asarray(layers, dtype=float)
    per_layer = 2.0 * matmul_params_per_layer + attention_core_flops_per_token(context, heads, qk_dim, v_dim)
    return layers * per_layer + 2.0 * hidden * vocab


def training_flops(tokens, fwd_per_token, attn_per_token_all_layers, layers_fwd_per_token, recompute, flash):
    """(model FLOPs, hardware FLOPs) for a training step on `tokens` tokens.

    Model FLOPs = 3 x forward (backward is twice the forward). Hardware FLOPs add recomputation
    (Korthikanti Eq. 8): selective recomputation, and FlashAttention's backward, redo the attention core
    once; full recomputation redoes each layer's whole forward (it includes the attention core).
    """
    tokens = np.asarray(tokens, dtype=float)
    model = 3.0 * fwd_per_token * tokens
    recompute = np.asarray(recompute)
    extra = np.where(recompute == 2, layers_fwd_per_token,
                     np.where((recompute == 1) | np.asarray(flash, dtype=bool), attn_per_token_all_layers, 0.0))
    return model, model + extra * tokens


def korthikanti_model_flops(batch, layers, seq, hidden, vocab):
    """Korthikanti et al. 2022 Eq. 7, for GPT-style models: 72·B·L·s·h²·(1 + s/(6h) + v/(12hL))."""
    B, L, s, h, v = (np.asarray(x, dtype=float) for x in (batch, layers, seq, hidden, vocab))
    return 72.0 * B * L * s * h**2 * (1.0 + s / (6.0 * h) + v / (12.0 * h * L))
