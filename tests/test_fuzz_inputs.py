"""Fuzzers in the suite (issue 26, "Fuzzing"): hypothesis, seeded (derandomized) and bounded. CLI argument
vectors on every subcommand; session, deck and hardware-TOML mutations (byte flips, truncation, huge and
negative numbers, wrong types, missing fields, deep nesting, non-UTF-8, surrogates, oversized files). Each input
ends in success or a refusal: exit 0 or 2, one line, no traceback."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from trinity_desktop import session_file
from trinity_desktop.deck import example_decks
from trinity_desktop.model import ValidationError
from trinity_desktop.model.inputs.presets import load_hardware_file
from trinity_desktop.session_file import SessionFileError


def fuzz(cases: int):
    """Bounded and derandomized in the suite. A pass with inputs the suite has not seen (not in the suite):
    TRINITY_FUZZ_SEED=<n> draws from that seed, TRINITY_FUZZ_SCALE=<k> runs k times the cases."""
    chosen = os.environ.get("TRINITY_FUZZ_SEED")
    config = settings(max_examples=cases * int(os.environ.get("TRINITY_FUZZ_SCALE", "1")),
                      derandomize=chosen is None, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    if chosen is None:
        return config
    return lambda test: seed(int(chosen))(config(test))


MAX_MESSAGE = 199  # characters: a refusal is one line under 200 (trinity_desktop/refusals.py)

# --- values a user (or an attacker) might type ----------------------------------------------------------------

WILD_NUMBERS = st.sampled_from(["0", "-1", "1", "3", "8", "64", "1e308", "-1e308", "nan", "inf", "-inf", "1e-320",
                                "9" * 30, "0x10", "1_000", "", " ", "2.5", "-0", "4096", "128"])
WILD_TEXT = st.sampled_from(["h100-sxm", "llama-2-7b", "none", "bf16", "fp8", "\x00", "é", "a\nb", "x" * 300,
                             "../../etc/passwd", "/dev/zero", "-", "--json"])
OPTIONS = ["--batch", "--context", "--device", "--dp", "--efficiency", "--gen-len", "--global-batch", "--gpus",
           "--gpus-per-node", "--hardware", "--kv-dtype", "--kv-offload-fraction", "--kv-placement", "--kv-policy",
           "--kv-sinks", "--kv-window", "--max-batch", "--max-micro-batch", "--micro-batch", "--model", "--network",
           "--objective", "--offload", "--optimizer", "--pp", "--precision", "--prompt-len", "--recompute",
           "--samples", "--seq-len", "--sessions", "--technique", "--top", "--tpot-slo", "--ttft-slo",
           "--virtual-stages", "--weight-dtype", "--zero", "--tp", "--cp", "--ep"]
FLAGS = ["--json", "--uncertainty", "--flash-attention", "--sequence-parallel"]  # --fit writes the user's calibrated set
COMMANDS = [["calc", "train"], ["calc", "infer"], ["calc", "split"], ["plan", "train"], ["plan", "infer"],
            ["presets"], ["validate"], ["calc"], ["plan"]]   # the GUI's own arguments: test_fuzz_gui.py
BASE = {"calc train": ["--model", "llama-2-7b", "--hardware", "h100-sxm", "--gpus", "8"],
        "calc infer": ["--model", "llama-2-7b", "--hardware", "h100-sxm"],
        "plan train": ["--model", "llama-2-7b", "--hardware", "h100-sxm", "--gpus", "8"],
        "plan infer": ["--model", "llama-2-7b", "--hardware", "h100-sxm", "--gpus", "8"]}


@st.composite
def argvs(draw):
    command = draw(st.sampled_from(COMMANDS))
    argv = list(command)
    if draw(st.booleans()):
        argv += BASE.get(" ".join(command), [])
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.integers(0, 4)) == 0:
            argv.append(draw(st.sampled_from(FLAGS)))
        else:
            argv += [draw(st.sampled_from(OPTIONS)), draw(st.one_of(WILD_NUMBERS, WILD_TEXT))]
    return argv


def _run_main(argv: list[str]) -> tuple[int, str, str]:
    from trinity_desktop.__main__ import main

    assert argv and argv[0] in ("calc", "plan", "presets", "validate")  # never the GUI (it would wait for a user)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:   # argparse's own exits (--help, usage errors)
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return code, out.getvalue(), err.getvalue()


CLI_CASES = 150
cli_cases_run = []


@fuzz(CLI_CASES)
@given(argvs())
def test_cli_argument_vectors_exit_0_or_2_in_one_line(argv):
    code, _out, err = _run_main(argv)
    cli_cases_run.append(argv)
    assert code in (0, 2), (argv, code, err[-500:])
    assert "Traceback" not in err, (argv, err[-1500:])
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and len(lines[0]) <= MAX_MESSAGE, (argv, err[:800])


# --- session and deck mutations -----------------------------------------------------------------------------

def _deck_bytes() -> bytes:
    return min(example_decks(), key=lambda p: p.stat().st_size).read_bytes()


def _paths(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield path + (k,)
            yield from _paths(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:2]):
            yield path + (i,)
            yield from _paths(v, path + (i,))


def _set(doc, path, value):
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value


_DELETE = object()
REPLACEMENTS = [_DELETE, None, True, -1, 0, 10 ** 400, -(10 ** 30), 1e308, -1e308, 2 ** 63, "", "x" * 5000,
                "\ud800", [], {}, [[[[[]]]]], {"a": {"b": {"c": {}}}}, "nan", 0.5, 10 ** 18]


@st.composite
def mutated_sessions(draw) -> bytes:
    data = _deck_bytes()
    kind = draw(st.sampled_from(["flip", "truncate", "field", "nest", "non-utf8", "oversize", "surrogate"]))
    rng = random.Random(draw(st.integers(0, 2 ** 32 - 1)))
    if kind == "flip":
        buf = bytearray(data)
        for _ in range(draw(st.integers(1, 8))):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        return bytes(buf)
    if kind == "truncate":
        return data[:rng.randrange(len(data))]
    if kind == "nest":
        depth = draw(st.sampled_from([50, 5000, 100_000]))
        return b'{"trinity_session": 2, "scenario": ' + b"[" * depth + b"]" * depth + b"}"
    if kind == "non-utf8":
        at = rng.randrange(len(data))
        return data[:at] + b"\xff\xfe\xc3" + data[at:]
    if kind == "oversize":
        return data + b" " * (session_file.MAX_BYTES + 1 - len(data))
    doc = json.loads(data)
    paths = list(_paths(doc))
    for _ in range(draw(st.integers(1, 3))):
        path = paths[rng.randrange(len(paths))]
        try:
            _set(doc, path, "\ud800" if kind == "surrogate" else REPLACEMENTS[rng.randrange(len(REPLACEMENTS))])
        except (KeyError, IndexError, TypeError):
            pass
        paths = list(_paths(doc))
    return json.dumps(doc).encode("utf-8")


SESSION_CASES = 500


@fuzz(SESSION_CASES)
@given(mutated_sessions())
def test_session_and_deck_mutations_load_or_are_refused_in_one_line(data):
    try:
        session_file.loads(data)
    except SessionFileError as exc:
        message = str(exc)
        assert "\n" not in message and len(message) <= MAX_MESSAGE, message[:800]


# --- hardware TOML mutations --------------------------------------------------------------------------------

HARDWARE_TOML = """[[hardware]]
key = "fuzz"
name = "Fuzz device"
vendor = "Test"
kind = "datacenter-gpu"
gpus_per_node_default = 8
peak_bf16 = { value = 989.4e12, source = "nvidia-h100-datasheet", status = "V2" }
hbm_bytes = { value = 80e9, source = "nvidia-h100-datasheet", status = "V2" }
hbm_bw = 3.35e12
scaleup_bw = 450e9
host_link_bw = 63e9
"""
TOML_VALUES = ["0", "-1", "1e400", "-1e308", "nan", "inf", "1" + "0" * 400, '"text"', "true", "[]", "{}",
               '"\\ud800"', '"' + "n" * 500 + '"', "9223372036854775808", "[[[[1]]]]", "{ value = -5 }"]


@st.composite
def mutated_toml(draw) -> str:
    lines = HARDWARE_TOML.splitlines()
    rng = random.Random(draw(st.integers(0, 2 ** 32 - 1)))
    for _ in range(draw(st.integers(1, 3))):
        if len(lines) < 2:
            break
        i = rng.randrange(1, len(lines))
        action = rng.randrange(4)
        if action == 0:
            del lines[i]
        elif action == 1 and "=" in lines[i]:
            lines[i] = lines[i].split("=")[0] + "= " + TOML_VALUES[rng.randrange(len(TOML_VALUES))]
        elif action == 2:
            j = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:j] + rng.choice(["\x00", "\\", '"', "[", "=", "é"]) + lines[i][j:]
        else:
            lines = lines[:i]
    return "\n".join(lines) + "\n"


TOML_CASES = 300


@fuzz(TOML_CASES)
@given(mutated_toml())
def test_hardware_toml_mutations_load_or_are_refused_in_one_line(text):
    try:
        load_hardware_file("fuzz.toml", text)
    except ValidationError as exc:
        message = str(exc)
        assert "\n" not in message and len(message) <= MAX_MESSAGE, message[:800]


@pytest.fixture(scope="module", autouse=True)
def report_cases():
    yield
    print(f"\nfuzz cases: CLI {len(cli_cases_run)}, sessions/decks {SESSION_CASES}, hardware TOML {TOML_CASES}")
