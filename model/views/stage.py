"""One bar of a step's timeline (`Stage`), what it may be (its kind, binding, role ids) and the timeline's
constants. Qt-free; the stages themselves: model/views/stages.py."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

import numpy as np

from trinity_desktop.model.base.errors import ValidationError

KINDS = ("compute", "communication", "memory-transfer", "idle", "io")
BINDINGS = ("compute", "bandwidth", "memory")
# What a stage does (`Stage.role`), the id views and panels match on (never the stage's name): training's
# forward, backward and recompute compute (of the attention core, or of the whole layer), their TP/CP/EP/PP
# collectives (the "_tp_" roles when they include TP all-reduces), the grouped steady 1F1B block, the ZeRO-3
# prefetched and exposed parameter all-gathers, vDNN activation swaps, the DP gradient sync, DGC/quantisation,
# ZeRO-Offload's transfers and host optimizer, ZeRO-Infinity's exposed NVMe traffic, the ZeRO-1/2 parameter
# all-gather, the data load, the pipeline bubble and the wait after it; inference's prefill, decode steps and KV
# offload/onload between memory tiers.
ROLES = ("forward", "forward_comm", "backward_comm", "forward_tp_comm", "backward_tp_comm", "recompute_attention",
         "recompute_layer", "backward", "steady", "zero3_gather_fwd",
         "zero3_gather_bwd", "zero3_gather_prefetched", "activation_swap_out", "activation_swap_in", "activation_swap",
         "dp_grad_sync", "grads_to_host", "zero3_gather_exposed", "grad_compress", "optimizer",
         "optimizer_host", "params_from_host", "nvme_exposed", "param_gather", "activation_swap_exposed",
         "data_load", "bubble", "waiting", "prefill", "kv_offload", "kv_onload", "decode",
         "speculative_draft", "speculative_verify",  # speculative decoding (#23): draft steps, verify step
         "prefill_ep", "decode_ep",  # MoE serving (#23): the EP dispatch + combine of a prefill or decode bar
         "kv_transfer")  # disaggregated serving (#23): the KV cache from the prefill pool to the decode pool
LINKS = ("hbm", "scale-up", "scale-out", "host")
TIERS = ("hbm", "host")
EXTRA_TIERS = ("cxl", "ssd")   # live-memory keys present only on the stages of a request whose KV uses them
TIER_NAMES = {"host": "host DRAM", "cxl": "CXL pool", "ssd": "NVMe SSD"}
GRAD_BUCKETS = 4       # drawing choice: the core times one overlapped sync; shown as 4 equal buckets
MAX_SIMULATED_MICRO_BATCHES = 96  # beyond this the steady 1F1B middle is drawn as one grouped block per stage
TOKEN_ID_BYTES = 4.0   # int32 token ids (data load assumption)
DP_LANE, HOST_LANE, CPU_LANE, GPU_LANE = "DP network", "host link", "host CPU", "GPU (TP group)"
SOURCES = ("pipedream-1f1b", "megatron-lm", "korthikanti2022", "zero", "zero-offload", "vdnn", "dgc",
           "nccl-tests-performance", "vllm", "pcie-spec", "modelling-assumption")


@lru_cache(maxsize=4096)
def _shared(items: tuple[tuple[str, float], ...]) -> Mapping[str, float]:
    """One read-only mapping per distinct content: the bars of a pipeline repeat a few byte and memory mixes, and
    a 16,384-GPU interleaved step has 68,745 bars (two dicts each held 59 MB for one step)."""
    return MappingProxyType(dict(items))


@dataclass(frozen=True, slots=True)
class Stage:
    """One bar of the timeline. Seconds, FLOPs and bytes are SI and per GPU; memory is live per GPU."""

    name: str
    kind: str
    lane: str
    start_s: float
    end_s: float
    flops: float = 0.0
    bytes_by_link: Mapping[str, float] = field(default_factory=dict)
    live_memory_by_tier: Mapping[str, float] = field(default_factory=dict)
    binding: str = "compute"
    micro_batch: int = -1
    role: str = "forward"  # what the stage does, an id of ROLES (display text: the UI's ui/stage_labels.py)

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValidationError("stage.role", self.role, "one of " + ", ".join(ROLES))
        if self.kind not in KINDS:
            raise ValidationError("stage.kind", self.kind, "one of " + ", ".join(KINDS))
        if self.binding not in BINDINGS:
            raise ValidationError("stage.binding", self.binding, "one of " + ", ".join(BINDINGS))
        links = {k: float(self.bytes_by_link.get(k, 0.0)) for k in LINKS}
        tiers = {k: float(self.live_memory_by_tier.get(k, 0.0)) for k in TIERS}
        tiers.update({k: float(self.live_memory_by_tier[k]) for k in EXTRA_TIERS if k in self.live_memory_by_tier})
        object.__setattr__(self, "bytes_by_link", _shared(tuple(links.items())))
        object.__setattr__(self, "live_memory_by_tier", _shared(tuple(tiers.items())))
        for name in ("start_s", "end_s", "flops"):
            object.__setattr__(self, name, float(getattr(self, name)))

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s

    def as_dict(self) -> dict:
        """Plain JSON-ready numbers (the CLI's `stages` entries and the flow panel's `stageFocused`)."""
        return {"name": self.name, "kind": self.kind, "lane": self.lane, "start_s": self.start_s,
                "end_s": self.end_s, "duration_s": self.duration_s, "flops": self.flops,
                "bytes_by_link": dict(self.bytes_by_link), "live_memory_by_tier": dict(self.live_memory_by_tier),
                "binding": self.binding, "micro_batch": self.micro_batch, "role": self.role}


def _f(x) -> float:
    return float(np.asarray(x, dtype=float))


def _links(**kw) -> dict:
    out = dict.fromkeys(LINKS, 0.0)
    for k, v in kw.items():
        out[k.replace("_", "-")] += float(v)
    return out


def _add(d: dict, link: str, value: float) -> None:
    d[link] = d.get(link, 0.0) + float(value)


def _sum_links(*ds) -> dict:
    out = dict.fromkeys(LINKS, 0.0)
    for d in ds:
        for k, v in d.items():
            out[k] += v
    return out

