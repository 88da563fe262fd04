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


# --- issue #4: techniques and the triangle's normalised pressure -------------------------------------------

TRAIN_8B = ["calc", "train", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8", "--json"]
INFER_70B = ["calc", "infer", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "8", "--json"]


def _normalised(raw: dict) -> dict:
    clipped = {k: min(max(v, 0.0), 1.0) for k, v in raw.items()}
    total = sum(clipped.values())
    return {k: v / total for k, v in clipped.items()}


@pytest.mark.parametrize("argv", [TRAIN_8B, INFER_70B])
def test_pressure_is_the_heatmaps_and_triangle_weights_are_normalised(argv, capsys):
    rep = run_json(capsys, *argv)
    p, w = rep["pressure"], rep["triangle_weights"]
    assert set(p) == set(w) == {"compute", "bandwidth", "memory"}
    assert sum(w.values()) == pytest.approx(1.0, abs=1e-12)
    assert all(0.0 <= v <= 1.0 for v in w.values())
    for k, v in _normalised(p).items():
        assert w[k] == pytest.approx(v, rel=1e-12)
    # Hot = constrained: the bottleneck is the highest pressure.
    assert rep["bottleneck"] == max(("memory", "bandwidth", "compute"), key=lambda k: p[k])
    assert "pressure_raw" not in rep
    assert rep["techniques_applied"] == []


def test_decode_pressure_leans_to_bandwidth(capsys):
    rep = run_json(capsys, *INFER_70B)
    # Batch-1 decode streams the weights: compute utilisation is tiny, bandwidth the largest weight.
    assert rep["pressure"]["compute"] < 0.01
    assert max(rep["triangle_weights"], key=rep["triangle_weights"].get) == "bandwidth"
    assert sum(rep["prefill_triangle_weights"].values()) == pytest.approx(1.0, abs=1e-12)


def test_technique_zero3_lowers_memory_and_is_reported(capsys):
    base = run_json(capsys, *TRAIN_8B)  # --zero defaults to 1
    z3 = run_json(capsys, *TRAIN_8B, "--technique", "zero-3")
    assert z3["techniques_applied"] == ["zero-3"]
    assert z3["memory_per_gpu_bytes"]["total"] < base["memory_per_gpu_bytes"]["total"]
    # ZeRO-3 shards the bf16 weights over DP = 8 as well (ZeRO §5.3).
    assert z3["memory_per_gpu_bytes"]["weights"] == pytest.approx(base["memory_per_gpu_bytes"]["weights"] / 8,
                                                                  rel=1e-9)
    # ... and moves more bytes: the parameter all-gathers come on top of the gradient reduce-scatter.
    moved = sum(v for k, v in z3["bytes_by_link_per_gpu"].items() if k != "hbm")
    assert moved > sum(v for k, v in base["bytes_by_link_per_gpu"].items() if k != "hbm")


def test_techniques_apply_in_order(capsys):
    rep = run_json(capsys, *TRAIN_8B, "--technique", "zero-3", "--technique", "recompute-full")
    assert rep["techniques_applied"] == ["zero-3", "recompute-full"]
    sel = run_json(capsys, *TRAIN_8B, "--technique", "zero-3")
    # Full recomputation re-runs the forward: more FLOPs, less activation memory (Korthikanti et al. 2022).
    assert rep["flops_per_step"] > sel["flops_per_step"]
    assert rep["memory_per_gpu_bytes"]["activations"] < sel["memory_per_gpu_bytes"]["activations"]


def test_infer_technique_kv_int4_quarters_kv_bytes(capsys):
    base = run_json(capsys, *INFER_70B)
    q = run_json(capsys, *INFER_70B, "--technique", "kv-int4")
    assert q["techniques_applied"] == ["kv-int4"]
    assert base["kv_cache_bytes_per_token"] == 327_680  # 2 x 80 layers x 8 KV heads x 128 x 2 B
    assert q["kv_cache_bytes_per_token"] == base["kv_cache_bytes_per_token"] / 4


@pytest.mark.parametrize("argv, needle", [
    ([*TRAIN_8B, "--technique", "no-such-technique"], "no-such-technique"),
    ([*TRAIN_8B, "--technique", "kv-fp8"], "not train"),          # decode-only technique on a training step
    ([*TRAIN_8B, "--technique", "zero-1"], "Already in effect"),  # --zero defaults to 1
    ([*TRAIN_8B, "--technique", "split-computing"], "Not modelled"),
])
def test_bad_technique_exits_2_with_one_line(argv, needle, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == ""
    assert len(err.splitlines()) == 1
    assert "--technique" in err and needle in err


# --- issue #5: context, sessions, KV policy and residency -------------------------------------------------


def test_context_sessions_and_streaming_residency(capsys):
    rep = run_json(capsys, *INFER_70B, "--context", "131072", "--kv-policy", "streaming", "--sessions", "2")
    assert rep["context_tokens"] == 131_072 and rep["sessions"] == 2
    assert rep["kv_policy"] == {"policy": "streaming", "window": 4096, "sinks": 4}
    res = rep["kv_residency_bytes"]
    assert set(res) == {"hbm", "host", "cxl", "ssd"}
    # StreamingLLM keeps 4 sinks + a 4,096-token window per sequence; TP8 holds 1/8 of the 8 KV heads' bytes.
    per_gpu_token = 327_680 / 8
    assert res["hbm"] == pytest.approx(2 * (4096 + 4) * per_gpu_token, rel=1e-12)
    assert res["host"] == res["cxl"] == res["ssd"] == 0
    # All of it in HBM: the effective time per token is the core's.
    assert rep["effective_time_per_output_token_s"] == pytest.approx(rep["time_per_output_token_s"], rel=1e-9)


def test_kv_window_and_sinks_options(capsys):
    rep = run_json(capsys, *INFER_70B, "--context", "65536", "--kv-policy", "streaming", "--kv-window", "1024",
                   "--kv-sinks", "0")
    assert rep["kv_residency_bytes"]["hbm"] == pytest.approx(1024 * 327_680 / 8, rel=1e-12)


def test_context_sets_prompt_len_and_sessions_equal_batch(capsys):
    a = run_json(capsys, *INFER_70B, "--context", "8192", "--gen-len", "192", "--sessions", "4")
    b = run_json(capsys, *INFER_70B, "--prompt-len", "8000", "--gen-len", "192", "--batch", "4")
    assert a["kv_cache_bytes"] == b["kv_cache_bytes"] == 4 * 8192 * 327_680
    assert a["time_per_output_token_s"] == b["time_per_output_token_s"]


def test_long_context_spills_out_of_hbm(capsys):
    rep = run_json(capsys, *INFER_70B, "--context", "1000000", "--sessions", "8")
    res = rep["kv_residency_bytes"]
    needed = rep["kv_cache_bytes"] / 8  # per GPU
    assert res["host"] > 0 and res["hbm"] > 0
    assert sum(res.values()) + rep["kv_unplaced_bytes"] == pytest.approx(needed, rel=1e-9)
    # Reading KV from host memory over the host link is slower than the all-HBM roofline.
    assert rep["effective_time_per_output_token_s"] > rep["time_per_output_token_s"]
    evict = run_json(capsys, *INFER_70B, "--context", "1000000", "--sessions", "8", "--kv-placement", "evict")
    assert evict["kv_residency_bytes"]["host"] == 0 and evict["kv_evicted_tokens"] > 0


@pytest.mark.parametrize("argv, needle", [
    ([*INFER_70B, "--context", "512"], "--context"),                        # not more than gen-len 512
    ([*INFER_70B, "--context", "4096", "--prompt-len", "100"], "--prompt-len"),
    ([*INFER_70B, "--sessions", "2", "--batch", "2"], "--batch"),
    ([*INFER_70B, "--kv-policy", "lru"], "--kv-policy"),
    ([*INFER_70B, "--kv-window", "0"], "--kv-window"),
])
def test_bad_infer_options_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


# --- issue #6: stages ---------------------------------------------------------------------------------------

STAGE_KEYS = {"name", "start_s", "end_s", "flops", "bytes_by_link", "binding"}


def test_train_stages_end_at_step_time(capsys):
    rep = run_json(capsys, "calc", "train", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "64",
                   "--tp", "8", "--pp", "2", "--global-batch", "256", "--seq-len", "8192", "--json")
    st = rep["stages"]
    assert st and all(STAGE_KEYS <= s.keys() for s in st)
    assert all(0.0 <= s["start_s"] <= s["end_s"] for s in st)
    assert all(s["binding"] in ("compute", "bandwidth", "memory") for s in st)
    assert max(s["end_s"] for s in st) == pytest.approx(rep["time_per_step_s"]["total"], rel=1e-6)
    names = " ".join(s["name"] for s in st).lower()
    assert "forward" in names and "backward" in names and "optimizer" in names
    # The GPU's compute stages add up to at least the model FLOPs share of one GPU.
    assert sum(s["flops"] for s in st) > 0


def test_infer_stages_end_at_request_time(capsys):
    rep = run_json(capsys, *INFER_70B, "--prompt-len", "4096", "--gen-len", "256")
    st = rep["stages"]
    assert st and all(STAGE_KEYS <= s.keys() for s in st)
    assert st[0]["start_s"] == 0 and "prefill" in st[0]["name"]
    assert st[0]["end_s"] == pytest.approx(rep["prefill_s"], rel=1e-6)
    assert max(s["end_s"] for s in st) == pytest.approx(rep["request_s"], rel=1e-6)


# --- issue #7: calc split -------------------------------------------------------------------------------------

SPLIT = ["calc", "split", "--model", "llama-3.2-1b", "--device", "phone-a17-pro"]


def test_split_json_keys_and_optimum(capsys):
    rep = run_json(capsys, *SPLIT, "--network", "4g", "--json")
    assert set(rep) == {"split_points", "optimal_index", "all_device_s", "all_cloud_s"}
    pts = rep["split_points"]
    assert [p["index"] for p in pts] == list(range(len(pts)))
    for p in pts:
        assert set(p) == {"index", "name", "device_s", "transfer_s", "cloud_s", "total_s", "energy_j"}
        assert p["total_s"] == pytest.approx(p["device_s"] + p["transfer_s"] + p["cloud_s"], rel=1e-12)
        assert p["energy_j"] >= 0
    # Index k = the first k layers on the device: 0 is all cloud, the last all device.
    assert pts[0]["device_s"] == 0 and pts[-1]["cloud_s"] == 0 and pts[-1]["transfer_s"] == 0
    assert rep["all_cloud_s"] == pts[0]["total_s"] and rep["all_device_s"] == pts[-1]["total_s"]
    best = pts[rep["optimal_index"]]["total_s"]
    assert best == min(p["total_s"] for p in pts)
    assert best <= rep["all_device_s"] and best <= rep["all_cloud_s"]


def test_split_optimum_moves_with_the_network(capsys):
    slow = run_json(capsys, *SPLIT, "--network", "3g", "--json")
    fast = run_json(capsys, *SPLIT, "--network", "ethernet", "--json")
    n = len(slow["split_points"]) - 1
    # 1 Mbit/s, 150 ms RTT: keep the work on the phone; 1 Gbit/s, 5 ms: send it to the cloud.
    assert slow["optimal_index"] == n
    assert fast["optimal_index"] < slow["optimal_index"]
    assert fast["optimal_index"] == 0
    for rep in (slow, fast):
        best = rep["split_points"][rep["optimal_index"]]["total_s"]
        assert best <= rep["all_device_s"] and best <= rep["all_cloud_s"]
    # The device side does not depend on the network.
    assert slow["all_device_s"] == pytest.approx(fast["all_device_s"], rel=1e-12)


def test_split_energy_objective(capsys):
    rep = run_json(capsys, *SPLIT, "--network", "wifi", "--objective", "energy", "--json")
    energies = [p["energy_j"] for p in rep["split_points"]]
    assert rep["optimal_index"] == energies.index(min(energies))


def test_split_text_names_the_optimum(capsys):
    assert main([*SPLIT, "--network", "3g"]) == 0
    out = capsys.readouterr().out
    assert "Optimum: all device" in out and "3G" in out


@pytest.mark.parametrize("argv, needle", [
    (["calc", "split", "--model", "resnet-50", "--device", "toaster", "--network", "wifi"], "--device"),
    (["calc", "split", "--model", "resnet-50", "--device", "phone-a17-pro", "--network", "6g"], "--network"),
    (["calc", "split", "--model", "vgg-1000", "--device", "phone-a17-pro", "--network", "wifi"], "--model"),
    (["calc", "split", "--model", "resnet-50", "--device", "phone-a17-pro", "--network", "wifi",
      "--objective", "cost"], "--objective"),
])
def test_split_bad_names_exit_2(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err


def test_presets_json_lists_edge_devices_and_networks(capsys):
    rep = run_json(capsys, "presets", "--json")
    assert {"phone-a17-pro", "jetson-orin-nano-super", "laptop-x86-ddr5", "m4-max"} <= {
        d["key"] for d in rep["edge_devices"]}
    nets = {n["key"]: n for n in rep["networks"]}
    assert {"3g", "4g", "5g", "wifi", "ethernet"} <= nets.keys()
    assert nets["ethernet"]["uplink_bytes_per_s"] > nets["3g"]["uplink_bytes_per_s"]
    assert all(d["power_w"] > 0 and d["peak_bf16_flops"] > 0 for d in rep["edge_devices"])
    assert {"resnet-50", "llama-3.2-1b"} <= set(rep["split_models"])


def test_virtual_stages_option(capsys):
    argv = ["calc", "train", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "64", "--tp", "8",
            "--pp", "4", "--global-batch", "64", "--seq-len", "4096", "--json"]
    plain = run_json(capsys, *argv)
    inter = run_json(capsys, *argv, "--virtual-stages", "4")
    assert inter["layout"]["virtual_stages"] == 4 and plain["layout"]["virtual_stages"] == 1
    assert inter["time_per_step_s"]["pipeline_bubble"] == pytest.approx(
        plain["time_per_step_s"]["pipeline_bubble"] / 4, rel=0.05)  # (p-1)/v of a slightly longer micro-batch
    assert main([*argv, "--virtual-stages", "21"]) == 2  # 84 chunks > 80 layers + 2
    assert "--virtual-stages 21 is not allowed" in capsys.readouterr().err  # the option as the user typed it
