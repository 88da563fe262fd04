"""Files a user can hand the app: one size-capped, regular-files-only reader, and one table of physical ranges
that presets, user TOML files and session files all obey (issue 16, items 15 and 16)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import subprocess
import sys
from dataclasses import fields

import pytest

from trinity_desktop import session_file as sf
from trinity_desktop.__main__ import main
from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import Architecture, Hardware, ValidationError
from trinity_desktop.model.base.files import FileRefused, read_capped
from trinity_desktop.model.base.ranges import ARCHITECTURE_RULES, HARDWARE_RULES
from trinity_desktop.model.inputs.presets import (
    PresetError,
    hardware_presets,
    load_hardware_file,
    load_model_file,
)
from trinity_desktop.model.views.split import edge_devices

HW = """key = "chip"
hbm_bytes = 8e10
hbm_bw = 3e12
peak_bf16 = 1e15
scaleup_bw = 4.5e11
host_link_bw = 6.4e10
"""
MODEL = """name = "tiny"
layers = 4
hidden = 512
heads = 8
vocab = 1000
"""
INFER_MODEL = ["calc", "infer", "--model", "llama-3-8b", "--hardware-file"]
INFER_HW = ["calc", "infer", "--hardware", "h100-sxm", "--model-file"]


def _cli_error(capsys, argv, needle: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("trinity-desktop: error:") and needle in err, err
    return err


def _write(tmp_path, text: str, name: str = "f.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# --- item 15: tracebacks where the contract is one line and exit 2 ----------------------------------------

@pytest.mark.parametrize("text, needle", [
    ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    (HW + "nvme_bw = " + "9" * 5000 + "\n", "more than 4300 digits"),
    (HW.replace("scaleup_latency_s", "x") + "scaleup_latency_s = 1e306\n", "scaleup_latency_s"),
    (HW.replace("peak_bf16 = 1e15", "peak_bf16 = 1e-320"), "peak_bf16"),
])
def test_bad_hardware_file_is_one_line(tmp_path, capsys, text, needle):
    _cli_error(capsys, [*INFER_MODEL, _write(tmp_path, text)], needle)


def test_hardware_table_with_a_name_but_no_key_is_keyed_by_its_name(tmp_path):
    [hw] = load_hardware_file(_write(tmp_path, HW.replace('key = "chip"', 'name = "My chip"')))
    assert (hw.key, hw.name) == ("My chip", "My chip")


def test_experts_beyond_64_bits_is_one_line(tmp_path, capsys):
    text = MODEL + "experts = 18446744073709551616\nexperts_per_token = 2\n"
    _cli_error(capsys, [*INFER_HW, _write(tmp_path, text)], "experts")


@pytest.mark.parametrize("option", ["--model-file", "--hardware-file"])
def test_empty_file_option_is_one_line(capsys, option):
    other = ["--hardware", "h100-sxm"] if option == "--model-file" else ["--model", "llama-3-8b"]
    _cli_error(capsys, ["calc", "train", option, "", *other], option)


def test_device_and_folder_are_refused_without_reading(tmp_path, capsys):
    _cli_error(capsys, [*INFER_MODEL, "/dev/zero"], "character device")
    _cli_error(capsys, [*INFER_MODEL, str(tmp_path)], "folder")
    with pytest.raises(FileRefused, match="not a regular file"):
        read_capped("/dev/zero", 10)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_fifo_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    out = subprocess.run([sys.executable, "-m", "trinity_desktop", *INFER_MODEL, str(fifo)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "FIFO" in out.stderr and len(out.stderr.strip().splitlines()) == 1
    with pytest.raises(sf.SessionFileError, match="FIFO"):
        sf.load(fifo)


def test_session_with_a_5000_digit_integer_is_refused(tmp_path):
    doc = json.loads(sf.dumps(default_scenario()))
    doc["scenario"]["gpus"] = "@"
    text = json.dumps(doc).replace('"@"', "7" * 5000)
    with pytest.raises(sf.SessionFileError, match="4300 digits"):
        sf.loads(text)
    path = tmp_path / "big.trinity.json"
    path.write_text(text)
    with pytest.raises(sf.SessionFileError, match="big.trinity.json: .*4300 digits"):
        sf.load(path)


def test_output_to_a_full_device_is_one_line():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        out = subprocess.run([sys.executable, "-m", "trinity_desktop", "presets", "--json"], stdout=full,
                             stderr=subprocess.PIPE, text=True, timeout=120)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == ["trinity-desktop: error: cannot write the output: "
                                               "No space left on device"]


# --- item 16: one table of physical ranges for presets, user files and sessions ----------------------------

def test_every_number_of_hardware_and_architecture_has_a_range():
    def numbers(cls):
        return {f.name for f in fields(cls) if str(f.type) in ("int", "float", "Mapping[str, float]")}
    assert numbers(Hardware) == set(HARDWARE_RULES)
    assert numbers(Architecture) == set(ARCHITECTURE_RULES)


def test_every_preset_lies_inside_the_ranges():
    hardware = [*hardware_presets().values(), *(d.hardware for d in edge_devices().values())]
    for hw in hardware:  # constructing again re-checks; a preset outside a range would raise
        assert dataclasses.replace(hw) == hw


@pytest.mark.parametrize("extra, key", [
    ("dense_layers = -100\n", "dense_layers"),
    ("dense_layers = 5\n", "dense_layers"),           # more dense layers than layers
    ("kv_lora_rank = -512\n", "kv_lora_rank"),
    ("vocab_pad = 0\n", "vocab_pad"),
    ("max_seq = 18446744073709551616\n", "max_seq"),
])
def test_impossible_model_values_are_refused(tmp_path, extra, key):
    with pytest.raises(PresetError) as info:
        load_model_file(_write(tmp_path, MODEL + extra))
    assert info.value.key == key


@pytest.mark.parametrize("name, value", [("hbm_bw", "1e308"), ("hbm_bw", "1e-300"), ("host_link_bw", "1e-306"),
                                         ("host_dram_bytes", "1e308"), ("peak_int8", "1e308")])
def test_impossible_hardware_values_are_refused_in_files_and_sessions(tmp_path, name, value):
    text = "\n".join(line for line in HW.splitlines() if not line.startswith(name + " ")) + f"\n{name} = {value}\n"
    with pytest.raises(PresetError) as info:
        load_hardware_file(_write(tmp_path, text))
    assert info.value.key == name
    # the same rule refuses the value in a session file, with the JSON path of the field
    field = {"peak_int8": "peak_flops"}.get(name, name)
    doc = json.loads(sf.dumps(default_scenario()))
    if field == "peak_flops":
        doc["scenario"]["hardware"]["peak_flops"]["int8"] = float(value)
    else:
        doc["scenario"]["hardware"][field] = float(value)
    with pytest.raises(sf.SessionFileError) as refused:
        sf.loads(json.dumps(doc))
    assert refused.value.field.startswith(f"scenario.hardware.{field}")


def test_the_model_refuses_what_the_files_refuse():
    base = hardware_presets()["h100-sxm"]
    with pytest.raises(ValidationError, match="hbm_bw"):
        dataclasses.replace(base, hbm_bw=1e308)
    with pytest.raises(ValidationError, match="gpus_per_node_default"):
        dataclasses.replace(base, gpus_per_node_default=1 << 64)


def test_json_output_never_holds_infinity(capsys):
    assert main(["presets", "--json"]) == 0
    json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))


# --- every finite, validated input gives finite, non-negative outputs --------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def hardware_in_range(draw):
    """Hardware with every number drawn log-uniformly inside its rule (or 0 where the rule allows it)."""
    base = hardware_presets()["h100-sxm"]
    changes = {}
    for name, (lo, hi, zero) in HARDWARE_RULES.items():
        if name in ("peak_flops", "gpus_per_node_default"):
            continue
        if zero and draw(st.booleans()):
            changes[name] = 0.0
        else:
            changes[name] = float(10 ** draw(st.floats(math.log10(lo), math.log10(hi))))
    peak = float(10 ** draw(st.floats(6.0, 18.0)))
    changes["peak_flops"] = {dtype: peak for dtype in ("fp32", "bf16", "fp16", "fp8")}
    return dataclasses.replace(base, **changes)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hw=hardware_in_range(), kind=st.sampled_from(["train", "prefill", "decode"]))
def test_validated_hardware_gives_finite_non_negative_results(hw, kind):
    from trinity_desktop.model import evaluate

    sc = default_scenario()
    sc = sc.replace(hardware=hw, kind=kind, gpus=1, tp=1, pp=1, cp=1, ep=1, global_batch=8)
    r = evaluate(sc)
    numbers = {**{f"memory.{k}": v for k, v in r.memory.items()}, **{f"time.{k}": v for k, v in r.time.items()},
               "memory_total": r.memory_total, "time_total": r.time_total}
    for name, value in numbers.items():
        assert math.isfinite(value) and value >= 0, (name, value)
