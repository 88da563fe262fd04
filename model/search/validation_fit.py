"""Fitting the efficiencies to the published runs (model/search/published_runs.py), and predicting runs held out
of a fit.

Fit (`fit_efficiencies`): scipy.optimize.least_squares over the free efficiencies on the residuals
log(predicted / measured), either (compute_efficiency, network_efficiency) with hbm_efficiency kept at the
set's value (a training step spends under 1% of its time on HBM-bound kernels, so training runs cannot identify
it), or all three (the inference runs' decode steps read the weights and the KV cache from HBM, which
identifies hbm_efficiency). Residuals and their Jacobian (forward differences) come from one evaluate_grid call
per group of runs with 1 + (free efficiencies) rows. Held out (`fit_and_hold_out`): refit without each group of
runs (one run: leave-one-out; one hardware family; one source), warm-started from the full fit, and predict the
group. Three global efficiencies are fitted, never a factor per run. The calibrated ranges: likely = the fit;
compute efficiency's low/high = fit x exp(5th/95th percentile of the leave-one-out log residuals) (time ~
1 / compute efficiency on the compute-bound runs); network and (when fitted) HBM efficiency's ranges scaled with
their fit; HBM's kept when not fitted.
scipy.optimize is imported lazily, only here (scipy.stats only for the Sobol indices of model/search/uncertainty.py).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.inputs.assumptions import assumptions
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.search.published_runs import PublishedRun
from trinity_desktop.model.search.uncertainty import grid_groups
from trinity_desktop.model.step.evaluation import INFER_AXES, TRAIN_AXES, evaluate_grid
from trinity_desktop.model.step.layout import infer_inputs, train_inputs

# quantity -> its evaluate_grid output
QUANTITY_OUTPUT = {"step_time_s": "time_total", "request_s": "request_s", "ttft_s": "prefill_s",
                   "time_per_output_token_s": "time_per_output_token_s", "memory_bytes": "memory_total"}
EFFICIENCIES = ("compute_efficiency", "network_efficiency", "hbm_efficiency")
FITS = {"compute+network": (True, True, False), "compute+network+hbm": (True, True, True)}
_STEP = 1e-4


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
    return _predicted(runs, _run_groups(runs), eff)


def _predicted(runs: Sequence[PublishedRun], groups, eff: np.ndarray) -> np.ndarray:
    """`predicted_times` with the groups of `_run_groups(runs)` given (worked out once per batch of fits)."""
    eff = np.atleast_2d(np.asarray(eff, dtype=float))
    out = np.empty((len(runs), len(eff)))
    for members, base, layouts in groups:
        g = evaluate_grid(base, **layouts, **{n: eff[None, :, j] for j, n in enumerate(EFFICIENCIES)})
        for row, i in enumerate(members):
            out[i] = np.broadcast_to(getattr(g, QUANTITY_OUTPUT[runs[i].quantity]), (len(members), len(eff)))[row]
    return out


def fit_efficiencies(runs: Sequence[PublishedRun], x0: Sequence[float], free: Sequence[bool] = (True, True, False),
                     predict=predicted_times, measured: Sequence[float] | None = None):
    """The efficiencies (order of EFFICIENCIES; the `free` ones fitted, the others kept at x0) minimising the sum
    of log(predicted / measured)^2; scipy least_squares. `predict(runs, rows)` is `predicted_times`, or the
    shared evaluator of `fit_together`; `measured`, the runs' measured values when known (a run's
    `measured_value` may evaluate the model)."""
    from scipy.optimize import least_squares

    x0 = np.asarray(x0, dtype=float)
    idx = np.flatnonzero(free)
    measured = np.array([r.measured_value for r in runs] if measured is None else measured, dtype=float)
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


class SharedEvaluator:
    """Many fits at once, each least_squares in its own thread: a fit asking for predictions waits until every
    fit still running has asked, then ONE evaluate_grid call per group of runs answers them all (the rows of every
    fit stacked on the efficiency axes, each distinct row once). Every row's predictions of every run are kept, so
    a row asked again (the predictions at the fits' results, which each fit evaluated last) costs no call. Each fit runs scipy's algorithm unchanged, so its result is the one it would reach
    alone; only the evaluations are batched (`validate`: 14,585 calls became about 700)."""

    def __init__(self, runs: Sequence[PublishedRun]):
        self.runs = list(runs)
        self._index = {id(r): i for i, r in enumerate(self.runs)}
        self._groups = _run_groups(self.runs)
        self.measured = np.array([r.measured_value for r in self.runs])
        self._known: dict[tuple, np.ndarray] = {}  # efficiency triple -> every run's prediction
        self._cond = threading.Condition()  # only `serve` waits on it; each fit waits on its own event
        self._live: set[int] = set()
        self._asked: dict[int, tuple[list[int], np.ndarray, threading.Event]] = {}
        self._answers: dict[int, np.ndarray] = {}

    def predictions(self, rows) -> np.ndarray:
        """Every run (rows of the result) at every efficiency triple of `rows` (columns), from the kept
        predictions, evaluating the triples not yet seen."""
        rows = np.atleast_2d(np.asarray(rows, dtype=float))
        missing = list(dict.fromkeys(tuple(r) for r in rows if tuple(r) not in self._known))
        if missing:
            t = _predicted(self.runs, self._groups, np.array(missing))
            self._known.update({key: t[:, k] for k, key in enumerate(missing)})
        return np.column_stack([self._known[tuple(r)] for r in rows])

    def members(self, runs: Sequence[PublishedRun]) -> list[int]:
        return [self._index[id(r)] for r in runs]

    def predictor(self, fit_id: int):
        def predict(runs, rows):
            members, rows = self.members(runs), np.atleast_2d(rows)
            if all(tuple(r) in self._known for r in rows):
                return self.predictions(rows)[members]
            answered = threading.Event()
            with self._cond:
                self._asked[fit_id] = (members, rows, answered)
                self._cond.notify()
            answered.wait()
            answer = self._answers.pop(fit_id)
            if isinstance(answer, BaseException):
                raise answer
            return answer
        return predict

    def start(self, fit_id: int) -> None:
        with self._cond:
            self._live.add(fit_id)

    def finish(self, fit_id: int) -> None:
        with self._cond:
            self._live.discard(fit_id)
            self._cond.notify()

    def serve(self) -> None:
        """Answer rounds of requests until every fit has finished (run in the calling thread)."""
        while True:
            with self._cond:
                self._cond.wait_for(lambda: not self._live or set(self._asked) >= self._live)
                if not self._live:
                    return
                asked, self._asked = self._asked, {}
            try:
                self.predictions(np.vstack([rows for _members, rows, _event in asked.values()]))
                failed = None
            except Exception as exc:  # noqa: BLE001 - handed to every fit that asked; fit_together re-raises it
                failed = exc
            for fit_id, (members, rows, answered) in asked.items():
                self._answers[fit_id] = failed if failed is not None else self.predictions(rows)[members]
                answered.set()


def fit_together(problems: Sequence[tuple[Sequence[PublishedRun], Sequence[float], Sequence[bool]]],
                 runs: Sequence[PublishedRun], shared: SharedEvaluator | None = None) -> list[np.ndarray]:
    """`fit_efficiencies(*problem)` for every problem (runs drawn from `runs`), all at once (`SharedEvaluator`;
    pass one to share its predictions between batches)."""
    shared = SharedEvaluator(runs) if shared is None else shared
    results: list[np.ndarray | None] = [None] * len(problems)
    errors: list[BaseException] = []

    def solve(k: int, problem) -> None:
        try:
            results[k] = fit_efficiencies(*problem, predict=shared.predictor(k),
                                          measured=shared.measured[shared.members(problem[0])])
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


def median_abs(x) -> float:
    return float(np.median(np.abs(x)))


def fitted_errors(runs: Sequence[PublishedRun], x: np.ndarray) -> np.ndarray:
    """rel_error of every run at the efficiencies x."""
    return predicted_times(runs, np.asarray(x)[None, :])[:, 0] / np.array([r.measured_value for r in runs]) - 1.0


@dataclass(frozen=True)
class HeldOutFits:
    """Each variant's (key: its `free` tuple) full fit, its in-sample rel_errors, and for each partition of the
    runs the rel_error of every run predicted by the fit to the runs outside its group."""
    fits: dict[tuple, np.ndarray]
    in_sample: dict[tuple, np.ndarray]
    held_out: dict[tuple, dict[str, np.ndarray]]


def fit_and_hold_out(runs: Sequence[PublishedRun], x0: Sequence[float], frees: Sequence[tuple],
                     partitions: Mapping[str, Sequence[Sequence[int]]]) -> HeldOutFits:
    """Every variant fitted to all runs (from x0, one batch), then to the runs outside each group of each partition
    (singletons: leave-one-out; warm-started from the variant's full fit, one batch), then every run at every
    fit; one SharedEvaluator for all three, so the last two cost no call of their own."""
    shared = SharedEvaluator(runs)
    fits = dict(zip(frees, fit_together([(runs, x0, free) for free in frees], runs, shared), strict=True))
    cells = [(free, what, list(g)) for free in frees for what, groups in partitions.items() for g in groups]
    problems = [([r for j, r in enumerate(runs) if j not in set(g)], fits[free], free) for free, _, g in cells]
    xs = np.array([*fits.values(), *fit_together(problems, runs, shared)])
    t = shared.predictions(xs)
    measured = shared.measured
    in_sample = {free: t[:, k] / measured - 1.0 for k, free in enumerate(frees)}
    held: dict[tuple, dict[str, np.ndarray]] = {free: {what: np.empty(len(runs)) for what in partitions}
                                                for free in frees}
    for k, (free, what, g) in enumerate(cells, start=len(frees)):
        held[free][what][g] = t[g, k] / measured[g] - 1.0
    return HeldOutFits(fits=fits, in_sample=in_sample, held_out=held)


def groups_by(labels: Sequence[str]) -> list[list[int]]:
    """Indices of equal labels, in order of first appearance (a family or source per run)."""
    out: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        out.setdefault(label, []).append(i)
    return list(out.values())


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
