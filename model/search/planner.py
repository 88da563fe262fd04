"""Training planner: every parallel layout of one training job, searched as chunked open-grid `evaluate_grid` calls.

For a model, hardware, GPU count (or several), global batch and sequence length, the search space is the outer
product of TP, PP, CP, EP, ZeRO stage, recomputation, micro-batch, virtual stages and optimizer offload
(`TrainSpace`); DP is what the GPUs leave, gpus / (TP·PP·CP). The space is cut into chunks of at most
`chunk_size` configurations along its leading axes; each chunk is one broadcast ("open grid") call of the
core's `evaluate_grid`, so memory stays bounded by the chunk, not the space. Per chunk the search keeps only
reductions: counts, the first failing layout rule of each invalid configuration (the field a `ValidationError`
would name), the largest memory component of each configuration that does not fit, the chunk's best
configurations, its Pareto front of step time against memory per GPU and, optionally, a 2-D map (the best
step time over every other axis for each pair of values of two chosen axes).

The reported layouts are re-evaluated with the scalar `evaluate`, so their numbers are exactly what
`calc train` prints for the same options.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.base.ranges import SCENARIO_LIMITS, check_limit
from trinity_desktop.model.inputs.architecture import Architecture
from trinity_desktop.model.inputs.layout_rules import model_parallel_rules
from trinity_desktop.model.inputs.scenario import OFFLOAD_MODES, RECOMPUTE, Scenario
from trinity_desktop.model.search.hooks import NO_HOOKS, SearchHooks
from trinity_desktop.model.step.evaluation import Results, evaluate, evaluate_grid
from trinity_desktop.model.step.layout import training_layout_rules

AXES = ("tp", "pp", "cp", "ep", "zero", "recompute", "micro_batch", "virtual_stages", "offload")
OBJECTIVES = ("time", "tokens-per-gpu")
MEMORY_PARTS = ("weights", "gradients", "optimizer", "activations")
RULE_TEXT = {  # the layout rules of Scenario._check_training_layout, in words
    "tp": "TP does not divide the attention heads", "pp": "PP exceeds the layers",
    "cp": "CP does not divide the sequence length", "gpus": "TP × PP × CP does not divide the GPUs",
    "ep": "EP does not divide DP and the experts", "global_batch": "micro-batch x DP does not divide the global batch",
    "virtual_stages": "virtual stages: PP < 2, PP x v does not divide the layers, or micro-batches not a multiple "
                      "of PP"}
CHUNK_SIZE = 1 << 17


def divisors(n: int, upper: int | None = None) -> tuple[int, ...]:
    """The divisors of n (at most `upper`), ascending."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    out = sorted(set(small + [n // d for d in small]))
    return tuple(d for d in out if upper is None or d <= upper)


@dataclass(frozen=True)
class TrainSpace:
    """The values searched on each axis (offload as codes of scenario.OFFLOAD_MODES, recompute as codes of
    scenario.RECOMPUTE)."""

    tp: tuple[int, ...]
    pp: tuple[int, ...]
    cp: tuple[int, ...]
    ep: tuple[int, ...]
    zero: tuple[int, ...] = (0, 1, 2, 3)
    recompute: tuple[int, ...] = (0, 1, 2)
    micro_batch: tuple[int, ...] = (1,)
    virtual_stages: tuple[int, ...] = (1,)
    offload: tuple[int, ...] = (0, 1)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(len(getattr(self, a)) for a in AXES)

    @property
    def size(self) -> int:
        return math.prod(self.shape)


