"""`--model-file config.json`: a Hugging Face config of each architecture family loads into an Architecture whose
parameter count matches the published total, and a malformed or unsupported config is refused in one line.

The fixtures in hf_configs/ carry the real field names and values of the published configs (copies read:
references.toml `hf-config-json`).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trinity_desktop.__main__ import main
from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.inputs.hf_config import architecture_from_hf_config
from trinity_desktop.model.inputs.presets import PresetError, hardware_presets, load_model_file, model_presets

CONFIGS = Path(__file__).parent / "hf_configs"

# (fixture folder, published total, published active per token, source of the published figures, tolerance)
PUBLISHED = [
    ("llama-3.1-8b", 8e9, None, "llama3-model-card: '8B' (size name)", 0.01),
    ("qwen2.5-7b-instruct", 7.61e9, None, "qwen25-model-card: 'Number of Parameters: 7.61B'", 0.01),
    ("deepseek-v3", 671e9, 37e9, "deepseek-v3: 671B total, 37B activated (abstract)", 0.02),
    ("mixtral-8x7b", 46.7e9, 12.9e9, "mixtral: 46.7B total, 12.9B active per token", 0.01),
    ("mistral-7b-v0.1", 7.24e9, None, "huggingface-model-pages: 7.24B (models.toml mistral-7b)", 0.01),
]


def load(folder: str):
    [arch] = load_model_file(CONFIGS / folder / "config.json")
    return arch


@pytest.mark.parametrize(("folder", "total", "active", "source", "rel"), PUBLISHED)
def test_parameter_count_matches_the_published_total(folder, total, active, source, rel):
    arch = load(folder)
    assert arch.params_total() == pytest.approx(total, rel=rel), source
    if active is not None:
        assert arch.params_active() == pytest.approx(active, rel=rel), source


def test_dense_llama():
    arch = load("llama-3.1-8b")
    assert (arch.layers, arch.hidden, arch.heads, arch.kv_heads, arch.head_dim) == (32, 4096, 32, 8, 128)
    assert (arch.ffn_hidden, arch.vocab, arch.max_seq) == (14336, 128256, 131072)
    assert arch.attention == "gqa" and not arch.is_moe and not arch.tied_embeddings and arch.sliding_window == 0
    # the same shape as the Llama-3-8B preset: the same count to the parameter
    assert arch.params_total() == model_presets()["llama-3-8b"].params_total()


def test_gqa_qwen_with_its_window_switched_off():
    arch = load("qwen2.5-7b-instruct")
    assert arch.key == "qwen2.5-7b-instruct" and arch.name == "Qwen2.5-7B-Instruct"  # from _name_or_path
    assert (arch.heads, arch.kv_heads, arch.head_dim) == (28, 4, 128)
    assert arch.kv_width == 4 * 128  # GQA caches 4 KV heads, not 28
    assert arch.sliding_window == 0  # "use_sliding_window": false


def test_mla_and_moe_deepseek_v3():
    arch = load("deepseek-v3")
    assert arch.attention == "mla" and arch.kv_tensors == 1
    assert arch.kv_width == 512 + 64  # kv_lora_rank + qk_rope_head_dim: one latent per token per layer
    assert (arch.q_lora_rank, arch.qk_nope_head_dim, arch.v_head_dim, arch.qk_dim) == (1536, 128, 128, 192)
    assert (arch.experts, arch.experts_per_token, arch.shared_experts) == (256, 8, 1)
    assert (arch.moe_ffn_hidden, arch.ffn_hidden, arch.dense_layers, arch.moe_layers) == (2048, 18432, 3, 58)
    preset = model_presets()["deepseek-v3"]
    assert (arch.params_total(), arch.params_active()) == (preset.params_total(), preset.params_active())


def test_moe_mixtral():
    arch = load("mixtral-8x7b")
    assert (arch.experts, arch.experts_per_token, arch.moe_ffn_hidden, arch.dense_layers) == (8, 2, 14336, 0)
    assert arch.sliding_window == 0  # "sliding_window": null
    preset = model_presets()["mixtral-8x7b"]
    assert (arch.params_total(), arch.params_active()) == (preset.params_total(), preset.params_active())


def test_sliding_window_mistral_on_every_layer():
    arch = load("mistral-7b-v0.1")
    assert arch.sliding_window == 4096 and arch.global_layers == 0 and arch.window_layer_share == 1.0
    assert arch.params_total() == model_presets()["mistral-7b"].params_total()


BASE = {"model_type": "gemma2", "num_hidden_layers": 42, "hidden_size": 3584, "num_attention_heads": 16,
        "num_key_value_heads": 8, "head_dim": 256, "intermediate_size": 14336, "vocab_size": 256000,
        "max_position_embeddings": 8192, "sliding_window": 4096}


def test_gemma2_alternates_windowed_and_global_layers():
    arch = architecture_from_hf_config(BASE, "gemma-2-like")
    assert arch.sliding_window == 4096 and arch.global_layers == 21 and arch.window_layer_share == 0.5
    assert arch.tied_embeddings  # Gemma ties the head to the embedding unless the config says otherwise
    assert arch.head_dim == 256  # explicit, not hidden / heads = 224


def test_explicit_layer_types_and_qwen_window_layers():
    types = ["sliding_attention", "sliding_attention", "full_attention"] * 14
    arch = architecture_from_hf_config({**BASE, "model_type": "llama", "layer_types": types}, "x")
    assert arch.global_layers == 14
    qwen = {**BASE, "model_type": "qwen2", "use_sliding_window": True, "max_window_layers": 10}
    assert architecture_from_hf_config(qwen, "q").global_layers == 10  # the first 10 layers attend fully


def test_gemma3_wrapper_with_a_window_pattern():
    """A multimodal Gemma-3 config: the language model's fields sit in `text_config`; one layer in six is global."""
    text = {"model_type": "gemma3_text", "hidden_size": 3840, "intermediate_size": 15360, "num_hidden_layers": 48,
            "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "vocab_size": 262208,
            "max_position_embeddings": 131072, "sliding_window": 1024, "sliding_window_pattern": 6}
    arch = architecture_from_hf_config({"model_type": "gemma3", "text_config": text}, "gemma-3")
    assert (arch.sliding_window, arch.global_layers, arch.tied_embeddings) == (1024, 8, True)


