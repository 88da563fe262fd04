"""Interleaved 1F1B: the order and start times of every model chunk's forward and backward on every stage.

Narayanan et al. 2021 §2.2.2 (reference "pipedream-1f1b"), as Megatron-LM schedules it
(`forward_backward_pipelining_with_interleaving`): each of the p stages holds v chunks of L/(p·v) layers; chunk
c of stage r is virtual stage c·p + r. The k-th forward of a stage runs chunk (k // p) mod v of micro-batch
(k // (p·v))·p + k mod p; the k-th backward runs chunk v-1 - (k // p) mod v of the same micro-batch. Stage r
first runs min(2(p-1-r) + (v-1)p, m·v) warm-up forwards, then alternates one forward and one backward, then
drains the backwards. A forward waits for the same chunk's forward on the previous stage (chunk c-1 on the
last stage for stage 0); a backward waits for the next stage's (chunk c+1 on stage 0 for the last stage).

With uniform chunk times t_f/v and t_b/v the schedule lasts (m + (p-1)/v)(t_f + t_b): the bubble is
(p-1)/(v·m) of the ideal time m(t_f + t_b), v times smaller than plain 1F1B's (p-1)/m. Micro-batches come in
groups of p, so m must be a multiple of p.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.errors import ValidationError


@dataclass(frozen=True)
class ChunkOp:
    """One chunk's forward ("F") or backward ("B") on one stage, in the stage's execution order."""

    op: str
    micro_batch: int
    chunk: int
    start_s: float
    end_s: float


def _virtual(k: int, p: int, v: int, backward: bool) -> tuple[int, int]:
    """(micro-batch, chunk) of the k-th forward or backward of a stage."""
    group = (k // p) % v
    return (k // (p * v)) * p + k % p, (v - 1 - group if backward else group)


def stage_order(p: int, v: int, m: int, stage: int) -> list[tuple[str, int, int]]:
    """The execution order of one stage: [(op, micro-batch, chunk)], Megatron-LM's interleaved 1F1B (Narayanan et
    al. 2021 §2.2.2; warm-up min(2(p-1-r) + (v-1)p, m·v) forwards, module docstring)."""
    n = m * v
    warmup = min(2 * (p - 1 - stage) + (v - 1) * p, n)
    order = [("F", *_virtual(k, p, v, False)) for k in range(warmup)]
    for i in range(n - warmup):
        order += [("F", *_virtual(warmup + i, p, v, False)), ("B", *_virtual(i, p, v, True))]
    order += [("B", *_virtual(k, p, v, True)) for k in range(n - warmup, n)]
    return order


def interleaved_1f1b(p: int, v: int, m: int, t_f, t_b) -> list[list[ChunkOp]]:
    """Every stage's chunk operations with start and end times (chunk times t_f/v, t_b/v: one number for every
    stage, or one per stage), simulated from `stage_order` and the dependencies of the module docstring
    (Narayanan et al. 2021 §2.2.2)."""
    if p < 2 or v < 1 or m < 1 or m % p:
        raise ValidationError("pipeline", (p, v, m), "p >= 2 stages, v >= 1 chunks and m a multiple of p")
    orders = [stage_order(p, v, m, s) for s in range(p)]
    tf = np.broadcast_to(np.asarray(t_f, dtype=float), (p,)) / v
    tb = np.broadcast_to(np.asarray(t_b, dtype=float), (p,)) / v
    f_end = np.full((p, v, m), np.nan)
    b_end = np.full((p, v, m), np.nan)
    done: list[list[ChunkOp]] = [[] for _ in range(p)]
    free = [0.0] * p
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(p):
            while len(done[s]) < len(orders[s]):
                op, j, c = orders[s][len(done[s])]
                if op == "F":
                    dep = 0.0 if s == 0 and c == 0 else (f_end[s - 1, c, j] if s else f_end[p - 1, c - 1, j])
                elif s < p - 1:
                    dep = b_end[s + 1, c, j]
                else:
                    dep = b_end[0, c + 1, j] if c < v - 1 else f_end[p - 1, v - 1, j]
                if np.isnan(dep):
                    break
                start = max(free[s], dep)
                end = start + (tf[s] if op == "F" else tb[s])
                (f_end if op == "F" else b_end)[s, c, j] = end
                done[s].append(ChunkOp(op, j, c, start, end))
                free[s] = end
                remaining -= 1
                progressed = True
        if not progressed:  # cannot happen for Megatron-LM's order; guards against an endless loop
            raise RuntimeError("interleaved 1F1B schedule deadlocked")
    return done


def peak_in_flight_chunks(order: list[tuple[str, int, int]]) -> int:
    """Most chunks whose forward has run and backward has not, over one stage's order: the activations it holds
    (Narayanan et al. 2021 §2.2.2; Korthikanti et al. 2022 §4.2.3)."""
    live = peak = 0
    for op, _j, _c in order:
        live += 1 if op == "F" else -1
        peak = max(peak, live)
    return peak


@dataclass(frozen=True)
class Timeline:
    """A drawable interleaved schedule: per stage, its chunk operations and, when m was too large to draw
    every operation, one grouped steady-state block (start, end) standing for `grouped` micro-batches."""

    ops: list[list[ChunkOp]]
    groups: list[tuple[float, float]]
    grouped: int


def interleaved_timeline(p: int, v: int, m: int, t_f: float, t_b: float, max_micro_batches: int) -> Timeline:
    """`interleaved_1f1b` for drawing. When m > max_micro_batches, m_sim = the largest multiple of p not above
    it (at least 3p) is simulated and the other m - m_sim micro-batches (a multiple of p) are one grouped block
    of (m - m_sim)(t_f + t_b) on every stage (the busiest stage's, with per-stage times), inserted where stage 0 is
    half-way through its operations (shifting every later operation by the block keeps every dependency): with
    uniform times the timeline still ends at (m + (p-1)/v)(t_f + t_b)."""
    m_sim = m if m <= max(max_micro_batches, 3 * p) else max(3 * p, (max_micro_batches // p) * p)
    ops = interleaved_1f1b(p, v, m_sim, t_f, t_b)
    grouped = m - m_sim
    if not grouped:
        return Timeline(ops, [], 0)
    delta = grouped * float(np.max(np.asarray(t_f, dtype=float) + np.asarray(t_b, dtype=float)))  # the busiest's pace
    t_cut = ops[0][len(ops[0]) // 2].start_s
    shifted, groups = [], []
    for stage_ops in ops:
        i = next(k for k, op in enumerate(stage_ops) if op.start_s >= t_cut - 1e-12 * max(t_cut, 1.0))
        before = {"F": -1, "B": -1}   # the last micro-batch of each kind before the cut (one pass, not one per op)
        for x in stage_ops[:i]:
            before[x.op] = max(before[x.op], x.micro_batch)
        later = [ChunkOp(op.op, op.micro_batch + (grouped if op.micro_batch > before[op.op] else 0), op.chunk,
                         op.start_s + delta, op.end_s + delta) for op in stage_ops[i:]]
        shifted.append(stage_ops[:i] + later)
        groups.append((stage_ops[i].start_s, stage_ops[i].start_s + delta))
    return Timeline(shifted, groups, grouped)
