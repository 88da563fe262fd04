"""The command line: `calc train`, `calc infer`, `calc split`, `presets` (human-readable or --json).

A stable contract for scripts and tests. Bad arguments exit 2 with one line naming the problem.

  calc train|infer  one scenario. `--technique NAME` (repeatable) applies techniques of
                    resources/techniques.toml in order, as scenario transforms (model/views/techniques.py).
                    `--json` keys include memory_per_gpu_bytes, time_per_step_s (train) or prefill_s /
                    time_per_output_token_s (infer), bytes_by_link_per_gpu (train), bottleneck, roofline,
                    `pressure` {compute, bandwidth, memory}: the heatmap's numbers, the share of each
                    resource's limit used (1.0 = at the limit; memory > 1: does not fit; the highest one is
                    the bottleneck; model/formulas/pressure.py), `triangle_weights`: the same clipped to [0, 1] and
                    normalised to sum to 1 (where the triangle places the workload),
                    `techniques_applied` [catalogue keys], and
                    `stages` [{name, kind, lane, start_s, end_s, duration_s, flops, bytes_by_link,
                    live_memory_by_tier, binding, micro_batch}] (model/views/stages.py; the last stage ends at the
                    step time, or at request_s for infer).
  calc train        also `--tp-comm-overlap`, `--ep-comm-overlap`, `--moe-fp8-dispatch`, `--moe-node-limit M`
                    (the same options as `plan train`: cli_options.add_comm_overlap_options).
  calc infer        also `--pp P` (pipeline stages; `--gpus` is the replica's total, TP = gpus / P; JSON tp, pp),
                    `--context N` (tokens per sequence, prompt + generated: prompt_len = N - gen_len),
                    `--sessions N` (concurrent sequences = batch), `--kv-policy`, `--kv-window`, `--kv-sinks`,
                    `--kv-placement {spill,evict}`; `--json` adds kv_residency_bytes {hbm, host, cxl, ssd}
                    (per GPU at the end of the request), effective_time_per_output_token_s,
                    kv_placement_policy, kv_evicted_tokens, kv_unplaced_bytes (model/step/kv_residency.py);
                    `--rate R [--ttft-slo S --tpot-slo S]` adds `load` (trinity_desktop/cli_load.py).
  calc split        split computing between an edge device and the cloud (model/views/split.py, Neurosurgeon):
                    `--model --device --network [--objective latency|energy] [--json]`; the JSON holds
                    split_points [{index, name, device_s, transfer_s, cloud_s, total_s, energy_j}] (index k:
                    the first k layers on the device; 0 = all cloud, last = all device), optimal_index,
                    all_device_s, all_cloud_s.
  presets           hardware, models, edge_devices, networks and split_models (keys for `calc split`).
  plan train|infer  search every training layout or serving layout (trinity_desktop/cli_plan.py).
  validate          predicted against measured published runs; `calc ... --uncertainty`, `--efficiency`:
                    see trinity_desktop/cli_validate.py.
  bench             start-up, edit->repaint, peak RSS and model speed against baselines (trinity_desktop/bench.py).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from trinity_desktop import cli_claims, cli_load, cli_validate
from trinity_desktop.cli_calc_options import add_calc_infer, add_calc_train, disaggregation_fields
from trinity_desktop.cli_cost import cost_and_lora_json, cost_text
from trinity_desktop.cli_options import (
    PROG,
    CliError,
    Parser,
    comm_overlap_fields,
    option_message,
    positive_int,
    whole_number,
    write_report,
)
from trinity_desktop.cli_plan import add_plan_parser, run_plan
from trinity_desktop.cli_retrieval import add_retrieval_parser, retrieval_report, retrieval_text
from trinity_desktop.cli_speculative import speculative_fields, speculative_text  # speculative decoding (#23)
from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.base.errors import shown, unknown_key
from trinity_desktop.model.base.ranges import SCENARIO_LIMITS as LIMITS
from trinity_desktop.model.formulas.batch_law import scenario_batch
from trinity_desktop.model.formulas.layer_profiles import profile_keys
from trinity_desktop.model.formulas.pressure import barycentric
from trinity_desktop.model.inputs.presets import (
    find,
    hardware_presets,
    load_hardware_file,
    load_model_file,
    model_presets,
)
from trinity_desktop.model.step.kv_residency import residency_json
from trinity_desktop.model.views.moe_serving_summary import moe_serving
from trinity_desktop.model.views.roofline import roofline_json
from trinity_desktop.model.views.split import OBJECTIVES, edge_devices, networks, split_json, split_summary
from trinity_desktop.model.views.stages import request_time, stages_json
from trinity_desktop.model.views.techniques import applicable, load_techniques
from trinity_desktop.model.views.techniques import apply as apply_technique
from trinity_desktop.refusals import print_refusal


def _add_calc_split(calc) -> None:
    split = calc.add_parser("split", help="split computing between an edge device and the cloud (Neurosurgeon)")
    split.add_argument("--model", required=True,
                       help="layer profile: a CNN (resnet-50, alexnet) or a transformer preset key (see `presets`)")
    split.add_argument("--device", required=True, help="edge device key or name (see `presets`)")
    split.add_argument("--network", required=True, help="uplink network key or name: 3g, 4g, 5g, wifi, ethernet")
    split.add_argument("--objective", choices=OBJECTIVES, default="latency",
                       help="minimise end-to-end latency (default) or device energy")
    split.add_argument("--json", action="store_true", help="print machine-readable JSON")


def _add_presets(sub) -> None:
    presets = sub.add_parser("presets", help="list hardware and model presets, edge devices and networks")
    presets.add_argument("--json", action="store_true", help="print machine-readable JSON")


def _add_bench(sub) -> None:
    bench = sub.add_parser("bench", help="measure start-up, edit->repaint, peak memory and model speed on this "
                                         "machine, each against its baseline (trinity_desktop/bench.py)")
    bench.add_argument("--json", action="store_true", help="print machine-readable JSON")
    bench.add_argument("--starts", type=whole_number(1, 1000), default=5, help="start-ups of each window (default 5)")
    bench.add_argument("--edits", type=whole_number(1, 100_000), default=40, help="edits of each window (default 40)")
    bench.add_argument("--welcome", action="store_true", help="only the welcome page's cost against first paint: "
                       "--starts pairs of starts with and without it, alternating (trinity_desktop/bench_welcome.py)")


def _add_calc(sub) -> None:
    calc = sub.add_parser("calc", help="compute one scenario (train, infer) or edge-cloud split points (split)")
    calc = calc.add_subparsers(dest="calc", required=True, parser_class=Parser)
    for add, _run in CALC_COMMANDS.values():
        add(calc)


def _run_calc(args):
    return CALC_COMMANDS[args.calc][1](args)


def _run_calc_train(args):
    sc = cli_validate.with_efficiency(train_scenario(args), args)
    return cli_validate.extend_report(train_report(sc), sc, args), cli_validate.wrap_text(_text_train)


def _run_calc_infer(args):
    sc = cli_validate.with_efficiency(infer_scenario(args), args)
    rep = cli_validate.extend_report(infer_report(sc, args.kv_placement), sc, args)
    rep.update(cli_load.load_json(sc))  # load and latency targets (#23)
    return rep, cli_load.load_text(cli_validate.wrap_text(_text_infer))


def _run_calc_split(args):
    rep = split_report(args)
    summary = split_summary(args.model, args.device, args.network, args.objective)
    return rep, lambda _rep: summary


def _run_plan(args):
    return run_plan(args, *_model_and_hardware(args))


def _run_presets(args):
    return presets_report(), _text_presets


def _run_bench(args) -> int:
    from trinity_desktop import app
    from trinity_desktop.bench import run_bench

    if app.no_display():  # its child windows would abort in Qt: one line and exit 2, as the window does
        app.say(app.no_display())
        return 2

    if args.welcome:
        from trinity_desktop.bench_welcome import run_welcome_bench

        return run_welcome_bench(args.json, args.starts)
    return run_bench(args.json, args.starts, args.edits)


def _run_validate(args):
    return cli_validate.validate_report(args), cli_validate.validate_text


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description="Trinity Desktop: compute, bandwidth and memory of AI workloads.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for add, _run in COMMANDS.values():
        add(sub)
    return parser


def _single(items: list, path: str, what: str):
    if len(items) != 1:
        raise CliError(f"{path}: holds {len(items)} {what} definitions; give a file with exactly one")
    return items[0]


def _model_and_hardware(args):
    for option, path in (("--model-file", args.model_file), ("--hardware-file", args.hardware_file)):
        if path is not None and not path.strip():
            raise CliError(f"{option} {path!r}: give the path of a file (TOML; config.json for --model-file)")
    model = (_single(load_model_file(args.model_file), args.model_file, "model") if args.model_file is not None
             else find(model_presets(), args.model, "--model"))
    hardware = (_single(load_hardware_file(args.hardware_file), args.hardware_file, "hardware")
                if args.hardware_file is not None else find(hardware_presets(), args.hardware, "--hardware"))
    return model, hardware


def train_scenario(args) -> Scenario:
    model, hardware = _model_and_hardware(args)
    model_parallel = args.tp * args.pp * args.cp
    if args.dp is not None and args.dp * model_parallel != args.gpus:
        raise CliError(f"--dp {args.dp} x tp x pp x cp = {args.dp * model_parallel} differs from --gpus {args.gpus}")
    if args.tp_comm_overlap and not args.sequence_parallel:
        raise CliError("--tp-comm-overlap needs --sequence-parallel (TP communication hides behind the GEMMs only "
                       "under sequence parallelism)")
    dp = args.gpus // model_parallel if args.gpus % model_parallel == 0 else 1
    sc = Scenario(hardware=hardware, model=model, kind="train", gpus=args.gpus,
                  gpus_per_node=args.gpus_per_node or hardware.gpus_per_node_default,
                  tp=args.tp, pp=args.pp, cp=args.cp, ep=args.ep, virtual_stages=args.virtual_stages,
                  first_stage_layers=args.first_stage_layers, last_stage_layers=args.last_stage_layers,
                  sequence_parallel=args.sequence_parallel, offload=args.offload,
                  zero=args.zero, recompute=args.recompute, flash_attention=args.flash_attention,
                  activation_recipe=args.activation_recipe,
                  micro_batch=args.micro_batch, global_batch=args.global_batch or args.micro_batch * dp,
                  seq_len=args.seq_len, precision=args.precision, optimizer=args.optimizer,
                  **comm_overlap_fields(args),
                  attention_kernel=args.attention_kernel,  # attention kernel (#22)
                  gpu_hour_price=args.gpu_hour_price, lora_rank=args.lora_rank,
                  lora_targets=args.lora_targets, qlora=args.qlora)
    return apply_techniques(sc, args.technique)


def infer_scenario(args) -> Scenario:
    model, hardware = _model_and_hardware(args)
    if args.context is not None:
        if args.context <= args.gen_len:
            raise CliError(f"--context {args.context} must exceed --gen-len {args.gen_len} "
                           "(context = prompt + generated tokens)")
        prompt_len = args.context - args.gen_len
    else:
        prompt_len = args.prompt_len if args.prompt_len is not None else LIMITS["prompt_len"].default
    batch = args.sessions or args.batch or LIMITS["batch"].default
    sc = Scenario(hardware=hardware, model=model, kind="decode", gpus=args.gpus, pp=args.pp,
                  gpus_per_node=args.gpus_per_node or hardware.gpus_per_node_default,
                  batch=batch, prompt_len=prompt_len, gen_len=args.gen_len,
                  weight_dtype=args.weight_dtype, kv_dtype=args.kv_dtype, kv_policy=args.kv_policy,
                  kv_window=args.kv_window, kv_sinks=args.kv_sinks, kv_offload_fraction=args.kv_offload_fraction,
                  **speculative_fields(args),  # speculative decoding (#23)
                  **cli_load.load_fields(args),  # load and latency targets (#23)
                  # MoE serving (#23)
                  inference_ep=args.inference_ep, attention_dp=args.attention_dp,
                  redundant_experts=args.redundant_experts, moe_fp8_dispatch=args.moe_fp8_dispatch,
                  moe_node_limit=args.moe_node_limit,
                  gpu_hour_price=args.gpu_hour_price,
                  **disaggregation_fields(args),  # disaggregated prefill and decode (#23)
                  decode_attention_kernel=args.decode_attention_kernel)  # decode attention kernel (#22)
    return apply_techniques(sc, args.technique)


def apply_techniques(sc: Scenario, names: Sequence[str]) -> Scenario:
    """`sc` with the catalogue techniques `names` (keys or names, case-insensitive) applied in order."""
    catalogue = load_techniques()
    for name in names:
        try:
            t = find(catalogue, name, "--technique")
        except ValidationError as exc:
            raise CliError(f"--technique {shown(name)}: no such technique; {exc.allowed}") from None
        ok, why = applicable(t, sc)
        if not ok:
            raise CliError(f"--technique {t.key!r} does not apply: {why}")
        sc = apply_technique(t, sc)
    return sc


def _pressure(r) -> dict:
    """The pressures as the heatmap shows them: share of each resource's limit used (model/formulas/pressure.py)."""
    return {"compute": r.pressure.compute, "bandwidth": r.pressure.bandwidth, "memory": r.pressure.memory}


