"""GPU x GPU matrix of the bytes each rank sends per step to synchronise dense gradients over the scenario's
data-parallel group, for four all-reduce algorithms, with totals and times per link class.

  ring          each rank sends 2(n-1)/n·S to its ring neighbour (reduce-scatter + all-gather;
                mpich-collectives; NCCL bus factor 2(n-1)/n, nccl-tests-performance)
  tree          binary tree (heap order): every non-root sends S to its parent (reduce), every parent sends
                S to each child (broadcast); 2(n-1)·S in all, like the ring; time 2⌈log2 n⌉α + (most bytes
                any rank sends)/B, pipelined (mpich-collectives; a stated approximation of NCCL's trees)
  hierarchical  k group members per node, m nodes: intra-node reduce-scatter and all-gather rings
                ((k-1)/k·S each), then an inter-node ring all-reduce of each rank's shard S/k among its peers
                with the same local index (2(m-1)/m·S/k); total 2(n-1)·S again
  in-network    each rank sends (n-1)/(n+1)·S-equivalent to the switch, which returns the reduced result:
                the bus factor of all-reduce with in-network reduction (nccl-tests-performance; switchml,
                grid-ina). The switch is the matrix's last row and column.

S is the dense gradient of one model-parallel rank: stage_params(...) dense parameters x gradient bytes
(expert gradients sync over DP/EP separately and are not drawn). DP ranks are tp·cp apart (TP innermost,
then CP, then DP: Megatron-LM's layout, `comms.is_intra_node`); a pair of ranks on one node uses the scale-up
link, else scale-out. Times use the alpha-beta functions of `comms` at the scenario's network efficiency.
"""

from __future__ import annotations

import math

import numpy as np

from trinity_desktop.model.base.dtypes import TRAIN_PRECISION_BYTES
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.base.numeric import safe_div
from trinity_desktop.model.formulas.comms import (
    allreduce_bus_factor,
    allreduce_time,
    gather_time,
    in_network_allreduce_bus_factor,
)
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.train_memory import stage_params

SYNC_ALGORITHMS = ("ring", "tree", "hierarchical", "in-network")
LINK_CLASSES = ("scale-up", "scale-out")
MAX_RANKS = 1024


def dp_group(scenario: Scenario) -> tuple[int, int, float]:
    """(n ranks, stride between them, gradient bytes S per rank). An inference scenario is shown as if its
    GPUs trained the model data-parallel (no model parallelism, 16-bit gradients)."""
    sc = scenario
    if sc.kind == "train":
        dense, _ = stage_params(sc.model, sc.tp, sc.pp, sc.ep)
        grad_bytes = TRAIN_PRECISION_BYTES[sc.precision][1]
        return sc.dp, sc.tp * sc.cp, float(np.asarray(dense)) * grad_bytes
    dense, _ = stage_params(sc.model, 1, 1, 1)
    return sc.gpus, 1, float(np.asarray(dense)) * 2.0


