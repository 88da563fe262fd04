"""Hypothesis invariants from the correctness audit (issue 16, "Done when"): no free link, a request's time is
its stages' end, and every finite validated input gives finite, non-negative outputs."""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trinity_desktop.model import Scenario, ValidationError, evaluate, presets

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
