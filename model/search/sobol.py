"""Scrambled Sobol points in numpy: the points `scipy.stats.qmc.Sobol(d, scramble=True, seed=seed).random(n)` draws,
bit for bit, without importing scipy.stats (2.3 s, most of a cold `validate`).

Method (the one scipy.stats.qmc.Sobol implements; tests/model/test_sobol.py checks equality against it):
  1. Direction numbers of Joe and Kuo (2008, search criterion D(6)), read from the table scipy ships
     (scipy/stats/_sobol_direction_numbers.npz: a primitive polynomial and initial numbers per dimension);
     the rest of each dimension's 30 numbers by Bratley and Fox's recurrence (1988, Algorithm 659 §2),
     v_j = v_{j-m} XOR sum_k a_k 2^k v_{j-k}, each then scaled to a 30-bit integer.
  2. Scrambling (Owen 1998; Matousek 1998): a random lower-triangular binary matrix (ones on its diagonal) per
     dimension multiplies every direction number's bits over GF(2) (linear matrix scramble), and a random 30-bit
     digital shift starts the sequence; both drawn from numpy.random.default_rng(seed) in scipy's order.
  3. Point i = (shift XOR the direction numbers of the bits set in Gray code i) / 2^30 (Antonov and Saleev 1979).
"""

from __future__ import annotations

import os
from functools import lru_cache

import numpy as np

BITS = 30


@lru_cache(maxsize=1)
def _direction_table() -> tuple[np.ndarray, np.ndarray]:
    """(poly, vinit) of Joe and Kuo's table, as scipy ships it (imports only the scipy package, not scipy.stats)."""
    import scipy

    with np.load(os.path.join(os.path.dirname(scipy.__file__), "stats", "_sobol_direction_numbers.npz")) as table:
        return table["poly"].astype(np.int64), table["vinit"].astype(np.int64)


def direction_numbers(d: int) -> np.ndarray:
    """The unscrambled direction numbers, shape (d, BITS), as 30-bit integers (step 1 of the module docstring)."""
    poly, vinit = _direction_table()
    v = np.zeros((d, BITS), dtype=np.int64)
    v[0, :] = 1
    for dim in range(1, d):
        p = int(poly[dim])
        m = p.bit_length() - 1
        row = [int(x) for x in vinit[dim, :m]]
        for j in range(m, BITS):
            new = row[j - m]
            for k in range(m):
                if (p >> (m - 1 - k)) & 1:
                    new ^= row[j - k - 1] << (k + 1)
            row.append(new)
        v[dim] = row
    return v << np.arange(BITS - 1, -1, -1)  # column j times 2^(BITS-1-j)


def _bits_msb_first(x: np.ndarray) -> np.ndarray:
    return (x[..., None] >> np.arange(BITS - 1, -1, -1)) & 1


def scrambled_directions(d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(direction numbers after the linear matrix scramble, digital shift), step 2 of the module docstring."""
    shift = rng.integers(2, size=(d, BITS), dtype=np.uint32).astype(np.int64) @ (1 << np.arange(BITS))
    ltm = np.tril(rng.integers(2, size=(d, BITS, BITS), dtype=np.uint32).astype(np.int64))
    ltm[:, np.arange(BITS), np.arange(BITS)] = 1
    bits = _bits_msb_first(direction_numbers(d))               # (d, j, i): bit i (MSB first) of v[d, j]
    scrambled = np.einsum("dpi,dji->djp", ltm, bits) % 2        # L · bits over GF(2)
    return scrambled @ (1 << np.arange(BITS - 1, -1, -1)), shift


def sobol_points(d: int, n: int, seed: int) -> np.ndarray:
    """n scrambled Sobol points in [0, 1)^d, float64, equal to scipy.stats.qmc.Sobol(d, seed=seed).random(n)."""
    sv, shift = scrambled_directions(d, np.random.default_rng(seed))
    index = np.arange(n, dtype=np.int64)
    gray = index ^ (index >> 1)
    quasi = np.broadcast_to(shift, (n, d)).copy()
    for b in range(max(int(n - 1).bit_length(), 0)):
        quasi ^= ((gray >> b) & 1)[:, None] * sv[:, b][None, :]
    return quasi * (1.0 / 2 ** BITS)
