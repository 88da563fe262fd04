"""FlashAttention IO model: HBM bytes and memory of standard attention vs FlashAttention. Vectorized.

Source: Dao, Fu, Ermon, Rudra, Ré, "FlashAttention: Fast and Memory-Efficient Exact Attention with
IO-Awareness", NeurIPS'22, arXiv 2205.14135 (reference key "flashattention"). Section and algorithm numbers
are those of the arXiv paper:

- Algorithm 0 (§2.2): standard attention forward; Algorithm 3 (App. B.2): standard backward.
- Algorithm 1 (§3.1) / Algorithm 2 (App. B.3): FlashAttention forward; Algorithm 4 (App. B.4): backward.
- Theorem 2 (§3.2): standard attention needs Θ(Nd + N²) HBM accesses, FlashAttention Θ(N²d²M⁻¹);
  App. B/Theorem 5 extends the bound to the backward pass.

Conventions (all stated; every function broadcasts over numpy arrays in every numeric argument):

- Counts are per attention head and per sequence, then multiplied by `heads · batch`. N is the sequence
  length (queries = keys = N), d the head dimension. Results are bytes (SI), never element counts.
- **M is counted in elements**: `M = M_bytes / elem_bytes`. Algorithm 1 sizes its blocks so that the four
  blocks Q_i, K_j, V_j, O_i (each B×d elements) fit on chip: B_c = ⌈M/(4d)⌉, B_r = min(B_c, d). The paper
  writes M for "SRAM size" without a unit; elements is the reading under which its Alg. 1 line 1 fits in it.
- M is one streaming multiprocessor's SRAM (FlashAttention runs one thread block per SM): the hardware's
  `sram_per_core_bytes`; where a preset has none, `DEFAULT_SRAM_BYTES` = 100 KB, the paper's "M ≈ 100 KB"
  (§3.2, typical values).
- The softmax statistics ℓ and m are kept in fp32 (`STAT_BYTES` = 4), as the reference CUDA implementation
  does; matrices use `elem_bytes` (2 for fp16/bf16).
- No causal block skipping: the N × N score matrix is fully visited, as in the paper's IO analysis.
"""

from __future__ import annotations

import numpy as np

DEFAULT_SRAM_BYTES = 100e3   # paper §3.2: "M ≈ 100 KB" (decimal KB, the project's unit convention)
STAT_BYTES = 4.0             # ℓ and m (row sum and row max of the softmax) are fp32
DROPOUT_MASK_BYTES = 1.0     # PyTorch stores a dropout mask as one bool byte per element
ACCUM_BYTES = 4.0            # FlashAttention's backward accumulates dQ in fp32 (the dq_accum buffer)

# Passes over N x N matrices (elements read + written, at elem_bytes each) and over N x d matrices.
# Algorithm 0 (forward): write S; read S, write P; read P  -> 4 N², and read Q, K, V, write O -> 4 Nd.
STD_FWD_SCORE_PASSES = 4.0
STD_FWD_ND_PASSES = 4.0
# Algorithm 3 (backward): read P (dV = PᵀdO); write dP; read P, dP, write dS; read dS twice (dQ, dK)
# -> 7 N², and read dO (dV), dO and V (dP), K (dQ), Q (dK); write dV, dQ, dK -> 8 Nd.
STD_BWD_SCORE_PASSES = 7.0
STD_BWD_ND_PASSES = 8.0
# An attention mask applied as its own kernel (PyTorch masked_fill): read S, write S' forward; read and
# write the gradient backward. Not part of Algorithm 0; GPT-2 (causal) and the later Fig. 2 (key padding)
# use one.
MASK_FWD_PASSES = 2.0
MASK_BWD_PASSES = 2.0
# Dropout on P as its own kernel: read P, write P_dropped (+ a 1-byte mask) forward; read dP_dropped and
# the mask, write dP backward.
DROPOUT_FWD_PASSES = 2.0
DROPOUT_BWD_PASSES = 2.0

