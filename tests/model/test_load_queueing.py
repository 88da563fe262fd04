"""The load model (model/search/load.py, model/formulas/queueing.py) and the capacity planner: hand-derived cases,
a seeded discrete-event simulation of continuous batching with chunked prefill at three loads, a published vLLM
capacity measurement, and the CLI.

The simulation is the scheduler the model describes, run step by step: Poisson arrivals; each step runs every
decoding request's token, then fills the budget C with prompt chunks in arrival order (a request starts its
prefill while the KV capacity has room); the step lasts T(b, c) = TPOT(b) + c p (F + c p with no decode), the same
step costs the model uses, so the comparison checks the queueing approximation alone.

Tolerances at ρ = λ / λ_sat = 0.3, 0.6, 0.85, from the model's stated approximations (the exponential tail of the
M/D/1 wait with the last chunk step's fill, a mean-field decode batch): measured over three configurations
(Llama-3-8B 1024 → 128 and 4096 → 256, Llama-3-70B TP4 512 → 512) and seeds 1-3 of 8,000 requests, the model's
TTFT p50 was −16% to +14% of the simulation's, TTFT p95 +3% to +27% (the model's tail is the heavier: its
capacity within a TTFT target errs low), TPOT p50 −9% to +1%, TPOT p95 −13% to +2%. So 20% on each, 30% on TTFT
p95; the simulation's own p95 moves by up to ~13% between seeds at ρ = 0.3 (a rare-event quantile).
"""

from __future__ import annotations

import json
from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinity_desktop.cli import run_cli
from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.formulas.queueing import md1_mean_wait, normal_quantile, wait_cdf, wait_quantile
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.search.capacity_planner import plan_capacity
from trinity_desktop.model.search.load import (
    load_at,
    load_report,
    max_rate_within_slo,
    saturation_rate,
    step_costs,
)

TOLERANCE = {"ttft_p50_s": 0.2, "ttft_p95_s": 0.3, "tpot_p50_s": 0.2, "tpot_p95_s": 0.2}
LOADS = (0.3, 0.6, 0.85)


