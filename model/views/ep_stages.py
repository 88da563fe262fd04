"""The EP all-to-all of MoE serving as its own bars of an inference request's timeline. Qt-free.

Where expert parallelism is on (model/formulas/moe_serving.py), each prefill and each decode group of
`request_stages` ends with the dispatch + combine all-to-alls of its MoE layers: the bar is split into its
compute part on the GPU lane and an "EP all-to-all" bar on the EP lane, end to end, so the request lasts as long
as before (roles "prefill_ep" and "decode_ep", in the prefill and decode phases). Prefill: the prefill's all-to-all time and bytes (`InferStep.prefill_ep`); a decode group of n steps:
n times one step's (`InferStep.decode_ep`), the step's all-to-all being the same at every context."""

from __future__ import annotations

import dataclasses

from trinity_desktop.model.views.stage import Stage, _links

EP_LANE = "EP all-to-all"


def _split(st: Stage, ep_s: float, out_bytes: float, up_bytes: float, what: str, role: str) -> list[Stage]:
    """`st` as its compute part, then its all-to-all of `ep_s` seconds (no longer than the bar)."""
    ep_s = min(max(ep_s, 0.0), st.end_s - st.start_s)
    if ep_s <= 0.0:
        return [st]
    cut = st.end_s - ep_s
    rest = dict(st.bytes_by_link)
    rest["scale-out"] = max(rest.get("scale-out", 0.0) - out_bytes, 0.0)
    rest["scale-up"] = max(rest.get("scale-up", 0.0) - up_bytes, 0.0)
    compute = dataclasses.replace(st, end_s=cut, bytes_by_link=rest)
    a2a = Stage(f"EP all-to-all ({what}: dispatch + combine)", "communication", EP_LANE, cut, st.end_s, 0.0,
                _links(scale_out=out_bytes, scale_up=up_bytes), st.live_memory_by_tier, "bandwidth", -1,
                role=role)
    return [compute, a2a]


def with_ep_all_to_all(stages: list[Stage], step, decode_steps) -> list[Stage]:
    """The request's stages with the EP all-to-all split off each prefill and decode bar (module docstring);
    unchanged where EP serving is off. `step` is the scenario's `InferStep`, `decode_steps` the steps of each
    decode bar in order (`request.decode_plan(...).steps`)."""
    if not step.expert_parallel:
        return stages
    pre, dec = step.prefill_ep, step.decode_ep
    counts = iter(int(n) for n in decode_steps)
    out: list[Stage] = []
    for st in stages:
        if st.role == "prefill":
            out += _split(st, float(pre.time), float(pre.scale_out), float(pre.scale_up), "prefill", "prefill_ep")
        elif st.role == "decode":
            n = next(counts)
            out += _split(st, n * float(dec.time), n * float(dec.scale_out), n * float(dec.scale_up),
                          f"{n:,} decode steps" if n > 1 else "one decode step", "decode_ep")
        else:
            out.append(st)
    return out
