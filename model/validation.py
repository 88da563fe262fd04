"""The model against published, measured training runs (resources/published_runs.toml), and a fit of the
efficiencies to them.

Measured figures become a step time first: a published step time as is; a published FLOP/s per GPU through
the source's own FLOP count, t = F / (GPUs x FLOP/s), with F = 96 B s l h^2 (1 + s/6h + V/16lh) for Megatron's
count with activation recomputation (Narayanan et al. 2021, Eq. 3) or this app's model FLOPs ("model").
Error: rel_error = predicted / measured - 1 of the step time.

Fit (`fit_efficiencies`): scipy.optimize.least_squares over (compute_efficiency, network_efficiency) on the
residuals log(predicted / measured). HBM efficiency is kept: a training step spends under 1% of its time on
HBM-bound kernels in these runs, so the runs cannot identify it. Residuals and their Jacobian (forward
differences) come from one evaluate_grid call per run with three efficiency rows. Leave-one-out: refit without
each run (warm-started from the full fit) and predict it. The calibrated ranges: likely = the fit; compute
efficiency's low/high = fit x exp(5th/95th percentile of the leave-one-out log residuals) (step time ~ 1 /
compute efficiency on these compute-bound runs); network efficiency's range scaled with its fit; HBM's kept.
scipy is imported lazily, only here and in model/uncertainty.py.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

import numpy as np

from .assumptions import EFFICIENCY_FIELD, assumptions, efficiency_of, write_calibrated
from .errors import ValidationError
from .evaluate import evaluate, evaluate_grid
from .presets import hardware_presets, model_presets
from .scenario import Scenario
from .uncertainty import propagate

METRICS = ("step_time_s", "flops_per_gpu")
FLOP_COUNTS = ("megatron-recompute", "model")
FITTED = ("compute_efficiency", "network_efficiency")
_LAYOUT = ("gpus", "tp", "pp", "cp", "ep", "zero", "recompute", "sequence_parallel", "micro_batch", "global_batch",
           "seq_len")
_MODEL_SHAPE = ("name", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab")


@dataclass(frozen=True)
class PublishedRun:
    name: str
    source: str
    where: str
    scenario: Scenario
    metric: str
    measured: float
    flop_count: str
    assumed: str

    @property
    def measured_step_time_s(self) -> float:
        """The measured figure as seconds per step (see the module docstring)."""
        if self.metric == "step_time_s":
            return self.measured
        sc = self.scenario
        if self.flop_count == "megatron-recompute":
            flops = megatron_recompute_flops(sc.global_batch, sc.seq_len, sc.model.layers, sc.model.hidden,
                                             sc.model.vocab)
        else:
            flops = evaluate(sc).train["model_flops"]
        return flops / (sc.gpus * self.measured)


def megatron_recompute_flops(batch, seq, layers, hidden, vocab) -> float:
    """FLOPs per iteration with activation recomputation: 96 B s l h^2 (1 + s/6h + V/16lh) (Narayanan 2021 Eq. 3)."""
    return 96.0 * batch * seq * layers * hidden ** 2 * (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden))


def _run_from(entry: Mapping, where: str) -> PublishedRun:
    hw, models = hardware_presets(), model_presets()
    name = str(entry.get("name", "?"))
    try:
        model_entry = entry.get("model")
        if isinstance(model_entry, Mapping):
            base = models[model_entry["base"]]
            shape = {k: model_entry[k] for k in _MODEL_SHAPE if k in model_entry}
            model = replace(base, key=f"{base.key}:{shape.get('name', name)}", **shape)
        else:
            model = models[str(model_entry)]
        layout = {k: entry[k] for k in _LAYOUT if k in entry}
        sc = Scenario(hardware=hw[str(entry["hardware"])], model=model, kind="train", **layout)
        metric, flop_count = str(entry["metric"]), str(entry.get("flop_count", "model"))
        if metric not in METRICS or flop_count not in FLOP_COUNTS:
            raise ValueError(f"metric one of {METRICS}, flop_count one of {FLOP_COUNTS}")
        measured = float(entry["measured"])
        if not measured > 0:
            raise ValueError("measured must be > 0")
    except (KeyError, TypeError, ValueError) as exc:
        raise ValidationError(f"{where}: run {name!r}", str(exc), "a complete, valid run entry") from None
    return PublishedRun(name=name, source=str(entry["source"]), where=str(entry.get("where", "")), scenario=sc,
                        metric=metric, measured=measured, flop_count=flop_count, assumed=str(entry.get("assumed", "")))


@cache
def published_runs() -> tuple[PublishedRun, ...]:
    text = resources.files("trinity_desktop.resources").joinpath("published_runs.toml").read_text(encoding="utf-8")
    return tuple(_run_from(e, "published_runs.toml") for e in tomllib.loads(text).get("run", []))


def predicted_step_times(runs: Sequence[PublishedRun], eff: np.ndarray, hbm: float) -> np.ndarray:
    """Step time of every run (rows) at each (compute, network) efficiency pair (columns of `eff`, shape (k, 2)),
    one evaluate_grid call per run."""
    eff = np.atleast_2d(np.asarray(eff, dtype=float))
    out = np.empty((len(runs), len(eff)))
    for i, run in enumerate(runs):
        g = evaluate_grid(run.scenario, compute_efficiency=eff[:, 0], network_efficiency=eff[:, 1],
                          hbm_efficiency=hbm)
        out[i] = np.broadcast_to(g["time_total"], (len(eff),))
    return out


def fit_efficiencies(runs: Sequence[PublishedRun], x0: Sequence[float] = (0.5, 0.8), hbm: float = 0.8):
    """(compute_efficiency, network_efficiency) minimising sum of log(predicted / measured)^2; scipy least_squares."""
    from scipy.optimize import least_squares

    measured = np.array([r.measured_step_time_s for r in runs])
    step = 1e-4
    memo: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def both(x):
        key = tuple(np.round(x, 12))
        if key not in memo:
            rows = np.array([x, x + [step, 0.0], x + [0.0, step]])
            t = np.log(predicted_step_times(runs, rows, hbm) / measured[:, None])
            memo[key] = (t[:, 0], np.stack([(t[:, 1] - t[:, 0]) / step, (t[:, 2] - t[:, 0]) / step], axis=1))
        return memo[key]

    result = least_squares(lambda x: both(x)[0], np.asarray(x0, dtype=float), jac=lambda x: both(x)[1],
                           bounds=([0.05, 0.05], [1.0 - 2 * step, 1.0 - 2 * step]), x_scale=[0.1, 0.1],
                           xtol=1e-4, ftol=1e-6)
    return result.x


def _median_abs(x) -> float:
    return float(np.median(np.abs(x)))


def leave_one_out(runs: Sequence[PublishedRun], full_fit: np.ndarray, hbm: float) -> np.ndarray:
    """rel_error of each run predicted with the efficiencies fitted to the others."""
    errors = np.empty(len(runs))
    for i, run in enumerate(runs):
        others = [r for j, r in enumerate(runs) if j != i]
        x = fit_efficiencies(others, full_fit, hbm)
        errors[i] = predicted_step_times([run], x[None, :], hbm)[0, 0] / run.measured_step_time_s - 1.0
    return errors


def run_rows(set_name: str = "default", samples: int = 256, runs: Sequence[PublishedRun] | None = None) -> list[dict]:
    """Predicted against measured for every run, with the p05-p95 band of the set's assumption ranges."""
    runs = published_runs() if runs is None else runs
    eff = efficiency_of(set_name)
    ranges = assumptions(set_name)
    rows = []
    for run in runs:
        sc = run.scenario.replace(efficiency=eff)
        u = propagate(sc, samples=samples, set_name=set_name, sensitivity=False, ranges=ranges)
        band = u.bands["time_per_step_s"]
        measured = run.measured_step_time_s
        rows.append({"name": run.name, "source": run.source, "where": run.where, "hardware": sc.hardware.key,
                     "model": sc.model.name, "gpus": sc.gpus,
                     "layout": {"tp": sc.tp, "pp": sc.pp, "cp": sc.cp, "dp": sc.dp, "zero": sc.zero,
                                "recompute": sc.recompute, "micro_batch": sc.micro_batch,
                                "global_batch": sc.global_batch, "seq_len": sc.seq_len},
                     "measured_as_published": {"metric": run.metric, "value": run.measured,
                                               "flop_count": run.flop_count if run.metric != "step_time_s" else None},
                     "measured": measured, "predicted": band.point, "p05": band.p05, "p95": band.p95,
                     "rel_error": band.point / measured - 1.0, "in_band": bool(band.p05 <= measured <= band.p95),
                     "assumed": run.assumed})
    return rows


