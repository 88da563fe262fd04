"""The command line is a contract: JSON keys, a few values, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from trinity_desktop.__main__ import main

TRAIN_KEYS = {"params_total", "memory_per_gpu_bytes", "hbm_capacity_bytes", "fits", "flops_per_step",
              "time_per_step_s", "mfu", "tokens_per_s", "bottleneck"}
INFER_KEYS = {"params_total", "weights_bytes", "kv_cache_bytes_per_token", "kv_cache_bytes", "memory_total_bytes",
              "fits", "prefill_s", "time_per_output_token_s", "tokens_per_s", "bottleneck"}


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_train_json_keys_and_values(capsys):
    rep = run_json(capsys, "calc", "train", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "64",
                   "--tp", "8", "--pp", "2", "--zero", "1", "--global-batch", "256", "--seq-len", "8192", "--json")
    assert TRAIN_KEYS <= rep.keys()
    mem = rep["memory_per_gpu_bytes"]
    assert {"weights", "gradients", "optimizer", "activations", "total"} <= mem.keys()
    assert mem["total"] == pytest.approx(sum(v for k, v in mem.items() if k != "total"))
    assert {"compute", "communication_exposed", "pipeline_bubble", "total"} <= rep["time_per_step_s"].keys()
    # Llama-3-70B has 70.55e9 parameters; TP8 x PP2 holds 1/16 of them per GPU (+ the embedding on stage 1).
    assert rep["params_total"] == pytest.approx(70.55e9, rel=1e-3)
    assert mem["weights"] == pytest.approx(2 * 70.55e9 / 16, rel=0.05)
    # ZeRO-1 over DP = 4: optimizer states 12 B/param / 4.
    assert mem["optimizer"] == pytest.approx(12 * mem["weights"] / 2 / 4, rel=1e-9)
    assert rep["hbm_capacity_bytes"] == 80e9
    assert rep["fits"] is True
    assert 0 < rep["mfu"] < 0.6
    assert rep["bottleneck"] in ("compute", "bandwidth", "memory")
    assert rep["layout"]["dp"] == 4 and rep["layout"]["micro_batches"] == 64


def test_zero3_divides_by_dp_not_gpus(capsys):
    base = ["calc", "train", "--model", "llama-3-8b", "--hardware", "a100-80gb-sxm", "--gpus", "16", "--tp", "2",
            "--global-batch", "16", "--json"]
    z0 = run_json(capsys, *base, "--zero", "0")["memory_per_gpu_bytes"]
    z3 = run_json(capsys, *base, "--zero", "3")["memory_per_gpu_bytes"]
    # DP = 16 / 2 = 8 (not 16): every model-state term shrinks by exactly 8.
    for part in ("weights", "gradients", "optimizer"):
        assert z3[part] == pytest.approx(z0[part] / 8, rel=1e-9)


def test_infer_json_keys_and_values(capsys):
    rep = run_json(capsys, "calc", "infer", "--model", "llama-2-7b", "--hardware", "h100-sxm", "--batch", "4",
                   "--prompt-len", "1000", "--gen-len", "24", "--kv-dtype", "fp16", "--json")
    assert INFER_KEYS <= rep.keys()
    assert rep["kv_cache_bytes_per_token"] == 524_288  # 2 x 32 layers x 4096 x 2 B
    assert rep["kv_cache_bytes"] == 524_288 * 4 * 1024
    assert rep["weights_bytes"] == pytest.approx(2 * 6.74e9, rel=2e-3)
    assert rep["bottleneck"] == "bandwidth"  # decode at batch 4 streams the weights
    assert rep["tokens_per_s"] == pytest.approx(4 / rep["time_per_output_token_s"])


def test_presets_json(capsys):
    rep = run_json(capsys, "presets", "--json")
    keys = {h["key"] for h in rep["hardware"]}
    assert {"a100-80gb-sxm", "h100-sxm", "h200-sxm", "b200", "mi300x", "tpu-v5e", "tpu-v5p", "m4-max",
            "laptop-x86-ddr5", "rtx-4090"} <= keys
    h100 = next(h for h in rep["hardware"] if h["key"] == "h100-sxm")
    assert h100["ridge_flop_per_byte"] == pytest.approx(295.3, abs=0.5)
    assert len(rep["models"]) >= 19


def test_model_file(tmp_path, capsys):
    f = tmp_path / "tiny.toml"
    f.write_text('name = "Tiny"\nlayers = 2\nhidden = 256\nheads = 4\nvocab = 1000\nffn_hidden = 1024\n'
                 'gated_mlp = false\n')
    rep = run_json(capsys, "calc", "infer", "--model-file", str(f), "--hardware", "h100-sxm", "--json")
    # head_dim defaults to hidden / heads = 64; KV per token = 2 x 2 layers x 4 x 64 x 2 B
    assert rep["kv_cache_bytes_per_token"] == 2 * 2 * 4 * 64 * 2


@pytest.mark.parametrize("argv, needle", [
    (["calc", "train", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--tp", "3", "--gpus", "3"], "tp"),
    (["calc", "train", "--model", "nope", "--hardware", "h100-sxm"], "--model"),
    (["calc", "train", "--hardware", "h100-sxm"], "--model"),
    (["calc", "train", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--zero", "5"], "--zero"),
    (["calc", "infer", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--batch", "0"], "--batch"),
    (["calc", "train", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8", "--dp", "3"], "--dp"),
    (["calc", "infer", "--model-file", "/nonexistent.toml", "--hardware", "h100-sxm"], "nonexistent"),
])
def test_bad_arguments_exit_2_with_one_line(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert needle in err


def test_bad_model_file_names_the_key(tmp_path, capsys):
    f = tmp_path / "bad.toml"
    f.write_text('name = "Bad"\nlayers = "many"\nhidden = 256\nheads = 4\nvocab = 1000\n')
    assert main(["calc", "infer", "--model-file", str(f), "--hardware", "h100-sxm"]) == 2
    err = capsys.readouterr().err
    assert "layers" in err and "whole number" in err


def test_module_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "trinity_desktop", "presets"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0
    assert "H100" in out.stdout


def test_roofline_key(capsys):
    rep = run_json(capsys, "calc", "infer", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--json")
    roof = rep["roofline"]
    assert roof["ridge_flop_per_byte"] == pytest.approx(989.4e12 / 3.35e12, rel=1e-6)
    kinds = {c["kind"] for c in roof["ceilings"]}
    assert kinds == {"compute", "bandwidth"}
    for p in roof["points"]:
        assert {"name", "flops", "bytes", "intensity", "attainable_flops_per_s", "bound_by"} <= p.keys()
        assert p["attainable_flops_per_s"] <= max(c["value"] for c in roof["ceilings"] if c["kind"] == "compute")
    gemm = next(p for p in roof["points"] if "GEMM" in p["name"] or "GEMV" in p["name"])
    assert gemm["intensity"] < roof["ridge_flop_per_byte"]  # batch-1 decode streams the weights