def _triangle_weights(r) -> dict:
    """Where the triangle places the workload: the pressures clipped to [0, 1] and normalised to sum to 1."""
    c, b, m = barycentric(*r.pressure.as_tuple())
    return {"compute": float(c), "bandwidth": float(b), "memory": float(m)}


def _fp8_mfu(rep: dict) -> str:
    """The FP8-peak MFU beside the BF16 one, for FP8 runs (the only format whose two figures differ)."""
    return "" if rep["mfu_format_peak"] == rep["mfu"] else f" ({rep['mfu_format_peak'] * 100:.1f}% of the FP8 peak)"


def train_report(sc: Scenario) -> dict:
    r = evaluate(sc)
    return {
        "model": sc.model.name, "hardware": sc.hardware.name, "gpus": sc.gpus,
        "layout": {"tp": sc.tp, "pp": sc.pp, "cp": sc.cp, "ep": sc.ep, "dp": sc.dp,
                   "virtual_stages": sc.virtual_stages, "micro_batches": sc.micro_batches},
        "params_total": r.params_total, "params_active": r.params_active,
        "memory_per_gpu_bytes": {**r.memory, "total": r.memory_total},
        "hbm_capacity_bytes": r.capacity, "fits": r.fits,
        "flops_per_step": r.train["hardware_flops"], "model_flops_per_step": r.train["model_flops"],
        "time_per_step_s": {**r.time, "total": r.time_total},
        # MFU against the BF16 peak (FP8 runs included, NVIDIA's and Meta's convention), the GEMM format's beside it
        "mfu": r.train["mfu"], "mfu_peak": "bf16" if sc.precision == "fp8" else sc.precision,
        "mfu_format_peak": r.train["mfu_format_peak"], "tokens_per_s": r.train["tokens_per_s"],
        # tokens per step vs the DeepSeek LLM law B_opt = 0.292 C^0.3271 at a Chinchilla run (C = 6 N x 20 N)
        "batch_tokens": (batch := scenario_batch(sc.global_batch, sc.seq_len, r.params_active)).batch_tokens,
        "batch_tokens_optimal": batch.optimal_tokens,
        # idle share of the pipeline phase ((p-1)/(m+p-1) for 1F1B), and of the whole step
        "pipeline_bubble_fraction": r.train["pipeline_bubble_fraction"],
        "pipeline_bubble_share_of_step": r.time["pipeline_bubble"] / r.time_total if r.time_total > 0 else 0.0,
        "bytes_by_link_per_gpu": dict(r.bytes_by_link), "pressure": _pressure(r), "triangle_weights": _triangle_weights(r),
        "bottleneck": r.bottleneck, "techniques_applied": list(sc.techniques),
        "roofline": roofline_json(sc), "stages": stages_json(sc, r), "notes": list(r.notes),
        **cost_and_lora_json(r),  # cost and power, LoRA (#23): only when asked for
    }


