"""Chart titles that state the finding (ui/findings.py): each sentence from values the model computes."""

import dataclasses
from collections import Counter

import numpy as np
import pytest

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import evaluate
from trinity_desktop.model.formulas import flash_io
from trinity_desktop.model.views import techniques as tq
from trinity_desktop.model.views.split import lookup, optimal_split, split_table
from trinity_desktop.model.views.variants import compare
from trinity_desktop.model.views.workloads import evaluate_library
from trinity_desktop.ui import findings
from trinity_desktop.ui.units import fmt_bytes, fmt_seconds


@pytest.fixture(scope="module")
def train():
    return evaluate(default_scenario())


@pytest.fixture(scope="module")
def decode():
    return evaluate(dataclasses.replace(default_scenario(), kind="decode"))


def test_bound_title_names_the_roof_batch_and_time(decode):
    text = findings.bound_title("decode", "HBM", f"batch {decode.scenario.batch}", decode.time_total, "token")
    assert text == f"Decode is HBM-bound at batch {decode.scenario.batch}: {fmt_seconds(decode.time_total)} per token"


def test_memory_title_says_fits_and_the_largest_part(train):
    total, cap = train.memory_total / 1e9, train.capacity / 1e9
    largest = max(train.memory, key=train.memory.get)
    text = findings.memory_title(total, cap, "Activations")
    assert text.startswith(f"{total:.0f} of {cap:.0f} GB per GPU: ")
    assert ("does not fit" in text) == (not train.fits) and text.endswith("activations largest")
    assert findings.memory_title(59.0, 80.0, "Activations") == "59 of 80 GB per GPU: fits, activations largest"
    assert largest in train.memory


def test_time_title_gives_the_largest_stage_share(train):
    stage = max(train.time, key=train.time.get)
    share = train.time[stage] / train.time_total
    text = findings.time_title("Step time", train.time_total, "Compute", train.time[stage])
    assert text == f"Step time {fmt_seconds(train.time_total)}: compute takes {share:.0%}"


def test_binding_count_and_triangle_titles_over_the_library(train):
    rows = [r for r in evaluate_library(train.scenario.hardware, train.scenario) if r.results is not None]
    bindings = [r.results.bottleneck for r in rows]
    top = Counter(bindings).most_common(1)[0][0]  # ties by order, as the title breaks them
    text = findings.binding_count_title(bindings, "H100")
    assert text == f"{top.capitalize()} binds {bindings.count(top)} of {len(rows)} workloads on H100"
    text = findings.triangle_title(train.bottleneck, getattr(train.pressure, train.bottleneck), bindings, "H100")
    assert text == (f"{train.bottleneck.capitalize()} binds this scenario ({getattr(train.pressure, train.bottleneck):.2f}); "
                    f"{top} binds {bindings.count(top)} of {len(rows)} workloads on H100")
    assert findings.triangle_title("memory", 1.24, ["memory"], "H100") == \
        "Memory binds this scenario (1.24: does not fit); memory binds 1 of 1 workloads on H100"
    assert findings.binding_count_title([], "H100") == "No workload evaluates on H100"


def test_tiled_io_title_is_the_theorem_2_ratio():
    std = float(flash_io.standard_attention_hbm_bytes(8192, 128, 8, 1, 2.0, True, masked=True))
    fa = float(flash_io.flash_attention_hbm_bytes(8192, 128, 8, 1, 227 * 1024, 2.0, True))
    text = findings.tiled_io_title(std, fa, True)
    assert text == f"Tiling moves {std / fa:.1f}× fewer HBM bytes: {fmt_bytes(fa)} vs {fmt_bytes(std)} per layer"
    assert findings.ratio_words(2.0, 1.0) == "2.0× more" and findings.ratio_words(1.0, 1.0) == "as many"


def test_best_variant_title_is_the_fastest_that_fits(train):
    variants = [v for v in compare(train.scenario) if v.results is not None]
    base = variants[0]
    rows = [(v.name, v.time_total, v.fits) for v in variants]
    best = min((v for v in variants if v.fits), key=lambda v: v.time_total)
    text = findings.best_variant_title(rows, base.time_total, base.fits, "step")
    if base.fits:
        assert text.startswith(f"{best.name[:1].upper()}{best.name[1:]} is fastest: {fmt_seconds(best.time_total)}")
    else:
        assert text == f"Baseline does not fit: {best.name} is the fastest that does, {fmt_seconds(best.time_total)} per step"
    assert findings.best_variant_title([("a", 1.0, False)], 1.0, False, "step") == "No variant fits in memory here"
    assert findings.best_variant_title([("+ x", 0.9, True)], 1.0, True, "step") == \
        "+ x is fastest: 900 ms per step, 10% less than baseline"


