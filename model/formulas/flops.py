"""FLOP counts for transformers. Broadcast over arrays.

Training model FLOPs follow Korthikanti et al. 2022 Eq. 7, 72·B·L·s·h²·(1 + s/(6h) + v/(12hL)), which is
3 x forward, with the forward pass per token = 2 x (matmul weights) + attention 4·s·h per layer + logits 2hv
(App. A; full s² attention, no causal discount, the papers' MFU convention). The weight term is
generalised to GQA, gated MLPs and MoE by counting the weights actually multiplied per token.
"""

from __future__ import annotations

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars: one formula, grid and scalar


def attention_core_flops_per_token(context, heads, qk_dim, v_dim):
    """Q·Kᵀ and softmax·V for one token attending to `context` keys, one layer: 2c·a·d_qk + 2c·a·d_v
    (2 FLOPs per multiply-add, Korthikanti et al. 2022 App. A)."""
    context = xp.asarray(context, dtype=float)
    return 2.0 * context * heads * qk_dim + 2.0 * context * heads * v_dim


def forward_flops_per_token(matmul_params_per_layer, layers, context, heads, qk_dim, v_dim, hidden, vocab):
    """Forward FLOPs per token: 2·W per layer + attention core + 2hv logits (Korthikanti App. A)."""
    layers = xp.asarray(layers, dtype=float)
    per_layer = 2.0 * matmul_params_per_layer + attention_core_flops_per_token(context, heads, qk_dim, v_dim)
    return layers * per_layer + 2.0 * hidden * vocab


def training_flops(tokens, fwd_per_token, attn_per_token_all_layers, layers_fwd_per_token, recompute, flash):
    """(model FLOPs, hardware FLOPs) for a training step on `tokens` tokens.

    Model FLOPs = 3 x forward (backward is twice the forward). Hardware FLOPs add what is recomputed,
    counted physically: selective recomputation, and FlashAttention's backward, redo the attention core's
    forward once (4·B·s²·h per layer); full recomputation redoes each layer's whole forward (it includes the
    attention core), giving 4/3 of the model FLOPs (8ND vs 6ND, scaling book).

    Convention stated: Korthikanti Eq. 8 writes the selective term as s/(3h) against Eq. 7's s/(6h), an
    extra 12·B·s²·h per layer (three attention-core forwards), which gives its printed 2.7% / 1.6%
    overheads; the physical count here is a third of that (0.9% / 0.55%). Eq. 8 taken literally would make
    selective recomputation cost more than full recomputation once s > 3h. `korthikanti_hardware_flops_selective`
    keeps the paper's accounting for comparison.
    """
    tokens = xp.asarray(tokens, dtype=float)
    model = 3.0 * fwd_per_token * tokens
    recompute = xp.asarray(recompute)
    extra = xp.where(recompute == 2, layers_fwd_per_token,
                     xp.where((recompute == 1) | xp.asarray(flash, dtype=bool), attn_per_token_all_layers, 0.0))
    return model, model + extra * tokens


def korthikanti_model_flops(batch, layers, seq, hidden, vocab):
    """Korthikanti et al. 2022 Eq. 7, for GPT-style models: 72·B·L·s·h²·(1 + s/(6h) + v/(12hL))."""
    B, L, s, h, v = (xp.asarray(x, dtype=float) for x in (batch, layers, seq, hidden, vocab))
    return 72.0 * B * L * s * h**2 * (1.0 + s / (6.0 * h) + v / (12.0 * h * L))


def korthikanti_hardware_flops_selective(batch, layers, seq, hidden, vocab):
    """Korthikanti et al. 2022 Eq. 8 (the paper's accounting of selective recomputation):
    72·B·L·s·h²·(1 + s/(3h) + v/(12hL))."""
    B, L, s, h, v = (xp.asarray(x, dtype=float) for x in (batch, layers, seq, hidden, vocab))
    return 72.0 * B * L * s * h**2 * (1.0 + s / (3.0 * h) + v / (12.0 * h * L))