def validate(set_name: str = "default", samples: int = 256, fit: bool = False) -> dict:
    """The validation report: runs, median and worst error, the leave-one-out error of a fit, and with `fit`
    the calibrated set written for `--efficiency calibrated`."""
    runs = published_runs()
    rows = run_rows(set_name, samples, runs)
    errors = np.array([r["rel_error"] for r in rows])
    worst = int(np.argmax(np.abs(errors)))
    hbm = efficiency_of(set_name).hbm
    x0 = [getattr(efficiency_of(set_name), EFFICIENCY_FIELD[n]) for n in FITTED]
    x = fit_efficiencies(runs, x0, hbm)
    fitted = predicted_step_times(runs, x[None, :], hbm)[:, 0] / np.array([r.measured_step_time_s for r in runs]) - 1
    loo = leave_one_out(runs, x, hbm)
    report = {"set": set_name, "samples_per_run": samples, "runs": rows,
              "median_abs_rel_error": _median_abs(errors), "worst_abs_rel_error": float(abs(errors[worst])),
              "worst_run": rows[worst]["name"], "runs_in_band": int(sum(r["in_band"] for r in rows)),
              "leave_one_out_median_abs_rel_error": _median_abs(loo)}
    if fit:
        ranges = calibrated_ranges(x, loo, set_name)
        note = (f"compute and network efficiency fitted to {len(runs)} published runs: in-sample median |error| "
                f"{_median_abs(fitted):.3f}, leave-one-out {_median_abs(loo):.3f} ({set_name} set: "
                f"{_median_abs(errors):.3f}); hbm_efficiency kept (not identifiable from training runs)")
        path = write_calibrated(ranges, note)
        report["fit"] = {**{n: float(v) for n, v in zip(FITTED, x, strict=True)}, "hbm_efficiency": hbm,
                         "in_sample_median_abs_rel_error": _median_abs(fitted),
                         "leave_one_out_median_abs_rel_error": _median_abs(loo),
                         "leave_one_out_rel_error": {r.name: float(e) for r, e in zip(runs, loo, strict=True)},
                         "ranges": {n: {"low": lo, "likely": m, "high": hi} for n, (lo, m, hi) in ranges.items()},
                         "written_to": str(path)}
    return report


def calibrated_ranges(x: np.ndarray, loo: np.ndarray, set_name: str = "default") -> dict[str, tuple]:
    """{name: (low, likely, high)} of the three efficiencies after a fit (see the module docstring)."""
    base = assumptions(set_name)
    c, n = (float(v) for v in x)
    q05, q95 = np.quantile(np.log1p(loo), (0.05, 0.95))
    c_low, c_high = max(0.01, min(c, c * np.exp(q05))), min(1.0, max(c, c * np.exp(q95)))
    if c_high - c_low < 1e-3:
        c_low, c_high = max(0.01, c * 0.9), min(1.0, c * 1.1)
    k = n / base["network_efficiency"].likely
    net = base["network_efficiency"]
    n_low, n_high = max(0.01, min(n, net.low * k)), min(1.0, max(n, net.high * k))
    if n_high - n_low < 1e-3:
        n_low, n_high = max(0.01, n * 0.9), min(1.0, n * 1.1)
    h = base["hbm_efficiency"]
    return {"compute_efficiency": (float(c_low), c, float(c_high)),
            "hbm_efficiency": (h.low, h.likely, h.high),
            "network_efficiency": (float(n_low), n, float(n_high))}
