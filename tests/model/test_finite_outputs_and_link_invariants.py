"""Hypothesis invariants: no free link, a request's time is its stages' end,
and every finite validated input gives finite, non-negative outputs."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.inputs import presets

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MODELS = presets.model_presets()
HARDWARE = presets.hardware_presets()
MULTI_NODE = tuple(k for k, h in HARDWARE.items() if h.scaleout_bw > 0)


@SETTINGS
@given(hw_key=st.sampled_from(MULTI_NODE), model_key=st.sampled_from(["llama-3-8b", "llama-2-7b", "mixtral-8x7b"]),
       tp=st.sampled_from([1, 2, 4, 8]), zero=st.integers(0, 3), m=st.integers(1, 8),
       nodes=st.sampled_from([1, 2, 4, 8]), more=st.sampled_from([2, 4, 16]), drop_scaleout=st.booleans())
def test_more_nodes_never_lower_the_communication_time(hw_key, model_key, tp, zero, m, nodes, more, drop_scaleout):
    """The same per-GPU work (layout, micro-batch, micro-batches per GPU) on more nodes: the data-parallel
    communication never gets cheaper, and hardware without a scale-out link refuses the second node."""
    hw = HARDWARE[hw_key]
    if drop_scaleout:
        hw = dataclasses.replace(hw, key="no-scale-out", scaleout_bw=0.0)
    gpn = hw.gpus_per_node_default
    tp = min(tp, gpn)

    def at(n_nodes):
        gpus = gpn * n_nodes
        return Scenario(hardware=hw, model=MODELS[model_key], kind="train", gpus=gpus, gpus_per_node=gpn, tp=tp,
                        zero=zero, micro_batch=1, global_batch=m * gpus // tp, seq_len=2048)

    try:
        small, big = evaluate(at(nodes)), evaluate(at(nodes * more))
    except ValidationError as exc:
        assert drop_scaleout and "scale-out" in str(exc)
        return
    assert not drop_scaleout or nodes * more <= 1
    assert big.train["dp_comm_time"] >= small.train["dp_comm_time"] * (1 - 1e-9)
    assert big.time["communication_exposed"] >= small.time["communication_exposed"] * (1 - 1e-9)
    assert big.bytes_by_link["scale-out"] >= small.bytes_by_link["scale-out"]


def _log_uniform(lo: float, hi: float):
    import math

    return st.floats(math.log10(lo), math.log10(hi)).map(lambda e: 10.0 ** e)


# The physical ranges a validated hardware value lies in (model/base/ranges.py on the robustness branch):
# rates and sizes from 1e3 (1e6 for FLOP/s) to 1e15 (1e18), latencies up to 1 s, links 0 (absent) or in range.
@st.composite
def extreme_hardware(draw):
    from trinity_desktop.model import Hardware

    link = st.one_of(st.just(0.0), _log_uniform(1e3, 1e15))
    peak = draw(_log_uniform(2e6, 5e17))  # fp32 = peak / 2 and fp8 = peak * 2 stay in range
    return Hardware(key="extreme", name="extreme", vendor="", kind="user",
                    peak_flops={"bf16": peak, "fp16": peak, "fp32": peak / 2, "fp8": peak * 2},
                    hbm_bytes=draw(_log_uniform(1e3, 1e15)), hbm_bw=draw(_log_uniform(1e3, 1e15)),
                    scaleup_bw=draw(link), scaleup_latency_s=draw(st.one_of(st.just(0.0), _log_uniform(1e-12, 1.0))),
                    host_link_bw=draw(link), host_dram_bytes=draw(st.one_of(st.just(0.0), _log_uniform(1e3, 1e15))),
                    scaleout_bw=draw(link), scaleout_latency_s=draw(st.one_of(st.just(0.0), _log_uniform(1e-12, 1.0))),
                    nvme_bw=draw(link), gpus_per_node_default=draw(st.sampled_from([1, 4, 8, 1024])))


def _all_numbers(r) -> list[float]:
    return [*r.memory.values(), *r.time.values(), *r.bytes_by_link.values(), r.memory_total, r.time_total, r.flops,
            *r.pressure.as_tuple(), *r.train.values(), *r.infer.values()]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hw=extreme_hardware(), model_key=st.sampled_from(["llama-3-8b", "mixtral-8x7b", "deepseek-v3", "gpt3-175b",
                                                          "mistral-7b"]),
       kind=st.sampled_from(["train", "prefill", "decode"]), gpus=st.sampled_from([1, 2, 8, 64]),
       zero=st.integers(0, 3), offload=st.sampled_from(["none", "optimizer", "activations"]),
       length=st.sampled_from([1, 4096, 1 << 20]), batch=st.sampled_from([1, 64, 1 << 20]),
       kv_policy=st.sampled_from(["full", "window", "h2o", "razor"]), kv_offload=st.sampled_from([0.0, 0.5]))
def test_every_validated_input_gives_finite_non_negative_outputs(hw, model_key, kind, gpus, zero, offload, length,
                                                                 batch, kv_policy, kv_offload):
    from trinity_desktop.model.views.stages import stages

    arch = MODELS[model_key]
    try:
        if kind == "train":
            sc = Scenario(hardware=hw, model=arch, kind="train", gpus=gpus, gpus_per_node=hw.gpus_per_node_default,
                          tp=1, zero=zero, offload=offload, global_batch=gpus * 2, seq_len=min(length, 1 << 16))
        else:
            sc = Scenario(hardware=hw, model=arch, kind=kind, gpus=min(gpus, 8),
                          gpus_per_node=hw.gpus_per_node_default, batch=batch, prompt_len=length, gen_len=256,
                          kv_policy=kv_policy, kv_offload_fraction=kv_offload if hw.host_link_bw > 0 else 0.0)
    except ValidationError:
        return  # a refused layout (no link, no NVMe, ...) is not a result
    r = evaluate(sc)
    values = _all_numbers(r)
    assert all(math.isfinite(v) and v >= 0 for v in values), [v for v in values if not (math.isfinite(v) and v >= 0)]
    for st_ in stages(sc, r):
        nums = [st_.start_s, st_.end_s, st_.flops, *st_.bytes_by_link.values(), *st_.live_memory_by_tier.values()]
        assert all(math.isfinite(v) and v >= 0 for v in nums), st_


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model_key=st.sampled_from(["llama-3-8b", "llama-3-70b", "mistral-7b", "mixtral-8x7b", "deepseek-v3"]),
       hw_key=st.sampled_from(["h100-sxm", "a100-80gb-sxm", "tpu-v5p", "mi300x"]), gpus=st.sampled_from([1, 2, 8]),
       batch=st.sampled_from([1, 4, 32, 256]), prompt=st.sampled_from([1, 512, 8192, 131072, 1 << 20]),
       gen=st.sampled_from([1, 7, 64, 2048]), policy=st.sampled_from(["full", "window", "streaming", "h2o", "razor"]),
       window=st.sampled_from([64, 4096]), offload=st.sampled_from([0.0, 0.3]), kind=st.sampled_from(["decode",
                                                                                                       "prefill"]),
       pp=st.sampled_from([1, 2, 4]))
def test_a_requests_time_is_its_stages_end(model_key, hw_key, gpus, batch, prompt, gen, policy, window, offload, kind,
                                           pp):
    from trinity_desktop.model.views.stages import request_time, stages

    hw = HARDWARE[hw_key]
    try:  # gpus is the replica's total, TP x PP (pipeline-parallel inference)
        sc = Scenario(hardware=hw, model=MODELS[model_key], kind=kind, gpus=gpus * pp, pp=pp,
                      gpus_per_node=hw.gpus_per_node_default,
                      batch=batch, prompt_len=prompt, gen_len=gen, kv_policy=policy, kv_window=window,
                      kv_offload_fraction=offload)
    except ValidationError:
        return
    r = evaluate(sc)
    end = max(s.end_s for s in stages(sc, r))
    assert r.infer["request_s"] == pytest.approx(end, rel=1e-9)
    assert request_time(sc) == pytest.approx(end, rel=1e-9)
    assert r.infer["request_s"] >= r.infer["prefill_s"]
