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

Scenario (`SCENARIO_LIMITS`, `EFFICIENCY_LIMITS`): every number field of a scenario with its lowest and highest
value, whether it is a whole number, and its default: the `Scenario` dataclass takes its defaults from here, its
validation and the window's spin boxes their ranges, the command line both.

`check` is the one guard every number passes on its way into the model (constructors of Hardware, Architecture,
Scenario; the TOML, session and command-line readers call it before any arithmetic): it refuses what is not a
number, not finite, outside its range, or too large for float64 or int64, with a one-line message that names the
field and its range and shows a long value shortened (errors.shown).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass

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
    # cost and power (#23): the board's TDP in watts; 0 = not published
    "tdp_w": (1e-3, 1e6, True),
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
    "mtp_depth": (1, _COUNT, True),           # multi-token-prediction modules trained beside the model (0 = none)
}


# Any other value read from a resource or user file (memory tiers, edge devices, layer profiles): SI units, 0 or
# from 1e-30 to 1e30, so that every product and quotient of two such values stays finite in float64.
QUANTITY_RULE: Rule = (1e-30, 1e30, True)
INT64_MAX = (1 << 63) - 1
FLOAT64_MAX = sys.float_info.max


@dataclass(frozen=True)
class Limit:
    """One scenario number: allowed from `lowest` to `highest` (and 0 too when `zero_ok`), whole or not, and its
    default. `wording` states the range where the bare numbers say less (a ZeRO stage, a byte width)."""

    lowest: float
    highest: float
    whole: bool
    default: float
    zero_ok: bool = False
    wording: str = ""

    @property
    def rule(self) -> Rule:
        return (self.lowest, self.highest, self.zero_ok)

    def describe(self) -> str:
        """The range in words, as a scenario's messages give it: "a whole number from 1 to 1048576"."""
        if self.wording:
            return self.wording
        text = (f"a whole number from {self.lowest} to {self.highest}" if self.whole
                else f"a number from {self.lowest:g} to {self.highest:g}")
        return f"0 or {text}" if self.zero_ok else text


