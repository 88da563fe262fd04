"""Compute time of one training micro-batch on one GPU, kernel by kernel: GEMMs, attention, memory-bound passes.

  t_c = GEMM FLOPs × τ_gemm + attention by its kernel + memory-bound bytes / (HBM bandwidth × η_hbm)

- τ_gemm: seconds per FLOP over the layer's GEMMs (forward, dgrad and wgrad; the output head), each timed by
  kernel_efficiency.gemm_seconds at the GEMM format's peak (FP8 under Transformer Engine, else 16-bit).
- Attention: with FlashAttention the kernel executes the causal half of the s² score FLOPs at its measured share
  of the BF16 peak (the family's kernel, or FlashAttention-2 where the run names it: kernel_efficiency) (forward and its recomputation at the forward share, the backward at the backward share).
  Without it, the full s² runs as batched GEMMs (QKᵀ: s×s×d, PV: s×d×s per head) plus standard attention's HBM
  passes over the score matrix (flash_io.standard_attention_hbm_bytes, Dao et al. 2022 Algorithms 0 and 3),
  with its dropout kernel (GPT-2/GPT-3-style training, as Megatron-LM runs it, applies dropout to the attention
  probabilities; the mask is fused into Megatron's softmax).
- Memory-bound kernels per layer (train_elementwise.layer_bytes_per_token: norms, residual adds, the MLP
  activation, the MoE permute, RoPE, MLA's latent norms, the router; the FP8 casts of every GEMM operand by
  recipe, tensorwise cast-transpose or DeepSeek-V3's blockwise per-token and per-channel casts). The backward
  reads the saved input and the output gradient and writes the input gradient: 2 × the forward's elementwise
  bytes (stated assumption) plus the output gradients' casts. Full recomputation repeats the forward. FP8
  casts the weights once per micro-batch. Per step and stage-averaged like the head's FLOPs: the embedding gather and its gradient
  (3 passes of b·s·h) and the fp32 cross-entropy over the logits (3 passes of b·s·V/tp at 4 B). Stated counts,
  not measured; the optimizer's passes are timed by the step (training.py). MTP modules (train_mtp.py) add their
  blocks' passes and one more embedding gather and cross-entropy each, stage-averaged like the head.
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.formulas import kernel_efficiency as ke
from trinity_desktop.model.formulas.flash_io import standard_attention_hbm_bytes
from trinity_desktop.model.formulas.train_elementwise import layer_bytes_per_token

LOSS_BYTES_PER_LOGIT = 12.0  # fp32 cross-entropy: 3 passes x 4 B per logit
EMBEDDING_PASSES = 3.0     # gather (write b·s·h), its gradient read and scattered into the table


@dataclass(frozen=True)
class StepShape:
    """A training step's layout as arrays (model/step/training.py derives it from its `TrainInputs`): the parallel
    degrees and data parallelism dp = gpus / (tp·pp·cp), the ZeRO stage and recompute code, m micro-batches and
    v virtual stages, the local sequence s / CP, the layers on the busiest stage and the share of stored
    activations vDNN keeps in HBM, and the MTP modules trained (train_mtp.py)."""

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
    mtp: object = 0        # MTP modules trained on the last stage (train_mtp.py), stage-averaged like the head


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


@dataclass(frozen=True)
class TrainCompute:
    """Seconds of one micro-batch's compute on one GPU of the busiest stage, by kernel kind."""

    gemm_s: object
    attention_s: object
    memory_bound_s: object
    memory_bound_bytes: object     # the memory-bound passes' HBM bytes

    @property
    def total_s(self):
        return self.gemm_s + self.attention_s + self.memory_bound_s


