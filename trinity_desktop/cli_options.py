"""What every command-line module shares: the parser class, the one-line error, the argparse types and the
model/hardware options. It imports nothing of the other CLI modules, so that cli.py, cli_plan.py and
cli_validate.py (and any new subcommand's module) import it and never each other.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import re
import sys

from trinity_desktop.model import Scenario, ValidationError
from trinity_desktop.model.base.errors import shown
from trinity_desktop.model.base.ranges import INT64_MAX, SCENARIO_LIMITS, in_range, parse_number
from trinity_desktop.model.inputs.scenario import FP8_RECIPES  # FP8 scaling recipe (#22)

PROG = "trinity-desktop"
BROKEN_PIPE_STATUS = 0  # the reader had what it wanted (`| head`): a success, as the exit codes are 0, 1 and 2
GPN_HELP = "devices sharing the scale-up fabric (default: the hardware's gpus_per_node_default, e.g. 4 on TPU v5p)"


_SCENARIO_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Scenario)}


class CliError(Exception):
    """A problem with the command line, reported as one line and exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `error` raises CliError (argparse would print the usage and exit)."""

    def error(self, message: str):
        # "argument --seq-len: 9 is not allowed: ..." -> "--seq-len 9 is not allowed: ...", as option_message says it
        found = re.fullmatch(r"argument (--[\w-]+): (.+?) is not allowed: (.*)", message)
        raise CliError(f"{found[1]} {found[2]} is not allowed: {found[3]}" if found else _short_choices(message))


CHOICES_SHOWN = 120  # characters of "choose from ..." kept on the line; a longer list names the nearest ones


def _short_choices(message: str) -> str:
    """argparse's "invalid choice: 'x' (choose from 'a', 'b', ...)" on one short line: a list of 18 weight
    formats ran to 250 characters, so a long one gives the nearest choices and where to see them all."""
    found = re.fullmatch(r"(argument [^:]+: invalid choice: .*?) \(choose from (.*)\)", message, re.DOTALL)
    if found is None or len(found[2]) <= CHOICES_SHOWN:
        return message
    # quoted as reprs up to Python 3.12, plain from 3.13 on
    choices = re.findall(r"'([^']*)'", found[2]) or [c.strip() for c in found[2].split(",")]
    value = re.search(r"invalid choice: '(.*)'", found[1], re.DOTALL)
    near = difflib.get_close_matches(value[1][:200] if value else "", choices, n=3)
    hint = f"did you mean {', '.join(near)}?" if near else f"{len(choices)} choices: see --help"
    return f"{found[1]} ({hint})"


def whole_number(minimum: int, maximum: int = INT64_MAX):
    """An argparse type: a whole number from minimum to maximum, with a one-line message otherwise."""

    def parse(text: str) -> int:
        try:
            value = parse_number(text, whole=True)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{shown(text)} is not a whole number") from None
        if not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(f"{shown(value)} is not allowed: a whole number from {minimum:,} "
                                             f"to {maximum:,}")
        return value

    return parse


positive_int = whole_number(1)
non_negative_int = whole_number(0)


def scenario_number(name: str):
    """An argparse type for a Scenario number: parsed exactly (a 400-digit value stays an int), then checked by
    the model's one guard against its range in SCENARIO_LIMITS, before anything computes with it."""
    limit = SCENARIO_LIMITS[name]

    def parse(text: str) -> int | float:
        try:
            value = parse_number(text, limit.whole)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{shown(text)} is not a {'whole number' if limit.whole else 'number'}") from None
        if not in_range(value, limit.rule, limit.whole):
            raise argparse.ArgumentTypeError(f"{shown(value)} is not allowed: {limit.describe()}")
        return value

    return parse


def add_scenario_option(p, name: str, default: object = ..., **kwargs) -> None:
    """`--name` for the Scenario number `name`: its type and (unless `default` is given) its default from the
    one table of limits and defaults (model/base/ranges.py)."""
    p.add_argument(f"--{name.replace('_', '-')}", type=scenario_number(name),
                   default=SCENARIO_LIMITS[name].default if default is ... else default, **kwargs)


def scenario_default(name: str):
    """The Scenario dataclass's default of a non-number field (a format, a policy, a switch)."""
    return _SCENARIO_DEFAULTS[name]


# the training Scenario's overlap and MoE communication fields, one definition for `calc train` and `plan train`
COMM_OVERLAP_FIELDS = ("tp_comm_overlap", "ep_comm_overlap", "moe_fp8_dispatch", "moe_node_limit",
                       "fp8_recipe", "mtp_training")  # + the FP8 scaling recipe (#22), MTP training


