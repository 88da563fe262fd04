"""`plan train` and `plan infer`: search every layout (model/search/planner.py, model/search/serving_planner.py) from the
command line. The `layout` keys of the JSON are `calc` options: `calc train` (or `calc infer`) with a reported
layout prints the same numbers.

  plan train  --model M --hardware H --gpus N[,N...] --global-batch B --seq-len S [--objective time|tokens-per-gpu]
              [--top K] [--tp-comm-overlap] [--ep-comm-overlap] [--moe-fp8-dispatch] [--moe-node-limit M] [--json]. JSON: configurations_evaluated, feasible, invalid, not_fitting,
              most_common_invalid_reason, most_common_not_fitting_reason, search_seconds,
              best {layout {tp, pp, dp, cp, ep, zero, recompute, micro_batch, virtual_stages, offload}, gpus,
              time_per_step_s, memory_per_gpu_bytes, mfu, tokens_per_s_per_gpu, gpu_hours_per_trillion_tokens,
              communication_hidden_s, communication_exposed_s, bottleneck}, top, pareto
              (the same shape, step time against memory per GPU, fastest first).
  plan infer  --model M --hardware H --gpus N --prompt-len P --gen-len G [--ttft-slo S] [--tpot-slo S] [--json].
              JSON: best {layout {tp, pp, attention_dp, ep, replicas, batch, weight_dtype, kv_dtype, kv_offload},
              tokens_per_s_per_gpu,
              ttft_s, tpot_s, ...}, pareto (throughput per GPU against time per output token), and the counts.
              Throughput per GPU is the replicas' tokens/s over the whole budget (--gpus), idle GPUs included.
              `calc infer --gpus TP*DP*PP --pp PP [--ep TP*DP --attention-dp DP] --batch ...` with a reported layout
              prints the same numbers (MoE models: DP-attention and EP are searched too).
"""

from __future__ import annotations

import argparse

from trinity_desktop import cli_load
from trinity_desktop.cli_cost import add_plan_cost
from trinity_desktop.cli_options import (
    GPN_HELP,
    add_comm_overlap_options,
    add_cost_option,
    add_json_flag,
    add_model_and_hardware_choice,
    add_scenario_option,
    comm_overlap_fields,
    scenario_default,
    scenario_number,
    whole_number,
)
from trinity_desktop.cli_speculative import (  # speculative decoding (#23)
    add_speculative_options,
    speculative_fields,
)
from trinity_desktop.model.base.dtypes import OPTIMIZER_STATE_BYTES, TRAIN_PRECISIONS
from trinity_desktop.model.base.errors import ValidationError, shown
from trinity_desktop.model.base.ranges import SCENARIO_LIMITS
from trinity_desktop.model.search.disagg_planner import plan_disaggregated
from trinity_desktop.model.search.layouts import layout_text
from trinity_desktop.model.search.planner import MAX_GPU_COUNTS, OBJECTIVES, plan_training, training_space
from trinity_desktop.model.search.serving_planner import plan_serving, serving_space


def _gpu_counts(text: str) -> list[int]:
    """An argparse type: one GPU count or a comma-separated list of at most MAX_GPU_COUNTS, each from 1 to the
    scenario's highest (each count is a search of its own: 2,000 ran for minutes)."""
    if text.count(",") >= MAX_GPU_COUNTS:
        raise argparse.ArgumentTypeError(f"{text.count(',') + 1:,} GPU counts given; at most {MAX_GPU_COUNTS}")
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a whole number or a comma-separated list") from None
    highest = SCENARIO_LIMITS["gpus"].highest
    if not counts or min(counts) < 1 or max(counts) > highest:
        raise argparse.ArgumentTypeError(f"{shown(text)}: each count must be from 1 to {highest}")
    return counts


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a number of seconds") from None
    if not 0 < value < 1e6:
        raise argparse.ArgumentTypeError(f"{shown(value)} must be a positive number of seconds below 1e6")
    return value


def _model_and_hardware_options(p: argparse.ArgumentParser) -> None:
    add_model_and_hardware_choice(p)
    add_scenario_option(p, "gpus_per_node", None, help=GPN_HELP)
    add_json_flag(p)
    add_cost_option(p)  # cost and power (#23): each candidate's $ and kWh per million tokens


