"""Split computing (Neurosurgeon), layer profiles and on-device quantised decode (issue #7)."""

import json
import tomllib
from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinity_desktop.model import ValidationError
from trinity_desktop.model.formulas.layer_profiles import (
    bottleneck_flops,
    cnn_profiles,
    conv_flops,
    profile,
    transformer_profile,
)
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.views import split as sp
from trinity_desktop.model.views.on_device import BITS, on_device_table

# Keys used in edge.toml that references.toml still lacks (full citations are in the issue #7 report).
PENDING_REFERENCES: set[str] = set()  # every cited key is in references.toml


def _sources(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "source" and isinstance(v, str):
                yield v
            else:
                yield from _sources(v)
    elif isinstance(node, list):
        for v in node:
            yield from _sources(v)


def test_edge_toml_sources_are_references():
    doc = tomllib.loads(resources.files("trinity_desktop.resources").joinpath("edge.toml").read_text("utf-8"))
    found = set(_sources(doc))
    assert found
    missing = found - set(presets.references()) - PENDING_REFERENCES
    assert not missing, missing


# ---------------------------------------------------------------------------------------- layer profiles
def test_resnet50_matches_table1():
    """He et al. 2016 Table 1: 3.8e9 multiply-adds (FLOPs counted as 2 per multiply-add here), ~25.5M params."""
    p = cnn_profiles()["resnet-50"]
    assert p.layers == 20
    assert p.total_flops() / 2 == pytest.approx(3.8e9, rel=0.03)
    assert p.total_params() == pytest.approx(25.5e6, rel=0.01)
    assert p.input_bytes == 224 * 224 * 3
    assert dict(zip(p.layer_names, p.out_elements, strict=True))["conv4_6"] == 14 * 14 * 1024


def test_resnet50_layer_flops_rederived_from_shapes():
    """The stored per-layer FLOPs equal the derivation from the Table 1 shapes (conv1 7x7/2, bottlenecks)."""
    p = cnn_profiles()["resnet-50"]
    flops = dict(zip(p.layer_names, p.flops, strict=True))
    assert flops["conv1"] == conv_flops(112, 112, 3, 64, 7)
    assert flops["conv2_1"] == bottleneck_flops(56, 64, 64, True)
    assert flops["conv3_1"] == bottleneck_flops(28, 256, 128, True)
    assert flops["conv4_2"] == bottleneck_flops(14, 1024, 256, False)
    assert flops["conv5_3"] == bottleneck_flops(7, 2048, 512, False)
    assert flops["fc1000"] == 2 * 2048 * 1000


def test_alexnet_params_match_paper():
    """Krizhevsky et al. 2012: 60 million parameters; 2-GPU grouped conv2/4/5."""
    p = cnn_profiles()["alexnet"]
    assert p.total_params() == pytest.approx(60e6, rel=0.03)
    assert dict(zip(p.layer_names, p.flops, strict=True))["conv2"] == conv_flops(27, 27, 96, 256, 5, groups=2)


def test_transformer_profile_sums_to_forward_flops():
    arch = presets.model_presets()["llama-3.2-1b"]
    T = 256
    p = transformer_profile(arch, T)
    assert p.layers == arch.layers + 2
    body = p.flops[1:-1].sum()
    assert body / T == pytest.approx(arch.layers * (2 * arch.matmul_params_active_per_layer()
                                                     + 2 * (T / 2) * arch.heads * (arch.qk_dim + arch.v_dim)))
    assert p.out_elements[1] == T * arch.hidden
    assert p.input_bytes == 4 * T
    # layers + head hold every parameter but the input embedding (the head matrix counted once, tied or not)
    assert p.params[1:].sum() == pytest.approx(arch.params_total() - arch.embedding_params()
                                               + arch.vocab * arch.hidden, rel=1e-12)
    assert p.params[0] == T * arch.hidden  # the embedding reads only the T rows it looks up


# ---------------------------------------------------------------------------------------- split points
@pytest.fixture(scope="module")
def alexnet_phone():
    return sp.lookup("alexnet", "phone-a17-pro", "wifi")


def test_split_components_add_up(alexnet_phone):
    prof, dev, net, cloud = alexnet_phone
    t = sp.split_table(prof, dev, net, cloud)
    n = prof.layers
    assert t["device_s"].shape == (n + 1,)
    assert t["device_s"][0] == 0 and t["cloud_s"][-1] == 0 and t["transfer_s"][-1] == 0
    np.testing.assert_allclose(t["total_s"], t["device_s"] + t["transfer_s"] + t["cloud_s"])
    # all cloud sends the 8-bit input: RTT + 150,528 B / uplink
    assert t["transfer_s"][0] == pytest.approx(net.rtt_s + 224 * 224 * 3 / net.uplink_bytes_per_s)
    # the split after pool5 sends 6x6x256 fp16 activations
    k = prof.layer_names.index("pool5") + 1
    assert t["sent_bytes"][k] == 6 * 6 * 256 * 2
    assert np.all(np.diff(t["device_s"]) >= 0) and np.all(np.diff(t["cloud_s"]) <= 0)


def test_fast_uplink_moves_optimum_to_cloud_slow_to_device():
    """Laptop CPU, ResNet-50: at 10 Gbit/s with 1 ms RTT everything goes to the cloud; at 1 Mbit/s none."""
    prof, dev, net, cloud = sp.lookup("resnet-50", "laptop-x86-ddr5", "ethernet")
    t = sp.split_table(prof, dev, net, cloud, uplink_bytes_per_s=np.array([1.25e9, 1.25e5]), rtt_s=1e-3)
    k = sp.optimal_split(t, "latency")
    assert k[0] == 0
    assert k[1] == prof.layers


@settings(max_examples=50, deadline=None)
@given(st.floats(1e3, 1e10), st.floats(0.0, 0.5), st.floats(0.01, 100.0),
       st.sampled_from(["alexnet", "resnet-50"]), st.sampled_from(["latency", "energy"]))
def test_optimum_never_worse_than_extremes(uplink, rtt, speed, model, objective):
    prof, dev, net, cloud = sp.lookup(model, "phone-a17-pro", "4g")
    t = sp.split_table(prof, dev, net, cloud, uplink_bytes_per_s=uplink, rtt_s=rtt, device_speed=speed)
    key = "total_s" if objective == "latency" else "energy_j"
    best = t[key][int(sp.optimal_split(t, objective))]
    assert best <= t[key][0] and best <= t[key][-1]
    for name in ("device_s", "transfer_s", "cloud_s", "total_s", "energy_j"):
        assert np.all(np.isfinite(t[name])) and np.all(t[name] >= 0)


def test_vectorized_over_bandwidth_equals_scalar_calls(alexnet_phone):
    prof, dev, net, cloud = alexnet_phone
    bws = np.geomspace(1e4, 1e9, 7)
    grid = sp.split_table(prof, dev, net, cloud, uplink_bytes_per_s=bws, device_speed=np.array([[0.1], [1.0]]))
    assert grid["total_s"].shape == (2, 7, prof.layers + 1)
    for i, s in enumerate((0.1, 1.0)):
        for j, bw in enumerate(bws):
            one = sp.split_table(prof, dev, net, cloud, uplink_bytes_per_s=bw, device_speed=s)
            np.testing.assert_allclose(grid["total_s"][i, j], one["total_s"], rtol=1e-12)
            np.testing.assert_allclose(grid["energy_j"][i, j], one["energy_j"], rtol=1e-12)


def test_energy_model_sanity(alexnet_phone):
    prof, dev, net, cloud = alexnet_phone
    t = sp.split_table(prof, dev, net, cloud)
    assert np.all(t["energy_j"] >= 0)
    # all cloud: the device only runs its radio for the upload of the input
    assert t["compute_energy_j"][0] == 0
    assert t["energy_j"][0] == pytest.approx(net.radio_power_w * prof.input_bytes / net.uplink_bytes_per_s)
    # all device: no radio, compute energy = P x time
    assert t["radio_energy_j"][-1] == 0
    assert t["energy_j"][-1] == pytest.approx(dev.power_w * t["device_s"][-1])
    # radio energy grows with the bytes sent (same network): fp16 activations cost twice int8
    t8 = sp.split_table(prof, dev, net, cloud, activation="int8")
    np.testing.assert_allclose(t["radio_energy_j"][1:-1], 2 * t8["radio_energy_j"][1:-1])
    order = np.argsort(t["sent_bytes"][:-1])
    assert np.all(np.diff(t["radio_energy_j"][:-1][order]) >= 0)
    # compression by 4 divides the bytes and the upload energy by 4
    t4 = sp.split_table(prof, dev, net, cloud, compression=4.0)
    np.testing.assert_allclose(t4["radio_energy_j"], t["radio_energy_j"] / 4)


def test_neurosurgeon_partitioning_beats_both_extremes():
    """Kang et al. 2017's headline direction: for some network conditions a split in the middle beats
    both all-device and all-cloud. Found conditions: AlexNet on the phone NPU,
    (a) energy, Wi-Fi preset (50 Mbit/s): splitting after pool5 sends 18 kB instead of the 150 kB input
        and skips the 117 MB of fully-connected weights on the phone;
    (b) latency, 1 Gbit/s with a 1 ms round trip (an edge server on the LAN)."""
    prof, dev, net, cloud = sp.lookup("alexnet", "phone-a17-pro", "wifi")
    pool5 = prof.layer_names.index("pool5") + 1
    t = sp.split_table(prof, dev, net, cloud)
    k = int(sp.optimal_split(t, "energy"))
    assert k == pool5
    assert t["energy_j"][k] < 0.5 * t["energy_j"][0] and t["energy_j"][k] < 0.5 * t["energy_j"][-1]

    t = sp.split_table(prof, dev, net, cloud, uplink_bytes_per_s=125e6, rtt_s=1e-3)
    k = int(sp.optimal_split(t, "latency"))
    assert 0 < k < prof.layers
    assert t["total_s"][k] < t["total_s"][0] and t["total_s"][k] < t["total_s"][-1]


def test_split_json_shape_and_values():
    out = sp.split_json("resnet-50", "phone-a17-pro", "4g", "latency")
    assert set(out) == {"split_points", "optimal_index", "all_device_s", "all_cloud_s"}
    json.dumps(out)
    pts = out["split_points"]
    assert len(pts) == 21 and [p["index"] for p in pts] == list(range(21))
    assert set(pts[0]) == {"index", "name", "device_s", "transfer_s", "cloud_s", "total_s", "energy_j"}
    assert out["all_device_s"] == pts[-1]["total_s"] and out["all_cloud_s"] == pts[0]["total_s"]
    assert pts[out["optimal_index"]]["total_s"] == min(p["total_s"] for p in pts)
    text = sp.split_summary("resnet-50", "phone-a17-pro", "4g")
    assert "Optimum" in text and "ms" in text


def test_bad_input_is_refused():
    prof, dev, net, cloud = sp.lookup("alexnet", "phone-a17-pro", "wifi")
    for kwargs, field in (({"uplink_bytes_per_s": 0.0}, "uplink_bytes_per_s"), ({"rtt_s": -1.0}, "rtt_s"),
                          ({"device_speed": np.nan}, "device_speed"), ({"activation": "fp8"}, "activation"),
                          ({"compression": 0.5}, "compression")):
        with pytest.raises(ValidationError) as exc:
            sp.split_table(prof, dev, net, cloud, **kwargs)
        assert exc.value.field == field
    with pytest.raises(ValidationError):
        sp.optimal_split(sp.split_table(prof, dev, net, cloud), "cost")
    with pytest.raises(ValidationError) as exc:
        sp.split_json("vgg-99", "phone-a17-pro", "wifi")
    assert exc.value.field == "model"
    with pytest.raises(ValidationError):
        profile("llama-3.2-1b", tokens=0)


def test_presets_load_with_sources():
    devs, nets = sp.edge_devices(), sp.networks()
    assert {"phone-a17-pro", "jetson-orin-nano-super", "laptop-x86-ddr5", "m4-max"} <= set(devs)
    assert set(nets) == {"3g", "4g", "5g", "wifi", "ethernet"}
    assert devs["m4-max"].hardware is presets.hardware_presets()["m4-max"]  # referenced, not duplicated
    assert nets["4g"].uplink_bytes_per_s == 6e6 / 8  # Huang et al. 2012: 6 Mbit/s median LTE uplink
    ups = [nets[k].uplink_bytes_per_s for k in ("3g", "4g", "5g", "ethernet")]
    assert ups == sorted(ups)


# ---------------------------------------------------------------------------------------- on-device decode
def test_weight_bytes_scale_with_bits():
    t = on_device_table("llama-3.2-1b", "phone-a17-pro")
    params = presets.model_presets()["llama-3.2-1b"].params_total()
    np.testing.assert_allclose(t["weight_bytes"], params * np.array(BITS) / 8)
    np.testing.assert_allclose(t["storage_saved"], 1 - np.array(BITS) / 16)
    assert t["storage_saved"][list(BITS).index(2)] == pytest.approx(0.875)


def test_bandwidth_bound_decode_scales_inversely_with_bytes():
    """Phone NPU, Llama-3.2-3B at batch 1: decode reads every weight per token, so tokens/s ~ 1/bytes."""
    t = on_device_table("llama-3.2-3b", "phone-a17-pro")
    tps, read = t["tokens_per_s"], t["bytes_per_token"]
    np.testing.assert_allclose(tps * read, tps[0] * read[0], rtol=0.02)
    assert tps[list(BITS).index(4)] / tps[0] == pytest.approx(4.0, rel=0.05)
    # 16-bit misses the 100 ms target on the phone; 8 bits and narrower meet it
    assert list(t["meets_target"]) == [False, True, True, True, True]


def test_on_device_matches_core_evaluate():
    """The 16- and 4-bit cells equal evaluate() of the core decode scenario (same roofline, no copy)."""
    from trinity_desktop.model import Scenario, evaluate

    dev = sp.edge_devices()["jetson-orin-nano-super"]
    arch = presets.model_presets()["llama-3.2-1b"]
    t = on_device_table("llama-3.2-1b", dev)
    for i, dtype in ((0, "bf16"), (2, "int4")):
        r = evaluate(Scenario(hardware=dev.hardware, model=arch, kind="decode", gpus=1, gpus_per_node=1, batch=1,
                              prompt_len=512, gen_len=256, weight_dtype=dtype, kv_dtype="fp16"))
        assert t["time_per_token_s"][i] == pytest.approx(r.time_total, rel=1e-12)
        assert t["memory_total"][i] == pytest.approx(r.memory_total, rel=1e-12)
