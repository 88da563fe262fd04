"""The decode sweep: one GPU's decode step over an array of batch sizes or context lengths, on the roofline.

Every number is the core's decode step (`inference.inference_step`, via `run.infer_step_at`): MoE expert
touching, GQA/MLA KV sizes, TP sharding and the KV policy are the model's; the roofline (Williams et al. 2009)
places the step's weight GEMMs and its whole step as kernels against the device's peak and HBM bandwidth.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.dtypes import compute_dtype_for_weights
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.kv_residency import serving_scenario
from trinity_desktop.model.step.layout import RESERVED_FRACTION
from trinity_desktop.model.step.run import infer_step_at
from trinity_desktop.model.views.roofline_ceilings import INTENSITY_CAP, achievable_ridge, attainable


# ---------------------------------------------------------------------------------------------- decode sweep
def decode_terms(sc: Scenario, batch=None, prompt_len=None, gen_len=None) -> dict:
    """Decode-step FLOPs and bytes per GPU, separated into weight GEMMs and KV-cache reads, from
    `inference.inference_step` (so MoE expert touching, GQA/MLA KV sizes and TP sharding are the model's).
    Broadcasts over arrays of batch, prompt_len and gen_len. The attended context is prompt + gen/2."""
    served = serving_scenario(sc)  # a training scenario's decode: one TP group of its layout, no pipeline
    tp, pp = served.inference_tp, served.pp
    b = np.asarray(sc.batch if batch is None else batch, dtype=float)
    s = np.asarray(sc.prompt_len if prompt_len is None else prompt_len, dtype=float)
    g = np.asarray(sc.gen_len if gen_len is None else gen_len, dtype=float)
    r = infer_step_at(served, batch=b, prompt_len=s, gen_len=g)
    ctx = s + g / 2.0
    # the core's KV reads and attention FLOPs: the tokens its KV policy and the model's sliding window keep
    kv_read = np.asarray(r.decode_kv_read_bytes, dtype=float)
    gpus = tp * served.attention_dp * pp  # the whole batch's FLOPs over every GPU (DP-attention groups too, #23)
    attn_f = np.asarray(r.decode_attention_flops, dtype=float) / gpus
    total_f = np.asarray(r.decode_flops, dtype=float) / gpus
    weights_read = np.asarray(r.decode_weights_read_bytes, dtype=float)
    # Weights streamed when every expert is touched (the large-batch limit; = weights_read for dense models).
    streamed = r.weights_streamed_bytes
    kv_tok_gpu = r.kv_bytes_per_token_gpu
    return {"batch": b, "context": ctx, "tp": float(tp), "gemm_flops": total_f - attn_f, "attn_flops": attn_f,
            "weights_read": weights_read, "kv_read": kv_read, "kv_tok_gpu": float(kv_tok_gpu),
            "weights_streamed_all_experts": float(streamed), "weights_gpu": r.memory.weights,
            "kv_gpu": r.memory.kv_cache, "memory_total": r.memory_total}


@dataclass(frozen=True)
class DecodeSweep:
    """One GPU's decode step over an array of batch sizes or context lengths, on the roofline (Williams et al.
    2009). All SI, one GPU, one output-token step; the array fields share one shape.

    - intensity, attainable_flops_per_s, bound (True: compute): the decode weight GEMMs, the decode point that
      walks to the ridge;
    - step_intensity, step_attainable_flops_per_s, step_bound, time_per_token_s: the whole step (GEMMs +
      KV-cache reads) taken as one kernel on the roofline, max(F/P, B/BW_HBM);
    - kv_bytes (cache held), kv_read_bytes, memory_bytes, fits: weights + KV <= (1 − 0.10)·HBM
      (inference.RESERVED_FRACTION);
    - ridge_batch: closed form for the GEMMs. With W FLOP-weights per token (2·W FLOPs per sequence) and
      S weight bytes streamed per step, I(b) = 2·W·b / S, which reaches the ridge R = P/BW at
      b* = R·S / (2·W) (≈ R·bytes-per-weight/2 for a dense model: 295 for H100 bf16);
    - ridge_batch_achievable: the same at the achievable ridge R·η_c/η_hbm (`achievable_ridge`): the batch
      where the model's decode GEMM time turns from weight streaming to compute (≈ 185 for H100 bf16 at the
      default efficiencies 0.5 and 0.8);
    - ridge_batch_with_kv: the same with the KV reads included, I(b) = (2W + A)·b / (S + K·b) with A the
      attention FLOPs and K the KV bytes read per sequence: b* = R·S / (2W + A − R·K) where 2W + A > R·K;
      0.0 when the step never crosses (its intensity tends to step_intensity_limit = (2W + A)/K < R);
    - kv_fit_limit_context: the largest context where weights + KV fit, at the scenario's batch;
      kv_fit_limit_batch: the largest batch that fits at the scenario's context (0: none fits).
    MoE: S in the closed forms is every expert's weights (the large-batch limit), stated.
    """

    mode: str                     # "batch" or "context": the swept variable
    dtype: str                    # the GEMMs' compute format
    peak_flops_per_s: float
    hbm_bw: float
    ridge_flop_per_byte: float
    batch: np.ndarray
    context: np.ndarray
    gemm_flops: np.ndarray
    weights_bytes: np.ndarray
    intensity: np.ndarray
    attainable_flops_per_s: np.ndarray
    bound: np.ndarray
    step_flops: np.ndarray
    step_bytes: np.ndarray
    step_intensity: np.ndarray
    step_attainable_flops_per_s: np.ndarray
    step_bound: np.ndarray
    time_per_token_s: np.ndarray
    kv_bytes: np.ndarray
    kv_read_bytes: np.ndarray
    memory_bytes: np.ndarray
    fits: np.ndarray
    ridge_batch: float
    ridge_batch_with_kv: float
    ridge_batch_achievable: float
    step_intensity_limit: float
    kv_fit_limit_context: float
    kv_fit_limit_batch: float


def decode_sweep(scenario: Scenario, batch=None, context=None) -> DecodeSweep:
    """Decode at an array of batch sizes (default: 1 ... 4096, log-spaced) or of context lengths (`DecodeSweep`).

    With `context` given, each sequence holds and attends to `context` tokens (prompt = context, nothing
    generated yet); otherwise the scenario's prompt + gen (held) and prompt + gen/2 (attended, average).
    Arrays broadcast.
    """
    sc = scenario
    hw = sc.hardware
    dtype = compute_dtype_for_weights(sc.weight_dtype, dict(hw.peak_flops))
    peak, bw = hw.peak(dtype), hw.hbm_bw
    ridge = peak / bw
    if context is not None:
        mode = "context"
        t = decode_terms(sc, batch=batch, prompt_len=np.asarray(context, dtype=float), gen_len=0.0)
    else:
        mode = "batch"
        if batch is None:
            batch = batch_values()
        t = decode_terms(sc, batch=batch)
    gemm_f, w_read, attn_f, kv_read = t["gemm_flops"], t["weights_read"], t["attn_flops"], t["kv_read"]
    with np.errstate(divide="ignore", invalid="ignore"):
        intensity = np.where(w_read > 0, gemm_f / np.where(w_read > 0, w_read, 1.0), INTENSITY_CAP)
        step_f, step_b = gemm_f + attn_f, w_read + kv_read
        step_i = np.where(step_b > 0, step_f / np.where(step_b > 0, step_b, 1.0), INTENSITY_CAP)
    intensity, step_i = np.minimum(intensity, INTENSITY_CAP), np.minimum(step_i, INTENSITY_CAP)
    time_step = np.maximum(step_f / peak, step_b / bw)
    usable = (1.0 - RESERVED_FRACTION) * hw.hbm_bytes
    memory = t["weights_gpu"] + t["kv_gpu"]
    # Closed forms, per sequence at the scenario's batch and context.
    base = decode_terms(sc)
    b0 = float(sc.batch)
    w_per_seq = float(base["gemm_flops"]) / b0          # 2·W/tp FLOPs per sequence
    a_per_seq = float(base["attn_flops"]) / b0
    k_per_seq = float(base["kv_read"]) / b0
    S = base["weights_streamed_all_experts"]
    ridge_batch = ridge * S / w_per_seq
    ridge_batch_achievable = achievable_ridge(sc, dtype) * S / w_per_seq  # where the model's step turns
    denom = w_per_seq + a_per_seq - ridge * k_per_seq
    ridge_batch_kv = ridge * S / denom if denom > 0 else 0.0
    limit = (w_per_seq + a_per_seq) / k_per_seq if k_per_seq > 0 else INTENSITY_CAP
    held = float(sc.prompt_len + sc.gen_len)
    per_token_kv = base["kv_tok_gpu"]
    room = usable - float(base["weights_gpu"])
    kv_fit_context = max(0.0, math.floor(room / (b0 * per_token_kv))) if per_token_kv > 0 else 0.0
    kv_fit_batch = max(0.0, math.floor(room / (held * per_token_kv))) if per_token_kv > 0 else 0.0
    shape = np.broadcast_shapes(np.shape(t["batch"]), np.shape(t["context"]))
    full = lambda x: np.broadcast_to(np.asarray(x, dtype=float), shape).copy()  # noqa: E731
    return DecodeSweep(
        mode=mode, dtype=dtype, peak_flops_per_s=peak, hbm_bw=bw, ridge_flop_per_byte=ridge,
        batch=full(t["batch"]), context=full(t["context"]),
        gemm_flops=full(gemm_f), weights_bytes=full(w_read),
        intensity=full(intensity), attainable_flops_per_s=full(attainable(intensity, peak, bw)),
        bound=full(intensity >= ridge),
        step_flops=full(step_f), step_bytes=full(step_b), step_intensity=full(step_i),
        step_attainable_flops_per_s=full(attainable(step_i, peak, bw)), step_bound=full(step_i >= ridge),
        time_per_token_s=full(time_step),
        kv_bytes=full(t["kv_gpu"]), kv_read_bytes=full(kv_read), memory_bytes=full(memory),
        fits=full(memory <= usable).astype(bool),
        ridge_batch=float(ridge_batch), ridge_batch_with_kv=float(ridge_batch_kv),
        ridge_batch_achievable=float(ridge_batch_achievable),
        step_intensity_limit=float(min(limit, INTENSITY_CAP)),
        kv_fit_limit_context=float(kv_fit_context), kv_fit_limit_batch=float(kv_fit_batch))


def _rounded_stops(lo: float, hi: float, n: int) -> np.ndarray:
    """Log-spaced whole numbers lo ... hi without repeats (ascending: dropping repeats is `np.unique`, without
    the numpy.ma import `np.unique` costs at start-up)."""
    x = np.round(np.geomspace(lo, hi, n))
    return x[np.concatenate(([True], np.diff(x) > 0))]


def batch_values(n: int = 97) -> np.ndarray:
    """Log-spaced whole batch sizes 1 ... 4096 (the sweep slider's stops)."""
    return _rounded_stops(1, 4096, n)


def context_values(n: int = 97) -> np.ndarray:
    """Log-spaced context lengths 1k ... 1M tokens (2^10 ... 2^20)."""
    return _rounded_stops(1024, 1 << 20, n)

