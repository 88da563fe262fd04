"""Edge-cloud routing: hand-derived latency and cost of the mix, the published quality points, the target."""

import numpy as np
import pytest

from trinity_desktop.model import ValidationError, evaluate
from trinity_desktop.model.views.routing import BYTES_PER_TOKEN_TEXT, quality_kept, router_points, routing
from trinity_desktop.model.views.split import networks


def test_quality_through_the_published_points():
    assert quality_kept([0.0, 0.40, 0.85]) == pytest.approx([1.0, 1.0, 0.95])
    assert quality_kept(0.625) == pytest.approx(0.975)
    assert {p.source for p in router_points()} == {"hybrid-llm", "routellm"}
    with pytest.raises(ValidationError):
        quality_kept(0.9)   # beyond the last published point


def test_latency_and_cost_hand_derived():
    x = routing(r=[0.0, 0.5, 0.85])
    cloud = x.cloud_scenario
    rc = evaluate(cloud)
    net = networks()["4g"]
    t_c = net.rtt_s + cloud.prompt_len * BYTES_PER_TOKEN_TEXT / net.uplink_bytes_per_s + rc.infer["request_s"]
    t_d = evaluate(x.device_scenario).infer["request_s"]
    assert x.latency_s == pytest.approx(np.array([0.0, 0.5, 0.85]) * t_d + (1 - np.array([0.0, 0.5, 0.85])) * t_c)
    assert x.cloud_gpu_s[1] == pytest.approx(0.5 * rc.infer["request_s"] * cloud.gpus / cloud.batch)
    assert x.best_r == pytest.approx(0.85)
    assert routing(target=1.0).best_r == pytest.approx(0.40)


def test_cloud_side_follows_a_datacentre_scenario():
    x = routing()
    current = x.cloud_scenario.replace(prompt_len=1024)
    assert routing(current=current).cloud_scenario.prompt_len == 1024
    edge = x.device_scenario
    assert routing(current=edge).cloud_scenario.hardware.kind == "datacenter-gpu"
