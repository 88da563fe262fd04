"""A Hugging Face `config.json` read into an `Architecture`.

Families: dense (Llama), grouped-query attention (Qwen2.5, Mistral), multi-head latent attention with a mixture of
experts (DeepSeek-V3), mixture of experts (Mixtral) and sliding-window attention (Mistral's window on every layer,
Gemma-2's on every second layer, Gemma-3's on five of every six, or an explicit `layer_types` list). Field names are those of the Transformers
configuration classes (references.toml `hf-config-json`); the parameter count then follows `Architecture`'s layer
structure, so a published config reproduces its model's published total (tests/model/test_hf_config.py).

Not counted: Qwen2's biases on the Q, K and V projections (4,608 per layer on Qwen2.5-7B, 0.002% of the model) and
Gemma-2's extra post-attention and post-feed-forward norms (2 x hidden per layer).

A config that cannot be read raises `ConfigFieldError` naming the JSON field and the problem, in one line.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from trinity_desktop.model.base.errors import ValidationError, shown
from trinity_desktop.model.base.files import FileRefused, read_capped
from trinity_desktop.model.inputs.architecture import Architecture

# model_type -> whether the input embedding and the output head are tied when the config does not say.
FAMILIES: Mapping[str, bool] = {"llama": False, "mistral": False, "mixtral": False, "qwen2": False, "qwen3": False,
                                "deepseek_v2": False, "deepseek_v3": False, "gemma": True, "gemma2": True,
                                "gemma3_text": True}
EXPERT_COUNT_FIELDS = ("n_routed_experts", "num_local_experts", "num_experts")
MLA_FIELDS = ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
WINDOW_LAYER_TYPES = ("sliding_attention", "full_attention")
MAX_CONFIG_BYTES = 1_000_000


class ConfigFieldError(ValidationError):
    """A config.json field that is missing, malformed or unsupported: `field` is the JSON field's name."""

    def __init__(self, field: str, problem: str):
        ValueError.__init__(self, f"{field}: {problem}")
        self.field, self.value, self.allowed, self.problem = field, None, problem, problem

    def __str__(self) -> str:
        return f"{self.field}: {self.problem}"


