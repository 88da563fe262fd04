"""Training memory per GPU: model states (ZeRO) and activations (Korthikanti et al. 2022).

All functions broadcast over numpy arrays in any argument.
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars: one formula, grid and scalar

RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL = 0, 1, 2


def model_state_bytes(params, dp, zero, weight_bytes=2.0, grad_bytes=2.0, optimizer_bytes=12.0):
    """(weights, gradients, optimizer) bytes per GPU for `params` parameters held by this
    model-parallel rank, replicated over `dp` data-parallel ranks.

    ZeRO (Rajbhandari et al. 2020, §5, Table 1), with K = `optimizer_bytes` (12 for mixed-precision
    Adam: fp32 master, momentum, variance):
      stage 0: 2Ψ + 2Ψ + KΨ;  stage 1 (P_os): optimizer / Nd;  stage 2 (P_os+g): + gradients / Nd;
      stage 3 (P_os+g+p): + weights / Nd.  Nd is the sharding degree, not the GPU count: DP x CP, since CP ranks
      hold the same weights (reference "torchtitan-fsdp-cp"; train_memory passes it).
    """
    params = xp.asarray(params, dtype=float)
    dp = xp.asarray(dp, dtype=float)
    zero = xp.asarray(zero)
    weights = weight_bytes * params / xp.where(zero >= 3, dp, 1.0)
    grads = grad_bytes * params / xp.where(zero >= 2, dp, 1.0)
    optimizer = optimizer_bytes * params / xp.where(zero >= 1, dp, 1.0)
    return weights, grads, optimizer


@dataclass(frozen=True)
class LayerWidths:
    """The widths of one transformer layer's stored tensors: hidden h, heads a, and the query / key-value / MLP
    widths (None: MHA's h, h and the plain MLP's 4h); `gated` a gated MLP, `moe_k` the routed experts per token."""

    hidden: object
    heads: object
    q_width: object = None
    kv_width: object = None
    ffn: object = None
    gated: bool = False
    moe_k: object = 1


def activation_bytes_per_layer(s, b, widths: LayerWidths, tp=1, sp=False, recompute=RECOMPUTE_NONE, flash=False,
                               act_bytes=2.0):
    """Activation bytes stored by one transformer layer (its `widths`) for one micro-batch.

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
    q_width, kv_width, ffn, gated, moe_k = widths.q_width, widths.kv_width, widths.ffn, widths.gated, widths.moe_k
    s, b, h, a = (xp.asarray(x, dtype=float) for x in (s, b, widths.hidden, widths.heads))
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


E5M6_BYTES = 12.0 / 8.0  # DeepSeek-V3's format for the attention output: 1 sign + 5 exponent + 6 mantissa bits


def deepseek_v3_activation_bytes_per_layer(s, b, h, *, tp=1, sp=False, q_latent, kv_latent, attn_out_width,
                                           ffn, experts_active=1.0):
    """Activation bytes one layer stores under DeepSeek-V3's recipe (reference "deepseek-v3", §3.2.3 and §3.3.3),
    counting the same tensors as `activation_bytes_per_layer`:
      - RMSNorm is recomputed: its outputs (the attention and the MLP inputs, 2sbh each) are not stored; its inputs
        (4sbh) and the two dropout masks (2sbh) stay: 6sbh, replicated unless sequence parallelism shards it;
      - MLA's up-projections are recomputed: Q, K, V are not stored, their latent inputs are (2 bytes x
        (q_latent + kv_latent) per token, kv_latent including the RoPE key);
      - the input of the Linear after attention is kept in E5M6 (1.5 bytes x attn_out_width);
      - MoE Linear inputs are cached in FP8 (1 byte x h per active expert), as are the SwiGLU inputs (2 x ffn),
        whose output is recomputed in the backward.
    `experts_active` = routed top-k + shared experts (1 for a dense MLP)."""
    s, b, h = (xp.asarray(x, dtype=float) for x in (s, b, h))
    tp = xp.asarray(tp, dtype=float)
    replicated = 6.0 * s * b * h
    attention = s * b * (2.0 * (xp.asarray(q_latent, dtype=float) + xp.asarray(kv_latent, dtype=float))
                         + E5M6_BYTES * xp.asarray(attn_out_width, dtype=float))
    mlp = s * b * xp.asarray(experts_active, dtype=float) * (h + 2.0 * xp.asarray(ffn, dtype=float))
    return replicated / xp.where(sp, tp, 1.0) + (attention + mlp) / tp


