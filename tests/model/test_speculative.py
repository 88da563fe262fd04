"""Speculative decoding and MTP (#23): Leviathan et al. 2023's expected tokens per target step (hand-derived values,
properties), the verify step from the decode formulas at γ + 1 tokens per sequence, DeepSeek-V3's published MTP
acceptance and speed-up (§5.4.3), the typed result and the CLI's `speculative` object."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinity_desktop.cli import run_cli
from trinity_desktop.model import Scenario, evaluate, evaluate_grid
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.speculative import (
    SpeculativeDecode,
    expected_tokens_per_step,
    improvement_factor,
    speedup,
    time_per_output_token,
)
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.step.speculative_step import speculative_grid

MODELS, HARDWARE = model_presets(), hardware_presets()


def _llama70b(**changes) -> Scenario:
    base = Scenario(hardware=HARDWARE["h100-sxm"], model=MODELS["llama-3-70b"], kind="decode", gpus=8, batch=1,
                    draft_model="llama-3.2-1b", draft_tokens=4, acceptance=0.7)
    return base.replace(**changes)


def _deepseek_mtp(acceptance: float) -> Scenario:
    """DeepSeek-V3 in FP8 on 16 H800s (TP 16), one sequence, 2,048 + 512 tokens, one MTP module."""
    return Scenario(hardware=HARDWARE["h800-sxm"], model=MODELS["deepseek-v3"], kind="decode", gpus=16, batch=1,
                    weight_dtype="fp8", prompt_len=2048, gen_len=512, mtp_depth=1, acceptance=acceptance)


@pytest.fixture(scope="module")
def llama_small_and_large():
    """The draft-model scenario at batch 1 (HBM-bound) and 1,024 (compute-bound), evaluated once."""
    return evaluate(_llama70b()), evaluate(_llama70b(batch=1024))


@pytest.fixture(scope="module")
def deepseek_mtp():
    return {a: evaluate(_deepseek_mtp(a)).speculative for a in (0.85, 0.9)}


# --- Leviathan et al. 2023, Eq. 1 and Theorem 3.8: hand-derived values ---------------------------------------------
@pytest.mark.parametrize("alpha, gamma, expected", [
    (0.7, 4, 2.7731),     # (1 - 0.7^5) / 0.3 = (1 - 0.16807) / 0.3
    (0.5, 1, 1.5),        # (1 - 0.25) / 0.5
    (0.85, 1, 1.85),      # one MTP module: 1 + α
    (0.8, 3, 2.952),      # (1 - 0.4096) / 0.2
    (0.0, 5, 1.0),        # nothing accepted: the target's own token
    (1.0, 4, 5.0),        # the α → 1 limit, γ + 1
])
def test_expected_tokens_hand_values(alpha, gamma, expected):
    assert float(expected_tokens_per_step(alpha, gamma)) == pytest.approx(expected, abs=5e-5)


def test_improvement_factor_is_speedup_with_verify_as_long_as_decode():
    # Theorem 3.8 at α = 0.8, γ = 4, c = 0.1: (1 - 0.8^5) / (0.2 · 1.4) = 3.3616 / 1.4 = 2.40114
    assert float(improvement_factor(0.8, 4, 0.1)) == pytest.approx(2.40114, abs=1e-5)
    assert float(speedup(1.0, 0.1, 1.0, 4, 0.8)) == pytest.approx(float(improvement_factor(0.8, 4, 0.1)))
    # (4 · 1 ms + 10 ms) / 2.7731 tokens = 5.0485 ms per token
    assert float(time_per_output_token(1e-3, 10e-3, 4, 0.7)) == pytest.approx(14e-3 / 2.77310, rel=1e-5)


def test_vectorised_over_alpha_and_gamma():
    a = np.array([0.0, 0.5, 0.9])[:, None]
    g = np.array([1, 2, 8])[None, :]
    e = expected_tokens_per_step(a, g)
    assert e.shape == (3, 3)
    assert e[1, 1] == pytest.approx(1.75)  # 1 + 0.5 + 0.25


@settings(max_examples=200, deadline=None)
@given(alpha=st.floats(0.0, 1.0), gamma=st.integers(1, 16), step=st.floats(1e-3, 0.2))
def test_expected_tokens_bounded_and_monotone(alpha, gamma, step):
    e = float(expected_tokens_per_step(alpha, gamma))
    assert 1.0 - 1e-12 <= e <= gamma + 1 + 1e-9
    assert float(expected_tokens_per_step(min(alpha + step, 1.0), gamma)) >= e - 1e-9   # more accepted, more tokens
    assert float(expected_tokens_per_step(alpha, gamma + 1)) >= e - 1e-12               # more proposed, no fewer


# --- the verify step from the decode formulas --------------------------------------------------------------------
def test_verify_of_one_token_is_the_decode_step():
    """γ = 0: the verify step processes one token per sequence, exactly plain decode's step (any batch, pp)."""
    for sc in (_llama70b(), _llama70b(batch=64), _llama70b(gpus=8, pp=2, batch=8)):
        out = speculative_grid(sc, evaluate_grid, draft_tokens=0)
        assert float(out["verify_step_s"]) == pytest.approx(float(out["decode_step_s"]), rel=1e-12)


