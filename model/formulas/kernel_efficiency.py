"""Achieved throughput by kernel: GEMMs by shape and GPU family, attention by kernel, memory-bound passes. Vectorized.

A GEMM C[M,N] = A[M,K]·B[K,N] of 2MNK FLOPs runs at
    rate = peak(format) × mamf(family, format) × quantisation(M, N) × scale
and takes max(2MNK / rate, bytes / (HBM bandwidth × η_hbm)) with bytes = (MK + KN)·in + MN·out (the roofline of
the one kernel: small-M GEMMs stream their weights).
- mamf: the Maximum Achievable Matmul FLOPS of the family's best shape over its datasheet peak, measured with
  mamf-finder (Bekman, ml-engineering, compute/accelerator "Maximum Achievable Matmul FLOPS comparison table",
  BF16 and FP8 rows; key "mamf-table"): A100 SXM 271.2/312, H100 SXM 794.5/989 ("H200 is the same"), B200
  1745/2250 ... The best shape is where tile and wave quantisation vanish, so the shape factor below is 1 there.
- quantisation: NVIDIA's Matrix Multiplication Background guide (key "nvidia-matmul-guide", §3.1 tile and
  §3.2 wave quantisation): the output is cut into tiles, a partial tile costs a whole one, and tiles run in waves
  of one per SM, a partial wave costing a whole one. Useful share = MN / (⌈M/Tm⌉Tm·⌈N/Tn⌉Tn) × tiles /
  (⌈tiles/SMs⌉·SMs), taking the best of the guide's large cuBLAS tiles 256×128, 128×256 and 128×128 (§2.3).
  Families whose SM count we did not read model tile quantisation only.
- grouped: an MoE layer's routed experts run as one grouped GEMM (Megatron-Core --moe-grouped-gemm), each expert
  a slice of M. NVIDIA measured its MXFP8 grouped GEMM on GB200 at 2,672 TFLOP/s on DeepSeek-V3's expert shape
  (K = 7,168, N = 2,048; key "megatron-dsv3-gb200", §1 item 3, "basically equivalent to a highly optimized Grouped
  GEMM"), against the dense best shape's 3,615.6 (mamf-table GB200 FP8): GROUPED_GEMM_SHARE = 0.739 of the dense
  curve. Other families take the same ratio (a stated transfer, not a measurement of theirs).
- blockwise FP8 (Scenario.fp8_recipe "blockwise", DeepSeek-V3 §3.3.2: 1x128 activation tiles and 128x128 weight
  blocks, each 128-element partial sum promoted to CUDA cores): no MAMF row measures it, but DeepSeek's released
  training profile does (key "deepseek-profile-data", train.json: one DualPipe pair of a forward and a backward
  chunk of 4 MoE layers, EP64, TP1, 4K tokens, H800). Its FP8 GEMM kernels (dpsk grouped_gemm fp8_ptp128c,
  fp8_dptp128c_acc, m_grouped_fp8_ptp128c) run 22.93 + 21.40 + 18.84 + 11.36 = 74.53 ms, over the pair's GEMM FLOPs
  by hand, 3 x 2 x (187.1M MLA + 9 x 3 x 7168 x 2048 expert) parameters x 4,096 tokens x 4 layers = 57.36 TFLOP,
  plus the recomputed MLA up-projections 2 x (1536 x 24576 + 512 x 32768) x 4,096 x 4 = 1.79 TFLOP: 794 TFLOP/s
  while DeepEP holds 20 of 132 SMs, i.e. BLOCKWISE_FP8_HOPPER = 794 / (112/132) / 1,979 = 0.473 of the FP8 peak on
  the SMs left (overlap.COMM_SM_SHARE is applied by the step). It is the aggregate over the layer's dense and
  grouped GEMMs, so no grouped share is applied on top. Hopper only; elsewhere blockwise runs as tensorwise.
- scale: the `compute_efficiency` assumption over its likely value (`REFERENCE_COMPUTE_EFFICIENCY`): 1 at the
  default, so the assumption's range (resources/assumptions.toml) moves every curve together.

Attention runs at the kernel's measured share of the BF16 peak (FlashAttention keeps attention in BF16 even when
Transformer Engine runs the GEMMs in FP8): FlashAttention-2 on A100 reaches 50-73% of peak (Dao 2023 abstract:
forward the high end, backward the low), 35% on H100 (Shah et al. 2024 abstract); FlashAttention-3 reaches
75% of H100's BF16 peak forward (740 TFLOP/s). FlashAttention skips the causal mask's empty blocks, so it executes
half of the s² score FLOPs; standard attention computes them all, as batched GEMMs plus HBM passes over s²
(flash_io.standard_attention_hbm_bytes). Kernels: A100 FlashAttention-2; Hopper FlashAttention-3, whose backward
share (not read) is its forward share times FlashAttention-2's backward/forward ratio; B200 FlashAttention-4,
1,613 TFLOP/s BF16 forward, 0.717 of its 2,250 TFLOP/s (Zadouri et al. 2026 abstract, key "flashattention4"; the
backward by the same ratio); the other Blackwell parts FlashAttention-3's H100 shares (no figure of theirs read). A family without a measured attention kernel (AMD, Gaudi) uses
its own GEMM share times FlashAttention-2's attention/GEMM ratio on A100 (stated transfers, not measurements).

Apple's M4 Max GPU (40 cores) has no MAMF row, but a measured dense FP16 matmul: PyTorch 2.8 on MPS, 4,096 x 4,096,
13.45 TFLOP/s (key "torch-perf-m4-max", FP16 row 4096x4096; the square size nearest a 7B model's K = N = 4,096).
Its share is that rate over the preset's 16 TFLOP/s FP16 estimate (hardware.toml m4-max), so peak x share is the
measured rate. No tile or wave quantisation is modelled there (no tile table read for Metal; llama.cpp runs small
batches as matrix-vector kernels), and no attention kernel was measured (the transfer rule below).

Hardware with no measured MAMF row (TPUs, other consumer and laptop parts, user presets) keeps the former single
factor: every FLOP at `compute_efficiency` of peak, with no shape effects.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.base.errors import ValidationError

REFERENCE_COMPUTE_EFFICIENCY = 0.5  # compute_efficiency's likely value: scale 1 on the curves
CUBLAS_TILES = ((256.0, 128.0), (128.0, 256.0), (128.0, 128.0))  # nvidia-matmul-guide §2.3
FA2_A100_FWD, FA2_A100_BWD = 0.73, 0.50      # FlashAttention-2 abstract: 50-73% of A100 peak
FA3_H100_FWD = 740.0 / 989.0                 # FlashAttention-3 abstract: 740 TFLOP/s BF16 (75%)
FA2_H100_FWD = 0.35                          # FlashAttention-3 abstract: FlashAttention-2 at 35% of H100
FA4_B200_FWD = 1613.0 / 2250.0               # FlashAttention-4 abstract: 1,613 TFLOP/s BF16 on B200 (71%)
A100_MAMF_BF16 = 271.2 / 312.0
GROUPED_GEMM_SHARE = 2672.0 / 3615.6  # megatron-dsv3-gb200 §1: MXFP8 grouped GEMM / GB200's dense FP8 MAMF
# deepseek-profile-data train.json (module docstring): DeepSeek-V3's blockwise FP8 GEMMs, share of the FP8 peak
BLOCKWISE_FP8_HOPPER = (57.357e12 + 1.787e12) / 74.53e-3 / (1.0 - 20.0 / 132.0) / 1978.9e12
# torch-perf-m4-max (PyTorch 2.8 MPS, FP16 4096x4096): achieved FLOP/s, over hardware.toml m4-max's peak_fp16
M4_MAX_FP16_GEMM = 13.45e12
M4_MAX_PEAK_FP16 = 16e12
# Gemm.kind: layer_gemms' weights (attention Q/K/V with MLA's projections, its output; the dense layers' MLP in and
# out; the routed and the shared experts' MLP in and out) and logits_gemm's output head
GEMM_KINDS = ("qkv", "out_proj", "mlp_up", "mlp_down", "expert_up", "expert_down", "shared_up", "shared_down",
              "logits")
FP8_CAST_BYTES = 3.0  # Transformer Engine / TensorRT-LLM cast a 16-bit GEMM input to FP8: read 2 B, write 1 B


@dataclass(frozen=True)
class KernelFamily:
    """Measured throughput shares of one GPU family (mamf-table rows). `mamf_fp8` 0: no FP8 row read (the BF16 share is used);
    `sms` 0: SM count not read (no wave quantisation); `attn_*` 0: no attention kernel measured (transfer rule)."""

    key: str
    mamf_bf16: float
    mamf_fp8: float = 0.0
    sms: int = 0
    attn_fwd: float = 0.0
    attn_bwd: float = 0.0
    fp8_blockwise: float = 0.0  # share of the FP8 peak of blockwise-scaled FP8 GEMMs, 0 = not measured
    tiles: tuple = CUBLAS_TILES  # output tiles of its GEMM library; ((1, 1),) = no tile quantisation modelled

    def gemm_share(self, fp8) -> object:
        """MAMF / peak for the GEMM format (fp8: bool or array)."""
        return xp.where(xp.asarray(fp8, dtype=bool) & (self.mamf_fp8 > 0), self.mamf_fp8, self.mamf_bf16)

    def attention_shares(self) -> tuple[float, float]:
        """(forward, backward) share of the BF16 peak the attention kernel reaches."""
        if self.attn_fwd > 0:
            return self.attn_fwd, self.attn_bwd
        ratio = self.mamf_bf16 / A100_MAMF_BF16
        return FA2_A100_FWD * ratio, FA2_A100_BWD * ratio


# FlashAttention-3's backward was not read: its forward share times FlashAttention-2's backward/forward ratio.
_FA3_BWD = FA3_H100_FWD * FA2_A100_BWD / FA2_A100_FWD
# FlashAttention-4's backward share is not read either: its forward share times the same ratio.
_FA4_BWD = FA4_B200_FWD * FA2_A100_BWD / FA2_A100_FWD
_HOPPER = dict(mamf_bf16=794.5 / 989.0, mamf_fp8=1402.6 / 1979.0, attn_fwd=FA3_H100_FWD, attn_bwd=_FA3_BWD,
               fp8_blockwise=BLOCKWISE_FP8_HOPPER)
# SM counts: A100 108 (nvidia-matmul-guide §3.2), H100 SXM 132, B200 148 (18,944 CUDA cores / 128 per SM).
FAMILIES: dict[str, KernelFamily] = {
    "a100-80gb-sxm": KernelFamily("ampere", A100_MAMF_BF16, 0.0, 108, FA2_A100_FWD, FA2_A100_BWD),
    "h100-sxm": KernelFamily("hopper", sms=132, **_HOPPER),
    "h100-96gb-500w": KernelFamily("hopper", sms=132, **_HOPPER),  # the same GH100 part at 500 W (torchtitan's)
    "h800-sxm": KernelFamily("hopper", **_HOPPER),            # the H100's GH100 die; SM count not read
    "h200-sxm": KernelFamily("hopper", **{**_HOPPER, "mamf_fp8": 1453.4 / 1979.0}, sms=132),
    "h20": KernelFamily("hopper", **_HOPPER),                 # SM count not read
    "b200": KernelFamily("blackwell", 1745.0 / 2250.0, 3432.5 / 4500.0, 148, FA4_B200_FWD, _FA4_BWD),
    "b300": KernelFamily("blackwell", 1769.0 / 2250.0, 3353.3 / 4500.0, 0, FA3_H100_FWD, _FA3_BWD),
    "gb200-nvl72": KernelFamily("blackwell", 1822.0 / 2500.0, 3615.6 / 5000.0, 0, FA3_H100_FWD, _FA3_BWD),
    "gb300-nvl72": KernelFamily("blackwell", 1769.0 / 2250.0, 3353.3 / 4500.0, 0, FA3_H100_FWD, _FA3_BWD),
    "mi300x": KernelFamily("cdna3", 668.4 / 1300.0),
    "mi325x": KernelFamily("cdna3", 784.9 / 1300.0),
    "gaudi3": KernelFamily("gaudi", 1243.0 / 1677.0, 1289.5 / 1677.0),
    "m4-max": KernelFamily("apple-gpu", M4_MAX_FP16_GEMM / M4_MAX_PEAK_FP16, tiles=((1.0, 1.0),)),
}


def family_of(hardware_key: str) -> KernelFamily | None:
    """The measured family of a hardware preset, or None (no MAMF row: the single compute_efficiency factor)."""
    return FAMILIES.get(hardware_key)


def quantisation_share(M, N, sms=0, tiles=CUBLAS_TILES):
    """Useful share of the launched tiles (tile quantisation) and of the waves (wave quantisation, `sms` > 0),
    the best over CUBLAS_TILES (nvidia-matmul-guide §3). 1 where M, N are multiples of a tile and the tiles fill
    whole waves."""
    M, N = xp.maximum(xp.asarray(M, dtype=float), 1.0), xp.maximum(xp.asarray(N, dtype=float), 1.0)
    best = 0.0
    for tm, tn in tiles:
        tiles_m, tiles_n = xp.ceil(M / tm), xp.ceil(N / tn)
        share = M * N / (tiles_m * tm * tiles_n * tn)
        if sms > 0:
            tiles = tiles_m * tiles_n
            share = share * tiles / (xp.ceil(tiles / sms) * sms)
        best = xp.maximum(best, share)
    return best


@dataclass(frozen=True)
class Gemm:
    """One GEMM shape of a step, `count` times: C[M,N] += A[M,K]·B[K,N]; `grouped`: one expert's slice of an MoE
    grouped GEMM (GROUPED_GEMM_SHARE of the dense curve); `kind`: the weight it multiplies, an id of GEMM_KINDS
    (views give it a display name)."""

    M: object
    N: object
    K: object
    count: object = 1.0
    grouped: bool = False
    kind: str = ""

    @property
    def flops(self):
        return 2.0 * self.M * self.N * self.K * self.count


def gemm_seconds(g: Gemm, family: KernelFamily | None, peak, hbm_bw, eff_hbm, scale, fp8=False, in_bytes=2.0,
                 out_bytes=2.0, blockwise=False):
    """Seconds of one GEMM shape: max(FLOPs / rate, bytes / HBM) (module docstring). `peak` is the GEMM
    format's dense peak; without a family every FLOP runs at REFERENCE_COMPUTE_EFFICIENCY × scale of it.
    `blockwise` (with fp8): the family's measured blockwise-FP8 share where it has one."""
    if family is None:
        share = REFERENCE_COMPUTE_EFFICIENCY
    else:
        quantised = quantisation_share(g.M, g.N, family.sms, family.tiles)
        share = family.gemm_share(fp8) * quantised
        if g.grouped:
            share = share * GROUPED_GEMM_SHARE
        if family.fp8_blockwise > 0:
            on = xp.asarray(blockwise, dtype=bool) & xp.asarray(fp8, dtype=bool)
            share = xp.where(on, family.fp8_blockwise * quantised, share)
    t_math = g.flops / (peak * share * scale)
    nbytes = ((g.M * g.K + g.K * g.N) * in_bytes + g.M * g.N * out_bytes) * g.count
    return xp.maximum(t_math, nbytes / (hbm_bw * eff_hbm))