def te_fp8_activation_bytes_per_layer(s, b, h, *, tp=1, sp=False, q_width, kv_width, ffn, gated=True,
                                      experts_active=1.0):
    """Activation bytes one layer stores when Transformer Engine runs its GEMMs in FP8 (reference "te-linear-fp8":
    `if fp8 and not recipe.override_linear_precision.wgrad: saved_inputmat = inputmat`, the FP8 cast of the GEMM
    input is what the Linear keeps for its weight gradient). Against `activation_bytes_per_layer`'s tensor count:
    the QKV and fc1 inputs drop from 2 to 1 byte (-2sbh); the attention output stays 16-bit for the attention
    backward and its FP8 cast is saved by the projection (+1 x q); a gated MLP keeps its fc1 output (gate and up,
    4sbf) and the FP8 fc2 input (1 x f) instead of four 16-bit f-wide tensors (8sbf), a plain MLP its fc1 output
    (2sbf) and the FP8 fc2 input (1 x f) instead of 4sbf. Selective recomputation (no s x s scores)."""
    s, b, h = (xp.asarray(x, dtype=float) for x in (s, b, h))
    tp = xp.asarray(tp, dtype=float)
    q, k, f = (xp.asarray(x, dtype=float) for x in (q_width, kv_width, ffn))
    replicated = 8.0 * s * b * h
    attention = s * b * (5.0 * q + 4.0 * k)
    mlp = s * b * xp.asarray(experts_active, dtype=float) * xp.where(gated, 5.0, 3.0) * f
    return replicated / xp.where(sp, tp, 1.0) + (attention + mlp) / tp


def op_sac_activation_bytes_per_layer(s, b, h, *, tp=1, sp=False, q_width, kv_width, ffn):
    """Activation bytes one layer stores under torchtitan's selective op-level checkpointing (reference
    "torchtitan-op-sac": the outputs of matmuls, SDPA and reduce-scatters are saved "except every second mm", the
    rest recomputed). A Llama layer's matmuls run wq, wk, wv, wo, w1, w3, w2: the odd ones are saved (Q 2sbq, V 2sbk,
    the w1 output 2sbf, the w2 output 2sbh), with the SDPA output (2sbq) and the checkpointed layer input (2sbh).
    Input and w2 output are sharded by sequence parallelism, the rest by TP. 16-bit activations."""
    s, b, h = (xp.asarray(x, dtype=float) for x in (s, b, h))
    tp = xp.asarray(tp, dtype=float)
    replicated = 4.0 * s * b * h
    sharded = s * b * (4.0 * xp.asarray(q_width, dtype=float) + 2.0 * xp.asarray(kv_width, dtype=float)
                       + 2.0 * xp.asarray(ffn, dtype=float))
    return replicated / xp.where(sp, tp, 1.0) + sharded / tp


def in_flight_micro_batches(pp, micro_batches, virtual_stages=1):
    """Micro-batches' worth of a stage's layers whose activations the first pipeline stage holds.

    1F1B: min(p, m) (Narayanan et al. 2021; Korthikanti et al. Eq. 5 makes the first-stage total independent
    of p). Interleaved 1F1B with v > 1 chunks per stage: Megatron-LM's warm-up keeps 2(p-1) + (v-1)p + 1 chunks
    of L/(pv) layers in flight on the first stage, p(1 + (p-1)/(vp)) = p + (p-1)/v stage-loads (Korthikanti
    et al. 2022 §4.2.3: the factor 1 + (p-1)/(vp)); at most all m·v chunks, i.e. min(p + (p-1)/v, m)."""
    return in_flight_at_stage(pp, micro_batches, virtual_stages, 0)