@pytest.mark.parametrize("sc", [_llama70b(), _deepseek_mtp(0.85), _llama70b(gpus=8, pp=2)])
def test_verify_step_between_one_and_gamma_plus_one_decode_steps(sc):
    """Invariant over a grid of batch x γ: a decode step ≤ the verify step ≤ (γ + 1) decode steps (weights read
    once, KV once; FLOPs, all-reduce bytes and experts touched at most (γ + 1)-fold)."""
    batch = np.array([1, 2, 8, 32, 128, 512, 2048], dtype=float)[:, None]
    gamma = np.arange(1, 9, dtype=float)[None, :]
    out = speculative_grid(sc, evaluate_grid, batch=batch, draft_tokens=gamma)
    verify, decode = out["verify_step_s"], out["decode_step_s"]
    assert verify.shape == (7, 8)
    assert np.all(verify >= decode * (1 - 1e-12)) and np.all(verify <= (gamma + 1) * decode * (1 + 1e-12))
    assert np.all(np.diff(verify, axis=1) >= 0)  # more proposed tokens never verify faster


def test_helps_when_hbm_bound_hurts_when_compute_bound(llama_small_and_large):
    small, large = (r.speculative for r in llama_small_and_large)
    # batch 1: the weights are read once for 5 tokens, the verify step costs what a decode step costs, plus its
    # 5-token TP all-reduces' measured size step on H100 (80 KB at 23.3 us against 16 KB at 20.7 us,
    # Triton-distributed #57: allreduce_latency.hopper_size_excess)
    assert small.verify_bound == "memory" and small.verify_intensity < small.ridge
    assert small.verify_cost_ratio == pytest.approx(1.0, abs=0.04)
    assert small.speedup > 1.8
    # batch 1,024: 5 tokens per sequence are 5x the GEMM FLOPs, right of the ridge; slower than plain decode
    assert large.verify_bound == "compute" and large.verify_intensity > large.ridge
    assert large.verify_cost_ratio > 2.5 and large.speedup < 1.0
    assert not large.helps and small.helps


def test_speedup_never_exceeds_tokens_per_step(llama_small_and_large):
    for r in llama_small_and_large:
        s = r.speculative
        assert s.speedup <= s.expected_tokens_per_step
        assert s.round_s == pytest.approx(s.draft_tokens * s.draft_step_s + s.verify_step_s)
        assert s.time_per_output_token_s == pytest.approx(s.round_s / s.expected_tokens_per_step)


