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

from trinity_desktop.model.base.dtypes import TRAIN_PRECISION_BYTES
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.base.numeric import as_float
from trinity_desktop.model.formulas.pressure import (
    Pressure,
    achievable_rates,
    binding_resource,
    utilisation_pressures,
)
from trinity_desktop.model.formulas.speculative import SpeculativeDecode
from trinity_desktop.model.inputs.disaggregation_layout import is_disaggregated
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.disaggregated import DisaggregatedServing, disaggregated_serving
from trinity_desktop.model.step.grid_results import InferGrid, TrainGrid, step_fields
from trinity_desktop.model.step.inference import InferStep, inference_step
from trinity_desktop.model.step.layout import infer_inputs, infer_valid, train_inputs, train_valid
from trinity_desktop.model.step.request import decode_plan
from trinity_desktop.model.step.run import infer_step_of, numpy_scalars, train_step_of  # noqa: F401 (numpy_scalars: API)
from trinity_desktop.model.step.speculative_step import speculative_decode, speculative_notes
from trinity_desktop.model.step.training import TrainStep, training_step


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
    # speculative decoding (#23): draft and verify steps, tokens per target step, speed-up (None when off)
    speculative: SpeculativeDecode | None = None
    # disaggregated prefill and decode (#23): the pools, the KV transfer, against aggregated (None = aggregated)
    disaggregated: DisaggregatedServing | None = None

    def __post_init__(self):
        for name in ("memory", "time", "bytes_by_link", "train", "infer"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))


def link_bandwidths(hw) -> dict[str, float]:
    """Per-direction bandwidth of each link a device's bytes are counted on (bytes_by_link keys)."""
    return {"hbm": hw.hbm_bw, "scale-up": hw.scaleup_bw, "scale-out": hw.scaleout_bw, "host": hw.host_link_bw}


def _floats(d: Mapping) -> dict:
    return {k: as_float(v) for k, v in d.items()}


# Role ids of the inference time parts (`Results.time` keys for prefill and decode), by `PhaseTime` field; the
# display text of each id lives in the UI (ui/stage_labels.INFER_TIME_PART_TEXT).
PREFILL_TIME_IDS = {"gemms": "gemms", "attention": "attention", "tp_comm": "tp_comm", "pp_comm": "pp_comm",
                    "kv_host": "kv_offload", "fixed": "fixed", "ep_comm": "ep_comm"}
DECODE_TIME_IDS = {"gemms": "gemms", "attention": "attention_kv_reads", "tp_comm": "tp_comm", "pp_comm": "pp_comm",
                   "kv_host": "kv_fetch", "fixed": "fixed", "ep_comm": "ep_comm"}


def phase_time(r: InferStep, phase: str) -> dict:
    """One phase's time parts by role id: the pipeline sends where pipelined, the host-link KV transfer
    where offloading (`Results.time` of a prefill or decode scenario)."""
    t, names = (r.prefill_time, PREFILL_TIME_IDS) if phase == "prefill" else (r.decode_time, DECODE_TIME_IDS)
    parts = ["gemms", "attention", "tp_comm"] + ["pp_comm"] * r.piped + ["kv_host"] * r.offloading + ["fixed"]
    parts += ["ep_comm"] * r.expert_parallel  # MoE serving (#23): the EP all-to-all, where EP is on
    return {names[k]: getattr(t, k) for k in parts}


def train_memory(r: TrainStep) -> dict:
    """`Results.memory` of a training step per GPU, by component name: model states; activations (stored ones plus
    the transient buffers at the peak: logits and loss, the layer being recomputed, ZeRO-3 gathers); NCCL's
    network buffers; the runtime (CUDA context, allocator reserve)."""
    m = r.memory
    return {"weights": m.weights, "gradients": m.gradients, "optimizer": m.optimizer,
            "activations": m.activations + m.transient, "network_buffers": m.network_buffers, "runtime": m.runtime}


def train_time(r: TrainStep) -> dict:
    """`Results.time` of a training step: its time parts by id (the step time is their sum)."""
    t = r.time
    return {"compute": t.compute, "communication_exposed": t.communication_exposed,
            "pipeline_bubble": t.pipeline_bubble, "optimizer": t.optimizer,
            "gradient_compression": t.gradient_compression, "offload_transfer": t.offload_transfer}