def in_flight_at_stage(pp, micro_batches, virtual_stages=1, stage=0):
    """Stage-loads of activations stage r holds at its peak: 1F1B min(p - r, m) (Narayanan et al. 2021);
    interleaved 1F1B its warm-up 2(p-1-r) + (v-1)p forwards plus one, in chunks of 1/v of a stage-load
    (Megatron-LM's schedule, pipeline_schedule.py), at most all m micro-batches."""
    p, m = xp.asarray(pp, dtype=float), xp.asarray(micro_batches, dtype=float)
    v, r = xp.asarray(virtual_stages, dtype=float), xp.asarray(stage, dtype=float)
    interleaved = (2.0 * (p - 1.0 - r) + (v - 1.0) * p + 1.0) / v
    return xp.where(v > 1, xp.minimum(interleaved, m), xp.minimum(p - r, m))


def stage_layer_counts(layers, pp, first=0, last=0):
    """(first, middle, last) stage layer counts. 0 for both `first` and `last` = the even split: ceil(L/p) on
    each stage (Narayanan et al. 2021) but the last, which holds what the others leave, L - (p-1)·ceil(L/p), as
    Megatron-Bridge's layouts for 61 layers put 13 / 5 / 1 there on PP 4 / 8 / 16 (megatron-bridge-deepseek-v3-
    recipe; floor(L/p) where nothing is left). Uneven stages (Megatron-LM's --decoder-first-pipeline-num-layers /
    --decoder-last-pipeline-num-layers; Llama 3 §3.3.2 puts one layer fewer on the first and the last stage): the
    stages in between share the rest evenly, ceil((L - first - last) / (p - #set)) on the busiest."""
    L, p = xp.asarray(layers, dtype=float), xp.asarray(pp, dtype=float)
    first, last = xp.asarray(first, dtype=float), xp.asarray(last, dtype=float)
    n_set = (first > 0) * 1.0 + (last > 0) * 1.0
    rest = L - first - last
    middle_stages = p - n_set
    even = xp.ceil(L / p)
    middle = xp.where(n_set > 0, xp.ceil(rest / xp.maximum(middle_stages, 1.0)), even)
    middle = xp.where(middle_stages > 0, middle, 0.0)
    left = L - (p - 1.0) * even
    even_last = xp.where(n_set > 0, even, xp.where(left >= 1.0, left, xp.maximum(xp.floor(L / p), 1.0)))
    return xp.where(first > 0, first, even), middle, xp.where(last > 0, last, even_last)


def layers_per_stage(layers, pp, first=0, last=0):
    """Layers on the busiest pipeline stage: ceil(L / p) (Narayanan et al. 2021: L / p per stage), or the largest of
    the uneven stages' counts (`stage_layer_counts`)."""
    f, mid, la = stage_layer_counts(layers, pp, first, last)
    single = xp.asarray(pp, dtype=float) <= 1
    return xp.where(single, xp.asarray(layers, dtype=float), xp.maximum(xp.maximum(f, mid), la))


def stored_layer_loads(layers, pp, micro_batches, virtual_stages=1, first=0, last=0):
    """(peak, last): layer-micro-batches of activations held by the stage that holds the most, and by the last
    stage. In 1F1B stage r holds min(p - r, m) micro-batches (Narayanan et al. 2021), so the first stage holds
    `in_flight_micro_batches` x its layers, the second (the first of the middle ones) min(p - 1, m) x its layers,
    the last one micro-batch of its layers (interleaved: `in_flight_at_stage`). p = 1: the one stage's L layers."""
    p = xp.asarray(pp, dtype=float)
    f, mid, la = stage_layer_counts(layers, pp, first, last)
    first_load = f * in_flight_micro_batches(pp, micro_batches, virtual_stages)
    middle_load = xp.where(p > 2, mid * in_flight_at_stage(pp, micro_batches, virtual_stages, 1), 0.0)
    last_load = xp.where(p > 1, la * in_flight_at_stage(pp, micro_batches, virtual_stages, p - 1.0),
                         xp.asarray(layers, dtype=float))
    peak = xp.where(p > 1, xp.maximum(xp.maximum(first_load, middle_load), last_load), last_load)
    return peak, last_load