def test_a_loaded_config_evaluates_without_nan():
    hw = hardware_presets()["h200-sxm"]
    arch = load("deepseek-v3")
    decode = evaluate(Scenario(hardware=hw, model=arch, kind="decode", gpus=16, batch=8, weight_dtype="fp8"))
    train = evaluate(Scenario(hardware=hw, model=load("llama-3.1-8b"), kind="train", gpus=8, tp=8))
    for r in (decode, train):
        assert math.isfinite(r.time_total) and r.time_total > 0 and math.isfinite(r.memory_total)
    assert decode.params_total == arch.params_total()


# --- refusals: one line naming the field ---------------------------------------------------------------------

LLAMA = json.loads((CONFIGS / "llama-3.1-8b" / "config.json").read_text())
BAD = [
    ({"model_type": "gpt2", "n_embd": 768}, "model_type", "'gpt2' is not supported"),
    ({k: v for k, v in LLAMA.items() if k != "model_type"}, "model_type", "is required"),
    ({k: v for k, v in LLAMA.items() if k != "num_hidden_layers"}, "num_hidden_layers", "is required"),
    ({**LLAMA, "hidden_size": "4096"}, "hidden_size", "must be a whole number"),
    ({**LLAMA, "hidden_size": 4096.0}, "hidden_size", "must be a whole number"),
    ({**LLAMA, "num_attention_heads": True}, "num_attention_heads", "must be a whole number"),
    ({**LLAMA, "num_key_value_heads": 5}, "num_key_value_heads", "a divisor of heads"),
    ({**LLAMA, "vocab_size": 0}, "vocab_size", ">= 1"),
    ({**LLAMA, "hidden_size": 4100}, "head_dim", "is required when hidden_size"),
    ({**LLAMA, "tie_word_embeddings": "no"}, "tie_word_embeddings", "true or false"),
    ({**LLAMA, "num_local_experts": 8}, "num_experts_per_tok", "is required"),
    ({**LLAMA, "num_local_experts": 8, "num_experts_per_tok": 9}, "num_experts_per_tok", "at most experts"),
    ({**LLAMA, "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_layer_freq": 2}, "moe_layer_freq", "only 1"),
    ({**LLAMA, "kv_lora_rank": 512}, "qk_nope_head_dim", "is required"),
    ({**LLAMA, "sliding_window": 4096, "layer_types": ["full_attention"]}, "layer_types", "must list 32"),
    ({**LLAMA, "num_hidden_layers": 1 << 40}, "num_hidden_layers", "is not allowed"),
]


