"""Published, measured runs (resources/published_runs.toml): what was run, where it was published, and the
measured figure as the quantity the model predicts.

Training ([[run]]) and peak memory ([[memory]]) entries state a training layout; inference ([[inference]]) entries
tensor parallelism over `gpus`, one static batch, prompt and output lengths and formats. Measured figures become:
- training step time: a published step time as is; FLOP/s per GPU through the source's own FLOP count,
  t = F / (GPUs x FLOP/s), with F = 96 B s l h^2 (1 + s/6h + V/16lh) for Megatron's count with activation
  recomputation (Narayanan et al. 2021, Eq. 3) or this app's model FLOPs ("model"); tokens/s per GPU X as
  t = global batch x sequence / (GPUs x X);
- inference: a request latency as is, output throughput X (tokens/s, all GPUs, or per GPU x gpus) as the batch's
  time batch x gen_len / X (against `request_s`); a first-token latency, or a prompt rate X (tokens/s) as
  batch x prompt_len / X, against the prefill (`ttft_s`); a time per output token, or a generation rate X as
  batch / X, against one decode step;
- memory: the peak GiB per GPU as bytes (x 2^30), against the training step's `memory_total`; `allocator_peak_gib`
  (PyTorch's caching-allocator peak, as torchtitan reports it) adds the CUDA context it leaves out.
Each run also names its hardware family (GPU generation or SoC line), for leave-one-family-out calibration.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.memory import CUDA_CONTEXT_BYTES
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import evaluate

KINDS = ("training", "inference")
METRICS = ("step_time_s", "flops_per_gpu", "tokens_per_s_per_gpu")
MEMORY_METRICS = ("peak_memory_gib", "allocator_peak_gib")
FLOP_COUNTS = ("megatron-recompute", "model")
# inference metric as published -> the quantity it is compared as
INFER_METRICS = {"request_latency_s": "request_s", "output_tokens_per_s": "request_s",
                 "output_tokens_per_s_per_gpu": "request_s", "ttft_s": "ttft_s", "prompt_tokens_per_s": "ttft_s",
                 "time_per_output_token_s": "time_per_output_token_s",
                 "decode_tokens_per_s": "time_per_output_token_s"}
# hardware preset -> family: the GPU generation (NVIDIA, AMD), the TPU generation, or the SoC line
HARDWARE_FAMILY = {"a100-80gb-sxm": "Ampere", "h100-sxm": "Hopper", "h100-96gb-500w": "Hopper", "h200-sxm": "Hopper", "h800-sxm": "Hopper",
                   "h20": "Hopper", "b200": "Blackwell", "b300": "Blackwell", "gb200-nvl72": "Blackwell",
                   "gb300-nvl72": "Blackwell", "rtx-4090": "Ada Lovelace", "mi300x": "CDNA 3", "mi325x": "CDNA 3",
                   "tpu-v5e": "TPU v5", "tpu-v5p": "TPU v5", "tpu-v6e": "TPU v6", "m4-max": "Apple silicon",
                   "gaudi3": "Gaudi"}
_LAYOUT = ("gpus", "tp", "pp", "cp", "ep", "virtual_stages", "zero", "recompute", "sequence_parallel", "micro_batch",
           "global_batch", "seq_len", "precision", "flash_attention", "activation_recipe", "moe_node_limit",
           "attention_kernel", "mtp_training", "first_stage_layers", "last_stage_layers")  # + MTP as run, uneven stages (#22)
_INFER_LAYOUT = ("gpus", "batch", "prompt_len", "gen_len", "weight_dtype", "kv_dtype")
_INFER_OPTIONAL = ("decode_attention_kernel", "decode_runtime")  # the published engine's kernel and line (#22)
_MODEL_SHAPE = ("name", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab")
GIB = 2 ** 30


@dataclass(frozen=True)
class PublishedRun:
    name: str
    source: str
    where: str
    scenario: Scenario
    metric: str
    measured: float
    flop_count: str
    assumed: str
    kind: str = "training"

    @property
    def quantity(self) -> str:
        if self.kind == "memory":
            return "memory_bytes"
        return "step_time_s" if self.kind == "training" else INFER_METRICS[self.metric]

    @property
    def family(self) -> str:
        hw = self.scenario.hardware
        return HARDWARE_FAMILY.get(hw.key, hw.vendor)

    @property
    def measured_value(self) -> float:
        """The measured figure as its quantity: seconds, or bytes for a memory run (see the module docstring)."""
        sc, m, x = self.scenario, self.metric, self.measured
        if m in ("step_time_s", "request_latency_s", "ttft_s", "time_per_output_token_s"):
            return x
        converted = {"peak_memory_gib": lambda: x * GIB,
                     # PyTorch's caching-allocator peak (torchtitan's max reserved) leaves out the CUDA context
                     "allocator_peak_gib": lambda: x * GIB + CUDA_CONTEXT_BYTES,
                     "output_tokens_per_s": lambda: sc.batch * sc.gen_len / x,
                     "output_tokens_per_s_per_gpu": lambda: sc.batch * sc.gen_len / (x * sc.gpus),
                     "prompt_tokens_per_s": lambda: sc.batch * sc.prompt_len / x,
                     "decode_tokens_per_s": lambda: sc.batch / x,
                     "tokens_per_s_per_gpu": lambda: sc.global_batch * sc.seq_len / (x * sc.gpus)}
        if m in converted:
            return converted[m]()
        if self.flop_count == "megatron-recompute":
            flops = megatron_recompute_flops(sc.global_batch, sc.seq_len, sc.model.layers, sc.model.hidden,
                                             sc.model.vocab)
        else:
            flops = evaluate(sc).train["model_flops"]
        return flops / (sc.gpus * x)


def megatron_recompute_flops(batch, seq, layers, hidden, vocab) -> float:
    """FLOPs per iteration with activation recomputation: 96 B s l h^2 (1 + s/6h + V/16lh) (Narayanan 2021 Eq. 3)."""
    return 96.0 * batch * seq * layers * hidden ** 2 * (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden))


def _model_of(entry: Mapping, name: str):
    models = model_presets()
    model_entry = entry["model"]
    if isinstance(model_entry, Mapping):
        base = models[model_entry["base"]]
        shape = {k: model_entry[k] for k in _MODEL_SHAPE if k in model_entry}
        return replace(base, key=f"{base.key}:{shape.get('name', name)}", **shape)
    return models[str(model_entry)]


def _scenario_of(entry: Mapping, kind: str, hw, model) -> Scenario:
    metric = str(entry["metric"])
    if kind == "inference":
        missing = [k for k in _INFER_LAYOUT if k not in entry]
        if missing:
            raise KeyError(f"layout needs {', '.join(missing)}")
        if metric not in INFER_METRICS:
            raise ValueError(f"metric one of {tuple(INFER_METRICS)}")
        return Scenario(hardware=hw, model=model, kind="decode", gpus_per_node=_node_size(entry, hw),
                        **{k: entry[k] for k in _INFER_LAYOUT},
                        **{k: entry[k] for k in _INFER_OPTIONAL if k in entry})
    allowed = METRICS if kind == "training" else MEMORY_METRICS
    if metric not in allowed or str(entry.get("flop_count", "model")) not in FLOP_COUNTS:
        raise ValueError(f"metric one of {allowed}, flop_count one of {FLOP_COUNTS}")
    return Scenario(hardware=hw, model=model, kind="train", gpus_per_node=_node_size(entry, hw),
                    **{k: entry[k] for k in _LAYOUT if k in entry})


def _node_size(entry: Mapping, hw) -> int:
    """GPUs sharing the scale-up fabric: the run's `gpus_per_node`, else the hardware's own domain (72 on a
    GB200/GB300 NVL72 rack, 8 on an HGX board), as the CLI and the app default it."""
    return int(entry.get("gpus_per_node", hw.gpus_per_node_default))


def _run_from(entry: Mapping, where: str, kind: str = "training") -> PublishedRun:
    """One run of the file; anything missing or out of range is a one-line ValidationError naming the run."""
    name = str(entry.get("name", "?"))
    try:
        sc = _scenario_of(entry, kind, hardware_presets()[str(entry["hardware"])], _model_of(entry, name))
        measured = entry["measured"]
        if isinstance(measured, bool) or not isinstance(measured, (int, float)) or not measured > 0:
            raise ValueError(f"measured = {measured!r} must be a number > 0")
        source = str(entry["source"])
    except (KeyError, TypeError, ValueError) as exc:
        text = str(exc).strip("'\"") if isinstance(exc, KeyError) else str(exc)
        raise ValidationError(f"{where}: {kind} run {name!r}", name,
                              f"a complete, valid run entry ({text.replace(chr(10), ' ')})") from None
    return PublishedRun(name=name, source=source, where=str(entry.get("where", "")), scenario=sc,
                        metric=str(entry["metric"]), measured=float(measured),
                        flop_count=str(entry.get("flop_count", "model")), assumed=str(entry.get("assumed", "")),
                        kind=kind)


def _doc(text: str, where: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(where, str(exc).splitlines()[0], "valid TOML") from None


def runs_from_text(text: str, where: str = "published_runs.toml") -> tuple[PublishedRun, ...]:
    """The timed runs of a runs file's text: training ([[run]]) and then inference ([[inference]])."""
    doc = _doc(text, where)
    return (tuple(_run_from(e, where, "training") for e in doc.get("run", []))
            + tuple(_run_from(e, where, "inference") for e in doc.get("inference", [])))


def memory_runs_from_text(text: str, where: str = "published_runs.toml") -> tuple[PublishedRun, ...]:
    """The peak-memory runs ([[memory]]) of a runs file's text."""
    return tuple(_run_from(e, where, "memory") for e in _doc(text, where).get("memory", []))


def _file_text() -> str:
    return resources.files("trinity_desktop.resources").joinpath("published_runs.toml").read_text(encoding="utf-8")


@cache
def published_runs() -> tuple[PublishedRun, ...]:
    return runs_from_text(_file_text())


@cache
def published_memory_runs() -> tuple[PublishedRun, ...]:
    return memory_runs_from_text(_file_text())