# --- the rest of the peak: transient buffers and reserves (one GPU of the peak stage) ------------------------
# The loss's peak holds, per logit of the micro-batch (b x s x V/t, the output layer is vocabulary-parallel), the
# larger of its forward and its backward (torchtitan's `cross_entropy(pred.flatten(0, 1).float(), labels)`, with
# `del pred` "to avoid peaking memory" before the backward; reference "torchtitan-fsdp-pp" for the loop):
#   forward: the 16-bit logits the head's GEMM writes (2 B), their fp32 upcast (4 B), the fp32 log-softmax (4 B): 10;
#   backward: log-softmax saves its result (PyTorch derivatives.yaml: `_log_softmax_backward_data(grad, result,
#   ...)`, 4 B), nll_loss's backward hands it a dense fp32 gradient of the logits' shape (4 B) and it writes its own
#   fp32 output (4 B): 12, the peak. Wijmans et al. 2024 (reference "cce"): the logit matrix dominates the training
#   memory of large-vocabulary models. Derived (D) from the ops, not measured here.
LOSS_FORWARD_BYTES_PER_LOGIT = 2.0 + 4.0 + 4.0
LOSS_BACKWARD_BYTES_PER_LOGIT = 4.0 + 4.0 + 4.0
LOSS_BYTES_PER_LOGIT = max(LOSS_FORWARD_BYTES_PER_LOGIT, LOSS_BACKWARD_BYTES_PER_LOGIT)
# With TP the output layer is vocabulary-parallel and torchtitan runs the loss under `loss_parallel()`, whose DTensor
# handlers fuse nll_loss's and log-softmax's backward (reference "pytorch-loss-parallel", _nll_loss_and_log_softmax_
# backward): `grad_input = torch.zeros_like(x)` (4 B), then `(grad_input + torch.exp(x)) * grad_output`, with the
# saved fp32 log-softmax x (4 B): x, grad_input, exp(x) and their sum are live together, 16 B per local logit. Its
# forward (_log_softmax: the fp32 input, `shifted = x - x_max`, `torch.exp(shifted)`, beside the 16-bit logits) holds
# 14. Derived (D) from the ops, not measured here.
LOSS_PARALLEL_BACKWARD_BYTES_PER_LOGIT = 4.0 + 4.0 + 4.0 + 4.0
# The caching allocator's share of the loss (torchtitan reports `reserved_bytes.all.peak`, reference
# "torchtitan-memory-monitor"): the 16-bit logits, freed before the backward (`del pred`), leave a block of 2 B per
# logit that no fp32 logits-shaped tensor of the backward fits in (the allocator serves a request only from a free
# block at least its size; under expandable segments the block beside it, the freed fp32 upcast, takes the
# backward's first fp32 tensor and leaves those 2 B), so the backward's last fp32 tensor maps new memory and the
# 2 B stay reserved at the peak. Derived (D) from the allocation order, not measured here.
LOSS_FREED_LOGITS_BYTES = 2.0
# NCCL: each connection of each channel holds one Simple-protocol buffer of NCCL_BUFFSIZE, 4 MiB by default
# (reference "nccl-buffsize": NCCL src/init.cc `DEFAULT_BUFFSIZE (1 << 22)`); the ring search builds at most MAXCHANNELS / 2 = 16 channels
# (src/include/devcomm.h `MAXCHANNELS 32`; init.cc `ringGraph.maxChannels = MAXCHANNELS/2`), each ring
# connection a send and a receive side. Point-to-point peers (pipeline sends, the EP all-to-all) are counted
# with one channel each: a lower bound. The LL and LL128 protocols' buffers are not counted (sizes not read).
NCCL_BUFFSIZE = float(1 << 22)
NCCL_RING_CHANNELS = 16.0
NCCL_RING_CONNECTIONS = 2.0
# The CUDA context and PyTorch's CUDA kernels, per process: 781 MiB measured with nvidia-smi right after CUDA
# initialisation (reference "pytorch-cuda-context", pytorch/pytorch issue #34323; nvidia-smi counts MiB); it is
# outside the caching allocator.
CUDA_CONTEXT_BYTES = 781.0 * 2**20
# PyTorch's caching allocator reserves whole segments and rounds blocks, so reserved > allocated
# (torch.cuda.memory_reserved vs memory_allocated; ZeRO §3.2: fragmentation can OOM with > 30% free in extreme
# cases). Stated assumption (status A), not measured: 5% of the allocated bytes stay reserved but unusable.
ALLOCATOR_RESERVE_FRACTION = 0.05