def infer_report(sc: Scenario, placement: str = "spill") -> dict:
    decode = evaluate(sc)
    prefill = evaluate(sc.replace(kind="prefill"))
    i = decode.infer
    return {
        "model": sc.model.name, "hardware": sc.hardware.name, "gpus": sc.gpus, "tp": sc.inference_tp, "pp": sc.pp,
        "params_total": decode.params_total, "params_active": decode.params_active,
        "weights_bytes": i["weights_bytes"], "kv_cache_bytes_per_token": i["kv_bytes_per_token"],
        "kv_cache_bytes": i["kv_bytes"], "memory_per_gpu_bytes": {**decode.memory, "total": decode.memory_total},
        "memory_total_bytes": decode.memory_total * sc.gpus, "hbm_capacity_bytes": decode.capacity,
        "fits": decode.fits, "prefill_s": i["prefill_s"], "time_per_output_token_s": i["time_per_output_token_s"],
        "tokens_per_s": i["tokens_per_s"], "request_s": request_time(sc, placement),  # where the stages end
        "context_tokens": sc.prompt_len + sc.gen_len, "sessions": sc.batch,
        "kv_policy": {"policy": sc.kv_policy, "window": sc.kv_window, "sinks": sc.kv_sinks},
        **residency_json(sc, placement),
        "pressure": _pressure(decode), "triangle_weights": _triangle_weights(decode), "bottleneck": decode.bottleneck,
        "prefill_pressure": _pressure(prefill), "prefill_triangle_weights": _triangle_weights(prefill),
        "prefill_bottleneck": prefill.bottleneck, "techniques_applied": list(sc.techniques),
        "roofline": roofline_json(sc), "stages": stages_json(sc, decode, kv_placement=placement), "notes": list(decode.notes),
        **({"speculative": decode.speculative.as_dict()} if decode.speculative else {}),  # speculative decoding (#23)
        **moe_serving_json(sc),  # MoE serving (#23): a `moe_serving` object where EP is on
        **cost_and_lora_json(decode),  # cost and power (#23): only with --gpu-hour-price
        # disaggregated prefill and decode (#23): only where the pools are set
        **({"disaggregated": decode.disaggregated.as_json()} if decode.disaggregated else {}),
    }


