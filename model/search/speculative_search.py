"""The speculative axis of the serving planner (#23): γ, the draft tokens per round, searched beside TP / PP / EP /
DP-attention for a given draft (a draft model preset, or the target's MTP modules) and acceptance rate α.

For every layout of a serving grid and every γ of the axis (0 = plain decode), the time per output token is
    TPOT(γ) = (γ · t_draft + t_verify(γ)) / E(α, γ),   E = (1 − α^(γ+1)) / (1 − α)   (Leviathan et al. 2023, Eq. 1)
with t_verify the target's decode step at γ + 1 tokens per sequence (`speculative_step.verify_step_time`) and
t_draft the draft's decode step on gcd(TP, draft heads) GPUs (the target's TP for MTP), both timed by the same
grid formulas as plain decode (model/step/speculative_step.py). The draft's weights (less what MTP shares with the
target) and KV cache add to the memory per GPU. With MTP, γ is the number of MTP modules run, 1 … `mtp_depth`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.formulas.speculative import expected_tokens_per_step
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.grid_results import InferGrid
from trinity_desktop.model.step.speculative_step import draft_scenario, verify_step_time

MAX_DRAFT_TOKENS = 8  # γ searched 1 … 8 for a draft model (Leviathan et al. 2023 §4 evaluate γ up to 7 and beyond)


@dataclass(frozen=True)
class SpeculativeSetting:
    """What the planner may speculate with: a draft model key or MTP modules (depth > 0), and α."""

    draft_model: str = ""
    mtp_depth: int = 0
    acceptance: float = 0.0

    @property
    def on(self) -> bool:
        return bool(self.draft_model) or self.mtp_depth > 0

    @property
    def draft_tokens(self) -> tuple[int, ...]:
        """γ values searched: 0 (plain decode), then 1 … 8 (draft model) or 1 … the MTP depth."""
        if not self.on:
            return (0,)
        return tuple(range(self.mtp_depth + 1 if self.mtp_depth > 0 else MAX_DRAFT_TOKENS + 1))

    def fields(self, gamma: int) -> dict:
        """The Scenario fields of one γ (γ = 0: speculation off)."""
        if gamma == 0:
            return {"draft_model": "", "mtp_depth": 0}
        if self.mtp_depth > 0:
            return {"draft_model": "", "mtp_depth": gamma}
        return {"draft_model": self.draft_model, "mtp_depth": 0, "draft_tokens": gamma}


def split_setting(fixed: dict) -> tuple[SpeculativeSetting, dict]:
    """(the speculative setting in the planner's fixed Scenario fields, the other fixed fields)."""
    rest = {k: v for k, v in fixed.items() if k not in ("draft_model", "mtp_depth", "draft_tokens")}
    setting = SpeculativeSetting(draft_model=fixed.get("draft_model", "") or "",
                                 mtp_depth=int(fixed.get("mtp_depth", 0) or 0),
                                 acceptance=float(fixed.get("acceptance", Scenario.acceptance)))
    return setting, rest


def speculative_layouts(base: Scenario, axes: dict, plain: InferGrid, setting: SpeculativeSetting, grid) -> dict:
    """Over the grid `axes` (tp, pp, batch, kv_bytes, ... arrays of one rank) plus a trailing γ axis: `tpot_s`, the time per
    output token; `speedup` over plain decode; `extra_memory`, the draft's bytes per GPU. `plain` is
    grid(base, **axes). γ = 0 keeps plain decode (speed-up 1, no draft)."""
    gammas = np.asarray(setting.draft_tokens, dtype=float)
    wide_axes = {k: np.asarray(v)[..., None] for k, v in axes.items()}
    g = gammas.reshape((1,) * max(np.ndim(v) for v in axes.values()) + (-1,))
    q = g + 1.0
    batch = wide_axes["batch"]
    wide = grid(base, **{**wide_axes, "batch": batch * q})
    plain6 = plain.expanded()
    tp, pp = wide_axes["tp"], wide_axes["pp"]
    verify = verify_step_time(base, plain6, wide, batch, q, tp, pp)
    spec = base.replace(**setting.fields(max(setting.draft_tokens)), acceptance=setting.acceptance)
    dsc, _, _ = draft_scenario(spec)
    draft_tp = tp if setting.mtp_depth > 0 else np.gcd(np.asarray(tp, dtype=np.int64), dsc.model.heads)
    drafted = grid(dsc, tp=draft_tp, batch=batch, kv_bytes=wide_axes["kv_bytes"])
    shared = dsc.model.embedding_params() + dsc.model._norm_params() if setting.mtp_depth > 0 else 0.0
    draft_memory = (np.asarray(drafted.memory["weights"]) * (1.0 - shared / dsc.model.params_total())
                    + np.asarray(drafted.memory["kv_cache"]))
    tokens = expected_tokens_per_step(setting.acceptance, g)
    plain_tpot = plain6.time_per_output_token_s
    tpot = np.where(g > 0, (g * np.asarray(drafted.time_per_output_token_s) + verify) / tokens, plain_tpot)
    return {"tpot_s": tpot, "speedup": plain_tpot / tpot, "extra_memory": np.where(g > 0, draft_memory, 0.0)}

