"""Scenario variants side by side: a baseline and the baseline plus one technique each. Qt-free.

The baseline strips every memory-, bandwidth- and compute-trading technique from the scenario, so that each
variant shows what one technique spends and what it saves (the AI Trinity trade-offs, "fan2026-trinity"):

  training  : recompute none, ZeRO-1 (optimizer states sharded over the data-parallel ranks: Megatron-LM's
              distributed optimizer, the usual setting today), FlashAttention off, no offload, no gradient
              compression, no in-network aggregation. Layout (TP/PP/CP/EP, batch, sequence), precision and
              optimizer are kept. ZeRO-0 was rejected as the baseline: with replicated optimizer states the
              default 70B scenario fits in no variant, and memory would bind everywhere, hiding every shift.
  inference : the KV cache in 16 bits (bf16) with the full cache kept (kv_policy "full").

Variants (each is the baseline plus one change, not cumulative):
  + selective recompute   recompute = "selective"   (Korthikanti et al. 2022, "korthikanti2022")
  + full recompute        recompute = "full"        (Chen et al. 2016, "chen2016")
  + ZeRO-3                zero = 3                  (Rajbhandari et al. 2020, "zero")
  + offload               offload = "optimizer"     (ZeRO-Offload, "zero-offload")
  + gradient compression  grad_compression = 270    (DGC's lower published ratio, 270x-600x, "dgc")
  + FlashAttention        flash_attention = True    ("flashattention")
  + KV quantisation       kv_dtype = "fp8"          (inference only; 8-bit KV cache as in vLLM, "vllm")

A variant that does not apply to the scenario's kind is listed with `scenario=None` and the reason, so the UI
can show it greyed; so is one the hardware cannot run, "not available on this hardware" with the refusal naming
the missing field (+ offload without a host link: host_link_bw is absent, inputs/needed_links.py) (KV quantisation on a training step; recomputation, ZeRO, offload, gradient compression
and FlashAttention on inference, whose core model stores no activations for a backward pass and no s x s
attention scores).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from trinity_desktop.model.base.errors import MissingLinkError, ValidationError
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import Results, evaluate

TRAIN_BASELINE = dict(recompute="none", zero=1, flash_attention=False, offload="none", grad_compression=1.0,
                      in_network_aggregation=False)
INFER_BASELINE = dict(kv_dtype="bf16", kv_policy="full")
DGC_RATIO = 270.0  # Lin et al. 2018 abstract: 270x-600x without accuracy loss (published-figures.md, V)
KV_QUANT_DTYPE = "fp8"

_TRAIN_ONLY = "training technique: an inference request has no backward pass, gradients or optimizer states"
_FLASH_INFER = ("inference model already streams attention (no s x s scores stored), so FlashAttention "
                "changes nothing there")
_KV_TRAIN = "no KV cache in a training step"
NOT_AVAILABLE = "not available on this hardware"


@dataclass(frozen=True)
class Variant:
    name: str
    changes: Mapping[str, object]
    kinds: tuple[str, ...]        # scenario kinds it applies to
    not_applicable: str           # the reason shown when it does not apply
    source: str                   # key of resources/references.toml


VARIANTS: tuple[Variant, ...] = (
    Variant("baseline", {}, ("train", "prefill", "decode"), "", "modelling-assumption"),
    Variant("+ selective recompute", {"recompute": "selective"}, ("train",), _TRAIN_ONLY, "korthikanti2022"),
    Variant("+ full recompute", {"recompute": "full"}, ("train",), _TRAIN_ONLY, "chen2016"),
    Variant("+ ZeRO-3", {"zero": 3}, ("train",), _TRAIN_ONLY, "zero"),
    Variant("+ offload", {"offload": "optimizer"}, ("train",), _TRAIN_ONLY, "zero-offload"),
    Variant("+ gradient compression", {"grad_compression": DGC_RATIO}, ("train",), _TRAIN_ONLY, "dgc"),
    Variant("+ FlashAttention", {"flash_attention": True}, ("train",), _FLASH_INFER, "flashattention"),
    Variant("+ KV quantisation", {"kv_dtype": KV_QUANT_DTYPE}, ("prefill", "decode"), _KV_TRAIN, "vllm"),
)


@dataclass(frozen=True)
class VariantResult:
    """One variant's numbers (SI, per GPU), or `results=None` with the reason it does not apply."""

    name: str
    scenario: Scenario | None
    results: Results | None
    reason: str = ""
    time_by_stage: Mapping[str, float] = field(default_factory=dict)
    memory: Mapping[str, float] = field(default_factory=dict)
    bytes_by_link: Mapping[str, float] = field(default_factory=dict)
    binding: str = "n/a"
    time_total: float = 0.0
    memory_total: float = 0.0
    capacity: float = 0.0
    fits: bool = True

    def __post_init__(self):
        for name in ("time_by_stage", "memory", "bytes_by_link"):
            object.__setattr__(self, name, MappingProxyType(dict(getattr(self, name))))

    @property
    def applicable(self) -> bool:
        return self.results is not None


def baseline(base: Scenario) -> Scenario:
    """The scenario with every technique of the variant set switched off (see the module docstring)."""
    if not isinstance(base, Scenario):
        raise ValidationError("base", type(base).__name__, "a Scenario")
    return base.replace(**(TRAIN_BASELINE if base.kind == "train" else INFER_BASELINE))


def variant_scenarios(base: Scenario) -> list[tuple[str, Scenario | None, str]]:
    """(name, scenario or None, reason) for every entry of `VARIANTS`, built on `baseline(base)`."""
    b = baseline(base)
    out = []
    for v in VARIANTS:
        if base.kind not in v.kinds:
            out.append((v.name, None, f"not applicable: {v.not_applicable}"))
            continue
        try:
            out.append((v.name, b.replace(**v.changes), ""))
        except MissingLinkError as exc:  # an option the hardware lacks a link for (inputs/needed_links.py)
            out.append((v.name, None, f"{NOT_AVAILABLE}: {exc.why}"))
        except ValidationError as exc:  # a variant this scenario's layout cannot take
            out.append((v.name, None, f"not valid here: {exc}"))
    return out


def variant_result(name: str, results: Results) -> VariantResult:
    """The numbers the outcomes dock shows for one evaluated scenario (also used for "current scenario")."""
    return VariantResult(name=name, scenario=results.scenario, results=results, time_by_stage=dict(results.time),
                         memory=dict(results.memory), bytes_by_link=dict(results.bytes_by_link),
                         binding=results.bottleneck, time_total=results.time_total,
                         memory_total=results.memory_total, capacity=results.capacity, fits=results.fits)


def compare(base: Scenario) -> list[VariantResult]:
    """Evaluate every variant of `base`: step time by stage, memory per GPU by component, bytes per link and
    the binding resource (`Results.bottleneck`). Not-applicable variants carry their reason and no numbers."""
    out = []
    for name, sc, reason in variant_scenarios(base):
        if sc is None:
            out.append(VariantResult(name=name, scenario=None, results=None, reason=reason))
        else:
            out.append(variant_result(name, evaluate(sc)))
    return out
