"""`calc infer`'s speculative-decoding options (--draft-model, --draft-tokens, --mtp, --acceptance), the Scenario
fields they set and the text line of the report (model/step/speculative_step.py computes the numbers).
Imports cli_options, never cli.
"""

from __future__ import annotations

import argparse

from trinity_desktop.cli_options import add_scenario_option, scenario_number
from trinity_desktop.model.base.ranges import SCENARIO_LIMITS


def add_speculative_options(p: argparse.ArgumentParser, searched: bool = False) -> None:
    """A draft model or MTP modules (mutually exclusive), the proposed tokens γ and the acceptance rate α;
    `searched`: γ is searched (`plan infer`), so no --draft-tokens."""
    drafter = p.add_mutually_exclusive_group()
    drafter.add_argument("--draft-model", default="", metavar="KEY",
                         help="speculative decoding with this model preset as the draft (same vocabulary as the "
                              "target; Leviathan et al. 2023); default off")
    drafter.add_argument("--mtp", dest="mtp_depth", type=scenario_number("mtp_depth"), metavar="D",
                         default=SCENARIO_LIMITS["mtp_depth"].default, help="speculative decoding with D multi-token-prediction modules as the draft, gamma = D "
                             "(DeepSeek-V3); default 0, off")
    if not searched:
        add_scenario_option(p, "draft_tokens", metavar="GAMMA", help="tokens the draft model proposes per target "
                            "step (default 4; --mtp proposes one per module)")
    add_scenario_option(p, "acceptance", metavar="ALPHA", help="probability that the target accepts a proposed "
                        "token (default 0.7; DeepSeek-V3 reports 0.85-0.9 for its second-token MTP)")


def speculative_fields(args) -> dict:
    """The Scenario fields of the options above."""
    return {"draft_model": args.draft_model, "mtp_depth": args.mtp_depth, "acceptance": args.acceptance,
            **({"draft_tokens": args.draft_tokens} if hasattr(args, "draft_tokens") else {})}


def speculative_text(rep: dict) -> list[str]:
    """The report's speculative line, when it is on."""
    s = rep.get("speculative")
    if not s:
        return []
    return [f"  speculative       {s['expected_tokens_per_step']:.2f} tokens per target step, "
            f"{s['time_per_output_token_s'] * 1e3:,.2f} ms per output token, {s['speedup']:.2f}x plain decode "
            f"(draft {s['draft_step_s'] * 1e3:,.2f} ms x {s['draft_tokens']}, verify {s['verify_step_s'] * 1e3:,.2f} ms,"
            f" {s['verify_bound']}-bound)"]