def simulate(costs, rate: float, n_requests: int = 8000, seed: int = 1, warmup: float = 0.1) -> dict:
    """p50/p95 TTFT and TPOT of the step-level simulation (module docstring), the first `warmup` share dropped."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1.0 / rate, n_requests))
    s, g, budget_c = int(round(float(costs.prompt_tokens))), costs.gen_tokens, costs.chunk_tokens
    cap, p = int(costs.max_running), float(costs.prefill_token_s)
    step_s = [float(costs.fixed_s)] + [float(x) for x in costs.decode_s(np.arange(1, cap + 1, dtype=float))]
    first, done = np.full(n_requests, np.nan), np.full(n_requests, np.nan)
    queue, running = deque(), deque()  # [index, prompt tokens left]; (index, step of its last token)
    t, step, nxt, finished = 0.0, 0, 0, 0
    while finished < n_requests:
        while nxt < n_requests and arrivals[nxt] <= t:
            queue.append([nxt, s])
            nxt += 1
        b = len(running)
        if b == 0 and not queue:
            t = arrivals[nxt]
            continue
        budget, chunk, started, completed = budget_c - b, 0, 0, []
        for entry in queue:
            if budget <= 0 or b + started >= cap:
                break
            take = min(budget, entry[1])
            entry[1] -= take
            budget -= take
            chunk += take
            started += 1
            if entry[1] == 0:
                completed.append(entry[0])
        t += step_s[b] + chunk * p
        step += 1
        while running and running[0][1] == step:
            done[running.popleft()[0]] = t
            finished += 1
        for idx in completed:
            queue.popleft()
            first[idx] = t
            running.append((idx, step + g - 1))
    keep = slice(int(warmup * n_requests), None)
    ttft, tpot = (first - arrivals)[keep], ((done - first) / (g - 1))[keep]
    return {"ttft_p50_s": np.percentile(ttft, 50), "ttft_p95_s": np.percentile(ttft, 95),
            "tpot_p50_s": np.percentile(tpot, 50), "tpot_p95_s": np.percentile(tpot, 95)}


def scenario(model="llama-3-8b", hardware="h100-sxm", **kw) -> Scenario:
    fields = {"kind": "decode", "gpus": 1, "prompt_len": 1024, "gen_len": 128, **kw}
    return Scenario(hardware=hardware_presets()[hardware], model=model_presets()[model], **fields)


@pytest.fixture(scope="module")
def llama8b():
    sc = scenario()
    costs = step_costs(sc)
    return sc, costs, float(saturation_rate(costs))


@pytest.fixture(scope="module")
def long_prompt():
    costs = step_costs(scenario(prompt_len=4096, gen_len=256))  # prompts longer than the 2048-token budget
    return costs, float(saturation_rate(costs))


def test_md1_mean_wait_and_quantiles_by_hand():
    assert md1_mean_wait(0.5, 1.0) == pytest.approx(0.5)          # ρ = 0.5: 0.5 · 1 / (2 · 0.5)
    assert md1_mean_wait(0.9, 1.0) == pytest.approx(4.5)          # ρ = 0.9: 0.9 / 0.2
    assert np.isinf(md1_mean_wait(1.0, 1.0))
    assert normal_quantile(0.95) == pytest.approx(1.644854, abs=1e-6)
    assert normal_quantile(0.5) == pytest.approx(0.0, abs=1e-12)
    # no residual: P(W ≤ t) = 1 − ρ e^(−t/θ), θ = W_q / ρ; its quantile ln(ρ / (1 − q)) θ where q > 1 − ρ
    rho, wq = 0.6, 0.3
    assert float(wait_cdf(0.0, rho, wq, 0.0, 1.0)) == pytest.approx(1 - rho)
    assert float(wait_quantile(0.95, rho, wq, 0.0, 1.0)) == pytest.approx(0.5 * np.log(0.6 / 0.05), rel=1e-6)
    assert float(wait_quantile(0.3, rho, wq, 0.0, 1.0)) == pytest.approx(0.0, abs=1e-9)  # inside the atom
    # no queue, always a step running: R uniform on [0, T], its median T / 2
    assert float(wait_quantile(0.5, 0.0, 0.0, 1.0, 0.02)) == pytest.approx(0.01, rel=1e-6)


def test_vanishing_rate_gives_the_core_prefill_and_decode(llama8b):
    """At λ → 0 a request is alone: TTFT = the core's prefill (F + s p), TPOT = the core's batch-1 decode step."""
    sc, costs, _ = llama8b
    st = load_at(costs, 1e-9)
    r = evaluate(sc)
    assert float(st.ttft_p50_s) == pytest.approx(r.infer["prefill_s"], rel=1e-6)
    assert float(st.tpot_p50_s) == pytest.approx(r.infer["time_per_output_token_s"], rel=1e-6)
    assert float(st.tpot_p95_s) == pytest.approx(r.infer["time_per_output_token_s"], rel=1e-4)


@pytest.mark.parametrize("load", LOADS)
def test_model_against_discrete_event_simulation(llama8b, long_prompt, load):
    for costs, sat in ((llama8b[1], llama8b[2]), long_prompt):
        st, sim = load_at(costs, load * sat), simulate(costs, load * sat)
        assert bool(st.stable)
        for name, measured in sim.items():
            assert float(getattr(st, name)) == pytest.approx(measured, rel=TOLERANCE[name]), (load, name)


def test_latencies_rise_with_rate_and_the_slo_rate_meets_the_targets(llama8b):
    _, costs, sat = llama8b
    st = load_at(costs, np.array([0.1, 0.4, 0.7, 0.95]) * sat)
    for name in ("ttft_p50_s", "ttft_p95_s", "tpot_p50_s", "tpot_p95_s"):
        assert np.all(np.diff(getattr(st, name)) > 0), name
    assert not bool(load_at(costs, 1.01 * sat).stable)
    best = float(max_rate_within_slo(costs, 0.1, 0.02, sat))
    assert 0 < best < sat
    at, above = load_at(costs, best), load_at(costs, 1.01 * best)
    assert float(at.ttft_p95_s) <= 0.1 and float(at.tpot_p95_s) <= 0.02
    assert float(above.ttft_p95_s) > 0.1 or float(above.tpot_p95_s) > 0.02
    assert float(max_rate_within_slo(costs, 1e-4, 0.0, sat)) == 0.0  # below the bare prefill: no rate meets it


def test_load_is_off_by_default_and_refuses_bad_input():
    sc = scenario()
    assert sc.request_rate == 0.0 and sc.ttft_slo_s == 0.0 and sc.tpot_slo_s == 0.0
    with pytest.raises(ValidationError, match="request_rate"):
        load_report(sc)
    with pytest.raises(ValidationError, match="request_rate"):
        scenario(request_rate=-1.0)
    with pytest.raises(ValidationError, match="gen_len"):
        load_report(scenario(gen_len=1, request_rate=1.0))
    # 70B in bf16 on one 24 GB card: nothing runs, said in words, no NaN or infinity in the report
    rep = load_report(scenario("llama-3-70b", "rtx-4090", request_rate=1.0))
    assert not rep.stable and rep.max_running == 0 and rep.saturation_rate_per_s == 0.0
    assert "do not fit" in rep.finding and rep.ttft_p95_s is None
    json.dumps(rep.as_json(), allow_nan=False)


def test_published_vllm_capacity_mistral_7b_rtx_4090():
    """mushfiqrahman-mistral7b-4090: vLLM, 256 → 128 tokens, 16 concurrent requests: 6.44 req/s. A closed loop of N
    requests is taken as the open model at the rate whose requests in the system, λ (TTFT + (g − 1) τ) (Little),
    are N. The model gives 4.7 req/s: 27% short (its batch-1 decode step, 19.3 ms, is slower than the 14.6 ms the
    measurement implies); stated, not fitted."""
    costs = step_costs(scenario("mistral-7b", "rtx-4090", prompt_len=256, gen_len=128))
    sat = float(saturation_rate(costs))
    lo, hi = 0.0, sat
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        st = load_at(costs, mid)
        inside = mid * (float(st.ttft_p50_s) + 127 * float(st.step_s)) if bool(st.stable) else np.inf
        lo, hi = (mid, hi) if inside < 16 else (lo, mid)
    assert lo == pytest.approx(6.44, rel=0.35)
    assert lo < 6.44  # the model is conservative here


def test_capacity_planner_fewest_gpus_and_its_replica_meets_the_targets():
    plan = plan_capacity(model_presets()["llama-3-8b"], hardware_presets()["h100-sxm"], 40.0, 1024, 128,
                         ttft_slo_s=0.2, tpot_slo_s=0.03, max_replica_gpus=4, gpus_per_node=8)
    lay = plan.layout
    assert plan.gpus == lay["replicas"] * lay["tp"] * lay["pp"]
    load = plan.replica_load
    assert load.rate_per_s == pytest.approx(40.0 / lay["replicas"])
    assert load.ttft_p95_s <= 0.2 and load.tpot_p95_s <= 0.03
    assert 40.0 / (lay["replicas"] - 1 or 1e-9) > plan.max_rate_per_replica  # one replica fewer would not do
    assert plan.layouts_meeting_targets <= plan.layouts_searched


def test_cli_calc_infer_rate_and_plan_infer_rate(capsys):
    assert run_cli(["calc", "infer", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--prompt-len", "1024",
                    "--gen-len", "128", "--rate", "4", "--ttft-slo", "0.5", "--tpot-slo", "0.03", "--json"]) == 0
    load = json.loads(capsys.readouterr().out)["load"]
    assert {"ttft_p50_s", "ttft_p95_s", "tpot_p50_s", "tpot_p95_s", "max_rate_within_slo"} <= set(load)
    assert load["ttft_p50_s"] <= load["ttft_p95_s"] and 4 < load["max_rate_within_slo"] < load["saturation_rate_per_s"]
    assert run_cli(["calc", "infer", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--json"]) == 0
    assert "load" not in json.loads(capsys.readouterr().out)  # off by default
    assert run_cli(["calc", "infer", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--rate", "x"]) == 2
    assert "--rate" in capsys.readouterr().err
    assert run_cli(["plan", "infer", "--model", "llama-3-8b", "--hardware", "h100-sxm", "--gpus", "2", "--prompt-len",
                    "1024", "--gen-len", "128", "--rate", "30", "--ttft-slo", "0.2", "--tpot-slo", "0.03"]) == 0
    assert "fewest GPUs" in capsys.readouterr().out


@settings(max_examples=20, deadline=None)
@given(load=st.floats(0.01, 0.99), factor=st.floats(1.05, 3.0))
def test_property_quantiles_ordered_and_rising_with_rate(llama8b, load, factor):
    """Below saturation: p50 ≤ p95, TTFT at least the bare prefill, TPOT at least the batch-1 step, both rising with
    the rate; any rate above saturation is not stable."""
    sc, costs, sat = llama8b
    low, high = load_at(costs, load * sat / factor), load_at(costs, load * sat)
    for state in (low, high):
        assert bool(state.stable)
        assert float(state.ttft_p50_s) <= float(state.ttft_p95_s)
        assert float(state.tpot_p50_s) <= float(state.tpot_p95_s)
        assert float(state.ttft_p50_s) >= float(costs.prompt_tokens * costs.prefill_token_s + costs.fixed_s) * (1 - 1e-9)
        assert float(state.tpot_p50_s) >= float(costs.decode_s(1.0)) * (1 - 1e-9)
    for name in ("ttft_p95_s", "tpot_p95_s", "tpot_p50_s"):
        assert float(getattr(high, name)) >= float(getattr(low, name)) * (1 - 1e-9), name
    assert not bool(load_at(costs, sat * factor).stable)
