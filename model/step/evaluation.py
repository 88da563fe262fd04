"""`evaluate(scenario) -> Results`: one pure call computes every number the panels show.

`evaluate_grid(scenario, **axes)` runs the same vectorized formulas over numpy arrays of layout values
(tp, pp, cp, ep, zero, recompute codes, micro_batch, seq_len, gpus, batch ...) in one call.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np

from trinity_desktop.model.base.dtypes import (
    ACTIVATION_BYTES,
    BYTES_PER_ELEMENT,
    OPTIMIZER_STATE_BYTES,
    TRAIN_PRECISION_BYTES,
    compute_dtype_for_weights,
)
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.base.numeric import as_float
from trinity_desktop.model.formulas.kv_policy import KV_POLICY_CODE
from trinity_desktop.model.formulas.pressure import (
    Pressure,
    achievable_rates,
    binding_resource,
    utilisation_pressures,
)
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.scenario import OFFLOAD_CODE, RECOMPUTE_CODE, Scenario
from trinity_desktop.model.step.inference import inference_step
from trinity_desktop.model.step.training import training_step


@dataclass(frozen=True)
class Results:
    """Everything computed for one scenario. Bytes, FLOPs and seconds are SI; memory is per GPU."""

    scenario: Scenario
    kind: str
    params_total: float
    params_active: float
    memory: Mapping[str, float]
    memory_total: float
    capacity: float
    fits: bool
    time: Mapping[str, float]
    time_total: float
    flops: float
    bytes_by_link: Mapping[str, float]
    pressure: Pressure
    bottleneck: str
    train: Mapping[str, float] = field(default_factory=dict)
    infer: Mapping[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __post_init__(self):
        for name in ("memory", "time", "bytes_by_link", "train", "infer"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))


def _train_inputs(sc: Scenario) -> dict:
    w, g, master = TRAIN_PRECISION_BYTES[sc.precision]
    eff = sc.efficiency
    return dict(gpus=sc.gpus, gpus_per_node=sc.gpus_per_node, tp=sc.tp, pp=sc.pp, cp=sc.cp, ep=sc.ep,
                virtual_stages=sc.virtual_stages,
                sp=sc.sequence_parallel, zero=sc.zero, recompute=RECOMPUTE_CODE[sc.recompute],
                flash=sc.flash_attention, micro_batch=sc.micro_batch, global_batch=sc.global_batch,
                seq_len=sc.seq_len, weight_bytes=w, grad_bytes=g, master_bytes=master,
                opt_state_bytes=OPTIMIZER_STATE_BYTES[sc.optimizer], act_bytes=ACTIVATION_BYTES[sc.precision],
                peak=sc.hardware.peak(sc.precision), eff_compute=eff.compute, eff_hbm=eff.hbm,
                eff_network=eff.network, offload=OFFLOAD_CODE[sc.offload], grad_compression=sc.grad_compression,
                in_network_aggregation=sc.in_network_aggregation, grad_comm_bytes=sc.grad_comm_bytes)


def _infer_inputs(sc: Scenario) -> dict:
    eff = sc.efficiency
    dtype = compute_dtype_for_weights(sc.weight_dtype, dict(sc.hardware.peak_flops))
    return dict(tp=sc.inference_tp, pp=sc.pp, gpus_per_node=sc.gpus_per_node, batch=sc.batch, prompt_len=sc.prompt_len,
                gen_len=sc.gen_len, weight_bytes=BYTES_PER_ELEMENT[sc.weight_dtype],
                kv_policy=KV_POLICY_CODE[sc.kv_policy], kv_window=sc.kv_window, kv_sinks=sc.kv_sinks,
                kv_heavy_ratio=sc.kv_heavy_ratio, razor_retrieval_fraction=sc.razor_retrieval_fraction,
                kv_offload_fraction=sc.kv_offload_fraction, prefix_hit_fraction=sc.prefix_hit_fraction,
                kv_offload_bw=kv_offload_bandwidth(sc),
                kv_bytes=BYTES_PER_ELEMENT[sc.kv_dtype], act_bytes=2.0, peak=sc.hardware.peak(dtype),
                eff_compute=eff.compute, eff_hbm=eff.hbm, eff_network=eff.network)


def link_bandwidths(hw) -> dict[str, float]:
    """Per-direction bandwidth of each link a device's bytes are counted on (bytes_by_link keys)."""
    return {"hbm": hw.hbm_bw, "scale-up": hw.scaleup_bw, "scale-out": hw.scaleout_bw, "host": hw.host_link_bw}


