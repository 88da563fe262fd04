"""The roofline: every ceiling of a device, and the scenario's kernels as operating points on it.

Roofline model (Williams, Waterman, Patterson 2009; the scaling book's roofline.md, reference key
"scaling-book"): a kernel doing F FLOPs and moving B bytes over a link of bandwidth BW on a device of peak
P takes max(F/P, B/BW); its attainable FLOP/s is min(P, I·BW) with arithmetic intensity I = F/B. The ridge
point P/BW is the intensity where a kernel turns compute-bound.

Conventions stated:
- Ceilings and point times use the **datasheet** peaks and bandwidths (dense FLOP/s, bandwidth per
  direction), not the scenario's `Efficiency`: the roofline is the ideal bound. `Results.time` applies the
  efficiencies; a point's `time_s` is its roofline (best-case) time.
- A point's bytes are the bytes of the link it streams over (HBM for kernels, the interconnect for
  collectives); collectives are charged bus bytes (nccl-tests factors, `comms`) and their reduction adds
  (one add per element per ring step: (n−1)/n adds per element), and no latency (α).
- `resource` is the colour key of the binding ceiling: "compute" for a compute roof, "bandwidth" for any
  data-movement roof (HBM or a link), as the pressure model counts HBM-bound time as bandwidth pressure.
  Memory capacity is not a roof: the UI marks it separately (where the KV cache stops fitting).
- Intensity of a point with no bytes is clipped to `INTENSITY_CAP` (finite; never inf or NaN).
- Offload transfers (host link, NVMe) are not points yet: the scenario has no offload technique. Their
  roofs are drawn.
"""

from __future__ import annotations

import math

from trinity_desktop.model.base.dtypes import (
    ACTIVATION_BYTES,
    BYTES_PER_ELEMENT,
    OPTIMIZER_STATE_BYTES,
    TRAIN_PRECISION_BYTES,
)
from trinity_desktop.model.formulas import flash_io
from trinity_desktop.model.formulas.comms import (
    BUS_FACTOR_SOURCE,
    allreduce_bus_factor,
    gather_bus_factor,
    link_for_group,
)
from trinity_desktop.model.formulas.flops import attention_core_flops_per_token
from trinity_desktop.model.formulas.kernel_efficiency import layer_gemms
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.kv_residency import serving_scenario
from trinity_desktop.model.step.layout import INFERENCE_ACT_BYTES
from trinity_desktop.model.step.run import train_step_of
from trinity_desktop.model.views.decode_sweep import (
    batch_values,
    context_values,
    decode_sweep,
    decode_terms,
)
from trinity_desktop.model.views.roofline_ceilings import (
    ADAM_FLOPS_PER_PARAM,
    COMPUTE_DTYPES,
    DTYPE_LABELS,
    INTENSITY_CAP,
    LINK_LABELS,
    POINT_ROLES,
    ROOFLINE_SOURCE,
    Ceiling,
    OperatingPoint,
    Roofline,
    _point,
    achievable_ridge,
    attainable,
    bound_by_achievable,
    ceilings,
    compute_ceiling,
    link_ceiling,
    link_efficiency,
    ridge_flop_per_byte,
    scenario_dtype,
)
from trinity_desktop.model.views.roofline_moe import ep_decode_points  # MoE serving with EP (#23)
from trinity_desktop.model.views.roofline_speculative import verify_points
from trinity_desktop.model.views.roofline_stages import (
    STAGE_POINT,
    stage_bytes,
    stage_duration,
    stage_operating_point,
)

__all__ = ["ADAM_FLOPS_PER_PARAM", "COMPUTE_DTYPES", "DTYPE_LABELS", "INTENSITY_CAP", "LINK_LABELS", "POINT_ROLES",
           "RIDGE_DEFINITIONS", "ROOFLINE_SOURCE", "STAGE_POINT", "Ceiling", "OperatingPoint", "Roofline",
           "achievable_ridge", "attainable", "batch_values", "bound_by_achievable", "ceilings", "compute_ceiling",
           "context_values", "decode_sweep", "decode_terms", "link_ceiling", "link_efficiency", "operating_points",
           "ridge_flop_per_byte", "roofline", "roofline_json", "scenario_dtype", "sram_bytes_for_flash",
           "stage_bytes", "stage_duration", "stage_operating_point"]