def seconds_per_flop(gemms, family, peak, hbm_bw, eff_hbm, scale, fp8=False, in_bytes=2.0, blockwise=False):
    """FLOP-weighted seconds per FLOP over a list of GEMM shapes (Σ t / Σ FLOPs)."""
    t = sum(gemm_seconds(g, family, peak, hbm_bw, eff_hbm, scale, fp8, in_bytes, blockwise=blockwise) for g in gemms)
    return t / sum(g.flops for g in gemms)


def attention_shares(family: KernelFamily | None, kernel=0) -> tuple[object, object]:
    """(forward, backward) share of the BF16 peak of the flash attention kernel; REFERENCE without a family.
    `kernel` 1 (scenario.ATTENTION_KERNELS "flash-attention-2", vectorised): FlashAttention-2's shares on the
    family (fa2_shares)."""
    if family is None:
        return REFERENCE_COMPUTE_EFFICIENCY, REFERENCE_COMPUTE_EFFICIENCY
    fwd, bwd = family.attention_shares()
    if isinstance(kernel, (int, float)) and kernel == 0:
        return fwd, bwd
    fa2_fwd, fa2_bwd = fa2_shares(family)
    fa2 = xp.asarray(kernel) == 1
    return xp.where(fa2, fa2_fwd, fwd), xp.where(fa2, fa2_bwd, bwd)


