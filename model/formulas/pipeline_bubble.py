"""The pipeline phase of a training step with uneven stages, and its point-to-point sends. Vectorised.

  pipeline = m · t_max + Σ_{stages s ≠ busiest} t_s / v        bubble = Σ_{s ≠ busiest} t_s / v

t_s is stage s's time per micro-batch (forward + backward, its exposed communication included), t_max the
busiest stage's, m the micro-batches and v the model chunks per stage. The busiest stage runs its m micro-batches
back to back; the first micro-batch's forward reaches it through the stages before it and the last one's backward
leaves through them, and the stages after it add their forward and backward once (Narayanan et al. 2021 §2.2.1,
reference "pipedream-1f1b": with balanced stages this is the (p-1)/v · t bubble of §2.2.1 / §2.2.2). Checked
against the schedules themselves (views/train_stages.one_f_one_b, pipeline_schedule.interleaved_1f1b with each
stage's chunks t_s / v): exact for 1F1B and interleaved 1F1B when the last stage is the busiest (the output head
and the loss usually put it there), an upper bound otherwise (an earlier busiest stage's warm-up forwards overlap
part of the fill, so the schedule ends sooner; the stage timeline draws the difference as idle time at the end).
"""

from __future__ import annotations

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars
from trinity_desktop.model.formulas.comms import is_intra_node, p2p_time


def pipeline_time(m, pp, v, t_max, stage_s):
    """(pipeline, bubble) seconds of m micro-batches over pp stages of v chunks (module docstring): `t_max` the
    busiest stage's seconds per micro-batch, `stage_s` those of the first, a middle and the last stage (the
    p - 2 middle stages alike; p = 1: no fill, no drain)."""
    pp = xp.asarray(pp, dtype=float)
    first, middle, last = stage_s
    every = first + xp.maximum(pp - 2.0, 0.0) * middle + last
    bubble = xp.where(pp > 1.0, xp.maximum(every - t_max, 0.0), 0.0) / v
    return m * t_max + bubble, bubble


def pp_sends(pp, v, msg_bytes, stride, gpus_per_node, hw, eff_network):
    """(seconds, bytes, intra-node) of one micro-batch's pipeline sends on one GPU: a send forward and one backward
    per chunk, alpha-beta (comms.p2p_time), over scale-up when the neighbouring stage `stride` ranks away shares
    the node (comms.is_intra_node; Narayanan et al. 2021)."""
    intra = is_intra_node(2, stride, gpus_per_node) & (hw.scaleup_bw > 0)
    bw = xp.where(intra, hw.scaleup_bw, hw.scaleout_bw) * eff_network
    alpha = xp.where(intra, hw.scaleup_latency_s, hw.scaleout_latency_s)
    seconds = 2.0 * v * p2p_time(msg_bytes, bw, alpha, active=pp > 1)
    return seconds, xp.where(pp > 1, 2.0 * v * msg_bytes, 0.0), intra