def _link_of(n: float, stride: float, sc: Scenario) -> str:
    _, _, intra = link_for_group(n, stride, sc.gpus_per_node, sc.hardware, 1.0)
    return "scale-up" if bool(intra) else "scale-out"


def _gemm_name(kind: str, arch) -> str:
    """Display name of a `layer_gemms` GEMM kind (kernel_efficiency.GEMM_KINDS)."""
    up = "MLP up+gate GEMM" if arch.gated_mlp else "MLP up GEMM"
    names = {"qkv": "QKV GEMM", "out_proj": "out-projection GEMM", "mlp_up": up, "mlp_down": "MLP down GEMM",
             "expert_up": up + " (routed experts)", "expert_down": "MLP down GEMM (routed experts)",
             "shared_up": up + " (shared experts)", "shared_down": "MLP down GEMM (shared experts)"}
    name = names[kind]
    return name + " (dense layers)" if arch.is_moe and kind in ("mlp_up", "mlp_down") else name


def _gemm_points(sc: Scenario, gemms, act_bytes: float, weight_bytes: float, passes: float, ceils, dtype: str,
                 scope: str) -> list[OperatingPoint]:
    """One point per GEMM of `kernel_efficiency.layer_gemms` (the shapes and counts the step times): FLOPs
    passes·2MNK·count; HBM bytes passes·count·(act·(MK + MN) + weight·KN), the input and output activations and the
    weights. Forward + backward = 3 passes (forward, data gradient, weight gradient), each reading two of the three
    operands and writing one. Counts weight an average layer: the dense and MoE layers by their share, the routed
    experts by the E/EP local experts."""
    pts = []
    for g in gemms:
        M, N, K, count = float(g.M), float(g.N), float(g.K), float(g.count)
        nbytes = passes * count * (act_bytes * (M * K + M * N) + weight_bytes * K * N)
        what = f"m = {M:,.0f} tokens, k = {K:,.0f}, n = {N:,.0f}"
        if g.grouped:
            what += f"; {count:,.3g} local experts per layer (E/EP), each on k·EP/E of the tokens, as one grouped GEMM"
        elif count != 1.0:
            what += f"; × {count:.3g} (the share of the layers)"
        pts.append(_point(_gemm_name(g.kind, sc.model), g.flops * passes, nbytes, "hbm", dtype, ceils, scope,
                          what + ("; 3 GEMMs (fwd, dX, dW)" if passes == 3.0 else "")))
    return pts


def _attention_points(sc: Scenario, ceils, dtype: str, *, N: float, q_frac: float, heads: float,
                      batch: float, act_bytes: float, backward: bool, scope: str) -> list[OperatingPoint]:
    arch, hw = sc.model, sc.hardware
    d = float(arch.qk_dim)
    fwd = batch * N * q_frac * attention_core_flops_per_token(N, heads, arch.qk_dim, arch.v_dim)
    m_bytes = sram_bytes_for_flash(hw)
    std_bytes = flash_io.standard_attention_hbm_bytes(N, d, heads, batch, act_bytes, backward, masked=True) * q_frac
    fa_bytes = flash_io.flash_attention_hbm_bytes(N, d, heads, batch, m_bytes, act_bytes, backward) * q_frac
    # Training: backward = 2 x forward; FlashAttention recomputes the forward once more (flops.training_flops).
    std_flops = float(fwd) * (3.0 if backward else 1.0)
    fa_flops = float(fwd) * (4.0 if backward else 1.0)
    bc, br = flash_io.block_sizes(m_bytes, d, act_bytes)
    fa_note = (f"Dao et al. 2022 Alg. 1{' + 4' if backward else ''}: B_c = {bc:.0f}, B_r = {br:.0f} "
               f"with M = {m_bytes / 1024:.0f} KiB SRAM per SM; no N×N matrix in HBM")
    std_note = ("Alg. 0" + (" + 3" if backward else "") + " with a causal-mask pass: S, P"
                + (", dP, dS" if backward else "") + " round-trip through HBM")
    std = ("attention (standard)", std_flops, float(std_bytes), std_note)
    fa = ("attention (FlashAttention)", fa_flops, float(fa_bytes), fa_note)
    chosen, other = (fa, std) if sc.flash_attention else (std, fa)
    out = [_point(chosen[0], chosen[1], chosen[2], "hbm", dtype, ceils, scope, chosen[3], role="attention")]
    out.append(_point(other[0] + " — comparison", other[1], other[2], "hbm", dtype, ceils, scope,
                      other[3] + " (not selected in the scenario)", role="attention_comparison"))
    return out


