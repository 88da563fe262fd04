"""What every command-line module shares: the parser class, the one-line error, the argparse types and the
model/hardware options. It imports nothing of the other CLI modules, so that cli.py, cli_plan.py and
cli_validate.py (and any new subcommand's module) import it and never each other.
"""

from __future__ import annotations

import argparse
import os
import sys

from trinity_desktop.model import ValidationError

PROG = "trinity-desktop"
BROKEN_PIPE_STATUS = 141  # 128 + SIGPIPE
GPN_HELP = "devices sharing the scale-up fabric (default: the hardware's gpus_per_node_default, e.g. 4 on TPU v5p)"


class CliError(Exception):
    """A problem with the command line, reported as one line and exit status 2."""


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `error` raises CliError (argparse would print the usage and exit)."""

    def error(self, message: str):
        raise CliError(message)


def int_at_least(minimum: int):
    """An argparse type: a whole number >= minimum, with a one-line message otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} must be >= {minimum}")
        return value

    return parse


positive_int = int_at_least(1)
non_negative_int = int_at_least(0)


def fraction(text: str) -> float:
    """An argparse type: a number from 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{value} must be from 0 to 1")
    return value


def add_json_flag(p: argparse.ArgumentParser, help: str = "print machine-readable JSON") -> None:  # noqa: A002
    p.add_argument("--json", action="store_true", help=help)


def add_model_and_hardware_choice(p: argparse.ArgumentParser) -> None:
    """--model / --model-file and --hardware / --hardware-file (one of each), for `calc` and `plan`."""
    m = p.add_mutually_exclusive_group(required=True)
    m.add_argument("--model", help="model preset key or name (see `presets`)")
    m.add_argument("--model-file", help="TOML file with the model preset keys")
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
        return " + ".join(x for x in (opt("prompt_len") or "--prompt-len 2048 (default)", opt("gen_len")) if x)
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
    """Print the report; a reader that closed the pipe early (`| head`) ends the command quietly with status
    141 (128 + SIGPIPE, as Unix tools report it), with stdout pointed at /dev/null so that Python's flush
    at exit does not raise again."""
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return BROKEN_PIPE_STATUS
    return 0
