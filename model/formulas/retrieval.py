"""Vector search in the memory hierarchy: index bytes, bytes read per query, the tier an index lives in and the
query time from that tier's bandwidth and latency. Every function broadcasts over the vector count N.

Index bytes (SI bytes; ids are 4-byte integers unless stated):
- HNSW (Malkov & Yashunin 2018, §4): every vector (d x b bytes) plus its links: 2M at level 0 (Mmax0 = 2M, the
  paper's recommendation) and M on each upper level; a node reaches level >= l with probability M^-l
  (mL = 1/ln M), so it holds 1/(M - 1) upper levels on average: N x (d b + 4 (2M + M/(M - 1))).
- IVF-PQ (Jégou et al. 2011): N PQ codes of m bytes (m sub-quantizers of 8 bits) plus an 8-byte id each, and
  nlist coarse centroids of d fp32 values: N (m + 8) + 4 nlist d.
- DiskANN (Subramanya et al. 2019): PQ codes in DRAM (N m) and, on SSD, each node's full vector and its R
  neighbour ids in one block: N (d b + 4 R + 4).

Bytes read per query:
- HNSW: ef + levels expansions (levels = ln N / ln M, one greedy hop per upper level); each reads one level-0
  link list (2M x 4 B) and the 2M neighbours' vectors: (ef + ln N/ln M) x 2M x (4 + d b). Every expansion
  waits for the previous one: one tier latency per expansion.
- IVF-PQ: all centroids (4 nlist d) plus nprobe of nlist lists: nprobe/nlist x N (m + 8); one latency for the
  centroids and one per probed list.
- DiskANN: L node blocks from SSD, rounded up to 4 KiB sectors (one read per node), in round trips of W
  (beam width), plus the PQ codes of the R neighbours of each visited node from DRAM.

Where it lives: the fastest tier the index's engine can address that holds it: HNSW and DiskANN are searched by
the CPU (hnswlib, pgvector, Qdrant, DiskANN), so they live in host DRAM (or the device's own memory on a laptop
whose device memory is the system DRAM), then CXL, then SSD; IVF-PQ also runs on GPUs (FAISS), so HBM comes
first. DiskANN's PQ codes sit in DRAM and its blocks on SSD by design. Tier capacities, bandwidths and
latencies come from `model.inputs.tiers.tiers_for` (per GPU: the GPU's share of the host's DRAM and SSD).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.tiers import Tier, tiers_for

INDEXES = ("hnsw", "ivfpq", "diskann")
INDEX_LABELS = {"hnsw": "HNSW", "ivfpq": "IVF-PQ", "diskann": "DiskANN"}
DTYPE_BYTES = {"fp32": 4.0, "fp16": 2.0, "int8": 1.0}
ID_BYTES = 4.0            # graph neighbour ids (hnswlib, DiskANN: uint32)
IVF_ID_BYTES = 8.0        # FAISS inverted-list ids (int64)
SECTOR_BYTES = 4096.0     # DiskANN reads whole 4 KiB SSD sectors
CPU_TIERS = ("host", "cxl", "ssd")
GPU_TIERS = ("hbm", "host", "cxl", "ssd")
UNIFIED_KINDS = ("laptop-soc", "laptop-cpu")   # device memory is the CPU's own DRAM
QUOTED_COLLECTIONS = {"10m": 1e7, "1b": 1e9}   # the collection sizes the panel's title and its captions quote


@dataclass(frozen=True)
class IndexParams:
    """Index parameters, each with its source: M = 16 and ef_search = 40 are pgvector's defaults (pgvector);
    PQ codes of d/16 bytes are Jégou et al.'s 0.5 bit per dimension (64-bit codes for 128-d SIFT); nlist = rows
    / 1000 up to 1M rows, sqrt(rows) beyond, and nprobe = sqrt(nlist) follow pgvector's IVF guidance; R = 64,
    L = 100 and W = 4 for DiskANN are modelling assumptions (the paper tunes them per data set)."""

    m_links: int = 16
    ef_search: int = 40
    pq_bytes: float = 0.0          # 0: d / 16
    nlist: float = 0.0             # 0: pgvector's rows/1000 or sqrt(rows)
    nprobe: float = 0.0            # 0: sqrt(nlist)
    degree: int = 64
    search_list: int = 100
    beam_width: int = 4

    def __post_init__(self):
        for name in ("m_links", "ef_search", "degree", "search_list", "beam_width"):
            value = getattr(self, name)
            if not (isinstance(value, int) and 2 <= value <= 100_000):
                raise ValidationError(name, value, "a whole number from 2 to 100000")
        for name in ("pq_bytes", "nlist", "nprobe"):
            if not 0 <= getattr(self, name) <= 1e9:
                raise ValidationError(name, getattr(self, name), "0 (default) or a positive number")


@dataclass(frozen=True)
class Retrieval:
    """One retrieval workload evaluated on one device: bytes (total and per tier), the tier holding the main
    structure ("none" when nothing holds it), bytes read and time per query."""

    index: str
    vectors: object
    dim: int
    dtype: str
    index_bytes: object
    dram_bytes: object           # DiskANN: PQ codes in DRAM (0 for the others)
    tier: object                 # tier name per N
    query_bytes: object
    query_s: object
    round_trips: object


def check(vectors, dim: int, index: str, dtype: str) -> None:
    if index not in INDEXES:
        raise ValidationError("index", index, "one of " + ", ".join(INDEXES))
    if dtype not in DTYPE_BYTES:
        raise ValidationError("dtype", dtype, "one of " + ", ".join(DTYPE_BYTES))
    if not (isinstance(dim, int) and 1 <= dim <= 65_536):
        raise ValidationError("dim", dim, "a whole number of dimensions from 1 to 65536")
    n = np.asarray(vectors, dtype=float)
    if not (np.all(n >= 1) and np.all(n <= 1e13)):
        raise ValidationError("vectors", vectors, "from 1 to 1e13 vectors")


def pq_code_bytes(dim: int, params: IndexParams) -> float:
    """m bytes per PQ code: d/16 (0.5 bit per dimension, Jégou et al. 2011), at least 1."""
    return float(params.pq_bytes) if params.pq_bytes > 0 else max(1.0, dim / 16.0)


def ivf_lists(vectors, params: IndexParams):
    """nlist: rows / 1000 up to 1M rows, sqrt(rows) beyond (pgvector's guidance), at least 1."""
    n = np.asarray(vectors, dtype=float)
    if params.nlist > 0:
        return n * 0 + params.nlist
    return np.maximum(1.0, np.where(n <= 1e6, n / 1000.0, np.sqrt(n)))


def hnsw_link_bytes_per_node(m_links: int) -> float:
    """4 (2M + M/(M - 1)): 2M level-0 links and M links on each of 1/(M - 1) upper levels on average."""
    return ID_BYTES * (2 * m_links + m_links / (m_links - 1))


def index_bytes(vectors, dim: int, index: str, dtype: str = "fp32", params: IndexParams = IndexParams()):
    """(total bytes, bytes that must sit in DRAM) of the index over N vectors (the module's formulas)."""
    check(vectors, dim, index, dtype)
    n = np.asarray(vectors, dtype=float)
    b = DTYPE_BYTES[dtype]
    if index == "hnsw":
        return n * (dim * b + hnsw_link_bytes_per_node(params.m_links)), n * 0.0
    m = pq_code_bytes(dim, params)
    if index == "ivfpq":
        return n * (m + IVF_ID_BYTES) + 4.0 * ivf_lists(n, params) * dim, n * 0.0
    blocks = n * (dim * b + ID_BYTES * params.degree + ID_BYTES)
    return blocks + n * m, n * m


def query_reads(vectors, dim: int, index: str, dtype: str = "fp32", params: IndexParams = IndexParams()):
    """(bytes read per query from the main tier, dependent round trips, DRAM bytes read) per the docstring."""
    n = np.asarray(vectors, dtype=float)
    b = DTYPE_BYTES[dtype]
    if index == "hnsw":
        levels = np.log(np.maximum(n, 2.0)) / math.log(params.m_links)
        expansions = params.ef_search + levels
        return expansions * 2 * params.m_links * (ID_BYTES + dim * b), expansions, n * 0.0
    m = pq_code_bytes(dim, params)
    if index == "ivfpq":
        nlist = ivf_lists(n, params)
        nprobe = np.minimum(nlist, params.nprobe if params.nprobe > 0 else np.sqrt(nlist))
        return 4.0 * nlist * dim + nprobe / nlist * n * (m + IVF_ID_BYTES), 1.0 + nprobe, n * 0.0
    block = dim * b + ID_BYTES * params.degree + ID_BYTES
    sectors = math.ceil(block / SECTOR_BYTES) * SECTOR_BYTES
    trips = math.ceil(params.search_list / params.beam_width)
    return n * 0 + params.search_list * sectors, n * 0 + trips, n * 0 + params.search_list * params.degree * m


def engine_tiers(hw: Hardware, index: str) -> tuple[Tier, ...]:
    """The tiers the index's engine can hold it in, fastest first (module docstring)."""
    names = GPU_TIERS if index == "ivfpq" else CPU_TIERS
    if hw.kind in UNIFIED_KINDS:
        names = ("hbm",) + tuple(n for n in names if n != "hbm")
    by_name = {t.name: t for t in tiers_for(hw)}
    return tuple(by_name[name] for name in names if name in by_name)


def evaluate_retrieval(vectors, dim: int, index: str, hw: Hardware, dtype: str = "fp32",
                       params: IndexParams = IndexParams()) -> Retrieval:
    """Index bytes, its tier and the query time, per N: t = round trips x latency + bytes / bandwidth of the
    tier holding the index (DiskANN adds its DRAM-side PQ reads over the host tier). Past every tier: tier
    "none" and query_s 0 (does not fit is a result)."""
    total, dram = index_bytes(vectors, dim, index, dtype, params)
    reads, trips, dram_reads = query_reads(vectors, dim, index, dtype, params)
    tiers = engine_tiers(hw, index)
    if index == "diskann":   # blocks on SSD by design; the PQ codes in the fastest CPU memory
        main = tuple(t for t in tiers if t.name == "ssd")
        memory = tuple(t for t in tiers if t.name != "ssd")[:1]
    else:
        main, memory = tiers, ()
    main_bytes = total - dram
    caps = np.asarray([t.capacity_bytes for t in main] + [math.inf])
    fits = np.asarray(main_bytes, dtype=float)[..., None] <= caps
    if memory:   # the PQ codes must fit the DRAM tier too; the last column ("none") always matches
        fits[..., :-1] &= np.asarray(dram, dtype=float)[..., None] <= memory[0].capacity_bytes
    where = np.argmax(fits, axis=-1)
    names = np.asarray([t.name for t in main] + ["none"])
    bw = np.asarray([t.bandwidth for t in main] + [math.inf])
    lat = np.asarray([t.latency_s for t in main] + [0.0])
    placed = where < len(main)
    query_s = np.where(placed, trips * lat[where] + reads / bw[where], 0.0)
    if memory:
        query_s = np.where(placed, query_s + dram_reads / memory[0].bandwidth, 0.0)
    return Retrieval(index, vectors, dim, dtype, total, dram, names[where], reads, query_s, trips)


def spill_points(dim: int, index: str, hw: Hardware, dtype: str = "fp32",
                 params: IndexParams = IndexParams()) -> dict[str, float]:
    """{tier name: the largest N whose index that tier still holds}, found by bisection on log N (vectorised
    over the tiers); tiers the engine cannot use, or no larger than a faster tier, are absent."""
    tiers, largest = [], 0.0
    for t in engine_tiers(hw, index):   # a tier no larger than a faster one never receives the index
        if (index != "diskann" or t.name == "ssd") and t.capacity_bytes > largest:
            tiers.append(t)
            largest = t.capacity_bytes
    caps = np.asarray([t.capacity_bytes for t in tiers], dtype=float)
    lo, hi = np.zeros(len(tiers)), np.full(len(tiers), 13.0)
    for _ in range(60):
        mid = (lo + hi) / 2
        total, dram = index_bytes(10.0 ** mid, dim, index, dtype, params)
        ok = (total - dram) <= caps
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return {t.name: float(10.0 ** lo[i]) for i, t in enumerate(tiers)}
