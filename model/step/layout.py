"""Scenario -> the typed, array-valued inputs of one training or inference step, and where their layout is valid.

`train_inputs(scenario)` and `infer_inputs(scenario)` read a `Scenario` into frozen dataclasses whose fields are
numbers or numpy arrays broadcast together: `TrainInputs.replace(tp=array, ...)` turns one scenario into a grid
of layouts (`evaluate_grid`), and the same step formulas run on both (model/base/xp.py keeps the scalar case
fast). The layout rules are `model/inputs/layout_rules.py`'s, the one home `Scenario` validation also calls;
`train_valid` / `infer_valid` are their broadcast masks over a grid. Byte widths per format: model/base/dtypes.py
(mixed precision, Micikevicius et al. 2018; optimizer states, Rajbhandari et al. 2020).
"""

from __future__ import annotations

import dataclasses

from trinity_desktop.model.base.dtypes import (
    ACTIVATION_BYTES,
    BYTES_PER_ELEMENT,
    OPTIMIZER_STATE_BYTES,
    TRAIN_PRECISION_BYTES,
    compute_dtype_for_weights,
)
from trinity_desktop.model.formulas.kv_policy import KV_POLICY_CODE
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.layout_rules import (
    Rule,
    all_hold,
    inference_rules,
    links_ok,
    training_rules,
)
from trinity_desktop.model.inputs.scenario import (
    ACTIVATION_RECIPES,
    ATTENTION_KERNELS,
    DECODE_ATTENTION_KERNELS,
    FP8_RECIPES,
    LORA_TARGETS,
    OFFLOAD_CODE,
    RECOMPUTE_CODE,
    Scenario,
)
from trinity_desktop.model.inputs.serving_rules import serving_rules_hold
from trinity_desktop.model.step.quantities import record

# vLLM's default gpu_memory_utilization = 0.9: 10% of device memory stays reserved for activations,
# CUDA graphs and the runtime, and never holds weights or KV cache.
RESERVED_FRACTION = 0.10
INFERENCE_ACT_BYTES = 2.0  # 16-bit activations between the layers of an inference step


