"""The model against published, measured runs (model/search/published_runs.py): the error with the set's
assumptions first, then how well a calibration would carry to runs it has not seen.

Error: rel_error = predicted / measured - 1 of each run's quantity (training step time; inference request,
first-token or per-token time; peak memory per GPU, reported apart as `memory_runs`). Predicted: the model's
point value at the set's efficiencies, with the p05-p95 band of its assumption ranges (model/search/uncertainty.py,
the runs of one set of applicable assumptions banded together over one Sobol sample).
Calibration (model/search/validation_fit.py): the three efficiencies fitted to the timed runs, two ways (HBM kept,
HBM fitted), each judged held out: leave one run out, leave one hardware family out (fit on the other families,
predict this one), and leave one source out. `validate` calibrates with the fit of lower leave-one-out error and
reports its leave-one-family-out and leave-one-source-out errors beside it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from trinity_desktop.model.inputs.assumptions import (
    EFFICIENCY_FIELD,
    assumptions,
    efficiency_of,
    write_calibrated,
)
from trinity_desktop.model.search.published_runs import (
    GIB,
    KINDS,
    PublishedRun,
    published_memory_runs,
    published_runs,
)
from trinity_desktop.model.search.uncertainty import Band, applicable, time_bands, workload_of
from trinity_desktop.model.search.validation_fit import (
    EFFICIENCIES,
    FITS,
    QUANTITY_OUTPUT,
    calibrated_ranges,
    fit_and_hold_out,
    groups_by,
    median_abs,
    predicted_times,
)
from trinity_desktop.model.step.evaluation import evaluate_grid

HELD_OUT = ("run", "family", "source")  # what a held-out refit leaves out


def _layout(run: PublishedRun) -> dict:
    sc = run.scenario
    if run.kind == "inference":
        return {"tp": sc.gpus, "batch": sc.batch, "prompt_len": sc.prompt_len, "gen_len": sc.gen_len,
                "weight_dtype": sc.weight_dtype, "kv_dtype": sc.kv_dtype}
    return {"tp": sc.tp, "pp": sc.pp, "cp": sc.cp, "ep": sc.ep, "dp": sc.dp, "virtual_stages": sc.virtual_stages,
            "zero": sc.zero, "recompute": sc.recompute, "micro_batch": sc.micro_batch,
            "global_batch": sc.global_batch, "seq_len": sc.seq_len, "precision": sc.precision}


def _row(run: PublishedRun, predicted: float, p05: float, p95: float) -> dict:
    sc, measured = run.scenario, run.measured_value
    return {"name": run.name, "kind": run.kind, "quantity": run.quantity, "source": run.source, "where": run.where,
            "hardware": sc.hardware.key, "family": run.family, "model": sc.model.name, "gpus": sc.gpus,
            "moe": sc.model.experts > 1, "layout": _layout(run),
            "measured_as_published": {"metric": run.metric, "value": run.measured,
                                      "flop_count": run.flop_count if run.metric == "flops_per_gpu" else None},
            "measured": measured, "predicted": predicted, "p05": p05, "p95": p95,
            "rel_error": predicted / measured - 1.0, "in_band": bool(p05 <= measured <= p95), "assumed": run.assumed}


def run_rows(set_name: str = "default", samples: int = 256, runs: Sequence[PublishedRun] | None = None) -> list[dict]:
    """Predicted against measured for every timed run, with the p05-p95 band of the set's assumption ranges."""
    runs = published_runs() if runs is None else runs
    eff = efficiency_of(set_name)
    ranges = assumptions(set_name)
    scenarios = [run.scenario.replace(efficiency=eff) for run in runs]
    bands: list[Band | None] = [None] * len(runs)
    # `propagate`'s bands (sensitivity off), a batch per set of applicable assumptions: one sample, one
    # evaluate_grid call per group of runs that differ only in grid axes
    for members in groups_by([(workload_of(s), tuple(a.name for a in applicable(s, ranges))) for s in scenarios]):
        done = time_bands([scenarios[i] for i in members], samples, set_name, ranges=ranges,
                          outputs=[QUANTITY_OUTPUT[runs[i].quantity] for i in members])
        for i, band in zip(members, done, strict=True):
            bands[i] = band
    return [_row(run, b.point, b.p05, b.p95) for run, b in zip(runs, bands, strict=True)]


def memory_rows(runs: Sequence[PublishedRun] | None = None) -> list[dict]:
    """Predicted against measured peak memory per GPU (bytes; the efficiencies do not enter it, so no band)."""
    runs = published_memory_runs() if runs is None else runs
    rows = []
    for run in runs:
        predicted = float(evaluate_grid(run.scenario).memory_total)
        rows.append(_row(run, predicted, predicted, predicted) | {"predicted_gib": predicted / GIB})
    return rows


def _by(labels: np.ndarray, errors: np.ndarray) -> dict[str, float]:
    return {str(k): median_abs(errors[labels == k]) for k in dict.fromkeys(labels)}