def kv_offload_bandwidth(sc: Scenario) -> float:
    """Bandwidth to the KV offload target: the host link, or the CXL pool's link (memory_tiers.toml)."""
    if sc.kv_offload_tier == "cxl":
        from trinity_desktop.model.inputs.tiers import tier_map

        return float(tier_map(sc.hardware)["cxl"].bandwidth)
    return float(sc.hardware.host_link_bw)


def _floats(d: Mapping) -> dict:
    return {k: as_float(v) for k, v in d.items()}


def _run_step(step, arch, hw, inputs: dict) -> dict:
    """A core step on plain numbers, the fast path (model/base/xp.py). Plain arithmetic raises where numpy's
    gives inf (a division by zero); then the step runs again on numpy scalars, which follow numpy's rules."""
    try:
        return step(arch, hw, **inputs)
    except ZeroDivisionError:
        return step(arch, hw, **numpy_scalars(inputs))


# The raw step output of the last few scenarios `evaluate` computed: `evaluate_grid(scenario)` without axes
# (the roofline's and the stage timeline's pieces) reuses it, so one edit runs the training step once.
_RECENT_STEPS: list[tuple[Scenario, dict]] = []
RECENT_STEPS = 4


def _remember_step(scenario: Scenario, out: dict) -> None:
    _RECENT_STEPS.insert(0, (scenario, out))
    del _RECENT_STEPS[RECENT_STEPS:]


def _recent_step(scenario: Scenario) -> dict | None:
    for sc, out in _RECENT_STEPS:
        if sc is scenario or sc == scenario:
            return out
    return None


def numpy_scalars(inputs: Mapping) -> dict:
    """The inputs with each plain number as a numpy scalar (np.float64, np.bool_)."""
    return {k: np.bool_(v) if type(v) is bool else np.float64(v) if type(v) in (int, float) else v
            for k, v in inputs.items()}


