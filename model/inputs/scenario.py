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
    WEIGHT_DTYPES,
    check_choice,
)
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.kv_policy import KV_POLICIES
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.needed_links import check_needed_links

WORKLOAD_KINDS = ("train", "prefill", "decode")
RECOMPUTE = ("none", "selective", "full")
RECOMPUTE_CODE = {name: i for i, name in enumerate(RECOMPUTE)}
# ZeRO-Offload (Ren et al. 2021): fp32 master + optimizer states in host memory, the optimizer step on the
# CPU, gradients and updated weights crossing the host link each step. vDNN (Rhu et al. 2016): activations
# copied to host memory during the forward pass and prefetched for the backward pass. ZeRO-Infinity
# (Rajbhandari et al. 2021): as ZeRO-Offload, but the fp32 master weights and optimizer states live on NVMe and
# stream through host memory for the CPU's optimizer step.
OFFLOAD_MODES = ("none", "optimizer", "activations", "nvme")
OFFLOAD_CODE = {name: i for i, name in enumerate(OFFLOAD_MODES)}
# Where offloaded KV cache lives: host DRAM over the host link (FlexGen), or a CXL memory pool (Pond).
KV_OFFLOAD_TIERS = ("host", "cxl")
GRAD_COMM_BYTES_MIN, GRAD_COMM_BYTES_MAX = 0.125, 4.0
MAX_CONTEXT_TOKENS = 1 << 24  # prompt + generated tokens per sequence (the residency and matrix panels' axis)


@dataclass(frozen=True)
class Efficiency:
    """Achievable fractions of the datasheet peaks. Stated modelling assumptions, adjustable:
    sustained GEMM throughput near 50% of dense peak (Megatron-LM reports 30-52% MFU end to end),
    80% of HBM bandwidth for streaming kernels, 80% of link bandwidth for large collectives."""

    compute: float = 0.5
    hbm: float = 0.8
    network: float = 0.8

    def __post_init__(self):
        for name in ("compute", "hbm", "network"):
            value = getattr(self, name)
            if not 0.01 <= value <= 1.0:
                raise ValidationError(f"efficiency.{name}", value, "a fraction between 0.01 and 1")


