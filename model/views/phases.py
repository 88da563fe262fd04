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
INFER_PHASES = ("prefill", "KV offload", "KV transfer", "decode", "KV onload")  # KV transfer: disaggregated (#23)


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


# The training phases of each stage role (model/views/stages.ROLES); idle time belongs to none.
TRAIN_PHASE_OF_ROLE = {
    "data_load": ("data load",), "steady": ("forward", "backward"), "zero3_gather_prefetched": ("forward", "backward"),
    "activation_swap": ("forward", "backward"), "forward": ("forward",), "forward_comm": ("forward",), "forward_tp_comm": ("forward",),
    "zero3_gather_fwd": ("forward",), "activation_swap_out": ("forward",), "zero3_gather_bwd": ("backward",),
    "activation_swap_in": ("backward",), "backward": ("backward",), "recompute_attention": ("backward",), "recompute_layer": ("backward",),
    "backward_comm": ("backward",), "backward_tp_comm": ("backward",),
    "zero3_gather_exposed": ("backward",), "activation_swap_exposed": ("backward",),
    "dp_grad_sync": ("gradient sync",), "grad_compress": ("gradient sync",), "grads_to_host": ("gradient sync",),
    "optimizer": ("optimizer",), "optimizer_host": ("optimizer",), "params_from_host": ("optimizer",),
    "param_gather": ("optimizer",), "nvme_exposed": ("optimizer",), "bubble": (), "waiting": ()}
INFER_PHASE_OF_ROLE = {"prefill": ("prefill",), "kv_offload": ("KV offload",), "kv_onload": ("KV onload",),
                       "decode": ("decode",), "bubble": (), "waiting": (),
                       "prefill_ep": ("prefill",), "decode_ep": ("decode",),  # MoE serving (#23): EP all-to-all
                       "kv_transfer": ("KV transfer",)}  # disaggregated serving (#23)


def train_phase_of(st: Stage) -> tuple[str, ...]:
    """The training phases a stage belongs to (none for idle time)."""
    return TRAIN_PHASE_OF_ROLE[st.role]


def infer_phase_of(st: Stage) -> tuple[str, ...]:
    """The inference phase a stage belongs to."""
    return INFER_PHASE_OF_ROLE.get(st.role, ("decode",))


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