def infer_memory(r: InferStep) -> dict:
    """`Results.memory` of an inference step: weights, KV cache in HBM and the runtime reserve per GPU."""
    return {"weights": r.memory.weights, "kv_cache": r.memory.kv_cache, "reserved": r.memory.reserved}


def evaluate(scenario: Scenario) -> Results:
    """Compute memory, time, FLOPs, bytes per link, pressures and the bottleneck for one scenario."""
    sc = scenario
    arch, hw = sc.model, sc.hardware
    capacity = hw.hbm_bytes
    notes: list[str] = []
    if sc.kind == "train":
        r = train_step_of(sc, fresh=True)
        peak = sc.hardware.peak(sc.precision)
        memory, time = _floats(train_memory(r)), _floats(train_time(r))
        grad_bytes = TRAIN_PRECISION_BYTES[sc.precision][1]
        if sc.grad_compression == 1.0 and not 0.0 < sc.grad_comm_bytes < grad_bytes:
            time.pop("gradient_compression")
        if sc.offload == "none":
            time.pop("offload_transfer")
        mem_total, t_total = as_float(r.memory_total), as_float(r.time_total)
        flops = as_float(r.hardware_flops)
        links = _floats(r.bytes_by_link.by_name())
        train = {k: as_float(getattr(r, k)) for k in (
            "dp", "micro_batches", "model_flops", "hardware_flops", "mfu", "mfu_format_peak", "tokens_per_s", "dp_comm_time",
            "host_bytes", "nvme_bytes", "nvme_traffic_bytes", "backward_time_last_micro_batch",
            "pipeline_bubble_fraction", "communication_total", "communication_overlapped")}
        # Results.memory["activations"] = stored + transient (train_memory): the two parts, per GPU of the peak stage
        train.update(stored_activation_bytes=as_float(r.memory.activations),
                     transient_bytes=as_float(r.memory.transient))
        infer = {}
    else:
        r = infer_step_of(sc, fresh=True)
        peak = infer_inputs(sc).peak
        memory = _floats(infer_memory(r))
        mem_total = as_float(r.memory_total)
        phase = "prefill" if sc.kind == "prefill" else "decode"
        time = _floats(phase_time(r, phase))
        t_total = as_float(r.prefill_s if phase == "prefill" else r.time_per_output_token_s)
        flops = as_float(r.prefill_flops if phase == "prefill" else r.decode_flops)
        links = _floats((r.prefill_bytes if phase == "prefill" else r.decode_bytes).by_name())
        infer = {k: as_float(getattr(r, k)) for k in ("weights_bytes", "kv_bytes_per_token", "kv_bytes", "prefill_s",
                                                        "time_per_output_token_s", "tokens_per_s", "request_s",
                                                        "kv_host_bytes")}
        # The offloaded share sits on its target tier: host DRAM, or the CXL pool.
        infer["kv_cxl_bytes"] = infer["kv_host_bytes"] if sc.kv_offload_tier == "cxl" else 0.0
        infer["kv_host_bytes"] -= infer["kv_cxl_bytes"]
        # One request time: where the request's stages end. When the KV cache leaves HBM (it does not fit, or
        # a share is offloaded) that is residency's timing with the tier transfers (model/step/request.py).
        if mem_total > capacity or sc.kv_offload_fraction > 0:
            plan = decode_plan(sc)
            if plan.kv is not None:  # the KV leaves HBM at some context of the request (and so at its end)
                infer["request_s"] = plan.request_s
                notes.append("KV cache beyond HBM: the request time includes moving the part of the cache that is "
                             "not in HBM over the host link each decode step; the time per output token keeps it in "
                             "HBM.")
        train = {}
    fits = mem_total <= capacity
    if not fits:
        notes.append(f"Does not fit: needs {mem_total / 1e9:.1f} GB per device, {hw.name} has "
                     f"{capacity / 1e9:.0f} GB.")
    notes += context_notes(sc)
    disaggregated = disaggregated_serving(sc) if is_disaggregated(sc) else None  # disaggregated serving (#23)
    notes += disaggregated.notes() if disaggregated is not None else []
    host_held = train.get("host_bytes", 0.0) + infer.get("kv_host_bytes", 0.0)
    if hw.host_dram_bytes > 0 and host_held > hw.host_dram_bytes:
        notes.append(f"Host memory short: offload keeps {host_held / 1e9:.1f} GB per device in host DRAM, "
                     f"{hw.name}'s host has {hw.host_dram_bytes / 1e9:.0f} GB per device.")
    devices = sc.gpus
    # ZeRO-Infinity's NVMe traffic counts as one more link in the bandwidth pressure (storage bandwidth).
    loads, link_bw = dict(links), link_bandwidths(hw)
    if train.get("nvme_traffic_bytes", 0.0) > 0:
        loads["nvme"], link_bw["nvme"] = train["nvme_traffic_bytes"], hw.nvme_bw
    peak, link_bw = achievable_rates(peak, link_bw, sc.efficiency, hw, sc.kind)  # 1.0 = busy all step (pressure.py)
    pressure = Pressure(*(float(x) for x in utilisation_pressures(
        flops, t_total, devices, peak, loads, link_bw, mem_total, capacity)))
    values = [*memory.values(), *time.values(), *links.values(), mem_total, t_total, flops,
              *pressure.as_tuple(), *train.values(), *infer.values()]
    if not all(map(math.isfinite, values)):
        # Values inside the physical ranges keep every result finite
        # (tests/model/test_finite_outputs_and_link_invariants.py);
        # a degenerate number (hbm_bw = 1e-300) that slipped past them is refused here as input, in one line.
        raise ValidationError(f"hardware {hw.key} with model {sc.model.key}", "values whose results overflow",
                              "rates, sizes and latencies within physical ranges (every result must be finite)")
    # speculative decoding (#23): the draft's and the verify step's times, computed only when switched on
    speculative = speculative_decode(sc, evaluate_grid)
    notes += speculative_notes(speculative, mem_total, capacity)
    return Results(scenario=sc, kind=sc.kind, params_total=float(arch.params_total()),
                   params_active=float(arch.params_active()), memory=memory, memory_total=mem_total,
                   capacity=capacity, fits=fits, time=time, time_total=t_total, flops=flops,
                   bytes_by_link=links, pressure=pressure, bottleneck=binding_resource(*pressure.as_tuple()),
                   train=train, infer=infer, notes=tuple(notes), speculative=speculative,
                   disaggregated=disaggregated)  # disaggregated prefill and decode (#23)


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
              "micro_batch", "global_batch", "seq_len", "offload", "grad_compression", "in_network_aggregation", "grad_comm_bytes",
              "tp_overlap", "ep_overlap", "moe_fp8_dispatch", "moe_node_limit")
