"""`calc --uncertainty`, `--efficiency` and `validate [--json] [--fit]`: the JSON contract and the fit's effect."""

from __future__ import annotations

import json
import statistics

import pytest

from trinity_desktop.__main__ import main

TRAIN_175B = ["calc", "train", "--model", "korthikanti-175b", "--hardware", "a100-80gb-sxm", "--gpus", "64",
              "--tp", "8", "--pp", "8", "--global-batch", "64", "--seq-len", "2048"]
DECODE_8B = ["calc", "infer", "--model", "llama-3-8b", "--hardware", "h100-sxm"]


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(autouse=True)
def _own_data_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("TRINITY_DESKTOP_HOME", str(tmp_path))


def test_train_uncertainty_key_as_specified(capsys):
    rep = run_json(capsys, *TRAIN_175B, "--json", "--uncertainty", "--samples", "256")
    assert rep["efficiency"] == {"compute_efficiency": 0.5, "hbm_efficiency": 0.8, "network_efficiency": 0.8,
                                 "set": "default"}
    u = rep["uncertainty"]
    assert u["samples"] == 256
    for name in ("time_per_step_s", "mfu", "tokens_per_s"):
        assert set(u[name]) == {"p05", "p50", "p95"}
    t = u["time_per_step_s"]
    assert t["p05"] <= rep["time_per_step_s"]["total"] <= t["p95"]
    assert u["mfu"]["p05"] <= rep["mfu"] <= u["mfu"]["p95"]
    top = max(u["sensitivity"], key=lambda k: u["sensitivity"][k]["total"])
    assert top == "compute_efficiency"
    assert set(u["sensitivity"][top]) == {"first", "total"}


def test_infer_uncertainty_names_tpot_and_ttft(capsys):
    rep = run_json(capsys, *DECODE_8B, "--json", "--uncertainty", "--samples", "256")
    u = rep["uncertainty"]
    assert u["time_per_output_token_s"]["p05"] <= rep["time_per_output_token_s"] <= u["time_per_output_token_s"]["p95"]
    assert u["ttft_s"]["p05"] <= rep["prefill_s"] <= u["ttft_s"]["p95"]
    assert max(u["sensitivity"], key=lambda k: u["sensitivity"][k]["total"]) == "hbm_efficiency"


def test_text_output_shows_the_range(capsys):
    assert main([*TRAIN_175B, "--uncertainty", "--samples", "64"]) == 0
    out = capsys.readouterr().out
    assert "p05" in out and "what matters most" in out and "compute_efficiency" in out


@pytest.mark.parametrize("argv, needle", [
    ([*TRAIN_175B, "--uncertainty", "--samples", "100"], "--samples"),
    ([*TRAIN_175B, "--efficiency", "calibrated"], "validate --fit"),
    ([*DECODE_8B, "--efficiency", "guess"], "--efficiency"),
])
def test_bad_options_exit_2_with_one_line(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """One `validate --json --fit` run (about 20 s on a loaded machine), shared by the tests below."""
    import os
    import subprocess
    import sys

    home = tmp_path_factory.mktemp("home")
    out = subprocess.run([sys.executable, "-m", "trinity_desktop", "validate", "--json", "--fit", "--samples", "64"],
                         capture_output=True, text=True, env={**os.environ, "TRINITY_DESKTOP_HOME": str(home)},
                         check=True).stdout
    return json.loads(out), home


def test_validate_json_keys_and_published_runs(fitted):
    rep, _ = fitted
    assert len(rep["runs"]) >= 12
    for run in rep["runs"]:
        assert {"name", "kind", "quantity", "source", "measured", "predicted", "p05", "p95", "rel_error"} <= run.keys()
        assert (run["kind"], run["quantity"] == "step_time_s") in {("training", True), ("inference", False)}
        assert run["p05"] <= run["predicted"] <= run["p95"]
        assert run["rel_error"] == pytest.approx(run["predicted"] / run["measured"] - 1)
    errors = [abs(r["rel_error"]) for r in rep["runs"]]
    assert rep["median_abs_rel_error"] == pytest.approx(statistics.median(errors))
    assert rep["worst_abs_rel_error"] == pytest.approx(max(errors))
    # Korthikanti et al. 2022 Table 5 is in: 175B with selective recomputation, 13.75 s per iteration
    k175 = next(r for r in rep["runs"] if "175B, selective" in r["name"])
    assert k175["measured"] == 13.75 and k175["source"] == "korthikanti2022"
    assert k175["layout"]["virtual_stages"] == 3  # Table 3: the interleaved schedule, m = 3
    # inference: FasterTransformer GPT-175B, TP 8, batch 16, 512/32: 3706.23 ms for the batch
    ft = next(r for r in rep["runs"] if r["name"].startswith("GPT-175B, TP 8, batch 16"))
    assert ft["quantity"] == "request_s" and ft["measured"] == pytest.approx(3.70623)
    assert ft["layout"] == {"tp": 8, "batch": 16, "prompt_len": 512, "gen_len": 32, "weight_dtype": "fp16",
                            "kv_dtype": "fp16"}
    kinds = {k: [abs(r["rel_error"]) for r in rep["runs"] if r["kind"] == k] for k in ("training", "inference")}
    assert len(kinds["inference"]) >= 4
    for k, errs in kinds.items():
        assert rep["median_abs_rel_error_by_kind"][k] == pytest.approx(statistics.median(errs))


def test_the_fit_is_judged_on_runs_left_out(fitted):
    """The calibration is reported out of sample: leave one run, one hardware family and one source out (on the
    97 published runs it does not beat the default assumptions, so that is not claimed)."""
    rep, _ = fitted
    fit = rep["fit"]
    for held in ("leave_one_family_out", "leave_one_source_out"):
        assert fit[f"{held}_median_abs_rel_error"] == rep[f"{held}_median_abs_rel_error"] > 0
    assert fit["in_sample_median_abs_rel_error"] <= fit["leave_one_out_median_abs_rel_error"] + 1e-9
    assert rep["leave_one_out_median_abs_rel_error"] == fit["leave_one_out_median_abs_rel_error"]
    # both fits are reported; the calibrated set is the one of lower leave-one-out error
    fits = rep["fits"]
    assert set(fits) == {"compute+network", "compute+network+hbm"}
    assert fits["compute+network"]["efficiencies"]["hbm_efficiency"] == 0.8
    best = min(fits, key=lambda k: fits[k]["leave_one_out_median_abs_rel_error"])
    assert fit["variant"] == rep["leave_one_out_fit"] == best
    assert fits[best]["leave_one_out_median_abs_rel_error"] == fit["leave_one_out_median_abs_rel_error"]


def test_calibrated_set_is_usable(fitted, capsys, monkeypatch):
    rep, home = fitted
    monkeypatch.setenv("TRINITY_DESKTOP_HOME", str(home))
    out = run_json(capsys, *TRAIN_175B, "--json", "--efficiency", "calibrated", "--uncertainty", "--samples", "64")
    assert out["efficiency"]["set"] == "calibrated"
    assert out["efficiency"]["compute_efficiency"] == pytest.approx(rep["fit"]["compute_efficiency"], rel=1e-5)
    assert out["uncertainty"]["time_per_step_s"]["p05"] <= out["time_per_step_s"]["total"]
