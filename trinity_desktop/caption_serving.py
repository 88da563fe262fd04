"""Caption values of a serving slide (#23): speculative decoding, disaggregated pools, load and cost, each formatted
as the panel that draws it writes it (the roofline's speculative title, the triangle's pool edge, the System
outcomes' load and cost read-outs). A value the slide's scenario does not switch on is absent, so a caption quoting
it is refused in one line (trinity_desktop.captions)."""

from __future__ import annotations

from trinity_desktop.model import Results, ValidationError
from trinity_desktop.model.search.load import load_report
from trinity_desktop.model.views.cost import scenario_cost
from trinity_desktop.model.views.pool_points import pool_points
from trinity_desktop.ui.units import fmt_seconds


def _seconds(x: float | None) -> str:
    """Seconds as the load read-out writes them (model/search/load.py's finding)."""
    if x is None:
        return "unbounded"
    return f"{x * 1e3:.3g} ms" if x < 1.0 else f"{x:.3g} s"


def _rate(x: float | None) -> str:
    return "none" if x is None else f"{x:.3g} req/s"


def _speculative(r: Results) -> dict[str, str]:
    """The roofline's speculative title: speed-up over plain decode, the verify step's tokens and roof."""
    spec = r.speculative
    if spec is None:
        return {}
    ratio, verdict = (spec.speedup, "faster") if spec.helps else (1.0 / spec.speedup, "slower")
    return {"serving_speedup": f"{ratio:.2f}× {verdict}", "serving_verify_tokens": f"{spec.draft_tokens + 1}",
            "serving_verify_bound": "HBM-bound" if spec.verify_bound == "memory" else "compute-bound",
            "serving_draft": spec.draft_name, "serving_acceptance": f"{spec.acceptance:.0%}",
            "serving_tokens_per_step": f"{spec.expected_tokens_per_step:.2f}",
            "serving_speculative_token_time": fmt_seconds(spec.time_per_output_token_s),
            "serving_plain_token_time": fmt_seconds(spec.decode_step_s),
            "serving_verify_step_time": fmt_seconds(spec.verify_step_s),
            "serving_draft_step_time": fmt_seconds(spec.draft_step_s)}


def _pools(r: Results) -> dict[str, str]:
    """The triangle's pool edge (pool_points.edge_text) and the pools' served rate against aggregated replicas."""
    p, d = pool_points(r), r.disaggregated
    if p is None or d is None:
        return {}
    lay = d.layout
    return {"serving_prefill_gpus": f"{lay.prefill.gpus:,}", "serving_decode_gpus": f"{lay.decode.gpus:,}",
            "serving_prefill_binding": p.prefill_binding, "serving_decode_binding": p.decode_binding,
            "serving_kv_bytes": f"{p.kv_transfer_bytes / 1e9:,.2f} GB", "serving_link": p.link,
            "serving_kv_transfer_time": f"{p.kv_transfer_s * 1e3:,.2f} ms",
            "serving_pools_rate": _rate(float(d.served.requests_per_s)),
            "serving_aggregated_rate": _rate(d.aggregated_requests_per_s), "serving_pool_binding": d.binding}


def _load(r: Results) -> dict[str, str]:
    """The load read-out's finding at the scenario's request rate (load_report)."""
    sc = r.scenario
    if sc.kind == "train" or sc.request_rate <= 0:
        return {}
    try:
        rep = load_report(sc)
    except ValidationError:
        return {}
    return {"serving_rate": f"{rep.rate_per_s:g} req/s", "serving_ttft_p95": _seconds(rep.ttft_p95_s),
            "serving_tpot_p95": _seconds(rep.tpot_p95_s), "serving_ttft_slo": _seconds(sc.ttft_slo_s or None),
            "serving_tpot_slo": _seconds(sc.tpot_slo_s or None), "serving_max_rate": _rate(rep.max_rate_within_slo),
            "serving_saturation_rate": _rate(rep.saturation_rate_per_s)}


def _cost(r: Results) -> dict[str, str]:
    """The cost read-out's dollars and kWh per million tokens (scenario_cost), where a price or TDP is known."""
    c = scenario_cost(r)
    out = {}
    if c.usd_per_million_tokens is not None:
        out.update(serving_usd_per_million=f"${c.usd_per_million_tokens:,.3g}",
                   serving_gpu_hour_price=f"${c.gpu_hour_price:,.2f}")
    if c.kwh_per_million_tokens is not None:
        out.update(serving_kwh_per_million=f"{c.kwh_per_million_tokens:,.3g} kWh", serving_tdp=f"{c.power_w:,.0f} W")
    return out


def serving_values(r: Results) -> dict[str, str]:
    """Every serving value the slide's scenario switches on."""
    return {**_speculative(r), **_pools(r), **_load(r), **_cost(r)}
