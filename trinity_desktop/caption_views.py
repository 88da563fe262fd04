"""Caption values quoted from the model views a slide's panels draw (claims, quantisation quality, edge
architectures, edge matrix, routing, retrieval, memory wall, batch law, test-time compute).

Every value is named `<view>_<what>` ("edge_matrix_meets", "routing_cost_fall") and is computed by calling
the view's own public function with the arguments its panel opens with (the slide's scenario where the panel
follows it), formatted as the panel formats it. A view is computed only when a template names one of its
values (`view_values(group, results)`), so a slide pays only for the views its caption quotes; views that do
not depend on the scenario are computed once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

import numpy as np

from trinity_desktop.caption_serving import serving_values  # serving slides (#23)
from trinity_desktop.model import Results
from trinity_desktop.model.base.dtypes import WEIGHT_FORMATS_STORED
from trinity_desktop.model.claims.catalogue import all_claims
from trinity_desktop.model.formulas.batch_law import published_points, scenario_batch
from trinity_desktop.model.formulas.retrieval import (
    INDEX_LABELS,
    QUOTED_COLLECTIONS,
    evaluate_retrieval,
    index_bytes,
    spill_points,
)
from trinity_desktop.model.inputs.edge_architectures import speedup_points
from trinity_desktop.model.inputs.scale_facts import growth_rates, retrieval_points
from trinity_desktop.model.views.edge_arch import context_reaching, edge_arch_curves, stacks
from trinity_desktop.model.views.edge_matrix import edge_matrix
from trinity_desktop.model.views.memory_wall import memory_wall
from trinity_desktop.model.views.quant_quality import quality_curve
from trinity_desktop.model.views.routing import routing
from trinity_desktop.model.views.techniques import read_keys, technique_effect
from trinity_desktop.model.views.test_time import compare
from trinity_desktop.ui.units import fmt_bytes, fmt_seconds

QUANT_PAIR = ("q4_k", "q2_k")              # the seed's "2-bit saves 43%", read on stored formats (its panel's pair)
EDGE_ARCH_CONTEXT = 4096                   # the context the edge architecture panel's title quotes
EDGE_ARCH_CLAIM = "synth-gated-conv"       # the synthesis' "2.5x better cost ratios than attention on CPUs"
RETRIEVAL_QUOTE = ("hnsw", 768, "fp32")    # the retrieval panel's opening index, dimensions and vector format
RETRIEVAL_VECTORS = 1e7                    # the collection size the caption quotes the index bytes at
TEST_TIME_TOKENS = 8192                    # the reasoning length per sample the caption quotes costs at


def key(name: str) -> str:
    """A value name from a label: "GEMMs (weights)" -> "gemms_weights", "Q4_K_M" -> "q4_k_m"."""
    return re.sub(r"\W+", "_", name).strip("_").lower()


def _times(x: float, digits: int = 2) -> str:
    return f"{x:.{digits}f}×"


def _k(tokens: float) -> str:
    """Tokens as the edge panels write them: 75,906 -> "74k" (binary thousands)."""
    return f"{tokens / 1024:.0f}k" if tokens >= 1024 else f"{tokens:.0f}"


def _count(n: float) -> str:
    """A vector count as the retrieval panel writes it: 78020972 -> "78M"."""
    for factor, word in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= factor:
            return f"{n / factor:.3g}{word}"
    return f"{n:.0f}"


def _tokens(n: float) -> str:
    """Tokens per step as the batch law panel writes them: 62914560 -> "62.9M"."""
    return f"{n / 1e6:.3g}M" if n >= 1e5 else f"{n / 1e3:.3g}k"


def _per_100(share: float) -> str:
    return f"{100 * share:.0f} in 100"


@cache
def _claims() -> dict[str, str]:
    """The claims panel's counts (all_claims)."""
    claims = all_claims()
    n = {v: sum(c.verdict == v for c in claims) for v in ("agrees", "disagrees", "not-computable")}
    return {"claims_count": str(len(claims)), "claims_agree": str(n["agrees"]),
            "claims_disagree": str(n["disagrees"]), "claims_not_computable": str(n["not-computable"])}


