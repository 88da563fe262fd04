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
from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.dtypes import (
    ACTIVATION_BYTES,
    BYTES_PER_ELEMENT,
    OPTIMIZER_STATE_BYTES,
    TRAIN_PRECISION_BYTES,
    compute_dtype_for_weights,
)
from trinity_desktop.model.formulas import flash_io
from trinity_desktop.model.formulas.comms import (
    BUS_FACTOR_SOURCE,
    allreduce_bus_factor,
    gather_bus_factor,
    link_for_group,
)
from trinity_desktop.model.formulas.flops import attention_core_flops_per_token
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.kv_residency import serving_scenario
from trinity_desktop.model.step.layout import INFERENCE_ACT_BYTES, RESERVED_FRACTION
from trinity_desktop.model.step.run import infer_step_at, train_step_of
from trinity_desktop.model.step.training import stage_params

# What an operating point is (`OperatingPoint.role`): a layer GEMM, the selected attention and the other one drawn
# for comparison, the optimizer step, the offload transfer, the TP all-reduce, the DP gradient collective, the
# decode step's weight GEMMs and its KV-cache reads.
POINT_ROLES = ("gemm", "attention", "attention_comparison", "optimizer", "offload", "tp_allreduce", "dp_grad_sync",
               "decode_gemms", "decode_kv_reads")
INTENSITY_CAP = 1e6          # FLOP/B used for a point that moves no bytes (clipped, stated)
ADAM_FLOPS_PER_PARAM = 10.0  # AdamW per parameter: 2 moment updates (2 mul + 1 add each), bias
                             # corrections, sqrt, divide, weight decay and the update ≈ 10 FLOPs (assumed)
ROOFLINE_SOURCE = "scaling-book"
COMPUTE_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8")
DTYPE_LABELS = {"fp32": "FP32", "tf32": "TF32", "bf16": "BF16", "fp16": "FP16", "fp8": "FP8", "int8": "INT8"}
LINK_LABELS = {"hbm": "HBM", "sram": "SRAM", "l2": "L2", "scale-up": "scale-up", "host": "host",
               "scale-out": "scale-out", "nvme": "NVMe"}


@dataclass(frozen=True)
class Ceiling:
    """One roof: a compute peak (FLOP/s, `link` "") or a data-movement bandwidth (B/s, `link` named)."""

    name: str
    kind: str                     # "compute" | "bandwidth"
    value: float                  # FLOP/s or B/s
    link: str                     # "" for compute, else "hbm" | "sram" | "l2" | "scale-up" | "host" | ...
    source: str
    dtypes: tuple[str, ...] = ()  # compute roofs: the formats that run at this peak
    detail: str = ""              # the link's name (e.g. "NVLink 4 (NVSwitch)") or the peak's note


@dataclass(frozen=True)
class OperatingPoint:
    name: str
    flops: float
    bytes: float
    link: str                     # the ceiling's link the bytes stream over
    resource: str                 # "compute" | "bandwidth" | "memory": colour key of the binding roof
    time_s: float                 # roofline time max(F/P, B/BW) at datasheet peaks
    bound_by: str                 # name of the binding ceiling
    attainable_flops_per_s: float
    dtype: str = ""
    scope: str = ""               # what the FLOPs and bytes count, e.g. "per layer, per micro-batch, one GPU"
    note: str = ""
    role: str = ""                # what the kernel is, an id of POINT_ROLES (stages match points by it)

    @property
    def intensity(self) -> float:
        """FLOP per byte; a point that moves no bytes is clipped to INTENSITY_CAP (never inf/NaN)."""
        if self.bytes <= 0:
            return INTENSITY_CAP
        return min(self.flops / self.bytes, INTENSITY_CAP)


@dataclass(frozen=True)
class Roofline:
    hardware_key: str
    dtype: str
    ceilings: tuple[Ceiling, ...]
    points: tuple[OperatingPoint, ...]
    ridge_flop_per_byte: float

    def ceiling(self, name: str) -> Ceiling:
        for c in self.ceilings:
            if c.name == name:
                return c
        raise KeyError(name)

    def point(self, name: str) -> OperatingPoint:
        for p in self.points:
            if p.name == name:
                return p
        raise KeyError(name)


# ---------------------------------------------------------------------------------------------- ceilings
def attainable(intensity, peak, bw):
    """Attainable FLOP/s: min(peak, intensity · bandwidth). Broadcasts over arrays."""
    return np.minimum(np.asarray(peak, dtype=float), np.asarray(intensity, dtype=float) * np.asarray(bw, dtype=float))


