"""`trinity-desktop claims [--json]`: every checked claim of both seeds (model/claims/catalogue.py).

JSON: {"claims": [{id, seed, text, claimed, computed, unit, verdict, scenario, panel, source, reproduce, note}],
"counts": {agrees, disagrees, not-computable, computed_share}}; `scenario` is serialised as session files
serialise a Scenario (trinity_desktop/session_file.py), or null where a claim has none.
"""

from __future__ import annotations

from trinity_desktop.model.claims.catalogue import all_claims
from trinity_desktop.model.claims.claim import VERDICTS, Claim
from trinity_desktop.session_file import to_document


def add_claims_parser(sub) -> None:
    p = sub.add_parser("claims", help="every numeric or directional claim of both seeds, checked against the model")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def claim_json(c: Claim) -> dict:
    return {"id": c.id, "seed": c.seed, "text": c.text, "claimed": c.claimed, "computed": c.computed,
            "unit": c.unit, "verdict": c.verdict, "scenario": None if c.scenario is None else to_document(c.scenario)["scenario"],
            "panel": c.panel, "source": c.source, "reproduce": c.reproduce, "note": c.note}


def claims_report(_args=None) -> dict:
    claims = all_claims()
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    counts["computed_share"] = 1.0 - counts["not-computable"] / len(claims)
    return {"claims": [claim_json(c) for c in claims], "counts": counts}


def _value(v: float | None) -> str:
    return "—" if v is None else f"{v:.4g}"


def claims_text(rep: dict) -> str:
    lines = [f"{len(rep['claims'])} claims: " + ", ".join(f"{rep['counts'][v]} {v}" for v in VERDICTS)
             + f" ({rep['counts']['computed_share']:.0%} computed)"]
    for c in rep["claims"]:
        lines.append(f"[{c['verdict']:>14s}] {c['id']} ({c['seed']}): {c['text']}")
        lines.append(f"{'':17s} claimed {_value(c['claimed'])}, computed {_value(c['computed'])} {c['unit']}")
        lines.append(f"{'':17s} {c['note']}")
    return "\n".join(lines)
