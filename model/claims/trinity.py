"""The first seed's claims (the AI Trinity companion page, seeds/000), each checked on a library workload.

Directional claims become a measure with a threshold: "training skews toward bandwidth and memory" is
max(bandwidth, memory pressure) / compute pressure of dense pretraining, and agrees when it is at least 1.
"Each edge is a substitution path" is checked per named technique: the resource it relieves falls (percent
saved > 0, `model/views/techniques.py`) on the workload the technique is meant for. Pressures are
`Results.pressure` (`model/formulas/pressure.py`), the same numbers the heatmap and the triangle show.
"""

from __future__ import annotations

from trinity_desktop.model.claims.claim import Claim, judge_at_least
from trinity_desktop.model.inputs.presets import hardware_presets, workload_library
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.inputs.tiers import tier_map
from trinity_desktop.model.step.evaluation import evaluate
from trinity_desktop.model.views.split import lookup, optimal_split, split_table
from trinity_desktop.model.views.techniques import technique_effect
from trinity_desktop.model.views.workloads import workload_scenario

HARDWARE = "h100-sxm"  # the library's workloads are checked on the default cluster hardware
SEED = "trinity"
# (claim id, seed text, technique, workload, panel[, scenario changes the technique needs]) for "spend one resource to relieve another"
TECHNIQUE_CLAIMS = (
    ("trinity-recompute", "Checkpointing (Chen et al. 2016): spend compute to relieve memory",
     "recompute-full", "dense-pretrain", "dock_tradeoff"),
    ("trinity-zero", "ZeRO: spend bandwidth to relieve memory", "zero-3", "dense-pretrain", "dock_tradeoff"),
    ("trinity-vdnn", "vDNN / offload: move state over the host link to relieve device memory",
     "offload-optimizer", "dense-pretrain", "dock_tradeoff"),
    ("trinity-dgc", "Deep Gradient Compression: spend compute to relieve bandwidth", "dgc", "dense-pretrain",
     "dock_tradeoff"),
    ("trinity-flashattention", "FlashAttention-style IO optimisation: spend compute to relieve HBM traffic",
     "flashattention", "korthikanti-175b-table3", "dock_tiled_io", {"recompute": "none"}),
    ("trinity-kv-compression", "KV-cache compression relieves memory in long-context serving", "kv-int4",
     "long-context-decode", "dock_residency"),
    ("trinity-kv-eviction", "KV-cache eviction / streaming caches relieve memory", "kv-streaming",
     "long-context-decode", "dock_residency"),
    ("trinity-retrieval-heads", "Retrieval heads (RazorAttention) relieve KV memory", "kv-razor",
     "long-context-decode", "dock_residency"),
    ("trinity-disaggregation", "Memory disaggregation: a CXL pool relieves device memory", "cxl-memory-pool",
     "long-context-decode", "dock_residency"),
    ("trinity-in-network", "In-network aggregation relieves all-reduce bandwidth", "in-network-aggregation",
     "dense-pretrain", "dock_tradeoff", {"zero": 0}),
)


def workload(key: str) -> Scenario:
    """A library workload on the checking hardware."""
    return workload_scenario(workload_library()[key], hardware_presets()[HARDWARE])


def _reproduce(key: str) -> str:
    return f"trinity-desktop claims --json  (workload {key} on {HARDWARE})"


def training_skew() -> Claim:
    sc = workload("dense-pretrain")
    p = evaluate(sc).pressure
    ratio = max(p.bandwidth, p.memory) / p.compute
    return Claim("trinity-training-skew", SEED, "Training skews toward bandwidth and memory", 1.0, ratio,
                 "max(bandwidth, memory) pressure / compute pressure (claim: >= 1)", judge_at_least(1.0, ratio),
                 sc, "dock_heatmap", "fan2026-trinity", _reproduce("dense-pretrain"),
                 f"dense pretraining binds on {p.binding}: compute {p.compute:.2f}, bandwidth {p.bandwidth:.2f}, "
                 f"memory {p.memory:.2f}")


def moe_training_skew() -> Claim:
    sc = workload("moe-pretrain")
    p = evaluate(sc).pressure
    ratio = max(p.bandwidth, p.memory) / p.compute
    return Claim("trinity-training-skew-moe", SEED, "Training skews toward bandwidth and memory (MoE training "
                 "with expert parallelism)", 1.0, ratio,
                 "max(bandwidth, memory) pressure / compute pressure (claim: >= 1)", judge_at_least(1.0, ratio),
                 sc, "dock_heatmap", "fan2026-trinity", _reproduce("moe-pretrain"),
                 f"MoE pretraining binds on {p.binding}: all-to-all and gradient traffic")


