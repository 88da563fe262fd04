"""The phases of one step: the stages of model/views/stages.py grouped the way a talk explains a step. Qt-free.

Training step (Narayanan et al. 2021 for the 1F1B order, reference "pipedream-1f1b"; ZeRO §7, "zero", for the
overlapped gradient sync):
  data load      the token ids read over the host link (model/views/stages.py's stated assumption);
  forward        every micro-batch's forward compute, its forward TP/CP/EP collectives and pipeline sends,
                 the ZeRO-3 forward all-gathers and vDNN activation swaps out;
  backward       every backward compute, its recomputation, its backward collectives, the ZeRO-3 backward
                 all-gathers and activation swaps in;
  gradient sync  the data-parallel gradient all-reduce / reduce-scatter (or DGC's sparse all-gather), DGC
                 top-k selection or gradient quantisation, gradients to the host (ZeRO-Offload);
  optimizer      the optimizer step (on the GPU or the host CPU), updated weights back to the GPU, ZeRO-1/2's
                 parameter all-gather, ZeRO-Infinity's NVMe traffic.
Under 1F1B the forward and backward phases interleave (each micro-batch's backward runs while later forwards
are still in the pipe), so their time spans overlap; a phase is the set of its bars, its span from the first
to the last of them. The grouped steady-state block of a very long pipeline belongs to both. Idle time (the
pipeline bubble) belongs to no phase.

Inference request (vLLM §3 paging, reference "vllm", for the offload/onload): prefill; KV offload (the
prompt's KV written to slower tiers, when it spills); decode (every decode step); KV onload (the off-HBM KV
read back each decode step). Phases that have no bars in a scenario are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.views.stages import Stage

TRAIN_PHASES = ("data load", "forward", "backward", "gradient sync", "optimizer")
INFER_PHASES = ("prefill", "KV offload", "decode", "KV onload")


@dataclass(frozen=True)
class Phase:
    """One phase: its name, the indices of its stages (into the tuple it was built from) and its span."""

    name: str
    members: tuple[int, ...]
    start_s: float
    end_s: float

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


def train_phase_of(st: Stage) -> tuple[str, ...]:
    """The training phases a stage belongs to (none for idle time)."""
    name = st.name
    if st.kind == "idle":
        return ()
    if st.kind == "io":
        return ("data load",)
    if name.startswith("steady 1F1B") or name.startswith(("ZeRO-3 all-gathers (prefetched)", "activation swaps,")):
        return ("forward", "backward")
    if name.startswith(("backward", "recompute")) or "(bwd" in name or name.startswith(
            ("activations in", "ZeRO-3 all-gathers, exposed")) or name == "activation swaps, exposed":
        return ("backward",)
    if name.startswith(("DP gradient", "DGC", "gradient quantisation", "gradients to host")):
        return ("gradient sync",)
    if name.startswith(("optimizer", "updated weights")) or "parameter all-gather" in name:
        return ("optimizer",)
    return ("forward",)


def infer_phase_of(st: Stage) -> tuple[str, ...]:
    name = st.name
    if name.startswith("prefill"):
        return ("prefill",)
    if name.startswith("KV offload"):
        return ("KV offload",)
    if name.startswith("KV onload"):
        return ("KV onload",)
    if st.kind == "idle":
        return ()
    return ("decode",)


def phases(items: tuple[Stage, ...], kind: str) -> tuple[Phase, ...]:
    """The phases of `items` (a `stages()` result) in step order; `kind` is the scenario's kind."""
    order, classify = (TRAIN_PHASES, train_phase_of) if kind == "train" else (INFER_PHASES, infer_phase_of)
    members: dict[str, list[int]] = {name: [] for name in order}
    for i, st in enumerate(items):
        for name in classify(st):
            members[name].append(i)
    out = []
    for name in order:
        idx = members[name]
        if idx:
            out.append(Phase(name, tuple(idx), min(items[i].start_s for i in idx), max(items[i].end_s for i in idx)))
    return tuple(out)
