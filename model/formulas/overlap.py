"""Which communication hides behind compute, and what stays on the critical path. Vectorised.

Every term follows one rule: exposed = max(0, communication - the compute it can hide behind), so
0 <= exposed <= communication. Each overlap is an option with a stated default and a source:

- DP gradient reduce-scatter / all-reduce in buckets during the backward pass (reference "pytorch-ddp":
  DistributedDataParallel's bucket_cap_mb = 25; "nemo-comm-overlap": Megatron Core's chunked overlap "exposes
  only one DP communication chunk"): buckets are reduced as the backward produces them, but the last bucket is
  only ready when the backward ends, so its share stays exposed. On by default, scaled by the
  `grad_overlap_fraction` assumption (assumptions.toml).
- ZeRO-3 / FSDP parameter all-gathers prefetched behind the compute ("zero" §7, "pytorch-fsdp"): exposed only
  where a micro-batch's gathers outlast its compute. Always on.
- TP all-gather / reduce-scatter under sequence parallelism pipelined with the GEMMs ("nemo-comm-overlap":
  Transformer Engine, tp_comm_overlap=True). An option the run turns on: off by default, and only with
  sequence parallelism (Scenario.tp_comm_overlap).
- The EP all-to-all and the PP sends overlapped with the compute of a paired forward and backward chunk
  ("deepseek-v3" §3.2.1 DualPipe: "both all-to-all and PP communication can be fully hidden"). Off by default
  (1F1B does not pair chunks; Scenario.ep_comm_overlap). While it runs, 20 of the H800's 132 SMs drive the
  communication ("deepseek-v3" §3.5.1), so compute runs on the rest: COMM_SM_SHARE.
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.base.numeric import safe_div

DDP_BUCKET_BYTES = 25.0 * 2**20   # PyTorch DistributedDataParallel bucket_cap_mb default (25 MiB)
COMM_SM_SHARE = 20.0 / 132.0      # DeepSeek-V3 §3.5.1: 20 of 132 H800 SMs run the all-to-all and PP kernels


@dataclass(frozen=True)
class CommTerm:
    """One kind of communication per step: its total time and the part left on the critical path (seconds;
    numbers or broadcast arrays). overlapped = total - exposed."""

    total: object
    exposed: object

    @property
    def overlapped(self):
        return xp.maximum(0.0, self.total - self.exposed)  # >= 0 through rounding too


def exposed_after(comm, hideable):
    """max(0, comm - hideable), with hideable clipped to >= 0: the rule every overlap follows."""
    comm = xp.asarray(comm, dtype=float)
    return xp.maximum(0.0, comm - xp.maximum(0.0, hideable))


def bucketed_grad_exposed(t_sync, free_backward, wire_bytes, bucket_bytes=DDP_BUCKET_BYTES):
    """(exposed, hidden) seconds of a gradient sync of `wire_bytes` (t_sync seconds) in buckets of `bucket_bytes`
    behind `free_backward` seconds of backward compute: the last bucket, a share min(1, bucket / bytes) of the
    sync, starts only after the backward (pytorch-ddp bucketing; nemo-comm-overlap)."""
    t_sync = xp.asarray(t_sync, dtype=float)
    last = t_sync * xp.minimum(1.0, safe_div(bucket_bytes, wire_bytes))
    hidden = xp.minimum(xp.maximum(0.0, free_backward), t_sync - last)
    return t_sync - hidden, hidden


def tp_exposed(t_tp, compute, tp_overlap, sp):
    """TP all-reduce / all-gather + reduce-scatter time left exposed per micro-batch: hidden behind the GEMMs of
    the same micro-batch when `tp_overlap` is on with sequence parallelism (nemo-comm-overlap: Transformer
    Engine's pipelined TP overlap), else all of it."""
    on = xp.asarray(tp_overlap, dtype=bool) & xp.asarray(sp, dtype=bool)
    return xp.where(on, exposed_after(t_tp, compute), xp.asarray(t_tp, dtype=float))


def dualpipe_compute(compute, ep_overlap, active):
    """Compute time of a micro-batch while DualPipe's communication kernels hold COMM_SM_SHARE of the SMs
    (DeepSeek-V3 §3.5.1): compute / (1 - share) where the overlap runs (`active`), else unchanged."""
    on = xp.asarray(ep_overlap, dtype=bool) & xp.asarray(active, dtype=bool)
    return xp.where(on, compute / (1.0 - COMM_SM_SHARE), compute)


def dualpipe_exposed(t_comm, hideable, ep_overlap, active):
    """EP all-to-all + PP send time left exposed per micro-batch: behind the paired chunk's compute under DualPipe
    (DeepSeek-V3 §3.2.1) where `active` (an expert-parallel or pipelined step with >= 2 micro-batches to pair),
    else all of it."""
    on = xp.asarray(ep_overlap, dtype=bool) & xp.asarray(active, dtype=bool)
    return xp.where(on, exposed_after(t_comm, hideable), xp.asarray(t_comm, dtype=float))
