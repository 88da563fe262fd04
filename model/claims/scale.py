"""The synthesis seed's claims about scale over time, each next to the number the app computes: vector-database
scaling (500K / 1M / 10M), tokens per step (4M -> 60M), the memory wall (open question 4), test-time compute
(its claim and open question 5) and activation recomputation (50-90% memory for 15-20% compute)."""

from __future__ import annotations

from trinity_desktop.model.claims.claim import Claim, judge, judge_range
from trinity_desktop.model.formulas.batch_law import optimal_batch_tokens, published_points
from trinity_desktop.model.formulas.retrieval import evaluate_retrieval, spill_points
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.inputs.scale_facts import retrieval_points
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.inputs.tiers import tier_map
from trinity_desktop.model.views.memory_wall import memory_wall, open_question_4
from trinity_desktop.model.views.recompute import (
    SEED_EXTRA_COMPUTE_PCT,
    SEED_MEMORY_SAVED_PCT,
    recompute_effects,
)
from trinity_desktop.model.views.test_time import compare

HARDWARE = "h100-sxm"          # a single-H100 server: the GPU's share of host DRAM and SSD (tiers.py)
EMBEDDING_DIM = 1536           # OpenAI embeddings, the dimension of the pgvector benchmarks read
TARGET_ACCURACY = 0.70         # AIME 2024, DeepSeek-R1 Table 5
REASONING_TOKENS = 8192        # tokens per sample for open question 5


def recompute_scenario() -> Scenario:
    """Llama-3-70B at 8k tokens on 64 H100s (TP 8, PP 4, sequence parallel), attention scores stored (no
    FlashAttention): the setting of Korthikanti et al., where selective recompute has something to recompute."""
    return Scenario(hardware=hardware_presets()[HARDWARE], model=model_presets()["llama-3-70b"], kind="train",
                    gpus=64, tp=8, pp=4, seq_len=8192, global_batch=64, flash_attention=False)


def _retrieval_claims() -> list[Claim]:
    hw = hardware_presets()[HARDWARE]
    small = evaluate_retrieval(5e5, EMBEDDING_DIM, "hnsw", hw)
    cliff = spill_points(EMBEDDING_DIM, "hnsw", hw)["host"]
    big = evaluate_retrieval(1e7, EMBEDDING_DIM, "hnsw", hw)
    qdrant = {p.vectors: p for p in retrieval_points() if p.engine == "Qdrant"}
    q1, q10 = qdrant[1e6], qdrant[1e7]
    vdb = next(p for p in retrieval_points() if p.source == "vectordbbench")
    run = f"trinity-desktop calc retrieval --vectors {{n}} --dim {EMBEDDING_DIM} --index hnsw --hardware {HARDWARE} --json"
    return [
        Claim("vector-db-pgvector-500k", "synthesis", "pgvector works excellently under 500K vectors",
              None, float(small.query_s) * 1e3, "ms per query", "agrees" if str(small.tier) == "host" else "disagrees",
              None, "dock_retrieval", "pgvector", run.format(n=500000),
              f"500K x {EMBEDDING_DIM}-d fp32 HNSW is {float(small.index_bytes) / 1e9:.1f} GB: it sits in host DRAM, "
              f"{float(small.query_s) * 1e3:.2f} ms per query from the tier's latency and bandwidth."),
        Claim("vector-db-pgvector-1m", "synthesis", "pgvector degrades significantly beyond 1M vectors",
              1e6, cliff, "vectors", judge(1e6, cliff, 0.5), None, "dock_retrieval", "rivestack-pgvector-bench",
              run.format(n=1000000),
              f"The cliff is where the HNSW index outgrows DRAM: {cliff:,.3g} vectors of {EMBEDDING_DIM}-d fp32 in "
              f"an H100 server's {tier_map(hw)['host'].capacity_bytes / 1e9:.0f} GB of host DRAM per GPU, 16e9 / {float(big.index_bytes) / 1e7:,.0f} B = "
              f"{16e9 / (float(big.index_bytes) / 1e7):,.3g} on the 16 GB instance that served 1M at recall 0.75. "
              f"A RAM-size cliff, not a property of 1M vectors. VectorDBBench: pgvector on {vdb.machine.split(',')[0]} "
              f"ran {vdb.vectors / 1e3:.0f}K x {vdb.dim}-d at {vdb.qps:.2f} QPS and left no result at 5M."),
        Claim("vector-db-qdrant-10m", "synthesis", "Qdrant maintains performance at 10M+ vectors",
              None, float(big.query_s) * 1e3, "ms per query", "agrees" if str(big.tier) == "host" else "disagrees",
              None, "dock_retrieval", "hnsw", run.format(n=10000000),
              f"10M x {EMBEDDING_DIM}-d fp32 HNSW = {float(big.index_bytes) / 1e9:.0f} GB still fits host DRAM "
              "(any HNSW engine, not only Qdrant): no tier change between 1M and 10M on this server. Qdrant's own "
              f"benchmark: {q1.qps:,.0f} QPS at recall {q1.recall:.2f} on {q1.vectors / 1e6:.0f}M x {q1.dim}-d, "
              f"{q10.qps:,.0f} QPS at recall {q10.recall:.2f} on {q10.vectors / 1e6:.0f}M x {q10.dim}-d "
              f"({q10.machine.split(',')[0]})."),
    ]