_MANY = 1 << 24        # tokens per sequence, sequences per batch: the residency and matrix panels' axis
SCENARIO_LIMITS: Mapping[str, Limit] = {
    "gpus": Limit(1, 1 << 20, True, 8),
    "gpus_per_node": Limit(1, 1024, True, 8),
    "tp": Limit(1, 1024, True, 1),
    "pp": Limit(1, 1024, True, 1),
    "cp": Limit(1, 1024, True, 1),
    "ep": Limit(1, 1024, True, 1),
    "virtual_stages": Limit(1, 1024, True, 1),
    "first_stage_layers": Limit(1, 4096, True, 0, zero_ok=True),
    "last_stage_layers": Limit(1, 4096, True, 0, zero_ok=True),
    "zero": Limit(0, 3, True, 1, wording="a ZeRO stage 0, 1, 2 or 3"),
    "micro_batch": Limit(1, 1 << 16, True, 1),
    "global_batch": Limit(1, _MANY, True, 64),
    "seq_len": Limit(1, _MANY, True, 4096),
    "batch": Limit(1, 1 << 20, True, 1),
    "prompt_len": Limit(1, _MANY, True, 2048),
    "gen_len": Limit(1, _MANY, True, 512),
    "kv_window": Limit(1, _MANY, True, 4096),
    "kv_sinks": Limit(0, 1 << 20, True, 4),
    "kv_heavy_ratio": Limit(0.001, 1.0, False, 0.2),
    "razor_retrieval_fraction": Limit(0.0, 1.0, False, 0.15),
    "grad_compression": Limit(1.0, 10000.0, False, 1.0),
    "grad_comm_bytes": Limit(0.125, 4.0, False, 0.0, zero_ok=True,
                             wording="0 (the gradient format) or a byte width from 0.125 (1 bit) to 4 (fp32)"),
    "kv_offload_fraction": Limit(0.0, 1.0, False, 0.0),
    "moe_node_limit": Limit(1, 1024, True, 0, zero_ok=True, wording="0 (no limit) or a node count from 1 to 1024"),
    "prefix_hit_fraction": Limit(0.0, 1.0, False, 0.0),
    # speculative decoding (#23): MTP modules (0 = off), proposed tokens γ, acceptance rate α (a user input)
    "mtp_depth": Limit(1, 16, True, 0, zero_ok=True, wording="0 (off) or a module count from 1 to 16"),
    "draft_tokens": Limit(1, 16, True, 4),
    "acceptance": Limit(0.0, 1.0, False, 0.7),
    # load and latency targets (#23, model/search/load.py): a Poisson request rate (0 = off, one static batch), the
    # p95 TTFT and TPOT targets (0 = none), the token budget per engine step (vLLM max_num_batched_tokens)
    "request_rate": Limit(1e-6, 1e6, False, 0.0, zero_ok=True,
                          wording="0 (off) or a rate from 1e-06 to 1e+06 requests/s"),
    "ttft_slo_s": Limit(1e-6, 1e6, False, 0.0, zero_ok=True, wording="0 (no target) or seconds from 1e-06 to 1e+06"),
    "tpot_slo_s": Limit(1e-6, 1e6, False, 0.0, zero_ok=True, wording="0 (no target) or seconds from 1e-06 to 1e+06"),
    "prefill_chunk_tokens": Limit(16, 1 << 20, True, 2048),
    # MoE serving (#23): expert parallelism, data-parallel attention, redundant experts per GPU; 1, 1, 0 = off
    "inference_ep": Limit(1, 1 << 20, True, 1),
    "attention_dp": Limit(1, 1 << 20, True, 1),
    "redundant_experts": Limit(0, 4096, True, 0),
    # cost and power, LoRA / QLoRA fine-tuning (#23): off by default
    "gpu_hour_price": Limit(0.0, 10000.0, False, 0.0,
                            wording="0 (no price) or dollars per GPU-hour from 0 to 10000"),
    "lora_rank": Limit(1, 1 << 16, True, 0, zero_ok=True,
                       wording="0 (off: every weight trained) or an adapter rank from 1 to 65536"),
    # disaggregated prefill and decode (#23): pool GPUs (0 = aggregated serving, off) and each pool's instance
    # layout (0 = the scenario's replica layout, TP = gpus / pp and pp)
    "prefill_gpus": Limit(1, 1 << 20, True, 0, zero_ok=True,
                          wording="0 (aggregated serving) or a GPU count from 1 to 1048576"),
    "decode_gpus": Limit(1, 1 << 20, True, 0, zero_ok=True,
                         wording="0 (aggregated serving) or a GPU count from 1 to 1048576"),
    "prefill_tp": Limit(1, 1024, True, 0, zero_ok=True, wording="0 (the replica's TP) or a degree from 1 to 1024"),
    "prefill_pp": Limit(1, 1024, True, 0, zero_ok=True, wording="0 (the replica's PP) or a degree from 1 to 1024"),
    "decode_tp": Limit(1, 1024, True, 0, zero_ok=True, wording="0 (the replica's TP) or a degree from 1 to 1024"),
    "decode_pp": Limit(1, 1024, True, 0, zero_ok=True, wording="0 (the replica's PP) or a degree from 1 to 1024"),
}
# Inference starts on one device (one replica, TP1) where training starts on SCENARIO_LIMITS' 8 GPUs.
INFERENCE_DEFAULTS: Mapping[str, float] = {"gpus": 1}
EFFICIENCY_LIMITS: Mapping[str, Limit] = {
    "compute": Limit(0.01, 1.0, False, 0.5, wording="a fraction between 0.01 and 1"),
    "hbm": Limit(0.01, 1.0, False, 0.8, wording="a fraction between 0.01 and 1"),
    "network": Limit(0.01, 1.0, False, 0.8, wording="a fraction between 0.01 and 1"),
}


