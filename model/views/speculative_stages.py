"""The decode of a request with speculative decoding (#23) as bars of the step-through flow: per decode group of
`request.decode_plan`, one bar for its draft steps and one for its verify steps (model/step/speculative_step.py:
rounds = steps / E, draft = rounds · γ · t_draft, verify = rounds · t_verify, at the group's mean context).
A bar's FLOPs and HBM bytes are its rounds times one draft step's (on a draft GPU) or one verify step's."""

from __future__ import annotations

from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import Results, evaluate_grid
from trinity_desktop.model.step.request import DecodePlan
from trinity_desktop.model.step.speculative_step import draft_tokens_of, speculative_groups
from trinity_desktop.model.views.stage import GPU_LANE, Stage, _links


def speculative_stages(sc: Scenario, r: Results, plan: DecodePlan, start_s: float, live: list[dict]) -> list[Stage]:
    """The draft and verify bars of each decode group from `start_s` on; `live` is each group's live memory."""
    spec = r.speculative  # the bar names stay short (the flow's header shows them whole); the draft is in the legend
    _, g = speculative_groups(sc, evaluate_grid)
    gamma = draft_tokens_of(sc)
    out, t = [], start_s
    for i in range(plan.n):
        steps = f"tokens {plan.lo[i] + 1}-{plan.hi[i]}" if plan.steps[i] > 1 else f"token {plan.lo[i] + 1}"
        rounds = float(g["rounds"][i])
        for role, dur, flops, hbm, bound, text in (
                ("speculative_draft", g["draft_s"][i], g["draft_flops"][i], g["draft_hbm_bytes"][i],
                 g["draft_flops"][i] / max(g["draft_hbm_bytes"][i], 1.0) >= spec.ridge,
                 f"draft: {rounds * gamma:,.1f} steps"),
                ("speculative_verify", g["verify_s"][i], g["verify_flops"][i], g["verify_hbm_bytes"][i],
                 g["verify_flops"][i] / max(g["verify_hbm_bytes"][i], 1.0) >= spec.ridge,
                 f"verify: {rounds:,.1f} × {gamma + 1} tokens")):
            out.append(Stage(f"{text} ({steps})", "compute", GPU_LANE, t, t + float(dur), rounds * float(flops),
                             _links(hbm=rounds * float(hbm)), live[i], "compute" if bound else "bandwidth", -1,
                             role=role))
            t += float(dur)
    return out
