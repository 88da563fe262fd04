"""Edge architectures from resources/edge_architectures.toml: a stack of gated short-convolution and
attention blocks (LFM2-style hybrids) with the published speed-up points drawn next to them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.presets import _resource_text, read_toml

LAYER_TYPES = ("conv", "attention")


@dataclass(frozen=True)
class BlockStack:
    """Layer types in order plus the widths every block shares; `conv_cache` is the short convolution's
    kernel length (conv_L_cache), the rows of state a conv block keeps per sequence."""

    key: str
    name: str
    hidden: int
    ffn_hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    conv_cache: int
    vocab: int
    layer_types: tuple[str, ...]
    source: str
    status: str
    note: str

    def __post_init__(self):
        for name in ("hidden", "ffn_hidden", "heads", "kv_heads", "head_dim", "vocab"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ValidationError(f"{self.key}.{name}", getattr(self, name), "a whole number >= 1")
        if not self.layer_types or any(t not in LAYER_TYPES for t in self.layer_types):
            raise ValidationError(f"{self.key}.layer_types", self.layer_types, "a list of conv / attention")
        if self.conv_layers and self.conv_cache < 1:
            raise ValidationError(f"{self.key}.conv_cache", self.conv_cache, "a kernel length >= 1")

    @property
    def conv_layers(self) -> int:
        return sum(t == "conv" for t in self.layer_types)

    @property
    def attention_layers(self) -> int:
        return sum(t == "attention" for t in self.layer_types)

    def replace_layers(self, layer_type: str, name: str) -> BlockStack:
        """The same widths with every block of one type (the all-conv and all-attention references)."""
        from dataclasses import replace

        return replace(self, key=f"{self.key}-all-{layer_type}", name=name,
                       layer_types=(layer_type,) * len(self.layer_types),
                       conv_cache=self.conv_cache or 3)


@dataclass(frozen=True)
class SpeedupPoint:
    label: str
    value: float
    source: str
    note: str


@cache
def _doc() -> dict:
    return read_toml("edge_architectures.toml", _resource_text("edge_architectures.toml"))


def block_stacks() -> dict[str, BlockStack]:
    return {e["key"]: BlockStack(key=e["key"], name=e["name"], hidden=e["hidden"], ffn_hidden=e["ffn_hidden"],
                                 heads=e["heads"], kv_heads=e["kv_heads"], head_dim=e["head_dim"],
                                 conv_cache=e["conv_cache"], vocab=e["vocab"], layer_types=tuple(
                                     "attention" if t == "attention" else t for t in e["layer_types"]),
                                 source=e["source"], status=e["status"], note=e["note"])
            for e in _doc()["architecture"]}


def speedup_points() -> tuple[SpeedupPoint, ...]:
    return tuple(SpeedupPoint(p["label"], float(p["value"]), p["source"], p["note"]) for p in _doc()["speedup"])
