"""Uncertainty bands and "what matters most": the assumption ranges pushed through the model in one call.

Method (Saltelli et al. 2010, "Variance based sensitivity analysis of model output"; scipy.stats.qmc):
  1. Draw N scrambled Sobol points in [0, 1)^(2d) (scipy.stats.qmc.Sobol's points, drawn in numpy by
     model/search/sobol.py so that bands need not import scipy.stats) for the d assumptions that apply to
     the workload; the first d columns are matrix A, the last d matrix B.
  2. Map each column to its assumption through the inverse CDF of the triangular distribution (low, likely,
     high): x = a + sqrt(u (b - a)(m - a)) for u < (m - a)/(b - a), else b - sqrt((1 - u)(b - a)(b - m)).
     Latency assumptions are factors on the preset's alpha.
  3. Stack A, B and the d matrices AB_i (A with column i from B), plus one row at the likely values, and
     evaluate them all in ONE `evaluate_grid` call: N(d + 2) + 1 scenarios through the same vectorised formulas.
  4. Bands: the 5th, 50th and 95th percentiles over the 2N rows of A and B. Sensitivity: first-order and total
     Sobol indices of the headline output (step time; time per output token) from f(A), f(B), f(AB_i) with
     scipy.stats.sobol_indices (Saltelli 2010 first-order, Jansen total-order estimators).

scipy.stats is imported here, lazily, only for the Sobol indices (`sensitivity`); scipy.optimize only in
model/search/validation_fit.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from trinity_desktop.model.base.dtypes import compute_dtype_for_weights
from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.inputs.assumptions import EFFICIENCY_FIELD, Assumption, assumptions
from trinity_desktop.model.inputs.scenario import Efficiency, Scenario
from trinity_desktop.model.search.sobol import sobol_points
from trinity_desktop.model.step.evaluation import INFER_AXES, TRAIN_AXES, evaluate_grid
from trinity_desktop.model.step.grid_results import InferGrid, TrainGrid
from trinity_desktop.model.step.layout import infer_inputs, train_inputs

DEFAULT_SAMPLES = 4096
FRONT_SAMPLES = 256  # per point of a planner front (time_bands): its p05/p95 within a few % of 4,096 samples'
QUANTILES = (0.05, 0.5, 0.95)
TRAIN_OUTPUTS = ("time_per_step_s", "mfu", "tokens_per_s")
INFER_OUTPUTS = ("time_per_output_token_s", "ttft_s", "tokens_per_s", "mfu")
LATENCY_FIELD = {"scaleup_latency_scale": "scaleup_latency_s", "scaleout_latency_scale": "scaleout_latency_s"}


@dataclass(frozen=True)
class Band:
    """Percentiles of one output over the sampled assumptions, and the point estimate (all assumptions likely)."""

    p05: float
    p50: float
    p95: float
    point: float

    def as_dict(self) -> dict[str, float]:
        return {"p05": self.p05, "p50": self.p50, "p95": self.p95}


@dataclass(frozen=True)
class Uncertainty:
    samples: int
    evaluations: int
    set_name: str
    headline: str
    bands: Mapping[str, Band]
    sensitivity: Mapping[str, tuple[float, float]]  # assumption -> (first-order, total) index of the headline
    labels: Mapping[str, str]


def workload_of(scenario: Scenario) -> str:
    return "train" if scenario.kind == "train" else "infer"


def applicable(scenario: Scenario, ranges: Mapping[str, Assumption]) -> list[Assumption]:
    """The assumptions that change this workload's time: the efficiencies, the alphas of links that exist, and
    the gradient overlap for training (the runtime reserve changes memory only, not time)."""
    hw, kind = scenario.hardware, workload_of(scenario)
    out = []
    for a in ranges.values():
        if kind not in a.applies_to or a.name == "runtime_reserve_fraction":
            continue
        if a.name in LATENCY_FIELD and not (getattr(hw, LATENCY_FIELD[a.name]) > 0 and scenario.gpus > 1):
            continue
        out.append(a)
    return out


def triangular_ppf(u, low: float, likely: float, high: float):
    """Inverse CDF of the triangular distribution (low, likely, high) at u in [0, 1] (vectorised)."""
    u = np.asarray(u, dtype=float)
    width = high - low
    cut = (likely - low) / width
    left = low + np.sqrt(u * width * (likely - low))
    right = high - np.sqrt((1.0 - u) * width * (high - likely))
    return np.where(u < cut, left, right)


def _centred(a: Assumption, scenario: Scenario) -> tuple[float, float, float]:
    """The range of `a`, moved so that its likely value is the scenario's own efficiency (when it has one that
    differs): low and high scale by the same factor, clipped to (0.01, 1]. Keeps the point estimate inside."""
    if a.name not in EFFICIENCY_FIELD:
        return a.low, a.likely, a.high
    value = float(getattr(scenario.efficiency, EFFICIENCY_FIELD[a.name]))
    if abs(value - a.likely) < 1e-12:
        return a.low, a.likely, a.high
    k = value / a.likely
    return max(0.01, min(a.low * k, value)), value, max(value, min(1.0, a.high * k))


def sample_axes(scenario: Scenario, active: list[Assumption], u: np.ndarray) -> dict[str, np.ndarray]:
    """evaluate_grid axes from unit-cube rows `u` (shape (rows, d)): one array per assumption."""
    axes = {}
    for j, a in enumerate(active):
        values = triangular_ppf(u[:, j], *_centred(a, scenario))
        if a.name in LATENCY_FIELD:
            field = LATENCY_FIELD[a.name]
            axes[field] = values * getattr(scenario.hardware, field)
        else:
            axes[a.name] = values
    return axes


def _axes_with_likely_row(scenario: Scenario, active: list[Assumption], rows: np.ndarray) -> dict[str, np.ndarray]:
    """`sample_axes` of `rows`, whose last row is then set to exactly the likely values (the point estimate)."""
    axes = sample_axes(scenario, active, rows)
    for a in active:
        axes_name = LATENCY_FIELD.get(a.name, a.name)
        mid = _centred(a, scenario)[1]
        axes[axes_name][-1] = mid * (getattr(scenario.hardware, axes_name) if a.name in LATENCY_FIELD else 1.0)
    return axes


def _check_samples(samples) -> None:
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 16 or samples & (samples - 1):
        raise ValidationError("samples", samples, "a power of two from 16 up (Sobol balance)")


def _outputs(scenario: Scenario, raw: TrainGrid | InferGrid) -> dict[str, np.ndarray]:
    if scenario.kind == "train":
        return {"time_per_step_s": raw.time_total, "mfu": raw.mfu, "tokens_per_s": raw.tokens_per_s}
    peak = scenario.hardware.peak(compute_dtype_for_weights(scenario.weight_dtype, dict(scenario.hardware.peak_flops)))
    tpot = raw.time_per_output_token_s
    return {"time_per_output_token_s": tpot, "ttft_s": raw.prefill_s, "tokens_per_s": raw.tokens_per_s,
            "mfu": raw.decode_flops / (tpot * scenario.gpus * peak), "request_s": raw.request_s}


@lru_cache(maxsize=16)
def sobol_sample(dims: int, samples: int, seed: int) -> np.ndarray:
    """N scrambled Sobol points in [0, 1)^dims (scipy.stats.qmc.Sobol's, model/search/sobol.py), drawn once per
    (dims, N, seed) and shared (read-only) by every scenario that asks: `validate` bands every run over a few."""
    u = sobol_points(dims, samples, seed)
    u.setflags(write=False)
    return u


def propagate(scenario: Scenario, samples: int = DEFAULT_SAMPLES, set_name: str = "default", seed: int = 0,
              sensitivity: bool = True, ranges: Mapping[str, Assumption] | None = None) -> Uncertainty:
    """Bands of the headline outputs and (optionally) Sobol indices of the headline, in one evaluate_grid call."""
    _check_samples(samples)
    ranges = assumptions(set_name) if ranges is None else ranges
    active = applicable(scenario, ranges)
    d = len(active)
    u = sobol_sample(2 * d, samples, seed)
    A, B = u[:, :d], u[:, d:]
    blocks = [A, B]
    if sensitivity:
        for i in range(d):
            ab = A.copy()
            ab[:, i] = B[:, i]
            blocks.append(ab)
    rows = np.vstack(blocks + [np.zeros((1, d))])
    axes = _axes_with_likely_row(scenario, active, rows)
    outputs = _outputs(scenario, evaluate_grid(scenario, **axes))
    n = samples
    bands = {}
    for name, values in outputs.items():
        values = np.asarray(values, dtype=float)
        p05, p50, p95 = np.quantile(values[:2 * n], QUANTILES)
        bands[name] = Band(float(p05), float(p50), float(p95), float(values[-1]))
    headline = TRAIN_OUTPUTS[0] if scenario.kind == "train" else INFER_OUTPUTS[0]
    indices = {}
    if sensitivity and d:
        from scipy.stats import sobol_indices

        f = np.asarray(outputs[headline], dtype=float)
        f_ab = f[2 * n:-1].reshape(d, 1, n)
        res = sobol_indices(func={"f_A": f[None, :n], "f_B": f[None, n:2 * n], "f_AB": f_ab}, n=n)
        first, total = np.atleast_1d(res.first_order), np.atleast_1d(res.total_order)
        indices = {a.name: (float(np.clip(first[i], 0.0, 1.0)), float(np.clip(total[i], 0.0, 1.0)))
                   for i, a in enumerate(active)}
    return Uncertainty(samples=n, evaluations=len(rows), set_name=set_name, headline=headline, bands=bands,
                       sensitivity=indices, labels={a.name: a.label for a in active})


def uncertainty_json(u: Uncertainty) -> dict:
    """The CLI's `uncertainty` key: samples, the bands by output name, and the headline's Sobol indices."""
    return {"samples": u.samples, "evaluations": u.evaluations, "set": u.set_name, "headline": u.headline,
            **{name: b.as_dict() for name, b in u.bands.items()},
            "sensitivity": {name: {"first": f, "total": t} for name, (f, t) in u.sensitivity.items()}}


def dominant(u: Uncertainty) -> str:
    """The assumption with the largest total index (what matters most)."""
    return max(u.sensitivity, key=lambda k: u.sensitivity[k][1])


def efficiency_extremes(scenario: Scenario, set_name: str = "default") -> tuple[Efficiency, Efficiency]:
    """(all efficiencies at their range's low end, all at the high end), centred on the scenario's own values:
    the envelope of any curve that falls with each efficiency (decode time, attainable FLOP/s)."""
    ranges = assumptions(set_name)
    ends = {name: _centred(ranges[name], scenario) for name in EFFICIENCY_FIELD}
    low = Efficiency(**{EFFICIENCY_FIELD[n]: max(0.01, e[0]) for n, e in ends.items()})
    high = Efficiency(**{EFFICIENCY_FIELD[n]: min(1.0, e[2]) for n, e in ends.items()})
    return low, high


def time_bands(scenarios: Sequence[Scenario], samples: int = FRONT_SAMPLES, set_name: str = "default",
               seed: int = 0, ranges: Mapping[str, Assumption] | None = None,
               outputs: Sequence[str] | None = None) -> list[Band]:
    """The headline time's band (step time for training, time per output token for inference; or, given
    `outputs`, the named evaluate_grid output of each scenario) of each scenario, e.g. every point of a planner's
    Pareto front: p05/p50/p95 over the rows A and B of `propagate`'s Sobol sample (no sensitivity rows) and the
    point estimate at the likely values.

    Every scenario sees the same sample (common random numbers: the bars of two layouts compare like for like),
    drawn over the assumptions that apply to any of them; for one scenario this is exactly `propagate`'s sample,
    so the quantiles are its quantiles. Scenarios that differ only in evaluate_grid axes (a training front's
    layouts; a serving front's layouts of one weight format) go through ONE evaluate_grid call: the layouts
    as axes of shape (points, 1) against the samples as axes of shape (1, 2N + 1)."""
    scenarios = list(scenarios)
    if not scenarios:
        return []
    _check_samples(samples)
    kinds = {workload_of(s) for s in scenarios}
    if len(kinds) > 1:
        raise ValidationError("scenarios", "training and inference mixed", "all training or all inference")
    ranges = assumptions(set_name) if ranges is None else ranges
    wanted = {a.name for s in scenarios for a in applicable(s, ranges)}
    active = [a for a in ranges.values() if a.name in wanted]  # `applicable`'s order: one scenario = propagate
    d = len(active)
    u = sobol_sample(2 * d, samples, seed)
    rows = np.vstack([u[:, :d], u[:, d:], np.zeros((1, d))])
    train = kinds == {"train"}
    grid_axes = TRAIN_AXES if train else INFER_AXES
    outputs = list(outputs) if outputs is not None else [
        "time_total" if train else "time_per_output_token_s"] * len(scenarios)
    inputs = [(train_inputs if train else infer_inputs)(s).as_dict() for s in scenarios]
    bands: list[Band | None] = [None] * len(scenarios)
    for members in grid_groups(scenarios, inputs, grid_axes):
        base = scenarios[members[0]]
        layouts = {k: np.array([inputs[i][k] for i in members])[:, None] for k in grid_axes
                   if k in inputs[members[0]] and len({inputs[i][k] for i in members}) > 1}
        sampled = {k: v[None, :] for k, v in _axes_with_likely_row(base, active, rows).items()}
        raw = evaluate_grid(base, **layouts, **sampled)
        t = np.stack([np.broadcast_to(np.asarray(getattr(raw, outputs[i]), dtype=float), (len(members), len(rows)))[j]
                      for j, i in enumerate(members)])
        p05, p50, p95 = np.quantile(t[:, :2 * samples], QUANTILES, axis=1)
        for j, i in enumerate(members):
            bands[i] = Band(float(p05[j]), float(p50[j]), float(p95[j]), float(t[j, -1]))
    return bands


def grid_groups(scenarios: list[Scenario], inputs: list[dict], grid_axes) -> list[list[int]]:
    """Indices of the scenarios grouped so that each group differs only in grid axes (one evaluate_grid call)."""
    groups: list[tuple[tuple, list[int]]] = []
    for i, (s, x) in enumerate(zip(scenarios, inputs, strict=True)):
        key = (s.model, s.hardware, s.kind, {k: v for k, v in x.items() if k not in grid_axes})
        for other, members in groups:
            if other == key:
                members.append(i)
                break
        else:
            groups.append((key, [i]))
    return [members for _, members in groups]
