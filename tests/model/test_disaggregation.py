"""Disaggregated prefill and decode (#23): the KV transfer by hand, the layer-wise overlap, the pools' rules, the
defaults off, the planner's grid against the scalar path, and the published gains as a direction/magnitude check.

Published figures (resources/references.toml):
- DistServe (Zhong et al., OSDI 2024) §3.3: one 512-token request of OPT-66B carries about 1.13 GB of KV cache, so
  10 requests/s need about 90 Gbps; Table 1: chatbot OPT-13B targets TTFT 0.25 s, TPOT 0.1 s; §6.2: up to 7.4x
  the request rate of the colocated baselines (2.0x-4.6x over vLLM for the chatbot), the gains growing as the
  targets tighten; §6.4: tuning the colocated system's parallelism alone gains nothing.
- Mooncake (Qin et al. 2024) §8.1.1, Fig. 11: 3 prefill + 1 decode nodes of 8 A800 serve about 20% (ArXiv
  Summarization: mean prompt 8,088, output 229) and 40% (L-Eval) more requests than 4 colocated vLLM nodes within
  TTFT <= 10x and TBT <= 5x the single-request times (a LLaMA2-70B-like model).
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trinity_desktop.__main__ import main
from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.formulas.disaggregation import exposed_transfer, kv_transfer_time, served_rate
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.search.disagg_planner import plan_disaggregated
from trinity_desktop.model.step.inference import kv_bytes_per_token

HW, MODELS = hardware_presets(), model_presets()
LLAMA3_70B_KV_PER_TOKEN = 2 * 80 * 8 * 128 * 2   # K and V x layers x KV heads x head dim x bf16 bytes = 327,680 B


@pytest.fixture(scope="module")
def llama70b():
    return Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-70b"], kind="decode", gpus=8, batch=32,
                    prompt_len=4096, gen_len=512)


@pytest.fixture(scope="module")
def pooled(llama70b):
    return evaluate(llama70b.replace(prefill_gpus=8, decode_gpus=8))


def test_kv_transfer_of_llama3_70b_4096_tokens_over_400_gbps_by_hand(llama70b, pooled):
    """1,342,177,280 B = 4,096 x 327,680 B; TP8 shards of 1/8 move in parallel, one 400 Gb/s (50 GB/s) NIC per
    GPU at η_net 0.8: 167.8 MB / 40 GB/s = 4.194 ms + the NIC's alpha."""
    d = pooled.disaggregated
    request = 4096 * LLAMA3_70B_KV_PER_TOKEN
    assert request == 1_342_177_280
    assert d.served.kv_transfer_bytes == pytest.approx(request, rel=1e-12)
    assert d.layout.link == "scale-out"  # 8 + 8 GPUs do not share one 8-GPU node
    hw = llama70b.hardware
    assert hw.scaleout_bw == 50e9
    assert d.served.kv_transfer_s == pytest.approx(hw.scaleout_latency_s + request / 8 / (50e9 * 0.8), rel=1e-12)
    assert d.served.kv_transfer_s == pytest.approx(4.194e-3, abs=0.02e-3)
    # the whole request over one 400 Gb/s link at line rate: 26.8 ms
    assert float(kv_transfer_time(request, 1.0, 1.0, 50e9, 0.0, 1.0)) == pytest.approx(0.026844, rel=1e-4)
    j = main_json("calc", "infer", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "8",
                  "--prompt-len", "4096", "--batch", "32", "--gen-len", "512", "--prefill-gpus", "8",
                  "--decode-gpus", "8")["disaggregated"]
    assert j["kv_transfer_s"] == pytest.approx(d.served.kv_transfer_s, rel=1e-12)
    assert j["kv_transfer_bytes"] == request and j["kv_transfer_link"] == "scale-out"


def main_json(*argv):
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main([*argv, "--json"]) == 0
    return json.loads(buf.getvalue())


def test_distserve_opt66b_512_tokens_carry_1_13_gb_and_10_rps_need_90_gbps():
    """DistServe §3.3, with the one per-token formula (OPT-66B: 64 layers, hidden 9216, MHA, fp16)."""
    opt66 = dataclasses.replace(MODELS["opt-13b"], key="opt-66b", name="OPT-66B", layers=64, hidden=9216,
                                heads=72, kv_heads=72, head_dim=128, ffn_hidden=36864)
    request = 512 * float(kv_bytes_per_token(opt66, 2.0))
    assert request / 2**30 == pytest.approx(1.13, rel=0.01)   # the paper's "GB" are GiB
    assert 10 * request / 2**30 * 8 == pytest.approx(90, rel=0.01)


