"""The serving planner's speculative axis (#23, model/search/speculative_search.py): γ searched beside the layout
for a draft model or MTP modules at a given acceptance rate, checked against `evaluate` of each layout and a
hand-derived Leviathan case. The search rate is printed (the #23 target is >= 10^6 layouts/s)."""

from __future__ import annotations

import json

import pytest

from trinity_desktop.__main__ import main
from trinity_desktop.model import evaluate
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.search.serving_planner import plan_serving, scenario_for, serving_space
from trinity_desktop.model.search.speculative_search import SpeculativeSetting

LLAMA, H100 = model_presets()["llama-3-70b"], hardware_presets()["h100-sxm"]
DRAFT = {"draft_model": "llama-3.2-1b", "acceptance": 0.7}


@pytest.fixture(scope="module")
def plan():
    space = serving_space(LLAMA, H100, 8, max_batch=1024)
    p = plan_serving(LLAMA, H100, 8, 1024, 256, space=space, gpus_per_node=8, **DRAFT)
    print(f"\nspeculative serving planner: {p.configurations_evaluated / p.search_seconds:,.0f} layouts/s "
          f"({p.configurations_evaluated:,} in {p.search_seconds:.3f} s)")
    return p


def test_gamma_axis_of_a_setting():
    assert SpeculativeSetting().draft_tokens == (0,)
    assert SpeculativeSetting(draft_model="llama-3.2-1b").draft_tokens == tuple(range(9))
    assert SpeculativeSetting(mtp_depth=2).draft_tokens == (0, 1, 2)
    assert SpeculativeSetting(mtp_depth=1).fields(1) == {"draft_model": "", "mtp_depth": 1}


def test_gamma_multiplies_the_space(plan):
    """Nine γ values (0 = plain, 1 ... 8) times the plain layouts."""
    assert plan.configurations_evaluated == 9 * serving_space(LLAMA, H100, 8, max_batch=1024).size


def test_fastest_layout_speculates_and_matches_evaluate(plan):
    """At the low-latency end of the front the verify step is HBM-bound and speculation helps; the planner's TPOT
    of that layout is evaluate's speculative TPOT, (γ · t_draft + t_verify) / E (Leviathan et al. 2023, Eq. 1)."""
    fast = min(plan.pareto, key=lambda c: c.tpot_s)
    lay = fast.layout
    assert lay["draft_tokens"] > 0 and lay["draft_model"] == "llama-3.2-1b"
    spec = evaluate(scenario_for(LLAMA, H100, 1024, 256, lay, gpus_per_node=8, acceptance=0.7)).speculative
    g, a = lay["draft_tokens"], 0.7
    e = (1 - a ** (g + 1)) / (1 - a)
    assert spec.expected_tokens_per_step == pytest.approx(e)
    assert fast.tpot_s == pytest.approx((g * spec.draft_step_s + spec.verify_step_s) / e, rel=1e-9)
    assert fast.speedup > 1.5


def test_planner_picks_the_gamma_evaluate_finds_best(plan):
    """For the fastest layout, the γ the planner chose is the one of 1 ... 8 with the lowest TPOT when each is
    evaluated on its own (brute force through the scalar path)."""
    lay = dict(min(plan.pareto, key=lambda c: c.tpot_s).layout)
    tpots = {}
    for g in range(1, 9):
        sc = scenario_for(LLAMA, H100, 1024, 256, {**lay, "draft_tokens": g}, gpus_per_node=8, acceptance=0.7)
        tpots[g] = evaluate(sc).speculative.time_per_output_token_s
    assert min(tpots, key=tpots.get) == lay["draft_tokens"]


def test_hand_derived_leviathan_case():
    """α = 0.7, γ = 3: E = (1 − 0.7⁴) / 0.3 = 0.7599 / 0.3 = 2.533 tokens per target step."""
    from trinity_desktop.model.formulas.speculative import expected_tokens_per_step

    assert float(expected_tokens_per_step(0.7, 3)) == pytest.approx(2.533, abs=1e-3)


def test_large_batch_throughput_best_does_not_speculate(plan):
    """Without targets the throughput-best layout runs a large batch, where the verify step is compute-bound and
    γ + 1 tokens cost up to γ + 1 steps: the planner keeps plain decode there (γ = 0)."""
    assert plan.best.layout["batch"] >= 256 and plan.best.layout["draft_tokens"] == 0
    assert plan.best.speedup == 1.0


def test_cli_plan_infer_with_mtp(capsys):
    assert main(["plan", "infer", "--model", "deepseek-v3", "--hardware", "h200-sxm", "--gpus", "8", "--prompt-len",
          "1024", "--gen-len", "256", "--tpot-slo", "0.05", "--max-batch", "8", "--mtp", "1", "--acceptance",
          "0.85", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["best"]["layout"]["mtp_depth"] in (0, 1) and "draft_tokens" in rep["best"]["layout"]
    sped = [c for c in rep["pareto"] if c["layout"]["draft_tokens"] == 1]
    assert sped and all(c["speculative_speedup"] > 1 for c in sped if c["layout"]["batch"] == 1)


def test_cli_rate_with_a_draft_is_refused_in_one_line(capsys):
    argv = ["plan", "infer", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "8", "--prompt-len",
            "1024", "--gen-len", "256", "--rate", "2", "--draft-model", "llama-3.2-1b"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "does not search speculative decoding" in err and "Traceback" not in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(("model", "hw", "layout", "setting"), [
    ("llama-3-70b", "h100-sxm", dict(tp=4, pp=2, attention_dp=1, ep=1, batch=4), dict(draft_model="llama-3.2-1b",
                                                                                      acceptance=0.7)),
    ("deepseek-v3", "h200-sxm", dict(tp=1, pp=1, attention_dp=8, ep=8, batch=64), dict(mtp_depth=1, acceptance=0.85)),
])
def test_grid_speculative_tpot_is_evaluates(model, hw, layout, setting):
    """The planner's grid TPOT of one layout at each γ equals `evaluate`'s speculative TPOT of that layout (the
    scalar path): the search ranks layouts by the numbers `calc infer` prints."""
    import numpy as np

    from trinity_desktop.model.base.dtypes import BYTES_PER_ELEMENT
    from trinity_desktop.model.inputs.scenario import Scenario
    from trinity_desktop.model.search.speculative_search import speculative_layouts, split_setting
    from trinity_desktop.model.step.evaluation import evaluate_grid

    m, h = model_presets()[model], hardware_presets()[hw]
    spec, _ = split_setting(setting)
    base = Scenario(hardware=h, model=m, kind="decode", gpus=layout["tp"], batch=1, prompt_len=1024, gen_len=256,
                    weight_dtype="fp8", gpus_per_node=8)
    axes = {k: np.asarray([[v]]) for k, v in layout.items()} | {"kv_bytes": np.asarray([[BYTES_PER_ELEMENT["fp8"]]])}
    out = evaluate_grid(base, **axes)
    grid = speculative_layouts(base, axes, out, spec, evaluate_grid)["tpot_s"].reshape(-1)
    for g in spec.draft_tokens[1:]:
        lay = {**layout, "replicas": 1, "weight_dtype": "fp8", "kv_dtype": "fp8", "kv_offload": 0.0,
               "draft_tokens": g, **spec.fields(g)}
        r = evaluate(scenario_for(m, h, 1024, 256, lay, gpus_per_node=8, acceptance=spec.acceptance))
        assert grid[g] == pytest.approx(r.speculative.time_per_output_token_s, rel=1e-9)
