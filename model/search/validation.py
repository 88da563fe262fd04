"""The model against published, measured runs (resources/published_runs.toml): training steps and inference
requests, and a fit of the efficiencies to them.

Training ([[run]]): measured figures become a step time: a published step time as is; a published FLOP/s per
GPU through the source's own FLOP count, t = F / (GPUs x FLOP/s), with F = 96 B s l h^2 (1 + s/6h + V/16lh) for
Megatron's count with activation recomputation (Narayanan et al. 2021, Eq. 3) or this app's model FLOPs
("model"). Predicted: `time_total` of the training step.
Inference ([[inference]], tensor parallelism over `gpus`, one static batch): a request latency as is, an output
throughput X (tokens/s, all GPUs; or per GPU x gpus) as the batch's time t = batch x gen_len / X, both against
`request_s` = prefill + gen_len decode steps (model/step/inference.py); a first-token latency against the prefill
(`ttft_s`); a time per output token against one decode step.
Error: rel_error = predicted / measured - 1 of that time.

Fit (`fit_efficiencies`): scipy.optimize.least_squares over the free efficiencies on the residuals
log(predicted / measured), either (compute_efficiency, network_efficiency) with hbm_efficiency kept at the
set's value (a training step spends under 1% of its time on HBM-bound kernels, so training runs cannot identify
it), or all three (the inference runs' decode steps read the weights and the KV cache from HBM, which
identifies hbm_efficiency). Residuals and their Jacobian (forward differences) come from one evaluate_grid call
per run with 1 + (free efficiencies) rows. Leave-one-out: refit without each run (warm-started from the full
fit) and predict it. `validate` fits both ways and calibrates with the one of lower leave-one-out error. The
calibrated ranges: likely = the fit; compute efficiency's low/high = fit x exp(5th/95th percentile of the
leave-one-out log residuals) (time ~ 1 / compute efficiency on the compute-bound runs); network and (when
fitted) HBM efficiency's ranges scaled with their fit; HBM's kept when not fitted.
scipy is imported lazily, only here and in model/search/uncertainty.py.
"""

from __future__ import annotations

import threading
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.assumptions import (
    EFFICIENCY_FIELD,
    assumptions,
    efficiency_of,
    write_calibrated,
)
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.search.uncertainty import grid_groups, propagate
from trinity_desktop.model.step.evaluation import INFER_AXES, TRAIN_AXES, evaluate, evaluate_grid
from trinity_desktop.model.step.layout import infer_inputs, train_inputs

KINDS = ("training", "inference")
METRICS = ("step_time_s", "flops_per_gpu")
FLOP_COUNTS = ("megatron-recompute", "model")
# inference metric as published -> the quantity it is compared as
INFER_METRICS = {"request_latency_s": "request_s", "output_tokens_per_s": "request_s",
                 "output_tokens_per_s_per_gpu": "request_s", "ttft_s": "ttft_s",
                 "time_per_output_token_s": "time_per_output_token_s"}
# quantity -> (evaluate_grid output, uncertainty band)
QUANTITY_OUTPUT = {"step_time_s": ("time_total", "time_per_step_s"), "request_s": ("request_s", "request_s"),
                   "ttft_s": ("prefill_s", "ttft_s"),
                   "time_per_output_token_s": ("time_per_output_token_s", "time_per_output_token_s")}
EFFICIENCIES = ("compute_efficiency", "network_efficiency", "hbm_efficiency")
FITS = {"compute+network": (True, True, False), "compute+network+hbm": (True, True, True)}
_LAYOUT = ("gpus", "tp", "pp", "cp", "ep", "virtual_stages", "zero", "recompute", "sequence_parallel", "micro_batch",
           "global_batch", "seq_len")
