"""Every checked claim of both seeds, from the claim modules in CLAIM_MODULES (each has `claims()`)."""

from __future__ import annotations

from functools import cache

from trinity_desktop.model.claims import scale, synthesis_edge, trinity
from trinity_desktop.model.claims.claim import Claim

CLAIM_MODULES = (trinity, synthesis_edge, scale)


@cache
def all_claims() -> tuple[Claim, ...]:
    """The claims of every module, in module order; ids are unique."""
    out = tuple(c for module in CLAIM_MODULES for c in module.claims())
    ids = [c.id for c in out]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"duplicate claim ids: {', '.join(duplicates)}")
    return out