def moe_serving_json(sc: Scenario) -> dict:
    """{"moe_serving": ...} where EP serving is on (model/views/moe_serving_summary.py), else {}."""
    summary = moe_serving(sc)
    return {"moe_serving": summary.as_json()} if summary else {}


def split_report(args) -> dict:
    _split_lookup(args)
    return split_json(args.model, args.device, args.network, args.objective)


def _split_lookup(args) -> None:
    """Check the three names first, so that an error names the option (--model, --device, --network)."""
    models = profile_keys()
    if args.model.lower() not in {m.lower() for m in models} and \
            args.model.lower() not in {m.name.lower() for m in model_presets().values()}:
        raise CliError(f"--model {shown(args.model)}: "
                       f"{unknown_key('layer profile', args.model, models, 'trinity-desktop presets')}")
    find(edge_devices(), args.device, "--device")
    find(networks(), args.network, "--network")


def presets_report() -> dict:
    return {
        "hardware": [{"key": h.key, "name": h.name, "peak_bf16_flops": h.peak("bf16"), "hbm_bytes": h.hbm_bytes,
                      "hbm_bw": h.hbm_bw, "ridge_flop_per_byte": h.ridge_point("bf16"),
                      "scaleup_bw": h.scaleup_bw, "scaleout_bw": h.scaleout_bw}
                     for h in hardware_presets().values()],
        "models": [{"key": m.key, "name": m.name, "params_total": m.params_total(), "params_active": m.params_active(),
                    "layers": m.layers, "hidden": m.hidden, "heads": m.heads, "kv_heads": m.kv_heads,
                    "attention": m.attention} for m in model_presets().values()],
        "edge_devices": [{"key": d.key, "name": d.name, "kind": d.kind, "peak_bf16_flops": d.hardware.peak("bf16"),
                          "memory_bytes": d.hardware.hbm_bytes, "memory_bw": d.hardware.hbm_bw,
                          "power_w": d.power_w} for d in edge_devices().values()],
        "networks": [{"key": n.key, "name": n.name, "uplink_bytes_per_s": n.uplink_bytes_per_s, "rtt_s": n.rtt_s,
                      "radio_power_w": n.radio_power_w} for n in networks().values()],
        "split_models": profile_keys(),
    }


