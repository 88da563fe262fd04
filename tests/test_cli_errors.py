"""The command line's error contract: bad input exits 2 with one line on stderr and no traceback.

Covers the GUI entry's options (`--scale`, unknown options) and every `calc`/`presets` subcommand with bad values
typed on the command line or put in a file (issue 16, items 14 and 15).
"""

from __future__ import annotations

import pytest

from trinity_desktop.__main__ import main


def _one_line_error(capsys, needle: str = "") -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("trinity-desktop: error:"), err
    assert "Traceback" not in err and "usage:" not in err
    assert needle in lines[0], err
    return lines[0]


def _exit_code(argv) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's exit on a bad GUI option
        return exc.code


@pytest.mark.parametrize("value", ["1e6", "20", "4.01", "nan", "inf", "-inf", "0", "-2", "0.5", "two"])
def test_screenshot_scale_out_of_range_exits_2(tmp_path, capsys, value):
    assert _exit_code(["--screenshot", str(tmp_path / "x.png"), f"--scale={value}"]) == 2
    _one_line_error(capsys, "--scale")
    assert not (tmp_path / "x.png").exists()


def test_gui_argument_error_prints_only_the_error(capsys):
    assert _exit_code(["--no-such-option"]) == 2
    _one_line_error(capsys, "--no-such-option")


# --- every subcommand: any option value a user can type ends in 0 or in one line and exit 2 -------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

WORDS = st.sampled_from(["", " ", "0", "1", "-1", "2", "3", "8", "64", "1e6", "nan", "inf", "-inf", "1.5", "abc",
                         "18446744073709551616", "9" * 5000, "16777216", "16777217", "h100-sxm", "llama-3-8b",
                         "gpt3-175b", "deepseek-v3", "tpu-v5p", "mi300x", "cxl", "host", "evict", "spill",
                         "window", "h2o", "razor", "fp8", "int4", "zero-3", "kv-offload", "cxl-memory-pool", "mla", "offload-nvme", "tensor-parallel-x2", "kv-razor", "laptop-x86-ddr5", "3g", "alexnet", "energy", "/dev/zero", "/nonexistent", "\x00"])
SUBCOMMANDS = {
    ("calc", "train"): ["--model", "--model-file", "--hardware", "--hardware-file", "--gpus", "--gpus-per-node",
                        "--tp", "--pp", "--cp", "--ep", "--dp", "--zero", "--recompute", "--micro-batch",
                        "--global-batch", "--seq-len", "--precision", "--optimizer", "--technique"],
    ("calc", "infer"): ["--model", "--model-file", "--hardware", "--hardware-file", "--gpus", "--gpus-per-node",
                        "--batch", "--sessions", "--prompt-len", "--context", "--gen-len", "--weight-dtype",
                        "--kv-dtype", "--kv-policy", "--kv-window", "--kv-sinks", "--kv-placement", "--technique"],
    ("calc", "split"): ["--model", "--device", "--network", "--objective"],
    ("presets",): ["--json"],
}
BASE = {("calc", "train"): ["--model", "llama-3-8b", "--hardware", "h100-sxm"],
        ("calc", "infer"): ["--model", "llama-3-8b", "--hardware", "h100-sxm"],
        ("calc", "split"): ["--model", "resnet-50", "--device", "jetson-orin-nano-super", "--network", "4g"],
        ("presets",): []}


@st.composite
def argument_vectors(draw):
    command = draw(st.sampled_from(sorted(SUBCOMMANDS)))
    options = draw(st.lists(st.tuples(st.sampled_from(SUBCOMMANDS[command]), WORDS), max_size=4))
    argv = [*command, *(BASE[command] if draw(st.booleans()) else [])]
    for option, value in options:
        argv += [option, value]
    return argv


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(argv=argument_vectors())
def test_every_subcommand_keeps_the_error_contract(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code in (0, 2), (argv, err)
    if code == 2:
        assert len(err.strip().splitlines()) == 1 and err.startswith("trinity-desktop: error:"), (argv, err)
    else:
        assert "Infinity" not in out and "NaN" not in out, argv
