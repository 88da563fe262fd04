"""The roofline's title when the scenario decodes speculatively (#23): where the verify step sits against the ridge
and the computed speed-up over plain decode (model/formulas/speculative.py's SpeculativeDecode). Model-free."""

from __future__ import annotations

from trinity_desktop.model.formulas.speculative import SpeculativeDecode


def speculative_title(spec: SpeculativeDecode, batch: int) -> str:
    """'Speculative decode at batch 1: 1.92× faster, the 5-token verify step is HBM-bound (left of the ridge)'
    (or '... 1.12× slower, ... compute-bound (right of the ridge)')."""
    side = "HBM-bound (left of the ridge)" if spec.verify_bound == "memory" else "compute-bound (right of the ridge)"
    ratio, verdict = (spec.speedup, "faster") if spec.helps else (1.0 / spec.speedup, "slower")
    return (f"Speculative decode at batch {batch:,}: {ratio:.2f}× {verdict}, the {spec.draft_tokens + 1}-token "
            f"verify step is {side}")