def test_scale_up_when_a_prefill_and_a_decode_instance_share_a_node(llama70b):
    sc = llama70b.replace(gpus=4, prefill_gpus=8, decode_gpus=4)
    d = evaluate(sc).disaggregated
    assert d.layout.link == "scale-up" and d.layout.prefill.instances == 2
    hw = sc.hardware
    assert d.served.kv_transfer_s == pytest.approx(hw.scaleup_latency_s + 4096 * LLAMA3_70B_KV_PER_TOKEN / 4
                                                   / (hw.scaleup_bw * 0.8), rel=1e-12)
    forced = evaluate(sc.replace(kv_transfer_link="scale-out")).disaggregated
    assert forced.served.kv_transfer_s > 5 * d.served.kv_transfer_s  # 450 GB/s NVLink against a 50 GB/s NIC


def test_layerwise_streaming_hides_the_transfer_behind_the_prefill(llama70b, pooled):
    streamed = evaluate(llama70b.replace(prefill_gpus=8, decode_gpus=8, kv_transfer_layerwise=True)).disaggregated
    t = pooled.disaggregated.served.kv_transfer_s
    assert pooled.disaggregated.served.kv_transfer_exposed_s == t
    assert streamed.served.kv_transfer_exposed_s == pytest.approx(t / 80)  # the link keeps up: the last layer's
    # a link slower than the prefill: all but the overlapped part of the transfer is exposed
    assert float(exposed_transfer(1.0, 0.5, 80, True)) == pytest.approx(1.0 - 0.5 * 79 / 80)


@given(t=st.floats(1e-6, 10.0), p=st.floats(1e-6, 10.0), layers=st.integers(1, 256))
def test_exposed_transfer_lies_between_one_layer_and_all_of_it(t, p, layers):
    e = float(exposed_transfer(t, p, layers, True))
    assert t / layers - 1e-12 <= e <= t + 1e-12
    assert e == pytest.approx(max(t / layers, t - p), abs=p / layers + 1e-12)


@given(st.floats(0.01, 1e3), st.floats(0.01, 1e3), st.floats(0.01, 1e3))
def test_the_served_rate_is_the_slowest_pool(a, b, c):
    assert float(served_rate(a, b, c)) == min(a, b, c)


def test_pools_off_by_default_and_every_number_unchanged(llama70b, pooled):
    plain = evaluate(llama70b)
    assert plain.disaggregated is None and Scenario.__dataclass_fields__["prefill_gpus"].default == 0
    assert dict(pooled.infer) == dict(plain.infer) and dict(pooled.time) == dict(plain.time)
    assert pooled.pressure == plain.pressure


@pytest.mark.parametrize("changes, field", [
    ({"prefill_gpus": 8}, "decode_gpus"),
    ({"prefill_gpus": 12, "decode_gpus": 8}, "prefill_gpus"),          # 12 is not a multiple of TP8
    ({"prefill_gpus": 8, "decode_gpus": 8, "decode_tp": 3}, "decode_tp"),  # 3 does not divide 64 heads
    ({"prefill_gpus": 8, "decode_gpus": 8, "prefill_pp": 3}, "prefill_pp"),  # nor 80 layers
    ({"prefill_gpus": 8, "decode_gpus": 8, "kv_transfer_link": "scale-up"}, "kv_transfer_link"),  # 16 > one node
    ({"prefill_gpus": 8, "decode_gpus": 8, "kv_transfer_link": "pcie"}, "kv_transfer_link"),
])
def test_a_layout_that_cannot_run_is_refused_by_field(llama70b, changes, field):
    with pytest.raises(ValidationError) as err:
        llama70b.replace(**changes)
    assert err.value.field == field


@pytest.fixture(scope="module")
def distserve_chatbot():
    """OPT-13B on 8 A100s (DistServe's chatbot model), prompt 512 and 256 generated tokens (lengths chosen here:
    the ShareGPT distribution of DistServe Fig. 7 was not read), at loose and tight TPOT targets."""
    run = dict(model=MODELS["opt-13b"], hardware=HW["a100-80gb-sxm"], gpus=8, prompt_len=512, gen_len=256)
    return {"none": plan_disaggregated(**run),
            "table1": plan_disaggregated(**run, ttft_slo=0.25, tpot_slo=0.1),
            "tight": plan_disaggregated(**run, ttft_slo=0.25, tpot_slo=0.03)}


def test_distserve_direction_pools_gain_under_targets_and_more_as_they_tighten(distserve_chatbot):
    """DistServe's gains come from removing the prefill stalls from the decode steps under latency targets: this
    model (no queueing, no tail, so a lower bound on the paper's up to 7.4x) gains little without targets and
    more as the TPOT target tightens, never more than the paper's largest gain."""
    none, table1, tight = (distserve_chatbot[k].gain for k in ("none", "table1", "tight"))
    assert 0.95 <= none <= 1.1
    assert 1.0 <= table1 <= tight <= 7.4
    assert tight > 1.1
    best = distserve_chatbot["tight"]
    assert best.disaggregated.tpot_s <= 0.03 and best.aggregated.tpot_s <= 0.03
    assert best.disaggregated.ttft_s <= 0.25


