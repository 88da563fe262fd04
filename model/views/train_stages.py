"""The stages of one training step, lane by lane, from the core's own pieces. Qt-free.

Training step (per GPU; lanes "stage 0" ... "stage p-1", "DP network", "host link"; the DP network and
host-link lanes show one GPU of stage 0, the stage the core's critical path ends on):
  - 1F1B schedule (Narayanan et al. 2021, reference "pipedream-1f1b"): stage s runs min(p-1-s, m) warm-up
    forwards, then alternates one forward and one backward, then drains the backwards. Each micro-batch
    block is forward compute, then the forward TP/CP/EP all-reduces/gathers and the pipeline send; the
    backward block is the backward collectives, the recomputation (selective, full or FlashAttention's) and
    the backward compute. Forward time = t_c - t_bwd, backward = t_bwd (training.py's split: backward is
    2/3 of the model FLOPs plus every recomputed FLOP), each stage's blocks from its own compute (the first stage
    with the embedding, the last with the output head, the loss and the MTP modules: train_compute.busiest_stage)
    at the same split and with the busiest stage's communication. The pipeline lasts the core's `pipeline`,
    m·t_max + the other stages' t_f + t_b once (formulas/pipeline_bubble.py; uniform blocks: (m + p - 1)(t_f + t_b),
    a bubble of (p-1)/(m+p-1)); the idle gaps are the bubble.
    The collectives inside a block are drawn after its compute (in Megatron-LM they interleave with the
    layers; the core adds their time to the block, so the block length is the same).
  - DP gradient reduce-scatter (ZeRO >= 1) or all-reduce (ZeRO-0), drawn as GRAD_BUCKETS equal buckets on
    the DP network lane starting grad_overlap before the pipeline ends (the core overlaps it with the last
    micro-batch's backward, t_bwd, less the part of it the ZeRO-3 backward all-gather holds the DP link:
    grad_overlap = t_bwd·(1 - min(1, 2·t_gather/t_c)); reference "zero" §7, "megatron-lm"); the part longer
    than grad_overlap is exposed.
  - ZeRO-3 parameter all-gathers: two per micro-batch, prefetched behind the micro-batch's compute; what
    does not fit behind t_c is drawn after the pipeline (core: m·max(0, 2·t_gather - t_c)). ZeRO-1/2: one
    parameter all-gather after the optimizer step.
  - DGC top-k selection (reference "dgc"), the optimizer step (HBM-bound; on the host CPU with ZeRO-Offload,
    "zero-offload"), offload transfers over the host link (gradients down overlapping the backward,
    updated weights up after the step; vDNN activation swaps, "vdnn", hidden behind compute where they fit).
  - Data load (stated assumption, "modelling-assumption"): the GPU's tokens as int32 ids, m·b·s·4 bytes,
    read over the host link at the start of the step and overlapped with the first forward (the data loader
    prefetches); it adds no exposed time and its bytes are not part of the core's per-link totals.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.memory import in_flight_at_stage, in_flight_micro_batches
from trinity_desktop.model.formulas.pipeline_bubble import pipeline_time
from trinity_desktop.model.formulas.pipeline_schedule import interleaved_timeline
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.step.run import train_step_of
from trinity_desktop.model.step.training import TrainPieces
from trinity_desktop.model.views.stage import (
    CPU_LANE,
    DP_LANE,
    GRAD_BUCKETS,
    HOST_LANE,
    LINKS,
    MAX_SIMULATED_MICRO_BATCHES,
    TOKEN_ID_BYTES,
    Stage,
    _add,
    _f,
    _links,
    _sum_links,
)


def training_pieces(sc: Scenario) -> TrainPieces:
    """The per-micro-batch and per-step pieces of `training.training_step` for one scenario, as plain numbers
    (links as names, codes as ints, flags as bools): the core's own numbers, so the timeline always adds up
    to the core's step time."""
    P = train_step_of(sc).pieces
    out = {}
    for f in dataclasses.fields(P):
        v = np.asarray(getattr(P, f.name))
        out[f.name] = str(v) if v.dtype.kind == "U" else bool(v) if v.dtype.kind == "b" else _f(v)
    out["zero"], out["recompute"] = int(out["zero"]), int(out["recompute"])
    return TrainPieces(**out)