@pytest.mark.parametrize(("doc", "field", "says"), BAD)
def test_a_bad_config_is_refused_naming_the_field(tmp_path, doc, field, says):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(PresetError) as info:
        load_model_file(path)
    assert info.value.key == field
    assert says in info.value.problem and "\n" not in str(info.value)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(("text", "says"), [("{\"model_type\": \"llama\",", "line 1"), ("[1, 2]", "one object"),
                                             ('{"hidden_size": NaN}', "NaN"), ("[" * 100000, "nested too deeply"),
                                             ("", "Expecting value")])
def test_text_that_is_not_a_config_object_is_refused(tmp_path, text, says):
    path = tmp_path / "model.json"
    path.write_text(text)
    with pytest.raises(PresetError) as info:
        load_model_file(path)
    assert info.value.key == "JSON" and says in info.value.problem


def test_unreadable_files_are_refused(tmp_path):
    with pytest.raises(PresetError, match="file: cannot be read"):
        load_model_file(tmp_path / "missing.json")
    (tmp_path / "latin1.json").write_bytes(b'{"model_type": "ll\xe4ma"}')
    with pytest.raises(PresetError, match="UTF-8"):
        load_model_file(tmp_path / "latin1.json")


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2, 1 << 20) | st.floats(allow_nan=False)
                           | st.text(max_size=8), lambda inner: st.lists(inner, max_size=3), max_leaves=5)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(sorted(LLAMA) + ["n_routed_experts", "kv_lora_rank", "sliding_window", "layer_types"]),
       value=JSON_VALUES)
def test_any_edit_of_a_config_loads_or_is_refused_with_a_message(field, value):
    """Invariant: whatever one field holds, the loader returns an Architecture or raises PresetError."""
    text = json.dumps({**LLAMA, field: value})
    try:
        [arch] = load_model_file("edited.json", text)
    except PresetError as exc:
        assert exc.key and exc.problem and "\n" not in str(exc)
    else:
        assert arch.params_total() > 0


# --- the command line --------------------------------------------------------------------------------------

def test_calc_infer_with_a_config_json(capsys):
    path = str(CONFIGS / "mixtral-8x7b" / "config.json")
    assert main(["calc", "infer", "--model-file", path, "--hardware", "h100-sxm", "--gpus", "2", "--batch", "4",
                 "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["params_total"] == pytest.approx(46.7e9, rel=0.01)
    # GQA: 8 KV heads x 128 x K and V x 2 bytes x 32 layers per token
    assert rep["kv_cache_bytes_per_token"] == pytest.approx(2 * 8 * 128 * 2 * 32)


def test_cli_refuses_a_bad_config_in_one_line(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "gpt2"}))
    proc = subprocess.run([sys.executable, "-m", "trinity_desktop", "calc", "infer", "--model-file", str(path),
                           "--hardware", "h100-sxm"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "model_type: 'gpt2' is not supported" in proc.stderr
    assert "Traceback" not in proc.stderr