def test_the_planners_grid_gives_the_scalar_evaluate_numbers(distserve_chatbot):
    d = distserve_chatbot["tight"].disaggregated
    served = d.results.disaggregated.served
    assert d.requests_per_s == pytest.approx(float(served.requests_per_s), rel=1e-9)
    lay = d.results.disaggregated.layout
    assert lay.gpus <= 8 and lay.prefill.instances == d.layout["prefill_instances"]


def test_mooncake_arxiv_summarization_gain_is_of_the_reported_size():
    """Mooncake Fig. 11 (ArXiv Summarization, 32 GPUs, TTFT <= 10x, TBT <= 5x the single-request times): about
    1.2x; the model (Llama-2-70B on A100-80GB as the A800 stand-in, no prefix reuse, no queueing) must land above 1
    and within 1.5x of it."""
    hw, model = HW["a100-80gb-sxm"], MODELS["llama-2-70b"]
    one = evaluate(Scenario(hardware=hw, model=model, kind="decode", gpus=8, batch=1, prompt_len=8088, gen_len=229))
    plan = plan_disaggregated(model, hw, 32, 8088, 229, ttft_slo=10 * one.infer["prefill_s"],
                              tpot_slo=5 * one.infer["time_per_output_token_s"])
    assert 1.0 < plan.gain < 1.2 * 1.5


def test_the_flow_draws_the_pools_and_the_transfer_between_them(llama70b):
    from trinity_desktop.model.views.phases import phases
    from trinity_desktop.model.views.stages import lane_order, stages

    sc = llama70b.replace(prefill_gpus=8, decode_gpus=8)
    d = evaluate(sc).disaggregated
    st = stages(sc)
    assert lane_order(st) == ["pool 1: prefill", "pool 1→2: KV link", "pool 2: decode"]
    prefill, transfer, first = st[0], st[1], st[2]
    assert (prefill.role, transfer.role, first.role) == ("prefill", "kv_transfer", "decode")
    assert prefill.duration_s == pytest.approx(d.served.ttft_s) and transfer.duration_s == pytest.approx(
        d.served.kv_transfer_s)
    assert first.start_s == pytest.approx(transfer.end_s)          # decode waits for the whole KV
    assert transfer.bytes_by_link["scale-out"] == pytest.approx(4096 * LLAMA3_70B_KV_PER_TOKEN / 8)
    assert [p.name for p in phases(st, sc.kind)] == ["prefill", "KV transfer", "decode"]
    streamed = stages(sc.replace(kv_transfer_layerwise=True))
    assert streamed[1].start_s < streamed[0].end_s < streamed[1].end_s  # layer-wise: inside the prefill


def test_a_pooled_scenario_survives_a_session_file(llama70b):
    from trinity_desktop import session_file

    sc = llama70b.replace(prefill_gpus=16, decode_gpus=8, prefill_tp=4, kv_transfer_layerwise=True)
    assert session_file.loads(session_file.dumps(sc))[0] == sc


def test_notes_say_whose_numbers_the_rest_are_and_which_pool_does_not_fit(llama70b, pooled):
    assert pooled.notes[-1].startswith("Disaggregated: prefill pool 8 GPUs (TP8 PP1)")
    tp1 = evaluate(llama70b.replace(prefill_gpus=8, decode_gpus=8, prefill_tp=1))  # 70B in bf16 on one 80 GB GPU
    assert not tp1.disaggregated.prefill_fits and tp1.disaggregated.decode_fits
    assert tp1.notes[-1] == "The prefill instance does not fit in HBM: its rate is computed, it would not run."


def test_plan_infer_compares_pools_with_aggregated_and_calc_infer_reproduces_the_pools():
    opts = ["--model", "opt-13b", "--hardware", "a100-80gb-sxm", "--gen-len", "256"]
    rep = main_json("plan", "infer", *opts, "--gpus", "8", "--prompt-len", "512", "--ttft-slo", "0.25",
                    "--tpot-slo", "0.03", "--max-batch", "256", "--compare-disaggregated")
    cmp = rep["disaggregated_comparison"]
    lay = cmp["disaggregated"]["layout"]
    assert cmp["disaggregated_over_aggregated"] > 1.0
    calc = main_json("calc", "infer", *opts, "--prompt-len", "512", "--gpus", str(lay["decode_tp"] * lay["decode_pp"]),
                     "--pp", str(lay["decode_pp"]), "--batch", str(lay["batch"]),
                     "--prefill-gpus", str(lay["prefill_instances"] * lay["prefill_tp"] * lay["prefill_pp"]),
                     "--decode-gpus", str(lay["decode_instances"] * lay["decode_tp"] * lay["decode_pp"]),
                     "--prefill-tp", str(lay["prefill_tp"]), "--prefill-pp", str(lay["prefill_pp"]))
    assert calc["disaggregated"]["requests_per_s"] == pytest.approx(cmp["disaggregated"]["requests_per_s"], rel=1e-9)
