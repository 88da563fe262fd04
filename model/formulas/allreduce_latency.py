"""The latency of one small NCCL all-reduce in inference TP, in a node and across nodes: ring or tree. Vectorized.

A decode step's TP all-reduces carry b x h activations (40 KB for Megatron-530B at batch 1), so their time is the
collective's latency, not bytes over the link. NCCL prices a small all-reduce with its tuning model
(NVIDIA/nccl src/graph/tuning.cc, key "nccl-tuning-model") and runs the cheaper of two algorithms:
- ring: 2(n - 1) steps, of which 2(nodes - 1) cross the network: base + (2(n-1) - 2(nodes-1)) · intra + 2(nodes-1) · inter;
- tree: a chain inside each node and a binary tree between nodes, up and down:
  base + 2((n/nodes - 1) · intra + log2(nodes) · inter).
In one node the two are the same, base + 2(n - 1) · intra. With many nodes the tree's log2 beats the ring's linear
count, which is why NCCL runs trees for small messages across nodes.

The three constants are measured, not NCCL's own table (whose absolute figures run below measured times):
- A100 in a DGX A100 (nccl-tests issue #123, "Understanding the latency of NCCL", NCCL_ALGO=Ring, 8-128 B):
  2 GPUs 10.0 us, 8 GPUs 33.7 us. The slope over the 12 extra ring steps is intra = 1.975 us a step and the
  intercept base = 10.0 - 2 x 1.975 = 6.05 us (the 4-GPU row, 16.88 us, lies 1.0 us under that line).
- Across two DGX A100 over InfiniBand (NVIDIA/nccl issue #812, NCCL 2.16.5, Ring, 16 ranks): 93.12 us at 8 B.
  Of its 30 ring steps 2 cross the network: inter = (93.12 - 6.05 - 28 x 1.975) / 2 = 15.885 us a step.
Hardware without such rows keeps comms.tp_allreduce_time: the H100 call latency of Triton-distributed #57 over
the ring's alphas of its link (across nodes the ring with the preset's scale-out alpha; no inter-node step was
measured for it, so no tree is credited there).

Hopper over NVLink 4 (H100 SXM, and the H200 on the same 18-link NVLink 4 / NVSwitch fabric): the same table of
Triton-distributed #57 (key "nccl-small-allreduce-h100": NCCL all-reduce on 8 H100 in one node, 128 B 19.19 us,
1 KB 19.50, 16 KB 20.71, 32 KB 22.65, 128 KB 23.71, 512 KB 25.24, 1 MB 32.42) shows the time growing with the
message well before the link's bandwidth explains it (1 MB: 32.42 us measured, 19.19 + 2 x 7/8 x 1 MB / 360 GB/s =
24.3 us by the alpha-beta line): NCCL's LL and LL128 protocols and its channel count, not the wire. That excess,
measured minus the 8-rank alpha-beta line at the same size (interpolated in log size between the rows, 0 below
128 B), is added to every intra-node Hopper all-reduce; above 1 MB it is held at its 1 MB value (no larger row
read), and it is taken to be the same at 2 and 4 ranks (a stated transfer: only the 8-rank column was measured).
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp
from trinity_desktop.model.base.numeric import safe_div
from trinity_desktop.model.formulas.comms import allreduce_bus_factor, tp_allreduce_time

# nccl-tests issue #123 (DGX-A100, Ring, one channel): (GPUs, small-message all-reduce us)
A100_RING_ROWS = ((2, 10.0), (8, 33.7))
# NVIDIA/nccl issue #812 (2 x DGX A100, RDMA, NCCL 2.16.5, Ring): 16 ranks, 8 B, out-of-place us
A100_TWO_NODE_RING = (16, 2, 93.12)


@dataclass(frozen=True)
class AllReduceLatency:
    """A small all-reduce's fixed cost per call and per ring step, inside a node and across nodes (seconds)."""

    base_s: object
    intra_step_s: object
    inter_step_s: object
    source: str


def a100_latency() -> AllReduceLatency:
    """The A100 constants from the two measured tables (module docstring)."""
    (n1, t1), (n2, t2) = A100_RING_ROWS
    intra = (t2 - t1) / (2.0 * (n2 - n1))
    base = t1 - 2.0 * (n1 - 1) * intra
    n, nodes, t = A100_TWO_NODE_RING
    inter_steps = 2.0 * (nodes - 1)
    inter = (t - base - (2.0 * (n - 1) - inter_steps) * intra) / inter_steps
    return AllReduceLatency(base * 1e-6, intra * 1e-6, inter * 1e-6, "nccl-tests-latency-a100")