def _gb(x: float) -> str:
    return f"{x / 1e9:,.2f} GB"


def _text_train(rep: dict) -> str:
    mem, t = rep["memory_per_gpu_bytes"], rep["time_per_step_s"]
    lines = [f"{rep['model']} on {rep['gpus']} x {rep['hardware']}  (TP{rep['layout']['tp']} PP{rep['layout']['pp']} "
             f"CP{rep['layout']['cp']} EP{rep['layout']['ep']} DP{rep['layout']['dp']}"
             + (f" v{rep['layout']['virtual_stages']}" if rep['layout']['virtual_stages'] > 1 else "") + ", "
             f"{rep['layout']['micro_batches']} micro-batches)",
             f"  parameters        {rep['params_total'] / 1e9:,.2f} B",
             "  memory per GPU    " + ", ".join(f"{k} {_gb(v)}" for k, v in mem.items()),
             f"  HBM capacity      {_gb(rep['hbm_capacity_bytes'])}  ->  {'fits' if rep['fits'] else 'DOES NOT FIT'}",
             "  step time         " + ", ".join(f"{k} {v:.3f} s" for k, v in t.items()),
             f"  MFU {rep['mfu'] * 100:.1f}% of the {rep['mfu_peak'].upper()} peak{_fp8_mfu(rep)}"
             f"   tokens/s {rep['tokens_per_s']:,.0f}   bottleneck: {rep['bottleneck']}",
             _text_pressure(rep)]
    return "\n".join(_text_techniques(rep) + lines + cost_text(rep) + [f"  note: {n}" for n in rep["notes"]])