def sram_bytes_for_flash(hw: Hardware) -> float:
    """FlashAttention's M: one SM's shared memory (`sram_per_core_bytes`), else the paper's 100 KB."""
    return float(hw.sram_per_core_bytes) if hw.sram_per_core_bytes > 0 else flash_io.DEFAULT_SRAM_BYTES


def _collective_point(name: str, n: float, stride: float, nbytes: float, elem_bytes: float, bus_factor,
                      sc: Scenario, ceils, dtype: str, scope: str, note: str, role: str) -> OperatingPoint:
    elements = nbytes / elem_bytes
    adds = (n - 1.0) / n * elements  # reduce-scatter phase: one add per element received per ring step
    bus = float(bus_factor(n)) * nbytes
    return _point(name, adds, bus, _link_of(n, stride, sc), dtype, ceils, scope,
                  note + f"; bus bytes per nccl-tests ({BUS_FACTOR_SOURCE}); FLOPs = (n−1)/n reduction adds "
                  "per element; latency not drawn", role=role)


def _train_points(sc: Scenario, ceils) -> list[OperatingPoint]:
    arch = sc.model
    dtype = sc.precision
    w_b, g_b, master = TRAIN_PRECISION_BYTES[sc.precision]
    e = ACTIVATION_BYTES[sc.precision]
    tp, cp = float(sc.tp), float(sc.cp)
    s_local = sc.seq_len / cp
    m = sc.micro_batch * s_local
    scope = "per layer, per micro-batch, one GPU, forward + backward"
    # the training step's GEMMs (train_compute): the micro-batch's b·s/cp tokens, TP and EP of the layout
    pts = _gemm_points(sc, layer_gemms(arch, m, tp, float(sc.ep)), e, w_b, 3.0, ceils, dtype, scope)
    pts += _attention_points(sc, ceils, dtype, N=float(sc.seq_len), q_frac=1.0 / cp, heads=arch.heads / tp,
                             batch=float(sc.micro_batch), act_bytes=e, backward=True, scope=scope)
    # Optimizer: the bytes training_step streams, local state · (2K + g + w) (its `optimizer_bytes`: on the GPU's
    # HBM, or under ZeRO-Offload the host's memory), and the local parameters they belong to.
    r = train_step_of(sc)
    opt_bytes = float(r.pieces.optimizer_bytes)
    k_bytes = master + OPTIMIZER_STATE_BYTES[sc.optimizer]
    local = opt_bytes / (2.0 * k_bytes + g_b + w_b)
    pts.append(_point("optimizer step", ADAM_FLOPS_PER_PARAM * local, opt_bytes, "hbm", dtype, ceils,
                      "per step, one GPU",
                      f"streams {local:,.0f} local parameters' states; ~{ADAM_FLOPS_PER_PARAM:.0f} FLOPs per "
                      "parameter assumed for AdamW", role="optimizer"))
    host_bytes = float(r.bytes_by_link.host)
    if sc.offload != "none" and host_bytes > 0:
        # The work each byte over the host link serves: the CPU's AdamW step for ZeRO-Offload, the GPU's
        # forward and backward for vDNN's activation swaps. Left of the PCIe ridge, the transfer cannot hide.
        if sc.offload in ("optimizer", "nvme"):
            work, what = ADAM_FLOPS_PER_PARAM * local, "ZeRO-Offload: gradients down, updated weights up"
        else:
            work = float(r.hardware_flops) / sc.gpus
            what = "vDNN: activations out in the forward, back in the backward"
        pts.append(_point("offload transfer (host link)", work, host_bytes, "host", dtype, ceils,
                          "per step, one GPU", what + "; FLOPs = the work those bytes serve", role="offload"))
    if sc.tp > 1:
        pts.append(_collective_point("TP all-reduce", tp, 1.0, m * arch.hidden * e, e, allreduce_bus_factor, sc,
                                     ceils, dtype, "one all-reduce of a layer, per micro-batch, one GPU",
                                     "Megatron-LM: 4 per layer per micro-batch (6 with full recompute)", "tp_allreduce"))
    dp = float(sc.dp)
    if dp > 1:
        grads = float(r.pieces.dense_grad_bytes)
        if sc.zero == 0:
            name, factor = "DP gradient all-reduce", allreduce_bus_factor
        else:
            name, factor = f"DP gradient reduce-scatter (ZeRO-{sc.zero})", gather_bus_factor
        pts.append(_collective_point(name, dp, tp * cp, grads, g_b, factor, sc, ceils, dtype,
                                     "per step, one GPU", "dense gradients of this rank (expert gradients "
                                     "reduce over the expert-data-parallel group and are not drawn)", "dp_grad_sync"))
    return pts


