"""KV keep grids (kv_matrix) and gradient-sync matrices (grad_sync_matrix) against the model's counts."""

import math

import numpy as np
import pytest

from trinity_desktop.model import Scenario, ValidationError
from trinity_desktop.model.formulas.comms import allreduce_time, gradient_sync, link_for_group
from trinity_desktop.model.formulas.kv_policy import KV_POLICY_CODE, kept_tokens
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.step.inference import kv_bytes_per_token
from trinity_desktop.model.views.grad_sync_matrix import SYNC_ALGORITHMS, sync_matrix
from trinity_desktop.model.views.kv_matrix import EVICTED, KEPT, KEPT_QUANTISED, binned_fraction, kv_matrix


@pytest.fixture(scope="module")
def train():
    hw, m = hardware_presets(), model_presets()
    return Scenario(hardware=hw["h100-sxm"], model=m["llama-2-7b"], kind="train", gpus=64, tp=2, pp=1,
                    global_batch=256, seq_len=4096)


@pytest.fixture(scope="module")
def serve():
    hw, m = hardware_presets(), model_presets()
    return Scenario(hardware=hw["h100-sxm"], model=m["llama-3-70b"], kind="decode", gpus=8, prompt_len=6000,
                    gen_len=2000, kv_window=1024, kv_sinks=4)


# ---------------------------------------------------------------------------------------------- gradient sync
def test_ring_sends_2n_minus_1_over_n(train):
    s = sync_matrix(train, "ring")
    n, S = s["n"], s["nbytes"]
    assert n == 32
    M = s["matrix"][:n, :n]
    np.testing.assert_allclose(M.sum(axis=1), 2 * (n - 1) / n * S)
    assert np.count_nonzero(M) == n                          # one neighbour each
    assert all(M[i, (i + 1) % n] > 0 for i in range(n))
    assert s["matrix"][n].sum() == 0 and s["matrix"][:, n].sum() == 0   # no switch traffic


def test_in_network_follows_n_minus_1_over_n_plus_1(train):
    s = sync_matrix(train, "in-network")
    n, S = s["n"], s["nbytes"]
    np.testing.assert_allclose(s["matrix"][:n, n], (n - 1) / (n + 1) * S)
    assert s["matrix"][:n, :n].sum() == 0
    bw, alpha, _ = link_for_group(n, train.tp, train.gpus_per_node, train.hardware, train.efficiency.network)
    t, b = gradient_sync(n, S, bw, alpha, True, 1.0, True)
    assert s["sent_per_rank"].max() == pytest.approx(float(b))
    assert s["time_s"] == pytest.approx(float(t))


def test_matrix_totals_equal_the_model(train):
    n = sync_matrix(train)["n"]
    bw, alpha, _ = link_for_group(n, train.tp, train.gpus_per_node, train.hardware, train.efficiency.network)
    ring = sync_matrix(train, "ring")
    t, b = gradient_sync(n, ring["nbytes"], bw, alpha, True)
    np.testing.assert_allclose(ring["sent_per_rank"], float(b))
    assert ring["time_s"] == pytest.approx(float(t))
    assert ring["model_time_s"] == pytest.approx(float(allreduce_time(n, ring["nbytes"], bw, alpha)))
    # ring, tree and hierarchical all move 2(n-1)·S in total
    for algo in ("ring", "tree", "hierarchical"):
        s = sync_matrix(train, algo)
        assert s["matrix"].sum() == pytest.approx(2 * (n - 1) * s["nbytes"]), algo
        assert sum(s["bytes_by_class"].values()) == pytest.approx(s["matrix"].sum())


def test_hierarchical_phases_and_link_classes(train):
    s = sync_matrix(train, "hierarchical")       # DP ranks 2 apart on 8-GPU nodes: 4 per node, 8 nodes
    assert (s["k"], s["m"]) == (4, 8)
    S = s["nbytes"]
    assert s["bytes_by_class"]["scale-up"] == pytest.approx(32 * 2 * 3 / 4 * S)
    assert s["bytes_by_class"]["scale-out"] == pytest.approx(32 * 2 * 7 / 8 * S / 4)
    up = s["link_class"] == 1
    i, j = np.nonzero(up)
    assert np.all(s["node"][i] == s["node"][j])
    ring = sync_matrix(train, "ring")
    assert s["time_s"] < ring["time_s"]           # the slow link carries 1/k of the bytes
    ph = s["hierarchical_phase_times"]
    assert s["time_s"] == pytest.approx(sum(ph.values()), rel=0.02)


