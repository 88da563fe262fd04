"""Vector search in the memory hierarchy: index bytes against the papers' formulas (hand-derived), the tier each
index lives in, query times from the tiers, vectorisation over N, and the CLI (issue 25)."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinity_desktop.cli import run_cli
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas import retrieval as rt
from trinity_desktop.model.inputs.presets import hardware_presets
from trinity_desktop.model.inputs.tiers import tier_map

H100 = hardware_presets()["h100-sxm"]


def test_hnsw_index_bytes_match_the_formula_by_hand():
    # 10M x 768 fp32: vectors 10e6 * 3072 B = 30.72 GB; links 4 B x (2*16 + 16/15) per node = 132.27 B
    total, dram = rt.index_bytes(10e6, 768, "hnsw", "fp32")
    assert total == pytest.approx(10e6 * 768 * 4 + 10e6 * 4 * (32 + 16 / 15))
    assert total == pytest.approx(32.04e9, rel=1e-3)
    assert dram == 0


def test_ivfpq_and_diskann_bytes_by_hand():
    # IVF-PQ, 1e8 x 768: m = 768/16 = 48-byte codes + 8-byte ids; nlist = sqrt(1e8) = 1e4 centroids of 768 fp32
    total, _ = rt.index_bytes(1e8, 768, "ivfpq")
    assert total == pytest.approx(1e8 * 56 + 4 * 1e4 * 768)
    # below 1M rows nlist = rows/1000 (pgvector)
    assert rt.ivf_lists(5e5, rt.IndexParams()) == pytest.approx(500)
    # DiskANN, 1e9 x 768 fp32, R = 64: blocks 3072 + 256 + 4 B on SSD, 48-byte PQ codes in DRAM
    total, dram = rt.index_bytes(1e9, 768, "diskann")
    assert dram == pytest.approx(48e9)
    assert total - dram == pytest.approx(1e9 * 3332)


def test_ten_million_768d_hnsw_lives_in_host_dram_of_an_h100_server_and_one_billion_on_ssd():
    r = rt.evaluate_retrieval([10e6, 1e9], 768, "hnsw", H100)
    assert list(r.tier) == ["host", "ssd"]
    tiers = tier_map(H100)
    host, ssd = tiers["host"], tiers["ssd"]
    # query time = expansions x latency + bytes / bandwidth of that tier (hand-derived for N = 10M)
    expansions = 40 + math.log(10e6) / math.log(16)
    reads = expansions * 32 * (4 + 3072)
    assert r.query_bytes[0] == pytest.approx(reads)
    assert r.query_s[0] == pytest.approx(expansions * host.latency_s + reads / host.bandwidth)
    assert r.query_s[1] > 10 * r.query_s[0]           # SSD latency dominates
    assert r.query_s[1] == pytest.approx(r.round_trips[1] * ssd.latency_s + r.query_bytes[1] / ssd.bandwidth)


def test_ivfpq_runs_in_hbm_and_diskann_keeps_its_codes_in_dram():
    assert str(rt.evaluate_retrieval(1e8, 768, "ivfpq", H100).tier) == "hbm"
    d = rt.evaluate_retrieval([1e9, 1e10], 768, "diskann", H100)
    assert list(d.tier) == ["ssd", "none"]             # 1e10: 33 TB of blocks > 3.84 TB of SSD per GPU
    assert d.query_s[1] == 0.0                          # does not fit is a result, not NaN
    # DiskANN's latency is SSD round trips: ceil(100 / 4) x 80 us plus 100 sectors over the drive
    ssd = tier_map(H100)["ssd"]
    assert d.query_s[0] == pytest.approx(25 * ssd.latency_s + 100 * 4096 / ssd.bandwidth
                                         + 100 * 64 * 48 / tier_map(H100)["host"].bandwidth)


def test_spill_points_are_the_capacities_over_the_bytes_per_vector():
    spill = rt.spill_points(768, "hnsw", H100)
    per_vector = 768 * 4 + 4 * (32 + 16 / 15)
    assert spill["host"] == pytest.approx(250e9 / per_vector, rel=1e-6)
    assert spill["ssd"] == pytest.approx(3.84e12 / per_vector, rel=1e-6)
    assert "cxl" not in spill                           # smaller than host DRAM: never receives the index


def test_a_laptop_holds_the_index_in_its_own_system_memory():
    laptop = hardware_presets()["laptop-x86-ddr5"]
    assert list(rt.evaluate_retrieval([1e6, 1e8], 768, "hnsw", laptop).tier) == ["hbm", "ssd"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(1, 1e12), min_size=1, max_size=8), st.sampled_from(rt.INDEXES),
       st.sampled_from(tuple(rt.DTYPE_BYTES)))
def test_vectorised_over_n_equals_one_at_a_time_and_bytes_grow_with_n(ns, index, dtype):
    ns = sorted(ns)
    r = rt.evaluate_retrieval(ns, 384, index, H100, dtype)
    for i, n in enumerate(ns):
        one = rt.evaluate_retrieval(n, 384, index, H100, dtype)
        assert float(one.index_bytes) == pytest.approx(r.index_bytes[i])
        assert str(one.tier) == r.tier[i]
        assert float(one.query_s) == pytest.approx(r.query_s[i])
    assert np.all(np.diff(r.index_bytes) >= 0)
    assert np.all(np.isfinite(r.query_s)) and np.all(r.query_s >= 0)


def test_bad_input_is_a_validation_error():
    for args in ((0, 768, "hnsw"), (1e6, 0, "hnsw"), (1e6, 768, "lsh")):
        with pytest.raises(ValidationError):
            rt.index_bytes(*args)
    with pytest.raises(ValidationError):
        rt.IndexParams(m_links=1)


def test_cli_json_keys_and_values(capsys):
    assert run_cli(["calc", "retrieval", "--vectors", "10000000", "--dim", "768", "--index", "hnsw",
                    "--hardware", "h100-sxm", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["tier"] == "host"
    assert rep["index_bytes"] == pytest.approx(float(rt.index_bytes(1e7, 768, "hnsw")[0]))
    assert 0 < rep["query_s"] < 1e-3
    assert run_cli(["calc", "retrieval", "--vectors", "1e9", "--dim", "768", "--index", "hnsw",
                    "--hardware", "h100-sxm", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tier"] == "ssd"


def test_cli_bad_input_is_one_line(capsys):
    assert run_cli(["calc", "retrieval", "--vectors", "-5", "--dim", "768", "--index", "hnsw",
                    "--hardware", "h100-sxm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
