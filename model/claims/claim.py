"""One checked claim of a seed document: its words, the claimed value, the value the model computes for a
stated scenario, and the verdict (agrees within a stated tolerance, disagrees, or not computable and why)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trinity_desktop.model.inputs.scenario import Scenario

SEEDS = {
    "trinity": "AI Trinity companion page (seeds/000)",
    "synthesis": "Synthesis of the field (seeds/003)",
}
Verdict = Literal["agrees", "disagrees", "not-computable"]
VERDICTS: tuple[Verdict, ...] = ("agrees", "disagrees", "not-computable")


@dataclass(frozen=True)
class Claim:
    """A seed claim next to the model's number. `claimed` / `computed` are in `unit` (None where the claim is
    directional or the model cannot compute it); `reproduce` is the command line that prints `computed`;
    `panel` is the objectName of the dock that shows it; `source` a key of resources/references.toml."""

    id: str
    seed: str
    text: str
    claimed: float | None
    computed: float | None
    unit: str
    verdict: Verdict
    scenario: Scenario | None
    panel: str
    source: str
    reproduce: str
    note: str

    def __post_init__(self):
        if self.seed not in SEEDS:
            raise ValueError(f"claim {self.id}: seed must be one of {sorted(SEEDS)}")
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim {self.id}: verdict must be one of {VERDICTS}")
        if self.verdict == "not-computable" and not self.note:
            raise ValueError(f"claim {self.id}: a not-computable claim says why in its note")


def judge(claimed: float, computed: float, rel_tol: float) -> Verdict:
    """`agrees` when |computed - claimed| <= rel_tol * |claimed|, else `disagrees`."""
    return "agrees" if abs(computed - claimed) <= rel_tol * abs(claimed) else "disagrees"


def judge_range(low: float, high: float, computed: float) -> Verdict:
    """`agrees` when a claimed range [low, high] contains the computed value."""
    return "agrees" if low <= computed <= high else "disagrees"


def judge_at_least(threshold: float, computed: float) -> Verdict:
    """`agrees` when a directional claim's measure reaches its threshold (computed >= threshold)."""
    return "agrees" if computed >= threshold else "disagrees"