@cache
def _quant() -> dict[str, str]:
    """Stored bits per weight (WEIGHT_FORMATS_STORED) and the published perplexity rise per format
    (quality_curve), as the quantisation quality panel draws them."""
    bits = {f.key: f.effective_bits for f in WEIGHT_FORMATS_STORED}
    curve = quality_curve()
    a, b = QUANT_PAIR
    return {"quant_model": curve.model, "quant_shrink": _times(bits[a] / bits[b], 1),
            **{f"quant_bits_{k}": f"{v:.4f}".rstrip("0").rstrip(".") for k, v in bits.items()},
            **{f"quant_rise_{key(p.format)}": f"{d:.1f}" for p, d in zip(curve.points, curve.delta_pct, strict=True)}}


def _reach(curves, speedup: float, verb: str = "") -> str:
    """Where the hybrid reaches a speed-up: "from 74k", or "not by 128k" ("reached from 74k" with a verb)."""
    at = context_reaching(curves, speedup)
    return f"{verb}from {_k(at)}" if at else f"not {verb}by {_k(curves.context[-1])}"


def _edge_arch(r: Results) -> dict[str, str]:
    """The hybrid's decode speed-up over attention on the edge architecture panel's opening device, format and
    hybrid, with the slide's efficiencies (edge_arch_curves); where it reaches the published speed-up
    (speedup_points) and the synthesis' claimed one (its Claim's claimed value)."""
    curves = edge_arch_curves(efficiency=r.scenario.efficiency)
    hybrid, attention = curves.by_role("hybrid"), curves.by_role("attention")
    stack = next(s for s in stacks() if s.key == hybrid.key)
    at = float(np.interp(np.log(EDGE_ARCH_CONTEXT), np.log(curves.context), hybrid.speedup))
    claimed = next(c.claimed for c in all_claims() if c.id == EDGE_ARCH_CLAIM)
    published = _published_speedup()
    return {"edge_arch_hybrid": hybrid.name, "edge_arch_attention": attention.name.split(" (")[0],
            "edge_arch_conv_blocks": str(stack.conv_layers), "edge_arch_attention_blocks": str(stack.attention_layers),
            "edge_arch_context": _k(EDGE_ARCH_CONTEXT), "edge_arch_speedup": _times(at),
            "edge_arch_end": _k(curves.context[-1]),
            "edge_arch_published": f"{published:g}×", "edge_arch_published_reach": _reach(curves, published),
            "edge_arch_claimed": f"{claimed:g}×", "edge_arch_claimed_reach": _reach(curves, claimed, "reached ")}


@cache
def _published_speedup() -> float:
    """Liquid AI's published LFM2 speed-up (resources/edge_architectures.toml)."""
    return next(p.value for p in speedup_points() if p.label.startswith("LFM2"))


@cache
def _edge_matrix() -> dict[str, str]:
    """The edge matrix's count of cells meeting all three constraints, each cell's time per token, and per
    device and model the widest format that fits and the widest that also decodes in time."""
    m = edge_matrix()
    out = {"edge_matrix_meets": str(int(m.meets.sum())), "edge_matrix_cells": str(m.meets.size),
           "edge_matrix_target": f"{m.target_s * 1e3:.0f} ms"}
    for i, d in enumerate(m.devices):
        for j, model in enumerate(m.models):
            cell = f"{key(d)}_{key(model)}"
            for k, f in enumerate(m.formats):
                out[f"edge_matrix_ms_{cell}_{key(f)}"] = f"{m.time_s[i, j, k] * 1e3:.1f} ms"
            fits, in_time = m.fits[i, j], m.fits[i, j] & (m.time_s[i, j] <= m.target_s)
            for name, ok in (("fits", fits), ("in_time", in_time)):
                if ok.any():
                    out[f"edge_matrix_{name}_{cell}"] = m.formats[int(np.flatnonzero(ok)[0])].upper()
    return out