def add_comm_overlap_options(p: argparse.ArgumentParser) -> None:
    """--tp-comm-overlap, --ep-comm-overlap, --moe-fp8-dispatch and --moe-node-limit (model/formulas/overlap.py,
    comms.moe_all_to_all): switches off by default, the node limit checked against its range as it is parsed."""
    p.add_argument("--tp-comm-overlap", action="store_true", default=scenario_default("tp_comm_overlap"),
                   help="hide TP communication behind the GEMMs (needs sequence parallelism; default off)")
    p.add_argument("--ep-comm-overlap", action="store_true", default=scenario_default("ep_comm_overlap"),
                   help="hide the EP all-to-all and PP sends behind the paired chunk, DualPipe-style (default off)")
    p.add_argument("--moe-fp8-dispatch", action="store_true", default=scenario_default("moe_fp8_dispatch"),
                   help="dispatch MoE tokens in FP8, combine in the activation format (DeepSeek-V3; default off)")
    add_scenario_option(p, "moe_node_limit", metavar="M", help="nodes each token may be routed to (0 = no limit; DeepSeek-V3: 4)")
    # FP8 scaling recipe (#22)
    p.add_argument("--fp8-recipe", choices=FP8_RECIPES, default=scenario_default("fp8_recipe"),
                   help="FP8 GEMM scales: tensorwise (Transformer Engine, torchao; default) or blockwise "
                        "(DeepSeek-V3's 1x128 / 128x128 scales, timed at DeepSeek's profiled rate on Hopper)")
    p.add_argument("--no-mtp", dest="mtp_training", action="store_false", default=scenario_default("mtp_training"),
                   help="train without the model's multi-token-prediction modules (DeepSeek-V3 has one; "
                        "default: as the model has them)")


def comm_overlap_fields(args) -> dict:
    """The Scenario fields of add_comm_overlap_options's options, as keyword arguments."""
    return {name: getattr(args, name) for name in COMM_OVERLAP_FIELDS}


def add_json_flag(p: argparse.ArgumentParser, help: str = "print machine-readable JSON") -> None:  # noqa: A002
    p.add_argument("--json", action="store_true", help=help)


def add_model_and_hardware_choice(p: argparse.ArgumentParser) -> None:
    """--model / --model-file and --hardware / --hardware-file (one of each), for `calc` and `plan`."""
    m = p.add_mutually_exclusive_group(required=True)
    m.add_argument("--model", help="model preset key or name (see `presets`)")
    m.add_argument("--model-file", help="TOML file with the model preset keys, or a Hugging Face config.json")
    h = p.add_mutually_exclusive_group(required=True)
    h.add_argument("--hardware", help="hardware preset key or name (see `presets`)")
    h.add_argument("--hardware-file", help="TOML file with the hardware preset keys")


def _given(args, field: str) -> str:
    """The option(s) the user typed for a Scenario field, with their values ("" when none was typed)."""
    def opt(name: str) -> str:
        value = getattr(args, name, None)
        return f"--{name.replace('_', '-')} {value}" if value is not None else ""

    if field == "prompt_len + gen_len":
        if getattr(args, "context", None) is not None:
            return opt("context")
        default = f"--prompt-len {SCENARIO_LIMITS['prompt_len'].default} (default)"
        return " + ".join(x for x in (opt("prompt_len") or default, opt("gen_len")) if x)
    if field == "prompt_len" and getattr(args, "context", None) is not None:
        return f"{opt('context')} (a prompt of {args.context - args.gen_len} tokens after --gen-len {args.gen_len})"
    if field == "batch" and getattr(args, "sessions", None) is not None:
        return opt("sessions")
    return opt(field)


def option_message(exc: ValidationError, args) -> str:
    """A model error in the words of the command line: the options the user gave, their values as typed."""
    given = _given(args, exc.field) if args is not None else ""
    if not given:
        return str(exc)
    return f"{given} is not allowed: {exc.allowed}"


def write_report(text: str) -> int:
    """Print the report; a reader that closed the pipe early (`| head`) ends the command quietly with status 0
    (it read what it wanted), with stdout pointed at /dev/null so that Python's flush at exit does not raise
    again."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return BROKEN_PIPE_STATUS
    return 0


def add_cost_option(p: argparse.ArgumentParser) -> None:
    """--gpu-hour-price (cost and power, #23; model/views/cost.py): dollars per GPU-hour, the user's own figure (no
    price is shipped); with it the JSON adds usd_per_million_tokens, kwh_per_million_tokens (at the TDP) and cost."""
    add_scenario_option(p, "gpu_hour_price", metavar="USD",
                        help="dollars per GPU-hour (default 0: no cost reported); adds usd_per_million_tokens and "
                             "kwh_per_million_tokens (board power at the preset's TDP, an upper bound)")