class _Inputs:
    def replace(self, **axes):
        """A copy with some fields replaced by numbers or arrays (a grid's axes); an unknown name is a KeyError."""
        unknown = set(axes) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise KeyError(f"not a {self.KIND} input: {sorted(unknown)}")
        return dataclasses.replace(self, **axes)

    def as_dict(self) -> dict:
        """The fields by name (to group scenarios that differ only in grid axes)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@record
class TrainInputs(_Inputs):
    """One training step's inputs: layout, batch, byte widths per element, peak FLOP/s, efficiencies, techniques.
    Codes: recompute 0 none, 1 selective, 2 full (scenario.RECOMPUTE); offload (scenario.OFFLOAD_MODES)."""

    KIND = "training"
    gpus: object
    gpus_per_node: object
    tp: object
    pp: object
    cp: object
    ep: object
    sp: object
    zero: object
    recompute: object
    flash: object
    micro_batch: object
    global_batch: object
    seq_len: object
    weight_bytes: object
    grad_bytes: object
    master_bytes: object
    opt_state_bytes: object
    act_bytes: object
    peak: object
    eff_compute: object
    eff_hbm: object
    eff_network: object
    offload: object = 0
    grad_compression: object = 1.0
    in_network_aggregation: object = False
    grad_comm_bytes: object = 0.0
    virtual_stages: object = 1
    grad_overlap: object = 1.0  # share of the backward the DP gradient sync hides behind (assumptions.toml)
    tp_overlap: object = False      # TP comm behind the GEMMs (TE tp_comm_overlap; formulas/overlap.py)
    ep_overlap: object = False      # EP all-to-all + PP sends behind the paired chunk (DualPipe, DeepSeek-V3 §3.2.1)
    moe_fp8_dispatch: object = False  # dispatch in FP8, combine in the activation format (DeepSeek-V3 §3.3.4)
    moe_node_limit: object = 0      # nodes a token may be routed to, 0 = no limit (DeepSeek-V3 §2.1.2: M = 4)
    activation_recipe: object = 0  # index into scenario.ACTIVATION_RECIPES: 0 Megatron, 1 DeepSeek-V3, 2 torchtitan op-SAC, 3 TE FP8
    first_stage_layers: object = 0  # uneven pipeline: layers on the first / last stage (0 = the even split)
    last_stage_layers: object = 0
    attention_kernel: object = 0  # index into scenario.ATTENTION_KERNELS: 0 the family's, 1 FlashAttention-2 (#22)
    fp8_recipe: object = 0  # index into scenario.FP8_RECIPES: 0 tensorwise, 1 blockwise (DeepSeek-V3 §3.3.2) (#22)
    # LoRA / QLoRA (#23, formulas/lora.py): adapter rank (0 = off), target code (lora.LORA_TARGET_CODE), NF4 base
    lora_rank: object = 0
    lora_targets: object = 0
    qlora: object = False
    mtp_depth: object = 0  # MTP modules trained (Architecture.mtp_depth under Scenario.mtp_training; train_mtp.py)


@record
class InferInputs(_Inputs):
    """One inference request's inputs: TP (`Scenario.inference_tp`) x PP devices, batch, prompt and generated
    tokens, byte widths, peak FLOP/s, efficiencies, the KV policy's knobs (kv_policy.KV_POLICY_CODE), KV offload
    and the prefix cache."""

    KIND = "inference"
    tp: object
    pp: object
    gpus_per_node: object
    batch: object
    prompt_len: object
    gen_len: object
    weight_bytes: object
    kv_bytes: object
    act_bytes: object
    peak: object
    eff_compute: object
    eff_hbm: object
    eff_network: object
    kv_policy: object = 0
    kv_window: object = 4096
    kv_sinks: object = 4
    kv_heavy_ratio: object = 0.2
    razor_retrieval_fraction: object = 0.15
    kv_offload_fraction: object = 0.0
    prefix_hit_fraction: object = 0.0
    kv_offload_bw: object = None  # the offload target's link: None = the host link
    reserved_fraction: object = RESERVED_FRACTION
    # MoE serving (#23, formulas/moe_serving.py): EP over a stage's GPUs, attention DP groups, redundant experts
    # per GPU; tp is the attention TP (`Scenario.inference_tp`), a stage holds tp x attention_dp GPUs
    ep: object = 1
    attention_dp: object = 1
    redundant_experts: object = 0
    moe_fp8_dispatch: object = False
    moe_node_limit: object = 0
    decode_attention_kernel: object = 0  # index into scenario.DECODE_ATTENTION_KERNELS (#22, decode_kernels.py)
    decode_runtime: str = "auto"  # scenario.DECODE_RUNTIMES (#22, decode_costs.py)


def train_inputs(sc: Scenario) -> TrainInputs:
    """The training step's inputs of a scenario (its precision's byte widths, its hardware's peak for them)."""
    w, g, master = TRAIN_PRECISION_BYTES[sc.precision]
    eff = sc.efficiency
    return TrainInputs(
        gpus=sc.gpus, gpus_per_node=sc.gpus_per_node, tp=sc.tp, pp=sc.pp, cp=sc.cp, ep=sc.ep,
        virtual_stages=sc.virtual_stages, first_stage_layers=sc.first_stage_layers,
        last_stage_layers=sc.last_stage_layers, sp=sc.sequence_parallel, zero=sc.zero,
        activation_recipe=ACTIVATION_RECIPES.index(sc.activation_recipe),
        recompute=RECOMPUTE_CODE[sc.recompute], flash=sc.flash_attention, micro_batch=sc.micro_batch,
        global_batch=sc.global_batch, seq_len=sc.seq_len, weight_bytes=w, grad_bytes=g, master_bytes=master,
        opt_state_bytes=OPTIMIZER_STATE_BYTES[sc.optimizer], act_bytes=ACTIVATION_BYTES[sc.precision],
        peak=sc.hardware.peak(sc.precision), eff_compute=eff.compute, eff_hbm=eff.hbm, eff_network=eff.network,
        offload=OFFLOAD_CODE[sc.offload], grad_compression=sc.grad_compression,
        in_network_aggregation=sc.in_network_aggregation, grad_comm_bytes=sc.grad_comm_bytes,
        tp_overlap=sc.tp_comm_overlap, ep_overlap=sc.ep_comm_overlap, moe_fp8_dispatch=sc.moe_fp8_dispatch,
        moe_node_limit=sc.moe_node_limit,
        attention_kernel=ATTENTION_KERNELS.index(sc.attention_kernel),  # attention kernel (#22)
        fp8_recipe=FP8_RECIPES.index(sc.fp8_recipe),  # FP8 scaling recipe (#22)
        lora_rank=sc.lora_rank, lora_targets=LORA_TARGETS.index(sc.lora_targets),
        qlora=sc.qlora, mtp_depth=sc.model.mtp_depth if sc.mtp_training else 0)


