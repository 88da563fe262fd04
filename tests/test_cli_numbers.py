"""The one guard for numbers (model/base/ranges.py): every number that enters the model, from the command line,
a TOML preset or user file, a session file or the calibrated efficiency set, is refused before any arithmetic
when it is not finite, outside its physical range, or too large for float64/int64, with one line under 200
characters that names the field and its range and shows a long value shortened. Each case is a reproducer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from trinity_desktop import session_file
from trinity_desktop.cli import run_cli
from trinity_desktop.defaults import default_scenario
from trinity_desktop.model.base.errors import shown
from trinity_desktop.model.base.ranges import SCENARIO_LIMITS

HUGE = "1" + "0" * 399  # 400 digits: float() overflows, a C long overflows
MODEL_HW = ["--model", "llama-3-8b", "--hardware", "h100-sxm"]


def refusal(capsys, *argv) -> str:
    assert run_cli(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and len(err) < 200, err
    return err


def test_a_long_value_is_shown_shortened():
    assert shown(int(HUGE)) == "1000…000 (400 digits)"
    assert shown(-int(HUGE)) == "-1000…000 (400 digits)"
    assert len(shown("x" * 100_000)) < 40 and len(shown(1.2345678901234567e300)) <= 20
    assert shown(16777217.0) == "16777217" and shown(12345678901234567890) == "12345678901234567890"


@pytest.mark.parametrize("argv, option", [
    (["plan", "train", *MODEL_HW, "--gpus", "8", "--global-batch", "8", "--seq-len", "9223372036854775808"],
     "--seq-len"),
    (["calc", "train", *MODEL_HW, "--seq-len", HUGE], "--seq-len"),
    (["calc", "train", *MODEL_HW, "--tp", "-" + HUGE], "--tp"),
    (["calc", "infer", *MODEL_HW, "--kv-offload-fraction", "nan"], "--kv-offload-fraction"),
    (["calc", "infer", *MODEL_HW, "--kv-window", "1e3"], "--kv-window"),
    (["plan", "infer", *MODEL_HW, "--gpus", "8", "--prompt-len", HUGE, "--gen-len", "8"], "--prompt-len"),
    (["plan", "train", *MODEL_HW, "--gpus", "8", "--global-batch", "8", "--seq-len", "8", "--top", HUGE], "--top"),
    (["bench", "--starts", HUGE], "--starts"),
    (["validate", "--samples", HUGE], "--samples"),
    (["calc", "train", *MODEL_HW, "--samples", HUGE], "--samples"),
])
def test_a_number_out_of_range_on_the_command_line_is_one_line(argv, option, capsys):
    err = refusal(capsys, *argv)
    assert option in err
    assert HUGE not in err


def test_the_cli_range_is_the_tables_range(capsys):
    top = SCENARIO_LIMITS["seq_len"].highest
    err = refusal(capsys, "calc", "train", *MODEL_HW, "--seq-len", str(top + 1))
    assert f"--seq-len {top + 1} is not allowed" in err and f"to {top}" in err


def test_a_huge_global_batch_is_refused_before_the_planner_enumerates_its_divisors(capsys):
    t0 = time.perf_counter()
    err = refusal(capsys, "plan", "train", *MODEL_HW, "--gpus", "8", "--global-batch", "1" + "0" * 18,
                  "--seq-len", "4096")
    assert time.perf_counter() - t0 < 5.0
    assert "--global-batch" in err and f"to {SCENARIO_LIMITS['global_batch'].highest}" in err


@pytest.mark.parametrize("key, text", [("hbm_bytes", HUGE), ("scaleup_bw", HUGE), ("hbm_bw", "1e999"),
                                       ("peak_bf16", "nan"), ("host_link_bw", "-" + HUGE)])
def test_a_hardware_file_with_a_huge_value_is_one_line(key, text, tmp_path, capsys):
    values = {"hbm_bytes": "8e10", "hbm_bw": "3e12", "peak_bf16": "1e15", key: text}
    path = tmp_path / "hw.toml"
    path.write_text('key = "x"\nname = "x"\n' + "".join(f"{k} = {v}\n" for k, v in values.items()))
    err = refusal(capsys, "calc", "train", "--model", "llama-3-8b", "--hardware-file", str(path))
    assert key in err


def test_a_model_file_with_a_huge_value_or_an_unknown_key_is_one_line(tmp_path, capsys):
    base = 'name = "m"\nlayers = 32\nhidden = 4096\nheads = 32\nvocab = 32000\n'
    path = tmp_path / "m.toml"
    path.write_text(base + f"params_published = {HUGE}\n")
    assert "1000…000 (400 digits)" in refusal(capsys, "calc", "train", "--model-file", str(path), "--hardware",
                                              "h100-sxm")
    path.write_text(base + "moe_ffn_hiddn = 3\n")
    assert "did you mean moe_ffn_hidden" in refusal(capsys, "calc", "train", "--model-file", str(path),
                                                    "--hardware", "h100-sxm")


@pytest.mark.parametrize("where, key, value", [("hardware", "hbm_bytes", int(HUGE)), (None, "gpus", int(HUGE)),
                                               (None, "kv_heavy_ratio", int(HUGE)), (None, "x" * 5000, 1)])
def test_a_session_with_a_huge_number_is_refused_in_one_line(where, key, value):
    doc = session_file.to_document(default_scenario())
    (doc["scenario"][where] if where else doc["scenario"])[key] = value
    with pytest.raises(session_file.SessionFileError) as err:
        session_file.loads(json.dumps(doc))
    assert len(str(err.value)) < 200 and "\n" not in str(err.value)


def test_screenshot_of_a_session_with_a_huge_hbm_capacity_exits_2_in_one_line(tmp_path):
    doc = session_file.to_document(default_scenario())
    doc["scenario"]["hardware"]["hbm_bytes"] = int(HUGE)
    path = tmp_path / "huge.trinity.json"
    path.write_text(json.dumps(doc))
    out = subprocess.run([sys.executable, "-m", "trinity_desktop", str(path), "--screenshot", str(tmp_path / "x.png")],
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    errors = [line for line in out.stderr.splitlines() if "error" in line]
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(errors) == 1 and "hbm_bytes" in errors[0] and len(errors[0]) < 200


GOOD_SET = ('[[assumption]]\nname = "compute_efficiency"\nlow = 0.3\nlikely = 0.45\nhigh = 0.6\n'
            '[[assumption]]\nname = "hbm_efficiency"\nlow = 0.6\nlikely = 0.8\nhigh = 0.9\n')


@pytest.mark.parametrize("text", [
    GOOD_SET.replace("likely = 0.45", f"likely = {HUGE}"), GOOD_SET.replace("low = 0.3", "low = nan"),
    GOOD_SET.replace("low = 0.3", "low = 0"), GOOD_SET.replace("high = 0.6", 'high = "x"'),
    GOOD_SET.replace('name = "hbm_efficiency"', "name = 3"), GOOD_SET.replace("[[assumption]]", "assumption = 3", 1),
    GOOD_SET.replace("likely = 0.45\n", ""), GOOD_SET[:40], "\x00\xff garbage", "[[assumption]]\n" * 3,
])
def test_a_damaged_calibrated_set_is_refused_in_one_line(text, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRINITY_DESKTOP_HOME", str(tmp_path))
    (tmp_path / "calibrated_assumptions.toml").write_text(text, encoding="utf-8", errors="surrogateescape")
    refusal(capsys, "calc", "train", *MODEL_HW, "--efficiency", "calibrated")


def test_the_calibrated_set_is_read_with_the_size_cap(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRINITY_DESKTOP_HOME", str(tmp_path))
    (tmp_path / "calibrated_assumptions.toml").write_text(GOOD_SET + "#" * 2_000_000)
    assert "limit" in refusal(capsys, "calc", "train", *MODEL_HW, "--efficiency", "calibrated")


def test_scenario_and_cli_defaults_come_from_the_one_table():
    import dataclasses

    from trinity_desktop.cli import build_parser
    from trinity_desktop.model import Scenario
    from trinity_desktop.model.base.ranges import INFERENCE_DEFAULTS

    defaults = {f.name: f.default for f in dataclasses.fields(Scenario)}
    assert {name: defaults[name] for name in SCENARIO_LIMITS} == {n: v.default for n, v in SCENARIO_LIMITS.items()}
    train = build_parser().parse_args(["calc", "train", *MODEL_HW])
    infer = build_parser().parse_args(["calc", "infer", *MODEL_HW])
    for name in ("gpus", "tp", "pp", "cp", "ep", "virtual_stages", "zero", "micro_batch", "seq_len"):
        assert getattr(train, name) == SCENARIO_LIMITS[name].default
    for name in ("pp", "gen_len", "kv_window", "kv_sinks", "kv_offload_fraction"):
        assert getattr(infer, name) == SCENARIO_LIMITS[name].default
    assert infer.gpus == INFERENCE_DEFAULTS["gpus"]
    assert (train.recompute, train.precision, infer.kv_policy) == (defaults["recompute"], defaults["precision"],
                                                                   defaults["kv_policy"])