def long_context_kv() -> Claim:
    sc = workload("long-context-decode")
    r = evaluate(sc)
    share = r.memory["kv_cache"] / r.memory_total
    return Claim("trinity-long-context-kv", SEED, "Long-context inference shifts hard toward memory via KV cache",
                 0.5, share, "KV cache / device memory in use (claim: >= 0.5)", judge_at_least(0.5, share), sc,
                 "dock_breakdown", "fan2026-trinity", _reproduce("long-context-decode"),
                 f"128k-context decode: KV cache {r.memory['kv_cache'] / 1e9:.1f} GB of "
                 f"{r.memory_total / 1e9:.1f} GB per GPU")


def memory_before_compute() -> Claim:
    sc = workload("long-context-decode")
    p = evaluate(sc).pressure
    ratio = max(p.bandwidth, p.memory) / p.compute
    return Claim("trinity-memory-bound", SEED, "Long contexts look memory-bound before they look compute-bound",
                 1.0, ratio, "max(HBM bandwidth, memory) pressure / compute pressure (claim: >= 1)",
                 judge_at_least(1.0, ratio), sc, "dock_roofline", "fan2026-trinity",
                 _reproduce("long-context-decode"),
                 f"decode at 128k: bandwidth {p.bandwidth:.2f}, memory {p.memory:.2f}, compute {p.compute:.2f} "
                 "(reading the KV cache bounds each token)")


def long_prefill() -> Claim:
    sc = workload("long-context-prefill")
    p = evaluate(sc).pressure
    ratio = max(p.bandwidth, p.memory) / p.compute
    return Claim("trinity-memory-bound-prefill", SEED, "Long contexts look memory-bound before they look "
                 "compute-bound (the 128k prefill)", 1.0, ratio,
                 "max(HBM bandwidth, memory) pressure / compute pressure (claim: >= 1)", judge_at_least(1.0, ratio),
                 sc, "dock_roofline", "fan2026-trinity", _reproduce("long-context-prefill"),
                 f"the 128k prompt's prefill binds on {p.binding}: attention FLOPs grow with the square of the "
                 "context")


def memory_not_equal() -> Claim:
    hw = hardware_presets()[HARDWARE]
    tiers = tier_map(hw)
    ratio = tiers["hbm"].bandwidth / tiers["host"].bandwidth
    sc = workload("long-context-decode")
    return Claim("trinity-memory-tiers", SEED, "Not all memory is equal: HBM, CPU RAM, SSD and pools differ in "
                 "bandwidth", 1.0, ratio, "HBM bandwidth / host-link bandwidth (claim: > 1)",
                 judge_at_least(1.0, ratio), sc, "dock_residency", "fan2026-trinity",
                 f"trinity-desktop claims --json  (memory tiers of {HARDWARE})",
                 f"{hw.name}: HBM {tiers['hbm'].bandwidth / 1e12:.2f} TB/s, host link "
                 f"{tiers['host'].bandwidth / 1e9:.0f} GB/s")


def technique_claim(cid: str, text: str, technique: str, key: str, panel: str, changes=None) -> Claim:
    """FlashAttention is checked without recomputation (selective recompute already drops the s x s scores it
    would save); in-network aggregation needs plain data parallelism (ZeRO 0)."""
    sc = workload(key).replace(**(changes or {}))
    e = technique_effect(sc, technique)
    if not e.applicable:
        return Claim(cid, SEED, text, None, None, "% of the relieved resource saved", "not-computable", sc, panel,
                     "fan2026-trinity", _reproduce(key), f"{technique} on {key}: {e.reason}")
    return Claim(cid, SEED, text, 0.0, e.saved_pct, f"% of {e.saved} saved (claim: > 0)",
                 "agrees" if e.saved_pct > 0 else "disagrees", sc, panel, "fan2026-trinity", _reproduce(key),
                 f"{technique} on {key}{' with ' + str(changes) if changes else ''}: {e.saved} "
                 f"{e.pct_change[e.saved]:+.1f}%, {e.spent} "
                 f"{e.pct_change[e.spent]:+.1f}%")


def split_computing() -> Claim:
    prof, dev, net, cloud = lookup("resnet-50", "phone-a17-pro", "4g")
    t = split_table(prof, dev, net, cloud)
    best = int(optimal_split(t))
    saved = 100.0 * (1.0 - float(t["device_s"][best]) / float(t["device_s"][-1]))
    return Claim("trinity-split", SEED, "Split computing (Neurosurgeon) spends bandwidth to relieve the edge "
                 "device's compute", 0.0, saved, "% of device compute time saved at the latency-optimal split "
                 "(claim: > 0)", "agrees" if saved > 0 else "disagrees", None, "dock_split", "neurosurgeon",
                 "trinity-desktop calc split --model resnet-50 --device phone-a17-pro --network 4g",
                 f"ResNet-50, A17 Pro phone, 4G: latency-optimal split is {t['names'][best]}; a scenario "
                 "holds one device class, so the split panel computes it")


def claims() -> tuple[Claim, ...]:
    """Every checked claim of the first seed."""
    return (training_skew(), moe_training_skew(), long_context_kv(), memory_before_compute(), long_prefill(),
            memory_not_equal(), *(technique_claim(*row) for row in TECHNIQUE_CLAIMS), split_computing())
