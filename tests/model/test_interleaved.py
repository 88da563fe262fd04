"""Interleaved 1F1B (Narayanan et al. 2021 §2.2.2; Korthikanti et al. 2022 §4.2.3): the core's bubble, pipeline
sends and in-flight activations against the papers' formulas and against a simulation of Megatron-LM's schedule;
the divisibility rules as a ValidationError and as evaluate_grid's `valid` mask."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trinity_desktop.defaults import default_scenario
from trinity_desktop.model import Scenario, ValidationError, evaluate, evaluate_grid
from trinity_desktop.model.formulas.memory import in_flight_micro_batches
from trinity_desktop.model.formulas.pipeline_bubble import pipeline_time
from trinity_desktop.model.formulas.pipeline_schedule import (
    interleaved_1f1b,
    interleaved_timeline,
    peak_in_flight_chunks,
    stage_order,
)
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.views.stages import bubble_fraction, one_f_one_b, stages, training_pieces


def _pieces(sc):
    return training_pieces(sc)


def _stage_times(P) -> np.ndarray:
    """Each stage's seconds per micro-batch: its compute plus the busiest stage's exposed communication."""
    comm = P.tp_exposed_mb_s + P.cp_mb_s + P.ep_exposed_mb_s + P.pp_exposed_mb_s
    return np.array([P.first_stage_mb_s, *[P.middle_stage_mb_s] * (int(P.pp) - 2), P.last_stage_mb_s]) + comm


@pytest.mark.parametrize("pp,v,gb", [(2, 2, 64), (4, 2, 32), (4, 4, 64), (8, 2, 16), (4, 5, 128)])
def test_bubble_is_the_other_stages_over_v(pp, v, gb):
    """Fill and drain through every stage but the busiest once, each over v chunks (formulas/pipeline_bubble.py;
    balanced stages: (p-1)/(v·m) of the ideal time, Narayanan et al. 2021 §2.2.2)."""
    sc = default_scenario().replace(pp=pp, virtual_stages=v, global_batch=gb)
    r = evaluate(sc)
    t = _stage_times(_pieces(sc))
    assert r.time["pipeline_bubble"] == pytest.approx((t.sum() - t.max()) / v, rel=1e-12)
    assert t.max() == pytest.approx(float(_pieces(sc).compute_mb_s) + t[0] - float(_pieces(sc).first_stage_mb_s))


def test_v_times_the_pipeline_messages_and_one_is_plain_1f1b():
    base = default_scenario().replace(pp=4, global_batch=32)
    plain, inter = _pieces(base), _pieces(base.replace(virtual_stages=4))
    assert float(inter.pp_mb_bytes) == pytest.approx(4 * float(plain.pp_mb_bytes), rel=1e-12)
    assert float(inter.pp_mb_s) == pytest.approx(4 * float(plain.pp_mb_s), rel=1e-12)
    # v = 1 is the plain 1F1B model exactly: m t_max + the other stages once
    r = evaluate(base)
    t = _stage_times(plain)
    assert r.time["pipeline_bubble"] == pytest.approx(t.sum() - t.max(), rel=1e-12)


def test_hand_derived_uneven_pipeline():
    """p = 4, m = 8, stage times 1, 1, 1, 2 (forward a third): the last stage runs its 8 micro-batches back to back
    after the first forward crosses stages 0-2 and before the last backward returns through them: 8·2 + 3 = 19,
    v = 1; with v = 2 chunks the fill and drain halve: 8·2 + 3/2."""
    t = np.array([1.0, 1.0, 1.0, 2.0])
    pipeline, bubble = pipeline_time(8, 4, 1, 2.0, (1.0, 1.0, 2.0))
    assert (float(pipeline), float(bubble)) == (19.0, 3.0)
    f, b = one_f_one_b(4, 8, t / 3, 2 * t / 3)
    assert b[0, -1] + 2.0 / 3 == pytest.approx(19.0, rel=1e-12)
    assert float(pipeline_time(8, 4, 2, 2.0, (1.0, 1.0, 2.0))[0]) == 17.5
    ops = interleaved_1f1b(4, 2, 8, t / 3, 2 * t / 3)
    assert max(op.end_s for stage in ops for op in stage) == pytest.approx(17.5, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(p=st.integers(2, 8), v=st.integers(1, 3), groups=st.integers(1, 4), first=st.floats(0.3, 1.0),
       last=st.floats(1.0, 3.0), share=st.floats(0.5, 0.8))
def test_uneven_schedules_last_the_formula_when_the_last_stage_paces(p, v, groups, first, last, share):
    """Per-stage blocks (the first, p-2 middle stages of 1, the last the busiest): both schedules end at
    m·t_max + the other stages / v; with the first stage the busiest they end no later (an upper bound)."""
    m = groups * p
    for t in (np.array([first, *[min(1.0, last)] * (p - 2), last]), np.array([last, *[1.0] * (p - 2), first])):
        tf, tb = t * (1 - share), t * share
        if v == 1:
            f, b = one_f_one_b(p, m, tf, tb)
            end = b[0, -1] + tb[0]
        else:
            end = max(op.end_s for stage in interleaved_1f1b(p, v, m, tf, tb) for op in stage)
        formula = float(pipeline_time(m, p, v, t.max(), (t[0], t[min(1, p - 2)] if p > 2 else 0.0, t[-1]))[0])
        if t[-1] == t.max():
            assert end == pytest.approx(formula, rel=1e-9)
        else:
            assert end <= formula * (1 + 1e-12)


@pytest.mark.parametrize("pp,v,gb", [(4, 2, 32), (4, 4, 64), (8, 2, 16), (2, 5, 64), (4, 2, 8)])
def test_activation_factor_is_korthikanti_and_the_simulated_peak(pp, v, gb):
    sc = default_scenario().replace(pp=pp, virtual_stages=v, global_batch=gb)
    r = evaluate(sc)
    P = _pieces(sc)
    m = int(r.train["micro_batches"])
    stage_loads = r.memory["activations"] / float(P.act_mb_bytes)
    # Korthikanti §4.2.3: the first stage holds L(1 + (p-1)/(pv)) layers' activations = p + (p-1)/v stage-loads
    # once m >= p + (p-1)/v; with fewer micro-batches all m·v chunks are in flight
    expected = pp * (1 + (pp - 1) / (v * pp)) if m * v >= v * pp + pp - 1 else m
    assert stage_loads == pytest.approx(expected, rel=1e-12)
    assert stage_loads == pytest.approx(peak_in_flight_chunks(stage_order(pp, v, m, 0)) / v, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(p=st.integers(2, 8), v=st.integers(1, 4), groups=st.integers(1, 4),
       t_f=st.floats(0.1, 3.0), t_b=st.floats(0.1, 6.0))
def test_megatron_order_lasts_m_plus_p_minus_1_over_v(p, v, groups, t_f, t_b):
    m = groups * p
    ops = interleaved_1f1b(p, v, m, t_f, t_b)
    makespan = max(op.end_s for stage in ops for op in stage)
    assert makespan == pytest.approx((m + (p - 1) / v) * (t_f + t_b), rel=1e-9)
    for stage in ops:  # every chunk of every micro-batch once forward and once backward
        assert sorted((op.op, op.micro_batch, op.chunk) for op in stage) == sorted(
            (o, j, c) for o in "BF" for j in range(m) for c in range(v))
    assert max(peak_in_flight_chunks(stage_order(p, v, m, s)) for s in range(p)) == min(v * p + p - 1, m * v)
    assert float(in_flight_micro_batches(p, m, v)) * v == pytest.approx(
        min(v * p + p - 1, m * v) if v > 1 else v * min(p, m))


def test_grouped_timeline_keeps_the_makespan():
    tl = interleaved_timeline(4, 3, 400, 1.0, 2.0, 96)
    assert tl.grouped == 400 - 96 and tl.grouped % 4 == 0
    end = max(op.end_s for stage in tl.ops for op in stage)
    assert end == pytest.approx((400 + 3 / 3) * 3.0, rel=1e-12)


def test_timeline_bubble_is_the_interleaved_fraction():
    sc = default_scenario().replace(pp=4, virtual_stages=2, global_batch=32)
    r = evaluate(sc)
    m, p, v = r.train["micro_batches"], 4, 2
    items = stages(sc, r)
    t = _stage_times(_pieces(sc))
    pipeline = m * t.max() + (t.sum() - t.max()) / v
    for k in range(p):  # each lane idles the pipeline but its own m·t_s (balanced: ((p-1)/v) / (m + (p-1)/v))
        assert bubble_fraction(items, f"stage {k}") == pytest.approx(1.0 - m * t[k] / pipeline, rel=1e-9)


@pytest.mark.parametrize("changes,needle", [
    (dict(pp=1, virtual_stages=2), "PP >= 2"),
    (dict(pp=4, virtual_stages=100, global_batch=32), "PP x v (here 400) at most"),
    (dict(pp=4, virtual_stages=2, global_batch=20), "multiple of PP = 4"),
    (dict(virtual_stages=0), "from 1 to 1024"),
])
def test_bad_virtual_stages_name_the_field(changes, needle):
    with pytest.raises(ValidationError, match="virtual_stages") as exc:
        default_scenario().replace(**changes)
    assert needle in str(exc.value)


def test_llama3_405b_pipeline_balances_126_layers_as_128_slots():
    """Llama 3 §3.3.2: one layer fewer on the first and the last stage, so PP16 with v = 8 chunks is valid."""
    sc = Scenario(hardware=presets.hardware_presets()["h100-sxm"], model=presets.model_presets()["llama-3.1-405b"],
                  gpus=16384, tp=8, pp=16, virtual_stages=8, global_batch=2048, seq_len=8192, recompute="full")
    r = evaluate(sc)
    assert sc.dp == 128 and sc.micro_batches == 16 and r.fits
    assert r.time["pipeline_bubble"] / (r.time_total - r.time["pipeline_bubble"]) == pytest.approx(
        15 / (8 * 16), rel=0.05)  # (p-1)/(vm) of the rest (optimizer and exposed DP are < 1% here)


def test_valid_mask_is_the_scenario_rules():
    base = default_scenario()
    tp, pp, v, gb = np.array([4, 8]), np.array([1, 2, 4, 8]), np.array([1, 2, 3, 4, 5]), np.array([16, 24, 64])
    grid = evaluate_grid(base, tp=tp[:, None, None, None], pp=pp[None, :, None, None],
                         virtual_stages=v[None, None, :, None], global_batch=gb[None, None, None, :])
    for i, j, k, n in itertools.product(range(2), range(4), range(5), range(3)):
        try:
            base.replace(tp=int(tp[i]), pp=int(pp[j]), virtual_stages=int(v[k]), global_batch=int(gb[n]))
            ok = True
        except ValidationError:
            ok = False
        assert bool(grid.valid[i, j, k, n]) == ok, (tp[i], pp[j], v[k], gb[n])