def load_hf_config(path: Path | str, text: str | None = None, limit: int = MAX_CONFIG_BYTES) -> Architecture:
    """The `Architecture` of the config.json at `path` (or of `text`, its contents)."""
    if text is None:
        try:
            raw = read_capped(path, limit)
        except FileRefused as exc:
            raise ConfigFieldError("file", str(exc)) from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigFieldError("file", f"cannot be read as UTF-8 text (byte {exc.start})") from None
    try:
        doc = json.loads(text, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise ConfigFieldError("JSON", f"{exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise ConfigFieldError("JSON", "nested too deeply") from None
    except ValueError as exc:  # NaN/Infinity (refused below) or an integer too long to convert
        raise ConfigFieldError("JSON", str(exc)) from None
    if not isinstance(doc, dict):
        raise ConfigFieldError("JSON", "the file must hold one object {...} of config fields")
    return architecture_from_hf_config(doc, _default_name(doc, Path(str(path))))


def architecture_from_hf_config(doc: Mapping, name: str) -> Architecture:
    """Map the Transformers config fields onto `Architecture` (see the module docstring for the families)."""
    if "num_hidden_layers" not in doc and isinstance(doc.get("text_config"), Mapping):
        doc = {**doc, **doc["text_config"]}  # a multimodal wrapper: the language model's fields
    model_type = doc.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise ConfigFieldError("model_type", "is required (the Transformers model family, e.g. 'llama')")
    if model_type not in FAMILIES:
        raise ConfigFieldError("model_type", f"{model_type!r} is not supported (supported: {', '.join(FAMILIES)})")
    get = _Fields(doc)
    layers, hidden, heads = get.whole("num_hidden_layers"), get.whole("hidden_size"), get.whole("num_attention_heads")
    if hidden % heads and "head_dim" not in doc and "kv_lora_rank" not in doc:
        raise ConfigFieldError("head_dim", f"is required when hidden_size ({hidden}) is not a multiple of "
                                           f"num_attention_heads ({heads})")
    args = dict(key=name.lower().replace(" ", "-"), name=name, layers=layers, hidden=hidden, heads=heads,
                kv_heads=get.whole("num_key_value_heads", default=heads), head_dim=get.whole("head_dim", default=hidden // heads),
                ffn_hidden=get.whole("intermediate_size"), vocab=get.whole("vocab_size"),
                max_seq=get.whole("max_position_embeddings"), gated_mlp=True,
                tied_embeddings=get.flag("tie_word_embeddings", default=FAMILIES[model_type]),
                linear_bias=get.flag("attention_bias", default=False), norm="rmsnorm", position="rope",
                mtp_depth=get.whole("num_nextn_predict_layers", default=0, minimum=0),  # DeepSeek-V3's MTP modules
                source="hf-config-json", note=f"read from a Hugging Face config.json (model_type {model_type})")
    args.update(_attention(get, heads))
    args.update(_experts(get, args["ffn_hidden"]))
    args.update(_window(get, model_type, layers))
    try:
        return Architecture(**args)
    except ValidationError as exc:  # outside its physical range (model/base/ranges.py) or inconsistent
        arch_field = str(exc.field).rsplit(".", 1)[-1]
        raise ConfigFieldError(get.names.get(arch_field, arch_field),
                               f"{shown(exc.value)} is not allowed: {exc.allowed}") from None


def _attention(get: _Fields, heads: int) -> dict:
    """MLA (DeepSeek: a `kv_lora_rank` is present) or GQA/MHA/MQA from the KV head count."""
    if get.doc.get("kv_lora_rank") is None:
        kv = get.whole("num_key_value_heads", default=heads)
        return {"attention": "mha" if kv == heads else ("mqa" if kv == 1 else "gqa")}
    mla = {"attention": "mla", "kv_heads": heads, "q_lora_rank": get.whole("q_lora_rank", default=0, minimum=0)}
    for field in MLA_FIELDS:
        mla[field] = get.whole(field)
    mla["head_dim"] = mla["v_head_dim"]  # as resources/models.toml deepseek-v3: q/k heads are nope + rope wide
    return mla


def _experts(get: _Fields, ffn_hidden: int) -> dict:
    """Routed experts (any of the three count fields), top-k, expert width, shared experts, leading dense layers."""
    field = next((f for f in EXPERT_COUNT_FIELDS if get.doc.get(f) is not None), None)
    if field is None or get.whole(field) == 1:
        return {}
    if get.whole("moe_layer_freq", default=1) != 1:
        raise ConfigFieldError("moe_layer_freq", "only 1 (a mixture of experts on every layer after "
                                                 "first_k_dense_replace) is supported")
    get.names["experts"] = field
    return {"experts": get.whole(field), "experts_per_token": get.whole("num_experts_per_tok"),
            "moe_ffn_hidden": get.whole("moe_intermediate_size", default=ffn_hidden),
            "shared_experts": get.whole("n_shared_experts", default=0, minimum=0),
            "dense_layers": get.whole("first_k_dense_replace", default=0, minimum=0)}


def _window(get: _Fields, model_type: str, layers: int) -> dict:
    """Sliding window and the number of full-attention layers among the windowed ones."""
    doc = get.doc
    if doc.get("sliding_window") is None:
        return {}
    qwen = model_type in ("qwen2", "qwen3")
    if qwen and not get.flag("use_sliding_window", default=False):
        return {}  # Qwen configs carry a window that is off unless use_sliding_window is true
    window = get.whole("sliding_window", minimum=0)
    if window == 0:
        return {}  # 0 = no window
    types = doc.get("layer_types")
    if types is not None:
        if not isinstance(types, list) or len(types) != layers or any(t not in WINDOW_LAYER_TYPES for t in types):
            raise ConfigFieldError("layer_types", f"must list {layers} entries, each one of "
                                                  + " or ".join(repr(t) for t in WINDOW_LAYER_TYPES))
        full = types.count("full_attention")
    elif model_type == "gemma2":
        full = layers // 2  # Gemma-2 alternates local (windowed) and global layers
    elif model_type == "gemma3_text":  # every `sliding_window_pattern`-th layer is global (6 unless stated)
        pattern = get.whole("sliding_window_pattern", default=get.whole("_sliding_window_pattern", default=6))
        full = layers // pattern
    elif qwen:
        full = min(get.whole("max_window_layers", default=layers, minimum=0), layers)  # the first ones attend fully
    else:
        full = 0  # Mistral: every layer uses the window
    return {"sliding_window": window, "global_layers": full}


class _Fields:
    """Typed reads of config fields; `names` maps Architecture fields back to the JSON names for messages."""

    def __init__(self, doc: Mapping):
        self.doc = doc
        self.names = {"layers": "num_hidden_layers", "hidden": "hidden_size", "heads": "num_attention_heads",
                      "kv_heads": "num_key_value_heads", "ffn_hidden": "intermediate_size", "vocab": "vocab_size",
                      "max_seq": "max_position_embeddings", "experts_per_token": "num_experts_per_tok",
                      "moe_ffn_hidden": "moe_intermediate_size", "shared_experts": "n_shared_experts",
                      "dense_layers": "first_k_dense_replace", "global_layers": "layer_types"}

    def whole(self, name: str, default: int | None = None, minimum: int = 1) -> int:
        value = self.doc.get(name)
        if value is None:
            if default is None:
                raise ConfigFieldError(name, f"is required (a whole number >= {minimum})")
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigFieldError(name, f"must be a whole number >= {minimum}, got {shown(value)}")
        return value

    def flag(self, name: str, default: bool) -> bool:
        value = self.doc.get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise ConfigFieldError(name, f"must be true or false, got {shown(value)}")
        return value


def _default_name(doc: Mapping, path: Path) -> str:
    """`_name_or_path`'s last part (Qwen/Qwen2.5-7B -> Qwen2.5-7B), else the file's name (its folder's for a
    file called config.json)."""
    named = doc.get("_name_or_path")
    if isinstance(named, str) and named.strip("/ "):
        return named.strip("/ ").rsplit("/", 1)[-1]
    if path.stem.lower() == "config" and path.parent.name:
        return path.parent.name
    return path.stem or "hf-config"


def _refuse_constant(token: str):
    raise ValueError(f"{token} is not a number a config may hold")
