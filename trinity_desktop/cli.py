"""The command line: `calc train`, `calc infer`, `presets` (human-readable or --json), and the GUI options.

A stable contract for scripts and tests. Bad arguments exit 2 with one line naming the problem.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.dtypes import KV_DTYPES, OPTIMIZER_STATE_BYTES, TRAIN_PRECISIONS, WEIGHT_DTYPES
from trinity_desktop.model.presets import (
    find,
    hardware_presets,
    load_hardware_file,
    load_model_file,
    model_presets,
)
from trinity_desktop.model.roofline import roofline_json
from trinity_desktop.model.scenario import RECOMPUTE

PROG = "trinity-desktop"


class CliError(Exception):
    """A problem with the command line, reported as one line and exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2 (argparse would print the usage too)
        raise CliError(message)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be >= 1")
    return value


def _add_model_and_hardware(p: argparse.ArgumentParser) -> None:
    m = p.add_mutually_exclusive_group(required=True)
    m.add_argument("--model", help="model preset key or name (see `presets`)")
    m.add_argument("--model-file", help="TOML file with the model preset keys")
    h = p.add_mutually_exclusive_group(required=True)
    h.add_argument("--hardware", help="hardware preset key or name (see `presets`)")
    h.add_argument("--hardware-file", help="TOML file with the hardware preset keys")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Trinity Desktop: compute, bandwidth and memory of AI workloads.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    calc = sub.add_parser("calc", help="compute one scenario").add_subparsers(dest="calc", required=True,
                                                                               parser_class=_Parser)
    train = calc.add_parser("train", help="one training step")
    _add_model_and_hardware(train)
    train.add_argument("--gpus", type=_positive_int, default=8)
    train.add_argument("--gpus-per-node", type=_positive_int, default=8)
    for name in ("tp", "pp", "cp", "ep"):
        train.add_argument(f"--{name}", type=_positive_int, default=1)
    train.add_argument("--dp", type=_positive_int, help="default: gpus / (tp x pp x cp)")
    train.add_argument("--zero", type=int, choices=(0, 1, 2, 3), default=1)
    train.add_argument("--recompute", choices=RECOMPUTE, default="selective")
    train.add_argument("--sequence-parallel", action=argparse.BooleanOptionalAction, default=True)
    train.add_argument("--flash-attention", action=argparse.BooleanOptionalAction, default=True)
    train.add_argument("--micro-batch", type=_positive_int, default=1)
    train.add_argument("--global-batch", type=_positive_int, help="sequences per step (default: micro-batch x DP)")
    train.add_argument("--seq-len", type=_positive_int, default=4096)
    train.add_argument("--precision", choices=TRAIN_PRECISIONS, default="bf16")
    train.add_argument("--optimizer", choices=tuple(OPTIMIZER_STATE_BYTES), default="adamw")

    infer = calc.add_parser("infer", help="one inference request (prefill + decode)")
    _add_model_and_hardware(infer)
    infer.add_argument("--gpus", type=_positive_int, default=1, help="tensor-parallel degree")
    infer.add_argument("--gpus-per-node", type=_positive_int, default=8)
    infer.add_argument("--batch", type=_positive_int, default=1)
    infer.add_argument("--prompt-len", type=_positive_int, default=2048)
    infer.add_argument("--gen-len", type=_positive_int, default=512)
    infer.add_argument("--weight-dtype", choices=WEIGHT_DTYPES, default="bf16")
    infer.add_argument("--kv-dtype", choices=KV_DTYPES, default="bf16")

    presets = sub.add_parser("presets", help="list hardware and model presets")
    presets.add_argument("--json", action="store_true")
    return parser


def _single(items: list, path: str, what: str):
    if len(items) != 1:
        raise CliError(f"{path}: holds {len(items)} {what} definitions; give a file with exactly one")
    return items[0]


def _model_and_hardware(args):
    model = (_single(load_model_file(args.model_file), args.model_file, "model") if args.model_file
             else find(model_presets(), args.model, "--model"))
    hardware = (_single(load_hardware_file(args.hardware_file), args.hardware_file, "hardware") if args.hardware_file
                else find(hardware_presets(), args.hardware, "--hardware"))
    return model, hardware