def _prefill_points(sc: Scenario, ceils) -> list[OperatingPoint]:
    arch = sc.model
    dtype = scenario_dtype(sc)
    tp = float(sc.inference_tp)
    w_b = BYTES_PER_ELEMENT[sc.weight_dtype]
    e = INFERENCE_ACT_BYTES
    m = float(sc.batch * sc.prompt_len)
    scope = "per layer, whole prompt batch, one GPU, forward"
    # the prefill step's GEMMs (kernel_efficiency.prefill_gemm_rate: every expert local, as the step times them)
    pts = _gemm_points(sc, layer_gemms(arch, m, tp), e, w_b, 1.0, ceils, dtype, scope)
    pts += _attention_points(sc, ceils, dtype, N=float(sc.prompt_len), q_frac=1.0, heads=arch.heads / tp,
                             batch=float(sc.batch), act_bytes=e, backward=False, scope=scope)
    if tp > 1:
        pts.append(_collective_point("TP all-reduce", tp, 1.0, m * arch.hidden * e, e, allreduce_bus_factor, sc,
                                     ceils, dtype, "one all-reduce of a layer, one GPU",
                                     "2 per layer (after attention and after the MLP)", "tp_allreduce"))
    return pts


def _decode_points(sc: Scenario, ceils) -> list[OperatingPoint]:
    dtype = scenario_dtype(sc)
    t = decode_terms(sc)
    scope = "per output token step (all layers), one GPU"
    # MoE serving with EP (#23, roofline_moe.py): dense and expert GEMMs at their own token counts
    pts = ep_decode_points(sc, t, ceils, dtype, scope) or [
        _point("decode GEMMs (weights)", t["gemm_flops"], t["weights_read"], "hbm", dtype, ceils, scope,
                  f"batch {sc.batch}, {sc.weight_dtype} weights streamed once per step", role="decode_gemms"),
           _point("decode KV-cache reads", t["attn_flops"], t["kv_read"], "hbm", dtype, ceils, scope,
                  f"attention over the average context {float(t['context']):,.0f} tokens "
                  f"({sc.kv_dtype} KV cache)", role="decode_kv_reads")]
    tp = serving_scenario(sc).inference_tp
    if tp > 1:
        msg = sc.batch * sc.model.hidden * INFERENCE_ACT_BYTES
        pts.append(_collective_point("TP all-reduce", float(tp), 1.0, msg, INFERENCE_ACT_BYTES, allreduce_bus_factor, sc,
                                     ceils, dtype, "one all-reduce of a layer, one GPU",
                                     "2 per layer per token step", "tp_allreduce"))
    pts += verify_points(sc, ceils, dtype, scope)  # speculative decoding (#23): the verify step, when on
    return pts