def ceilings(hw: Hardware) -> tuple[Ceiling, ...]:
    """Every roof of a device: compute per published dense format, then each data-movement link.

    Compute: FP32, TF32, BF16/FP16, FP8, INT8 as published (dense); formats with the same peak share one
    roof (named "BF16/FP16", "FP8/INT8"). Bandwidth: HBM, then the on-chip SRAM and L2 roofs **only if
    the hardware carries a bandwidth for them** (`sram_bw`, `l2_bw` attributes): the presets give SRAM and
    L2 *sizes* but no source in resources/ gives an aggregate on-chip bandwidth, so those roofs are
    omitted rather than invented. Then scale-up, host (PCIe), scale-out and NVMe; links with 0 bandwidth
    (absent on this device) are skipped.
    """
    out: list[Ceiling] = []
    groups: dict[float, list[str]] = {}
    for dt in COMPUTE_DTYPES:
        if dt in hw.peak_flops:
            groups.setdefault(float(hw.peak_flops[dt]), []).append(dt)
    for value, dts in sorted(groups.items()):
        name = "/".join(DTYPE_LABELS[d] for d in dts)
        key = f"peak_{dts[0]}"
        out.append(Ceiling(name=name, kind="compute", value=value, link="", source=hw.sources.get(key, ""),
                           dtypes=tuple(dts), detail=hw.notes.get(key, "")))
    links = [("hbm", "HBM", hw.hbm_bw, "hbm_bw", "HBM"),
             ("sram", "SRAM", float(getattr(hw, "sram_bw", 0.0) or 0.0), "sram_bw", "on-chip SRAM"),
             ("l2", "L2", float(getattr(hw, "l2_bw", 0.0) or 0.0), "l2_bw", "L2 cache"),
             ("scale-up", "scale-up", hw.scaleup_bw, "scaleup_bw", hw.scaleup_name),
             ("host", "host", hw.host_link_bw, "host_link_bw", hw.host_link_name),
             ("scale-out", "scale-out", hw.scaleout_bw, "scaleout_bw", hw.scaleout_name),
             ("nvme", "NVMe", hw.nvme_bw, "nvme_bw", "local NVMe")]
    for link, name, bw, key, detail in links:
        if bw > 0:
            out.append(Ceiling(name=name, kind="bandwidth", value=float(bw), link=link,
                               source=hw.sources.get(key, ""), detail=detail))
    return tuple(out)


def compute_ceiling(ceils: tuple[Ceiling, ...], dtype: str) -> Ceiling:
    """The compute roof a format runs at (fp16 and bf16, tf32 and fp32 stand in as Hardware.peak does)."""
    fallback = {"bf16": "fp16", "fp16": "bf16", "tf32": "fp32"}.get(dtype, dtype)
    for want in (dtype, fallback):
        for c in ceils:
            if c.kind == "compute" and want in c.dtypes:
                return c
    raise KeyError(dtype)


def link_ceiling(ceils: tuple[Ceiling, ...], link: str) -> Ceiling:
    for c in ceils:
        if c.kind == "bandwidth" and c.link == link:
            return c
    raise KeyError(link)


def scenario_dtype(sc: Scenario) -> str:
    """The format the scenario's GEMMs run in: the training precision, or the inference compute format."""
    if sc.kind == "train":
        return sc.precision
    return compute_dtype_for_weights(sc.weight_dtype, dict(sc.hardware.peak_flops))


def ridge_flop_per_byte(hw: Hardware, dtype: str) -> float:
    """Ridge point against HBM: peak(dtype) / HBM bandwidth (Hardware.ridge_point)."""
    return hw.ridge_point(dtype)


# ---------------------------------------------------------------------------------------------- points
def _point(name: str, flops: float, nbytes: float, link: str, dtype: str, ceils: tuple[Ceiling, ...],
           scope: str, note: str = "", role: str = "gemm") -> OperatingPoint:
    flops, nbytes = max(float(flops), 0.0), max(float(nbytes), 0.0)
    comp = compute_ceiling(ceils, dtype)
    roof = link_ceiling(ceils, link)
    t_c = flops / comp.value
    t_b = nbytes / roof.value
    compute_bound = t_c >= t_b
    time = max(t_c, t_b)
    return OperatingPoint(name=name, flops=flops, bytes=nbytes, link=link,
                          resource="compute" if compute_bound else "bandwidth", time_s=time,
                          bound_by=comp.name if compute_bound else roof.name,
                          attainable_flops_per_s=flops / time if time > 0 else 0.0, dtype=dtype, scope=scope,
                          note=note, role=role)