def train_scenario(args) -> Scenario:
    model, hardware = _model_and_hardware(args)
    model_parallel = args.tp * args.pp * args.cp
    if args.dp is not None and args.dp * model_parallel != args.gpus:
        raise CliError(f"--dp {args.dp} x tp x pp x cp = {args.dp * model_parallel} differs from --gpus {args.gpus}")
    dp = args.gpus // model_parallel if args.gpus % model_parallel == 0 else 1
    return Scenario(hardware=hardware, model=model, kind="train", gpus=args.gpus, gpus_per_node=args.gpus_per_node,
                    tp=args.tp, pp=args.pp, cp=args.cp, ep=args.ep, sequence_parallel=args.sequence_parallel,
                    zero=args.zero, recompute=args.recompute, flash_attention=args.flash_attention,
                    micro_batch=args.micro_batch, global_batch=args.global_batch or args.micro_batch * dp,
                    seq_len=args.seq_len, precision=args.precision, optimizer=args.optimizer)


def infer_scenario(args) -> Scenario:
    model, hardware = _model_and_hardware(args)
    return Scenario(hardware=hardware, model=model, kind="decode", gpus=args.gpus, gpus_per_node=args.gpus_per_node,
                    batch=args.batch, prompt_len=args.prompt_len, gen_len=args.gen_len,
                    weight_dtype=args.weight_dtype, kv_dtype=args.kv_dtype)


def _pressure(r) -> dict:
    return {"compute": r.pressure.compute, "bandwidth": r.pressure.bandwidth, "memory": r.pressure.memory}


def train_report(sc: Scenario) -> dict:
    r = evaluate(sc)
    return {
        "model": sc.model.name, "hardware": sc.hardware.name, "gpus": sc.gpus,
        "layout": {"tp": sc.tp, "pp": sc.pp, "cp": sc.cp, "ep": sc.ep, "dp": sc.dp,
                   "micro_batches": sc.micro_batches},
        "params_total": r.params_total, "params_active": r.params_active,
        "memory_per_gpu_bytes": {**r.memory, "total": r.memory_total},
        "hbm_capacity_bytes": r.capacity, "fits": r.fits,
        "flops_per_step": r.train["hardware_flops"], "model_flops_per_step": r.train["model_flops"],
        "time_per_step_s": {**r.time, "total": r.time_total},
        "mfu": r.train["mfu"], "tokens_per_s": r.train["tokens_per_s"],
        "bytes_by_link_per_gpu": dict(r.bytes_by_link), "pressure": _pressure(r), "bottleneck": r.bottleneck,
        "roofline": roofline_json(sc), "notes": list(r.notes),
    }


def infer_report(sc: Scenario) -> dict:
    decode = evaluate(sc)
    prefill = evaluate(sc.replace(kind="prefill"))
    i = decode.infer
    return {
        "model": sc.model.name, "hardware": sc.hardware.name, "gpus": sc.gpus,
        "params_total": decode.params_total, "params_active": decode.params_active,
        "weights_bytes": i["weights_bytes"], "kv_cache_bytes_per_token": i["kv_bytes_per_token"],
        "kv_cache_bytes": i["kv_bytes"], "memory_per_gpu_bytes": {**decode.memory, "total": decode.memory_total},
        "memory_total_bytes": decode.memory_total * sc.gpus, "hbm_capacity_bytes": decode.capacity,
        "fits": decode.fits, "prefill_s": i["prefill_s"], "time_per_output_token_s": i["time_per_output_token_s"],
        "tokens_per_s": i["tokens_per_s"], "request_s": i["request_s"],
        "pressure": _pressure(decode), "bottleneck": decode.bottleneck,
        "prefill_pressure": _pressure(prefill), "prefill_bottleneck": prefill.bottleneck,
        "roofline": roofline_json(sc), "notes": list(decode.notes),
    }