def fa2_shares(family: KernelFamily) -> tuple[float, float]:
    """FlashAttention-2's (forward, backward) share of the BF16 peak: its A100 shares on Ampere (Dao 2023), 35% of
    the H100's peak forward on Hopper and Blackwell (Shah et al. 2024 abstract: FlashAttention-2 "achieving only
    35% utilization on H100"; it uses none of Hopper's or Blackwell's new tensor-core instructions, so Blackwell
    is given the H100 share, a stated transfer), the backward at FlashAttention-2's A100 backward/forward ratio
    (not read on H100); other families keep their own transfer rule."""
    if family.key == "ampere":
        return FA2_A100_FWD, FA2_A100_BWD
    if family.key in ("hopper", "blackwell"):
        return FA2_H100_FWD, FA2_H100_FWD * FA2_A100_BWD / FA2_A100_FWD
    return family.attention_shares()


def with_backward(gemms) -> list[Gemm]:
    """A layer's forward GEMMs and their two backward GEMMs each: dgrad dX = dY·Wᵀ (M×K, reduced over N) and
    wgrad dW = Xᵀ·dY (K×N, reduced over M), each the forward's FLOPs."""
    out = []
    for g in gemms:
        out += [g, Gemm(g.M, g.K, g.N, g.count, g.grouped, g.kind), Gemm(g.K, g.N, g.M, g.count, g.grouped, g.kind)]
    return out