def _routing(r: Results) -> dict[str, str]:
    """The routing panel's answer for the slide's scenario with its opening device, small model and network:
    the largest share on device that keeps the quality target, its cloud GPU time and latency change."""
    x = routing(current=r.scenario)
    i = int(np.argmin(np.abs(x.r - x.best_r)))
    change = x.latency_s[i] / x.latency_s[0]
    return {"routing_cloud_model": x.cloud_scenario.model.name, "routing_device_model": x.device_scenario.model.name,
            "routing_quality": _per_100(x.target), "routing_share": f"{x.best_r:.0%}",
            "routing_cost_fall": _times(x.cloud_gpu_s[0] / x.cloud_gpu_s[i], 1),
            "routing_latency_change": f"rises {change:.1f}×" if change > 1 else f"falls {1 / change:.1f}×"}


def _retrieval(r: Results) -> dict[str, str]:
    """Index bytes at the quoted collection size and the largest collection each tier holds, on the slide's
    hardware for the retrieval panel's opening index (index_bytes, spill_points)."""
    index, dim, dtype = RETRIEVAL_QUOTE
    total, _dram = index_bytes(RETRIEVAL_VECTORS, dim, index, dtype)
    spill = spill_points(dim, index, r.scenario.hardware, dtype)
    return {"retrieval_index": INDEX_LABELS[index], "retrieval_dim": str(dim), "retrieval_dtype": dtype,
            "retrieval_vectors": _count(RETRIEVAL_VECTORS), "retrieval_bytes": fmt_bytes(float(total)),
            **{f"retrieval_{tier}_holds": _count(n) for tier, n in spill.items()}, **_retrieval_queries(r)}


TIER_WORDS = {"hbm": "device memory", "host": "host DRAM", "cxl": "CXL pool", "ssd": "SSD", "none": "no tier"}


def _retrieval_queries(r: Results) -> dict[str, str]:
    """The query time and the tier at the quoted collection sizes (evaluate_retrieval, as the time view's hover
    writes them) and the published latencies' range and count (retrieval_points, measured on their own machines)."""
    index, dim, dtype = RETRIEVAL_QUOTE
    out = {}
    for name, n in QUOTED_COLLECTIONS.items():
        x = evaluate_retrieval(n, dim, index, r.scenario.hardware, dtype)
        out.update({f"retrieval_query_{name}": fmt_seconds(float(x.query_s)),
                    f"retrieval_tier_{name}": TIER_WORDS[str(x.tier)]})
    published = sorted(p.latency_s for p in retrieval_points() if p.latency_s > 0)
    engines = sorted({p.engine for p in retrieval_points() if p.latency_s > 0})
    return {**out, "retrieval_published_count": str(len(published)),
            "retrieval_published_engines": ", ".join(engines[:-1]) + f" and {engines[-1]}",
            "retrieval_published_fastest": fmt_seconds(published[0]),
            "retrieval_published_slowest": fmt_seconds(published[-1])}


@cache
def _memory_wall() -> dict[str, str]:
    """Growth per two years fitted over the datacenter presets (memory_wall) and Gholami et al.'s rates."""
    g, rates = memory_wall().growth, growth_rates()
    ridge = g["ridge"].per_2y
    return {**{f"memory_wall_{q}": _times(v.per_2y) for q, v in g.items()},
            "memory_wall_ridge_change": f"climbs {ridge:.2f}×" if ridge > 1 else f"falls {1 / ridge:.2f}×",
            "memory_wall_published_flops": _times(rates.peak_flops, 1),
            "memory_wall_published_dram": _times(rates.dram_bandwidth, 1),
            "memory_wall_published_interconnect": _times(rates.interconnect_bandwidth, 1), **_memory_wall_extremes()}


def _memory_wall_extremes() -> dict[str, str]:
    """As the capacity and ridge views write them: the largest model's need over the largest device's HBM,
    and the newest device's ridge point with the ridge drift Gholami et al.'s rates imply."""
    wall = memory_wall()
    fit = [d for d in wall.devices if d.in_fit]
    cap = max(d.values["hbm_bytes"] for d in fit)
    biggest = max(wall.models, key=lambda m: m.total)
    newest = max(fit, key=lambda d: d.year)
    return {"memory_wall_biggest": biggest.name, "memory_wall_biggest_need": f"{biggest.total / cap:.1f}×",
            "memory_wall_newest": newest.name, "memory_wall_newest_ridge": f"{newest.ridge:.0f}",
            "memory_wall_ridge_published": _times(wall.growth["ridge"].published_per_2y)}