def test_grid_matches_scalar_evaluation(llama_small_and_large):
    out = speculative_grid(_llama70b(), evaluate_grid, batch=np.array([1.0, 1024.0]))
    for i, r in enumerate(llama_small_and_large):
        assert float(out["speedup"][i]) == pytest.approx(r.speculative.speedup, rel=1e-9)


def test_off_by_default_changes_nothing(llama_small_and_large):
    plain = evaluate(_llama70b(draft_model=""))
    assert plain.speculative is None
    on = llama_small_and_large[0]
    assert on.time_total == plain.time_total and dict(on.memory) == dict(plain.memory)
    assert evaluate(_llama70b(kind="prefill")).speculative is None  # drafting is a decode technique


# --- published: DeepSeek-V3 §5.4.3 -------------------------------------------------------------------------------
def test_deepseek_v3_mtp_published_speedup(deepseek_mtp):
    """85-90% acceptance of the second token gives 1.8x TPS (DeepSeek-V3 §5.4.3); one MTP module, γ = 1."""
    for alpha, s in deepseek_mtp.items():
        assert isinstance(s, SpeculativeDecode) and s.method == "mtp" and s.draft_tokens == 1
        assert s.expected_tokens_per_step == pytest.approx(1.0 + alpha)
        assert s.speedup == pytest.approx(1.8, abs=0.1)
    assert deepseek_mtp[0.9].speedup > deepseek_mtp[0.85].speedup


def test_deepseek_v3_mtp_module_is_its_published_size(deepseek_mtp):
    """The MTP module adds 11.5B parameters (DeepSeek-V3 weight README): one MoE layer, FP8, over TP 16."""
    s = deepseek_mtp[0.85]
    assert s.draft_memory_bytes * 16 == pytest.approx(11.5e9, rel=0.03)


def test_draft_that_does_not_fit_beside_the_target_is_a_warning(llama_small_and_large):
    # Llama-3-70B in bf16 over 2 H100s: 79.0 GB per device with the reserve, the 1B draft adds 1.3 GB
    r = evaluate(_llama70b(gpus=2))
    assert r.fits and any(n.startswith("Draft does not fit") for n in r.notes)
    assert not any(n.startswith("Draft") for n in llama_small_and_large[0].notes)


# --- inputs refused in one line ----------------------------------------------------------------------------------
def test_draft_must_share_the_vocabulary():
    with pytest.raises(ValidationError, match="vocabulary"):
        evaluate(_llama70b(draft_model="gpt2-medium"))
    with pytest.raises(ValidationError, match="preset"):
        evaluate(_llama70b(draft_model="no-such-model"))
    with pytest.raises(ValidationError):
        _llama70b(acceptance=1.5)


def test_cli_speculative_json(capsys):
    code = run_cli(["calc", "infer", "--model", "llama-3-70b", "--hardware", "h100-sxm", "--gpus", "8",
                 "--draft-model", "llama-3.2-1b", "--draft-tokens", "4", "--acceptance", "0.7", "--json"])
    assert code == 0
    spec = json.loads(capsys.readouterr().out)["speculative"]
    assert spec["expected_tokens_per_step"] == pytest.approx(2.7731, abs=5e-5)
    assert spec["method"] == "draft" and spec["verify_bound"] == "memory" and spec["speedup"] > 1.0
    assert all(k == k.lower() and " " not in k for k in spec)


def test_mtp_drafts_beside_serving_expert_parallelism():
    """MTP on DeepSeek-V3 served with EP 16 and DP-attention 16: the draft runs on one attention group's GPUs
    without the target's EP (it was refused with a traceback: its scenario kept EP 16 on one GPU)."""
    sc = Scenario(hardware=hardware_presets()["h200-sxm"], model=model_presets()["deepseek-v3"], kind="decode",
                  gpus=16, inference_ep=16, attention_dp=16, weight_dtype="fp8", mtp_depth=1, acceptance=0.85)
    spec = evaluate(sc).speculative
    assert spec is not None and 1.0 < spec.expected_tokens_per_step < 2.0
