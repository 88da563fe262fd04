"""Compute time of one training micro-batch on one GPU, kernel by kernel: GEMMs, attention, memory-bound passes.

  t_c = GEMM FLOPs × τ_gemm + attention by its kernel + memory-bound bytes / (HBM bandwidth × η_hbm)

- τ_gemm: seconds per FLOP over the layer's GEMMs (forward, dgrad and wgrad), each timed by
  kernel_efficiency.gemm_seconds at the GEMM format's peak (FP8 under Transformer Engine, else 16-bit); the output
  head's GEMM (tokens × hidden × vocab/tp) is timed apart at its own shape.
- Attention: with FlashAttention the kernel executes the causal half of the s² score FLOPs at its measured share
  of the BF16 peak (the family's kernel, or FlashAttention-2 where the run names it: kernel_efficiency), the
  forward and its recomputation at the forward share, the backward at the backward share.
  Without it, the full s² runs as batched GEMMs (QKᵀ: s×s×d, PV: s×d×s per head) plus
  the elementwise passes over the score matrix (flash_io.standard_attention_elementwise_bytes, Dao et al. 2022
  Algorithms 0 and 3 less the GEMMs' own traffic; a recomputed forward passes again),
  with its dropout kernel (GPT-2/GPT-3-style training, as Megatron-LM runs it, applies dropout to the attention
  probabilities; the mask is fused into Megatron's softmax).
- Memory-bound kernels per layer (train_elementwise.layer_bytes_per_token: norms, residual adds, the MLP
  activation, the MoE permute, RoPE, MLA's latent norms, the router; the FP8 casts of every GEMM operand by
  recipe, tensorwise cast-transpose or DeepSeek-V3's blockwise per-token and per-channel casts). The backward
  reads the saved input and the output gradient and writes the input gradient: 2 × the forward's elementwise
  bytes (stated assumption) plus the output gradients' casts. Full recomputation repeats the forward. FP8
  casts the weights once per micro-batch. The ends of the pipeline: the embedding gather and its gradient (3 passes
  of b·s·h) on the first stage, the fp32 cross-entropy over the logits (3 passes of b·s·V/tp at 4 B) with the head
  on the last; MTP modules (train_mtp.py) add their blocks and one more embedding gather and cross-entropy each on
  the last stage. Stated counts, not measured; the optimizer's passes are timed by the step (training.py). The
  step is paced by its busiest stage (`busiest_stage`).
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.formulas import kernel_efficiency as ke
from trinity_desktop.model.formulas.flash_io import standard_attention_elementwise_bytes
from trinity_desktop.model.formulas.memory import stage_layer_counts
from trinity_desktop.model.formulas.train_elementwise import layer_bytes_per_token

LOSS_BYTES_PER_LOGIT = 12.0  # fp32 cross-entropy: 3 passes x 4 B per logit
# HEAD_BF16: FP8 training that keeps the output head in 16 bits: Megatron-Core's output layer is its own
# tensor_parallel.ColumnParallelLinear, not a Transformer Engine module, so TE's FP8 autocast leaves it in BF16
# (key "megatron-core-output-layer"); DeepSeek-V3 §3.3.1 keeps "the embedding module, the output head" in BF16
# or FP32 in its FP8 framework. torchtitan's Float8 converts every Linear not in filter_fqns (empty by default).
HEAD_BF16_RECIPES = (1, 3)  # scenario.ACTIVATION_RECIPES.index("deepseek-v3"), .index("te-fp8")
EMBEDDING_PASSES = 3.0     # gather (write b·s·h), its gradient read and scattered into the table


@dataclass(frozen=True)
class StepShape:
    """A training step's layout as arrays (model/step/training.py derives it from its `TrainInputs`): the parallel
    degrees and data parallelism dp = gpus / (tp·pp·cp), the ZeRO stage and recompute code, m micro-batches and
    v virtual stages, the local sequence s / CP, the layers on the busiest stage and the share of stored
    activations vDNN keeps in HBM, the MTP modules trained (train_mtp.py), the uneven first / last stages,
    DualPipe and sequence parallelism."""

    tp: object
    pp: object
    cp: object
    ep: object
    dp: object
    zero: object
    recompute: object
    m: object
    v: object
    s_local: object
    lps: object
    act_keep: object
    mtp: object = 0        # MTP modules trained on the last stage (train_mtp.py)
    first_layers: object = 0   # uneven stages: layers on the first / last stage (0 = the even split)
    last_layers: object = 0
    dualpipe: object = False   # DualPipe (DeepSeek-V3 §3.2.1): each rank holds stage i and stage p-1-i
    sp: object = False         # sequence parallelism (the memory-bound passes' TP split)


@dataclass(frozen=True)
class KernelRates:
    """What a kernel runs at: the GEMM format's peak FLOP/s, the compute and HBM efficiencies, the activation
    bytes per element, whether the GEMMs run in FP8 (Transformer Engine), and with blockwise scales."""

    peak: object
    eff_compute: object
    eff_hbm: object
    act_bytes: object
    fp8: object
    fp8_blockwise: object = False   # DeepSeek-V3's blockwise FP8 scales (kernel_efficiency.BLOCKWISE_FP8_HOPPER)
    head_bf16: object = False       # the output head's GEMM at the BF16 peak under FP8 training (HEAD_BF16 note)


@dataclass(frozen=True)
class TrainCompute:
    """Seconds of one micro-batch's compute on one GPU of the busiest stage, by kernel kind."""

    gemm_s: object
    attention_s: object
    memory_bound_s: object
    memory_bound_bytes: object     # the memory-bound passes' HBM bytes
    stage_s: tuple = (0.0, 0.0, 0.0)  # seconds of the first, a middle and the last stage (`busiest_stage`)

    @property
    def total_s(self):
        return self.gemm_s + self.attention_s + self.memory_bound_s