TRAIN_AXES = TRAIN_AXES + ("lora_rank", "lora_targets", "qlora")  # LoRA / QLoRA (#23): rank 0 = off, target codes
INFER_AXES = ("tp", "pp", "gpus_per_node", "batch", "prompt_len", "gen_len", "weight_bytes", "kv_bytes", "kv_policy",
              "kv_window", "kv_sinks", "kv_heavy_ratio", "razor_retrieval_fraction", "kv_offload_fraction",
              "prefix_hit_fraction",
              "ep", "attention_dp", "redundant_experts")  # MoE serving (#23)
# Modelling assumptions a grid may vary too (model/search/uncertainty.py samples them): the three efficiencies under
# their output names, the links' alphas (replacing the hardware preset's), and per-workload assumptions.
ASSUMPTION_AXES = {"compute_efficiency": "eff_compute", "hbm_efficiency": "eff_hbm",
                   "network_efficiency": "eff_network"}
LATENCY_AXES = ("scaleup_latency_s", "scaleout_latency_s")
TRAIN_ASSUMPTION_AXES = ("grad_overlap_fraction",)
INFER_ASSUMPTION_AXES = ("runtime_reserve_fraction",)


def evaluate_grid(scenario: Scenario, **axes) -> TrainGrid | InferGrid:
    """Evaluate the scenario with some inputs replaced by arrays (broadcast together), in one call.

    Training axes: gpus, gpus_per_node, tp, pp, cp, ep, virtual_stages, sp, zero, recompute (0 none,
    1 selective, 2 full), flash, micro_batch, global_batch, seq_len, offload (codes of scenario.OFFLOAD_MODES), grad_compression,
    in_network_aggregation, grad_comm_bytes (0 = the gradient format). Inference axes: tp, pp, gpus_per_node,
    batch, prompt_len, gen_len, weight_bytes, kv_bytes, the KV-policy knobs, kv_offload_fraction,
    prefix_hit_fraction. Assumption axes (both kinds): compute_efficiency, hbm_efficiency, network_efficiency,
    scaleup_latency_s, scaleout_latency_s; training also grad_overlap_fraction, inference also
    runtime_reserve_fraction. Returns a `TrainGrid` / `InferGrid` (model/step/grid_results.py): the arrays of
    `training_step` / `inference_step`, a boolean `valid` mask (the layout and link rules of `Scenario`,
    vectorized) and, for inference, `kv_in_hbm`: where the KV cache stays in HBM, so that request_s is the
    request's time (elsewhere `evaluate` adds the moves between memory tiers).
    """
    axes = dict(axes)
    assumed = {ASSUMPTION_AXES[k]: axes.pop(k) for k in list(axes) if k in ASSUMPTION_AXES}
    latencies = {k: axes.pop(k) for k in list(axes) if k in LATENCY_AXES}
    # The same formulas read the alphas off the hardware; a copy carrying arrays broadcasts like any axis.
    hw = dataclasses.replace(scenario.hardware, **latencies) if latencies else scenario.hardware
    arch = scenario.model
    if scenario.kind == "train":
        if "grad_overlap_fraction" in axes:
            assumed["grad_overlap"] = axes.pop("grad_overlap_fraction")
        unknown = set(axes) - set(TRAIN_AXES)
        if unknown:
            raise KeyError(f"not a training grid axis: {sorted(unknown)}")
        inputs = train_inputs(scenario).replace(**axes, **assumed)
        r = training_step(arch, hw, inputs) if axes or assumed or latencies else train_step_of(scenario)
        valid = np.asarray(train_valid(arch, scenario.hardware, inputs))
        return TrainGrid(**step_fields(TrainGrid, r), memory=train_memory(r), time=train_time(r),
                         bytes_by_link=r.bytes_by_link.by_name(),
                         valid=np.broadcast_to(valid, np.broadcast_shapes(valid.shape, np.shape(r.time_total))))
    if "runtime_reserve_fraction" in axes:
        assumed["reserved_fraction"] = axes.pop("runtime_reserve_fraction")
    unknown = set(axes) - set(INFER_AXES)
    if unknown:
        raise KeyError(f"not an inference grid axis: {sorted(unknown)}")
    inputs = infer_inputs(scenario).replace(**axes, **assumed)
    r = inference_step(arch, hw, inputs) if axes or assumed or latencies else infer_step_of(scenario)
    # tp x pp GPUs; every pipeline stage holds layers / pp
    valid = np.asarray(infer_valid(arch, scenario.hardware, inputs))
    shape = np.broadcast_shapes(valid.shape, np.shape(r.request_s), np.shape(r.memory_total))
    # request_s here keeps the whole KV cache in HBM; where it does not fit (or a share is offloaded) `evaluate`
    # times the request by its stages, with the tier transfers (model/step/request.py)
    in_hbm = (r.memory_total <= scenario.hardware.hbm_bytes) & (np.asarray(inputs.kv_offload_fraction) <= 0)
    return InferGrid(**step_fields(InferGrid, r), memory=infer_memory(r), prefill_time=phase_time(r, "prefill"),
                     decode_time=phase_time(r, "decode"), prefill_bytes=r.prefill_bytes.by_name(),
                     decode_bytes=r.decode_bytes.by_name(), valid=np.broadcast_to(valid, shape),
                     kv_in_hbm=np.broadcast_to(in_hbm, shape))