def _batch_claims() -> list[Claim]:
    points = {p.run.model: p for p in published_points()}
    first, last = points["LLaMA-65B"], points["DeepSeek-V3"]
    grown = last.run.batch_tokens / first.run.batch_tokens
    law = float(optimal_batch_tokens(last.compute) / optimal_batch_tokens(first.compute))
    return [Claim("batch-4m-to-60m", "synthesis", "Batch sizes have grown from 4M tokens (Llama 1) to 60M (DeepSeek)",
                  60e6 / 4e6, grown, "x growth", judge(15.0, grown, 0.1), None, "dock_batch_law", "deepseek-v3",
                  "trinity-desktop claims --json",
                  f"DeepSeek-V3: 15,360 x 4,096 = {last.run.batch_tokens / 1e6:.1f}M tokens vs LLaMA-65B's 4M. The "
                  f"DeepSeek LLM law (0.292 C^0.3271) explains only {law:.1f}× of it between their computes "
                  f"({first.compute:.2g} and {last.compute:.2g} FLOPs); DeepSeek-V3 runs at "
                  f"{last.ratio:.1f}× the law's optimum, LLaMA-65B at {first.ratio:.2f}×.")]


def _memory_wall_claims() -> list[Claim]:
    wall = memory_wall()
    g = wall.growth
    ratio = g["model_memory"].per_2y / g["hbm_bytes"].per_2y
    bw = g["peak_flops"].per_2y / g["hbm_bw"].per_2y
    return [
        Claim("memory-wall-central", "synthesis", "The central challenge in AI infrastructure is memory, not computation",
              None, bw, "x FLOP/s growth per HBM-bandwidth growth", "agrees" if bw > 1 else "disagrees", None,
              "dock_memory_wall", "gholami2024-memory-wall", "trinity-desktop claims --json",
              f"On the presets, FLOP/s grows {g['peak_flops'].per_2y:.2f}× per two years against HBM bandwidth "
              f"{g['hbm_bw'].per_2y:.2f}× (Gholami et al.: 3.0× vs 1.6× over 20 years): the ridge point climbs."),
        Claim("open-question-4", "synthesis", "Open question 4: will model sizes outgrowing memory capacity change the "
              "optimization landscape?", None, ratio, "x model-memory growth per HBM-capacity growth",
              "agrees" if ratio > 1 else "disagrees", None, "dock_memory_wall", "gholami2024-memory-wall",
              "trinity-desktop claims --json", open_question_4(wall)),
    ]