def head_in_bf16(activation_recipe):
    """Whether FP8 training keeps the output head's GEMM in BF16 (HEAD_BF16): the frameworks of the activation
    recipes (scenario.ACTIVATION_RECIPES) "te-fp8" (Megatron-Core with Transformer Engine) and "deepseek-v3"."""
    return xp.isin(xp.asarray(activation_recipe), HEAD_BF16_RECIPES)


def train_compute(arch, hw, shape: StepShape, rates: KernelRates, *, flops_mb, attn_flops_mb, attn_extra,
                  micro_batch, s_keys, flash, attention_kernel=0, head_share=0.0) -> TrainCompute:
    """One micro-batch's compute time (module docstring) on the busiest stage of the layout `shape` at `rates`
    (`busiest_stage`). `flops_mb` are its hardware FLOPs per GPU averaged over the stages (recompute included),
    `attn_flops_mb` their attention-core part (model convention: full s²), `head_share` the output heads' share
    of the FLOPs (the main head and each MTP module's), `attn_extra` 1 where the attention forward is recomputed
    (selective, full or FlashAttention's backward), `s_keys` the keys per query, `attention_kernel` the code of
    scenario.ATTENTION_KERNELS (0 the family's flash kernel, 1 FlashAttention-2)."""
    tp, pp, cp, ep, recompute = shape.tp, shape.pp, shape.cp, shape.ep, shape.recompute
    peak, eff_compute, eff_hbm, act_bytes, fp8 = rates.peak, rates.eff_compute, rates.eff_hbm, rates.act_bytes, rates.fp8
    fp8_blockwise = rates.fp8_blockwise
    tokens_mb = micro_batch * shape.s_local  # b·s/cp
    family = ke.family_of(hw.key)
    scale = xp.asarray(eff_compute, dtype=float) / ke.REFERENCE_COMPUTE_EFFICIENCY
    hbm = hw.hbm_bw * eff_hbm
    tp, cp, pp = (xp.asarray(v, dtype=float) for v in (tp, cp, pp))
    in_bytes = xp.where(fp8, 1.0, 2.0)
    # the layers' GEMMs and the output head's (tokens x hidden x vocab/tp), each timed at its own shape
    tau = ke.seconds_per_flop(ke.with_backward(ke.layer_gemms(arch, tokens_mb, tp, ep)), family, peak, hw.hbm_bw,
                              eff_hbm, scale, fp8, in_bytes, blockwise=fp8_blockwise)
    peak16 = ke.bf16_peak(hw, peak)
    head16 = xp.asarray(rates.head_bf16, dtype=bool)  # HEAD_BF16
    head_fp8 = xp.asarray(fp8, dtype=bool) & ~head16
    tau_head = ke.seconds_per_flop(ke.with_backward([ke.logits_gemm(arch, tokens_mb, tp)]), family,
                                   xp.where(head16, peak16, peak), hw.hbm_bw, eff_hbm, scale, head_fp8,
                                   xp.where(head_fp8, 1.0, 2.0), blockwise=fp8_blockwise)
    mtp = xp.asarray(shape.mtp, dtype=float)
    blocks = arch.layers + mtp  # the decoder layers and the MTP modules' blocks, over all the stages
    head_f = flops_mb * pp * xp.asarray(head_share, dtype=float)
    block_f, block_attn = (flops_mb * pp - head_f) / blocks, attn_flops_mb * pp / blocks
    gemm_s = (block_f - block_attn) * tau

    # attention: fwd (+ recomputed fwd) and bwd parts of the model-convention FLOPs, per block
    n_fwd = 1.0 + attn_extra
    fwd_f, bwd_f = block_attn * n_fwd / (n_fwd + 2.0), block_attn * 2.0 / (n_fwd + 2.0)
    a_fwd, a_bwd = ke.attention_shares(family, attention_kernel)
    flash_s = 0.5 * (fwd_f / a_fwd + bwd_f / a_bwd) / (peak16 * scale)  # the causal half
    heads = arch.heads / tp
    s_q = shape.s_local
    d = float(arch.qk_dim)
    score = [ke.Gemm(s_q, s_keys, d, micro_batch * heads), ke.Gemm(s_q, float(arch.v_dim), s_keys,
                                                                      micro_batch * heads)]
    tau_std = ke.seconds_per_flop(ke.with_backward(score), family, peak16, hw.hbm_bw, eff_hbm, scale)
    # the score GEMMs write S and read P themselves (tau_std); softmax, mask and dropout pass over s² apart
    std_bytes = standard_attention_elementwise_bytes(s_keys, heads, micro_batch, act_bytes, forward_passes=n_fwd,
                                                     dropout=True) / cp
    attention_s = xp.where(xp.asarray(flash, dtype=bool), flash_s, block_attn * tau_std + std_bytes / hbm)

    # memory-bound kernels per token, forward and backward (train_elementwise.py: norms, adds, activation,
    # permute, RoPE, router, FP8 operand casts by recipe), the weights cast to FP8 once per micro-batch
    h = float(arch.hidden)
    # blockwise casts where its GEMMs are (Hopper, kernel_efficiency.BLOCKWISE_FP8_HOPPER); elsewhere tensorwise
    cast_blockwise = fp8_blockwise if family is not None and family.fp8_blockwise > 0 else False
    per_tok = layer_bytes_per_token(arch, tp, shape.sp, act_bytes, fp8, cast_blockwise)
    cast_weights = xp.where(fp8, ke.FP8_CAST_BYTES * arch.matmul_params_active_per_layer() / tp, 0.0)
    fwd_passes = 1.0 + (xp.asarray(recompute) == 2)
    layer_bytes = tokens_mb * (per_tok.forward * fwd_passes + per_tok.backward) + cast_weights
    # the embedding gather on the first stage; each loss's cross-entropy (and each MTP module's gather) on the last
    emb_bytes = tokens_mb * EMBEDDING_PASSES * h * act_bytes
    head_bytes = mtp * emb_bytes + (1.0 + mtp) * tokens_mb * LOSS_BYTES_PER_LOGIT * arch.vocab / tp
    block = (gemm_s, attention_s, layer_bytes)
    return busiest_stage(arch.layers, shape, block, emb_bytes, (head_f * tau_head, head_bytes), hbm)


