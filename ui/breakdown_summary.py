"""The Memory-and-time panel's footer line: MFU, tokens/s, step or TTFT/TPOT, and the resource that binds with
its pressure (ui/breakdown_panel.py)."""

from __future__ import annotations

from trinity_desktop.model.formulas.pressure import RESOURCES
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui import theme
from trinity_desktop.ui.batch_readout import batch_of, fmt_tokens
from trinity_desktop.ui.units import fmt_bytes, fmt_seconds


def _fmt_tokens_per_s(value: float) -> str:
    return f"{value:,.0f} tokens/s" if value >= 100 else f"{value:.3g} tokens/s"


def summary_line(r: Results) -> tuple[str, str]:
    """(plain text, rich text) of the footer."""
    color = theme.RESOURCE_COLORS.get(r.bottleneck, theme.plot_text_color())
    bottleneck = theme.RESOURCE_LABELS.get(r.bottleneck, r.bottleneck).lower()
    if r.kind == "train":
        batch = batch_of(r)
        mfu, mfu_format = r.train.get("mfu", 0.0), r.train.get("mfu_format_peak", 0.0)
        peak = "BF16" if mfu_format != mfu else r.scenario.precision.upper()  # FP8 runs: the BF16 peak
        parts = [f"MFU {100 * mfu:.1f}% of {peak} peak"
                 + (f" ({100 * mfu_format:.1f}% of FP8)" if mfu_format != mfu else ""),
                 _fmt_tokens_per_s(r.train.get("tokens_per_s", 0.0)),
                 f"step {fmt_seconds(r.time_total)}",
                 f"batch {fmt_tokens(batch.batch_tokens)} tokens (published optimum {fmt_tokens(batch.optimal_tokens)})"]
    else:
        parts = [_fmt_tokens_per_s(r.infer.get("tokens_per_s", 0.0)),
                 f"TTFT {fmt_seconds(r.infer.get('prefill_s', 0.0))}"   # the batch's prompts in one prefill
                 + (f" ({r.scenario.batch} prompts at once)" if r.scenario.batch > 1 else ""),
                 f"TPOT {fmt_seconds(r.infer.get('time_per_output_token_s', 0.0))}",
                 f"KV cache {fmt_bytes(r.infer.get('kv_bytes_per_token', 0.0))}/token"]
    # "binds" with its pressure, as the triangle and the status bar say it: "bottleneck: memory" under
    # "compute takes 74%" read as a contradiction (the time's largest part is not the tightest resource)
    pressure = f"{getattr(r.pressure, r.bottleneck, 0.0):.2f}" if r.bottleneck in RESOURCES else ""
    binds = f" binds (pressure {pressure})" if pressure else " binds"
    plain = " · ".join(parts + [f"{bottleneck}{binds}"])
    html = " &nbsp;·&nbsp; ".join(pw.html_escape(p) for p in parts)
    html += f" &nbsp;·&nbsp; <b><span style='color:{color}'>{bottleneck}</span></b>{binds}"
    return plain, html