def logits_buffer_bytes(micro_batch, seq_len, vocab, tp=1, bytes_per_logit=None):
    """Bytes the output layer and the loss hold at their peak on the last stage: b·s·(V/t)·bytes_per_logit
    (LOSS_BYTES_PER_LOGIT = 12: in the loss's backward the saved fp32 log-softmax, the fp32 gradient nll_loss hands
    it and the one it writes; at t > 1 the loss-parallel backward's LOSS_PARALLEL_BACKWARD_BYTES_PER_LOGIT = 16,
    unless `bytes_per_logit` is given), plus the freed 16-bit logits the allocator keeps reserved
    (LOSS_FREED_LOGITS_BYTES = 2). At b = 1, s = 8192, V = 128256, t = 1: 14.7 GB; the fp32 logits alone 4.2 GB."""
    tp = xp.asarray(tp, dtype=float)
    if bytes_per_logit is None:
        bytes_per_logit = (xp.where(tp > 1.0, LOSS_PARALLEL_BACKWARD_BYTES_PER_LOGIT, LOSS_BYTES_PER_LOGIT)
                           + LOSS_FREED_LOGITS_BYTES)
    return (xp.asarray(micro_batch, dtype=float) * xp.asarray(seq_len, dtype=float) * float(vocab) / tp
            * bytes_per_logit)


def recompute_working_set_bytes(layer_none, layer_stored, recompute):
    """Activations the backward rebuilds for the one layer it is recomputing, beyond what that layer stores:
    full recomputation re-runs the layer's forward, so its whole activation set (as without recomputation,
    `layer_none`) lives again while its backward runs, less the stored input (Korthikanti et al. 2022 §5: the
    recomputed forward's activations are needed for that layer's backward); selective recomputation rebuilds
    only the attention core, `layer_none - layer_stored` (the 5as²b scores, zero under FlashAttention).
    None: nothing (every activation is already stored)."""
    recompute = xp.asarray(recompute)
    extra = xp.maximum(0.0, xp.asarray(layer_none, dtype=float) - xp.asarray(layer_stored, dtype=float))
    return xp.where(recompute == RECOMPUTE_NONE, 0.0, extra)


def zero3_gather_buffer_bytes(layer_params, zero, weight_bytes=2.0, dp=2, layers=2):
    """ZeRO-3 / FSDP: the unsharded parameters of the layer computing and of the next one, prefetched: min(2, layers
    on the stage) x layer x weight width (PyTorch FSDP's prefetch, reference "pytorch-fsdp2-prefetch": two
    all-gather outputs alive at once). Zero below stage 3 (weights are not sharded) and at DP = 1 (nothing to
    gather). The gradient reduce-scatter buckets (ZeRO-2 and -3 alike) are not counted."""
    per_layer = xp.asarray(layer_params, dtype=float)
    live = xp.minimum(2.0, xp.asarray(layers, dtype=float))
    on = (xp.asarray(zero) >= 3) & (xp.asarray(dp, dtype=float) > 1.0)
    return xp.where(on, live * per_layer * weight_bytes, 0.0)


