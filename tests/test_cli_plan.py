"""`plan train` / `plan infer`: the JSON contract, and `calc` with a reported layout reproduces its numbers."""

from __future__ import annotations

import json

import pytest

from trinity_desktop.__main__ import main


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


TRAIN_SEARCHES = {
    "llama-3-8b, 16 H100": ["--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "16",
                            "--global-batch", "64", "--seq-len", "4096", "--max-micro-batch", "4"],
    "mixtral, 32 A100 (MoE)": ["--model", "mixtral-8x7b", "--hardware", "a100-80gb-sxm", "--gpus", "32",
                               "--global-batch", "64", "--seq-len", "4096", "--max-micro-batch", "2"],
}


def _calc_train_argv(search: list[str], point: dict) -> list[str]:
    opts = dict(zip(search[::2], search[1::2], strict=True))
    lay = point["layout"]
    argv = ["calc", "train", "--model", opts["--model"], "--hardware", opts["--hardware"], "--gpus",
            str(point["gpus"]), "--global-batch", opts["--global-batch"], "--seq-len", opts["--seq-len"], "--json"]
    for key in ("tp", "pp", "dp", "cp", "ep", "zero", "recompute", "micro_batch", "virtual_stages", "offload"):
        argv += [f"--{key.replace('_', '-')}", str(lay[key])]
    return argv


@pytest.mark.parametrize("search", list(TRAIN_SEARCHES.values()), ids=list(TRAIN_SEARCHES))
def test_calc_train_reproduces_the_best_and_every_pareto_point(search, capsys):
    rep = run_json(capsys, "plan", "train", *search, "--json")
    assert {"configurations_evaluated", "feasible", "search_seconds", "best", "pareto", "invalid",
            "not_fitting", "most_common_invalid_reason"} <= rep.keys()
    assert rep["feasible"] > 0 and rep["configurations_evaluated"] >= rep["feasible"] + rep["invalid"]
    assert set(rep["best"]["layout"]) == {"tp", "pp", "dp", "cp", "ep", "zero", "recompute", "micro_batch",
                                          "virtual_stages", "offload"}
    times = [p["time_per_step_s"] for p in rep["pareto"]]
    mems = [p["memory_per_gpu_bytes"] for p in rep["pareto"]]
    assert times == sorted(times) and mems == sorted(mems, reverse=True)  # a front: faster costs memory
    assert rep["pareto"][0]["time_per_step_s"] == rep["best"]["time_per_step_s"]
    for point in [rep["best"], *rep["pareto"]]:
        calc = run_json(capsys, *_calc_train_argv(search, point))
        assert calc["time_per_step_s"]["total"] == point["time_per_step_s"]
        assert calc["memory_per_gpu_bytes"]["total"] == point["memory_per_gpu_bytes"]
        assert calc["mfu"] == point["mfu"] and calc["bottleneck"] == point["bottleneck"]
        assert calc["fits"]


INFER_SEARCHES = {
    "llama-3-8b, 8 H100, targets": (["--model", "llama-3-8b", "--hardware", "h100-sxm", "--prompt-len", "1024",
                                     "--gen-len", "256"], 8, ["--ttft-slo", "0.5", "--tpot-slo", "0.02"]),
    # 405B on A100s (no fp8): pipeline stages halve each GPU's weights, so TP2 x PP2 replicas lead the front
    "llama-3.1-405b, 16 A100 (PP)": (["--model", "llama-3.1-405b", "--hardware", "a100-80gb-sxm", "--prompt-len",
                                      "2048", "--gen-len", "512"], 16, []),
}


@pytest.mark.parametrize(("search", "gpus", "targets"), list(INFER_SEARCHES.values()), ids=list(INFER_SEARCHES))
def test_plan_infer_reproduced_by_calc_infer(search, gpus, targets, capsys):
    rep = run_json(capsys, "plan", "infer", *search, "--gpus", str(gpus), *targets, "--max-batch", "256", "--json")
    assert set(rep["best"]["layout"]) == {"tp", "pp", "attention_dp", "ep", "replicas", "batch", "weight_dtype",
                                          "kv_dtype", "kv_offload"}
    if targets:
        assert rep["best"]["ttft_s"] <= 0.5 and rep["best"]["tpot_s"] <= 0.02
    assert max(p["tokens_per_s_per_gpu"] for p in rep["pareto"]) == rep["best"]["tokens_per_s_per_gpu"]
    pps = set()
    for point in [rep["best"], *rep["pareto"]]:
        lay = point["layout"]
        pps.add(lay["pp"])
        assert lay["tp"] * lay["pp"] * lay["replicas"] <= gpus and lay["replicas"] == gpus // (lay["tp"] * lay["pp"])
        calc = run_json(capsys, "calc", "infer", *search, "--gpus", str(lay["tp"] * lay["pp"]), "--pp", str(lay["pp"]),
                        "--batch", str(lay["batch"]), "--weight-dtype", lay["weight_dtype"], "--kv-dtype",
                        lay["kv_dtype"], "--kv-offload-fraction", str(lay["kv_offload"]), "--json")
        assert (calc["tp"], calc["pp"]) == (lay["tp"], lay["pp"])
        assert calc["prefill_s"] == point["ttft_s"]
        assert calc["time_per_output_token_s"] == point["tpot_s"]
        assert calc["tokens_per_s"] * lay["replicas"] / gpus == point["tokens_per_s_per_gpu"]  # per budget GPU
        assert calc["fits"]
    if "405" in search[1]:
        assert pps - {1}, "pipeline-parallel layouts belong on the 405B front"


def test_plan_text_and_nothing_fits(capsys):
    assert main(["plan", "train", "--model", "llama-3.1-405b", "--hardware", "rtx-4090", "--gpus", "1",
                 "--global-batch", "1", "--seq-len", "1024"]) == 0
    out = capsys.readouterr().out
    assert "no layout fits" in out and "do not fit" in out
    assert main(["plan", "infer", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "2",
                 "--prompt-len", "512", "--gen-len", "64"]) == 0
    assert "best" in capsys.readouterr().out


@pytest.mark.parametrize("argv, needle", [
    (["plan", "train", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "0", "--global-batch", "8",
      "--seq-len", "8"], "--gpus"),
    (["plan", "train", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8", "--global-batch", "8",
      "--seq-len", "8", "--objective", "cost"], "--objective"),
    (["plan", "infer", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "8", "--prompt-len", "8",
      "--gen-len", "8", "--tpot-slo", "-1"], "--tpot-slo"),
    (["plan", "train", "--model", "nope", "--hardware", "h100-sxm", "--gpus", "8", "--global-batch", "8",
      "--seq-len", "8"], "--model"),
    (["calc", "infer", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "8", "--pp", "3"], "--pp"),
    (["calc", "infer", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "8", "--pp", "0"], "--pp"),
    (["calc", "infer", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "6", "--pp", "2"], "--gpus"),
])
def test_bad_plan_arguments_exit_2_with_one_line(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err
