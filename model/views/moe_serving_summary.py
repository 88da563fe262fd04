"""MoE serving with expert parallelism, as one typed summary of a scenario (the CLI's `moe_serving` object, the
Scenario form's read-out). Numbers are the inference step's (model/step/inference.py, formulas/moe_serving.py)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from trinity_desktop.model.base.numeric import as_float
from trinity_desktop.model.formulas.moe_serving import (
    dense_weight_bytes_per_gpu,
    expert_weight_bytes_per_gpu,
    experts_per_gpu,
    serving_ep_on,
)
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.layout import infer_inputs
from trinity_desktop.model.step.run import infer_step_of


@dataclass(frozen=True)
class MoeServing:
    """One replica's EP serving layout and its all-to-all, per GPU."""

    ep: int
    attention_dp: int
    attention_tp: int
    redundant_experts: int
    experts_per_gpu: float
    expert_weights_per_gpu_bytes: float
    dense_weights_per_gpu_bytes: float
    dispatch_format: str
    all_to_all_per_decode_step_s: float
    all_to_all_scale_out_bytes_per_decode_step: float
    all_to_all_scale_up_bytes_per_decode_step: float
    all_to_all_prefill_s: float
    all_to_all_scale_out_bytes_prefill: float
    all_to_all_scale_up_bytes_prefill: float

    def as_json(self) -> dict:
        return asdict(self)


def moe_serving(sc: Scenario) -> MoeServing | None:
    """The scenario's EP serving summary, or None where EP serving is off (EP 1, DP-attention 1, no redundancy)."""
    if not bool(serving_ep_on(sc.inference_ep, sc.attention_dp, sc.redundant_experts)):
        return None
    x = infer_inputs(sc)
    r = infer_step_of(sc.replace(kind="decode") if sc.kind == "train" else sc)
    arch = sc.model
    return MoeServing(
        ep=sc.inference_ep, attention_dp=sc.attention_dp, attention_tp=sc.inference_tp,
        redundant_experts=sc.redundant_experts,
        experts_per_gpu=as_float(experts_per_gpu(arch.experts, sc.inference_ep, sc.redundant_experts)),
        expert_weights_per_gpu_bytes=as_float(expert_weight_bytes_per_gpu(arch, x.weight_bytes, sc.inference_ep,
                                                                          sc.redundant_experts, sc.pp)),
        dense_weights_per_gpu_bytes=as_float(dense_weight_bytes_per_gpu(arch, arch.params_total(), x.weight_bytes,
                                                                        sc.inference_tp, sc.pp)),
        dispatch_format="fp8" if sc.moe_fp8_dispatch else "bf16",
        all_to_all_per_decode_step_s=as_float(r.decode_ep.time),
        all_to_all_scale_out_bytes_per_decode_step=as_float(r.decode_ep.scale_out),
        all_to_all_scale_up_bytes_per_decode_step=as_float(r.decode_ep.scale_up),
        all_to_all_prefill_s=as_float(r.prefill_ep.time),
        all_to_all_scale_out_bytes_prefill=as_float(r.prefill_ep.scale_out),
        all_to_all_scale_up_bytes_prefill=as_float(r.prefill_ep.scale_up))
