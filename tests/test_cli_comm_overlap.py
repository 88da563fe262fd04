"""`calc train`'s overlap and MoE communication flags (cli_options.add_comm_overlap_options, shared with `plan
train`): each reaches the Scenario and moves the JSON as its formula says; bad values are one line, exit 2."""

from __future__ import annotations

import json

import pytest

from trinity_desktop.cli import build_parser, run_cli
from trinity_desktop.cli_options import COMM_OVERLAP_FIELDS
from trinity_desktop.model.formulas.overlap import COMM_SM_SHARE

# DeepSeek-V3's own layout (report §3.1-3.2: 2048 H800s, PP16, EP64, 15360 sequences of 4096 tokens)
DEEPSEEK = ["calc", "train", "--model", "deepseek-v3", "--hardware", "h800-sxm", "--gpus", "2048", "--tp", "1",
            "--pp", "16", "--ep", "64", "--global-batch", "15360", "--seq-len", "4096", "--json"]
LLAMA_TP8 = ["calc", "train", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "64", "--tp", "8",
             "--pp", "2", "--zero", "1", "--global-batch", "256", "--seq-len", "8192", "--json"]


def report(capsys, *argv) -> dict:
    assert run_cli(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_ep_comm_overlap_hides_the_all_to_all_at_the_price_of_the_sms(capsys, monkeypatch):
    off, on = report(capsys, *DEEPSEEK), report(capsys, *DEEPSEEK, "--ep-comm-overlap")
    t_off, t_on = off["time_per_step_s"], on["time_per_step_s"]
    assert t_on["communication_exposed"] < 0.5 * t_off["communication_exposed"]
    assert t_on["total"] < t_off["total"]
    # DualPipe's communication kernels hold 20 of the H800's 132 SMs (DeepSeek-V3 §3.5.1): compute / (1 - 20/132).
    # DualPipe also places half the first and half the last stage on each end rank (train_compute.busiest_stage), so
    # the busiest stage's compute is compared with the same schedule run on every SM.
    assert COMM_SM_SHARE == pytest.approx(20 / 132)
    monkeypatch.setattr("trinity_desktop.model.formulas.overlap.COMM_SM_SHARE", 0.0)
    every_sm = report(capsys, *DEEPSEEK, "--ep-comm-overlap")["time_per_step_s"]
    assert t_on["compute"] == pytest.approx(every_sm["compute"] / (1.0 - 20 / 132), rel=1e-12)
    assert every_sm["compute"] < t_off["compute"]   # the end ranks' halves pace less than a whole end stage
    assert on["bytes_by_link_per_gpu"] == off["bytes_by_link_per_gpu"]  # the same bytes, only hidden


def test_moe_fp8_dispatch_sends_three_quarters_of_the_all_to_all_bytes(capsys):
    off, on = report(capsys, *DEEPSEEK), report(capsys, *DEEPSEEK, "--moe-fp8-dispatch")
    # PP, DP and the experts outside the node go over scale-out; the NVLink bytes are the in-node all-to-all only:
    # dispatch forward + backward in FP8 (1 B), combine in BF16 (2 B): (1 + 2) / (2 + 2)
    assert on["bytes_by_link_per_gpu"]["scale-up"] == pytest.approx(
        0.75 * off["bytes_by_link_per_gpu"]["scale-up"], rel=1e-12)
    assert on["bytes_by_link_per_gpu"]["scale-out"] < off["bytes_by_link_per_gpu"]["scale-out"]
    assert on["time_per_step_s"]["communication_exposed"] < off["time_per_step_s"]["communication_exposed"]


def test_moe_node_limit_moves_all_to_all_bytes_from_scale_out_to_nvlink(capsys):
    runs = [report(capsys, *DEEPSEEK, *limit)["bytes_by_link_per_gpu"]
            for limit in ([], ["--moe-node-limit", "4"], ["--moe-node-limit", "1"])]
    free, four, one = runs
    assert one["scale-out"] < four["scale-out"] < free["scale-out"]
    assert four["scale-up"] > free["scale-up"]


def test_tp_comm_overlap_hides_tp_communication_under_sequence_parallelism(capsys):
    off, on = report(capsys, *LLAMA_TP8), report(capsys, *LLAMA_TP8, "--tp-comm-overlap")
    assert on["time_per_step_s"]["communication_exposed"] < 0.1 * off["time_per_step_s"]["communication_exposed"]
    assert on["time_per_step_s"]["compute"] == off["time_per_step_s"]["compute"]


@pytest.mark.parametrize("extra, needle", [
    (["--moe-node-limit", "2000"], "--moe-node-limit 2000 is not allowed: 0 (no limit) or a node count from 1 to 1024"),
    (["--moe-node-limit", "-1"], "--moe-node-limit -1 is not allowed"),
    (["--moe-node-limit", "1.5"], "is not a whole number"),
    (["--tp-comm-overlap", "--no-sequence-parallel"], "--tp-comm-overlap needs --sequence-parallel"),
])
def test_bad_overlap_options_exit_2_with_one_line(extra, needle, capsys):
    assert run_cli([*DEEPSEEK, *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def test_calc_train_and_plan_train_share_one_definition():
    def options(*path):
        parser = build_parser()
        for name in path:
            sub = next(a for a in parser._actions if a.dest in ("command", "calc", "plan"))
            parser = sub.choices[name]
        return {a.dest: (a.option_strings, a.help, a.default) for a in parser._actions if a.dest in COMM_OVERLAP_FIELDS}

    calc, plan = options("calc", "train"), options("plan", "train")
    assert set(calc) == set(COMM_OVERLAP_FIELDS) and calc == plan