def _batch_law(r: Results) -> dict[str, str]:
    """Published tokens per step and the growth from the first to the last run (published_points); for a
    training slide its own batch and the law's optimum at a Chinchilla run of its model (scenario_batch)."""
    pts = published_points()
    out = {**{f"batch_law_tokens_{key(p.run.model)}": _tokens(p.run.batch_tokens) for p in pts},
           "batch_law_growth": _times(pts[-1].run.batch_tokens / pts[0].run.batch_tokens, 1)}
    if r.kind == "train":
        sc = r.scenario
        mine = scenario_batch(sc.global_batch, sc.seq_len, r.params_active)
        out.update(batch_law_scenario_tokens=_tokens(mine.batch_tokens),
                   batch_law_optimal_tokens=_tokens(mine.optimal_tokens))
    return out


def _samples(n: int) -> str:
    return "one" if n == 1 else f"{n:,}"


def _test_time(r: Results) -> dict[str, str]:
    """The test-time panel's comparison at its opening target on the slide's hardware (compare): the two
    options, their GPU-seconds per query at the quoted reasoning length, and the crossover."""
    c = compare(r.scenario.hardware)
    out = {"test_time_target": _per_100(c.target), "test_time_tokens": f"{TEST_TIME_TOKENS:,}",
           "test_time_crossover": f"{c.crossover_tokens:,.0f}"}
    for name, opt in (("small", c.small), ("large", c.large)):
        i = int(np.flatnonzero(opt.tokens == TEST_TIME_TOKENS)[0])
        out.update({f"test_time_{name}": opt.row.model.removeprefix("DeepSeek-"),
                    f"test_time_{name}_samples": _samples(opt.row.samples),
                    f"test_time_{name}_gpu_s": f"{opt.gpu_seconds[i]:,.0f}"})
    return out


SPARSE = {"nsa": "native-sparse-attention", "strided": "block-sparse-attention",
          "window": "sliding-window-attention", "distill": "distillation-half-depth"}


def _sparse(r: Results) -> dict[str, str]:
    """Sparse attention and distillation on the slide's scenario, as the trade-off explorer computes them
    (technique_effect): each technique's saving and spending in per cent, and the keys a decode query reads
    under the two read patterns at the request's mean context (read_keys)."""
    sc = r.scenario
    mean_context = sc.prompt_len + sc.gen_len / 2.0
    out = {"sparse_context": _k(sc.prompt_len + sc.gen_len)}
    for name, tech in SPARSE.items():
        e = technique_effect(sc, tech, before=r)
        if e.applicable:
            out.update({f"sparse_{name}_saved": f"{e.saved_pct:.0f}% less {e.saved}",
                        f"sparse_{name}_spent": f"{e.spent_pct:+.0f}% {e.spent}"})
    for name in ("nsa", "strided"):
        keys = read_keys(name, sc)
        out.update({f"sparse_{name}_keys": f"{keys:,.0f}", f"sparse_{name}_fewer": _times(mean_context / keys, 1)})
    return out


VIEWS: dict[str, Callable[[Results], dict[str, str]]] = {
    "claims": lambda _r: _claims(), "quant": lambda _r: _quant(), "edge_arch": _edge_arch,
    "edge_matrix": lambda _r: _edge_matrix(), "routing": _routing, "retrieval": _retrieval,
    "memory_wall": lambda _r: _memory_wall(), "batch_law": _batch_law, "test_time": _test_time,
    "serving": serving_values,  # serving slides (#23)
    "sparse": _sparse}


def view_of(name: str) -> str | None:
    """The view a value name belongs to (its longest matching prefix), or None for a Results value."""
    groups = [g for g in VIEWS if name.startswith(g + "_")]
    return max(groups, key=len) if groups else None


def view_values(view: str, results: Results) -> dict[str, str]:
    """Every value of one view for the slide's Results."""
    return VIEWS[view](results)
