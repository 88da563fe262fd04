"""The planner's search off the GUI thread, and the texts, edits and label places of its layouts (no widgets)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from PySide6 import QtCore

from trinity_desktop.model.search.hooks import SearchHooks
from trinity_desktop.model.search.layouts import layout_text
from trinity_desktop.model.search.planner import plan_training
from trinity_desktop.model.search.serving_planner import plan_serving

AXIS_LABELS = {"tp": "TP", "pp": "PP", "cp": "CP", "ep": "EP", "zero": "ZeRO stage", "recompute": "Recompute",
               "micro_batch": "Micro-batch", "virtual_stages": "Virtual stages", "offload": "Optimizer offload"}
AXIS_CHOICES = {**AXIS_LABELS, "offload": "Offload (optimizer states to the host)"}   # the map axis boxes: short, whole
VALUE_TEXT = {"recompute": ("none", "selective", "full"), "offload": ("off", "on")}
JOB_FIELDS = ("model", "hardware", "kind", "gpus_per_node", "global_batch", "seq_len", "precision",
              "optimizer", "sequence_parallel", "flash_attention", "efficiency", "prompt_len", "gen_len",
              "kv_policy", "kv_window", "kv_sinks",
              "draft_model", "mtp_depth", "acceptance")  # speculative decoding (#23): γ is searched


def value_text(axis: str, value) -> str:
    """A map axis value as shown: "selective" for recompute 1, "on" for offload 1, else the number."""
    return VALUE_TEXT[axis][int(value)] if axis in VALUE_TEXT else str(value)


def axis_value(axis: str, value) -> str:
    """"TP 8", "Recompute selective": an axis and its value."""
    return f"{AXIS_LABELS[axis]} {value_text(axis, value)}"


def map_best(plan) -> tuple[str, float]:
    """The map's fastest cell: ("PP 16, TP 2", its best step time in s), or ("", 0.0) when nothing fits."""
    t = np.asarray(plan.map_time, float)
    if not np.isfinite(t).any():
        return "", 0.0
    i, j = np.unravel_index(int(np.argmin(np.where(np.isfinite(t), t, np.inf))), t.shape)
    (ax, ay), (xs, ys) = plan.map_axes, plan.map_values
    return f"{axis_value(ax, xs[i])}, {axis_value(ay, ys[j])}", float(t[i, j])


def short_layout(layout: dict) -> str:
    """The parallel degrees of a layout that differ from 1: "TP8 PP4 DP2" (a title's short form)."""
    keys = ("tp", "pp", "dp", "cp", "ep") if "replicas" not in layout else ("tp", "pp", "ep")
    parts = [f"{k.upper()}{layout[k]}" for k in keys if layout.get(k, 1) != 1]
    if "replicas" in layout:
        parts.append(f"batch {layout['batch']}")
    return " ".join(parts) or "one GPU"


def edit_for(layout: dict) -> dict:
    """The Scenario field changes that load a planner layout."""
    if "replicas" in layout:
        # one replica: TP x PP GPUs (inference's TP is gpus / pp)
        dp = layout.get("attention_dp", 1)  # MoE serving (#23): DP-attention groups and EP of the stage
        return {"gpus": layout["tp"] * dp * layout["pp"], "pp": layout["pp"], "batch": layout["batch"],
                "weight_dtype": layout["weight_dtype"],
                "kv_dtype": layout["kv_dtype"], "kv_offload_fraction": layout["kv_offload"],
                "attention_dp": dp, "inference_ep": layout.get("ep", 1), **_speculative_edit(layout)}
    return {k: layout[k] for k in ("tp", "pp", "cp", "ep", "zero", "recompute", "micro_batch", "virtual_stages",
                                   "offload")}


def _speculative_edit(layout: dict) -> dict:
    """Speculative decoding (#23): the γ a serving layout runs (none for plain decode: the draft stays as set)."""
    gamma = layout.get("draft_tokens", 0)
    if not gamma:
        return {}
    return {"mtp_depth": gamma} if layout.get("mtp_depth") else {"draft_tokens": gamma}


def hatch_segments(cells) -> tuple[np.ndarray, np.ndarray]:
    """Three diagonal strokes per (i, j) unit cell, as point arrays for connect='pairs'."""
    xs, ys = [], []
    for i, j in cells:
        for a in (0.25, 0.5, 0.75):
            xs += [i, i + a * 2] if a <= 0.5 else [i + (a - 0.5) * 2, i + 1]
            ys += [j + a * 2, j] if a <= 0.5 else [j + 1, j + (a - 0.5) * 2]
    return np.asarray(xs, float), np.asarray(ys, float)


def training_search(sc, budget: int, axes: tuple[str, str]):
    """The training search of `sc` on `budget` GPUs with map `axes`, as a function of the worker's callbacks."""
    fixed = dict(gpus_per_node=sc.gpus_per_node, precision=sc.precision, optimizer=sc.optimizer,
                 sequence_parallel=sc.sequence_parallel, flash_attention=sc.flash_attention, efficiency=sc.efficiency)

    def fn(**kw):
        return plan_training(sc.model, sc.hardware, budget, sc.global_batch, sc.seq_len, map_axes=axes, **fixed, **kw)
    return fn


