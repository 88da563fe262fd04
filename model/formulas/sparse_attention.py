"""Keys a query reads and tokens a layer caches under two sparse-attention patterns that keep the whole history.
Vectorised over the context.

Native sparse attention (NSA; Yuan et al. 2025, arXiv 2502.11089 §3.3, configuration of §4.1): three branches
per query at position t, each with its own keys and values (§3.3.3):
  compressed  one key per block of l tokens taken every d tokens: ⌊(t − l)/d⌋ + 1 keys (Eq. 7; 0 before l)
  selected    the n top blocks of l' tokens: min(n·l', t) keys
  window      the last w tokens: min(w, t) keys
  read(t)   = compressed + selected + window;  §4.1: l = 32, d = 16, l' = 64, n = 16, w = 512
  cached(t) = t (the selection branch's full cache) + compressed + window (the other branches' own K/V)
The paper's Table 4 ratios of tokens read per decoding step, t / read(t): 4.0x at 8k, 6.4x at 16k, 9.1x at
32k and 11.6x at 64k, which `nsa_keys_read` reproduces.

Strided block-sparse attention (Sparse Transformer; Child et al. 2019 §4.2): one head attends to the previous
l positions, the other to every l-th position, with the stride l close to √n for sequences of n tokens, so a
query reads min(t, l) + ⌈t / l⌉ keys (≈ 2√n at t = n, O(n·√n) per sequence) and every key stays cached.

Attention-score FLOPs per query are proportional to the keys read (formulas.flops.attention_core_flops_per_token)
and KV bytes read per query are keys read x KV bytes per token per layer.
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars: one formula, grid and scalar


@dataclass(frozen=True)
class NsaConfig:
    """NSA's block sizes and counts (§4.1 of Yuan et al. 2025)."""

    compress_block: int = 32     # l
    compress_stride: int = 16    # d
    select_block: int = 64       # l'
    selected: int = 16           # n (the first block and two local blocks among them)
    window: int = 512            # w


NSA_PAPER = NsaConfig()


def nsa_compressed_keys(context, cfg: NsaConfig = NSA_PAPER):
    """⌊(t − l)/d⌋ + 1 compressed keys at position t (0 before the first full block; Eq. 7)."""
    t = xp.asarray(context, dtype=float)
    return xp.where(t >= cfg.compress_block, xp.floor((t - cfg.compress_block) / cfg.compress_stride) + 1.0, 0.0)


def nsa_keys_read(context, cfg: NsaConfig = NSA_PAPER):
    """Keys a query at position t reads over NSA's three branches: compressed + min(n·l', t) + min(w, t)."""
    t = xp.asarray(context, dtype=float)
    return (nsa_compressed_keys(t, cfg) + xp.minimum(float(cfg.selected * cfg.select_block), t)
            + xp.minimum(float(cfg.window), t))


def nsa_extra_cached(context, cfg: NsaConfig = NSA_PAPER):
    """Tokens cached per layer beyond the full cache: the compressed keys and the window branch's own K/V."""
    t = xp.asarray(context, dtype=float)
    return nsa_compressed_keys(t, cfg) + xp.minimum(float(cfg.window), t)


def strided_stride(sequence) -> int:
    """The Sparse Transformer's stride l for sequences of n tokens: the whole number closest to √n (≥ 1)."""
    return max(1, int(round(float(sequence) ** 0.5)))


def strided_keys_read(context, stride):
    """Keys a query at position t reads under the strided pattern: min(t, l) local + ⌈t / l⌉ strided."""
    t = xp.asarray(context, dtype=float)
    return xp.minimum(t, float(stride)) + xp.ceil(t / float(stride))


def read_ratio(context, keys_read):
    """Dense over sparse keys read per query, t / read(t) (NSA Table 4's expected decoding speed-up)."""
    return xp.asarray(context, dtype=float) / xp.asarray(keys_read, dtype=float)