def infer_inputs(sc: Scenario) -> InferInputs:
    """The inference step's inputs of a scenario: TP = `Scenario.inference_tp` (gpus / pp), the compute format
    its weight format runs in (`dtypes.compute_dtype_for_weights`) and that format's peak."""
    eff = sc.efficiency
    dtype = compute_dtype_for_weights(sc.weight_dtype, dict(sc.hardware.peak_flops))
    return InferInputs(
        tp=sc.inference_tp, pp=sc.pp, gpus_per_node=sc.gpus_per_node, batch=sc.batch, prompt_len=sc.prompt_len,
        gen_len=sc.gen_len, weight_bytes=BYTES_PER_ELEMENT[sc.weight_dtype], kv_bytes=BYTES_PER_ELEMENT[sc.kv_dtype],
        act_bytes=INFERENCE_ACT_BYTES, peak=sc.hardware.peak(dtype), eff_compute=eff.compute, eff_hbm=eff.hbm,
        eff_network=eff.network, kv_policy=KV_POLICY_CODE[sc.kv_policy], kv_window=sc.kv_window,
        kv_sinks=sc.kv_sinks, kv_heavy_ratio=sc.kv_heavy_ratio, razor_retrieval_fraction=sc.razor_retrieval_fraction,
        kv_offload_fraction=sc.kv_offload_fraction, prefix_hit_fraction=sc.prefix_hit_fraction,
        kv_offload_bw=kv_offload_bandwidth(sc),
        # MoE serving (#23)
        ep=sc.inference_ep, attention_dp=sc.attention_dp, redundant_experts=sc.redundant_experts,
        moe_fp8_dispatch=sc.moe_fp8_dispatch, moe_node_limit=sc.moe_node_limit,
        decode_attention_kernel=DECODE_ATTENTION_KERNELS.index(sc.decode_attention_kernel),  # (#22)
        decode_runtime=sc.decode_runtime)  # (#22)


def kv_offload_bandwidth(sc: Scenario) -> float:
    """Bandwidth to the KV offload target: the host link, or the CXL pool's link (memory_tiers.toml)."""
    if sc.kv_offload_tier == "cxl":
        from trinity_desktop.model.inputs.tiers import tier_map  # tiers reads the presets: imported when used

        return float(tier_map(sc.hardware)["cxl"].bandwidth)
    return float(sc.hardware.host_link_bw)


def training_layout_rules(arch: Architecture, *, gpus, tp, pp, cp, ep, micro_batch, global_batch, seq_len,
                          virtual_stages=1, first_stage_layers=0, last_stage_layers=0) -> tuple[Rule, ...]:
    """The training layout rules for model `arch`, broadcast over arrays, in the scenario's order
    (model/inputs/layout_rules.py; the planner counts the most common reason)."""
    return training_rules(arch, gpus=gpus, tp=tp, pp=pp, cp=cp, ep=ep,
                          micro_batch=micro_batch, global_batch=global_batch, seq_len=seq_len,
                          virtual_stages=virtual_stages, first_stage_layers=first_stage_layers,
                          last_stage_layers=last_stage_layers)


def train_valid(arch: Architecture, hw: Hardware, x: TrainInputs):
    """Where the training layout is valid: every layout rule and the links (the checks `Scenario` makes)."""
    rules = training_layout_rules(arch, gpus=x.gpus, tp=x.tp, pp=x.pp, cp=x.cp, ep=x.ep, micro_batch=x.micro_batch,
                                  global_batch=x.global_batch, seq_len=x.seq_len, virtual_stages=x.virtual_stages,
                                  first_stage_layers=x.first_stage_layers, last_stage_layers=x.last_stage_layers)
    return all_hold(rules) & links_ok(hw.scaleup_bw, hw.scaleout_bw, x.gpus, x.gpus_per_node)


def infer_valid(arch: Architecture, hw: Hardware, x: InferInputs):
    """Where the inference layout is valid: tp x attention_dp x pp devices have their links, PP divides the layers
    and the MoE serving rules hold (inputs/serving_rules.py)."""
    stage = x.tp * x.attention_dp
    return (all_hold(inference_rules(arch.layers, pp=x.pp))
            & links_ok(hw.scaleup_bw, hw.scaleout_bw, stage * x.pp, x.gpus_per_node)
            & serving_rules_hold(arch.is_moe, stage, x.ep, x.attention_dp, x.redundant_experts))
