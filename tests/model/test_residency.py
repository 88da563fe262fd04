"""Memory tiers, KV bytes per token after each policy, and the residency (placement + step time) model."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets, references
from trinity_desktop.model.inputs.tiers import _tier_file, page_tokens, tier_map, tiers_for
from trinity_desktop.model.step.inference import kv_bytes_per_token
from trinity_desktop.model.step.kv_residency import (
    RESIDENCY_TIERS,
    kv_bytes_per_token_after_policy,
    residency_at,
    residency_curve,
    residency_json,
)

PENDING_REFERENCES: set[str] = set()  # every cited key is in references.toml


@pytest.fixture(scope="module")
def hw():
    return hardware_presets()


@pytest.fixture(scope="module")
def models():
    return model_presets()


@pytest.fixture(scope="module")
def serve70(hw, models):
    """Llama-3-70B served on 8 H100s, 16 sessions (the default scenario's serving side)."""
    return Scenario(hardware=hw["h100-sxm"], model=models["llama-3-70b"], kind="decode", gpus=8, batch=16,
                    prompt_len=4096, gen_len=1024)


# ---------------------------------------------------------------------------------------------- KV bytes
def test_kv_bytes_per_token_published(models):
    # 2 (K, V) x 32 layers x 4096 x 2 B = 524,288 (Llama-2-7B, MHA); 2 x 80 x 8 x 128 x 2 = 327,680 (Llama-3-70B)
    assert kv_bytes_per_token(models["llama-2-7b"], 2.0) == 524_288
    assert kv_bytes_per_token(models["llama-3-70b"], 2.0) == 327_680


def test_kv_policies_bytes_per_token(hw, models):
    base = Scenario(hardware=hw["h100-sxm"], model=models["llama-2-7b"], kind="decode", gpus=1,
                    kv_dtype="fp16", kv_window=4096, kv_sinks=4)
    c = np.array([1024.0, 4096.0, 32768.0])
    full = kv_bytes_per_token_after_policy(base, c)
    np.testing.assert_allclose(full, 524_288)
    int4 = kv_bytes_per_token_after_policy(base.replace(kv_dtype="int4"), c)
    np.testing.assert_allclose(int4, full / 4)
    window = kv_bytes_per_token_after_policy(base.replace(kv_policy="window"), c) * c
    np.testing.assert_allclose(window, np.minimum(c, 4096) * 524_288)       # caps at the window
    assert window[2] / (32768 * 524_288) == pytest.approx(1 / 8)            # Mistral: 32k cache shrinks 8x
    stream = kv_bytes_per_token_after_policy(base.replace(kv_policy="streaming"), c) * c
    np.testing.assert_allclose(stream, np.minimum(c, 4 + 4096) * 524_288)   # sinks + window


# ---------------------------------------------------------------------------------------------- tiers
def test_tiers_fastest_first_and_read_from_hardware(hw):
    tiers = tiers_for("h100-sxm")
    names = [t.name for t in tiers]
    assert names[:3] == ["sram", "hbm", "host"] and names[-1] == "ssd"
    bws = [t.bandwidth for t in tiers]
    assert bws == sorted(bws, reverse=True)
    t = tier_map("h100-sxm")
    assert t["hbm"].capacity_bytes == hw["h100-sxm"].hbm_bytes and t["hbm"].bandwidth == hw["h100-sxm"].hbm_bw
    assert t["host"].capacity_bytes == hw["h100-sxm"].host_dram_bytes
    assert t["host"].bandwidth == hw["h100-sxm"].host_link_bw == 63e9
    assert t["cxl"].bandwidth == 63e9                       # PCIe 5.0 x16 per direction (D)
    assert t["host"].latency_s < t["cxl"].latency_s < t["ssd"].latency_s
    assert t["cxl"].status["latency"] == "A"                # 2-5x local DRAM is weak: an assumption
    assert t["ssd"].bandwidth == hw["h100-sxm"].nvme_bw
    assert t["rdma"].bandwidth == hw["h100-sxm"].scaleout_bw
    assert page_tokens() == 16                              # vLLM default block size


def test_laptops_lack_cxl_and_rdma():
    for key in ("m4-max", "laptop-x86-ddr5"):
        names = {t.name for t in tiers_for(key)}
        assert "cxl" not in names and "rdma" not in names and "hbm" in names
    assert "ssd" not in {t.name for t in tiers_for("tpu-v5e")}      # no local NVMe on TPU VMs
    assert "cxl" not in {t.name for t in tiers_for("a100-80gb-sxm")}  # PCIe 4.0 hosts


def test_every_tier_source_is_a_reference():
    paging, per_hw = _tier_file()
    known = set(references()) | PENDING_REFERENCES
    facts = list(paging.values()) + [f for d in per_hw.values() for f in d.values()]
    missing = {f.source for f in facts} - known
    assert not missing, missing
    assert all(f.status in ("V", "V2", "D", "A") for f in facts)
    for key in hardware_presets():
        for t in tiers_for(key):
            assert all(t.source.values()), (key, t.name, dict(t.source))


# ---------------------------------------------------------------------------------------------- residency
def test_resident_sums_to_needed_until_full(serve70):
    r = residency_curve(serve70)
    total_cap = sum(np.max(r.capacity[n]) for n in RESIDENCY_TIERS)
    fits = r.needed <= total_cap
    assert fits.any()
    np.testing.assert_allclose(r.placed[fits], r.needed[fits], rtol=1e-12)
    np.testing.assert_allclose(r.placed[~fits], total_cap, rtol=1e-12)
    for n in RESIDENCY_TIERS:
        assert np.all(r.resident[n] <= r.capacity[n] * (1 + 1e-12))
    # the default sweep reaches every tier of an H100 node by 1M tokens x 16 sessions
    assert all(r.resident[n][-1] > 0 for n in RESIDENCY_TIERS)


def test_hbm_share_falls_and_step_time_rises_with_a_cliff(serve70):
    r = residency_curve(serve70)
    assert np.all(np.diff(r.hbm_share) <= 1e-12)
    t = r.step_time_s
    assert np.all(np.diff(t) >= 0)
    # slope per extra KV byte before and after the KV cache leaves HBM
    spill = np.argmax(r.resident["host"] > 0)
    before = (t[spill - 1] - t[spill - 3]) / (r.needed[spill - 1] - r.needed[spill - 3])
    after = (t[spill + 2] - t[spill]) / (r.needed[spill + 2] - r.needed[spill])
    assert after > 10 * before   # HBM 3.35 TB/s vs PCIe 63 GB/s: ~50x
    # the cliff has the size the formula says: off-HBM bytes / (63 GB/s x 0.8) + one 2 us latency per page
    host = r.resident["host"][spill + 2]
    pages = np.ceil(host / r.page_bytes)
    expected = host / (63e9 * 0.8) + pages * 2e-6
    attn = r.time_by_tier["host"][spill + 2] - expected
    assert 0 <= attn < 0.05 * expected


def test_effective_tpot_equals_core_while_in_hbm(serve70):
    at = residency_at(serve70)
    core = evaluate(serve70).infer["time_per_output_token_s"]
    assert at.resident["host"] == 0
    assert at.effective_time_per_output_token_s == pytest.approx(core, rel=1e-12)
    assert at.needed == pytest.approx(evaluate(serve70).memory["kv_cache"], rel=1e-12)


def test_evict_drops_what_hbm_cannot_hold(serve70):
    r = residency_curve(serve70, context=[4096, 1 << 20], policy="evict")
    for n in RESIDENCY_TIERS[1:]:
        assert np.all(r.resident[n] == 0)
    kv_tok = r.kv_bytes_per_token_gpu
    dropped = r.needed - r.capacity["hbm"]
    assert r.evicted_tokens[0] == 0
    assert r.evicted_tokens[1] == pytest.approx(dropped[1] / kv_tok)
    spill = residency_curve(serve70, context=[1 << 20])
    assert r.step_time_s[1] < spill.step_time_s[0]


def test_sessions_axis_and_broadcasting(serve70):
    r = residency_curve(serve70, context=np.array([[8192.0], [65536.0]]), sessions=np.array([1, 4, 16]))
    assert r.needed.shape == (2, 3)
    np.testing.assert_allclose(r.needed[:, 1], 4 * r.needed[:, 0])
    assert np.all(np.isfinite(r.step_time_s))


def test_compression_pulls_the_curve_back(serve70):
    full = residency_curve(serve70)
    stream = residency_curve(serve70.replace(kv_policy="streaming"))
    int4 = residency_curve(serve70.replace(kv_dtype="int4"))
    assert np.all(stream.needed <= full.needed)
    np.testing.assert_allclose(int4.needed, full.needed / 4)
    assert stream.resident["host"].max() == 0  # sinks + window never leave HBM


def test_residency_json_and_validation(serve70):
    j = residency_json(serve70)
    assert set(j["kv_residency_bytes"]) == {"hbm", "host", "cxl", "ssd"}
    assert j["effective_time_per_output_token_s"] > 0
    with pytest.raises(ValidationError) as e:
        residency_curve(serve70, policy="drop")
    assert e.value.field == "policy"
    with pytest.raises(ValidationError) as e:
        residency_curve(serve70, context=[0])
    assert e.value.field == "context"
    with pytest.raises(ValidationError):
        residency_curve(serve70, sessions=[float("nan")])


def test_training_scenario_is_served_on_its_tp_group(hw, models):
    sc = Scenario(hardware=hw["h100-sxm"], model=models["llama-3-70b"], kind="train", gpus=64, tp=8, pp=2,
                  global_batch=256, seq_len=8192)
    r = residency_curve(sc)
    assert r.gpus == 8


@settings(max_examples=40, deadline=None)
@given(ctx=st.lists(st.integers(1, 1 << 22), min_size=2, max_size=20),
       sessions=st.integers(1, 256), policy=st.sampled_from(["spill", "evict"]),
       kv=st.sampled_from(["full", "window", "streaming", "h2o", "razor"]))
def test_invariants_random(serve70, ctx, sessions, policy, kv):
    c = np.sort(np.asarray(ctx, dtype=float))
    r = residency_curve(serve70.replace(kv_policy=kv), context=c, sessions=sessions, policy=policy)
    for key in ("step_time_s", "tokens_per_s", "needed", "placed", "evicted_tokens"):
        assert np.all(np.isfinite(getattr(r, key)))
    assert np.all(np.diff(r.step_time_s) >= -1e-15)
    assert np.all(np.diff(r.hbm_share) <= 1e-12)
    np.testing.assert_allclose(r.placed + r.unplaced_bytes + r.evicted_bytes, r.needed, rtol=1e-9)
