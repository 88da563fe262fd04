"""Physical ranges of every hardware and model value: the one rule table that presets, user files and session
files are checked against (through the `Hardware` and `Architecture` constructors, which every loader uses).

Each rule is (lowest, highest, zero allowed): 0 means "absent" where the model treats it so (a missing link, no
SRAM, dense rather than MLA). The bounds lie far outside every published device and model, so that no real
preset is refused, and well inside the range where the formulas stay finite: with all values in range, the
products and quotients the model forms (bytes / bandwidth, FLOPs / peak, parameters x layers) stay far below
float64's 1.8e308, and every whole number fits in 64 bits.

Hardware (SI units): the largest published values are a 4.5e15 FLOP/s peak (B200 fp8), 1.92e11 bytes of HBM
(B200), 8e12 bytes/s of HBM bandwidth, 9e11 bytes/s of scale-up link; the smallest are 1e12 FLOP/s and 5e10
bytes/s (edge devices). Models: the largest presets have 128 layers, hidden 25,600, 256 experts and a 1e12
parameter total.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from trinity_desktop.model.base.errors import ValidationError

Rule = tuple[float, float, bool]

KILO, TERA, PETA, EXA = 1e3, 1e12, 1e15, 1e18

HARDWARE_RULES: Mapping[str, Rule] = {
    "peak_flops": (1e6, EXA, False),          # FLOP/s per format: a microcontroller to an exaflop device
    "hbm_bytes": (KILO, PETA, False),         # device memory, bytes
    "hbm_bw": (KILO, PETA, False),            # device memory bandwidth, bytes/s
    "sram_bytes": (KILO, PETA, True),
    "sram_per_core_bytes": (KILO, PETA, True),
    "l2_bytes": (KILO, PETA, True),
    "scaleup_bw": (KILO, PETA, True),         # bytes/s per direction; 0 = no scale-up link
    "scaleup_latency_s": (1e-12, 1.0, True),  # seconds; 0 = not published
    "host_link_bw": (KILO, PETA, True),
    "host_dram_bytes": (KILO, PETA, True),
    "scaleout_bw": (KILO, PETA, True),
    "scaleout_latency_s": (1e-12, 1.0, True),
    "nvme_bw": (KILO, PETA, True),
    "gpus_per_node_default": (1, 1024, False),
}

_WIDTH = 1 << 20       # hidden, FFN, head and rank widths
_COUNT = 1 << 16       # heads, experts
ARCHITECTURE_RULES: Mapping[str, Rule] = {
    "layers": (1, _COUNT, False),
    "hidden": (1, _WIDTH, False),
    "heads": (1, _COUNT, False),
    "kv_heads": (1, _COUNT, False),
    "head_dim": (1, _WIDTH, False),
    "ffn_hidden": (1, _WIDTH, False),
    "vocab": (1, 1 << 24, False),
    "experts": (1, _COUNT, False),
    "experts_per_token": (1, _COUNT, False),
    "max_seq": (1, 1 << 30, False),
    "sliding_window": (1, 1 << 30, True),     # 0 = full attention
    "moe_ffn_hidden": (1, _WIDTH, True),      # 0 = the dense FFN width
    "shared_experts": (1, _COUNT, True),
    "dense_layers": (1, _COUNT, True),        # at most `layers`: checked by Architecture
    "global_layers": (1, _COUNT, True),       # full-attention layers among sliding-window ones (0 = all alike)
    "q_lora_rank": (1, _WIDTH, True),
    "kv_lora_rank": (1, _WIDTH, True),
    "qk_nope_head_dim": (1, _WIDTH, True),
    "qk_rope_head_dim": (1, _WIDTH, True),
    "v_head_dim": (1, _WIDTH, True),
    "params_published": (1, PETA, True),      # 0 = not published
    "params_active_published": (1, PETA, True),
}


def is_whole(rule: Rule) -> bool:
    """Rules with whole-number bounds admit whole numbers only."""
    return isinstance(rule[0], int) and isinstance(rule[1], int)


def describe(rule: Rule) -> str:
    """The allowed range in words: "0 or a whole number from 1 to 65,536"."""
    lo, hi, zero = rule
    text = f"a whole number from {lo:,} to {hi:,}" if is_whole(rule) else f"a number from {lo:g} to {hi:g}"
    return f"0 or {text}" if zero else text


def check(prefix: str, name: str, value: object, rule: Rule) -> None:
    """Raise ValidationError(f"{prefix}{name}", value, allowed) when `value` is outside `rule`."""
    lo, hi, zero = rule
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":  # an axis of evaluate_grid (sampled alphas)
        if not np.all(((value == 0) & zero) | ((lo <= value) & (value <= hi))):
            raise ValidationError(f"{prefix}{name}", f"array with values {value.min():g} to {value.max():g}",
                                  describe(rule))
        return
    kinds = (int,) if is_whole(rule) else (int, float)
    ok = isinstance(value, kinds) and not isinstance(value, bool)
    if ok:  # comparisons, not float(): an int of any size compares exactly; NaN and inf fail them
        ok = (zero and value == 0) or lo <= value <= hi
    if not ok:
        raise ValidationError(f"{prefix}{name}", value, describe(rule))


def check_all(obj: object, prefix: str, rules: Mapping[str, Rule]) -> None:
    """Check every ruled field of a dataclass instance (mappings of values, such as peak_flops, per entry)."""
    for name, rule in rules.items():
        value = getattr(obj, name)
        if isinstance(value, Mapping):
            for key, item in value.items():
                check(f"{prefix}{name}.", str(key), item, rule)
        else:
            check(prefix, name, value, rule)
