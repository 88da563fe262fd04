"""The roofline's footer readout: three short rows (where decode turns compute-bound, how far the KV cache fits,
the slider's time against the title's), each wrapping at whole words, never one long paragraph cut by the dock.

The ridge batch is the closed form R·S/2W (datasheet ridge R = peak FLOP/s / HBM bytes/s, S bytes per weight,
W = 2 FLOP per weight per token: Williams et al. 2009, "roofline"); the achievable ridge is R·η_compute/η_HBM.
The long explanation stays in the label's hover (`INFO_TOOLTIP`).
"""

from __future__ import annotations

import math

from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.roofline_style import fmt_count
from trinity_desktop.ui.step_time_labels import roofline_footer_note
from trinity_desktop.ui.units import fmt_seconds

INFO_TOOLTIP = (
    "Ridge crossing: the batch where the decode GEMMs reach the datasheet ridge (closed form R·S/2W); "
    "the model's step turns at the achievable ridge R·η_compute/η_HBM; with the KV cache's reads at the "
    "mean context, the step's intensity may never reach the ridge. KV fit: where weights + KV cache "
    "exceed 90% of HBM. SRAM/L2 roofs are omitted (no published on-chip bandwidth in the presets); "
    "offload transfers are not points (no offload in the scenario)."
)


def info_rows(r: Results, s, index: int, errors: list[tuple[str, str]]) -> list[str]:
    """Rich-text rows of the footer for the results `r`, the decode sweep `s` and the slider's `index`: the ridge
    batches, the KV-cache fit, the time at the sweep's ★ (and, on a fourth row, any compared hardware that failed)."""
    sc = r.scenario
    ctx = sc.prompt_len + sc.gen_len / 2
    with_kv = f"≈ {math.ceil(s.ridge_batch_with_kv):,}" if s.ridge_batch_with_kv > 0 else "never"
    fits = "" if s.fits[index] else f" — <span style='color:{theme.BAD_COLOR}'>does not fit in HBM</span>"
    rows = [
        f"<b>Decode</b> ({s.dtype.upper()}) compute-bound from batch ≈ <b>{math.ceil(s.ridge_batch):,}</b> "
        f"(model ≈ {math.ceil(s.ridge_batch_achievable):,}; with KV reads at {fmt_count(ctx)}: {with_kv}).",
        f"KV cache fits up to batch {s.kv_fit_limit_batch:,.0f} here, or {fmt_count(s.kv_fit_limit_context)} "
        f"tokens at batch {sc.batch}.",
        f"At ★: {fmt_seconds(float(s.time_per_token_s[index]))} per token step, the ideal roofline bound on one GPU "
        f"at datasheet peaks{roofline_footer_note(r)}{fits}.",
    ]
    if errors:
        rows.append(
            f"<span style='color:{pw.secondary_text()}'>"
            + " ".join(f"{pw.html_escape(n)}: n/a ({pw.html_escape(e)})" for n, e in errors)
            + "</span>"
        )
    return rows