MEASURED = {"a100-80gb-sxm": a100_latency()}

# Triton-distributed #57, NCCL column (8 x H100 SXM, one node): (payload bytes, us)
HOPPER_NVLINK_ROWS = ((128, 19.19), (1024, 19.50), (16384, 20.71), (32768, 22.65), (131072, 23.71),
                      (524288, 25.24), (1048576, 32.42))
HOPPER_NVLINK_RANKS = 8
HOPPER_NVLINK_HARDWARE = ("h100-sxm", "h200-sxm")


def hopper_size_excess(nbytes, bw):
    """Seconds a Hopper NVLink all-reduce of `nbytes` takes beyond the 8-rank alpha-beta line (module docstring):
    the measured row, log-interpolated, minus (19.19 us + 2 x 7/8 x S / bw); never negative."""
    sizes = xp.log(xp.asarray([r[0] for r in HOPPER_NVLINK_ROWS], dtype=float))
    times = xp.asarray([r[1] for r in HOPPER_NVLINK_ROWS], dtype=float) * 1e-6
    s = xp.clip(xp.asarray(nbytes, dtype=float), HOPPER_NVLINK_ROWS[0][0], HOPPER_NVLINK_ROWS[-1][0])
    measured = xp.interp(xp.log(s), sizes, times)
    line = times[0] + safe_div(allreduce_bus_factor(float(HOPPER_NVLINK_RANKS)) * s, bw)
    return xp.maximum(measured - line, 0.0)


def ring_latency(lat: AllReduceLatency, n, nodes):
    """base + (2(n-1) - 2(nodes-1)) intra + 2(nodes-1) inter (nccl-tuning-model, ring all-reduce steps)."""
    n, nodes = xp.asarray(n, dtype=float), xp.asarray(nodes, dtype=float)
    inter_steps = 2.0 * (nodes - 1.0)
    return lat.base_s + (2.0 * (n - 1.0) - inter_steps) * lat.intra_step_s + inter_steps * lat.inter_step_s


def tree_latency(lat: AllReduceLatency, n, nodes):
    """base + 2((n/nodes - 1) intra + log2(nodes) inter) (nccl-tuning-model, tree all-reduce)."""
    n, nodes = xp.asarray(n, dtype=float), xp.asarray(nodes, dtype=float)
    return lat.base_s + 2.0 * ((n / nodes - 1.0) * lat.intra_step_s + xp.log2(nodes) * lat.inter_step_s)


def small_allreduce_latency(lat: AllReduceLatency, n, nodes):
    """The cheaper of ring and tree, as NCCL's tuner picks; 0 for one rank."""
    t = xp.minimum(ring_latency(lat, n, nodes), tree_latency(lat, n, nodes))
    return xp.where(xp.asarray(n, dtype=float) > 1.0, t, 0.0)


def inference_allreduce_time(n, nbytes, bw, hw, gpus_per_node, intra):
    """One TP all-reduce of inference on `hw`: latency (module docstring) + 2(n-1)/n · S / B. `bw` and `intra` are
    the group's link (comms.link_for_group); a group spans n / gpus_per_node nodes where it leaves the node."""
    n = xp.asarray(n, dtype=float)
    per_node = xp.minimum(n, xp.asarray(gpus_per_node, dtype=float))
    nodes = xp.where(intra, 1.0, xp.maximum(n / per_node, 1.0))
    lat = MEASURED.get(hw.key)
    if lat is None:  # no measured rows: comms.tp_allreduce_time with the preset's alphas (module docstring)
        t = tp_allreduce_time(n, nbytes, bw, xp.where(intra, hw.scaleup_latency_s, hw.scaleout_latency_s))
        if hw.key in HOPPER_NVLINK_HARDWARE:  # the measured size excess inside an NVLink 4 node
            t = t + xp.where(intra & (n > 1.0), hopper_size_excess(nbytes, bw), 0.0)
        return t
    bytes_s = xp.where(n > 1.0, safe_div(allreduce_bus_factor(n) * nbytes, bw), 0.0)
    return small_allreduce_latency(lat, n, nodes) + bytes_s
