"""Prefill runs the LM head on the last prompt token of each sequence only (key "prefill-last-token-logits":
TensorRT-LLM's return_context_logits and llama.cpp's logits_all are off by default; vLLM projects only the
selected_token_indices), so its weight FLOPs are 2 · (L · W_layer · b · s + h · V · b), hand-derived here."""

from __future__ import annotations

import pytest

from trinity_desktop.model import Scenario, evaluate_grid
from trinity_desktop.model.formulas.flops import attention_core_flops_per_token
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets

HW, MODELS = hardware_presets(), model_presets()


def _prefill_flops(model, batch, prompt_len):
    sc = Scenario(hardware=HW["h100-sxm"], model=model, kind="decode", gpus=1, batch=batch,
                  prompt_len=prompt_len, gen_len=1)
    return float(evaluate_grid(sc).prefill_flops)


@pytest.mark.parametrize("batch, prompt_len", [(1, 2048), (8, 512)])
def test_llama2_7b_prefill_computes_the_lm_head_once_per_sequence(batch, prompt_len):
    """Llama 2 7B: 32 layers x 202.4M matmul weights x b·s tokens, plus 4,096 x 32,000 once per sequence."""
    m = MODELS["llama-2-7b"]
    tokens = batch * prompt_len
    layers = 2.0 * m.layers * m.matmul_params_active_per_layer() * tokens
    head = 2.0 * m.hidden * m.vocab * batch
    attention = m.layers * tokens * attention_core_flops_per_token(prompt_len / 2.0, m.heads, m.qk_dim, m.v_dim)
    assert _prefill_flops(m, batch, prompt_len) == pytest.approx(layers + head + attention, rel=1e-9)


def test_the_prefill_head_does_not_grow_with_the_prompt():
    """Doubling the prompt doubles the layers' FLOPs but not the head's."""
    m = MODELS["llama-2-7b"]
    f1, f2 = _prefill_flops(m, 1, 1024), _prefill_flops(m, 1, 2048)
    def attn(s):
        return m.layers * s * attention_core_flops_per_token(s / 2.0, m.heads, m.qk_dim, m.v_dim)
    head = 2.0 * m.hidden * m.vocab
    assert (f2 - attn(2048)) - 2.0 * (f1 - attn(1024)) == pytest.approx(-head, rel=1e-9)
