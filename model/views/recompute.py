"""Activation recomputation, claimed against computed: for a training scenario, the activation memory each
recompute mode saves and the FLOPs it adds, both relative to storing every activation (recompute = "none"), from
`evaluate` (activations: Korthikanti et al. 2022 Table 2; FLOPs: their Eq. 7-8 and full recompute's extra
forward pass)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import evaluate


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