def fsdp_root_unsharded_bytes(root_params, zero, dp, pp, weight_bytes=2.0):
    """FSDP2's root group (the embedding, final norm and output layer torchtitan leaves to `fully_shard(model)`)
    stays unsharded from its forward to its backward: FSDP2 sets the root's `post_forward_mesh_info = None` ("For
    the root, do not reshard after forward since for training, the parameters would be freed and all-gathered
    immediately"; reference "pytorch-fsdp2-root"). Live at the loss: root_params x weight_bytes x (1 - 1/DP), the
    shard being counted with the model states. Zero below ZeRO-3, at DP = 1 and under PP (the stage stays gathered:
    zero3_pipeline_resident_bytes)."""
    dp = xp.asarray(dp, dtype=float)
    on = (xp.asarray(zero) >= 3) & (dp > 1.0) & (xp.asarray(pp, dtype=float) <= 1.0)
    full = xp.asarray(root_params, dtype=float) * weight_bytes * (1.0 - 1.0 / xp.maximum(dp, 1.0))
    return xp.where(on, full, 0.0)


# FSDP2 accumulates the unsharded gradients of micro-batches whose reduce-scatter it skips in its reduce dtype
# (PyTorch torch/distributed/fsdp/_fully_shard/_fsdp_param.py `to_accumulated_grad_if_needed`:
# `unsharded_grad.to(self.reduce_dtype)`); torchtitan's default `mixed_precision_reduce` is float32 (reference
# "torchtitan-fsdp-pp").
FSDP_REDUCE_BYTES = 4.0


def zero3_pipeline_resident_bytes(stage_params, zero, pp, dp, micro_batches, weight_bytes=2.0,
                                  reduce_bytes=FSDP_REDUCE_BYTES):
    """(weights, gradients) bytes ZeRO-3 / FSDP keeps unsharded on a pipeline stage for the whole step, beyond its
    shards: the weights gathered whole (stage_params x weight_bytes, less the 1/DP shard already counted) and the
    accumulated gradients. Under pipeline parallelism torchtitan does not reshard after the forward ("For PP, by default do not
    reshard after forward to avoid per-microbatch all-gathers": `reshard_after_forward = not pp_enabled`), so the
    stage's gathered weights stay (stage_params x weight_bytes); PyTorch's pipeline schedules skip the gradient
    reduce-scatter on every backward but the last (`set_requires_gradient_sync(last_backward)`: "accumulate
    gradients on previous steps and reduce them on the last step"), so the stage's unsharded gradients accumulate
    in FSDP's reduce dtype (stage_params x reduce_bytes) when there is more than one micro-batch (reference
    "torchtitan-fsdp-pp"). Zero below stage 3, at p = 1 and at DP = 1 (nothing sharded)."""
    dp = xp.asarray(dp, dtype=float)
    on = (xp.asarray(zero) >= 3) & (xp.asarray(pp, dtype=float) > 1.0) & (dp > 1.0)
    psi = xp.asarray(stage_params, dtype=float)
    grads_on = on & (xp.asarray(micro_batches, dtype=float) > 1.0)
    gathered = psi * weight_bytes * (1.0 - 1.0 / xp.maximum(dp, 1.0))  # the whole stage, less the shard counted
    return xp.where(on, gathered, 0.0), xp.where(grads_on, psi * reduce_bytes, 0.0)


def nccl_buffer_bytes(tp, cp, dp, pp, ep, buffsize=NCCL_BUFFSIZE, channels=NCCL_RING_CHANNELS):
    """Device bytes of NCCL's channel buffers per GPU, one communicator per parallel group of more than one rank:
    ring collectives (TP, CP, DP and, with EP > 1, the expert-data-parallel group) channels x 2 connections x
    NCCL_BUFFSIZE; the pipeline's two neighbours and the EP all-to-all's EP - 1 peers one channel each."""
    tp, cp, dp, pp, ep = (xp.asarray(x, dtype=float) for x in (tp, cp, dp, pp, ep))
    ring = channels * NCCL_RING_CONNECTIONS * buffsize
    rings = sum(xp.where(g > 1.0, ring, 0.0) for g in (tp, cp, dp)) + xp.where((ep > 1.0) & (dp / ep > 1.0), ring, 0.0)
    p2p = (xp.where(pp > 1.0, 2.0, 0.0) + xp.maximum(ep - 1.0, 0.0)) * buffsize
    return rings + p2p


