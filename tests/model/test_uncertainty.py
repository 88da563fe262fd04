"""Assumption ranges, their propagation through evaluate_grid, and the Sobol indices of the headline output."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinity_desktop.model import Scenario, ValidationError, evaluate, evaluate_grid
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.inputs.assumptions import EFFICIENCY_NAMES, default_assumptions, efficiency_json
from trinity_desktop.model.inputs.scenario import Efficiency
from trinity_desktop.model.search.uncertainty import dominant, propagate, triangular_ppf, uncertainty_json
from trinity_desktop.model.step.inference import RESERVED_FRACTION

HW = presets.hardware_presets()
MODELS = presets.model_presets()


def _train_175b(**kw) -> Scenario:
    """Korthikanti Table 3's 175B layout: TP 8, PP 8, 64 A100s, batch 64 (compute-bound)."""
    return Scenario(hardware=HW["a100-80gb-sxm"], model=MODELS["korthikanti-175b"], kind="train", gpus=64,
                    tp=8, pp=8, global_batch=64, micro_batch=1, seq_len=2048, **kw)


def _decode_8b(**kw) -> Scenario:
    """Llama-3-8B decode on H100s, one GPU and batch 1 unless `kw` says otherwise (bandwidth-bound)."""
    return Scenario(hardware=HW["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", **{"gpus": 1, "batch": 1, **kw})


def test_every_assumption_names_a_reference_and_likely_matches_the_point_model():
    refs = presets.references()
    a = default_assumptions()
    assert {n for n in EFFICIENCY_NAMES} <= set(a)
    for item in a.values():
        assert item.source in refs, item.name
        assert item.note
    eff = Efficiency()
    assert efficiency_json(eff) == {n: a[n].likely for n in EFFICIENCY_NAMES}
    assert a["runtime_reserve_fraction"].likely == RESERVED_FRACTION
    assert a["grad_overlap_fraction"].likely == 1.0
    assert a["scaleup_latency_scale"].likely == a["scaleout_latency_scale"].likely == 1.0


def test_assumption_axes_are_one_formula_any_shape():
    """Scalar assumption axes equal `evaluate` with the same Efficiency; arrays equal their scalars."""
    sc = _train_175b()
    eff = Efficiency(compute=0.42, hbm=0.7, network=0.6)
    r = evaluate(sc.replace(efficiency=eff))
    grid = evaluate_grid(sc, compute_efficiency=np.array([0.42, 0.5]), hbm_efficiency=0.7,
                         network_efficiency=np.array([0.6, 0.8]))
    assert grid.time_total[0] == pytest.approx(r.time_total, rel=1e-12)
    assert grid.time_total[1] == pytest.approx(evaluate(sc.replace(
        efficiency=Efficiency(compute=0.5, hbm=0.7, network=0.8))).time_total, rel=1e-12)
    # a larger alpha can only slow a multi-GPU step; overlap 1 reproduces the point model
    lat = evaluate_grid(sc, scaleup_latency_s=np.array([1e-6, 4e-6]), grad_overlap_fraction=1.0)
    assert lat.time_total[0] == pytest.approx(evaluate(sc).time_total, rel=1e-12)
    assert lat.time_total[1] > lat.time_total[0]


def test_less_gradient_overlap_exposes_more_sync():
    sc = Scenario(hardware=HW["a100-80gb-sxm"], model=MODELS["llama-2-7b"], kind="train", gpus=64, tp=1, pp=1,
                  zero=0, global_batch=64, micro_batch=1, seq_len=4096)
    t = evaluate_grid(sc, grad_overlap_fraction=np.array([1.0, 0.5, 0.0])).time_total
    assert t[0] < t[1] < t[2]


def test_runtime_reserve_changes_memory_not_time():
    sc = _decode_8b()
    g = evaluate_grid(sc, runtime_reserve_fraction=np.array([0.05, 0.2]))
    assert g.memory_total[1] - g.memory_total[0] == pytest.approx(0.15 * sc.hardware.hbm_bytes)
    assert np.ptp(np.broadcast_to(g.time_per_output_token_s, (2,))) == 0.0


@settings(max_examples=50, deadline=None)
@given(st.floats(0.01, 0.5), st.floats(0.0, 1.0), st.floats(0.01, 0.5), st.lists(st.floats(0, 1), min_size=2))
def test_triangular_ppf_is_monotone_within_bounds_and_matches_scipy(low, w_mode, w_high, us):
    from scipy.stats import triang

    high = low + w_high
    likely = low + w_mode * w_high
    u = np.sort(np.array(us))
    x = triangular_ppf(u, low, likely, high)
    assert np.all(np.diff(x) >= -1e-12)
    assert np.all((x >= low - 1e-12) & (x <= high + 1e-12))
    expected = triang(c=(likely - low) / (high - low), loc=low, scale=high - low).ppf(u)
    np.testing.assert_allclose(x, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("scenario", [_train_175b(), _decode_8b(), _decode_8b(batch=64, prompt_len=8192),
                                      _train_175b(zero=1, recompute="full")], ids=["train", "decode", "decode-b64",
                                                                                   "train-full-recompute"])
def test_quantiles_bracket_the_point_estimate(scenario):
    u = propagate(scenario, samples=512)
    point = evaluate(scenario).time_total
    head = u.bands[u.headline]
    assert head.point == pytest.approx(point, rel=1e-12)
    for band in u.bands.values():
        assert band.p05 <= band.p50 <= band.p95
        assert band.p05 <= band.point <= band.p95
        assert band.p05 < band.p95  # the spread is real


def test_compute_bound_training_is_driven_by_compute_efficiency():
    u = propagate(_train_175b(), samples=1024)
    assert dominant(u) == "compute_efficiency"
    first, total = u.sensitivity["compute_efficiency"]
    assert first > 0.8 and total > 0.8
    # step time ~ 1 / compute_efficiency: the p95/p05 ratio is close to high/low of the range's inner 90%
    b = u.bands["time_per_step_s"]
    assert 1.2 < b.p95 / b.p05 < 0.62 / 0.35


def test_batch_one_decode_is_driven_by_hbm_efficiency():
    u = propagate(_decode_8b(), samples=1024)
    assert dominant(u) == "hbm_efficiency"
    assert u.sensitivity["hbm_efficiency"][0] > 0.9
    assert u.sensitivity["compute_efficiency"][1] < 0.05


def test_uncertainty_json_keys_and_bad_sample_count():
    j = uncertainty_json(propagate(_train_175b(), samples=64))
    assert j["samples"] == 64
    assert set(j["time_per_step_s"]) == {"p05", "p50", "p95"} and set(j["mfu"]) == {"p05", "p50", "p95"}
    assert set(j["sensitivity"]["compute_efficiency"]) == {"first", "total"}
    for bad in (0, 100, True, 8):
        with pytest.raises(ValidationError, match="samples"):
            propagate(_train_175b(), samples=bad)


def test_a_scenario_efficiency_recentres_its_range():
    sc = _train_175b(efficiency=Efficiency(compute=0.3))
    u = propagate(sc, samples=256)
    band = u.bands["time_per_step_s"]
    assert band.point == pytest.approx(evaluate(sc).time_total, rel=1e-12)
    assert band.p05 <= band.point <= band.p95


def test_scipy_is_imported_only_where_used():
    """Importing the model, the CLI and the validation modules loads no scipy; only the modules that use it name
    it, inside their functions (sobol.py only for the path of scipy's table of direction numbers)."""
    import pathlib
    import subprocess
    import sys

    code = ("import sys, trinity_desktop.model, trinity_desktop.model.search.uncertainty, trinity_desktop.model.search.validation, "
            "trinity_desktop.cli; print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"
    root = pathlib.Path(__file__).resolve().parents[2]
    users = sorted(p.relative_to(root).as_posix() for d in ("model", "ui", "trinity_desktop")
                   for p in (root / d).rglob("*.py") if "from scipy" in p.read_text() or "import scipy" in p.read_text())
    assert users == ["model/search/sobol.py", "model/search/uncertainty.py", "model/search/validation_fit.py"]