def one_f_one_b(p: int, m: int, t_f, t_b) -> tuple[np.ndarray, np.ndarray]:
    """Start times (F, B), each of shape (p, m), of the 1F1B schedule with block times t_f, t_b: one number for
    every stage, or one per stage.

    Stage s runs w = min(p-1-s, m) warm-up forwards, then alternates F(w+i), B(i), then drains the backwards;
    F(s, j) waits for F(s-1, j) and B(s, j) for B(s+1, j) (PipeDream-Flush / Megatron-LM 1F1B). With uniform
    blocks the makespan is (m + p - 1)(t_f + t_b) and each stage idles (p-1)(t_f + t_b) (Narayanan et al. 2021);
    with the last stage the busiest, m·t_max + the other stages' t_f + t_b (formulas/pipeline_bubble.py)."""
    if p < 1 or m < 1:
        raise ValidationError("pipeline", (p, m), "p >= 1 stages and m >= 1 micro-batches")
    t_f = np.broadcast_to(np.asarray(t_f, dtype=float), (p,))
    t_b = np.broadcast_to(np.asarray(t_b, dtype=float), (p,))
    orders = []
    for s in range(p):
        w = min(p - 1 - s, m)
        order = [("F", j) for j in range(w)]
        for i in range(m - w):
            order += [("F", w + i), ("B", i)]
        order += [("B", j) for j in range(m - w, m)]
        orders.append(order)
    f_end = np.full((p, m), np.nan)
    b_end = np.full((p, m), np.nan)
    f_start, b_start = np.zeros((p, m)), np.zeros((p, m))
    ptr, free = [0] * p, [0.0] * p
    remaining = 2 * p * m
    while remaining:
        progressed = False
        for s in range(p):
            while ptr[s] < len(orders[s]):
                op, j = orders[s][ptr[s]]
                if op == "F":
                    dep = 0.0 if s == 0 else f_end[s - 1, j]
                else:
                    dep = f_end[s, j] if s == p - 1 else b_end[s + 1, j]
                if np.isnan(dep):
                    break
                start = max(free[s], dep)
                if op == "F":
                    f_start[s, j], f_end[s, j] = start, start + t_f[s]
                else:
                    b_start[s, j], b_end[s, j] = start, start + t_b[s]
                free[s] = start + (t_f[s] if op == "F" else t_b[s])
                ptr[s] += 1
                remaining -= 1
                progressed = True
        if not progressed:  # cannot happen for a valid 1F1B order; guards against an endless loop
            raise RuntimeError("1F1B schedule deadlocked")
    return f_start, b_start


@dataclasses.dataclass(frozen=True)
class _Block:
    """One block of a stage's pipeline schedule: a forward ("F") or backward ("B") of micro-batch `micro_batch`
    (a chunk of it under interleaving), or the grouped steady block ("G", its name in `tag`, its bytes in
    `links`); `live` micro-batches' activations are held while it runs."""

    op: str
    start_s: float
    end_s: float
    micro_batch: int
    tag: str
    live: float
    links: dict | None = None


@dataclasses.dataclass(frozen=True)
class _Schedule:
    """Every stage's blocks in drawing order, the grouped micro-batches, the pipeline's end and stage 0's
    grouped block (start, what it stands for), or None."""

    ops: list[list[_Block]]
    grouped: int
    pipe_end: float
    group0: tuple[float, str] | None