def busiest_stage(layers, shape: StepShape, block, emb_bytes, head, hbm) -> TrainCompute:
    """The stage that paces the pipeline: the largest of the first (its layers and the embedding), the middle and
    the last stage (its layers, the MTP modules' blocks, the output head and the losses), each n_layers x the
    block's (GEMM, attention, bytes) plus its ends (vocabulary-parallelism: the head and loss make the last stage
    the slowest unless it holds fewer layers; megatron-uneven-pipeline: --decoder-first/last-pipeline-num-layers).
    Under DualPipe (`shape.dualpipe`, DeepSeek-V3 §3.2.1) rank i holds stage i and stage p-1-i, so the end ranks
    run half the first and half the last stage per micro-batch. p = 1: the one stage holds everything. The layer
    counts are memory.stage_layer_counts' (the even split leaves its remainder to the last stage). `stage_s`
    holds the three stages' seconds (the ends' mean on both end ranks under DualPipe, the one stage's when p = 1)
    for the pipeline's fill and drain (formulas/pipeline_bubble.py)."""
    gemm, attn, nbytes = block
    head_s, head_bytes = head
    pp, mtp = xp.asarray(shape.pp, dtype=float), xp.asarray(shape.mtp, dtype=float)
    n_first, n_mid, n_last = stage_layer_counts(layers, pp, shape.first_layers, shape.last_layers)
    single = pp <= 1
    n_first = xp.where(single, float(layers), n_first)
    n_last = xp.where(single, 0.0, n_last) + mtp
    first = (n_first * gemm, n_first * attn, n_first * nbytes + emb_bytes)
    last = (n_last * gemm + head_s, n_last * attn, n_last * nbytes + head_bytes)
    first = tuple(xp.where(single, f + la, f) for f, la in zip(first, last, strict=True))
    mid = tuple(xp.where(pp > 2, n_mid, 0.0) * x for x in (gemm, attn, nbytes))
    dual = xp.asarray(shape.dualpipe, dtype=bool) & ~single
    ends = tuple(xp.where(dual, 0.5 * (f + la), f) for f, la in zip(first, last, strict=True))
    last = tuple(xp.where(dual | single, e, la) for e, la in zip(ends, last, strict=True))
    seconds = [(g + a + b / hbm, (g, a, b)) for g, a, b in (ends, mid, last)]
    total, pick = seconds[0]
    for t, parts in seconds[1:]:
        slower = t > total
        total, pick = xp.where(slower, t, total), tuple(xp.where(slower, p, q) for p, q in zip(parts, pick, strict=True))
    gemm_s, attention_s, mem_bytes = pick
    return TrainCompute(gemm_s=gemm_s, attention_s=attention_s, memory_bound_s=mem_bytes / hbm,
                        memory_bound_bytes=mem_bytes, stage_s=tuple(t for t, _ in seconds))