@dataclass(frozen=True)
class Scenario:
    hardware: Hardware
    model: Architecture
    kind: str = "train"
    gpus: int = 8
    gpus_per_node: int = 8
    # parallelism (training); inference uses pipeline parallelism `pp` and tensor parallelism over the rest,
    # TP = gpus / pp (`inference_tp`)
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    # interleaved 1F1B: model chunks per pipeline stage (Narayanan et al. 2021 §2.2.2); 1 = plain 1F1B
    virtual_stages: int = 1
    sequence_parallel: bool = True
    # training
    zero: int = 1
    recompute: str = "selective"
    flash_attention: bool = True
    micro_batch: int = 1
    global_batch: int = 64
    seq_len: int = 4096
    precision: str = "bf16"
    optimizer: str = "adamw"
    # inference
    batch: int = 1
    prompt_len: int = 2048
    gen_len: int = 512
    weight_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    kv_policy: str = "full"
    kv_window: int = 4096
    kv_sinks: int = 4
    kv_heavy_ratio: float = 0.2
    razor_retrieval_fraction: float = 0.15
    # techniques that move data instead of keeping it (training)
    offload: str = "none"
    grad_compression: float = 1.0
    in_network_aggregation: bool = False
    # quantised gradient communication (QSGD; 8-bit all-reduce): bytes per gradient element on the wire,
    # 0 = the training format's gradient width (off)
    grad_comm_bytes: float = 0.0
    # inference: share of the KV cache kept in host DRAM and fetched over the host link (FlexGen)
    kv_offload_fraction: float = 0.0
    kv_offload_tier: str = "host"
    # inference: share of each prompt found in the prefix cache (vLLM automatic prefix caching)
    prefix_hit_fraction: float = 0.0
    efficiency: Efficiency = field(default_factory=Efficiency)
    techniques: tuple[str, ...] = ()

    def __post_init__(self):
        check_choice("kind", self.kind, WORKLOAD_KINDS)
        check_choice("recompute", self.recompute, RECOMPUTE)
        check_choice("precision", self.precision, TRAIN_PRECISIONS)
        check_choice("optimizer", self.optimizer, tuple(OPTIMIZER_STATE_BYTES))
        check_choice("weight_dtype", self.weight_dtype, WEIGHT_DTYPES)
        check_choice("kv_dtype", self.kv_dtype, KV_DTYPES)
        check_choice("kv_policy", self.kv_policy, KV_POLICIES)
        check_choice("offload", self.offload, OFFLOAD_MODES)
        check_choice("kv_offload_tier", self.kv_offload_tier, KV_OFFLOAD_TIERS)
        for name, lo, hi in (("kv_heavy_ratio", 0.001, 1.0), ("razor_retrieval_fraction", 0.0, 1.0),
                             ("grad_compression", 1.0, 10000.0), ("kv_offload_fraction", 0.0, 1.0),
                             ("prefix_hit_fraction", 0.0, 1.0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
                raise ValidationError(name, value, f"a number from {lo} to {hi}")
        gcb = self.grad_comm_bytes
        if (isinstance(gcb, bool) or not isinstance(gcb, (int, float))
                or not (gcb == 0 or GRAD_COMM_BYTES_MIN <= gcb <= GRAD_COMM_BYTES_MAX)):
            raise ValidationError("grad_comm_bytes", gcb, f"0 (the gradient format) or a byte width from "
                                  f"{GRAD_COMM_BYTES_MIN} (1 bit) to {GRAD_COMM_BYTES_MAX} (fp32)")
        limits = {"gpus": 1 << 20, "gpus_per_node": 1024, "tp": 1024, "pp": 1024, "cp": 1024, "ep": 1024,
                  "virtual_stages": 1024,
                  "micro_batch": 1 << 16, "global_batch": 1 << 24, "seq_len": 1 << 24, "batch": 1 << 20,
                  "prompt_len": 1 << 24, "gen_len": 1 << 24, "kv_window": 1 << 24}
        for name, upper in limits.items():
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= upper:
                raise ValidationError(name, value, f"a whole number from 1 to {upper}")
        if self.prompt_len + self.gen_len > MAX_CONTEXT_TOKENS:
            raise ValidationError("prompt_len + gen_len", self.prompt_len + self.gen_len,
                                  f"at most {MAX_CONTEXT_TOKENS} tokens per sequence (prompt plus generated)")
        if isinstance(self.kv_sinks, bool) or not isinstance(self.kv_sinks, int) or not 0 <= self.kv_sinks <= 1 << 20:
            raise ValidationError("kv_sinks", self.kv_sinks, "a whole number from 0 to 1048576")
        if not isinstance(self.zero, int) or not 0 <= self.zero <= 3:
            raise ValidationError("zero", self.zero, "a ZeRO stage 0, 1, 2 or 3")
        object.__setattr__(self, "techniques", tuple(self.techniques))
        if self.kind == "train":
            self._check_training_layout()
        else:
            self._check_inference_layout()
        check_needed_links(self)  # options that move bytes over a link the hardware lacks (inputs/needed_links)

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
        """Tensor-parallel degree of inference: the GPUs of one pipeline stage, gpus / pp."""
        return self.gpus // self.pp

    def replace(self, **changes) -> Scenario:
        return dataclasses.replace(self, **changes)

    # --- validation ---------------------------------------------------------------------------
    def _check_training_layout(self):
        m = self.model
        if m.heads % self.tp:
            raise ValidationError("tp", self.tp, f"a divisor of the model's {m.heads} attention heads")
        if self.pp > m.layers:
            raise ValidationError("pp", self.pp, f"at most the model's {m.layers} layers")
        if self.seq_len % self.cp:
            raise ValidationError("cp", self.cp, f"a divisor of the sequence length {self.seq_len}")
        model_parallel = self.tp * self.pp * self.cp
        if self.gpus % model_parallel:
            raise ValidationError("gpus", self.gpus, f"a multiple of TP x PP x CP = {model_parallel}")
        if self.dp % self.ep or m.experts % self.ep:
            raise ValidationError("ep", self.ep, f"a divisor of DP ({self.dp}) and of the expert count ({m.experts})")
        if self.global_batch % (self.micro_batch * self.dp):
            raise ValidationError("global_batch", self.global_batch,
                                  f"a multiple of micro-batch x DP = {self.micro_batch * self.dp}")
        self._check_virtual_stages()
        self._check_links()
        self.hardware.peak(self.precision)  # the hardware must publish a peak for the training format

    def _check_virtual_stages(self):
        """Interleaved 1F1B (Megatron-LM): PP >= 2, every stage holds v equal chunks of layers (L divisible
        by p·v, or L + 2 when the first and the last stage hold one layer fewer, as Llama 3 §3.3.2 balances its
        126 layers over PP16), and the micro-batches come in groups of p (m a multiple of p)."""
        v, p, layers = self.virtual_stages, self.pp, self.model.layers
        if v == 1:
            return
        if p < 2:
            raise ValidationError("virtual_stages", v, "1 (interleaving needs pipeline parallelism PP >= 2)")
        if layers % (p * v) and (layers + 2) % (p * v):
            raise ValidationError("virtual_stages", v, f"a count such that PP x v (here {p * v}) divides the model's "
                                  f"{layers} layers (or {layers + 2}: one fewer on the first and the last stage)")
        if self.micro_batches % p:
            raise ValidationError("virtual_stages", v, f"1 unless the {self.micro_batches} micro-batches per step "
                                  f"are a multiple of PP = {p} (Megatron-LM's interleaved schedule)")

    def _check_links(self):
        """Every group of devices must have a link to talk over: a layout that needs a link the hardware lacks is
        refused (an absent link would otherwise move its bytes in no time). Groups stay in one node while the
        GPUs fit in one (`comms.is_intra_node`); more GPUs than a node holds need the scale-out network."""
        hw = self.hardware
        if self.gpus > 1 and hw.scaleup_bw <= 0 and hw.scaleout_bw <= 0:
            raise ValidationError("gpus", self.gpus, f"1 ({hw.name} has no device-to-device link)")
        if self.gpus > self.gpus_per_node and hw.scaleout_bw <= 0:
            raise ValidationError("gpus", self.gpus, f"at most one node of {self.gpus_per_node} (gpus_per_node): "
                                  f"{hw.name} has no scale-out link (scaleout_bw = 0) between nodes")

    def _check_inference_layout(self):
        m, pp = self.model, self.pp
        if m.layers % pp:
            raise ValidationError("pp", pp, f"a divisor of the model's {m.layers} layers (pipeline-parallel "
                                  "inference: every stage holds layers / PP)")
        if self.gpus % pp:
            raise ValidationError("gpus", self.gpus, f"a multiple of PP = {pp} (inference: TP = gpus / PP)")
        if pp == 1 and m.heads % self.gpus:
            raise ValidationError("gpus", self.gpus,
                                  f"a divisor of the model's {m.heads} heads (tensor parallel inference)")
        if m.heads % self.inference_tp:
            raise ValidationError("gpus", self.gpus, f"PP ({pp}) x a divisor of the model's {m.heads} heads "
                                  f"(inference: TP = gpus / PP = {self.inference_tp} must divide the heads)")
        self._check_links()