def test_tree_and_single_rank(train):
    s = sync_matrix(train, "tree")
    n, S = s["n"], s["nbytes"]
    assert s["matrix"][1, 0] == S and s["matrix"][0, 1] == S     # reduce up, broadcast down
    assert s["time_by_class"]["scale-out"] >= 2 * math.ceil(math.log2(n)) * train.hardware.scaleout_latency_s
    one = sync_matrix(train, "ring", n=1)
    assert one["matrix"].sum() == 0 and one["time_s"] == 0
    with pytest.raises(ValidationError):
        sync_matrix(train, "butterfly")
    with pytest.raises(ValidationError):
        sync_matrix(train, "ring", n=5000)
    for algo in SYNC_ALGORITHMS:
        assert np.all(np.isfinite(sync_matrix(train, algo)["matrix"]))


# ---------------------------------------------------------------------------------------------- KV grid
def _check_against_policy(sc, kv):
    model = kept_tokens(KV_POLICY_CODE[sc.kv_policy], kv["context"], window=sc.kv_window, sinks=sc.kv_sinks,
                        heavy_ratio=sc.kv_heavy_ratio, retrieval_fraction=sc.razor_retrieval_fraction)
    return float(model)


def test_grid_counts_match_kept_tokens(serve):
    c = serve.prompt_len + serve.gen_len
    for policy in ("full", "window", "streaming", "h2o"):
        sc = serve.replace(kv_policy=policy)
        kv = kv_matrix(sc)
        assert kv["grid"].shape == (8, c)
        np.testing.assert_array_equal(kv["kept_tokens"], _check_against_policy(sc, kv))
        assert kv["kept_fraction"] == pytest.approx(kv["kept_fraction_model"])
        assert kv["bytes_kept"] == pytest.approx(kv["kept_fraction"] * c * kv_bytes_per_token(sc.model, 2.0))


def test_window_streaming_h2o_keep_the_right_tokens(serve):
    c = serve.prompt_len + serve.gen_len
    w = kv_matrix(serve.replace(kv_policy="window"))["grid"]
    assert np.all(w[:, -1024:] == KEPT) and np.all(w[:, :-1024] == EVICTED)
    s = kv_matrix(serve.replace(kv_policy="streaming"))["grid"]
    assert np.all(s[:, :4] == KEPT) and np.all(s[:, 4:c - 1024] == EVICTED) and np.all(s[:, -1024:] == KEPT)
    h = kv_matrix(serve.replace(kv_policy="h2o"))
    budget = math.ceil(0.2 * c)
    assert np.all(h["grid"][:, -(budget // 2):] == KEPT)     # recent half
    assert np.all(h["grid"][:, :4] == KEPT)                  # attention sinks have the top scores
    assert h["synthetic"] and "seed" in h["label"]
    again = kv_matrix(serve.replace(kv_policy="h2o"))
    np.testing.assert_array_equal(h["grid"], again["grid"])  # seeded: reproducible
    assert not np.array_equal(h["grid"][0], h["grid"][1])   # heads differ


def test_razor_and_quantised(serve):
    sc = serve.replace(kv_policy="razor", razor_retrieval_fraction=0.25)
    kv = kv_matrix(sc)
    ret = kv["retrieval_heads"]
    assert len(ret) == 2
    assert np.all(kv["grid"][ret] == KEPT)
    others = np.setdiff1d(np.arange(8), ret)
    assert np.all(kv["kept_tokens"][others] == 4 + 1024)
    assert kv["kept_fraction"] == pytest.approx(kv["kept_fraction_model"])    # 2 of 8 heads = 0.25 exactly
    q = kv_matrix(serve.replace(kv_policy="window", kv_dtype="int8"))
    assert set(np.unique(q["grid"])) == {EVICTED, KEPT_QUANTISED}
    assert q["bytes_kept"] == pytest.approx(kv_matrix(serve.replace(kv_policy="window"))["bytes_kept"] / 2)


def test_long_context_grid_and_binning(serve):
    kv = kv_matrix(serve.replace(kv_policy="streaming"), context=1 << 20)
    assert kv["grid"].shape == (8, 1 << 20)
    frac, edges = binned_fraction(kv["grid"], 1024)
    assert frac.shape == (8, 1024) and edges[-1] == 1 << 20
    assert frac[0, 0] == pytest.approx(4 / 1024) and frac[0, -1] == 1.0
    with pytest.raises(ValidationError):
        kv_matrix(serve, context=0)