# Memory footprint (Table 21, attention memory of a forward + backward pass). Table 21's "MB" is read as
# MiB (2^20 B): under that reading the PyTorch column is exactly 4 N x N matrices + 10 N x d tensors at
# 2 bytes for all six sequence lengths (a two-parameter fit, checked on the other four points within 1%).
STD_MEMORY_SCORE_MATRICES = 4.0   # S, P, dP, dS alive together at the peak of the backward pass
# Q, K, V, O, dO, dQ, dK, dV are 8 of these; the other 2 are N x d buffers the benchmark holds in both
# implementations (read off the table, not attributed to named tensors). FlashAttention holds the same 10.
MEMORY_ND_TENSORS = 10.0
FLASH_MEMORY_STATS = 2.0          # two fp32 values per row: the log-sum-exp (forward) and D = rowsum(dO∘O)

TABLE21_MIB = 2.0**20


def sram_elements(M_bytes, elem_bytes=2.0):
    """M in elements: SRAM bytes / bytes per element (the convention of Algorithm 1's block sizes; Dao et al. 2022)."""
    return np.asarray(M_bytes, dtype=float) / np.asarray(elem_bytes, dtype=float)


def block_sizes(M_bytes, d, elem_bytes=2.0):
    """(B_c, B_r) of Algorithm 1 line 1: B_c = ⌈M/(4d)⌉, B_r = min(B_c, d), with M in elements.

    Broadcasts; returns float arrays (0-d for scalar input)."""
    d = np.asarray(d, dtype=float)
    bc = np.maximum(1.0, np.ceil(sram_elements(M_bytes, elem_bytes) / (4.0 * d)))
    br = np.minimum(bc, d)
    return bc, br


def outer_passes(N, d, M_bytes, elem_bytes=2.0):
    """T_c = ⌈N / B_c⌉: the number of outer-loop passes over Q, O, ℓ, m (Dao et al. 2022, Algorithm 1 line 5)."""
    bc, _ = block_sizes(M_bytes, d, elem_bytes)
    return np.ceil(np.asarray(N, dtype=float) / bc)


def standard_attention_hbm_bytes(N, d, heads, batch, elem_bytes=2.0, backward=True, masked=False,
                                 dropout=False):
    """HBM bytes read + written by standard attention, Θ(Nd + N²) per head (Theorem 2).

    Forward (Algorithm 0): 4 passes over N×N (S written, S read and P written, P read) and 4 over N×d
    (Q, K, V read, O written). Backward (Algorithm 3): 7 passes over N×N and 8 over N×d. Optional kernels
    the plain algorithm does not have: `masked` adds a separate masking pass (2 N² forward, 2 N² backward);
    `dropout` adds a dropout pass (2 N² + a 1-byte mask forward; 2 N² + the mask backward).
    Totals per head: 11 N² + 12 Nd elements forward + backward without mask or dropout.
    """
    N, d, e = (np.asarray(x, dtype=float) for x in (N, d, elem_bytes))
    back = np.asarray(backward, dtype=bool)
    mask = np.asarray(masked, dtype=bool)
    drop = np.asarray(dropout, dtype=bool)
    score_passes = (STD_FWD_SCORE_PASSES + np.where(mask, MASK_FWD_PASSES, 0.0)
                    + np.where(drop, DROPOUT_FWD_PASSES, 0.0)
                    + np.where(back, STD_BWD_SCORE_PASSES + np.where(mask, MASK_BWD_PASSES, 0.0)
                               + np.where(drop, DROPOUT_BWD_PASSES, 0.0), 0.0))
    mask_bytes = np.where(drop, DROPOUT_MASK_BYTES * (1.0 + back), 0.0)  # written forward, read backward
    nd_passes = STD_FWD_ND_PASSES + np.where(back, STD_BWD_ND_PASSES, 0.0)
    per_head = N * N * (score_passes * e + mask_bytes) + nd_passes * N * d * e
    return per_head * np.asarray(heads, dtype=float) * np.asarray(batch, dtype=float)


# The elementwise share of those passes (the rest are the score GEMMs' own S write and P read, dP write and
# dS reads): softmax forward reads S and writes P (2 N²); its backward reads P and dP and writes dS (3 N²).
STD_FWD_SOFTMAX_PASSES = 2.0
STD_BWD_SOFTMAX_PASSES = 3.0