def _fit_reports(runs: Sequence[PublishedRun], x0, variants: Mapping[str, Sequence[bool]]) -> dict[str, dict]:
    """Each variant's full fit and every held-out refit (each run, family and source left out), in one batch."""
    frees = {label: tuple(free) for label, free in variants.items()}
    families = np.array([r.family for r in runs])
    sources = np.array([r.source for r in runs])
    kinds = np.array([r.kind for r in runs])
    partitions = {"run": [[i] for i in range(len(runs))], "family": groups_by(families),
                  "source": groups_by(sources)}
    done = fit_and_hold_out(runs, x0, list(frees.values()), partitions)
    reports = {}
    for label, free in frees.items():
        x = done.fits[free]
        loo, lofo, loso = (done.held_out[free][what] for what in HELD_OUT)
        reports[label] = {
            "x": x, "loo": loo, "free": free,
            "efficiencies": {n: float(v) for n, v in zip(EFFICIENCIES, x, strict=True)},
            "fitted": [n for n, f in zip(EFFICIENCIES, free, strict=True) if f],
            "in_sample_median_abs_rel_error": median_abs(done.in_sample[free]),
            "leave_one_out_median_abs_rel_error": median_abs(loo),
            "leave_one_out_median_abs_rel_error_by_kind": _by(kinds, loo),
            "leave_one_family_out_median_abs_rel_error": median_abs(lofo),
            "leave_one_family_out_median_abs_rel_error_by_family": _by(families, lofo),
            "leave_one_source_out_median_abs_rel_error": median_abs(loso),
            "leave_one_source_out_median_abs_rel_error_by_source": _by(sources, loso),
            "leave_one_out_rel_error": {r.name: float(e) for r, e in zip(runs, loo, strict=True)}}
    return reports


def validate(set_name: str = "default", samples: int = 256, fit: bool = False) -> dict:
    """The validation report: first the error with the set's assumptions (all, by kind, by hardware family; peak
    memory apart), then the held-out errors of the two fits; with `fit` the calibrated set (the fit of lower
    leave-one-out error) written for `--efficiency calibrated`."""
    runs = published_runs()
    rows = run_rows(set_name, samples, runs)
    errors = np.array([r["rel_error"] for r in rows])
    kinds = np.array([r["kind"] for r in rows])
    families = np.array([r["family"] for r in rows])
    memory = memory_rows()
    worst = int(np.argmax(np.abs(errors)))
    eff = efficiency_of(set_name)
    x0 = [getattr(eff, EFFICIENCY_FIELD[n]) for n in EFFICIENCIES]
    fits = _fit_reports(runs, x0, FITS)
    best = min(fits, key=lambda k: fits[k]["leave_one_out_median_abs_rel_error"])
    chosen = fits[best]
    report = {"set": set_name, "samples_per_run": samples, "runs": rows,
              "median_abs_rel_error": median_abs(errors), "worst_abs_rel_error": float(abs(errors[worst])),
              "worst_run": rows[worst]["name"], "runs_in_band": int(sum(r["in_band"] for r in rows)),
              "median_abs_rel_error_by_kind": {k: median_abs(errors[kinds == k]) for k in KINDS
                                               if np.any(kinds == k)},
              "median_abs_rel_error_by_family": _by(families, errors),
              "moe_runs": int(sum(r["moe"] for r in rows)),
              "memory_runs": memory,
              "memory_median_abs_rel_error": median_abs([r["rel_error"] for r in memory]) if memory else None,
              "leave_one_out_median_abs_rel_error": chosen["leave_one_out_median_abs_rel_error"],
              "leave_one_family_out_median_abs_rel_error": chosen["leave_one_family_out_median_abs_rel_error"],
              "leave_one_source_out_median_abs_rel_error": chosen["leave_one_source_out_median_abs_rel_error"],
              "leave_one_out_fit": best,
              "fits": {label: {k: v for k, v in f.items() if k not in ("x", "loo", "free")}
                       for label, f in fits.items()}}
    if fit:
        ranges = calibrated_ranges(chosen["x"], chosen["loo"], set_name, hbm_fitted=chosen["free"][2])
        note = (f"{' and '.join(chosen['fitted'])} fitted to {len(runs)} published runs: in-sample median |error| "
                f"{chosen['in_sample_median_abs_rel_error']:.3f}, leave-one-out "
                f"{chosen['leave_one_out_median_abs_rel_error']:.3f}, leave-one-family-out "
                f"{chosen['leave_one_family_out_median_abs_rel_error']:.3f} ({set_name} set: "
                f"{median_abs(errors):.3f})")
        path = write_calibrated(ranges, note)
        report["fit"] = {**chosen["efficiencies"], "fitted": chosen["fitted"], "variant": best,
                         **{k: chosen[k] for k in ("in_sample_median_abs_rel_error",
                                                   "leave_one_out_median_abs_rel_error",
                                                   "leave_one_out_median_abs_rel_error_by_kind",
                                                   "leave_one_family_out_median_abs_rel_error",
                                                   "leave_one_source_out_median_abs_rel_error",
                                                   "leave_one_out_rel_error")},
                         "ranges": {n: {"low": lo, "likely": m, "high": hi} for n, (lo, m, hi) in ranges.items()},
                         "written_to": str(path)}
    return report


__all__ = ["published_runs", "published_memory_runs", "predicted_times", "run_rows", "memory_rows", "validate"]