def operating_points(scenario: Scenario) -> tuple[OperatingPoint, ...]:
    """The scenario's kernels as roofline points (see the module docstring for the conventions).

    Training and prefill: one layer's QKV, out-projection and MLP GEMMs after TP sharding, attention
    (the selected algorithm, plus the other one named "... — comparison"), the TP all-reduce; training adds
    the optimizer step, the DP gradient collective and, when offload is on, the host-link transfer. Decode: the weight GEMMs at the current batch and
    the KV-cache reads at the average context, plus the TP all-reduce."""
    ceils = ceilings(scenario.hardware)
    if scenario.kind == "train":
        pts = _train_points(scenario, ceils)
    elif scenario.kind == "prefill":
        pts = _prefill_points(scenario, ceils)
    else:
        pts = _decode_points(scenario, ceils)
    return tuple(pts)


def roofline(scenario: Scenario) -> Roofline:
    dtype = scenario_dtype(scenario)
    hw = scenario.hardware
    return Roofline(hardware_key=hw.key, dtype=dtype, ceilings=ceilings(hw), points=operating_points(scenario),
                    ridge_flop_per_byte=ridge_flop_per_byte(hw, dtype))


def _finite(x: float) -> float:
    x = float(x)
    return x if math.isfinite(x) else 0.0


RIDGE_DEFINITIONS = {
    "ridge_flop_per_byte": "datasheet ridge: peak FLOP/s / HBM bandwidth (Williams et al. 2009); each point's "
                           "bound_by compares it with the datasheet ceilings",
    "ridge_achievable_flop_per_byte": "achievable ridge: achievable FLOP/s (the kernel curves' best GEMM share "
                                      "of peak, or compute_efficiency; pressure.achievable_compute) / (HBM bandwidth x "
                                      "hbm_efficiency); where the model's kernel times turn from bandwidth- to "
                                      "compute-bound; each point's bound_by_achievable uses these ceilings",
    "bottleneck": "the whole step's binding resource (model/formulas/pressure.py): memory at >= 90% of HBM, else the "
                  "larger of the FLOP utilisation and the busiest link's utilisation, both against datasheet "
                  "peaks, counting every byte of the step (KV reads and collectives too)",
}


def roofline_json(scenario: Scenario) -> dict:
    """The CLI's `roofline` key: the datasheet and the achievable ridge, what each ridge and the bottleneck
    mean (`ridge_definitions`), ceilings [{name, kind, value}], points [{name, flops, bytes, intensity,
    attainable_flops_per_s, bound_by (datasheet ceilings), bound_by_achievable (derated ceilings)}].
    SI units; every number finite."""
    r = roofline(scenario)
    return {
        "ridge_flop_per_byte": _finite(r.ridge_flop_per_byte),
        "ridge_achievable_flop_per_byte": _finite(achievable_ridge(scenario, r.dtype)),
        "ridge_definitions": dict(RIDGE_DEFINITIONS),
        "ceilings": [{"name": c.name, "kind": c.kind, "value": _finite(c.value)} for c in r.ceilings],
        "points": [{"name": p.name, "flops": _finite(p.flops), "bytes": _finite(p.bytes),
                    "intensity": _finite(p.intensity), "attainable_flops_per_s": _finite(p.attainable_flops_per_s),
                    "bound_by": p.bound_by, "bound_by_achievable": bound_by_achievable(scenario, p, r.ceilings)}
                   for p in r.points],
    }