def add_plan_parser(sub, parser_class) -> None:
    """The `plan` command and its `train` and `infer` subcommands."""
    plan = sub.add_parser("plan", help="search every parallel layout (training) or serving layout (inference)")
    plan = plan.add_subparsers(dest="plan", required=True, parser_class=parser_class)
    train = plan.add_parser("train", help="the fastest fitting training layouts and the time/memory Pareto front")
    _model_and_hardware_options(train)
    train.add_argument("--gpus", type=_gpu_counts, required=True, help="GPU count, or a comma-separated list")
    add_scenario_option(train, "global_batch", None, required=True, help="sequences per optimizer step")
    add_scenario_option(train, "seq_len", None, required=True, help="tokens per sequence")
    train.add_argument("--objective", choices=OBJECTIVES, default="time",
                       help="rank by step time (default) or by tokens/s per GPU (differs across GPU counts)")
    train.add_argument("--top", type=whole_number(1, 10_000), default=5, help="layouts listed in `top` (default 5)")
    train.add_argument("--max-micro-batch", type=scenario_number("micro_batch"), default=64,
                       help="largest micro-batch searched (divisors of the global batch up to this; default 64)")
    train.add_argument("--precision", choices=TRAIN_PRECISIONS, default=scenario_default("precision"))
    train.add_argument("--optimizer", choices=tuple(OPTIMIZER_STATE_BYTES), default=scenario_default("optimizer"))
    add_comm_overlap_options(train)  # held fixed over the search (model/formulas/overlap.py, comms.py)

    infer = plan.add_parser("infer", help="the best serving layout under TTFT/TPOT targets and the Pareto front")
    _model_and_hardware_options(infer)
    add_scenario_option(infer, "gpus", None, required=True, help="GPU budget (replicas x TP x PP)")
    add_scenario_option(infer, "prompt_len", None, required=True, help="prompt tokens per request")
    add_scenario_option(infer, "gen_len", None, required=True, help="generated tokens per request")
    infer.add_argument("--ttft-slo", type=_seconds, help="time-to-first-token target in seconds (prefill)")
    infer.add_argument("--tpot-slo", type=_seconds, help="time-per-output-token target in seconds (decode)")
    infer.add_argument("--max-batch", type=scenario_number("batch"), default=1024,
                       help="largest batch searched (powers of two up to this; default 1024)")
    # load and latency targets (#23): with --rate, the fewest GPUs serving it (replicas of TP x PP <= --gpus)
    cli_load.add_load_options(infer, slos=False)
    # speculative decoding (#23): with --draft-model or --mtp, gamma is searched beside the layout
    add_speculative_options(infer, searched=True)
    # disaggregated prefill and decode (#23)
    infer.add_argument("--compare-disaggregated", action="store_true",
                       help="also search prefill and decode pools and compare them with aggregated serving at the "
                            "same GPUs (JSON `disaggregated_comparison`; model/search/disagg_planner.py)")


def plan_train_report(args, model, hardware) -> dict:
    counts = args.gpus
    space = training_space(model, counts, args.global_batch, args.seq_len, args.max_micro_batch)
    plan = plan_training(model, hardware, counts if len(counts) > 1 else counts[0], args.global_batch, args.seq_len,
                         objective=args.objective, top=args.top, space=space,
                         gpus_per_node=args.gpus_per_node or hardware.gpus_per_node_default, precision=args.precision,
                         optimizer=args.optimizer, **comm_overlap_fields(args))
    return add_plan_cost({"model": model.name, "hardware": hardware.name, "gpus": counts,
                          "global_batch": args.global_batch, "seq_len": args.seq_len, **plan.as_json()},
                         args.gpu_hour_price, hardware.tdp_w)


def plan_infer_report(args, model, hardware) -> dict:
    space = serving_space(model, hardware, args.gpus, args.max_batch)
    plan = plan_serving(model, hardware, args.gpus, args.prompt_len, args.gen_len, ttft_slo=args.ttft_slo,
                        tpot_slo=args.tpot_slo, space=space, **speculative_fields(args),
                        gpus_per_node=args.gpus_per_node or hardware.gpus_per_node_default)
    return add_plan_cost({"model": model.name, "hardware": hardware.name, "gpus": args.gpus,
                          "prompt_len": args.prompt_len, "gen_len": args.gen_len, "ttft_slo_s": args.ttft_slo,
                          "tpot_slo_s": args.tpot_slo, **plan.as_json(),
                          # disaggregated prefill and decode (#23): only when asked
                          **({"disaggregated_comparison": plan_disaggregated(
                              model, hardware, args.gpus, args.prompt_len, args.gen_len, ttft_slo=args.ttft_slo,
                              tpot_slo=args.tpot_slo, max_batch=args.max_batch,
                              gpus_per_node=args.gpus_per_node or hardware.gpus_per_node_default).as_json()}
                             if args.compare_disaggregated else {})}, args.gpu_hour_price, hardware.tdp_w)


