"""The scenario: one model on some hardware, doing one workload, with some options on. Immutable.

A `Scenario` is what a file saves and what undo restores. `Scenario.replace(**changes)` returns an
edited copy; field names are flat ("tp", "zero", "seq_len", "batch", ...) so that the UI, the CLI and
sweeps address them the same way.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from trinity_desktop.model.base.dtypes import (
    KV_DTYPES,
    OPTIMIZER_STATE_BYTES,
    TRAIN_PRECISIONS,
    WEIGHT_FORMATS,
    check_choice,
)
from trinity_desktop.model.base.errors import MissingLinkError, ValidationError
from trinity_desktop.model.base.ranges import EFFICIENCY_LIMITS, SCENARIO_LIMITS, check_limit
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.disaggregation_layout import KV_TRANSFER_LINKS, check_disaggregation
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.kv_policies import KV_POLICIES
from trinity_desktop.model.inputs.layout_rules import all_hold, inference_rules, links_ok, training_rules
from trinity_desktop.model.inputs.needed_links import check_needed_links
from trinity_desktop.model.inputs.serving_rules import serving_layout_problem

WORKLOAD_KINDS = ("train", "prefill", "decode")
RECOMPUTE = ("none", "selective", "full")
# Which tensors a layer stores under selective recomputation (formulas/memory.py): Megatron's (Korthikanti et al.
# 2022), DeepSeek-V3's (§3.2.3, §3.3.3), torchtitan's selective op-level checkpointing, Transformer Engine's FP8
# GEMMs (FP8 GEMM inputs cached for the backward).
ACTIVATION_RECIPES = ("megatron", "deepseek-v3", "torchtitan-op-sac", "te-fp8")
RECOMPUTE_CODE = {name: i for i, name in enumerate(RECOMPUTE)}
# ZeRO-Offload (Ren et al. 2021): fp32 master + optimizer states in host memory, the optimizer step on the
# CPU, gradients and updated weights crossing the host link each step. vDNN (Rhu et al. 2016): activations
# copied to host memory during the forward pass and prefetched for the backward pass. ZeRO-Infinity
# (Rajbhandari et al. 2021): as ZeRO-Offload, but the fp32 master weights and optimizer states live on NVMe and
# stream through host memory for the CPU's optimizer step.
OFFLOAD_MODES = ("none", "optimizer", "activations", "nvme")
ATTENTION_KERNELS = ("auto", "flash-attention-2")  # attention kernel (#22): Scenario.attention_kernel
FP8_RECIPES = ("tensorwise", "blockwise")  # FP8 GEMM scaling recipe (#22): Scenario.fp8_recipe
# decode attention kernel (#22): Scenario.decode_attention_kernel (formulas/decode_kernels.py)
DECODE_ATTENTION_KERNELS = ("auto", "masked-mha")
# inference engine line (#22): Scenario.decode_runtime (formulas/decode_costs.py)
DECODE_RUNTIMES = ("auto", "fastertransformer")
OFFLOAD_CODE = {name: i for i, name in enumerate(OFFLOAD_MODES)}
# Where offloaded KV cache lives: host DRAM over the host link (FlexGen), or a CXL memory pool (Pond).
KV_OFFLOAD_TIERS = ("host", "cxl")
GRAD_COMM_BYTES_MIN = SCENARIO_LIMITS["grad_comm_bytes"].lowest
GRAD_COMM_BYTES_MAX = SCENARIO_LIMITS["grad_comm_bytes"].highest
# LoRA targets (model/formulas/lora.py): Wq, Wv (Hu et al. 2021); all attention projections; every linear layer
LORA_TARGETS = ("qv", "qkvo", "all")
MAX_CONTEXT_TOKENS = 1 << 24  # prompt + generated tokens per sequence (the residency and matrix panels' axis)


@dataclass(frozen=True)
class Efficiency:
    """Achievable fractions of the datasheet peaks. Stated modelling assumptions, adjustable:
    `compute` 0.5 is the share of peak for FLOPs with no measured kernel curve, and scales the measured curves
    of training compute by compute / 0.5 (model/formulas/kernel_efficiency.py: GEMMs by shape and GPU family,
    attention by kernel), 80% of HBM bandwidth for streaming kernels, 80% of link bandwidth for large
    collectives."""

    compute: float = EFFICIENCY_LIMITS["compute"].default
    hbm: float = EFFICIENCY_LIMITS["hbm"].default
    network: float = EFFICIENCY_LIMITS["network"].default

    def __post_init__(self):
        for name, limit in EFFICIENCY_LIMITS.items():
            check_limit(name, getattr(self, name), limit, prefix="efficiency.")


def _default(name: str):
    """A scenario number's default: the one table of limits and defaults (model/base/ranges.py)."""
    return SCENARIO_LIMITS[name].default


