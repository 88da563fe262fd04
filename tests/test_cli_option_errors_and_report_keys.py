"""The CLI's one-line errors that name the options the user gave,
a quiet closed pipe, the hardware's GPUs per node, named ridges and bubble share."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from trinity_desktop.__main__ import main


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def run_error(capsys, *argv) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_closed_pipe_exits_quietly():
    """`presets --json | head -c 10`: the reader is gone before the write; no BrokenPipeError traceback, exit 0."""
    r, w = os.pipe()
    os.close(r)
    proc = subprocess.run([sys.executable, "-m", "trinity_desktop", "presets", "--json"], stdout=w,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(w)
    assert proc.stderr == ""
    assert proc.returncode == 0


def test_gpus_per_node_defaults_to_the_hardware(capsys):
    """TPU v5p hosts hold 4 chips: the default must be 4, not 8 (exposed communication differs ~100x)."""
    base = ["calc", "train", "--model", "llama-3-70b", "--hardware", "tpu-v5p", "--gpus", "64", "--tp", "8",
            "--global-batch", "64", "--json"]
    default = run_json(capsys, *base)["time_per_step_s"]["communication_exposed"]
    four = run_json(capsys, *base, "--gpus-per-node", "4")["time_per_step_s"]["communication_exposed"]
    eight = run_json(capsys, *base, "--gpus-per-node", "8")["time_per_step_s"]["communication_exposed"]
    assert default == four
    assert four > 2 * eight  # TP8 leaves the 4-chip host: the tensor-parallel all-reduces cross DCN
    infer = ["calc", "infer", "--model", "llama-3-70b", "--hardware", "tpu-v5p", "--gpus", "8", "--json"]
    assert run_json(capsys, *infer)["time_per_output_token_s"] == \
        run_json(capsys, *infer, "--gpus-per-node", "4")["time_per_output_token_s"]


@pytest.mark.parametrize("argv, expected", [
    (["--prompt-len", "1", "--gen-len", "16777216"], "--prompt-len 1 + --gen-len 16777216 is not allowed"),
    (["--context", "16777300", "--gen-len", "16"], "--context 16777300 (a prompt of 16777284 tokens"),
    (["--sessions", "2000000"], "--sessions 2000000 is not allowed"),
    (["--gpus", "3"], "--gpus 3 is not allowed"),
])
def test_infer_errors_name_the_options_given(argv, expected, capsys):
    err = run_error(capsys, "calc", "infer", "--model", "llama-3-8b", "--hardware", "h100-sxm", *argv)
    assert expected in err
    assert "[" not in err and "context =" not in err and "np." not in err


def test_train_errors_name_the_options_given(capsys):
    err = run_error(capsys, "calc", "train", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--tp", "3")
    assert "--tp 3 is not allowed" in err


def test_validation_error_shows_scalars():
    import numpy as np

    from trinity_desktop.model.base.errors import ValidationError

    assert str(ValidationError("context", [16777217.0], "x")).startswith("context = 16777217 is")
    assert str(ValidationError("x", np.float64(2.5), "y")).startswith("x = 2.5 is")
    assert str(ValidationError("kind", "bad", "y")).startswith("x = 'bad'".replace("x", "kind"))


def test_hardware_file_without_scale_out_is_refused_across_nodes(tmp_path, capsys):
    f = tmp_path / "gpu.toml"
    f.write_text('[[hardware]]\nkey = "box"\nname = "Box GPU"\npeak_bf16 = 1e15\nhbm_bytes = 80e9\nhbm_bw = 3e12\n'
                 'scaleup_bw = 450e9\nscaleup_latency_s = 1e-6\ngpus_per_node_default = 8\n')
    err = run_error(capsys, "calc", "train", "--model", "llama-3-70b", "--hardware-file", str(f), "--gpus", "64",
                    "--tp", "8", "--global-batch", "64")
    assert "--gpus 64" in err and "scale-out" in err
    rep = run_json(capsys, "calc", "train", "--model", "llama-3-70b", "--hardware-file", str(f), "--gpus", "8",
                   "--tp", "8", "--global-batch", "64", "--json")  # one node: the roofline has no scale-out point
    assert rep["bytes_by_link_per_gpu"]["scale-out"] == 0.0
    err = run_error(capsys, "calc", "infer", "--model", "llama-3-70b", "--hardware-file", str(f), "--gpus", "16")
    assert "scale-out" in err


def test_train_json_has_the_pipeline_bubble_fraction(capsys):
    rep = run_json(capsys, "calc", "train", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "64",
                   "--tp", "8", "--pp", "4", "--global-batch", "64", "--json")
    p, m = 4, rep["layout"]["micro_batches"]
    # the last stage (output head, loss) paces; the lighter stages' fill and drain make the bubble a little less
    # than the balanced stages' (p-1)/(m+p-1)
    balanced = (p - 1) / (m + p - 1)
    assert 0.9 * balanced < rep["pipeline_bubble_fraction"] < balanced
    t = rep["time_per_step_s"]
    assert rep["pipeline_bubble_share_of_step"] == pytest.approx(t["pipeline_bubble"] / t["total"], rel=1e-12)


def test_roofline_json_names_each_ridge(capsys):
    """H100 bf16: the datasheet ridge is 296 FLOP/B, the achievable one (x 0.5 / 0.8) 185; a decode batch of 200
    sits between them: bound by HBM on the datasheet roofline, by compute in the model's own times."""
    rep = run_json(capsys, "calc", "infer", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--batch", "200",
                   "--prompt-len", "512", "--gen-len", "64", "--json")
    roof = rep["roofline"]
    assert roof["ridge_flop_per_byte"] == pytest.approx(989e12 / 3.35e12, rel=1e-3)
    assert roof["ridge_achievable_flop_per_byte"] == pytest.approx(roof["ridge_flop_per_byte"] * 0.5 / 0.8)
    assert set(roof["ridge_definitions"]) == {"ridge_flop_per_byte", "ridge_achievable_flop_per_byte", "bottleneck"}
    gemm = next(p for p in roof["points"] if p["name"] == "decode GEMMs (weights)")
    assert roof["ridge_achievable_flop_per_byte"] < gemm["intensity"] < roof["ridge_flop_per_byte"]
    assert gemm["bound_by"] == "HBM" and gemm["bound_by_achievable"] != "HBM"


@pytest.mark.parametrize("placement", ["spill", "evict"])
def test_infer_request_s_is_where_the_stages_end(placement, capsys):
    rep = run_json(capsys, "calc", "infer", "--model", "llama-3.1-70b", "--hardware", "h100-sxm", "--gpus", "8",
                   "--sessions", "2", "--context", "1048576", "--kv-placement", placement, "--json")
    assert rep["request_s"] == pytest.approx(max(s["end_s"] for s in rep["stages"]), rel=1e-12)