def presets_report() -> dict:
    return {
        "hardware": [{"key": h.key, "name": h.name, "peak_bf16_flops": h.peak("bf16"), "hbm_bytes": h.hbm_bytes,
                      "hbm_bw": h.hbm_bw, "ridge_flop_per_byte": h.ridge_point("bf16"),
                      "scaleup_bw": h.scaleup_bw, "scaleout_bw": h.scaleout_bw}
                     for h in hardware_presets().values()],
        "models": [{"key": m.key, "name": m.name, "params_total": m.params_total(), "params_active": m.params_active(),
                    "layers": m.layers, "hidden": m.hidden, "heads": m.heads, "kv_heads": m.kv_heads,
                    "attention": m.attention} for m in model_presets().values()],
    }


def _gb(x: float) -> str:
    return f"{x / 1e9:,.2f} GB"


def _text_train(rep: dict) -> str:
    mem, t = rep["memory_per_gpu_bytes"], rep["time_per_step_s"]
    lines = [f"{rep['model']} on {rep['gpus']} x {rep['hardware']}  (TP{rep['layout']['tp']} PP{rep['layout']['pp']} "
             f"CP{rep['layout']['cp']} EP{rep['layout']['ep']} DP{rep['layout']['dp']}, "
             f"{rep['layout']['micro_batches']} micro-batches)",
             f"  parameters        {rep['params_total'] / 1e9:,.2f} B",
             "  memory per GPU    " + ", ".join(f"{k} {_gb(v)}" for k, v in mem.items()),
             f"  HBM capacity      {_gb(rep['hbm_capacity_bytes'])}  ->  {'fits' if rep['fits'] else 'DOES NOT FIT'}",
             "  step time         " + ", ".join(f"{k} {v:.3f} s" for k, v in t.items()),
             f"  MFU {rep['mfu'] * 100:.1f}%   tokens/s {rep['tokens_per_s']:,.0f}   bottleneck: {rep['bottleneck']}"]
    return "\n".join(lines + [f"  note: {n}" for n in rep["notes"]])


def _text_infer(rep: dict) -> str:
    lines = [f"{rep['model']} on {rep['gpus']} x {rep['hardware']}",
             f"  weights           {_gb(rep['weights_bytes'])}",
             f"  KV cache          {rep['kv_cache_bytes_per_token']:,.0f} B/token, {_gb(rep['kv_cache_bytes'])} in all",
             f"  memory per GPU    {_gb(rep['memory_per_gpu_bytes']['total'])} of {_gb(rep['hbm_capacity_bytes'])}"
             f"  ->  {'fits' if rep['fits'] else 'DOES NOT FIT'}",
             f"  prefill (TTFT)    {rep['prefill_s'] * 1e3:,.1f} ms",
             f"  per output token  {rep['time_per_output_token_s'] * 1e3:,.2f} ms   ({rep['tokens_per_s']:,.0f} tokens/s)",
             f"  bottleneck        decode: {rep['bottleneck']}, prefill: {rep['prefill_bottleneck']}"]
    return "\n".join(lines + [f"  note: {n}" for n in rep["notes"]])


def _text_presets(rep: dict) -> str:
    lines = ["Hardware:"]
    lines += [f"  {h['key']:18s} {h['name']:45s} {h['peak_bf16_flops'] / 1e12:8.1f} TFLOP/s bf16  "
              f"{h['hbm_bytes'] / 1e9:6.0f} GB  {h['hbm_bw'] / 1e12:5.2f} TB/s" for h in rep["hardware"]]
    lines.append("Models:")
    lines += [f"  {m['key']:18s} {m['name']:28s} {m['params_total'] / 1e9:9.2f} B params" for m in rep["models"]]
    return "\n".join(lines)


def run_cli(argv: Sequence[str]) -> int:
    try:
        args = build_parser().parse_args(list(argv))
        if args.command == "presets":
            rep, text = presets_report(), _text_presets
        elif args.calc == "train":
            rep, text = train_report(train_scenario(args)), _text_train
        else:
            rep, text = infer_report(infer_scenario(args)), _text_infer
    except (CliError, ValidationError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(rep, indent=2) if args.json else text(rep))
    return 0