def _text_pressure(rep: dict) -> str:
    p, w = rep["pressure"], rep["triangle_weights"]
    return ("  pressure          " + ", ".join(f"{k} {p[k]:.2f}" for k in p) + "  (1.0 = at its limit)\n"
            "  triangle weights  " + ", ".join(f"{k} {w[k]:.2f}" for k in w) + "  (pressure normalised to sum 1)")


def _text_techniques(rep: dict) -> list[str]:
    return ["techniques: " + ", ".join(rep["techniques_applied"])] if rep["techniques_applied"] else []


def _text_infer(rep: dict) -> str:
    lines = [f"{rep['model']} on {rep['gpus']} x {rep['hardware']}  (TP{rep['tp']} PP{rep['pp']})",
             f"  weights           {_gb(rep['weights_bytes'])}",
             f"  KV cache          {rep['kv_cache_bytes_per_token']:,.0f} B/token, {_gb(rep['kv_cache_bytes'])} in all",
             f"  memory per GPU    {_gb(rep['memory_per_gpu_bytes']['total'])} of {_gb(rep['hbm_capacity_bytes'])}"
             f"  ->  {'fits' if rep['fits'] else 'DOES NOT FIT'}",
             f"  prefill (TTFT)    {rep['prefill_s'] * 1e3:,.1f} ms",
             f"  per output token  {rep['time_per_output_token_s'] * 1e3:,.2f} ms   ({rep['tokens_per_s']:,.0f} tokens/s)",
             f"  bottleneck        decode: {rep['bottleneck']}, prefill: {rep['prefill_bottleneck']}",
             _text_pressure(rep),
             f"  context           {rep['context_tokens']:,} tokens x {rep['sessions']:,} sessions, "
             f"KV policy {rep['kv_policy']['policy']}",
             "  KV per GPU        " + ", ".join(f"{k} {_gb(v)}" for k, v in rep["kv_residency_bytes"].items())
             + f"  ->  {rep['effective_time_per_output_token_s'] * 1e3:,.2f} ms per output token"]
    if "disaggregated" in rep:  # disaggregated prefill and decode (#23)
        d = rep["disaggregated"]
        lines.append(f"  pools             prefill {d['prefill_pool']['gpus']} + decode {d['decode_pool']['gpus']} GPUs: "
                     f"KV {_gb(d['kv_transfer_bytes'])} per request in {d['kv_transfer_s'] * 1e3:,.2f} ms over "
                     f"{d['kv_transfer_link']}; {d['requests_per_s']:,.2f} requests/s ({d['binding']} binds), "
                     f"aggregated {d['aggregated']['requests_per_s']:,.2f}"
                     + "".join(f"; {p} pool DOES NOT FIT" for p in ("prefill", "decode") if not d[f"{p}_pool"]["fits"]))
    lines += speculative_text(rep)  # speculative decoding (#23)
    lines += _text_moe_serving(rep)
    return "\n".join(_text_techniques(rep) + lines + cost_text(rep) + [f"  note: {n}" for n in rep["notes"]])