_INFER_LAYOUT = ("gpus", "batch", "prompt_len", "gen_len", "weight_dtype", "kv_dtype")
_MODEL_SHAPE = ("name", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "vocab")
_STEP = 1e-4


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
    kind: str = "training"

    @property
    def quantity(self) -> str:
        return "step_time_s" if self.kind == "training" else INFER_METRICS[self.metric]

    @property
    def measured_time_s(self) -> float:
        """The measured figure as the seconds of its quantity (see the module docstring)."""
        sc = self.scenario
        if self.metric in ("step_time_s", "request_latency_s", "ttft_s", "time_per_output_token_s"):
            return self.measured
        if self.metric == "output_tokens_per_s":
            return sc.batch * sc.gen_len / self.measured
        if self.metric == "output_tokens_per_s_per_gpu":
            return sc.batch * sc.gen_len / (self.measured * sc.gpus)
        if self.flop_count == "megatron-recompute":
            flops = megatron_recompute_flops(sc.global_batch, sc.seq_len, sc.model.layers, sc.model.hidden,
                                             sc.model.vocab)
        else:
            flops = evaluate(sc).train["model_flops"]
        return flops / (sc.gpus * self.measured)


def megatron_recompute_flops(batch, seq, layers, hidden, vocab) -> float:
    """FLOPs per iteration with activation recomputation: 96 B s l h^2 (1 + s/6h + V/16lh) (Narayanan 2021 Eq. 3)."""
    return 96.0 * batch * seq * layers * hidden ** 2 * (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden))


def _model_of(entry: Mapping, name: str):
    models = model_presets()
    model_entry = entry["model"]
    if isinstance(model_entry, Mapping):
        base = models[model_entry["base"]]
        shape = {k: model_entry[k] for k in _MODEL_SHAPE if k in model_entry}
        return replace(base, key=f"{base.key}:{shape.get('name', name)}", **shape)
    return models[str(model_entry)]


def _run_from(entry: Mapping, where: str, kind: str = "training") -> PublishedRun:
    """One run of the file; anything missing or out of range is a one-line ValidationError naming the run."""
    name = str(entry.get("name", "?"))
    try:
        hw = hardware_presets()[str(entry["hardware"])]
        model = _model_of(entry, name)
        metric = str(entry["metric"])
        flop_count = str(entry.get("flop_count", "model"))
        if kind == "training":
            layout = {k: entry[k] for k in _LAYOUT if k in entry}
            sc = Scenario(hardware=hw, model=model, kind="train", **layout)
            if metric not in METRICS or flop_count not in FLOP_COUNTS:
                raise ValueError(f"metric one of {METRICS}, flop_count one of {FLOP_COUNTS}")
        else:
            missing = [k for k in _INFER_LAYOUT if k not in entry]
            if missing:
                raise KeyError(f"layout needs {', '.join(missing)}")
            sc = Scenario(hardware=hw, model=model, kind="decode", **{k: entry[k] for k in _INFER_LAYOUT})
            if metric not in INFER_METRICS:
                raise ValueError(f"metric one of {tuple(INFER_METRICS)}")
        measured = entry["measured"]
        if isinstance(measured, bool) or not isinstance(measured, (int, float)) or not measured > 0:
            raise ValueError(f"measured = {measured!r} must be a number > 0")
        source = str(entry["source"])
    except (KeyError, TypeError, ValueError) as exc:
        text = str(exc).strip("'\"") if isinstance(exc, KeyError) else str(exc)
        raise ValidationError(f"{where}: {kind} run {name!r}", name,
                              f"a complete, valid run entry ({text.replace(chr(10), ' ')})") from None
    return PublishedRun(name=name, source=source, where=str(entry.get("where", "")), scenario=sc, metric=metric,
                        measured=float(measured), flop_count=flop_count, assumed=str(entry.get("assumed", "")),
                        kind=kind)