def bf16_peak(hw, fallback):
    """The hardware's BF16 (or FP16) dense peak, where attention runs; `fallback` where it publishes none."""
    try:
        return hw.peak("bf16")
    except ValidationError:  # a preset without a 16-bit peak (a CPU): the format's own peak
        return fallback


def runs_fp8(peak, hw) -> object:
    """Whether GEMMs run in FP8: their peak is above the 16-bit one (FP8 is the only such training/inference
    format here; integer weight-only formats are dequantised to BF16, dtypes.compute_dtype_for_weights)."""
    return xp.asarray(peak, dtype=float) > bf16_peak(hw, peak) * 1.01


def mfu_peak(peak, hw):
    """The peak MFU is quoted against: BF16 for FP8 GEMMs (NVIDIA's and Meta's convention), else the format's."""
    return xp.where(runs_fp8(peak, hw), bf16_peak(hw, peak), peak)


def layer_gemms(arch, tokens, tp, ep=1.0) -> list[Gemm]:
    """Forward GEMMs of one average layer on one TP rank for `tokens` tokens (Megatron's column/row split:
    Q/K/V and MLP-in split their outputs over TP, the output projection and MLP-down their inputs). MoE layers:
    each of E/ep local experts multiplies the tokens routed to it, tokens·k·ep/E on average; shared experts
    multiply every token. The routed experts' GEMMs are `grouped`. Counts weight the MoE and dense layers by
    their share of the layers."""
    tokens = xp.asarray(tokens, dtype=float)
    tp, ep = xp.asarray(tp, dtype=float), xp.asarray(ep, dtype=float)
    h, a = float(arch.hidden), float(arch.heads)
    v_width = a * arch.v_dim
    qkv_width = arch.attention_params() / h - v_width  # every attention weight but the output projection
    gemms = [Gemm(tokens, qkv_width / tp, h, kind="qkv"), Gemm(tokens, h, v_width / tp, kind="out_proj")]
    moe_share = arch.moe_layers / arch.layers
    up = 2.0 if arch.gated_mlp else 1.0
    if moe_share < 1.0:
        f, dense = float(arch.ffn_hidden), 1.0 - moe_share
        gemms += [Gemm(tokens, up * f / tp, h, dense, kind="mlp_up"), Gemm(tokens, h, f / tp, dense, kind="mlp_down")]
    if moe_share > 0.0:
        f = float(arch.moe_ffn_hidden or arch.ffn_hidden)
        per_expert = xp.maximum(tokens * arch.experts_per_token * ep / arch.experts, 1.0)
        local = moe_share * arch.experts / ep
        gemms += [Gemm(per_expert, up * f / tp, h, local, True, "expert_up"),
                  Gemm(per_expert, h, f / tp, local, True, "expert_down")]
        if arch.shared_experts:
            fs = f * arch.shared_experts
            gemms += [Gemm(tokens, up * fs / tp, h, moe_share, kind="shared_up"),
                      Gemm(tokens, h, fs / tp, moe_share, kind="shared_down")]
    return gemms