@dataclass(frozen=True)
class Scenario:
    hardware: Hardware
    model: Architecture
    kind: str = "train"
    gpus: int = _default("gpus")
    gpus_per_node: int = _default("gpus_per_node")
    # parallelism (training); inference uses pipeline parallelism `pp` and tensor parallelism over the rest,
    # TP = gpus / pp (`inference_tp`)
    tp: int = _default("tp")
    pp: int = _default("pp")
    cp: int = _default("cp")
    ep: int = _default("ep")
    # interleaved 1F1B: model chunks per pipeline stage (Narayanan et al. 2021 §2.2.2); 1 = plain 1F1B
    virtual_stages: int = _default("virtual_stages")
    # uneven pipeline stages: layers on the first / last stage, 0 = the even split (layout_rules.py)
    first_stage_layers: int = _default("first_stage_layers")
    last_stage_layers: int = _default("last_stage_layers")
    sequence_parallel: bool = True
    # training
    zero: int = _default("zero")
    recompute: str = "selective"
    # which tensors a layer stores (ACTIVATION_RECIPES): "megatron" (Korthikanti et al. 2022), "deepseek-v3"
    # (RMSNorm and MLA up-projections recomputed, FP8 / E5M6 caching) or "torchtitan-op-sac" (every second matmul)
    activation_recipe: str = "megatron"
    flash_attention: bool = True
    micro_batch: int = _default("micro_batch")
    global_batch: int = _default("global_batch")
    seq_len: int = _default("seq_len")
    precision: str = "bf16"
    optimizer: str = "adamw"
    # inference
    batch: int = _default("batch")
    prompt_len: int = _default("prompt_len")
    gen_len: int = _default("gen_len")
    weight_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    kv_policy: str = "full"
    kv_window: int = _default("kv_window")
    kv_sinks: int = _default("kv_sinks")
    kv_heavy_ratio: float = _default("kv_heavy_ratio")
    razor_retrieval_fraction: float = _default("razor_retrieval_fraction")
    # techniques that move data instead of keeping it (training)
    offload: str = "none"
    grad_compression: float = _default("grad_compression")
    in_network_aggregation: bool = False
    # quantised gradient communication (QSGD; 8-bit all-reduce): bytes per gradient element on the wire,
    # 0 = the training format's gradient width (off)
    grad_comm_bytes: float = _default("grad_comm_bytes")
    # overlap and MoE communication (model/formulas/overlap.py, comms.moe_all_to_all), all off by default: TP comm
    # overlap (Transformer Engine tp_comm_overlap, needs sequence parallelism); EP all-to-all + PP sends behind the
    # paired chunk (DeepSeek-V3 DualPipe); FP8 dispatch (DeepSeek-V3 §3.3.4); node limit 0 = none (DeepSeek-V3: 4)
    tp_comm_overlap: bool = False
    ep_comm_overlap: bool = False
    moe_fp8_dispatch: bool = False
    moe_node_limit: int = _default("moe_node_limit")
    # training: train the architecture's multi-token-prediction modules (`Architecture.mtp_depth`, DeepSeek-V3 §2.2;
    # none where the architecture has none; model/formulas/train_mtp.py)
    mtp_training: bool = True
    # inference: share of the KV cache kept in host DRAM and fetched over the host link (FlexGen)
    kv_offload_fraction: float = _default("kv_offload_fraction")
    kv_offload_tier: str = "host"
    # inference: share of each prompt found in the prefix cache (vLLM automatic prefix caching)
    prefix_hit_fraction: float = _default("prefix_hit_fraction")
    # load and latency targets (#23, model/search/load.py), off by default: Poisson requests/s (0 = one static
    # batch), p95 TTFT and TPOT targets in seconds (0 = none), the token budget per step of chunked prefill
    request_rate: float = _default("request_rate")
    ttft_slo_s: float = _default("ttft_slo_s")
    tpot_slo_s: float = _default("tpot_slo_s")
    prefill_chunk_tokens: int = _default("prefill_chunk_tokens")
    # MoE serving (#23, model/formulas/moe_serving.py; DeepSeek-V3 §3.4), off by default: expert parallelism over the
    # GPUs of a pipeline stage (1 or gpus / pp), data-parallel attention groups (attention TP = `inference_tp` =
    # gpus / (pp x attention_dp)) and redundant expert copies per GPU
    inference_ep: int = _default("inference_ep")
    attention_dp: int = _default("attention_dp")
    redundant_experts: int = _default("redundant_experts")
    efficiency: Efficiency = field(default_factory=Efficiency)
    techniques: tuple[str, ...] = ()
    # speculative decoding (#23), off by default: a draft model preset key ("" = none) or MTP modules (0 = none,
    # DeepSeek-V3 §2.2), the draft's proposed tokens γ and the acceptance rate α (model/step/speculative_step.py)
    draft_model: str = ""
    mtp_depth: int = _default("mtp_depth")
    draft_tokens: int = _default("draft_tokens")
    acceptance: float = _default("acceptance")
    # attention kernel (#22): "auto" = the GPU family's measured flash kernel (kernel_efficiency.py: FlashAttention-3
    # class on Hopper and Blackwell); "flash-attention-2" = FlashAttention-2, PyTorch SDPA's flash backend (2.2+)
    attention_kernel: str = "auto"
    # cost and power, LoRA / QLoRA fine-tuning (#23), all off by default: the price of one GPU-hour in dollars, a
    # user input (0 = none given; model/views/cost.py); LoRA adapters of rank `lora_rank` on `lora_targets`
    # (LORA_TARGETS; 0 = every weight trained), the frozen base in NF4 + double quantisation under `qlora`
    gpu_hour_price: float = _default("gpu_hour_price")
    lora_rank: int = _default("lora_rank")
    lora_targets: str = "qv"
    qlora: bool = False
    # disaggregated prefill and decode (#23), off by default: pool GPUs (0 = aggregated), each pool's instance
    # TP and PP (0 = the replica's), the KV link (auto, scale-up, scale-out), layer-wise KV streaming (Mooncake)
    prefill_gpus: int = _default("prefill_gpus")
    decode_gpus: int = _default("decode_gpus")
    prefill_tp: int = _default("prefill_tp")
    prefill_pp: int = _default("prefill_pp")
    decode_tp: int = _default("decode_tp")
    decode_pp: int = _default("decode_pp")
    kv_transfer_link: str = "auto"
    kv_transfer_layerwise: bool = False
    # FP8 GEMM scaling recipe (#22), off by default: "tensorwise" = one scale per tensor (Transformer Engine,
    # torchao; cuBLAS FP8 GEMMs); "blockwise" = DeepSeek-V3's fine-grained scales (§3.3.2: 1x128 activation tiles,
    # 128x128 weight blocks, partial sums promoted to CUDA cores), timed at its measured rate (kernel_efficiency.py)
    fp8_recipe: str = "tensorwise"
    # decode attention kernel (#22): "auto" = the engine's grouped paged kernel; "masked-mha" = FasterTransformer's
    # and TensorRT-LLM's (before XQA, v0.8) masked MHA: KV read once per query head (formulas/decode_kernels.py)
    decode_attention_kernel: str = "auto"
    # inference engine (#22): "auto" = the device kind's measured line (CUDA-graph engines on GPUs, llama.cpp on
    # Apple GPUs); "fastertransformer" = FasterTransformer's own line: eager launches, in-engine NCCL calls
    decode_runtime: str = "auto"

    def __post_init__(self):
        check_choice("kind", self.kind, WORKLOAD_KINDS)
        check_choice("recompute", self.recompute, RECOMPUTE)
        check_choice("activation_recipe", self.activation_recipe, ACTIVATION_RECIPES)
        check_choice("precision", self.precision, TRAIN_PRECISIONS)
        check_choice("optimizer", self.optimizer, tuple(OPTIMIZER_STATE_BYTES))
        check_choice("weight_dtype", self.weight_dtype, WEIGHT_FORMATS)
        check_choice("kv_dtype", self.kv_dtype, KV_DTYPES)
        check_choice("kv_policy", self.kv_policy, KV_POLICIES)
        check_choice("offload", self.offload, OFFLOAD_MODES)
        check_choice("kv_offload_tier", self.kv_offload_tier, KV_OFFLOAD_TIERS)
        for name, limit in SCENARIO_LIMITS.items():  # the one guard, before any arithmetic
            check_limit(name, getattr(self, name), limit)
        if self.prompt_len + self.gen_len > MAX_CONTEXT_TOKENS:
            raise ValidationError("prompt_len + gen_len", self.prompt_len + self.gen_len,
                                  f"at most {MAX_CONTEXT_TOKENS} tokens per sequence (prompt plus generated)")
        object.__setattr__(self, "techniques", tuple(self.techniques))
        if self.kind == "train":
            self._check_training_layout()
        else:
            self._check_inference_layout()
        check_needed_links(self)  # options that move bytes over a link the hardware lacks (inputs/needed_links)
        check_choice("attention_kernel", self.attention_kernel, ATTENTION_KERNELS)  # attention kernel (#22)
        check_choice("fp8_recipe", self.fp8_recipe, FP8_RECIPES)  # FP8 scaling recipe (#22)
        self._check_lora()  # LoRA / QLoRA (#23)
        # disaggregated prefill and decode (#23)
        check_choice("kv_transfer_link", self.kv_transfer_link, KV_TRANSFER_LINKS)
        check_disaggregation(self)
        check_choice("decode_attention_kernel", self.decode_attention_kernel, DECODE_ATTENTION_KERNELS)  # (#22)
        check_choice("decode_runtime", self.decode_runtime, DECODE_RUNTIMES)  # (#22)

    # --- derived ------------------------------------------------------------------------------
    @property
    def dp(self) -> int:
        """Data-parallel degree: GPUs / (TP x PP x CP). ZeRO divides by this, not by the GPU count."""
        return self.gpus // (self.tp * self.pp * self.cp)

    @property
    def micro_batches(self) -> int:
        """Micro-batches per step per pipeline: global batch / (micro-batch x DP)."""
        return self.global_batch // (self.micro_batch * self.dp)

    @property
    def inference_tp(self) -> int:
        """Tensor-parallel degree of inference: the GPUs of one pipeline stage, gpus / pp, over the attention
        data-parallel groups (1 unless DP-attention is on): gpus / (pp x attention_dp)."""
        return self.gpus // (self.pp * self.attention_dp)

    def replace(self, **changes) -> Scenario:
        return dataclasses.replace(self, **changes)

    # --- validation ---------------------------------------------------------------------------
    def _check_training_layout(self):
        """The training layout rules (model/inputs/layout_rules.py, their one home), then the links, the
        offload target and the training format's peak."""
        m = self.model
        for rule in training_rules(m, gpus=self.gpus, tp=self.tp, pp=self.pp,
                                   cp=self.cp, ep=self.ep, micro_batch=self.micro_batch,
                                   global_batch=self.global_batch, seq_len=self.seq_len,
                                   virtual_stages=self.virtual_stages, first_stage_layers=self.first_stage_layers,
                                   last_stage_layers=self.last_stage_layers):
            if not rule.ok:
                raise ValidationError(rule.field, getattr(self, rule.field), self._training_rule_text(rule.field))
        self._check_links()
        self.hardware.peak(self.precision)  # the hardware must publish a peak for the training format

    def _training_rule_text(self, name: str) -> str:
        """What a refused training layout field must be, in words, with this scenario's numbers."""
        m, p, v = self.model, self.pp, self.virtual_stages
        if name == "first_stage_layers":
            if p < 2:  # one short line (#26): the rule in words ran past 200 characters
                return "0 (uneven first and last stages need pipeline parallelism, PP >= 2)"
            return (f"0 (even split) or at least v = {v} leaving the other {p - 1} stages one of the {m.layers} "
                    f"layers each (last_stage_layers = {self.last_stage_layers})")
        if name == "virtual_stages":
            if p < 2:
                return "1 (interleaving needs pipeline parallelism PP >= 2)"
            if p * v > m.layers + 2:
                return (f"a count with PP x v (here {p * v}) at most the model's {m.layers} layers + 2 "
                        "(every chunk holds a layer, the first and the last may hold only the embedding or the head)")
            return (f"1 unless the {self.micro_batches} micro-batches per step are a multiple of PP = {p} "
                    "(Megatron-LM's interleaved schedule)")
        return {"tp": f"a divisor of the model's {m.heads} attention heads",
                "pp": f"at most the model's {m.layers} layers",
                "cp": f"a divisor of the sequence length {self.seq_len}",
                "gpus": f"a multiple of TP x PP x CP = {self.tp * self.pp * self.cp}",
                "ep": f"a divisor of DP ({self.dp}) and of the expert count ({m.experts})",
                "global_batch": f"a multiple of micro-batch x DP = {self.micro_batch * self.dp}"}[name]

    def _check_links(self):
        """Every group of devices must have a link to talk over: a layout that needs a link the hardware lacks is
        refused (an absent link would otherwise move its bytes in no time). Groups stay in one node while the
        GPUs fit in one (`comms.is_intra_node`); more GPUs than a node holds need the scale-out network
        (`layout_rules.links_ok`)."""
        hw = self.hardware
        if links_ok(hw.scaleup_bw, hw.scaleout_bw, self.gpus, self.gpus_per_node):
            return
        if self.gpus > 1 and hw.scaleup_bw <= 0 and hw.scaleout_bw <= 0:
            why = f"{hw.name} has no device-to-device link: scaleup_bw and scaleout_bw are absent"
            raise MissingLinkError("gpus", self.gpus, f"1 ({why})", "scaleup_bw, scaleout_bw", why)
        why = f"{hw.name} has no scale-out link between nodes (scaleout_bw is absent)"
        raise MissingLinkError("gpus", self.gpus, f"at most one node of {self.gpus_per_node} (gpus_per_node): {why}",
                               "scaleout_bw", why)

    def _check_lora(self):
        """LoRA / QLoRA (#23): targets by name; QLoRA needs adapters; adapters on MHA/GQA projections (MLA's
        low-rank projections are not modelled)."""
        check_choice("lora_targets", self.lora_targets, LORA_TARGETS)
        if self.qlora and self.lora_rank == 0:
            raise ValidationError("qlora", self.qlora, "off unless lora_rank > 0 (QLoRA trains LoRA adapters)")
        if self.lora_rank == 0 or self.kind != "train":
            return
        if self.model.attention == "mla":
            raise ValidationError("lora_rank", self.lora_rank, f"0 for {self.model.name}: LoRA is modelled on "
                                  "MHA/GQA projections, not MLA's low-rank ones")

    def _check_inference_layout(self):
        m, pp = self.model, self.pp
        if not all_hold(inference_rules(m.layers, pp=pp)):
            raise ValidationError("pp", pp, f"a divisor of the model's {m.layers} layers (pipeline-parallel "
                                  "inference: every stage holds layers / PP)")
        if self.gpus % pp:
            raise ValidationError("gpus", self.gpus, f"a multiple of PP = {pp} (inference: TP = gpus / PP)")
        self._check_serving_layout()
        if pp == 1 and self.attention_dp == 1 and m.heads % self.gpus:
            raise ValidationError("gpus", self.gpus,
                                  f"a divisor of the model's {m.heads} heads (tensor parallel inference)")
        if m.heads % self.inference_tp:
            raise ValidationError("gpus", self.gpus, f"PP ({pp}) x a divisor of the model's {m.heads} heads "
                                  f"(inference: TP = gpus / PP = {self.inference_tp} must divide the heads)")
        self._check_links()

    def _check_serving_layout(self):
        """MoE serving with EP and DP-attention (#23): the rules of model/inputs/serving_rules.py."""
        problem = serving_layout_problem(self.model.is_moe, self.model.name, self.gpus, self.pp, self.inference_ep,
                                         self.attention_dp, self.redundant_experts, self.model.heads)
        if problem:
            raise ValidationError(*problem)