def runs_from_text(text: str, where: str = "published_runs.toml") -> tuple[PublishedRun, ...]:
    """The training ([[run]]) and then the inference ([[inference]]) runs of a runs file's text."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(where, str(exc).splitlines()[0], "valid TOML") from None
    return (tuple(_run_from(e, where, "training") for e in doc.get("run", []))
            + tuple(_run_from(e, where, "inference") for e in doc.get("inference", [])))


@cache
def published_runs() -> tuple[PublishedRun, ...]:
    text = resources.files("trinity_desktop.resources").joinpath("published_runs.toml").read_text(encoding="utf-8")
    return runs_from_text(text)


def _run_groups(runs: Sequence[PublishedRun]) -> list[tuple[list[int], Scenario, dict]]:
    """The runs grouped so that each group differs only in evaluate_grid's layout axes (the 45 published runs
    make 24 groups): (members, the first member's scenario, its layout axes of shape (members, 1))."""
    out = []
    for train in (True, False):
        index = [i for i, r in enumerate(runs) if (r.scenario.kind == "train") == train]
        scenarios = [runs[i].scenario for i in index]
        inputs = [(train_inputs if train else infer_inputs)(s).as_dict() for s in scenarios]
        axes = TRAIN_AXES if train else INFER_AXES
        for members in grid_groups(scenarios, inputs, axes):
            layouts = {k: np.array([inputs[m][k] for m in members])[:, None] for k in axes
                       if k in inputs[members[0]] and len({inputs[m][k] for m in members}) > 1}
            out.append(([index[m] for m in members], scenarios[members[0]], layouts))
    return out


def predicted_times(runs: Sequence[PublishedRun], eff: np.ndarray) -> np.ndarray:
    """Each run's quantity (rows) at each efficiency triple (columns of `eff`, shape (k, 3), in the order of
    EFFICIENCIES): one evaluate_grid call per group of runs that differ only in layout axes (`_run_groups`),
    the layouts as axes of shape (members, 1) against the efficiencies as axes of shape (1, k)."""
    eff = np.atleast_2d(np.asarray(eff, dtype=float))
    out = np.empty((len(runs), len(eff)))
    for members, base, layouts in _run_groups(runs):
        g = evaluate_grid(base, **layouts, **{n: eff[None, :, j] for j, n in enumerate(EFFICIENCIES)})
        for row, i in enumerate(members):
            values = np.broadcast_to(g[QUANTITY_OUTPUT[runs[i].quantity][0]], (len(members), len(eff)))
            out[i] = values[row]
    return out


def fit_efficiencies(runs: Sequence[PublishedRun], x0: Sequence[float], free: Sequence[bool] = (True, True, False),
                     predict=predicted_times):
    """The efficiencies (order of EFFICIENCIES; the `free` ones fitted, the others kept at x0) minimising the sum
    of log(predicted / measured)^2; scipy least_squares. `predict(runs, rows)` is `predicted_times`, or the
    shared evaluator of `fit_together`."""
    from scipy.optimize import least_squares

    x0 = np.asarray(x0, dtype=float)
    idx = np.flatnonzero(free)
    measured = np.array([r.measured_time_s for r in runs])
    memo: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def full(p):
        x = x0.copy()
        x[idx] = p
        return x

    def both(p):
        key = tuple(np.round(p, 12))
        if key not in memo:
            x = full(p)
            rows = np.vstack([x] + [x + _STEP * np.eye(3)[i] for i in idx])
            t = np.log(predict(runs, rows) / measured[:, None])
            memo[key] = (t[:, 0], (t[:, 1:] - t[:, :1]) / _STEP)
        return memo[key]

    n = len(idx)
    result = least_squares(lambda p: both(p)[0], x0[idx], jac=lambda p: both(p)[1],
                           bounds=([0.05] * n, [1.0 - 2 * _STEP] * n), x_scale=[0.1] * n, xtol=1e-4, ftol=1e-6)
    return full(result.x)


class _SharedEvaluator:
    """Many fits at once, each least_squares in its own thread: a fit asking for predictions waits until every
    fit still running has asked, then ONE evaluate_grid call per run answers them all (the rows of every fit
    stacked on the efficiency axes). Each fit runs scipy's algorithm unchanged, so its result is the one it
    would reach alone; only the evaluations are batched (`validate`: 14,585 calls became about 1,000)."""

    def __init__(self, runs: Sequence[PublishedRun]):
        self.runs = list(runs)
        self._index = {id(r): i for i, r in enumerate(self.runs)}
        self._cond = threading.Condition()
        self._live: set[int] = set()
        self._asked: dict[int, tuple[list[int], np.ndarray]] = {}
        self._answers: dict[int, np.ndarray] = {}

    def predictor(self, fit_id: int):
        def predict(runs, rows):
            with self._cond:
                self._asked[fit_id] = ([self._index[id(r)] for r in runs], np.atleast_2d(rows))
                self._cond.notify_all()
                self._cond.wait_for(lambda: fit_id in self._answers)
                return self._answers.pop(fit_id)
        return predict

    def start(self, fit_id: int) -> None:
        with self._cond:
            self._live.add(fit_id)

    def finish(self, fit_id: int) -> None:
        with self._cond:
            self._live.discard(fit_id)
            self._cond.notify_all()

    def serve(self) -> None:
        """Answer rounds of requests until every fit has finished (run in the calling thread)."""
        while True:
            with self._cond:
                self._cond.wait_for(lambda: not self._live or set(self._asked) >= self._live)
                if not self._live:
                    return
                asked, self._asked = self._asked, {}
            answers = self._evaluate(asked)
            with self._cond:
                self._answers.update(answers)
                self._cond.notify_all()

    def _evaluate(self, asked: dict[int, tuple[list[int], np.ndarray]]) -> dict[int, np.ndarray]:
        """Every run at every asked row (one `predicted_times`), then each fit's runs and rows cut out."""
        stacked = np.vstack([rows for _members, rows in asked.values()])
        t = predicted_times(self.runs, stacked)
        out, start = {}, 0
        for fit_id, (members, rows) in asked.items():
            out[fit_id] = t[members, start:start + len(rows)]
            start += len(rows)
        return out


def fit_together(problems: Sequence[tuple[Sequence[PublishedRun], Sequence[float], Sequence[bool]]],
                 runs: Sequence[PublishedRun]) -> list[np.ndarray]:
    """`fit_efficiencies(*problem)` for every problem (runs drawn from `runs`), all at once (`_SharedEvaluator`)."""
    shared = _SharedEvaluator(runs)
    results: list[np.ndarray | None] = [None] * len(problems)
    errors: list[BaseException] = []

    def solve(k: int, problem) -> None:
        try:
            results[k] = fit_efficiencies(*problem, predict=shared.predictor(k))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread below
            errors.append(exc)
        finally:
            shared.finish(k)

    threads = []
    for k, problem in enumerate(problems):
        shared.start(k)
        threads.append(threading.Thread(target=solve, args=(k, problem), daemon=True))
    for thread in threads:
        thread.start()
    shared.serve()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def _median_abs(x) -> float:
    return float(np.median(np.abs(x)))


def fitted_errors(runs: Sequence[PublishedRun], x: np.ndarray) -> np.ndarray:
    """rel_error of every run at the efficiencies x."""
    return predicted_times(runs, np.asarray(x)[None, :])[:, 0] / np.array([r.measured_time_s for r in runs]) - 1.0


def leave_one_out(runs: Sequence[PublishedRun], full_fit: np.ndarray, free: Sequence[bool]) -> np.ndarray:
    """rel_error of each run predicted with the efficiencies fitted to the others (all refits at once)."""
    return _leave_one_out_errors(runs, {tuple(free): full_fit})[tuple(free)]


def _leave_one_out_errors(runs: Sequence[PublishedRun], fits: Mapping[tuple, np.ndarray]) -> dict[tuple, np.ndarray]:
    """For each (free, full fit): the leave-one-out rel_error of every run; every refit of every variant at once,
    then every run at every refit in one `predicted_times`."""
    problems = [([r for j, r in enumerate(runs) if j != i], x, free) for free, x in fits.items()
                for i in range(len(runs))]
    xs = np.array(fit_together(problems, runs))
    t = predicted_times(runs, xs)
    measured = np.array([r.measured_time_s for r in runs])
    n = len(runs)
    return {free: t[np.arange(n), k * n + np.arange(n)] / measured - 1.0 for k, free in enumerate(fits)}


def _layout(run: PublishedRun) -> dict:
    sc = run.scenario
    if run.kind == "training":
        return {"tp": sc.tp, "pp": sc.pp, "cp": sc.cp, "dp": sc.dp, "virtual_stages": sc.virtual_stages,
                "zero": sc.zero, "recompute": sc.recompute, "micro_batch": sc.micro_batch,
                "global_batch": sc.global_batch, "seq_len": sc.seq_len}
    return {"tp": sc.gpus, "batch": sc.batch, "prompt_len": sc.prompt_len, "gen_len": sc.gen_len,
            "weight_dtype": sc.weight_dtype, "kv_dtype": sc.kv_dtype}


def run_rows(set_name: str = "default", samples: int = 256, runs: Sequence[PublishedRun] | None = None) -> list[dict]:
    """Predicted against measured for every run, with the p05-p95 band of the set's assumption ranges."""
    runs = published_runs() if runs is None else runs
    eff = efficiency_of(set_name)
    ranges = assumptions(set_name)
    rows = []
    for run in runs:
        sc = run.scenario.replace(efficiency=eff)
        u = propagate(sc, samples=samples, set_name=set_name, sensitivity=False, ranges=ranges)
        band = u.bands[QUANTITY_OUTPUT[run.quantity][1]]
        measured = run.measured_time_s
        rows.append({"name": run.name, "kind": run.kind, "quantity": run.quantity, "source": run.source,
                     "where": run.where, "hardware": sc.hardware.key, "model": sc.model.name, "gpus": sc.gpus,
                     "layout": _layout(run),
                     "measured_as_published": {"metric": run.metric, "value": run.measured,
                                               "flop_count": run.flop_count if run.metric == "flops_per_gpu"
                                               else None},
                     "measured": measured, "predicted": band.point, "p05": band.p05, "p95": band.p95,
                     "rel_error": band.point / measured - 1.0, "in_band": bool(band.p05 <= measured <= band.p95),
                     "assumed": run.assumed})
    return rows


def _fit_reports(runs, x0, variants: Mapping[str, Sequence[bool]]) -> dict[str, dict]:
    """Each variant's full fit, then every leave-one-out refit of every variant, each stage in one batch."""
    frees = {label: tuple(free) for label, free in variants.items()}
    full = dict(zip(frees, fit_together([(runs, x0, free) for free in frees.values()], runs), strict=True))
    loos = _leave_one_out_errors(runs, {frees[label]: x for label, x in full.items()})
    kinds = np.array([r.kind for r in runs])
    reports = {}
    for label, free in frees.items():
        x, loo = full[label], loos[free]
        fitted = fitted_errors(runs, x)
        reports[label] = {
            "x": x, "loo": loo, "free": free,
            "efficiencies": {n: float(v) for n, v in zip(EFFICIENCIES, x, strict=True)},
            "fitted": [n for n, f in zip(EFFICIENCIES, free, strict=True) if f],
            "in_sample_median_abs_rel_error": _median_abs(fitted),
            "leave_one_out_median_abs_rel_error": _median_abs(loo),
            "leave_one_out_median_abs_rel_error_by_kind": {k: _median_abs(loo[kinds == k]) for k in KINDS
                                                            if np.any(kinds == k)},
            "leave_one_out_rel_error": {r.name: float(e) for r, e in zip(runs, loo, strict=True)}}
    return reports


def validate(set_name: str = "default", samples: int = 256, fit: bool = False) -> dict:
    """The validation report: runs, median and worst error (all, and by kind), the leave-one-out error of the two
    fits, and with `fit` the calibrated set (the fit of lower leave-one-out error) written for
    `--efficiency calibrated`."""
    runs = published_runs()
    rows = run_rows(set_name, samples, runs)
    errors = np.array([r["rel_error"] for r in rows])
    kinds = np.array([r["kind"] for r in rows])
    worst = int(np.argmax(np.abs(errors)))
    eff = efficiency_of(set_name)
    x0 = [getattr(eff, EFFICIENCY_FIELD[n]) for n in EFFICIENCIES]
    fits = _fit_reports(runs, x0, FITS)
    best = min(fits, key=lambda k: fits[k]["leave_one_out_median_abs_rel_error"])
    chosen = fits[best]
    report = {"set": set_name, "samples_per_run": samples, "runs": rows,
              "median_abs_rel_error": _median_abs(errors), "worst_abs_rel_error": float(abs(errors[worst])),
              "worst_run": rows[worst]["name"], "runs_in_band": int(sum(r["in_band"] for r in rows)),
              "median_abs_rel_error_by_kind": {k: _median_abs(errors[kinds == k]) for k in KINDS
                                               if np.any(kinds == k)},
              "leave_one_out_median_abs_rel_error": chosen["leave_one_out_median_abs_rel_error"],
              "leave_one_out_fit": best,
              "fits": {label: {k: v for k, v in f.items() if k not in ("x", "loo", "free")}
                       for label, f in fits.items()}}
    if fit:
        ranges = calibrated_ranges(chosen["x"], chosen["loo"], set_name, hbm_fitted=chosen["free"][2])
        note = (f"{' and '.join(chosen['fitted'])} fitted to {len(runs)} published runs: in-sample median |error| "
                f"{chosen['in_sample_median_abs_rel_error']:.3f}, leave-one-out "
                f"{chosen['leave_one_out_median_abs_rel_error']:.3f} ({set_name} set: {_median_abs(errors):.3f})")
        path = write_calibrated(ranges, note)
        report["fit"] = {**chosen["efficiencies"], "fitted": chosen["fitted"], "variant": best,
                         **{k: chosen[k] for k in ("in_sample_median_abs_rel_error",
                                                   "leave_one_out_median_abs_rel_error",
                                                   "leave_one_out_median_abs_rel_error_by_kind",
                                                   "leave_one_out_rel_error")},
                         "ranges": {n: {"low": lo, "likely": m, "high": hi} for n, (lo, m, hi) in ranges.items()},
                         "written_to": str(path)}
    return report


def _scaled(base, value: float) -> tuple[float, float, float]:
    """An assumption's range moved to `value` (low and high scaled by value / likely), clipped to [0.01, 1]."""
    k = value / base.likely
    low, high = max(0.01, min(value, base.low * k)), min(1.0, max(value, base.high * k))
    if high - low < 1e-3:
        low, high = max(0.01, value * 0.9), min(1.0, value * 1.1)
    return float(low), float(value), float(high)


def calibrated_ranges(x: np.ndarray, loo: np.ndarray, set_name: str = "default",
                      hbm_fitted: bool = False) -> dict[str, tuple]:
    """{name: (low, likely, high)} of the three efficiencies after a fit (see the module docstring); x in the
    order of EFFICIENCIES."""
    base = assumptions(set_name)
    c, n, h = (float(v) for v in x)
    q05, q95 = np.quantile(np.log1p(loo), (0.05, 0.95))
    c_low, c_high = max(0.01, min(c, c * np.exp(q05))), min(1.0, max(c, c * np.exp(q95)))
    if c_high - c_low < 1e-3:
        c_low, c_high = max(0.01, c * 0.9), min(1.0, c * 1.1)
    hb = base["hbm_efficiency"]
    return {"compute_efficiency": (float(c_low), c, float(c_high)),
            "hbm_efficiency": _scaled(hb, h) if hbm_fitted else (hb.low, hb.likely, hb.high),
            "network_efficiency": _scaled(base["network_efficiency"], n)}