def logits_gemm(arch, tokens, tp) -> Gemm:
    """The output head: tokens × hidden × vocab/tp."""
    return Gemm(xp.asarray(tokens, dtype=float), arch.vocab / xp.asarray(tp, dtype=float), float(arch.hidden),
                kind="logits")



def model_flop_share_ceiling(hardware_key: str) -> float:
    """The largest share of the GEMM format's peak a step's model FLOPs can be timed at: the family's best GEMM
    share, or twice its best attention share (the flash kernel executes the causal half of the s² FLOPs that
    the MFU convention counts), at compute_efficiency = 0.5. Without a family both kernels run at the reference
    share, so the attention's causal half bounds it at twice that (Llama-3-8B at 4,096 tokens on TPU v5e: 0.55)."""
    f = family_of(hardware_key)
    if f is None:
        return 2.0 * REFERENCE_COMPUTE_EFFICIENCY
    return max(f.mamf_bf16, f.mamf_fp8, 2.0 * max(f.attention_shares()))


def prefill_gemm_rate(arch, hw, tokens, tp, peak, eff_compute, eff_hbm, head_tokens=None):
    """Achieved FLOP/s of a prefill's weight GEMMs (`tokens` = batch × new prompt tokens, forward only): Σ FLOPs /
    Σ seconds over the L layers' GEMMs and the head, at the compute format's peak (FP8 where the weights are).
    `head_tokens`: the rows of the LM head (one per sequence where only the last token's logits are computed;
    None: every token)."""
    family = family_of(hw.key)
    scale = xp.asarray(eff_compute, dtype=float) / REFERENCE_COMPUTE_EFFICIENCY
    fp8 = runs_fp8(peak, hw)
    head = logits_gemm(arch, tokens if head_tokens is None else head_tokens, tp)
    # the model's L layers beside its one head, so each GEMM weighs in the rate as it runs
    gemms = [replace(g, count=g.count * arch.layers) for g in layer_gemms(arch, tokens, tp)] + [head]
    return 1.0 / seconds_per_flop(gemms, family, peak, hw.hbm_bw, eff_hbm, scale, fp8, xp.where(fp8, 1.0, 2.0))