def allocator_reserve_bytes(allocated, fraction=ALLOCATOR_RESERVE_FRACTION):
    """Memory the caching allocator holds beyond what tensors use: `fraction` of the allocated bytes."""
    return xp.asarray(allocated, dtype=float) * fraction


@dataclass(frozen=True)
class PeakExtras:
    """What the peak stage holds besides the model states: its stored `activations`, the `transient` buffers at
    the peak (the loss's logits or the layer being recomputed, plus ZeRO-3 gathers), NCCL's `network_buffers`;
    `runtime_for(allocated)` adds the CUDA context and the allocator's reserve."""

    activations: object
    transient: object
    network_buffers: object
    first_stage_transient: object  # what the stage holding the most activations adds: working set + gathers
    last_stage_transient: object   # the last stage's: max(logits, working set) + gathers

    @staticmethod
    def runtime_for(allocated):
        """CUDA context + allocator reserve over `allocated` bytes."""
        return CUDA_CONTEXT_BYTES + allocator_reserve_bytes(allocated)


def peak_memory_extras(layer_stored, layer_none, peak_loads, last_loads, *, recompute, pp, logits, gather,
                       network_buffers, keep=1.0) -> PeakExtras:
    """The stage at the peak and what it holds beyond model states. The stage holding the most activations (the
    first in 1F1B) peaks in a backward, with one layer's recompute working set on top; the last stage holds one
    micro-batch of its layers and, at the loss, the `logits` buffers (`logits_buffer_bytes`; or, later, the
    working set: they are not live together). p = 1: one stage, both. `gather` is ZeRO-3's per-layer gather
    buffer (`zero3_gather_buffer_bytes`), `network_buffers` NCCL's (`nccl_buffer_bytes`); `keep` is the share of
    stored activations left in HBM (activation offload keeps two layers' worth)."""
    working = recompute_working_set_bytes(layer_none, layer_stored, recompute)
    stored_peak = xp.asarray(layer_stored, dtype=float) * peak_loads * keep
    stored_last = xp.asarray(layer_stored, dtype=float) * last_loads * keep
    first_total = stored_peak + working
    last_total = stored_last + xp.maximum(logits, working)
    last_wins = (xp.asarray(pp, dtype=float) <= 1) | (last_total > first_total)
    # under pipeline parallelism the stage's weights stay gathered (zero3_pipeline_resident_bytes): no per-layer buffer
    gather = xp.where(xp.asarray(pp, dtype=float) > 1.0, 0.0, gather)
    return PeakExtras(activations=xp.where(last_wins, stored_last, stored_peak),
                      transient=xp.where(last_wins, xp.maximum(logits, working), working) + gather,
                      network_buffers=network_buffers, first_stage_transient=working + gather,
                      last_stage_transient=xp.maximum(logits, working) + gather)


# What each memory part beyond the model states holds, and its source: the breakdown's hover text.
MEMORY_PART_NOTES = {
    "activations": "stored activations of the micro-batches in flight, plus at the peak the logits and loss "
                   "(b·s·V/t x 12 B, 16 B when vocabulary-parallel, + 2 B of freed 16-bit logits the allocator keeps; "
                   "last stage) or the layer being recomputed, ZeRO-3 gathers and FSDP's root group (korthikanti2022, "
                   "cce, pytorch-loss-parallel, torchtitan-memory-monitor, pytorch-fsdp2-prefetch, pytorch-fsdp2-root)",
    "network_buffers": "NCCL channel buffers: 16 channels x 2 connections x NCCL_BUFFSIZE 4 MiB per ring group, "
                       "4 MiB per pipeline / all-to-all peer (nccl-buffsize)",
    "runtime": "CUDA context 781 MiB (pytorch-cuda-context) + 5% caching-allocator reserve (assumption)",
}