def evaluate(scenario: Scenario) -> Results:
    """Compute memory, time, FLOPs, bytes per link, pressures and the bottleneck for one scenario."""
    sc = scenario
    arch, hw = sc.model, sc.hardware
    capacity = hw.hbm_bytes
    notes: list[str] = []
    inputs = _train_inputs(sc) if sc.kind == "train" else _infer_inputs(sc)
    if sc.kind == "train":
        r = _run_step(training_step, arch, hw, inputs)
        _remember_step(sc, r)
        memory, time = _floats(r["memory"]), _floats(r["time"])
        grad_bytes = TRAIN_PRECISION_BYTES[sc.precision][1]
        if sc.grad_compression == 1.0 and not 0.0 < sc.grad_comm_bytes < grad_bytes:
            time.pop("gradient_compression")
        if sc.offload == "none":
            time.pop("offload_transfer")
        mem_total, t_total = as_float(r["memory_total"]), as_float(r["time_total"])
        flops = as_float(r["hardware_flops"])
        links = _floats(r["bytes_by_link"])
        train = {"dp": as_float(r["dp"]), "micro_batches": as_float(r["micro_batches"]),
                 "model_flops": as_float(r["model_flops"]), "hardware_flops": flops,
                 "mfu": as_float(r["mfu"]), "tokens_per_s": as_float(r["tokens_per_s"]),
                 "dp_comm_time": as_float(r["dp_comm_time"]), "host_bytes": as_float(r["host_bytes"]),
                 "nvme_bytes": as_float(r["nvme_bytes"]), "nvme_traffic_bytes": as_float(r["nvme_traffic_bytes"]),
                 "backward_time_last_micro_batch": as_float(r["backward_time_last_micro_batch"]),
                 "pipeline_bubble_fraction": as_float(r["pipeline_bubble_fraction"])}
        infer = {}
    else:
        r = _run_step(inference_step, arch, hw, inputs)
        _remember_step(sc, r)
        memory = _floats(r["memory"])
        mem_total = as_float(r["memory_total"])
        phase = "prefill" if sc.kind == "prefill" else "decode"
        time = _floats(r[f"{phase}_time"])
        t_total = as_float(r["prefill_s"] if phase == "prefill" else r["time_per_output_token_s"])
        flops = as_float(r[f"{phase}_flops"])
        links = _floats(r[f"{phase}_bytes"])
        infer = {k: as_float(r[k]) for k in ("weights_bytes", "kv_bytes_per_token", "kv_bytes", "prefill_s",
                                               "time_per_output_token_s", "tokens_per_s", "request_s",
                                               "kv_host_bytes")}
        # The offloaded share sits on its target tier: host DRAM, or the CXL pool.
        infer["kv_cxl_bytes"] = infer["kv_host_bytes"] if sc.kv_offload_tier == "cxl" else 0.0
        infer["kv_host_bytes"] -= infer["kv_cxl_bytes"]
        # One request time: where the request's stages end. When the KV cache leaves HBM (it does not fit, or
        # a share is offloaded) that is residency's timing with the tier transfers (model/views/stages.py).
        if mem_total > capacity or sc.kv_offload_fraction > 0:
            from trinity_desktop.model.views.stages import (  # late: the stage model builds on evaluate
                kv_spills,
                request_time,
            )

            if kv_spills(sc):
                infer["request_s"] = request_time(sc)
                notes.append("KV cache beyond HBM: the request time includes moving the part of the cache that is "
                             "not in HBM over the host link each decode step; the time per output token keeps it in "
                             "HBM.")
        train = {}
    fits = mem_total <= capacity
    if not fits:
        notes.append(f"Does not fit: needs {mem_total / 1e9:.1f} GB per device, {hw.name} has "
                     f"{capacity / 1e9:.0f} GB.")
    notes += context_notes(sc)
    host_held = train.get("host_bytes", 0.0) + infer.get("kv_host_bytes", 0.0)
    if hw.host_dram_bytes > 0 and host_held > hw.host_dram_bytes:
        notes.append(f"Host memory short: offload keeps {host_held / 1e9:.1f} GB per device in host DRAM, "
                     f"{hw.name}'s host has {hw.host_dram_bytes / 1e9:.0f} GB per device.")
    devices = sc.gpus
    peak = inputs["peak"]
    # ZeRO-Infinity's NVMe traffic counts as one more link in the bandwidth pressure (storage bandwidth).
    loads, link_bw = dict(links), link_bandwidths(hw)
    if train.get("nvme_traffic_bytes", 0.0) > 0:
        loads["nvme"], link_bw["nvme"] = train["nvme_traffic_bytes"], hw.nvme_bw
    peak, link_bw = achievable_rates(peak, link_bw, sc.efficiency)  # 1.0 = busy all step (model/formulas/pressure.py)
    pressure = Pressure(*(float(x) for x in utilisation_pressures(
        flops, t_total, devices, peak, loads, link_bw, mem_total, capacity)))
    values = [*memory.values(), *time.values(), *links.values(), mem_total, t_total, flops,
              *pressure.as_tuple(), *train.values(), *infer.values()]
    if not all(map(math.isfinite, values)):
        # Values inside the physical ranges keep every result finite (tests/model/test_audit_invariants.py);
        # a degenerate number (hbm_bw = 1e-300) that slipped past them is refused here as input, in one line.
        raise ValidationError(f"hardware {hw.key} with model {sc.model.key}", "values whose results overflow",
                              "rates, sizes and latencies within physical ranges (every result must be finite)")
    return Results(scenario=sc, kind=sc.kind, params_total=float(arch.params_total()),
                   params_active=float(arch.params_active()), memory=memory, memory_total=mem_total,
                   capacity=capacity, fits=fits, time=time, time_total=t_total, flops=flops,
                   bytes_by_link=links, pressure=pressure, bottleneck=binding_resource(*pressure.as_tuple()),
                   train=train, infer=infer, notes=tuple(notes))