def test_split_title_against_neurosurgeon_table():
    prof, dev, net, cloud = lookup("alexnet", "phone-a17-pro", "wifi")
    t = split_table(prof, dev, net, cloud)
    k = int(optimal_split(t, "latency"))
    col = t["total_s"]
    text = findings.split_title("all device", "latency", float(col[k]), float(col[-1]), float(col[0]))
    other = max(col[-1], col[0])
    assert text.startswith(f"All device is fastest: {fmt_seconds(col[k])}")
    if other > col[k] * 1.005:
        assert text.endswith(f"{other / col[k]:.1f}× less than {'all device' if col[-1] >= col[0] else 'all cloud'}")
    assert "mJ" in findings.split_title("split after pool5", "energy", 0.003, 0.015, 0.019)


def test_tradeoff_title_from_the_computed_effect(train):
    e = tq.technique_effect(train.scenario, "recompute-full")
    text = findings.tradeoff_title("compute", "memory", "Full recompute", e.saved_pct, e.spent_pct, 1)
    spent = f"{'+' if e.spent_pct >= 0 else '−'}{abs(e.spent_pct):.0f}%"   # one minus sign: U+2212
    assert text == f"Full recompute saves the most memory: −{e.saved_pct:.0f}% for {spent} compute"
    assert "-" not in findings.tradeoff_title("compute", "memory", "W", 61.0, -69.0, 2).replace("Trade-off", "")
    assert findings.tradeoff_title("compute", "memory", "W", 61.0, -69.0, 2).endswith("−61% for −69% compute")
    assert findings.tradeoff_title("memory", "bandwidth", "", 0, 0, 0) == "Nothing here spends memory to save bandwidth"


def test_small_titles():
    assert findings.kv_policy_title("full cache", 1.0, 8192) == "Full cache keeps 100% of 8,192 tokens"
    assert findings.sync_title("Ring all-reduce", 16, 1.2, {"scale-up": 1e9, "scale-out": 4e10}) == \
        f"Ring all-reduce over 16 ranks: {fmt_seconds(1.2)}, most bytes on scale-out ({fmt_bytes(4e10)})"
    assert findings.sync_title("Ring all-reduce", 1, 0.0, {}) == "Ring all-reduce: one rank, nothing to send"
    assert findings.residency_title(32768, "tokens", 1.0, 0.012, 5120) == \
        f"KV cache stays in HBM up to 32k tokens; at 5k: 100% in HBM, {fmt_seconds(0.012)} per step"
    assert findings.count_text(1 << 20) == "1M" and findings.count_text(52300) == "52,300"
    bits, gb = (16, 8, 4, 3, 2), np.array([6.43, 3.21, 1.61, 1.2, 0.8])
    assert findings.storage_title(bits, gb, 8.0) == "16-bit weights take 6.43 of 8 GB; 4-bit 1.61 GB"
    assert findings.storage_title(bits, gb * 2, 8.0) == "16-bit weights (12.86 GB) do not fit in 8 GB; 4-bit 3.22 GB"
    meets = (False, True, True, True, True)
    assert findings.speed_title(bits, (6.3, 12.5, 24.4, 32, 46.7), meets, 100) == \
        "8-bit is the widest to meet 100 ms per token: 12.5 tokens/s"
    assert findings.speed_title(bits, (1, 2, 3, 4, 5), (False,) * 5, 10).startswith("No width meets 10 ms")
    assert findings.hierarchy_title("HBM", 3.35e12, 80e9, "NVMe SSD", 7e9, 3.84e12) == \
        "HBM streams 479× faster than NVMe SSD, which holds 48× more"
    assert findings.planner_title("TP8 PP4", True, 1.21, 412, 6000) == \
        f"TP8 PP4 is fastest: {fmt_seconds(1.21)} per step (412 of 6,000 layouts fit)"
    assert findings.planner_title("", True, 0.0, 0, 6000) == "None of 6,000 layouts fits"
    assert findings.map_title("PP 16, TP 2", 36.6, 21, 49) == \
        f"Best at PP 16, TP 2: {fmt_seconds(36.6)} per step; nothing fits in 21 of 49 cells"
    assert findings.map_title("", 0.0, 49, 49) == "Nothing fits in any of the 49 cells"
    assert findings.validation_title(14, 0.18, 11) == "Median error 18% over 14 published runs; 11 inside p05–p95"
    assert findings.sensitivity_title("step time", "HBM efficiency", 0.61) == \
        "Step time depends most on HBM efficiency (total Sobol index 0.61)"
    assert findings.sensitivity_title("step time", "Compute efficiency", 0.94).endswith("on compute efficiency "
                                                                                       "(total Sobol index 0.94)")


def test_a_part_keeps_its_capitals_inside_a_title():
    """Slides read "gemms (weights) takes 43%" and "kv cache largest": names are lower-cased only where they
    are words, never acronyms."""
    assert findings.time_title("Time per output token", 0.015, "GEMMs (weights)", 0.0065).endswith(
        "GEMMs (weights) takes 43%")
    assert findings.time_title("Step time", 29.0, "Compute", 21.5).endswith("compute takes 74%")
    assert findings.memory_title(38, 141, "KV cache") == "38 of 141 GB per GPU: fits, KV cache largest"
    assert findings.memory_title(63, 80, "Activations") == "63 of 80 GB per GPU: fits, activations largest"
