"""`validate` batches its work (issue 26, "validate speed"): every fit's evaluations share evaluate_grid calls,
runs that differ only in layout axes share one call, a row asked again is answered from the kept predictions,
and one Sobol sample bands every run of one set of assumptions. Same figures as fitting and banding one at a time
(tests/benchmarks/test_validate_benchmark.py times it)."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop.model.search import uncertainty, validation, validation_fit


def test_fits_together_equal_fits_one_at_a_time():
    runs = validation.published_runs()[:8]
    x0 = (0.5, 0.8, 0.8)
    problems = [(runs, x0, (True, True, False)), (runs[1:], x0, (True, True, True)), (runs[:-1], x0, (True, True, False))]
    together = validation_fit.fit_together(problems, runs)
    alone = [validation_fit.fit_efficiencies(*p) for p in problems]
    np.testing.assert_allclose(together, alone, rtol=1e-12)


def test_grouped_predictions_equal_run_by_run():
    runs = validation.published_runs()
    eff = np.array([[0.5, 0.8, 0.8], [0.4, 0.7, 0.9]])
    grouped = validation_fit.predicted_times(runs, eff)
    single = np.vstack([validation_fit.predicted_times([r], eff) for r in runs])
    np.testing.assert_allclose(grouped, single, rtol=1e-12)
    assert len(validation_fit._run_groups(runs)) < len(runs)


def test_validate_makes_one_call_per_group_of_runs_per_round(monkeypatch):
    calls = []
    real = validation_fit.evaluate_grid
    monkeypatch.setattr(validation_fit, "evaluate_grid", lambda *a, **k: calls.append(1) or real(*a, **k))
    rep = validation.validate(samples=64)
    # one call per run per least-squares step per fit would be about 15,000; one per group of runs (runs that
    # share hardware, kernels and assumptions: 58 of 100 runs) per round of steps is 18 x 58 = 1,044
    groups = len(validation_fit._run_groups(validation.published_runs()))
    assert len(calls) <= 20 * groups, (len(calls), groups)
    # the report: default-assumption error first, then the held-out errors of the calibration
    keys = list(rep)
    assert keys.index("median_abs_rel_error") < keys.index("leave_one_out_median_abs_rel_error")
    assert {"median_abs_rel_error_by_kind", "median_abs_rel_error_by_family", "moe_runs", "memory_runs",
            "memory_median_abs_rel_error", "leave_one_family_out_median_abs_rel_error",
            "leave_one_source_out_median_abs_rel_error"} <= rep.keys()
    chosen = rep["fits"][rep["leave_one_out_fit"]]
    assert set(chosen["leave_one_family_out_median_abs_rel_error_by_family"]) == {r["family"] for r in rep["runs"]}
    assert set(chosen["leave_one_source_out_median_abs_rel_error_by_source"]) == {r["source"] for r in rep["runs"]}
    assert rep["leave_one_family_out_median_abs_rel_error"] == chosen["leave_one_family_out_median_abs_rel_error"]


def test_batched_bands_equal_propagate_run_by_run():
    runs = validation.published_runs()
    rows = validation.run_rows(samples=64, runs=runs)
    eff = validation.efficiency_of("default")
    for run, row in zip(runs, rows, strict=True):
        u = uncertainty.propagate(run.scenario.replace(efficiency=eff), samples=64, sensitivity=False)
        band = u.bands[{"step_time_s": "time_per_step_s"}.get(run.quantity, run.quantity)]
        np.testing.assert_allclose([row["predicted"], row["p05"], row["p95"]], [band.point, band.p05, band.p95],
                                   rtol=1e-12, err_msg=run.name)


def test_rows_asked_again_cost_no_call(monkeypatch):
    runs = validation.published_runs()[:6]
    shared = validation_fit.SharedEvaluator(runs)
    first = shared.predictions([[0.5, 0.8, 0.8], [0.4, 0.8, 0.8]])
    np.testing.assert_array_equal(first, validation_fit.predicted_times(runs, [[0.5, 0.8, 0.8], [0.4, 0.8, 0.8]]))
    calls = []
    monkeypatch.setattr(validation_fit, "evaluate_grid", lambda *a, **k: calls.append(1))
    again = shared.predictions([[0.4, 0.8, 0.8], [0.5, 0.8, 0.8], [0.4, 0.8, 0.8]])
    assert calls == [] and np.array_equal(again, first[:, [1, 0, 1]])


def test_one_sobol_sample_is_shared():
    a = uncertainty.sobol_sample(6, 64, 0)
    assert uncertainty.sobol_sample(6, 64, 0) is a and not a.flags.writeable


def test_a_failed_evaluation_reaches_the_caller_and_frees_every_fit(monkeypatch):
    runs = validation.published_runs()[:4]

    def broken(*_a, **_k):
        raise ValueError("no grid today")

    monkeypatch.setattr(validation_fit, "evaluate_grid", broken)
    x0 = (0.5, 0.8, 0.8)
    with pytest.raises(ValueError, match="no grid today"):
        validation_fit.fit_together([(runs, x0, (True, True, False)), (runs[1:], x0, (True, True, True))], runs)