def context_notes(sc: Scenario) -> list[str]:
    """A note when the sequence (training) or prompt + generated tokens (inference) run past the model's
    `max_seq` (max_position_embeddings): the numbers are computed, but the model was not made for them."""
    arch = sc.model
    tokens = sc.seq_len if sc.kind == "train" else sc.prompt_len + sc.gen_len
    if tokens <= arch.max_seq:
        return []
    what = "sequence length" if sc.kind == "train" else "context (prompt + generated)"
    why = ("its learned position embeddings end there" if arch.position == "learned"
           else "the longest context it was trained for")
    return [f"Beyond the model's limit: {what} {tokens:,} tokens > the {arch.max_seq:,} tokens {arch.name} "
            f"takes ({why})."]


TRAIN_AXES = ("gpus", "gpus_per_node", "tp", "pp", "cp", "ep", "virtual_stages", "sp", "zero", "recompute", "flash",
              "micro_batch", "global_batch", "seq_len", "offload", "grad_compression", "in_network_aggregation", "grad_comm_bytes")
INFER_AXES = ("tp", "pp", "gpus_per_node", "batch", "prompt_len", "gen_len", "weight_bytes", "kv_bytes", "kv_policy",
              "kv_window", "kv_sinks", "kv_heavy_ratio", "razor_retrieval_fraction", "kv_offload_fraction",
              "prefix_hit_fraction")
# Modelling assumptions a grid may vary too (model/search/uncertainty.py samples them): the three efficiencies under
# their output names, the links' alphas (replacing the hardware preset's), and per-workload assumptions.
ASSUMPTION_AXES = {"compute_efficiency": "eff_compute", "hbm_efficiency": "eff_hbm",
                   "network_efficiency": "eff_network"}
LATENCY_AXES = ("scaleup_latency_s", "scaleout_latency_s")
TRAIN_ASSUMPTION_AXES = ("grad_overlap_fraction",)
INFER_ASSUMPTION_AXES = ("runtime_reserve_fraction",)


def evaluate_grid(scenario: Scenario, **axes) -> dict:
    """Evaluate the scenario with some inputs replaced by arrays (broadcast together), in one call.

    Training axes: gpus, gpus_per_node, tp, pp, cp, ep, virtual_stages, sp, zero, recompute (0 none,
    1 selective, 2 full), flash, micro_batch, global_batch, seq_len, offload (codes of scenario.OFFLOAD_MODES), grad_compression,
    in_network_aggregation, grad_comm_bytes (0 = the gradient format). Inference axes: tp, pp, gpus_per_node,
    batch, prompt_len, gen_len, weight_bytes, kv_bytes, the KV-policy knobs, kv_offload_fraction,
    prefix_hit_fraction. Assumption axes (both kinds): compute_efficiency, hbm_efficiency, network_efficiency,
    scaleup_latency_s, scaleout_latency_s; training also grad_overlap_fraction, inference also
    runtime_reserve_fraction. Returns the raw arrays of `training_step` / `inference_step`, plus a
    boolean `valid` mask (the layout and link rules of `Scenario`, vectorized) and, for inference, `kv_in_hbm`:
    where the KV cache stays in HBM, so that request_s is the request's time (elsewhere `evaluate` adds the
    moves between memory tiers).
    """
    known = None if axes else _recent_step(scenario)  # one scenario, already evaluated: its step output
    axes = dict(axes)
    assumed = {ASSUMPTION_AXES[k]: axes.pop(k) for k in list(axes) if k in ASSUMPTION_AXES}
    latencies = {k: axes.pop(k) for k in list(axes) if k in LATENCY_AXES}
    # The same formulas read the alphas off the hardware; a copy carrying arrays broadcasts like any axis.
    hw = dataclasses.replace(scenario.hardware, **latencies) if latencies else scenario.hardware
    if scenario.kind == "train":
        if "grad_overlap_fraction" in axes:
            assumed["grad_overlap"] = axes.pop("grad_overlap_fraction")
        unknown = set(axes) - set(TRAIN_AXES)
        if unknown:
            raise KeyError(f"not a training grid axis: {sorted(unknown)}")
        inputs = {**_train_inputs(scenario), **axes, **assumed}
        out = dict(known) if known is not None else training_step(scenario.model, hw, **inputs)
        valid = training_layout_valid(scenario, inputs)
        out["valid"] = np.broadcast_to(valid, np.broadcast_shapes(valid.shape, np.shape(out["time_total"])))
        return out
    if "runtime_reserve_fraction" in axes:
        assumed["reserved_fraction"] = axes.pop("runtime_reserve_fraction")
    unknown = set(axes) - set(INFER_AXES)
    if unknown:
        raise KeyError(f"not an inference grid axis: {sorted(unknown)}")
    inputs = {**_infer_inputs(scenario), **axes, **assumed}
    out = dict(known) if known is not None else inference_step(scenario.model, hw, **inputs)
    # tp x pp GPUs; every pipeline stage holds layers / pp
    valid = (links_valid(scenario.hardware, np.asarray(inputs["tp"]) * np.asarray(inputs["pp"]), inputs["gpus_per_node"])
             & (scenario.model.layers % np.asarray(inputs["pp"]) == 0))
    shape = np.broadcast_shapes(valid.shape, np.shape(out["request_s"]), np.shape(out["memory_total"]))
    out["valid"] = np.broadcast_to(valid, shape)
    # request_s here keeps the whole KV cache in HBM; where it does not fit (or a share is offloaded) `evaluate`
    # times the request by its stages, with the tier transfers (model/views/stages.py)
    in_hbm = (out["memory_total"] <= scenario.hardware.hbm_bytes) & (np.asarray(inputs["kv_offload_fraction"]) <= 0)
    out["kv_in_hbm"] = np.broadcast_to(in_hbm, shape)
    return out