def serving_search(sc, budget: int):
    """The serving search of `sc` within `budget` GPUs (γ searched too when the scenario has a draft or MTP,
    #23), as a function of the worker's progress and cancelled callbacks."""
    fixed = dict(gpus_per_node=sc.gpus_per_node, efficiency=sc.efficiency, kv_policy=sc.kv_policy,
                 kv_window=sc.kv_window, kv_sinks=sc.kv_sinks, draft_model=sc.draft_model, mtp_depth=sc.mtp_depth,
                 acceptance=sc.acceptance)

    def fn(**kw):
        return plan_serving(sc.model, sc.hardware, budget, sc.prompt_len, sc.gen_len, **fixed, **kw)
    return fn


class SearchSignals(QtCore.QObject):
    progressed = QtCore.Signal(int, float)
    finished = QtCore.Signal(int, object)
    failed = QtCore.Signal(int, str)


class Search(QtCore.QRunnable):
    def __init__(self, fn, generation: int, signals: SearchSignals, stop: threading.Event):
        super().__init__()
        self.fn, self.generation, self.signals, self.stop = fn, generation, signals, stop

    def run(self):
        try:
            plan = self.fn(hooks=SearchHooks(progress=lambda f: self.signals.progressed.emit(self.generation, f),
                                             cancelled=self.stop.is_set))
        except Exception as exc:  # noqa: BLE001 (reported in the panel, never a crash)
            self.signals.failed.emit(self.generation, str(exc))
        else:
            self.signals.finished.emit(self.generation, plan)


def label_spots(lines: Sequence[np.ndarray], sizes: Sequence[tuple[float, float]],
                shape: tuple[int, int], segments: np.ndarray | None = None) -> list[tuple[float, float] | None]:
    """Where to put each contour's label (anchored at its bottom centre, so it sits above the point): the
    highest of its line's points (`lines[k]`, (n, 2) map coordinates) where a box of `sizes[k]` (width,
    height, map units) lies wholly inside the (nx, ny) map and clear of the boxes placed before; None where
    no point has room (the line stays unlabelled: the colour bar reads it). `segments`: the drawn contours as
    (n, 2) points in connect="pairs" order; each is sampled along its length, so one crossing a label whose
    midpoint lies outside it (a narrow map's wide label) counts too."""
    nx, ny = shape
    placed: list[tuple[float, float, float, float]] = []
    spots: list[tuple[float, float] | None] = []
    every = np.concatenate([np.asarray(p, float).reshape(-1, 2) for p in lines]) if len(lines) else np.zeros((0, 2))
    along = np.zeros((0, 2))
    if segments is not None and len(segments) >= 2:
        pairs = np.asarray(segments, float).reshape(-1, 2, 2)
        t = np.linspace(0.0, 1.0, 9)[None, :, None]
        along = (pairs[:, :1] + (pairs[:, 1:] - pairs[:, :1]) * t).reshape(-1, 2)
    for points, (w, h) in zip(lines, sizes, strict=True):
        spot = None
        for x, y in sorted(np.asarray(points, float).reshape(-1, 2).tolist(), key=lambda p: -p[1]):
            box = (x - w / 2, y, x + w / 2, y + h)
            inside = box[0] >= 0 and box[2] <= nx and box[1] >= 0 and box[3] <= ny
            # #21: no contour runs up through the label (a segment's midpoint above the label's baseline)
            crossed = bool(np.any((every[:, 0] > box[0]) & (every[:, 0] < box[2]) & (every[:, 1] > box[1])
                                  & (every[:, 1] < box[3] + 0.5))
                           or np.any((along[:, 0] > box[0]) & (along[:, 0] < box[2])   # nor through its glyphs
                                     & (along[:, 1] > box[1] + 0.2 * h) & (along[:, 1] < box[3])))
            if inside and not crossed and not any(box[0] < o[2] and o[0] < box[2] and box[1] < o[3] and o[1] < box[3]
                                  for o in placed):
                placed.append(box)
                spot = (x, y)
                break
        spots.append(spot)
    return spots


def plan_summary(plan) -> str:
    """What a search covered: layouts searched and how fast, how many fit, the most common reason against the
    others, and the best layout (training: the fastest; inference: the most tokens/s per GPU)."""
    j = plan.as_json()
    parts = [f"{'Stopped after' if plan.cancelled else 'Searched'} {j['configurations_evaluated']:,} layouts "
             f"in {j['search_seconds']:.2f} s: {j['feasible']:,} feasible"]
    reason = j.get("most_common_invalid_reason") or j.get("most_common_reason")
    if reason:
        parts.append(f"most common reason against the others: {reason}")
    if plan.best is not None:
        best = "fastest" if hasattr(plan, "not_fitting_reasons") else "most tokens/s per GPU"
        parts.append(f"{best}: {layout_text(plan.best.layout)}")
    else:
        parts.append("no layout fits")
    return "; ".join(parts) + "."
