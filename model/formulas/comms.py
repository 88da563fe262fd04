"""Collective communication time with the alpha-beta model, and which link a group rides on.

Sources: MPICH collective cost comments (ring all-gather (p-1)a + n(p-1)/p b; reduce-scatter likewise;
all-reduce = reduce-scatter + all-gather); NCCL bus-bandwidth factors (nccl-tests doc/PERFORMANCE.md:
all-reduce 2(n-1)/n, all-gather / reduce-scatter / all-to-all (n-1)/n, in-network all-reduce (n-1)/(n+1)).
Inference TP all-reduces add the per-call latency of a small NCCL all-reduce as measured (Triton-distributed
issue #57), `tp_allreduce_time`. `nbytes` is always the full buffer size (the all-reduced tensor, the gathered
result). Every function broadcasts over arrays.
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


# --- MoE token all-to-all (expert parallelism) ---------------------------------------------------------------
# DeepSeek-V3 §3.3.4 ("Low-precision communication"): the activation before the MoE up-projection is dispatched
# in FP8, as is the activation gradient before the down-projection; the forward and backward combines stay BF16.
FP8_BYTES = 1.0


def moe_dispatch_bytes(act_bytes, fp8_dispatch):
    """Bytes per element of the two all-to-alls towards the experts of one MoE layer (forward dispatch, backward
    combine-gradient): FP8 with `fp8_dispatch` (DeepSeek-V3 §3.3.4), else the activation format. The two passes
    back to the tokens (forward combine, backward dispatch-gradient) always carry `act_bytes` (BF16 there)."""
    return xp.where(fp8_dispatch, FP8_BYTES, xp.asarray(act_bytes, dtype=float))


def moe_copies_per_token(top_k, ep, ranks_per_node, node_limit):
    """(inter-node, intra-node) copies of one token's hidden vector that leave its GPU in one dispatch, with its
    top-k routed experts spread evenly over the EP group of `ep` ranks, `ranks_per_node` of them in each node.

    - no node limit (node_limit 0, a plain all-to-all): every copy is sent to its expert's GPU directly; a copy
      is remote with probability (ep - r)/ep and intra-node with (r - 1)/ep (nccl all-to-all).
    - node-limited routing (DeepSeek-V3 §2.1.2, M nodes per token; §3.2.2 kernels): the token crosses the
      scale-out network once per target node, to the GPU with the same in-node index, and is forwarded inside
      the node over NVLink: min(k, M, nodes) target nodes, of which (nodes - 1)/nodes are remote; every copy
      that does not land on its receiving GPU is forwarded, k (r - 1)/r.
    Broadcasts over arrays."""
    k = xp.asarray(top_k, dtype=float)
    ep = xp.asarray(ep, dtype=float)
    r = xp.minimum(xp.asarray(ranks_per_node, dtype=float), ep)
    nodes = xp.maximum(1.0, ep / r)
    limit = xp.asarray(node_limit, dtype=float)
    plain_out = k * (ep - r) / ep
    plain_in = k * (r - 1.0) / ep
    targets = xp.minimum(xp.minimum(k, xp.where(limit > 0, limit, k)), nodes)
    limited_out = targets * (nodes - 1.0) / nodes
    limited_in = k * (r - 1.0) / r
    limited = (limit > 0) & (nodes > 1.0)
    return xp.where(limited, limited_out, plain_out), xp.where(limited, limited_in, plain_in)


def moe_all_to_all(tokens, hidden, top_k, bytes_per_element, ep, ranks_per_node, node_limit,
                   out_link, in_link):
    """(time, scale-out bytes, scale-up bytes) of one MoE all-to-all pass on one GPU: the GPU's `tokens` (its
    share of the micro-batch: sequence / CP, / TP under sequence parallelism) send hidden x bytes per copy
    (`moe_copies_per_token`). The scale-out and scale-up parts run at once (DeepSeek-V3 §3.2.2: "communications
    via IB and NVLink are fully overlapped"), so the pass takes the longer one plus (ep - 1) alphas of the
    slowest link crossed. `out_link` / `in_link` are (bandwidth, alpha) pairs; an EP group inside one node
    sends nothing over the scale-out network."""
    per_copy = xp.asarray(tokens, dtype=float) * hidden * bytes_per_element
    c_out, c_in = moe_copies_per_token(top_k, ep, ranks_per_node, node_limit)
    b_out, b_in = per_copy * c_out, per_copy * c_in
    (bw_o, al_o), (bw_i, al_i) = out_link, in_link
    n = xp.asarray(ep, dtype=float)
    alpha = (n - 1.0) * xp.where(c_out > 0, al_o, al_i)
    t = xp.where(n > 1.0, alpha + xp.maximum(safe_div(b_out, bw_o), safe_div(b_in, bw_i)), 0.0)
    return t, b_out, b_in


# MoE all-to-all over NVLink 5 (#22): DeepEP at EP 32 over GB200 NVL72's multi-node NVLink with 24 SMs reaches
# "about 400 GB/s" dispatch and "about 190 GB/s" combine algorithm bandwidth, against the link's 900 GB/s per
# direction (megatron-dsv3-gb200 §2.2.1). The expert all-to-all inside an NVL72 rack runs at these measured rates
# where they are below the link x network efficiency; GB300 NVL72 (the same NVLink 5 switch system at 900 GB/s per
# GPU) is given GB200's rates, a stated transfer. Inside an 8-GPU HGX B200 node DeepEP V2 measured 726 GB/s
# dispatch and 740 GB/s combine at EP 8 ("deepep-v2": README Performance table, SM100 rows), the link x efficiency
# (720 GB/s) already: HGX B200/B300 and other fabrics keep the link's rate.
NVLINK5_A2A_DISPATCH_BW = 400e9
NVLINK5_A2A_COMBINE_BW = 190e9
NVLINK5_A2A_HARDWARE = ("gb200-nvl72", "gb300-nvl72")


def moe_scaleup_bandwidths(hardware_key, link_bw):
    """(dispatch, combine) bandwidth of the MoE all-to-all's scale-up part: the measured NVL72 DeepEP rates capping
    `link_bw` (bandwidth x efficiency) on NVLINK5_A2A_HARDWARE, else `link_bw` for both. The dispatch kernel runs
    the forward dispatch and the backward combine-gradient, the combine kernel the other two passes."""
    if hardware_key not in NVLINK5_A2A_HARDWARE:
        return link_bw, link_bw
    return xp.minimum(link_bw, NVLINK5_A2A_DISPATCH_BW), xp.minimum(link_bw, NVLINK5_A2A_COMBINE_BW)


# --- inference TP all-reduce: the per-call cost of a small NCCL all-reduce (#22) -----------------------------
# Triton-distributed issue #57 (8 x H100, one node, torch.distributed / NCCL all-reduce, eager): 19.19 us at 128 B,
# 19.50 us at 1 KB, 20.71 us at 16 KB, 25.24 us at 512 KB. A decode step's TP all-reduces carry b x h activations
# (12 KB for GPT-20B at batch 1), so they pay this latency, not bytes over the link.
NCCL_SMALL_ALLREDUCE_S = 19.19e-6
NCCL_SMALL_ALLREDUCE_RANKS = 8
NCCL_SMALL_ALLREDUCE_SOURCE = "nccl-small-allreduce-h100"


def allreduce_call_overhead(alpha):
    """Seconds one NCCL all-reduce call costs beyond the ring's 2(n-1)a: the measured small-message latency at 8
    ranks minus the model's 2 x 7 x a there (launch, the ranks' arrival, the LL protocol's flag waits); 0 where a
    link's own alpha already exceeds it (scale-out). Broadcasts over arrays."""
    ring_part = 2.0 * (NCCL_SMALL_ALLREDUCE_RANKS - 1.0) * xp.asarray(alpha, dtype=float)
    return xp.maximum(0.0, NCCL_SMALL_ALLREDUCE_S - ring_part)


def tp_allreduce_time(n, nbytes, bw, alpha):
    """One tensor-parallel all-reduce of inference (prefill and decode): the ring's alpha-beta time plus the
    per-call overhead (`allreduce_call_overhead`) where n > 1, so 8 ranks with a = 1 us and a tiny buffer take the
    measured 19.19 us (Triton-distributed #57)."""
    n = xp.asarray(n, dtype=float)
    return allreduce_time(n, nbytes, bw, alpha) + xp.where(n > 1.0, allreduce_call_overhead(alpha), 0.0)
