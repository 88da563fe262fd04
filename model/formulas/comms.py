"""Collective communication time with the alpha-beta model, and which link a group rides on.

Sources: MPICH collective cost comments (ring all-gather (p-1)a + n(p-1)/p b; reduce-scatter likewise;
all-reduce = reduce-scatter + all-gather); NCCL bus-bandwidth factors (nccl-tests doc/PERFORMANCE.md:
all-reduce 2(n-1)/n, all-gather / reduce-scatter / all-to-all (n-1)/n, in-network all-reduce (n-1)/(n+1)).
`nbytes` is always the full buffer size (the all-reduced tensor, the gathered result). Every function
broadcasts over arrays.
"""

from __future__ import annotations

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars: one formula, grid and scalar
from trinity_desktop.model.base.numeric import safe_div

BUS_FACTOR_SOURCE = "nccl-tests-performance"


def allreduce_bus_factor(n):
    """Bytes each rank sends per byte of buffer in a ring all-reduce: 2(n-1)/n (nccl-tests PERFORMANCE.md)."""
    n = xp.asarray(n, dtype=float)
    return 2.0 * (n - 1.0) / n


def gather_bus_factor(n):
    """Bus factor of all-gather, reduce-scatter and all-to-all: (n-1)/n (nccl-tests PERFORMANCE.md)."""
    n = xp.asarray(n, dtype=float)
    return (n - 1.0) / n


def in_network_allreduce_bus_factor(n):
    """All-reduce with in-network (switch) reduction: (n-1)/(n+1) (nccl-tests PERFORMANCE.md)."""
    n = xp.asarray(n, dtype=float)
    return (n - 1.0) / (n + 1.0)


def allreduce_time(n, nbytes, bw, alpha):
    """Ring all-reduce, alpha-beta model: 2(n-1)a + 2(n-1)/n * S / B (MPICH: reduce-scatter + all-gather)."""
    n = xp.asarray(n, dtype=float)
    return 2.0 * (n - 1.0) * alpha + safe_div(allreduce_bus_factor(n) * nbytes, bw)


def gather_time(n, nbytes, bw, alpha):
    """Ring all-gather or reduce-scatter (and all-to-all, same volume): (n-1)a + (n-1)/n * S / B (MPICH)."""
    n = xp.asarray(n, dtype=float)
    return (n - 1.0) * alpha + safe_div(gather_bus_factor(n) * nbytes, bw)


def p2p_time(nbytes, bw, alpha, active=True):
    """One point-to-point send (pipeline boundary), alpha-beta model: a + S / B, or 0 where inactive
    (Narayanan et al. 2021, pipeline sends)."""
    return xp.where(active, alpha + safe_div(nbytes, bw), 0.0)


def is_intra_node(n, stride, gpus_per_node):
    """A group of n ranks spaced `stride` apart stays in one node when n x stride <= GPUs per node
    (ranks are laid out TP innermost, then CP, then DP, then PP, as Megatron-LM does: Narayanan et al. 2021 §3)."""
    return xp.asarray(xp.asarray(n) * xp.asarray(stride) <= xp.asarray(gpus_per_node), dtype=bool)


def link_for_group(n, stride, gpus_per_node, hw, efficiency):
    """(bandwidth, latency, intra) of the slowest link a group crosses. A node without a scale-up
    fabric, or a group that spans nodes, uses the scale-out network (one NIC per GPU): bandwidth x efficiency,
    the alpha-beta model's beta and alpha (MPICH; hardware.toml links)."""
    intra = is_intra_node(n, stride, gpus_per_node) & (hw.scaleup_bw > 0)
    bw = xp.where(intra, hw.scaleup_bw, hw.scaleout_bw) * efficiency
    alpha = xp.where(intra, hw.scaleup_latency_s, hw.scaleout_latency_s)
    return bw, alpha, intra


def gradient_sync(n, nbytes, bw, alpha, allreduce, compression=1.0, in_network=False):
    """(time, bytes sent per rank) to synchronise `nbytes` of gradients over n data-parallel ranks.

    - dense, all-reduce (ZeRO-0): ring 2(n-1)/n; with in-network (switch) aggregation the bus factor is
      (n-1)/(n+1) (nccl-tests PERFORMANCE.md; SHARP-style reduction in the switch, GRID).
    - dense, ZeRO >= 1: reduce-scatter (n-1)/n (ZeRO §7: the parameter all-gather is counted separately).
    - compressed (DGC top-k, ratio c > 1): sparse gradients do not sum in place, so each rank all-gathers the
      others' (values + indices): (n-1)·S/c (Lin et al. 2018). It wins over the ring only when c > n/2.
    """
    n = xp.asarray(n, dtype=float)
    c = xp.asarray(compression, dtype=float)
    ring = allreduce_time(n, nbytes, bw, alpha)
    ina_factor = in_network_allreduce_bus_factor(n)
    ina = 2.0 * alpha * (n > 1) + safe_div(ina_factor * nbytes, bw)
    dense_ar = xp.where(in_network, ina, ring)
    dense_ar_bytes = xp.where(in_network, ina_factor, allreduce_bus_factor(n)) * nbytes
    rs = gather_time(n, nbytes, bw, alpha)
    rs_bytes = gather_bus_factor(n) * nbytes
    sparse_bytes = (n - 1.0) * nbytes / c
    sparse = (n - 1.0) * alpha + safe_div(sparse_bytes, bw)
    dense_t = xp.where(allreduce, dense_ar, rs)
    dense_b = xp.where(allreduce, dense_ar_bytes, rs_bytes)
    return xp.where(c > 1.0, sparse, dense_t), xp.where(c > 1.0, sparse_bytes, dense_b)