def train_compute(arch, hw, shape: StepShape, rates: KernelRates, *, flops_mb, attn_flops_mb, attn_extra,
                  micro_batch, s_keys, sp, flash, attention_kernel=0) -> TrainCompute:
    """One micro-batch's compute time (module docstring) on the step's layout `shape` at `rates`. `flops_mb` are
    its hardware FLOPs per GPU (recompute included), `attn_flops_mb` their attention-core part (model convention:
    full s²), `attn_extra` 1 where the attention forward is recomputed (selective, full or FlashAttention's
    backward), `s_keys` the keys per query, `attention_kernel` the code of scenario.ATTENTION_KERNELS (0 the
    family's flash kernel, 1 FlashAttention-2)."""
    tp, pp, cp, ep, lps, recompute = shape.tp, shape.pp, shape.cp, shape.ep, shape.lps, shape.recompute
    peak, eff_compute, eff_hbm, act_bytes, fp8 = rates.peak, rates.eff_compute, rates.eff_hbm, rates.act_bytes, rates.fp8
    fp8_blockwise = rates.fp8_blockwise
    tokens_mb = micro_batch * shape.s_local  # b·s/cp
    family = ke.family_of(hw.key)
    scale = xp.asarray(eff_compute, dtype=float) / ke.REFERENCE_COMPUTE_EFFICIENCY
    hbm = hw.hbm_bw * eff_hbm
    tp, cp, pp = (xp.asarray(v, dtype=float) for v in (tp, cp, pp))
    gemms = ke.with_backward(ke.layer_gemms(arch, tokens_mb, tp, ep) + [ke.logits_gemm(arch, tokens_mb, tp)])
    in_bytes = xp.where(fp8, 1.0, 2.0)
    tau = ke.seconds_per_flop(gemms, family, peak, hw.hbm_bw, eff_hbm, scale, fp8, in_bytes, blockwise=fp8_blockwise)
    gemm_s = (flops_mb - attn_flops_mb) * tau

    # attention: fwd (+ recomputed fwd) and bwd parts of the model-convention FLOPs
    n_fwd = 1.0 + attn_extra
    fwd_f, bwd_f = attn_flops_mb * n_fwd / (n_fwd + 2.0), attn_flops_mb * 2.0 / (n_fwd + 2.0)
    peak16 = ke.bf16_peak(hw, peak)
    a_fwd, a_bwd = ke.attention_shares(family, attention_kernel)
    flash_s = 0.5 * (fwd_f / a_fwd + bwd_f / a_bwd) / (peak16 * scale)  # the causal half
    heads = arch.heads / tp
    s_q = shape.s_local
    d = float(arch.qk_dim)
    score = [ke.Gemm(s_q, s_keys, d, micro_batch * heads), ke.Gemm(s_q, float(arch.v_dim), s_keys,
                                                                      micro_batch * heads)]
    tau_std = ke.seconds_per_flop(ke.with_backward(score), family, peak16, hw.hbm_bw, eff_hbm, scale)
    mtp = xp.asarray(shape.mtp, dtype=float)
    layers = lps + mtp / pp  # the stage's layers and its share of the MTP blocks (stage-averaged like the head)
    std_bytes = standard_attention_hbm_bytes(s_keys, d, heads, micro_batch, act_bytes, dropout=True) / cp * layers
    std_s = attn_flops_mb * tau_std + std_bytes / hbm
    flash = xp.asarray(flash, dtype=bool)
    attention_s = xp.where(flash, flash_s, std_s)

    # memory-bound kernels per token, forward and backward (train_elementwise.py: norms, adds, activation,
    # permute, RoPE, router, FP8 operand casts by recipe), the weights cast to FP8 once per micro-batch
    h = float(arch.hidden)
    # blockwise casts where its GEMMs are (Hopper, kernel_efficiency.BLOCKWISE_FP8_HOPPER); elsewhere tensorwise
    cast_blockwise = fp8_blockwise if family is not None and family.fp8_blockwise > 0 else False
    per_tok = layer_bytes_per_token(arch, tp, sp, act_bytes, fp8, cast_blockwise)
    cast_weights = xp.where(fp8, ke.FP8_CAST_BYTES * arch.matmul_params_active_per_layer() / tp, 0.0)
    fwd_passes = 1.0 + (xp.asarray(recompute) == 2)
    layer_bytes = tokens_mb * (per_tok.forward * fwd_passes + per_tok.backward) + cast_weights
    # the main loss and each MTP module's: an embedding gather and a cross-entropy apiece
    step_bytes = (1.0 + mtp) * tokens_mb * (EMBEDDING_PASSES * h * act_bytes + LOSS_BYTES_PER_LOGIT * arch.vocab / tp) / pp
    mem_bytes = layers * layer_bytes + step_bytes
    return TrainCompute(gemm_s=gemm_s, attention_s=attention_s, memory_bound_s=mem_bytes / hbm,
                        memory_bound_bytes=mem_bytes)
