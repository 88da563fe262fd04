"""Heads x tokens grid of what a KV-cache policy keeps: 0 evicted, 1 kept, 2 kept in a quantised format.

Policies (the same ones `kv_policy.kept_tokens` counts; its sources):
  full       every token (vllm)
  window     the last W tokens (mistral7b)
  streaming  S attention sinks + the last W tokens (streamingllm)
  h2o        a budget of ceil(r·c) tokens per head: the most recent floor(budget/2) plus the highest
             accumulated-attention tokens among the rest (h2o: heavy hitters + recent window)
  razor      round(f·heads) retrieval heads keep every token, the others keep sinks + window (razorattention)

H2O needs attention scores; no real model runs here, so they are SYNTHETIC, from a stated, seeded model
(numpy Generator, seed SEED): the accumulated attention a token at age k has received from the k queries
after it under a Zipf-like decay p(d) ∝ 1/d is the harmonic number H_k ≈ ln k + γ, so older tokens collect
more (the H2O observation); each token gets a per-head log-normal factor exp(σ·z) (σ = 1), a few random
"heavy" tokens per head get x HEAVY_BOOST, and the first `sinks` tokens are attention sinks (score +∞ in
effect, streamingllm). Retrieval heads for razor are drawn with the same generator.

Kept-quantised (2) marks kept tokens when the KV dtype is narrower than 16 bits (fp8, int8, int4).

A model whose every layer has a sliding window (Mistral 7B, W = 4096) keeps only its last W tokens whatever the
policy (a rolling buffer): the grid drops everything older. kept_fraction_model is `kv_policy.arch_kept` / c,
the layer average, also for models that mix local and global layers (their grid rows are heads, not layers).
"""

from __future__ import annotations

import numpy as np

from trinity_desktop.model.base.dtypes import BYTES_PER_ELEMENT
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.kv_policy import KV_POLICIES, KV_POLICY_CODE, arch_kept, kept_tokens
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.inference import kv_bytes_per_token

EVICTED, KEPT, KEPT_QUANTISED = 0, 1, 2
SEED = 2601_11577           # arXiv 2601.11577: any fixed seed; stated so the view is reproducible
SIGMA = 1.0                 # log-normal spread of per-token importance
HEAVY_PER_HEAD = 8          # random heavy tokens per head
HEAVY_BOOST = 50.0
SINK_SCORE = 1e12
EULER_GAMMA = 0.5772156649015329
MAX_CELLS = 1 << 23         # heads shown x tokens: 8 heads x 1M tokens
SYNTHETIC_LABEL = ("synthetic attention scores (seeded): Zipf-like decay, per-head log-normal noise, "
                   f"{HEAVY_PER_HEAD} heavy tokens per head, attention sinks; seed {SEED}")


def synthetic_scores(heads: int, context: int, sinks: int = 4, seed: int = SEED) -> np.ndarray:
    """Accumulated attention per (head, token), float32, from the seeded synthetic model above."""
    rng = np.random.default_rng(seed)
    age = context - np.arange(context, dtype=np.float32)          # queries that followed the token, >= 1
    base = np.log(age) + np.float32(EULER_GAMMA)                   # H_age
    noise = np.exp(SIGMA * rng.standard_normal((heads, context), dtype=np.float32))
    scores = base[None, :] * noise
    heavy = rng.integers(0, context, size=(heads, min(HEAVY_PER_HEAD, context)))
    np.multiply.at(scores, (np.arange(heads)[:, None], heavy), np.float32(HEAVY_BOOST))
    scores[:, : min(sinks, context)] = SINK_SCORE
    return scores


def retrieval_heads(heads: int, fraction: float, seed: int = SEED) -> np.ndarray:
    """Indices of the round(f·heads) retrieval heads (RazorAttention), drawn with the seeded generator."""
    n = int(round(fraction * heads))
    rng = np.random.default_rng(seed + 1)
    return np.sort(rng.permutation(heads)[:n])