def _one_f_one_b_schedule(p: int, m_true: int, m_sim: int, t_f: np.ndarray, t_b: np.ndarray, period: float,
                          steady_links: dict, pipe_end: float) -> _Schedule:
    """1F1B (`one_f_one_b`, per-stage block times t_f, t_b) over m_sim simulated micro-batches; the other m - m_sim
    are one grouped steady block after B(s, m_sim // 2) on every stage, the later blocks shifted by the busiest
    stage's `period` each (a lighter stage's block holds its own work, then it idles). Blocks are listed F(j), B(j) by j; live at F(j): forwards done j + 1 less
    backwards done max(0, j - w); at B(j): forwards done min(m, j + 1 + w) less j (1F1B order, w = the stage's
    warm-up forwards). The pipeline ends at the core's `pipe_end`."""
    k_extra = m_true - m_sim
    cut = m_sim // 2  # the grouped steady block goes after B(s, cut) on every stage
    f_start, b_start = one_f_one_b(p, m_sim, t_f, t_b)
    if k_extra:
        delta = k_extra * period
        idx = np.arange(m_sim)
        for s in range(p):
            w = min(p - 1 - s, m_sim)
            f_start[s, idx > cut + w] += delta
            b_start[s, idx > cut] += delta

    def mb_label(j: int, w: int = 0) -> int:
        """True micro-batch index of simulated F (w = warm-up count) or B (w = 0) number j."""
        return j + k_extra if j > cut + w else j

    ops = []
    for s in range(p):
        w = min(p - 1 - s, m_sim)
        blocks = []
        for j in range(m_sim):
            jj, jb = mb_label(j, w), mb_label(j)
            t0 = f_start[s, j]
            blocks.append(_Block("F", t0, t0 + t_f[s], jj, f"mb {jj}", j + 1 - max(0, j - w)))
            t0 = b_start[s, j]
            blocks.append(_Block("B", t0, t0 + t_b[s], jb, f"mb {jb}", min(m_sim, j + 1 + w) - j))
            if k_extra and j == cut:
                g0 = t0 + t_b[s]
                blocks.append(_Block("G", g0, g0 + k_extra * (t_f[s] + t_b[s]), -1,
                                     f"steady 1F1B x{k_extra} (forwards {cut + w + 1}-{cut + w + k_extra}, "
                                     f"backwards {cut + 1}-{cut + k_extra}, grouped)", min(p - s, m_true),
                                     {lk: k_extra * v for lk, v in steady_links.items()}))
        ops.append(blocks)
    group0 = (b_start[0, cut] + t_b[0], f"micro-batches {cut + 1}-{cut + k_extra}") if k_extra else None
    return _Schedule(ops, k_extra, pipe_end, group0)


def _interleaved_schedule(p: int, chunks: int, m_true: int, t_f: np.ndarray, t_b: np.ndarray, steady_links: dict,
                          pipe_end: float) -> _Schedule:
    """Interleaved 1F1B (`interleaved_timeline`, per-stage times, each block a chunk: 1/chunks of a micro-batch's
    work), blocks in execution order; live = the forwards begun less the backwards done, over chunks; the grouped
    steady block after every stage's drawn blocks. The pipeline ends at the core's `pipe_end`."""
    tl = interleaved_timeline(p, chunks, m_true, t_f, t_b, MAX_SIMULATED_MICRO_BATCHES)
    k_extra = tl.grouped
    ops = []
    for s, stage_ops in enumerate(tl.ops):
        blocks, n_live = [], 0
        for op in stage_ops:
            tag = f"mb {op.micro_batch} chunk {op.chunk}"
            if op.op == "F":
                n_live += 1
                blocks.append(_Block("F", op.start_s, op.end_s, op.micro_batch, tag, n_live / chunks))
            else:
                blocks.append(_Block("B", op.start_s, op.end_s, op.micro_batch, tag, n_live / chunks))
                n_live -= 1
        if tl.groups:
            g0, g1 = tl.groups[s]
            g1 = min(g1, g0 + k_extra * (t_f[s] + t_b[s]))  # the stage's own work; it idles the rest of the group
            blocks.append(_Block("G", g0, g1, -1, f"steady interleaved 1F1B x{k_extra} micro-batches (grouped)",
                                 _f(in_flight_at_stage(p, m_true, chunks, s)),
                                 {lk: k_extra * x for lk, x in steady_links.items()}))
        ops.append(blocks)
    group0 = (tl.groups[0][0], f"{k_extra} micro-batches") if tl.groups else None
    return _Schedule(ops, k_extra, pipe_end, group0)