def sync_matrix(scenario: Scenario, algorithm: str = "ring", *, n: int | None = None, nbytes: float | None = None,
                stride: int | None = None) -> dict:
    """Bytes sent per step, matrix[src, dst] of shape (n+1, n+1) (index n: the switch, used by in-network).

    Returns matrix, n, nbytes, node (node index of each rank), link_class (matrix of "scale-up" /
    "scale-out" / "" codes as an int array: 0 none, 1 scale-up, 2 scale-out), bytes_by_class {class: total
    bytes}, sent_per_rank, time_by_class {class: s}, time_s (the algorithm's time), model_bytes_per_rank and
    model_time_s (comms.gradient_sync's dense all-reduce, for comparison), k (ranks per node), m (nodes).
    """
    if algorithm not in SYNC_ALGORITHMS:
        raise ValidationError("algorithm", algorithm, "one of " + ", ".join(SYNC_ALGORITHMS))
    d_n, d_stride, d_bytes = dp_group(scenario)
    n = int(d_n if n is None else n)
    stride = int(d_stride if stride is None else stride)
    S = float(d_bytes if nbytes is None else nbytes)
    if not 1 <= n <= MAX_RANKS:
        raise ValidationError("dp", n, f"a data-parallel group of 1 to {MAX_RANKS} ranks for the matrix view")
    hw, gpn, eta = scenario.hardware, scenario.gpus_per_node, scenario.efficiency.network
    ranks = np.arange(n)
    node = (ranks * stride) // gpn
    k = math.gcd(n, max(1, min(n, gpn // stride))) if stride <= gpn else 1
    m = n // k
    M = np.zeros((n + 1, n + 1))
    if n > 1:
        if algorithm == "ring":
            M[ranks, (ranks + 1) % n] = allreduce_bus_factor(n) * S
        elif algorithm == "tree":
            child = ranks[1:]
            parent = (child - 1) // 2
            M[child, parent] += S
            M[parent, child] += S
        elif algorithm == "hierarchical":
            local, grp = ranks % k, ranks // k
            if k > 1:
                M[ranks, grp * k + (local + 1) % k] += 2.0 * (k - 1) / k * S
            if m > 1:
                M[ranks, ((grp + 1) % m) * k + local] += 2.0 * (m - 1) / m * S / k
        else:
            M[ranks, n] = in_network_allreduce_bus_factor(n) * S
            M[n, ranks] = in_network_allreduce_bus_factor(n) * S
    # link class of each cell: same node and a scale-up fabric -> scale-up, else scale-out
    spans = bool(node[-1] != node[0])
    node_ext = np.concatenate([node, [-1]])
    same = node_ext[:, None] == node_ext[None, :]
    intra = same & (hw.scaleup_bw > 0)
    switch_intra = (not spans) and hw.scaleup_bw > 0
    intra[n, :] = intra[:, n] = switch_intra
    cls = np.where(M > 0, np.where(intra, 1, 2), 0)
    bw = {"scale-up": hw.scaleup_bw * eta, "scale-out": hw.scaleout_bw * eta}
    alpha = {"scale-up": hw.scaleup_latency_s, "scale-out": hw.scaleout_latency_s}
    steps = {"ring": 2.0 * (n - 1), "tree": 2.0 * math.ceil(math.log2(n)) if n > 1 else 0.0,
             "in-network": 2.0 if n > 1 else 0.0}
    bytes_by_class, time_by_class = {}, {}
    for code, name in enumerate(LINK_CLASSES, start=1):
        on = np.where(cls == code, M, 0.0)
        bytes_by_class[name] = float(on.sum())
        most = float(on[:n].sum(axis=1).max()) if on.any() else 0.0  # ranks (the switch sends in parallel)
        if algorithm == "hierarchical":
            st = 2.0 * (k - 1) if name == "scale-up" and k > 1 else (2.0 * (m - 1) if m > 1 else 0.0)
            if name == "scale-up" and not (hw.scaleup_bw > 0):
                st = 0.0
            if name == "scale-out" and k > 1 and not (hw.scaleup_bw > 0):
                st += 2.0 * (k - 1)
        else:
            st = steps[algorithm]
        time_by_class[name] = float(safe_div(most, bw[name])) + (st * alpha[name] if on.any() else 0.0)
    if algorithm == "hierarchical":
        total = sum(time_by_class.values())
    else:
        total = max(time_by_class.values())
    # the core's dense all-reduce over the group's slowest link (comms.gradient_sync / link_for_group)
    slow = "scale-out" if (spans or not hw.scaleup_bw > 0) else "scale-up"
    if algorithm == "in-network":
        model_bytes = float(in_network_allreduce_bus_factor(n) * S)
        model_time = (2.0 * alpha[slow] if n > 1 else 0.0) + float(safe_div(model_bytes, bw[slow]))
    else:
        model_bytes = float(allreduce_bus_factor(n) * S)
        model_time = float(allreduce_time(n, S, bw[slow], alpha[slow]))
    return {
        "matrix": M, "n": n, "nbytes": S, "stride": stride, "node": node, "k": k, "m": m,
        "link_class": cls, "bytes_by_class": bytes_by_class, "time_by_class": time_by_class, "time_s": total,
        "sent_per_rank": M[:n].sum(axis=1), "algorithm": algorithm, "has_switch": algorithm == "in-network",
        "model_bytes_per_rank": model_bytes, "model_time_s": model_time,
        "hierarchical_phase_times": _phase_times(k, m, S, bw, alpha) if algorithm == "hierarchical" else {},
    }


def _phase_times(k, m, S, bw, alpha) -> dict:
    """Reduce-scatter (intra), all-reduce of S/k (inter), all-gather (intra): comms' alpha-beta times."""
    return {"intra reduce-scatter": float(gather_time(k, S, bw["scale-up"], alpha["scale-up"])),
            "inter all-reduce": float(allreduce_time(m, S / k, bw["scale-out"], alpha["scale-out"])),
            "intra all-gather": float(gather_time(k, S, bw["scale-up"], alpha["scale-up"]))}