def standard_attention_elementwise_bytes(N, heads, batch, elem_bytes=2.0, forward_passes=1.0, backward=True,
                                         masked=False, dropout=False):
    """HBM bytes of standard attention's elementwise kernels over the N×N score matrix (Algorithms 0 and 3 less
    the GEMMs' own reads and writes, which the GEMM is timed with): the softmax (2 N² forward, 3 N² backward),
    the optional mask (2 + 2 N²) and dropout (2 + 2 N² and a 1-byte mask written forward, read backward).
    Each pass over the matrix is counted once; a recomputed forward (`forward_passes` 2: selective or full
    recomputation) runs the forward kernels again, mask regenerated with it."""
    N, e, fwd = (np.asarray(x, dtype=float) for x in (N, elem_bytes, forward_passes))
    back, mask, drop = (np.asarray(x, dtype=bool) for x in (backward, masked, dropout))
    f = (STD_FWD_SOFTMAX_PASSES + np.where(mask, MASK_FWD_PASSES, 0.0) + np.where(drop, DROPOUT_FWD_PASSES, 0.0)) * e
    f = f + np.where(drop, DROPOUT_MASK_BYTES, 0.0)
    b = (STD_BWD_SOFTMAX_PASSES + np.where(mask, MASK_BWD_PASSES, 0.0) + np.where(drop, DROPOUT_BWD_PASSES, 0.0)) * e
    b = np.where(back, b + np.where(drop, DROPOUT_MASK_BYTES, 0.0), 0.0)
    return N * N * (fwd * f + b) * np.asarray(heads, dtype=float) * np.asarray(batch, dtype=float)


def _flash_terms(d, elem_bytes, backward):
    """Per-head coefficients of FlashAttention's HBM bytes: (per-pass bytes per row, fixed bytes per Nd,
    fixed bytes per N). Total per head = T_c · N · per_row + N·d·fixed_nd + N·fixed_n."""
    d, e = np.asarray(d, dtype=float), np.asarray(elem_bytes, dtype=float)
    back = np.asarray(backward, dtype=bool)
    # Forward, each outer pass j (Algorithm 1 lines 8 and 12-13): read Q_i, O_i, ℓ_i, m_i and write
    # O_i, ℓ_i, m_i for every row block i: 3d elements + 4 statistics per row.
    per_row = 3.0 * d * e + 4.0 * STAT_BYTES
    # Forward, once: K and V read block by block (line 6), O, ℓ, m initialised in HBM (line 2).
    fixed_nd = 2.0 * e + 1.0 * e
    fixed_n = 2.0 * STAT_BYTES
    # Backward, each outer pass (Algorithm 4): read Q_i, O_i, dO_i, dQ_i, ℓ_i, m_i, write dQ_i.
    per_row = per_row + np.where(back, 5.0 * d * e + 2.0 * STAT_BYTES, 0.0)
    # Backward, once: dQ, dK, dV initialised (line 5), K_j, V_j read (line 7), dK_j, dV_j written (line 24).
    fixed_nd = fixed_nd + np.where(back, 3.0 * e + 2.0 * e + 2.0 * e, 0.0)
    return per_row, fixed_nd, fixed_n


def flash_attention_hbm_bytes(N, d, heads, batch, M_bytes, elem_bytes=2.0, backward=True):
    """HBM bytes read + written by FlashAttention, Θ(N²d²/M) per head (Theorem 2; backward App. B).

    K and V are read once; Q, O, ℓ, m are read and written once per outer pass, T_c = ⌈N/B_c⌉ passes with
    B_c = ⌈M/(4d)⌉ (Algorithm 1). The backward pass (Algorithm 4) reads K, V once, writes dK, dV once, and
    per outer pass reads Q, O, dO, dQ, ℓ, m and writes dQ. The dropout mask is regenerated on chip from
    the RNG state (Algorithm 2), so dropout adds no HBM traffic.
    """
    N = np.asarray(N, dtype=float)
    d = np.asarray(d, dtype=float)
    tc = outer_passes(N, d, M_bytes, elem_bytes)
    per_row, fixed_nd, fixed_n = _flash_terms(d, elem_bytes, backward)
    per_head = tc * N * per_row + N * d * fixed_nd + N * fixed_n
    return per_head * np.asarray(heads, dtype=float) * np.asarray(batch, dtype=float)


def standard_attention_memory_bytes(N, d, heads, batch, elem_bytes=2.0):
    """Attention memory of a forward + backward pass with standard attention (Table 21's PyTorch column):
    4 N×N matrices (S, P, dP, dS) + 10 N×d tensors per head, at `elem_bytes`. Θ(N²)."""
    N, d, e = (np.asarray(x, dtype=float) for x in (N, d, elem_bytes))
    per_head = STD_MEMORY_SCORE_MATRICES * N * N * e + MEMORY_ND_TENSORS * N * d * e
    return per_head * np.asarray(heads, dtype=float) * np.asarray(batch, dtype=float)