def kv_matrix(scenario: Scenario, context: int | None = None, heads: int | None = None) -> dict:
    """The keep grid for the scenario's KV policy at `context` tokens (default prompt_len + gen_len).

    Rows are KV heads (MLA: one row, its shared latent); at most MAX_CELLS cells, so very long contexts
    show fewer heads (`heads_shown` of `heads_total`). Returns grid (uint8 heads x tokens), kept_tokens per
    head, kept_fraction (of the grid), kept_fraction_model (`kv_policy.kept_tokens` / context), bytes_kept
    and bytes_full per sequence for the whole model (kv_bytes_per_token at the KV dtype), bytes_full_16bit,
    retrieval_heads (razor), synthetic (True for h2o) and label.
    """
    sc = scenario
    c = int(context if context is not None else sc.prompt_len + sc.gen_len)
    if not 1 <= c <= 1 << 24:
        raise ValidationError("context", context, "a whole number of tokens from 1 to 16777216")
    arch = sc.model
    heads_total = int(heads if heads is not None else (1 if arch.attention == "mla" else arch.kv_heads))
    if heads_total < 1:
        raise ValidationError("heads", heads, "a whole number >= 1")
    shown = max(1, min(heads_total, MAX_CELLS // c))
    policy = sc.kv_policy
    W, S = int(sc.kv_window), int(sc.kv_sinks)
    pos = np.arange(c)
    recent = lambda n: pos >= c - n  # noqa: E731 (last n tokens)
    stream = recent(min(W, c)) | (pos < min(S, c))
    ret = np.zeros(0, dtype=int)
    scores_used = False
    if policy == "full":
        keep = np.ones((shown, c), dtype=bool)
    elif policy == "window":
        keep = np.broadcast_to(recent(min(W, c)), (shown, c)).copy()
    elif policy == "streaming":
        keep = np.broadcast_to(stream, (shown, c)).copy()
    elif policy == "razor":
        keep = np.broadcast_to(stream, (shown, c)).copy()
        ret = retrieval_heads(heads_total, sc.razor_retrieval_fraction)
        keep[ret[ret < shown]] = True
    elif policy == "h2o":
        budget = int(min(c, np.ceil(sc.kv_heavy_ratio * c)))
        n_recent = budget // 2
        n_heavy = budget - n_recent
        keep = np.broadcast_to(recent(n_recent), (shown, c)).copy()
        if n_heavy > 0:
            scores = synthetic_scores(shown, c, S)
            if arch.sliding_window and arch.window_layer_share >= 1.0:  # only the rolling buffer can be kept
                scores[:, :max(c - int(arch.sliding_window), 0)] = -np.inf
            older = c - n_recent
            top = np.argpartition(-scores[:, :older], n_heavy - 1, axis=1)[:, :n_heavy]
            keep[np.arange(shown)[:, None], top] = True
            scores_used = True
    else:  # pragma: no cover - Scenario validates kv_policy
        raise ValidationError("kv_policy", policy, "one of " + ", ".join(KV_POLICIES))
    arch_window = int(arch.sliding_window) if arch.window_layer_share >= 1.0 else 0
    if arch_window:  # every layer attends to its last W tokens only (Mistral's rolling buffer): nothing older stays
        keep &= recent(min(arch_window, c))
    quantised = BYTES_PER_ELEMENT[sc.kv_dtype] < 2.0
    grid = np.where(keep, KEPT_QUANTISED if quantised else KEPT, EVICTED).astype(np.uint8)
    kept_per_head = keep.sum(axis=1)
    kept_fraction = float(kept_per_head.mean() / c)
    if policy == "razor":  # rows beyond `shown` still count when the grid shows fewer heads
        full_row = min(c, arch_window) if arch_window else c
        stream_row = (stream & recent(min(arch_window, c))).sum() if arch_window else stream.sum()
        kept_fraction = float((len(ret) * full_row + (heads_total - len(ret)) * stream_row) / (heads_total * c))
    model_fraction = float(arch_kept(kept_tokens(KV_POLICY_CODE[policy], c, window=W, sinks=S,
                                                 heavy_ratio=sc.kv_heavy_ratio,
                                                 retrieval_fraction=sc.razor_retrieval_fraction),
                                     arch.sliding_window, arch.window_layer_share) / c)
    per_tok = float(kv_bytes_per_token(arch, BYTES_PER_ELEMENT[sc.kv_dtype]))
    return {
        "grid": grid, "context": c, "heads_total": heads_total, "heads_shown": shown, "policy": policy,
        "kept_tokens": kept_per_head, "kept_fraction": kept_fraction, "kept_fraction_model": model_fraction,
        "bytes_kept": kept_fraction * c * per_tok, "bytes_full": c * per_tok,
        "bytes_full_16bit": c * float(kv_bytes_per_token(arch, 2.0)), "kv_dtype": sc.kv_dtype,
        "quantised": quantised, "retrieval_heads": ret, "synthetic": scores_used,
        "label": SYNTHETIC_LABEL if scores_used else "", "window": W, "sinks": S,
    }


def binned_fraction(grid: np.ndarray, columns: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """(kept fraction per head and token bin, bin edges in tokens) of a keep grid, for display: a bin
    covers ceil(tokens / columns) tokens (1 when the context is short)."""
    heads, c = grid.shape
    width = max(1, int(np.ceil(c / max(1, columns))))
    n = int(np.ceil(c / width))
    padded = np.zeros((heads, n * width), dtype=np.float32)
    padded[:, :c] = grid > 0
    counts = np.minimum(width, c - np.arange(n) * width).astype(np.float32)
    frac = padded.reshape(heads, n, width).sum(axis=2) / counts
    edges = np.minimum(np.arange(n + 1) * width, c).astype(float)
    return frac, edges
