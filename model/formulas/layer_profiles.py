"""Layer-wise profiles for split computing: FLOPs, parameters and output activation size of each layer.

Two sources:

* CNNs from resources/edge.toml (ResNet-50 from He et al. 2016 Table 1, `resnet`; AlexNet from Krizhevsky et
  al. 2012, `alexnet`): per-layer FLOPs = 2 x multiply-adds derived from the published layer shapes ("D"),
  output activation = H x W x C elements. `conv_flops` is the derivation.
* Transformers from an `Architecture` (models.toml) processing a prompt of T tokens: an embedding lookup,
  then each decoder layer (2 FLOPs per multiplied weight per token, Korthikanti et al. 2022 App. A, plus the
  causal attention core at T/2 keys on average, as inference.py's prefill), then the final norm and the
  output head for the last position (2hV FLOPs). Every output is T x hidden activations; the input sent at
  split 0 is T token ids of 4 bytes (int32).

Element counts are kept, not bytes, so callers choose the activation format (fp16, int8 ...).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.flops import attention_core_flops_per_token
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.presets import PresetError, _number, _resource_text, model_presets

TOKEN_ID_BYTES = 4.0  # int32 token ids sent at split 0 (all cloud) for a transformer


@dataclass(frozen=True)
class LayerProfile:
    """One network as a chain of layers. Arrays have one entry per layer (the input is not a layer).

    flops: forward FLOPs per layer; params: weights per layer (read once per forward pass);
    out_elements: activation elements each layer outputs; input_bytes: what all-cloud sends (split 0).
    """

    key: str
    name: str
    kind: str  # "cnn" or "transformer"
    layer_names: tuple[str, ...]
    flops: np.ndarray
    params: np.ndarray
    out_elements: np.ndarray
    input_bytes: float
    source: str
    note: str = ""

    def __post_init__(self):
        for name in ("flops", "params", "out_elements"):
            arr = np.asarray(getattr(self, name), dtype=float)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        n = len(self.layer_names)
        if not (self.flops.shape == self.params.shape == self.out_elements.shape == (n,)) or n < 1:
            raise ValidationError(f"profile {self.key}", n, "one flops, params and out_elements entry per layer")

    @property
    def layers(self) -> int:
        return len(self.layer_names)

    def total_flops(self) -> float:
        return float(self.flops.sum())

    def total_params(self) -> float:
        return float(self.params.sum())


def conv_flops(out_h, out_w, c_in, c_out, kernel, groups=1):
    """Convolution FLOPs = 2 x multiply-adds = 2 · H_out · W_out · C_out · (C_in / groups) · k² (broadcasts).
    He et al. 2016 Table 1 counts multiply-adds ("FLOPs" 3.8e9 for ResNet-50); here 1 multiply-add = 2 FLOPs."""
    out_h, out_w, c_in, c_out, kernel, groups = (np.asarray(x, dtype=float)
                                                  for x in (out_h, out_w, c_in, c_out, kernel, groups))
    return 2.0 * out_h * out_w * c_out * (c_in / groups) * kernel**2


def bottleneck_flops(out_hw, c_in, mid, projection):
    """ResNet bottleneck block [1x1 mid, 3x3 mid, 1x1 4·mid] (He et al. 2016 Table 1, Fig. 5 right) at output
    size out_hw, plus an option-B 1x1 projection shortcut when `projection` (first block of a stage)."""
    mid = np.asarray(mid, dtype=float)
    body = (conv_flops(out_hw, out_hw, c_in, mid, 1) + conv_flops(out_hw, out_hw, mid, mid, 3)
            + conv_flops(out_hw, out_hw, mid, 4 * mid, 1))
    return body + np.where(projection, conv_flops(out_hw, out_hw, c_in, 4 * mid, 1), 0.0)


# ------------------------------------------------------------------------------------------ edge.toml
@cache
def edge_document() -> MappingProxyType:
    """resources/edge.toml, parsed once (layer shapes of He et al. 2016 Table 1 and Krizhevsky et al. 2012)."""
    try:
        doc = tomllib.loads(_resource_text("edge.toml"))
    except tomllib.TOMLDecodeError as exc:
        raise PresetError("edge.toml", "TOML", str(exc)) from None
    return MappingProxyType(doc)


def _cnn_profile(entry: dict) -> LayerProfile:
    where = f"edge.toml [profile {entry.get('key', '?')}]"
    layers = entry.get("layer", [])
    if not layers:
        raise PresetError(where, "layer", "a profile needs at least one [[profile.layer]]")
    names, flops, params, outs = [], [], [], []
    for i, layer in enumerate(layers):
        lw = f"{where} layer {i + 1}"
        names.append(str(layer.get("name", f"layer {i + 1}")))
        flops.append(_number(lw, "flops", layer.get("flops"))[0])
        params.append(_number(lw, "params", layer.get("params", 0))[0])
        shape = layer.get("out_shape")
        if not isinstance(shape, list) or not shape or not all(isinstance(s, int) and s > 0 for s in shape):
            raise PresetError(lw, "out_shape", f"must be a list of positive whole numbers, got {shape!r}")
        outs.append(float(np.prod(shape)))
    in_shape = entry.get("input_shape", [])
    elem_bytes = _number(where, "input_bytes_per_element", entry.get("input_bytes_per_element", 1))[0]
    return LayerProfile(key=str(entry["key"]), name=str(entry.get("name", entry["key"])), kind="cnn",
                        layer_names=tuple(names), flops=np.array(flops), params=np.array(params),
                        out_elements=np.array(outs), input_bytes=float(np.prod(in_shape)) * elem_bytes,
                        source=str(entry.get("source", "")), note=str(entry.get("note", "")))


@cache
def cnn_profiles() -> dict[str, LayerProfile]:
    """The CNN layer profiles of resources/edge.toml, by key: FLOPs = 2 x multiply-adds of the published layer
    shapes (He et al. 2016 Table 1; Krizhevsky et al. 2012), output = H x W x C elements."""
    return {p["key"]: _cnn_profile(p) for p in edge_document().get("profile", [])}


# ------------------------------------------------------------------------------------------ transformers
def transformer_profile(arch: Architecture, tokens: int = 512) -> LayerProfile:
    """Per-layer profile of a transformer running a T-token prompt (one forward pass, batch 1).

    embedding: lookup, 0 FLOPs, reads T rows (min(T, V)·h weights); layer i: T·(2·W + attention core at T/2
    keys) FLOPs (Korthikanti App. A; causal average as inference.py's prefill), its parameters; head: final
    norm + logits of the last position, 2hV FLOPs, h·V weights. Outputs: T·h elements, V logits for the head.
    """
    if isinstance(tokens, bool) or not isinstance(tokens, int) or not 1 <= tokens <= 1 << 20:
        raise ValidationError("tokens", tokens, "a whole number from 1 to 1048576")
    T, L, h, v = float(tokens), arch.layers, arch.hidden, arch.vocab
    w_layer = arch.matmul_params_active_per_layer()
    attn = float(attention_core_flops_per_token(T / 2.0, arch.heads, arch.qk_dim, arch.v_dim))
    layer_flops = T * (2.0 * w_layer + attn)
    head_params = float(v * h + h)  # output matrix (tied or not) + final norm
    body_params = (arch.params_total() - arch.embedding_params() - h) / L  # average decoder layer
    names = ("embedding", *(f"layer {i + 1}" for i in range(L)), "head")
    flops = np.concatenate([[0.0], np.full(L, layer_flops), [2.0 * h * v]])
    params = np.concatenate([[min(T, v) * h], np.full(L, body_params), [head_params]])
    outs = np.concatenate([[T * h], np.full(L, T * h), [float(v)]])
    return LayerProfile(key=arch.key, name=f"{arch.name} ({tokens}-token prompt)", kind="transformer",
                        layer_names=names, flops=flops, params=params, out_elements=outs,
                        input_bytes=T * TOKEN_ID_BYTES, source=arch.source or "korthikanti2022",
                        note="per-layer FLOPs: Korthikanti et al. 2022 App. A; parameters from the architecture")


def profile(key: str, tokens: int = 512) -> LayerProfile:
    """A CNN profile of edge.toml (`cnn_profiles`) or a transformer preset of models.toml (`transformer_profile`,
    Korthikanti et al. 2022 App. A), by key (case-insensitive); the profiles Neurosurgeon splits (Kang et al. 2017)."""
    lowered = key.lower()
    for k, p in cnn_profiles().items():
        if k.lower() == lowered or p.name.lower() == lowered:
            return p
    for k, arch in model_presets().items():
        if k.lower() == lowered or arch.name.lower() == lowered:
            return transformer_profile(arch, tokens)
    raise ValidationError("model", key, "one of " + ", ".join([*cnn_profiles(), *model_presets()]))


def profile_keys() -> list[str]:
    """The keys `profile` accepts: CNN profiles first, then the small transformers (<= 3.5B parameters), then the
    other presets (a listing, no formula)."""
    models = model_presets()
    small = [k for k, m in models.items() if m.params_total() <= 3.5e9]
    return [*cnn_profiles(), *small, *(k for k in models if k not in small)]