def flash_attention_memory_bytes(N, d, heads, batch, elem_bytes=2.0):
    """Attention memory of a forward + backward pass with FlashAttention, linear in N (Theorem 1: O(N)
    extra memory): the same 10 N×d tensors as standard attention, the fp32 dQ accumulator (N×d×4 B) and
    two fp32 statistics per row. No N×N matrix is ever stored.

    Against Table 21 this is 7.7% low for N >= 512 (one N×d tensor per head the benchmark holds that we
    cannot attribute) and 10% high for N <= 256 (the kernel skips the fp32 accumulator when one key block
    covers the sequence)."""
    N, d, e = (np.asarray(x, dtype=float) for x in (N, d, elem_bytes))
    per_head = MEMORY_ND_TENSORS * N * d * e + N * d * ACCUM_BYTES + FLASH_MEMORY_STATS * N * STAT_BYTES
    return per_head * np.asarray(heads, dtype=float) * np.asarray(batch, dtype=float)


def _block_lengths(N: float, block: float, max_cells: int | None) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Sizes of the blocks along one side (the last may be partial), grouped for display without ever
    materialising more than `max_cells` entries: (summed sizes, tile counts, tiles per group, tiles)."""
    tiles = int(np.ceil(N / block))
    if max_cells and tiles > max_cells:
        g = int(np.ceil(tiles / max_cells))
        starts = np.arange(0, tiles, g, dtype=float)
        counts = np.minimum(g, tiles - starts)
        rows = np.minimum(N, (starts + counts) * block) - starts * block
        return rows, counts, g, tiles
    sizes = np.minimum(block, N - np.arange(tiles, dtype=float) * block)
    return sizes, np.ones(tiles), 1, tiles


def tile_grid(N, d, M_bytes, elem_bytes=2.0, backward=True, masked=False, dropout=False,
              max_cells: int | None = None) -> dict:
    """HBM bytes per (B_r × B_c) tile of the N × N score matrix, for one head of one sequence.

    Returns {"flash", "standard"}: arrays of shape (rows, cols) where rows = ⌈N/B_r⌉, cols = ⌈N/B_c⌉
    (B_c is capped at N), plus "Br", "Bc", "Tr", "Tc" and "group" (tiles per displayed cell along each
    side; 1 unless the grid exceeds `max_cells` per side, in which case neighbouring tiles are summed).

    FlashAttention's tile (i, j) is charged what Algorithm 1 (and 4) moves in inner iteration (i, j):
    Q_i, O_i, ℓ_i, m_i (and dO_i, dQ_i) for every tile; K_j, V_j (and dK_j, dV_j) shared over column j;
    the initialisation of O, ℓ, m (dQ, dK, dV) shared over all tiles. Standard attention's equivalent
    charges each tile its share of the N×N passes (S, P, dP, dS) over its elements and spreads the N×d
    traffic evenly. Each array sums exactly to the per-head total of the matching *_hbm_bytes function.
    """
    N = float(N)
    d = float(d)
    bc, br = (float(x) for x in block_sizes(M_bytes, d, elem_bytes))
    bc_eff, br_eff = min(bc, N), min(br, N)
    rows, _, g_r, tr = _block_lengths(N, br_eff, max_cells)
    cols, col_counts, g_c, tc = _block_lengths(N, bc_eff, max_cells)
    per_row, fixed_nd, fixed_n = (float(x) for x in _flash_terms(d, elem_bytes, backward))
    # T_c·N·per_row: every tile charges its rows once -> r_i · (tiles in the cell's columns) · per_row.
    # Fixed terms are spread proportionally to the tile's area r_i·c_j / N².
    area = np.outer(rows, cols) / (N * N)
    flash = np.outer(rows, col_counts) * per_row + area * (N * d * fixed_nd + N * fixed_n)
    std_total = float(standard_attention_hbm_bytes(N, d, 1, 1, elem_bytes, backward, masked, dropout))
    standard = area * std_total
    return {"flash": flash, "standard": standard, "Br": br_eff, "Bc": bc_eff, "Tr": tr, "Tc": tc,
            "group": (g_r, g_c)}
