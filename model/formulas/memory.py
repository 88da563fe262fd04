"""Training memory per GPU: model states (ZeRO) and activations (Korthikanti et al. 2022).

All functions broadcast over numpy arrays in any argument.
"""

from __future__ import annotations

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars: one formula, grid and scalar

RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL = 0, 1, 2


def model_state_bytes(params, dp, zero, weight_bytes=2.0, grad_bytes=2.0, optimizer_bytes=12.0):
    """(weights, gradients, optimizer) bytes per GPU for `params` parameters held by this
    model-parallel rank, replicated over `dp` data-parallel ranks.

    ZeRO (Rajbhandari et al. 2020, §5, Table 1), with K = `optimizer_bytes` (12 for mixed-precision
    Adam: fp32 master, momentum, variance):
      stage 0: 2Ψ + 2Ψ + KΨ;  stage 1 (P_os): optimizer / Nd;  stage 2 (P_os+g): + gradients / Nd;
      stage 3 (P_os+g+p): + weights / Nd.  Nd is the data-parallel degree, not the GPU count.
    """
    params = xp.asarray(params, dtype=float)
    dp = xp.asarray(dp, dtype=float)
    zero = xp.asarray(zero)
    weights = weight_bytes * params / xp.where(zero >= 3, dp, 1.0)
    grads = grad_bytes * params / xp.where(zero >= 2, dp, 1.0)
    optimizer = optimizer_bytes * params / xp.where(zero >= 1, dp, 1.0)
    return weights, grads, optimizer


def activation_bytes_per_layer(s, b, h, a, tp=1, sp=False, recompute=RECOMPUTE_NONE, flash=False,
                               q_width=None, kv_width=None, ffn=None, gated=False, moe_k=1,
                               act_bytes=2.0):
    """Activation bytes stored by one transformer layer for one micro-batch.

    Korthikanti et al. 2022 §4 (16-bit activations, 1-byte dropout masks): without parallelism
    sbh(34 + 5as/h); with tensor parallelism t: sbh(10 + 24/t + 5as/(ht)); with sequence parallelism
    sbh(34/t + 5as/(ht)); selective recomputation drops the 5as²b attention-score term; full
    recomputation keeps only the layer input, 2sbh (2sbh/t when sequence parallelism
    shards it). FlashAttention never stores the s x s scores, so
    it drops the same term.

    Generalised to GQA and gated MLPs by counting the same tensors: attention stores its input (2sbh),
    Q (2sbq), K and V (2sbk each), the attention output (2sbq) and a dropout mask (sbh): 3sbh+4sbq+4sbk,
    which is 11sbh for MHA. A plain MLP stores its input, two 4h-wide tensors and a mask: 3sbh + 4sbf
    (19sbh at f = 4h); a gated MLP stores four f-wide tensors: 3sbh + 8sbf. With MoE each token's MLP
    tensors exist once per routed expert (x k). Two layer norms store 4sbh.
    """
    s, b, h, a = (xp.asarray(x, dtype=float) for x in (s, b, h, a))
    q = h if q_width is None else xp.asarray(q_width, dtype=float)
    k = h if kv_width is None else xp.asarray(kv_width, dtype=float)
    f = 4.0 * h if ffn is None else xp.asarray(ffn, dtype=float)
    tp = xp.asarray(tp, dtype=float)
    sbh = s * b * h
    # Replicated across TP ranks unless sequence parallelism shards it: norms 4, attention input 2,
    # attention dropout mask 1, MLP input 2, MLP dropout mask 1 = 10 sbh.
    replicated = 10.0 * sbh
    # Sharded by TP: Q, K, V, attention output, MLP internals.
    mlp_internal = xp.where(gated, 8.0, 4.0) * s * b * f * moe_k
    sharded = s * b * (4.0 * q + 4.0 * k) + mlp_internal
    scores = 5.0 * a * s * s * b
    keep_scores = (xp.asarray(recompute) == RECOMPUTE_NONE) & ~xp.asarray(flash, dtype=bool)
    stored = (replicated / xp.where(sp, tp, 1.0) + sharded / tp + xp.where(keep_scores, scores / tp, 0.0))
    full = 2.0 * sbh / xp.where(sp, tp, 1.0)  # the layer input; sequence parallelism shards it too
    per_layer = xp.where(xp.asarray(recompute) == RECOMPUTE_FULL, full, stored)
    return per_layer * (xp.asarray(act_bytes, dtype=float) / 2.0)


def in_flight_micro_batches(pp, micro_batches, virtual_stages=1):
    """Micro-batches' worth of a stage's layers whose activations the first pipeline stage holds.

    1F1B: min(p, m) (Narayanan et al. 2021; Korthikanti et al. Eq. 5 makes the first-stage total independent
    of p). Interleaved 1F1B with v > 1 chunks per stage: Megatron-LM's warm-up keeps 2(p-1) + (v-1)p + 1 chunks
    of L/(pv) layers in flight on the first stage, p(1 + (p-1)/(vp)) = p + (p-1)/v stage-loads (Korthikanti
    et al. 2022 §4.2.3: the factor 1 + (p-1)/(vp)); at most all m·v chunks, i.e. min(p + (p-1)/v, m)."""
    p, m = xp.asarray(pp, dtype=float), xp.asarray(micro_batches, dtype=float)
    v = xp.asarray(virtual_stages, dtype=float)
    return xp.where(v > 1, xp.minimum(p + (p - 1.0) / v, m), xp.minimum(p, m))


def layers_per_stage(layers, pp):
    """Layers on the busiest pipeline stage: ceil(L / p) (Narayanan et al. 2021: L / p per stage)."""
    return xp.ceil(xp.asarray(layers, dtype=float) / xp.asarray(pp, dtype=float))