def training_space(model: Architecture, gpus: int | Sequence[int], global_batch: int, seq_len: int,
                   max_micro_batch: int = 64) -> TrainSpace:
    """Every value of each axis that can be part of a valid layout on its own: TP divides the heads and a GPU
    count, PP divides a GPU count and is at most the layers, CP divides a GPU count and the sequence, EP
    divides the experts and a GPU count, the micro-batch divides the global batch (up to `max_micro_batch`),
    v is 1 or a divisor >= 2 of L / PP or (L + 2) / PP for some PP >= 2 (scenario rules)."""
    counts = _checked_counts(gpus, global_batch, seq_len)
    check_limit("max_micro_batch", max_micro_batch, SCENARIO_LIMITS["micro_batch"])
    gpu_divs = sorted({d for g in counts for d in divisors(g)})
    tp = tuple(d for d in gpu_divs if model.heads % d == 0)
    pp = tuple(d for d in gpu_divs if d <= model.layers)
    cp = tuple(d for d in gpu_divs if seq_len % d == 0)
    ep = tuple(d for d in gpu_divs if model.experts % d == 0)
    mb = divisors(global_batch, max_micro_batch)
    vs = {1} | {v for p in pp if p >= 2 for n in (model.layers, model.layers + 2) if n % p == 0
                for v in divisors(n // p) if v >= 2}
    return TrainSpace(tp=tp, pp=pp, cp=cp, ep=ep, micro_batch=mb, virtual_stages=tuple(sorted(vs)))


MAX_GPU_COUNTS = 8  # GPU counts searched in one plan: each is a search of its own


def _checked_counts(gpus: int | Sequence[int], global_batch: int, seq_len: int) -> list[int]:
    """The GPU counts as a list, after every axis the search enumerates the divisors of is checked against its
    scenario range (SCENARIO_LIMITS): a global batch of 10^18 would take a minute of divisor search before the
    Scenario refused it."""
    counts = [gpus] if isinstance(gpus, (int, np.integer)) else list(gpus)
    if not 1 <= len(counts) <= MAX_GPU_COUNTS:
        raise ValidationError("gpu_counts", len(counts), f"1 to {MAX_GPU_COUNTS} GPU counts in one plan")
    for g in counts:
        check_limit("gpus", g, SCENARIO_LIMITS["gpus"])
    check_limit("global_batch", global_batch, SCENARIO_LIMITS["global_batch"])
    check_limit("seq_len", seq_len, SCENARIO_LIMITS["seq_len"])
    return [int(g) for g in counts]


@dataclass(frozen=True)
class Candidate:
    """One fitting layout with the scalar model's numbers for it."""

    layout: Mapping[str, object]
    scenario: Scenario
    results: Results

    @property
    def time_per_step_s(self) -> float:
        return self.results.time_total

    @property
    def memory_per_gpu_bytes(self) -> float:
        return self.results.memory_total

    def as_json(self) -> dict:
        r = self.results
        return {"layout": dict(self.layout), "gpus": self.scenario.gpus, "time_per_step_s": r.time_total,
                "memory_per_gpu_bytes": r.memory_total, "mfu": r.train["mfu"],
                "tokens_per_s_per_gpu": r.train["tokens_per_s"] / self.scenario.gpus,
                "gpu_hours_per_trillion_tokens": 1e12 * self.scenario.gpus / r.train["tokens_per_s"] / 3600.0,
                "communication_hidden_s": r.train["communication_overlapped"],
                "communication_exposed_s": r.time["communication_exposed"], "bottleneck": r.bottleneck}


@dataclass(frozen=True)
class TrainPlan:
    configurations_evaluated: int
    feasible: int
    invalid: int
    not_fitting: int
    invalid_reasons: Mapping[str, int]
    not_fitting_reasons: Mapping[str, int]
    search_seconds: float
    objective: str
    best: Candidate | None
    top: tuple[Candidate, ...]
    pareto: tuple[Candidate, ...]
    map_axes: tuple[str, str] | None = None
    map_values: tuple[tuple, tuple] | None = None
    map_time: np.ndarray | None = None      # best step time per cell (inf where nothing fits)
    map_valid: np.ndarray | None = None     # some valid layout exists in the cell
    cancelled: bool = False
    space: TrainSpace | None = None
    notes: tuple[str, ...] = field(default=())

    @staticmethod
    def _most_common(counts: Mapping[str, int]) -> str | None:
        return max(counts, key=counts.get) if counts else None

    def as_json(self) -> dict:
        reason = self._most_common(self.invalid_reasons)
        part = self._most_common(self.not_fitting_reasons)
        return {"configurations_evaluated": self.configurations_evaluated, "feasible": self.feasible,
                "invalid": self.invalid, "not_fitting": self.not_fitting,
                "most_common_invalid_reason": RULE_TEXT[reason] if reason else None,
                "invalid_reasons": {RULE_TEXT[k]: v for k, v in self.invalid_reasons.items()},
                "most_common_not_fitting_reason": f"{part} is the largest part of the memory" if part else None,
                "not_fitting_largest_part": dict(self.not_fitting_reasons),
                "search_seconds": self.search_seconds, "objective": self.objective,
                "best": self.best.as_json() if self.best else None,
                "top": [c.as_json() for c in self.top], "pareto": [c.as_json() for c in self.pareto]}


class _Cancelled(Exception):
    pass


MODEL_PARALLEL = ("tp", "pp", "cp")          # flattened into one axis of (tp, pp, cp) triples
INNER = tuple(a for a in AXES if a not in MODEL_PARALLEL)


def _triples(model: Architecture, space: TrainSpace, gpus: int, seq_len: int):
    """All (tp, pp, cp) of the space as flat arrays, and the first rule each one breaks ("" when none):
    the rules that depend on TP, PP, CP alone, in the scenario's order."""
    tp, pp, cp = (a.reshape(-1) for a in np.meshgrid(space.tp, space.pp, space.cp, indexing="ij"))
    checks = model_parallel_rules(model.layers, model.heads, gpus=gpus, tp=tp, pp=pp, cp=cp, seq_len=seq_len)
    first = np.full(tp.size, "", dtype=object)
    for name, ok in checks:
        first[(first == "") & ~ok] = name
    return tp, pp, cp, first


def _layout(values: Mapping[str, int], gpus: int) -> dict:
    tp, pp, cp = values["tp"], values["pp"], values["cp"]
    return {"tp": tp, "pp": pp, "dp": gpus // (tp * pp * cp), "cp": cp, "ep": values["ep"], "zero": values["zero"],
            "recompute": RECOMPUTE[values["recompute"]], "micro_batch": values["micro_batch"],
            "virtual_stages": values["virtual_stages"], "offload": OFFLOAD_MODES[values["offload"]]}


def scenario_for(base: Scenario, layout: Mapping) -> Scenario:
    """The scenario of one planner layout (the `calc train` options of the same names)."""
    changes = {k: layout[k] for k in ("tp", "pp", "cp", "ep", "zero", "recompute", "micro_batch",
                                      "virtual_stages", "offload")}
    return base.replace(kind="train", **changes)


def _pareto_mask(t: np.ndarray, mem: np.ndarray) -> np.ndarray:
    """Points no other point beats in both step time and memory (ties kept once: the first in time order)."""
    order = np.lexsort((mem, t))
    best_mem = np.minimum.accumulate(mem[order])
    keep = np.ones(order.size, dtype=bool)
    keep[1:] = mem[order][1:] < best_mem[:-1]
    mask = np.zeros(t.size, dtype=bool)
    mask[order[keep]] = True
    return mask


def _base_scenario(model: Architecture, hardware, gpus: int, global_batch: int, seq_len: int,
                   space: TrainSpace, **fixed) -> Scenario | None:
    """A valid training scenario with these inputs (evaluate_grid's base), or None when no layout is valid."""
    for tp in space.tp:
        for pp in space.pp:
            for cp in space.cp:
                for mb in space.micro_batch:
                    try:
                        return Scenario(hardware=hardware, model=model, kind="train", gpus=gpus, tp=tp, pp=pp,
                                        cp=cp, micro_batch=mb, global_batch=global_batch, seq_len=seq_len, **fixed)
                    except ValidationError:
                        continue
    return None


class _Search:
    """The running reductions of one search (counts, reasons, best, Pareto front, map)."""

    def __init__(self, space: TrainSpace, objective: str, top: int, map_axes):
        self.space, self.objective, self.top, self.map_axes = space, objective, top, map_axes
        self.totals, self.invalid_reasons, self.not_fitting_reasons = Counter(), Counter(), Counter()
        self.kept: list[tuple[float, float, int, dict]] = []   # (objective key, memory, gpus, axis values)
        self.front: list[tuple[float, float, int, dict]] = []
        self.map_t = self.map_v = None
        if map_axes:
            self.map_t = np.full((len(getattr(space, map_axes[0])), len(getattr(space, map_axes[1]))), np.inf)
            self.map_v = np.zeros(self.map_t.shape, dtype=bool)
        self.inner_shape = tuple(len(getattr(space, a)) for a in INNER)

    def invalid_triples(self, first: np.ndarray) -> None:
        """Count every configuration of the triples that break a TP/PP/CP rule, without evaluating them."""
        per_triple = math.prod(self.inner_shape)
        for name in ("tp", "pp", "cp", "gpus"):
            n = int(np.count_nonzero(first == name)) * per_triple
            if n:
                self.invalid_reasons[name] += n
                self.totals["invalid"] += n
                self.totals["evaluated"] += n

    def chunk(self, model, base, gpus, global_batch, seq_len, tp, pp, cp) -> None:
        """Evaluate the valid triples (tp, pp, cp) x every inner axis as one open-grid `evaluate_grid` call."""
        n_in = len(INNER)
        axes = {"tp": tp.reshape(-1, *[1] * n_in), "pp": pp.reshape(-1, *[1] * n_in),
                "cp": cp.reshape(-1, *[1] * n_in)}
        for i, name in enumerate(INNER):
            shape = [1] * (n_in + 1)
            shape[i + 1] = self.inner_shape[i]
            axes[name] = np.asarray(getattr(self.space, name), dtype=np.int64).reshape(shape)
        shape = (tp.size, *self.inner_shape)
        n = math.prod(shape)
        self.totals["evaluated"] += n
        ok = np.ones(shape, dtype=bool)  # the first failing rule of each invalid configuration, in order
        rules = training_layout_rules(model, gpus=gpus, global_batch=global_batch, seq_len=seq_len,
                                      **{k: axes[k] for k in ("tp", "pp", "cp", "ep", "micro_batch", "virtual_stages")})
        for name, rule in rules:
            failing = ok & ~rule
            count = int(np.count_nonzero(failing))
            if count:
                self.invalid_reasons[name] += count
            ok &= rule
        n_valid = int(np.count_nonzero(ok))
        self.totals["invalid"] += n - n_valid
        if n_valid == 0 or base is None:
            return
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = evaluate_grid(base, **axes)
        mem = np.broadcast_to(out.memory_total, shape)
        t = np.broadcast_to(out.time_total, shape)
        fits = ok & (mem <= base.hardware.hbm_bytes) & np.isfinite(t)
        n_fit = int(np.count_nonzero(fits))
        self.totals["feasible"] += n_fit
        self.totals["not_fitting"] += n_valid - n_fit
        if n_valid > n_fit:
            over = ok & ~fits
            parts = np.stack([np.broadcast_to(out.memory[p], shape)[over] for p in MEMORY_PARTS])
            for i, c in enumerate(np.bincount(np.argmax(parts, axis=0), minlength=len(MEMORY_PARTS))):
                if c:
                    self.not_fitting_reasons[MEMORY_PARTS[i]] += int(c)
        if self.map_axes is not None:
            self._fold_map(np.where(fits, t, np.inf), ok, {"tp": tp, "pp": pp, "cp": cp})
        if n_fit == 0:
            return
        flat = np.flatnonzero(fits)
        tf, mf = t.reshape(-1)[flat], mem.reshape(-1)[flat]
        if self.objective == "time":
            key = tf
        else:
            key = -np.broadcast_to(out.tokens_per_s, shape).reshape(-1)[flat] / gpus
        order = np.lexsort((mf, key))[:self.top]
        on_front = np.flatnonzero(_pareto_mask(tf, mf))
        for picks, keys, dest in ((order, key, self.kept), (on_front, tf, self.front)):
            coords = np.unravel_index(flat[picks], shape)
            for j, pick in enumerate(picks):
                values = {"tp": int(tp[coords[0][j]]), "pp": int(pp[coords[0][j]]), "cp": int(cp[coords[0][j]])}
                for i, name in enumerate(INNER):
                    values[name] = int(getattr(self.space, name)[coords[i + 1][j]])
                dest.append((float(keys[pick]), float(mf[pick]), gpus, values))
        self.kept.sort(key=lambda x: x[:2])
        del self.kept[self.top:]
        if len(self.front) > 4096:  # keep the running front small
            mask = _pareto_mask(np.array([f[0] for f in self.front]), np.array([f[1] for f in self.front]))
            self.front[:] = [f for f, k in zip(self.front, mask, strict=True) if k]

    def _fold_map(self, t: np.ndarray, ok: np.ndarray, triple: Mapping[str, np.ndarray]) -> None:
        """The best step time over every other axis for each pair of values of the two map axes."""
        keep = [0] if any(a in MODEL_PARALLEL for a in self.map_axes) else []
        keep += [INNER.index(a) + 1 for a in self.map_axes if a in INNER]
        keep = sorted(set(keep))
        drop = tuple(i for i in range(t.ndim) if i not in keep)
        best, anyok = np.min(t, axis=drop), np.any(ok, axis=drop)
        grids = np.meshgrid(*[np.arange(t.shape[i]) for i in keep], indexing="ij")
        index = []
        for a in self.map_axes:
            values = np.asarray(getattr(self.space, a))
            if a in MODEL_PARALLEL:
                per_triple = np.searchsorted(values, triple[a])
                index.append(per_triple[grids[keep.index(0)]])
            else:
                index.append(grids[keep.index(INNER.index(a) + 1)])
        np.minimum.at(self.map_t, tuple(index), best)
        np.logical_or.at(self.map_v, tuple(index), anyok)


def plan_training(model: Architecture, hardware, gpus: int | Sequence[int], global_batch: int, seq_len: int, *,
                  objective: str = "time", top: int = 5, space: TrainSpace | None = None,
                  map_axes: tuple[str, str] | None = None, chunk_size: int = CHUNK_SIZE,
                  hooks: SearchHooks = NO_HOOKS, **fixed) -> TrainPlan:
    """Search every layout of `space` (default `training_space`) for each GPU count; `fixed` holds the other
    Scenario fields (precision, optimizer, gpus_per_node, sequence_parallel, flash_attention, efficiency ...).
    `objective` "time" ranks by step time, "tokens-per-gpu" by tokens/s per GPU (the same order for one GPU
    count). The (tp, pp, cp) triples that break a rule of their own are counted, not evaluated; the others go
    to `evaluate_grid` in chunks of about `chunk_size` configurations. `hooks.progress(fraction)` is called after
    each chunk; `hooks.cancelled()` returning True stops the search and returns what was found so far
    (`cancelled=True`)."""
    if objective not in OBJECTIVES:
        raise ValidationError("objective", objective, "one of " + ", ".join(OBJECTIVES))
    if map_axes is not None and (len(map_axes) != 2 or map_axes[0] == map_axes[1]
                                 or not set(map_axes) <= set(AXES)):
        raise ValidationError("map_axes", map_axes, "two different axes of " + ", ".join(AXES))
    counts = _checked_counts(gpus, global_batch, seq_len)
    space = space or training_space(model, counts, global_batch, seq_len)
    t_start = time.perf_counter()
    search = _Search(space, objective, top, map_axes)
    per_chunk = max(1, chunk_size // math.prod(search.inner_shape))
    work = []
    for g in counts:
        tp, pp, cp, first = _triples(model, space, g, seq_len)
        search.invalid_triples(first)
        good = first == ""
        work += [(g, tp[good][i:i + per_chunk], pp[good][i:i + per_chunk], cp[good][i:i + per_chunk])
                 for i in range(0, int(np.count_nonzero(good)), per_chunk)]
    bases = {g: _base_scenario(model, hardware, g, global_batch, seq_len, space, **fixed) for g in counts}
    stopped = False
    for done, (g, tp, pp, cp) in enumerate(work, start=1):
        if hooks.stopped():
            stopped = True
            break
        search.chunk(model, bases[g], g, global_batch, seq_len, tp, pp, cp)
        hooks.report(done / len(work))
    elapsed = time.perf_counter() - t_start
    top_c = tuple(_candidate(bases[g], values, g) for _k, _m, g, values in search.kept[:top])
    front = search.front
    on_front = _pareto_mask(np.array([f[0] for f in front]), np.array([f[1] for f in front])) if front else []
    pareto = tuple(sorted((_candidate(bases[g], values, g) for (_k, _m, g, values), keep
                           in zip(front, on_front, strict=True) if keep), key=lambda c: c.time_per_step_s))
    totals = search.totals
    return TrainPlan(configurations_evaluated=totals["evaluated"], feasible=totals["feasible"],
                     invalid=totals["invalid"], not_fitting=totals["not_fitting"],
                     invalid_reasons=dict(search.invalid_reasons), not_fitting_reasons=dict(search.not_fitting_reasons),
                     search_seconds=elapsed, objective=objective, best=top_c[0] if top_c else None, top=top_c,
                     pareto=pareto, map_axes=tuple(map_axes) if map_axes else None,
                     map_values=(getattr(space, map_axes[0]), getattr(space, map_axes[1])) if map_axes else None,
                     map_time=search.map_t, map_valid=search.map_v, cancelled=stopped, space=space)


def _candidate(base: Scenario, values: Mapping[str, int], gpus: int) -> Candidate:
    layout = _layout(values, gpus)
    sc = scenario_for(base, layout)
    return Candidate(layout=layout, scenario=sc, results=evaluate(sc))