def prefill_attention_rate(hw, peak, eff_compute):
    """Achieved FLOP/s of prefill attention: the flash kernel's forward share of the 16-bit peak (the prefill
    counts the causal half of the scores already, as FlashAttention executes them)."""
    fwd, _ = attention_shares(family_of(hw.key))
    return bf16_peak(hw, peak) * fwd * xp.asarray(eff_compute, dtype=float) / REFERENCE_COMPUTE_EFFICIENCY


def elementwise_bytes_per_token(arch, tp, sp=False, act_bytes=2.0, fp8=False):
    """HBM bytes per token of one layer's forward memory-bound passes: two norms (read + write h each), two
    residual adds (read 2h, write h each), over h/tp under sequence parallelism; the MLP activation over f/tp
    (gated: read 2f, write f; plain: read f, write f), f the per-token active width (stated counts). FP8 GEMMs
    add the cast of each GEMM input (read 2 B, write 1 B): the QKV and MLP inputs (h each), the output
    projection's (a·d_v/tp) and MLP-down's (f/tp). MoE layers permute each token's hidden vector into its top-k
    expert copies before the experts (read h, write k·h) and sum them back after (read k·h, write h): 2h(k + 1)
    per MoE layer (megatron-dsv3-gb200 §2.1.1: the permute "copies the tokens top-k times"; a fused dispatcher
    still permutes the received copies locally), weighted by the MoE layers' share."""
    tp = xp.asarray(tp, dtype=float)
    f = arch.matmul_params_active_per_layer() - arch.attention_params()
    f = f / ((3.0 if arch.gated_mlp else 2.0) * arch.hidden)  # active MLP width per token
    sp_div = xp.where(xp.asarray(sp, dtype=bool), tp, 1.0)
    casts = xp.where(fp8, FP8_CAST_BYTES * (2.0 * arch.hidden + arch.heads * arch.v_dim / tp + f / tp), 0.0)
    moe_share = arch.moe_layers / arch.layers  # 0 for a dense model
    permute = moe_share * 2.0 * (arch.experts_per_token + 1.0) * arch.hidden
    return ((4.0 + 6.0) * arch.hidden / sp_div + (3.0 if arch.gated_mlp else 2.0) * f / tp + permute) * act_bytes \
        + casts