def training_stages(sc: Scenario, r: Results) -> list[Stage]:
    """The stages of one training step (module docstring: 1F1B or interleaved 1F1B, Narayanan et al. 2021; the
    DP, ZeRO, offload and DGC stages), from the core's pieces (`training_pieces`); `r` is `evaluate(sc)`."""
    P = training_pieces(sc)
    p, m_true = int(P.pp), int(round(P.micro_batches))
    m_sim = min(m_true, max(MAX_SIMULATED_MICRO_BATCHES, 3 * p))

    t_c, t_bwd = P.compute_mb_s, P.backward_mb_s
    t_fc = t_c - t_bwd
    t_rc = P.recompute_mb_s
    # (label, exposed seconds, bytes, link, forward share) of each model-parallel group's traffic per micro-batch:
    # the TP all-reduces 2 of n_ar in the forward; CP gathers, EP all-to-alls and PP sends half each way. A block
    # holds only the exposed part (formulas/overlap.py); the part hidden behind compute rides on the compute bars
    ep_up = P.ep_mb_bytes - P.ep_mb_scaleout_bytes
    ep_in_link = "scale-up" if sc.hardware.scaleup_bw > 0 else "scale-out"
    groups = (("TP all-reduce", P.tp_exposed_mb_s, P.tp_mb_bytes, P.tp_link, 2.0 / P.tp_allreduces_per_layer),
              ("CP KV gather", P.cp_mb_s, P.cp_mb_bytes, P.cp_link, 0.5),
              ("EP all-to-all", P.ep_exposed_mb_s, P.ep_mb_scaleout_bytes, "scale-out", 0.5),
              ("", 0.0, ep_up, ep_in_link, 0.5),
              ("PP send", P.pp_exposed_mb_s, P.pp_mb_bytes, P.pp_link, 0.5))
    hidden_mb = (P.tp_mb_s - P.tp_exposed_mb_s) + (P.ep_mb_s - P.ep_exposed_mb_s) + (P.pp_mb_s - P.pp_exposed_mb_s)
    comm_f = sum(t * share for _, t, _, _, share in groups)
    comm_b = sum(t * (1.0 - share) for _, t, _, _, share in groups)
    t_f, t_b = t_fc + comm_f, comm_b + t_bwd
    period = t_f + t_b
    # each stage's blocks from its own compute (the first, the middle and the last stage's; the busiest is t_c),
    # the same split into forward, recomputation and backward, and the busiest stage's communication
    stage_c = np.array([t_c] if p == 1 else [P.first_stage_mb_s, *[P.middle_stage_mb_s] * (p - 2), P.last_stage_mb_s])
    fc_s, bwd_s, rc_s = (np.where(stage_c == t_c, x, stage_c * (x / t_c)) for x in (t_fc, t_bwd, t_rc))
    tf_s, tb_s = fc_s + comm_f, comm_b + bwd_s
    pipe_end, _ = pipeline_time(m_true, p, P.virtual_stages, period,
                                (tf_s[0] + tb_s[0], tf_s[min(1, p - 1)] + tb_s[min(1, p - 1)], tf_s[-1] + tb_s[-1]))
    active = [label for label, t, _, _, _ in groups if t > 0]
    comm_label = " + ".join(active) if active else "communication"
    if hidden_mb > 0:
        comm_label += " (partly hidden behind compute)"
    comm_roles = ("forward_tp_comm", "backward_tp_comm") if P.tp_mb_s > 0 else ("forward_comm", "backward_comm")
    comm_bytes_f, comm_bytes_b = dict.fromkeys(LINKS, 0.0), dict.fromkeys(LINKS, 0.0)
    for _, _, nbytes, link, share in groups:
        _add(comm_bytes_f, link, nbytes * share)
        _add(comm_bytes_b, link, nbytes * (1.0 - share))
    # a direction whose traffic is all hidden draws no comm bar: its bytes ride on that direction's compute bar
    fold_f = comm_bytes_f if comm_f <= 0 else dict.fromkeys(LINKS, 0.0)
    fold_b = comm_bytes_b if comm_b <= 0 else dict.fromkeys(LINKS, 0.0)
    hides = " (communication hidden behind it)" if hidden_mb > 0 else ""

    mem = r.memory
    capacity = r.capacity
    weights_eff = mem["weights"] * (P.dp if P.zero == 3 else 1.0)
    act_mb = P.act_mb_bytes
    keep = min(P.layers_per_stage, 2.0) / P.layers_per_stage if P.offload_activations else 1.0
    states_hbm = mem["weights"] + mem["gradients"] + mem["optimizer"]
    chunks = int(round(P.virtual_stages))  # interleaved 1F1B: model chunks per stage
    in_flight_peak = _f(in_flight_micro_batches(p, m_true, chunks))
    host_static = r.train.get("host_bytes", 0.0) - (act_mb * in_flight_peak * (1 - keep))

    def live(n_act: float, stage: int = 0) -> dict:
        """HBM and host bytes of `stage` with n_act micro-batches' activations: model states, stored activations,
        and the stage's transient buffers, NCCL buffers and runtime (the last stage holds the loss's logits:
        memory.peak_memory_extras)."""
        extra = P.last_stage_extra_bytes if stage == p - 1 else P.stage0_extra_bytes
        return {"hbm": states_hbm + extra + act_mb * n_act * keep, "host": host_static + act_mb * n_act * (1 - keep)}

    def bind(kind_binding: str, live_mem: dict) -> str:
        return "memory" if live_mem["hbm"] > capacity else kind_binding

    fl = P.flops_mb
    rec_role = "recompute_layer" if P.recompute == 2 else "recompute_attention"
    rec_name = {2: "recompute (full layer forward)", 1: "recompute (selective: attention core)"}.get(
        P.recompute, "recompute (FlashAttention backward)")

    fwd_links, bwd_links = _links(hbm=weights_eff + act_mb), _links(hbm=2.0 * weights_eff + act_mb)
    if chunks > 1:
        sched = _interleaved_schedule(p, chunks, m_true, tf_s, tb_s, _sum_links(
            fwd_links, bwd_links, comm_bytes_f, comm_bytes_b), float(pipe_end))
    else:
        sched = _one_f_one_b_schedule(p, m_true, m_sim, tf_s, tb_s, period, _sum_links(
            _links(hbm=3.0 * weights_eff + 2.0 * act_mb), comm_bytes_f, comm_bytes_b), float(pipe_end))
    k_extra, pipe_end = sched.grouped, sched.pipe_end
    # one code path for both schedules: each block's stages; stage0 collects stage 0's forward and backward compute
    # (tag, start, share of t_c, micro-batch), behind which the DP and host-link lanes hide their transfers
    out: list[Stage] = []
    stage0 = []
    fwd_f, bwd_f = _sum_links(fwd_links, fold_f), _sum_links(bwd_links, fold_b)
    for s, stage_ops in enumerate(sched.ops):
        lane = f"stage {s}"
        for op in stage_ops:
            t0, j, tag, lm = op.start_s, op.micro_batch, op.tag, live(op.live, s)
            if op.op == "G":
                out.append(Stage(op.tag, "compute", lane, t0, op.end_s, k_extra * fl, op.links, lm,
                                 bind("compute", lm), -1, role="steady"))
            elif op.op == "F":
                out.append(Stage(f"forward {tag}{hides}", "compute", lane, t0, t0 + fc_s[s] / chunks,
                                 fl * (1 - P.backward_flop_share) / chunks, {k: x / chunks for k, x in fwd_f.items()},
                                 lm, bind("compute", lm), j, role="forward"))
                if comm_f > 0:
                    out.append(Stage(f"comm {comm_label} (fwd) {tag}", "communication", lane, t0 + fc_s[s] / chunks,
                                     op.end_s, 0.0, {k: x / chunks for k, x in comm_bytes_f.items()}, lm,
                                     bind("bandwidth", lm), j, role=comm_roles[0]))
                if s == 0:
                    stage0.append(("fwd", t0, t_fc / t_c / chunks, j, t0 + fc_s[s] / chunks))
            else:
                t1 = t0 + comm_b / chunks
                if comm_b > 0:
                    out.append(Stage(f"comm {comm_label} (bwd) {tag}", "communication", lane, t0, t1, 0.0,
                                     {k: x / chunks for k, x in comm_bytes_b.items()}, lm, bind("bandwidth", lm), j,
                                     role=comm_roles[1]))
                if t_rc > 0:
                    out.append(Stage(f"{rec_name} {tag}", "compute", lane, t1, t1 + rc_s[s] / chunks,
                                     fl * P.recompute_flop_share / chunks, _links(), lm, bind("compute", lm), j,
                                     role=rec_role))
                out.append(Stage(f"backward {tag}{hides}", "compute", lane, t1 + rc_s[s] / chunks, op.end_s,
                                 fl * (P.backward_flop_share - P.recompute_flop_share) / chunks,
                                 {k: x / chunks for k, x in bwd_f.items()}, lm, bind("compute", lm), j, role="backward"))
                if s == 0:
                    stage0.append(("bwd", t1, t_bwd / t_c / chunks, j, op.end_s))
    group0 = sched.group0  # (start, label) of stage 0's grouped steady block

    # --- DP network and host link, one GPU of stage 0 ------------------------------------------------
    grad_bytes = dict.fromkeys(LINKS, 0.0)
    _add(grad_bytes, P.dp_link, P.dp_grad_bytes)
    _add(grad_bytes, P.edp_link, P.edp_grad_bytes)
    gather_bytes = dict.fromkeys(LINKS, 0.0)  # one parameter all-gather
    _add(gather_bytes, P.dp_link, P.dp_gather_bytes)
    _add(gather_bytes, P.edp_link, P.edp_gather_bytes)
    # after the pipeline: model states, NCCL's buffers and the runtime (no activations, no transient buffers)
    states_only = {"hbm": states_hbm + mem["network_buffers"] + mem["runtime"], "host": host_static}
    zero, t_g = P.zero, P.param_gather_s

    if zero == 3 and t_g > 0:  # two gathers per micro-batch prefetched behind compute
        hidden = min(2.0 * t_g, t_c)
        for tag, t0, frac, jj, block_end in stage0:
            dur = hidden * frac   # as the activation swaps below: a backward's gather ends with stage 0's block
            t0 = t0 - max(t0 + dur - block_end, 0.0) if tag == "bwd" else t0
            out.append(Stage(f"ZeRO-3 all-gather ({tag}, prefetched) mb {jj}", "communication", DP_LANE, t0,
                             t0 + dur, 0.0, {k: v * 2.0 * dur / (2.0 * t_g) for k, v in gather_bytes.items()},
                             live(in_flight_peak), "bandwidth", jj, role=f"zero3_gather_{tag}"))
        if group0:
            g0, what = group0
            out.append(Stage(f"ZeRO-3 all-gathers (prefetched), {what}", "communication", DP_LANE, g0,
                             g0 + k_extra * period, 0.0, {k: v * k_extra * hidden / t_g for k, v in gather_bytes.items()},
                             live(in_flight_peak), "bandwidth", -1, role="zero3_gather_prefetched"))

    if P.offload_activations and P.act_swap_s > 0:  # vDNN: out during forward, back in during backward
        hidden = min(P.act_swap_s, t_c)
        for tag, t0, frac, jj, block_end in stage0:
            dur = hidden * frac   # the average stage's share: a prefetch ends with its own backward (stage 0's)
            t0 = t0 - max(t0 + dur - block_end, 0.0) if tag == "bwd" else t0
            out.append(Stage(f"activations {'out' if tag == 'fwd' else 'in'} (host link) mb {jj}", "memory-transfer",
                             HOST_LANE, t0, t0 + dur, 0.0, _links(host=P.act_swap_bytes * dur / P.act_swap_s), live(1.0),
                             "bandwidth", jj, role="activation_swap_out" if tag == "fwd" else "activation_swap_in"))
        if group0:
            g0, what = group0
            out.append(Stage(f"activation swaps, {what}", "memory-transfer", HOST_LANE, g0, g0 + k_extra * period, 0.0,
                             _links(host=k_extra * P.act_swap_bytes * hidden / P.act_swap_s), live(1.0), "bandwidth", -1, role="activation_swap"))

    g_start = pipe_end - P.grad_overlap_s  # after the last backward's ZeRO-3 gather, when there is one
    t_grad, t_down = P.grad_sync_s, P.grads_to_host_s
    verb = "all-reduce" if zero == 0 else "reduce-scatter"
    if sc.grad_compression > 1.0:
        verb = f"sparse all-gather (DGC {sc.grad_compression:g}×)"
    if t_grad > 0:
        for i in range(GRAD_BUCKETS):
            a0 = g_start + i * t_grad / GRAD_BUCKETS
            out.append(Stage(f"DP gradient {verb} bucket {i + 1}/{GRAD_BUCKETS}", "communication", DP_LANE, a0,
                             a0 + t_grad / GRAD_BUCKETS, 0.0, {k: v / GRAD_BUCKETS for k, v in grad_bytes.items()},
                             live(1.0), "bandwidth", -1, role="dp_grad_sync"))
    t = g_start + t_grad
    if t_down > 0:
        out.append(Stage("gradients to host (ZeRO-Offload)", "memory-transfer", HOST_LANE, t, t + t_down, 0.0,
                         _links(host=P.grads_to_host_bytes), live(1.0), "bandwidth", -1, role="grads_to_host"))
    t = max(pipe_end, t + t_down)  # = pipeline + exposed gradient sync (core: max(0, t_grad + t_down - grad_overlap))

    if zero == 3 and t_g > 0:
        exposed = m_true * max(0.0, 2.0 * t_g - t_c)
        if exposed > 0:
            out.append(Stage("ZeRO-3 all-gathers, exposed (did not fit behind compute)", "communication", DP_LANE,
                             t, t + exposed, 0.0, {k: v * exposed / t_g for k, v in gather_bytes.items()},
                             states_only, "bandwidth", -1, role="zero3_gather_exposed"))
            t += exposed
    gpu_lanes = [f"stage {s}" for s in range(p)]
    if P.compress_s > 0:
        what = "DGC top-k gradient selection" if sc.grad_compression > 1.0 else "gradient quantisation"
        for lane in gpu_lanes:
            out.append(Stage(what, "memory-transfer", lane, t, t + P.compress_s, 0.0,
                             _links(hbm=P.compress_hbm_bytes), states_only, "bandwidth", -1, role="grad_compress"))
        t += P.compress_s
    if P.offload_optimizer:
        out.append(Stage("optimizer step on the host CPU (ZeRO-Offload)", "compute", CPU_LANE, t, t + P.optimizer_s,
                         0.0, _links(), states_only, "bandwidth", -1, role="optimizer_host"))
    else:
        for lane in gpu_lanes:
            out.append(Stage("optimizer step", "compute", lane, t, t + P.optimizer_s, 0.0, _links(hbm=P.optimizer_bytes),
                             states_only, bind("bandwidth", states_only), -1, role="optimizer"))
    t += P.optimizer_s
    if P.params_from_host_s > 0:
        out.append(Stage("updated weights to GPU (ZeRO-Offload)", "memory-transfer", HOST_LANE, t, t + P.params_from_host_s,
                         0.0, _links(host=P.params_from_host_bytes), states_only, "bandwidth", -1, role="params_from_host"))
        t += P.params_from_host_s
    if P.nvme_exposed_s > 0:
        t_nv = P.nvme_exposed_s
        out.append(Stage("optimizer states to/from NVMe, exposed (ZeRO-Infinity)", "memory-transfer", HOST_LANE,
                         t, t + t_nv, 0.0, _links(), states_only, "bandwidth", -1, role="nvme_exposed"))
        t += t_nv
    if zero in (1, 2) and t_g > 0:
        out.append(Stage(f"ZeRO-{zero} parameter all-gather", "communication", DP_LANE, t, t + t_g, 0.0,
                         gather_bytes, states_only, "bandwidth", -1, role="param_gather"))
        t += t_g
    if P.offload_activations and P.act_swap_s > 0:
        exposed = m_true * max(0.0, P.act_swap_s - t_c)
        if exposed > 0:
            out.append(Stage("activation swaps, exposed", "memory-transfer", HOST_LANE, t, t + exposed, 0.0,
                             _links(host=m_true * P.act_swap_bytes * exposed / (m_true * P.act_swap_s)), states_only,
                             "bandwidth", -1, role="activation_swap_exposed"))
            t += exposed
    end = t

    # data load: prefetched, overlapping the first forward
    load_bytes = m_true * sc.micro_batch * sc.seq_len * TOKEN_ID_BYTES
    if P.host_bw > 0:
        out.append(Stage("data load (token ids, prefetched)", "io", HOST_LANE, 0.0,
                         load_bytes / P.host_bw, 0.0, _links(host=load_bytes), live(0.0), "bandwidth", -1, role="data_load"))

    # idle gaps on the pipeline lanes: the bubble inside the pipeline, waiting on the network after it
    for lane in gpu_lanes:
        busy = sorted((st.start_s, st.end_s) for st in out if st.lane == lane)
        cursor = 0.0
        gaps = []
        for a0, a1 in busy:
            if a0 > cursor + 1e-12 * max(end, 1.0):
                gaps.append((cursor, a0))
            cursor = max(cursor, a1)
        if end > cursor + 1e-12 * max(end, 1.0):
            gaps.append((cursor, end))
        for g0, g1 in gaps:
            name = "bubble (1F1B warm-up/cool-down)" if g1 <= pipe_end * (1 + 1e-12) else "waiting (exposed DP/offload)"
            out.append(Stage(name, "idle", lane, g0, g1, 0.0, _links(), states_only if g0 >= pipe_end else live(0.0),
                             "compute" if g1 <= pipe_end * (1 + 1e-12) else "bandwidth", -1, role="bubble" if g1 <= pipe_end * (1 + 1e-12) else "waiting"))
    return out

