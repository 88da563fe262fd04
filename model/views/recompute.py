"""Activation recomputation, claimed against computed: for a training scenario, the activation memory each
recompute mode saves and the FLOPs it adds, both relative to storing every activation (recompute = "none"), from
`evaluate` (activations: Korthikanti et al. 2022 Table 2; FLOPs: their Eq. 7-8 and full recompute's extra
forward pass)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import evaluate

# The synthesis seed's claim (seeds/003): "reduces memory by 50-90% at the cost of 15-20% additional computation";
# one home for the claimed ranges, in percent (the claim rows of model/claims/scale.py and the breakdown's hover).
SEED_MEMORY_SAVED_PCT = (50.0, 90.0)
SEED_EXTRA_COMPUTE_PCT = (15.0, 20.0)


@dataclass(frozen=True)
class RecomputeEffect:
    mode: str
    activation_bytes: float
    baseline_activation_bytes: float
    flops: float
    baseline_flops: float

    @property
    def memory_saved(self) -> float:
        """Share of the activation memory saved (0..1)."""
        base = self.baseline_activation_bytes
        return 1.0 - self.activation_bytes / base if base > 0 else 0.0

    @property
    def extra_compute(self) -> float:
        """Extra hardware FLOPs per step as a share of the no-recompute FLOPs."""
        return self.flops / self.baseline_flops - 1.0 if self.baseline_flops > 0 else 0.0


def recompute_effects(sc: Scenario) -> dict[str, RecomputeEffect]:
    """{"selective": ..., "full": ...} for the scenario's layout (its own recompute setting is replaced)."""
    if sc.kind != "train":
        raise ValueError("recompute applies to training scenarios")
    runs = {mode: evaluate(dataclasses.replace(sc, recompute=mode)) for mode in ("none", "selective", "full")}
    base = runs["none"]
    return {mode: RecomputeEffect(mode, float(runs[mode].memory["activations"]), float(base.memory["activations"]),
                                  float(runs[mode].train["hardware_flops"]), float(base.train["hardware_flops"]))
            for mode in ("selective", "full")}


def claim_against_computed(sc: Scenario) -> list[str]:
    """The seed's ranges next to this scenario's computed saving and cost per recompute mode (hover lines)."""
    (m0, m1), (c0, c1) = SEED_MEMORY_SAVED_PCT, SEED_EXTRA_COMPUTE_PCT
    lines = [f"Seed: recomputation saves {m0:.0f}–{m1:.0f}% memory for {c0:.0f}–{c1:.0f}% more compute"]
    try:
        effects = recompute_effects(sc)
    except ValidationError as exc:
        return [*lines, f"Not computed for this layout: {exc}"]
    for mode, e in effects.items():
        lines.append(f"Here, {mode}: −{100 * e.memory_saved:.0f}% activations for "
                     f"{100 * e.extra_compute:+.1f}% FLOPs")
    return lines