def text_plan_infer(rep: dict) -> str:
    targets = ", ".join(f"{k} <= {rep[f'{k}_slo_s'] * 1e3:g} ms" for k in ("ttft", "tpot") if rep[f"{k}_slo_s"])
    lines = [f"{rep['model']} on up to {rep['gpus']} x {rep['hardware']}: prompt {rep['prompt_len']:,}, "
             f"generate {rep['gen_len']:,}" + (f"; targets {targets}" if targets else ""),
             f"  searched {rep['configurations_evaluated']:,} layouts in {rep['search_seconds']:.2f} s: "
             f"{rep['feasible']:,} meet every target, {rep['not_fitting']:,} do not fit, "
             f"{rep['missing_targets']:,} miss a target"
             + (f" (mostly: {rep['most_common_reason']})" if rep["most_common_reason"] else "")]
    if rep["best"] is None:
        return "\n".join([*lines, "  no layout fits and meets the targets"])

    def row(c):
        return (f"{c['tokens_per_s_per_gpu']:10,.0f} tok/s/GPU  TTFT {c['ttft_s'] * 1e3:8.1f} ms  TPOT "
                f"{c['tpot_s'] * 1e3:7.2f} ms  {layout_text(c['layout'])}")

    lines += ["  best     " + row(rep["best"]),
              f"  Pareto front (throughput per GPU vs time per output token), {len(rep['pareto'])} layouts:"]
    lines += ["    " + row(c) for c in rep["pareto"]]
    if "disaggregated_comparison" in rep:  # disaggregated prefill and decode (#23)
        lines += text_disaggregated_comparison(rep["disaggregated_comparison"])
    return "\n".join(lines)


def text_disaggregated_comparison(cmp: dict) -> list[str]:
    """The aggregated and disaggregated best at equal GPUs, in requests/s per GPU within the targets."""
    def row(name, c):
        if c is None:
            return f"  {name:<14} no deployment fits and meets the targets"
        lay = ", ".join(f"{k} {v}" for k, v in c["layout"].items())
        return (f"  {name:<14} {c['requests_per_s_per_gpu']:8.3f} req/s/GPU  TTFT {c['ttft_s'] * 1e3:8.1f} ms  "
                f"TPOT {c['tpot_s'] * 1e3:7.2f} ms  ({lay})")
    gain = cmp["disaggregated_over_aggregated"]
    return [f"  prefill/decode pools against aggregated at {cmp['gpus']} GPUs"
            + (f": disaggregated serves {gain:.2f}x the requests" if gain else ""),
            row("aggregated", cmp["aggregated"]), row("disaggregated", cmp["disaggregated"])]

def run_plan(args, model, hardware):
    """(report, text formatter) of `plan train` or `plan infer`."""
    if args.plan == "train":
        return plan_train_report(args, model, hardware), text_plan_train
    if args.rate > 0:  # load and latency targets (#23)
        if args.draft_model or args.mtp_depth:  # speculative decoding (#23) is searched by the layout planner only
            raise ValidationError("rate", args.rate, "0 (off) with --draft-model or --mtp: the capacity planner "
                                  "does not search speculative decoding")
        return cli_load.capacity_report(args, model, hardware), cli_load.capacity_text
    return plan_infer_report(args, model, hardware), text_plan_infer


def text_plan_train(rep: dict) -> str:
    lines = [f"{rep['model']} on {', '.join(map(str, rep['gpus']))} x {rep['hardware']}: global batch "
             f"{rep['global_batch']:,} x {rep['seq_len']:,} tokens",
             f"  searched {rep['configurations_evaluated']:,} layouts in {rep['search_seconds']:.2f} s: "
             f"{rep['feasible']:,} fit, {rep['not_fitting']:,} do not fit"
             + (f" ({rep['most_common_not_fitting_reason']})" if rep["most_common_not_fitting_reason"] else "")
             + f", {rep['invalid']:,} invalid"
             + (f" (mostly: {rep['most_common_invalid_reason']})" if rep["most_common_invalid_reason"] else "")]
    if rep["best"] is None:
        return "\n".join([*lines, "  no layout fits"])
    b = rep["best"]
    lines += [f"  best     {layout_text(b['layout'])} on {b['gpus']} GPUs",
              f"           {b['time_per_step_s']:.3f} s/step, {b['memory_per_gpu_bytes'] / 1e9:.1f} GB/GPU, "
              f"MFU {b['mfu'] * 100:.1f}%, bottleneck {b['bottleneck']}",
              f"  Pareto front (step time vs memory per GPU), {len(rep['pareto'])} layouts:"]
    lines += [f"    {c['time_per_step_s']:9.3f} s  {c['memory_per_gpu_bytes'] / 1e9:7.1f} GB  {layout_text(c['layout'])}"
              for c in rep["pareto"]]
    return "\n".join(lines)