def links_valid(hw, gpus, gpus_per_node) -> np.ndarray:
    """`Scenario._check_links`, vectorized: more than one device needs a link; more than a node needs scale-out."""
    g, gpn = np.asarray(gpus), np.asarray(gpus_per_node)
    return ((g <= 1) | (hw.scaleup_bw > 0) | (hw.scaleout_bw > 0)) & ((g <= gpn) | (hw.scaleout_bw > 0))


def training_layout_valid(scenario: Scenario, inputs: Mapping) -> np.ndarray:
    """The divisibility rules of `Scenario._check_training_layout`, as one broadcast boolean mask."""
    rules = training_layout_rules(scenario.model, inputs)
    ok = np.asarray(True)
    for mask in rules.values():
        ok = ok & mask
    return ok & links_valid(scenario.hardware, inputs["gpus"], inputs["gpus_per_node"])


def training_layout_rules(m: Architecture, inputs: Mapping) -> dict[str, np.ndarray]:
    """Each layout rule of `Scenario._check_training_layout` for model `m` as a broadcast boolean mask (True =
    satisfied), keyed by the field a `ValidationError` would name, in the order the scenario checks them (the
    planner counts the most common reason)."""
    g, tp, pp, cp, ep = (np.asarray(inputs[k]) for k in ("gpus", "tp", "pp", "cp", "ep"))
    mb, gb, s = (np.asarray(inputs[k]) for k in ("micro_batch", "global_batch", "seq_len"))
    v = np.asarray(inputs.get("virtual_stages", 1))
    mp = tp * pp * cp
    shape_ok = g % mp == 0
    dp = np.where(shape_ok, g // np.where(mp > 0, mp, 1), 1)
    batch_ok = gb % (mb * dp) == 0
    micro_batches = gb // np.where(batch_ok, mb * dp, 1)
    chunks = pp * v
    interleave_ok = (v == 1) | ((pp >= 2) & ((m.layers % chunks == 0) | ((m.layers + 2) % chunks == 0))
                                & (micro_batches % pp == 0))
    return {"tp": m.heads % tp == 0, "pp": pp <= m.layers, "cp": s % cp == 0, "gpus": shape_ok,
            "ep": (dp % ep == 0) & (m.experts % ep == 0), "global_batch": batch_ok,
            "virtual_stages": interleave_ok}
