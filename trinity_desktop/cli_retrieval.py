"""`calc retrieval`: a vector-search index placed on the memory tiers of one device (model/formulas/retrieval.py).

  calc retrieval --vectors N --dim D --index hnsw|ivfpq|diskann [--dtype fp32|fp16|int8] --hardware H
                 [--m-links M] [--ef-search EF] [--json]
  JSON: index, vectors, dim, dtype, hardware, index_bytes (whole index), dram_bytes (DiskANN's PQ codes kept in
  DRAM), tier (where the index lives: hbm, host, cxl, ssd, or none), tier_capacity_bytes, query_bytes,
  round_trips, query_s, spill_vectors {tier: the largest N that tier still holds}, formula, sources.
"""

from __future__ import annotations

import argparse

from trinity_desktop.model.formulas.retrieval import (
    DTYPE_BYTES,
    INDEX_LABELS,
    INDEXES,
    IndexParams,
    evaluate_retrieval,
    spill_points,
)
from trinity_desktop.model.inputs.presets import find, hardware_presets
from trinity_desktop.model.inputs.tiers import tier_map

FORMULAS = {
    "hnsw": "N x (d b + 4 (2M + M/(M-1))); per query (ef + ln N/ln M) x 2M x (4 + d b) bytes",
    "ivfpq": "N (m + 8) + 4 nlist d; per query 4 nlist d + nprobe/nlist x N (m + 8) bytes",
    "diskann": "N (d b + 4R + 4) on SSD + N m in DRAM; per query L 4-KiB sectors in ceil(L/W) round trips",
}
SOURCES = {"hnsw": ["hnsw", "pgvector"], "ivfpq": ["jegou2011-pq", "pgvector"], "diskann": ["diskann", "jegou2011-pq"]}


def _count(text: str) -> float:
    """An argparse type: a vector count, whole or in e-notation (1e9)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of vectors") from None
    if not (1 <= value <= 1e13) or value != int(value):
        raise argparse.ArgumentTypeError(f"{text} must be a whole number of vectors from 1 to 1e13")
    return value


def add_retrieval_parser(calc, positive_int) -> None:
    p = calc.add_parser("retrieval", help="a vector-search index on the memory tiers of one device")
    p.add_argument("--vectors", type=_count, required=True, help="vectors in the index (e.g. 10000000 or 1e9)")
    p.add_argument("--dim", type=positive_int, required=True, help="dimensions per vector (e.g. 768)")
    p.add_argument("--index", choices=INDEXES, required=True, help="hnsw, ivfpq or diskann")
    p.add_argument("--dtype", choices=tuple(DTYPE_BYTES), default="fp32", help="vector format (default fp32)")
    p.add_argument("--hardware", required=True, help="hardware preset key or name (see `presets`)")
    p.add_argument("--m-links", type=positive_int, default=16, help="HNSW links per node M (default 16, pgvector)")
    p.add_argument("--ef-search", type=positive_int, default=40, help="HNSW search list (default 40, pgvector)")
    p.add_argument("--json", action="store_true", help="print machine-readable JSON")


def retrieval_report(args) -> dict:
    hw = find(hardware_presets(), args.hardware, "--hardware")
    params = IndexParams(m_links=args.m_links, ef_search=args.ef_search)
    r = evaluate_retrieval(args.vectors, args.dim, args.index, hw, args.dtype, params)
    tier = str(r.tier)
    tiers = tier_map(hw)
    return {
        "index": args.index, "vectors": int(args.vectors), "dim": args.dim, "dtype": args.dtype,
        "hardware": hw.name, "index_bytes": float(r.index_bytes), "dram_bytes": float(r.dram_bytes),
        "tier": tier, "tier_capacity_bytes": tiers[tier].capacity_bytes if tier in tiers else 0.0,
        "query_bytes": float(r.query_bytes), "round_trips": float(r.round_trips), "query_s": float(r.query_s),
        "spill_vectors": spill_points(args.dim, args.index, hw, args.dtype, params),
        "formula": FORMULAS[args.index], "sources": SOURCES[args.index],
    }


def retrieval_text(rep: dict) -> str:
    label = INDEX_LABELS[rep["index"]]
    head = (f"{label} over {rep['vectors']:,} x {rep['dim']}-d {rep['dtype']} vectors on {rep['hardware']}: "
            f"{rep['index_bytes'] / 1e9:,.1f} GB")
    if rep["tier"] == "none":
        return head + ": larger than every tier its engine can use (does not fit)."
    where = {"hbm": "device memory", "host": "host DRAM", "cxl": "the CXL pool", "ssd": "SSD"}[rep["tier"]]
    lines = [head + f", held in {where} ({rep['tier_capacity_bytes'] / 1e9:,.0f} GB per GPU).",
             f"Per query: {rep['query_bytes'] / 1e6:,.2f} MB read in {rep['round_trips']:,.0f} dependent round "
             f"trips: {rep['query_s'] * 1e3:,.3f} ms.",
             "Spills past: " + ", ".join(f"{t} at {n:,.3g} vectors" for t, n in rep["spill_vectors"].items())]
    return "\n".join(lines)