def _text_moe_serving(rep: dict) -> list[str]:
    """MoE serving (#23): the EP layout and its all-to-all, where EP is on."""
    m = rep.get("moe_serving")
    if not m:
        return []
    return [f"  expert parallel   EP{m['ep']}, attention TP{m['attention_tp']} x DP{m['attention_dp']}, "
            f"{m['experts_per_gpu']:g} routed experts per GPU ({_gb(m['expert_weights_per_gpu_bytes'])})",
            f"  EP all-to-all     {m['all_to_all_per_decode_step_s'] * 1e3:,.2f} ms per decode step, "
            f"{m['all_to_all_prefill_s'] * 1e3:,.1f} ms in prefill ({m['dispatch_format']} dispatch, bf16 combine)"]


def _text_presets(rep: dict) -> str:
    lines = ["Hardware:"]
    lines += [f"  {h['key']:18s} {h['name']:45s} {h['peak_bf16_flops'] / 1e12:8.1f} TFLOP/s bf16  "
              f"{h['hbm_bytes'] / 1e9:6.0f} GB  {h['hbm_bw'] / 1e12:5.2f} TB/s" for h in rep["hardware"]]
    lines.append("Models:")
    lines += [f"  {m['key']:18s} {m['name']:28s} {m['params_total'] / 1e9:9.2f} B params" for m in rep["models"]]
    lines.append("Edge devices (calc split --device):")
    lines += [f"  {d['key']:24s} {d['name']:55s} {d['peak_bf16_flops'] / 1e12:6.2f} TFLOP/s  {d['power_w']:g} W"
              for d in rep["edge_devices"]]
    lines.append("Networks (calc split --network):")
    lines += [f"  {n['key']:10s} {n['name']:24s} uplink {n['uplink_bytes_per_s'] * 8 / 1e6:8.1f} Mbit/s  "
              f"RTT {n['rtt_s'] * 1e3:5.0f} ms" for n in rep["networks"]]
    lines.append("Split models (calc split --model): " + ", ".join(rep["split_models"]))
    return "\n".join(lines)


# The subcommands: name -> (adds its parser, runs it and returns (report, text formatter)). A new subcommand is
# one row here and, when it is more than a few lines, a module of its own that imports cli_options (never cli).
CALC_COMMANDS = {
    "train": (add_calc_train, _run_calc_train),
    "infer": (add_calc_infer, _run_calc_infer),
    "split": (_add_calc_split, _run_calc_split),
    "retrieval": (lambda calc: add_retrieval_parser(calc, positive_int), lambda args: (retrieval_report(args),
                                                                                       retrieval_text)),
}
COMMANDS = {
    "calc": (_add_calc, _run_calc),
    "plan": (lambda sub: add_plan_parser(sub, Parser), _run_plan),
    "validate": (cli_validate.add_validate_parser, _run_validate),
    "claims": (cli_claims.add_claims_parser, lambda args: (cli_claims.claims_report(args), cli_claims.claims_text)),
    "presets": (_add_presets, _run_presets),
    "bench": (_add_bench, _run_bench),
}


def run_cli(argv: Sequence[str]) -> int:
    args = None
    try:
        args = build_parser().parse_args(list(argv))
        out = COMMANDS[args.command][1](args)
        if isinstance(out, int):  # a command that printed its own report (bench): its exit status
            return out
        rep, text = out
    except CliError as exc:
        print_refusal(str(exc), prefix=f"{PROG}: error: ")
        return 2
    except ValidationError as exc:
        print_refusal(option_message(exc, args), prefix=f"{PROG}: error: ")
        return 2
    return write_report(json.dumps(rep, indent=2) if args.json else text(rep))
