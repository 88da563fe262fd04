"""Load and latency targets on the command line (#23; model/search/load.py, model/search/capacity_planner.py).

  calc infer ... --rate R [--ttft-slo S] [--tpot-slo S] [--prefill-chunk-tokens C]
              Poisson requests at R per second on the replica (continuous batching, chunked prefill with a budget of
              C tokens per step, vLLM's max_num_batched_tokens, default 2048). The JSON adds `load` {rate_per_s,
              stable, ttft_p50_s, ttft_p95_s, tpot_p50_s, tpot_p95_s, mean_running, saturation_rate_per_s,
              max_rate_within_slo (null without a target), ttft_slo_s, tpot_slo_s, chunk_tokens, max_running}:
              latencies null where the replica cannot keep up.
  plan infer ... --rate R [--ttft-slo S] [--tpot-slo S] [--prefill-chunk-tokens C]
              the fewest GPUs that serve R requests/s within the p95 targets: replicas of one TP x PP layout (TP x
              PP up to --gpus), the JSON `capacity` {gpus, layout {tp, pp, replicas, weight_dtype, kv_dtype},
              max_rate_per_replica, replica_load (as `load`, at R / replicas), layouts_searched, ...}.
Imports cli_options only.
"""

from __future__ import annotations

import argparse

from trinity_desktop.cli_options import add_scenario_option, scenario_number
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.search.capacity_planner import plan_capacity
from trinity_desktop.model.search.load import load_report

RATE_HELP = "Poisson request rate, requests/s: adds the load model's p50/p95 TTFT and TPOT (default 0: off)"
CHUNK_HELP = "token budget per engine step, chunked prefill (vLLM max_num_batched_tokens; default 2048)"


def add_load_options(p: argparse.ArgumentParser, slos: bool = True) -> None:
    """--rate, --prefill-chunk-tokens and (for calc) --ttft-slo / --tpot-slo, checked against ranges.SCENARIO_LIMITS."""
    p.add_argument("--rate", type=scenario_number("request_rate"), default=0.0, help=RATE_HELP)
    if slos:
        p.add_argument("--ttft-slo", type=scenario_number("ttft_slo_s"), default=0.0,
                       help="p95 time-to-first-token target, seconds (with --rate: max_rate_within_slo)")
        p.add_argument("--tpot-slo", type=scenario_number("tpot_slo_s"), default=0.0,
                       help="p95 time-per-output-token target, seconds (with --rate: max_rate_within_slo)")
    add_scenario_option(p, "prefill_chunk_tokens", help=CHUNK_HELP)


def load_fields(args) -> dict:
    """The Scenario fields of the load options."""
    return {"request_rate": args.rate, "ttft_slo_s": args.ttft_slo or 0.0, "tpot_slo_s": args.tpot_slo or 0.0,
            "prefill_chunk_tokens": args.prefill_chunk_tokens}


def load_json(sc: Scenario) -> dict:
    """{"load": ...} when the scenario has a request rate, else nothing."""
    return {"load": load_report(sc).as_json()} if sc.request_rate > 0 else {}


def _ms(x) -> str:
    return "unbounded" if x is None else f"{x * 1e3:,.1f} ms"


def load_text(text_fn):
    """A calc text formatter with the load lines appended (when the report has `load`)."""
    def text(rep: dict) -> str:
        load = rep.get("load")
        if not load:
            return text_fn(rep)
        best = load["max_rate_within_slo"]
        lines = [f"  load              {load['rate_per_s']:g} req/s: TTFT p50 {_ms(load['ttft_p50_s'])}, p95 "
                 f"{_ms(load['ttft_p95_s'])}; TPOT p50 {_ms(load['tpot_p50_s'])}, p95 {_ms(load['tpot_p95_s'])}",
                 f"                    saturates at {load['saturation_rate_per_s']:.3g} req/s"
                 + ("" if best is None else f"; {best:.3g} req/s meets the targets")]
        return "\n".join([text_fn(rep), *lines])
    return text


def capacity_report(args, model, hardware) -> dict:
    """`plan infer --rate`: the capacity planner's JSON."""
    plan = plan_capacity(model, hardware, args.rate, args.prompt_len, args.gen_len, ttft_slo_s=args.ttft_slo or 0.0,
                         tpot_slo_s=args.tpot_slo or 0.0, max_replica_gpus=args.gpus,
                         chunk_tokens=args.prefill_chunk_tokens,
                         gpus_per_node=args.gpus_per_node or hardware.gpus_per_node_default)
    return {"model": model.name, "hardware": hardware.name, "max_replica_gpus": args.gpus,
            "prompt_len": args.prompt_len, "gen_len": args.gen_len, "capacity": plan.as_json()}


def capacity_text(rep: dict) -> str:
    cap = rep["capacity"]
    targets = ", ".join(f"{k} p95 <= {cap[f'{k}_slo_s'] * 1e3:g} ms" for k in ("ttft", "tpot") if cap[f"{k}_slo_s"])
    head = (f"{rep['model']} on {rep['hardware']}: {cap['rate_per_s']:g} req/s of prompt {rep['prompt_len']:,}, "
            f"generate {rep['gen_len']:,}" + (f"; targets {targets}" if targets else ""))
    lines = [head, f"  searched {cap['layouts_searched']:,} replica layouts (up to {rep['max_replica_gpus']} GPUs) in "
                   f"{cap['search_seconds']:.2f} s: {cap['layouts_meeting_targets']:,} meet the targets at some rate"]
    if cap["gpus"] is None:
        return "\n".join([*lines, "  no replica layout meets the targets at any rate"])
    load, layout = cap["replica_load"], cap["layout"]
    lines += [f"  fewest GPUs       {cap['gpus']}: {layout['replicas']} replica{'s' if layout['replicas'] > 1 else ''} of TP{layout['tp']} PP{layout['pp']}, "
              f"weights {layout['weight_dtype']}, KV {layout['kv_dtype']}",
              f"  each replica      up to {cap['max_rate_per_replica']:.3g} "
              f"req/s within the targets; at {load['rate_per_s']:.3g} req/s TTFT p95 {_ms(load['ttft_p95_s'])}, "
              f"TPOT p95 {_ms(load['tpot_p95_s'])}"]
    return "\n".join(lines)
