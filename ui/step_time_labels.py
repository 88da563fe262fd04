"""Words that tell two step times apart where a speaker sees both (#23): the status bar's static-batch time beside
the p95 under load (System outcomes), and the roofline footer's ideal per-step bound beside the title's model time.
"""

from __future__ import annotations

from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.ui.units import fmt_seconds

PER = {"train": "step", "prefill": "prompt", "decode": "token"}


def static_batch_note(r: Results) -> str:
    """' (static batch of 16, no queueing; p95 under load: System outcomes)' when a request rate is set, else ''."""
    if r.kind == "train" or r.scenario.request_rate <= 0:
        return ""
    return f" (static batch of {r.scenario.batch:,}, no queueing; p95 under load: System outcomes)"


def roofline_footer_note(r: Results) -> str:
    """'; the title's 19.3 ms per token is the model's step at batch 16, with its efficiencies and fixed costs':
    the footer's roofline bound (datasheet peaks, one GPU, the slider's batch) is not the title's number."""
    if r.speculative is not None:  # the title then states the verify step and the speed-up
        return "; the title's figures are the model's, with its efficiencies and fixed costs"
    batch = f"global batch {r.scenario.global_batch:,}" if r.kind == "train" else f"batch {r.scenario.batch:,}"
    return (f"; the title's {fmt_seconds(r.time_total)} per {PER[r.kind]} is the model's time at {batch}, with its "
            "efficiencies and fixed costs")