def is_whole(rule: Rule) -> bool:
    """Rules with whole-number bounds admit whole numbers only."""
    return isinstance(rule[0], int) and isinstance(rule[1], int)


def describe(rule: Rule, whole: bool | None = None) -> str:
    """The allowed range in words: "0 or a whole number from 1 to 65,536"."""
    lo, hi, zero = rule
    whole = is_whole(rule) if whole is None else whole
    text = f"a whole number from {lo:,} to {hi:,}" if whole else f"a number from {lo:g} to {hi:g}"
    return f"0 or {text}" if zero else text


def in_range(value: object, rule: Rule, whole: bool) -> bool:
    """Whether `value` is a number allowed by `rule`: a Python int (whole) or int/float (not whole), never a bool,
    finite, inside float64 and int64, and from lowest to highest (or 0 where 0 is allowed). Comparisons only, no
    conversion: an int of any size compares exactly, NaN and infinity fail them, so nothing here can overflow."""
    lo, hi, zero = rule
    if isinstance(value, bool) or not isinstance(value, (int,) if whole else (int, float)):
        return False
    if isinstance(value, float) and not math.isfinite(value):
        return False
    if isinstance(value, int) and not -INT64_MAX <= value <= INT64_MAX:
        return False
    return (zero and value == 0) or lo <= value <= hi


def in_float64(value: int | float) -> bool:
    """Whether a number is finite and converts to a finite float64 (an int of 400 digits does not)."""
    return -FLOAT64_MAX <= value <= FLOAT64_MAX  # NaN fails the comparison; an int compares exactly


def check(prefix: str, name: str, value: object, rule: Rule, whole: bool | None = None,
          allowed: str | None = None) -> None:
    """The guard: raise ValidationError(f"{prefix}{name}", value, allowed) unless `value` is allowed by `rule`.
    `whole` defaults to the rule's (whole-number bounds admit whole numbers only)."""
    lo, hi, zero = rule
    whole = is_whole(rule) if whole is None else whole
    if isinstance(value, np.ndarray) and value.dtype.kind in "iuf":  # an axis of evaluate_grid (sampled alphas)
        if not np.all(((value == 0) & zero) | ((lo <= value) & (value <= hi))):
            raise ValidationError(f"{prefix}{name}", f"array with values {value.min():g} to {value.max():g}",
                                  allowed or describe(rule, whole))
        return
    if not in_range(value, rule, whole):
        raise ValidationError(f"{prefix}{name}", value, allowed or describe(rule, whole))


def check_limit(name: str, value: object, limit: Limit, prefix: str = "") -> None:
    """The guard for one scenario number (SCENARIO_LIMITS, EFFICIENCY_LIMITS). Every Scenario runs it on each
    field, so the common case (a plain int, or a float where floats are allowed, inside the range) returns at
    once; anything else takes the full check (`in_range`)."""
    t = type(value)
    if (t is int or t is float and not limit.whole) and limit.lowest <= value <= limit.highest:
        return  # NaN fails the comparison; the bounds lie inside int64 and float64
    if not in_range(value, (limit.lowest, limit.highest, limit.zero_ok), limit.whole):
        raise ValidationError(f"{prefix}{name}", value, limit.describe())


def parse_number(text: str, whole: bool) -> int | float:
    """A number typed as text (command line), before any check: int("9" * 400) stays exact, float("1e999") is inf
    (which the guard refuses); ValueError when it is not a number at all."""
    text = text.strip()
    if whole:
        return int(text)
    try:
        return int(text)
    except ValueError:
        return float(text)


def check_all(obj: object, prefix: str, rules: Mapping[str, Rule]) -> None:
    """Check every ruled field of a dataclass instance (mappings of values, such as peak_flops, per entry)."""
    for name, rule in rules.items():
        value = getattr(obj, name)
        if isinstance(value, Mapping):
            for key, item in value.items():
                check(f"{prefix}{name}.", str(key), item, rule)
        else:
            check(prefix, name, value, rule)