def _test_time_claims() -> list[Claim]:
    hw = hardware_presets()[HARDWARE]
    c = compare(hw, TARGET_ACCURACY)
    i = list(c.small.tokens).index(REASONING_TOKENS)
    ratio = c.large.gpu_seconds[i] / c.small.gpu_seconds[i] if c.small.gpu_seconds[i] > 0 else 0.0
    small, large = c.small.row, c.large.row
    who = (f"{small.model} x {small.samples} samples ({small.accuracy:.1%}) vs {large.model} x {large.samples} "
           f"({large.accuracy:.1%}) on AIME 2024 at >= {TARGET_ACCURACY:.0%}")
    return [
        Claim("test-time-shift", "synthesis", "Test-time compute: a shift from making models larger to allowing them "
              "more thinking time", None, c.crossover_tokens, "reasoning tokens per sample (crossover)",
              "agrees" if c.small_wins_below and c.crossover_tokens > 0 else "disagrees", None, "dock_test_time",
              "deepseek-r1", "trinity-desktop claims --json",
              f"{who}: the small model with more samples costs fewer GPU-seconds per query up to "
              f"{c.crossover_tokens:,.0f} tokens per sample; beyond, its KV cache "
              f"({c.small.kv_end_bytes[-1] / 1e9:.0f} GB at {c.small.tokens[-1]:,.0f}) needs more GPUs than the "
              "larger model."),
        Claim("open-question-5", "synthesis", "Open question 5: how do the benefits of inference-time computation scale "
              "compared to larger model parameters?", None, float(ratio),
              f"x GPU-seconds, larger model / small + samples, at {REASONING_TOKENS:,} tokens",
              "agrees" if ratio > 1 else "disagrees", None, "dock_test_time", "snell2024-test-time",
              "trinity-desktop claims --json",
              f"{who}, {REASONING_TOKENS:,} tokens per sample on {hw.name}: {c.small.gpu_seconds[i]:,.0f} vs "
              f"{c.large.gpu_seconds[i]:,.0f} GPU-seconds, {c.small.latency_s[i]:,.0f} vs {c.large.latency_s[i]:,.0f} s. "
              "Snell et al. find the same direction (a 14× larger model beaten FLOPs-matched) on problems the small "
              "model can partly solve."),
    ]


def _recompute_claims() -> list[Claim]:
    sc = recompute_scenario()
    effects = recompute_effects(sc)
    out = []
    run = ("trinity-desktop calc train --model llama-3-70b --hardware h100-sxm --gpus 64 --tp 8 --pp 4 --seq-len 8192 "
           "--global-batch 64 --no-flash-attention --recompute {mode} --json")
    for mode, e in effects.items():
        out.append(Claim(f"recompute-{mode}-memory", "synthesis", "Activation recomputation reduces memory by 50-90%",
                         sum(SEED_MEMORY_SAVED_PCT) / 2, e.memory_saved * 100, "% activation memory saved",
                         judge_range(*SEED_MEMORY_SAVED_PCT, e.memory_saved * 100), sc, "dock_breakdown", "korthikanti2022",
                         run.format(mode=mode), f"{mode} recompute, Llama-3-70B at 8k on 64 H100s: activations "
                         f"{e.baseline_activation_bytes / 1e9:.1f} -> {e.activation_bytes / 1e9:.1f} GB per GPU."))
        out.append(Claim(f"recompute-{mode}-compute", "synthesis", "... at the cost of 15-20% additional computation",
                         sum(SEED_EXTRA_COMPUTE_PCT) / 2, e.extra_compute * 100, "% extra FLOPs",
                         judge_range(*SEED_EXTRA_COMPUTE_PCT, e.extra_compute * 100),
                         sc, "dock_breakdown", "korthikanti2022", run.format(mode=mode),
                         f"{mode} recompute: hardware FLOPs per step {e.baseline_flops:.3g} -> {e.flops:.3g}."))
    return out


def claims() -> tuple[Claim, ...]:
    """Every scale-over-time claim with its verdict (claimed ranges carry their midpoint as `claimed`)."""
    return tuple(_retrieval_claims() + _batch_claims() + _memory_wall_claims() + _test_time_claims()
                 + _recompute_claims())