def _link_of(n: float, stride: float, sc: Scenario) -> str:
    _, _, intra = link_for_group(n, stride, sc.gpus_per_node, sc.hardware, 1.0)
    return "scale-up" if bool(intra) else "scale-out"


def _gemm(m: float, k: float, n: float, act_bytes: float, weight_bytes: float, passes: float):
    """(FLOPs, HBM bytes) of `passes` GEMMs of an (m×k)·(k×n) product: 2mkn FLOPs each, bytes = the
    input (m×k) and output (m×n) activations and the weights (k×n). Forward + backward = 3 passes
    (forward, data gradient, weight gradient), each reading two of the three operands and writing one."""
    return passes * 2.0 * m * k * n, passes * (act_bytes * (m * k + m * n) + weight_bytes * k * n)


def _layer_gemm_shapes(sc: Scenario, tp: float) -> list[tuple[str, float, float, float]]:
    """(name, token fraction, k, n) of one layer's GEMMs after tensor-parallel sharding (Megatron-LM:
    QKV and MLP-up split by columns, out-projection and MLP-down by rows). MLA's low-rank projections are
    taken as one dense GEMM with the same weight count. MoE: one routed expert's GEMMs, which see
    k/E of the tokens (expected under uniform routing)."""
    a = sc.model
    h = float(a.hidden)
    out_w = a.heads * a.v_dim * h
    if a.attention == "mla":
        qkv_n = (a.attention_params() - out_w) / h
    else:
        qkv_n = float(a.heads * a.qk_dim + 2 * a.kv_heads * a.head_dim)
    shapes = [("QKV GEMM", 1.0, h, qkv_n / tp), ("out-projection GEMM", 1.0, a.heads * a.v_dim / tp, h)]
    f = float(a.moe_ffn_hidden or a.ffn_hidden) if a.is_moe else float(a.ffn_hidden)
    frac = a.experts_per_token / a.experts if a.is_moe else 1.0
    suffix = " (one expert)" if a.is_moe else ""
    up = "MLP up+gate GEMM" if a.gated_mlp else "MLP up GEMM"
    shapes.append((up + suffix, frac, h, (2.0 if a.gated_mlp else 1.0) * f / tp))
    shapes.append(("MLP down GEMM" + suffix, frac, f / tp, h))
    return shapes


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
    pts = []
    for name, frac, k, n in _layer_gemm_shapes(sc, tp):
        f, b = _gemm(m * frac, k, n, e, w_b, 3.0)
        pts.append(_point(name, f, b, "hbm", dtype, ceils, scope,
                          f"m = {m * frac:,.0f} tokens, k = {k:,.0f}, n = {n:,.0f}; 3 GEMMs (fwd, dX, dW)"))
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
        psi_dense, _ = stage_params(arch, sc.tp, sc.pp, sc.ep)
        grads = float(psi_dense) * g_b
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
    pts = []
    for name, frac, k, n in _layer_gemm_shapes(sc, tp):
        f, b = _gemm(m * frac, k, n, e, w_b, 1.0)
        pts.append(_point(name, f, b, "hbm", dtype, ceils, scope,
                          f"m = {m * frac:,.0f} tokens, k = {k:,.0f}, n = {n:,.0f}"))
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
    pts = [_point("decode GEMMs (weights)", t["gemm_flops"], t["weights_read"], "hbm", dtype, ceils, scope,
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
    "ridge_achievable_flop_per_byte": "achievable ridge: (peak x compute_efficiency) / (HBM bandwidth x "
                                      "hbm_efficiency); where the model's kernel times turn from bandwidth- to "
                                      "compute-bound; each point's bound_by_achievable uses these ceilings",
    "bottleneck": "the whole step's binding resource (model/formulas/pressure.py): memory at >= 90% of HBM, else the "
                  "larger of the FLOP utilisation and the busiest link's utilisation, both against datasheet "
                  "peaks, counting every byte of the step (KV reads and collectives too)",
}


def link_efficiency(sc: Scenario, link: str) -> float:
    """The share of a ceiling the model's times assume: efficiency.hbm for HBM, efficiency.network for the
    device links, 1 for on-chip SRAM and L2 (not derated by the model)."""
    eff = sc.efficiency
    if link == "hbm":
        return eff.hbm
    return eff.network if link in ("scale-up", "scale-out", "host", "nvme") else 1.0


def achievable_ridge(sc: Scenario, dtype: str | None = None) -> float:
    """FLOP per HBM byte where the model's roofline time max(F / (P·η_c), B / (BW·η_hbm)) turns."""
    hw = sc.hardware
    return hw.peak(dtype or scenario_dtype(sc)) * sc.efficiency.compute / (hw.hbm_bw * sc.efficiency.hbm)


def bound_by_achievable(sc: Scenario, p: OperatingPoint, ceils: tuple[Ceiling, ...]) -> str:
    """The ceiling that binds the point once every ceiling is derated by the efficiency the model uses."""
    comp, roof = compute_ceiling(ceils, p.dtype), link_ceiling(ceils, p.link)
    t_c = p.flops / (comp.value * sc.efficiency.compute)
    t_b = p.bytes / (roof.value * link_efficiency(sc, p.link))
    return comp.name if t_c >= t_b else roof.name


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
    attn_f = np.asarray(r.decode_attention_flops, dtype=float) / (tp * pp)
    total_f = np.asarray(r.decode_flops, dtype=float) / (tp * pp)
    weights_read = np.asarray(r.decode_weights_read_bytes, dtype=float)
    # Weights streamed when every expert is touched (the large-batch limit; = weights_read for dense models).
    streamed = r.weights_streamed_bytes
    kv_tok_gpu = r.kv_bytes_per_token_gpu
    return {"batch": b, "context": ctx, "tp": float(tp), "gemm_flops": total_f - attn_f, "attn_flops": attn_f,
            "weights_read": weights_read, "kv_read": kv_read, "kv_tok_gpu": float(kv_tok_gpu),
            "weights_streamed_all_experts": float(streamed), "weights_gpu": r.memory.weights,
            "kv_gpu": r.memory.kv_cache, "memory_total": r.memory_total}


def decode_sweep(scenario: Scenario, batch=None, context=None) -> dict:
    """Decode at an array of batch sizes (default: 1 ... 4096, log-spaced) or of context lengths.

    With `context` given, each sequence holds and attends to `context` tokens (prompt = context, nothing
    generated yet); otherwise the scenario's prompt + gen (held) and prompt + gen/2 (attended, average).
    Arrays broadcast. Returned (all SI, one GPU, one output-token step):

    - "intensity", "attainable_flops_per_s", "bound" (0 bandwidth, 1 compute): the decode weight GEMMs,
      the decode point that walks to the ridge;
    - "step_intensity", "step_attainable_flops_per_s", "step_bound", "time_per_token_s": the whole step
      (GEMMs + KV-cache reads) taken as one kernel on the roofline, max(F/P, B/BW_HBM);
    - "kv_bytes" (cache held), "kv_read_bytes", "memory_bytes", "fits": weights + KV <= (1 − 0.10)·HBM
      (inference.RESERVED_FRACTION);
    - "ridge_batch": closed form for the GEMMs. With W FLOP-weights per token (2·W FLOPs per sequence) and
      S weight bytes streamed per step, I(b) = 2·W·b / S, which reaches the ridge R = P/BW at
      b* = R·S / (2·W) (≈ R·bytes-per-weight/2 for a dense model: 295 for H100 bf16);
    - "ridge_batch_achievable": the same at the achievable ridge R·η_c/η_hbm (`achievable_ridge`): the batch
      where the model's decode GEMM time turns from weight streaming to compute (≈ 185 for H100 bf16 at the
      default efficiencies 0.5 and 0.8);
    - "ridge_batch_with_kv": the same with the KV reads included, I(b) = (2W + A)·b / (S + K·b) with A the
      attention FLOPs and K the KV bytes read per sequence: b* = R·S / (2W + A − R·K) where 2W + A > R·K;
      0.0 when the step never crosses (its intensity tends to "step_intensity_limit" = (2W + A)/K < R);
    - "kv_fit_limit_context": the largest context where weights + KV fit, at the scenario's batch;
      "kv_fit_limit_batch": the largest batch that fits at the scenario's context (0: none fits).
    MoE: S in the closed forms is every expert's weights (the large-batch limit), stated.
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
    return {
        "mode": mode, "dtype": dtype, "peak_flops_per_s": peak, "hbm_bw": bw, "ridge_flop_per_byte": ridge,
        "batch": full(t["batch"]), "context": full(t["context"]),
        "gemm_flops": full(gemm_f), "weights_bytes": full(w_read),
        "intensity": full(intensity), "attainable_flops_per_s": full(attainable(intensity, peak, bw)),
        "bound": full(intensity >= ridge),
        "step_flops": full(step_f), "step_bytes": full(step_b), "step_intensity": full(step_i),
        "step_attainable_flops_per_s": full(attainable(step_i, peak, bw)), "step_bound": full(step_i >= ridge),
        "time_per_token_s": full(time_step),
        "kv_bytes": full(t["kv_gpu"]), "kv_read_bytes": full(kv_read), "memory_bytes": full(memory),
        "fits": full(memory <= usable).astype(bool),
        "ridge_batch": float(ridge_batch), "ridge_batch_with_kv": float(ridge_batch_kv),
        "ridge_batch_achievable": float(ridge_batch_achievable),
        "step_intensity_limit": float(min(limit, INTENSITY_CAP)),
        "kv_fit_limit_context": float(kv_fit_context), "kv_fit_limit_batch": float(kv_fit_batch),
    }


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


# --- which operating point a step-through stage is (the flow panel drives the roofline with it) -------
STAGE_POINT = "highlighted stage (FLOPs ÷ bytes, FLOPs ÷ stage time)"


def stage_bytes(numbers: dict) -> tuple[float, str]:
    """(bytes, link) a stage streams: its HBM bytes, or its largest link's when it moves none over HBM."""
    links = {k: float(v) for k, v in dict(numbers.get("bytes_by_link") or {}).items()
             if math.isfinite(float(v)) and float(v) > 0}
    if links.get("hbm", 0.0) > 0:
        return links["hbm"], "hbm"
    if not links:
        return 0.0, ""
    link = max(links, key=links.get)
    return links[link], link


def stage_duration(numbers: dict) -> float:
    d = numbers.get("duration_s")
    if d is None:
        d = float(numbers.get("end_s", 0.0)) - float(numbers.get("start_s", 0.0))
    d = float(d)
    return d if math.isfinite(d) and d > 0 else 0.0


DP_STAGE_ROLES = ("dp_grad_sync", "zero3_gather_fwd", "zero3_gather_bwd", "zero3_gather_prefetched",
                  "zero3_gather_exposed", "param_gather")
KERNEL_STAGE_ROLES = ("forward", "backward", "steady", "prefill")


def stage_operating_point(numbers: dict, point_roles: dict[str, str]) -> tuple[str, tuple[str, ...], str]:
    """Which roofline point a flow stage corresponds to: (primary, related, note), matched by the stage's
    `role` (model/views/stages.ROLES) and the points' roles (`point_roles`: point name -> `POINT_ROLES` id).

    `primary` is an operating point name, `STAGE_POINT` (the stage drawn as one kernel at intensity
    FLOPs / bytes and attainable FLOPs / stage time, when it has both) or "" (no point: `note` says why);
    `related` are the kernels the stage is made of (circled lightly). Forward, backward, steady 1F1B and
    prefill stages → their own point, related to the layer's GEMMs and the selected attention; recompute →
    the attention (selective, FlashAttention) or the GEMMs (full); TP collectives → the TP all-reduce;
    DP gradient sync and ZeRO gathers → the DP gradient point; the optimizer → the optimizer step; decode
    steps → their own point, related to the decode GEMM and KV-read points."""
    role = str(numbers.get("role", ""))
    kind = str(numbers.get("kind", ""))
    flops = float(numbers.get("flops", 0.0) or 0.0)
    nbytes, _ = stage_bytes(numbers)
    own = math.isfinite(flops) and flops > 0 and nbytes > 0 and stage_duration(numbers) > 0

    def named(*roles: str) -> list[str]:
        return [name for name, r in point_roles.items() if r in roles]

    gemms, attention, dp = named("gemm"), named("attention"), named("dp_grad_sync")
    if role in ("bubble", "waiting"):
        return "", (), "idle: no kernel runs, no point"
    if role == "optimizer_host":
        return "", (), "runs on the host CPU: no GPU point"
    if role == "optimizer":
        opt = named("optimizer")
        return (opt[0], (), "") if opt else ("", (), "no optimizer point")
    if role in DP_STAGE_ROLES:
        return (dp[0], (), "") if dp else ("", (), "no DP gradient point (data parallelism 1)")
    if kind == "communication":
        tp = named("tp_allreduce")
        if role in ("forward_tp_comm", "backward_tp_comm") and tp:
            return tp[0], (), ""
        return "", (), "PP send / CP / EP traffic: no point"
    if kind != "compute":
        return "", (), f"{kind or 'transfer'}: no point (host or HBM traffic only)"
    if role == "decode":
        related = named("decode_gemms", "decode_kv_reads")
    elif role == "recompute_attention":
        related = attention
    elif role == "recompute_layer":
        related = gemms + attention
    elif role in KERNEL_STAGE_ROLES:
        related = gemms + attention
    else:
        return "", (), "no operating point on the roofline"
    if own:
        return STAGE_POINT, tuple(related), ""
    if related:
        return related[0], tuple(related[1:]), ""
    return "", (), "no operating point on the roofline"
