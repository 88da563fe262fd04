"""The Layout planner's capacity mode (#23): a request rate and p95 TTFT / TPOT targets give the fewest GPUs and
their layout (model/search/capacity_planner.py, the same search as `plan infer --rate`).

Drawn on the front plot: one dot per replica layout (TP x PP, weight and KV formats, up to the scenario's GPUs)
that meets the targets at some rate, its highest rate per replica within the targets across, the GPUs it needs
for the scenario's rate up, ceil(R / r_max) x TP x PP. The ring marks the fewest GPUs; the title states them.
Hover a dot for its layout and latencies; click it to load that replica layout (one undoable edit).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.search.capacity_planner import CapacityOption, CapacityPlan, plan_capacity
from trinity_desktop.ui import named_combo, theme
from trinity_desktop.ui import plot_widgets as pw
from trinity_desktop.ui.planner_search import plan_summary
from trinity_desktop.ui.units import fmt_seconds

MODES = (("Layouts (best within the GPUs)", "layouts"), ("Capacity (fewest GPUs for the request rate)", "capacity"))
CAPACITY_FIELDS = ("request_rate", "ttft_slo_s", "tpot_slo_s", "prefill_chunk_tokens")
OPTION_COLOR = theme.MUTED_COLOR
NO_RATE = ("Capacity mode: set Requests per second (Scenario form, Serving) and, if you like, the p95 TTFT and "
           "TPOT targets; the planner then finds the fewest GPUs that serve that rate.")


def targets_text(ttft_slo_s: float | None, tpot_slo_s: float | None) -> str:
    """'within p95 TTFT 2 s and TPOT 50 ms', or '' without targets."""
    parts = [f"{name} {fmt_seconds(v)}" for name, v in (("TTFT", ttft_slo_s), ("TPOT", tpot_slo_s)) if v]
    return f" within p95 {' and '.join(parts)}" if parts else ""


def option_text(option: CapacityOption) -> str:
    """'TP2 PP1 x 3 replicas, weights fp8, KV int4'."""
    lay = option.layout
    n = lay["replicas"]
    return (f"TP{lay['tp']} PP{lay['pp']} × {n} replica{'s' if n > 1 else ''}, weights {lay['weight_dtype']}, "
            f"KV {lay['kv_dtype']}")


def capacity_title(plan: CapacityPlan, max_replica_gpus: int) -> str:
    """The finding: '2 GPUs serve 4 req/s within p95 TTFT 2 s and TPOT 50 ms: TP2 PP1 x 1 replica, ...'."""
    targets = targets_text(plan.ttft_slo_s, plan.tpot_slo_s)
    if plan.gpus is None:
        return (f"No replica of up to {max_replica_gpus} GPUs meets{targets.replace(' within', '') or ' the load'} "
                f"at any rate")
    return f"{plan.gpus} GPUs serve {plan.rate_per_s:g} req/s{targets}: {option_text(plan.options[0])}"


def capacity_summary(plan: CapacityPlan) -> str:
    """What the capacity search covered, and the chosen replica's latencies at its share of the rate."""
    head = (f"Searched {plan.layouts_searched:,} replica layouts in {plan.search_seconds:.2f} s: "
            f"{plan.layouts_meeting_targets:,} meet the targets at some rate")
    if plan.gpus is None or plan.replica_load is None:
        return head + "; none serves the rate."
    load = plan.replica_load
    return (f"{head}; each replica of the fewest-GPU layout serves up to {plan.max_rate_per_replica:.3g} req/s "
            f"within them; at {load.rate_per_s:.3g} req/s per replica TTFT p95 {fmt_seconds(load.ttft_p95_s)}, "
            f"TPOT p95 {fmt_seconds(load.tpot_p95_s)}.")


def capacity_edit(option: CapacityOption) -> dict:
    """The Scenario field changes that load one replica of a capacity layout (its KV kept in HBM)."""
    lay = option.layout
    return {"gpus": lay["tp"] * lay["pp"], "pp": lay["pp"], "weight_dtype": lay["weight_dtype"],
            "kv_dtype": lay["kv_dtype"], "kv_offload_fraction": 0.0, "attention_dp": 1, "inference_ep": 1}


def capacity_search(sc: Scenario, budget: int):
    """The capacity search of `sc` (its rate, targets and chunk) with replicas of up to `budget` GPUs, as a
    function of the worker's progress and cancelled callbacks."""
    fixed = dict(gpus_per_node=sc.gpus_per_node, efficiency=sc.efficiency, kv_policy=sc.kv_policy,
                 kv_window=sc.kv_window, kv_sinks=sc.kv_sinks)

    def fn(**kw):
        return plan_capacity(sc.model, sc.hardware, sc.request_rate, sc.prompt_len, sc.gen_len,
                             ttft_slo_s=sc.ttft_slo_s, tpot_slo_s=sc.tpot_slo_s, max_replica_gpus=budget,
                             chunk_tokens=sc.prefill_chunk_tokens, **fixed, **kw)
    return fn


class CapacityMode:
    """The planner panel's capacity mode: its mode box, job key, search and drawing (mixed into PlannerPanel)."""

    def _mode_combo(self) -> QtWidgets.QComboBox:
        combo = named_combo.labelled_combo("Planner question", "Serving: the best layouts within the scenario's "
                                           "GPUs, or the fewest GPUs that serve the scenario's request rate within "
                                           "its p95 TTFT and TPOT targets", MODES, 10)
        combo.currentIndexChanged.connect(lambda _i: self.restart())
        return combo

    def _show_question(self, serving: bool) -> None:
        """Serving shows the question box in the top row; training the map axes (one line at a 1366 half)."""
        self.mode_combo.parentWidget().setVisible(serving)
        for combo in (self.x_combo, self.y_combo):
            combo.parentWidget().setVisible(not serving)

    def capacity_mode(self, sc: Scenario | None) -> bool:
        return sc is not None and sc.kind != "train" and self.mode_combo.currentData() == "capacity"

    def _mode_key(self, sc: Scenario) -> tuple:
        """What a capacity search depends on beyond the serving job (empty in the other modes)."""
        return tuple(getattr(sc, f) for f in CAPACITY_FIELDS) if self.capacity_mode(sc) else ()

    def _start_capacity(self, sc: Scenario, budget: int):
        """The capacity search function, or None (with the plot cleared and a hint) when no rate is set."""
        if sc.request_rate > 0:
            return capacity_search(sc, budget)
        self.plan, self._points, self._xy = None, [], np.zeros((0, 2))
        for item in (self.scatter, self.best_ring, self.current, self.front_line):
            item.setData(x=[], y=[])
        self.map_plot.setVisible(False)
        self.colorbar.setVisible(False)
        pw.set_title(self.front_plot, pw.html_escape("Set a request rate to find the fewest GPUs"), size="13pt")
        self.status.setText(NO_RATE)
        return None

    def _draw_capacity(self, plan: CapacityPlan) -> None:
        budget = self._job_key[1] if self._job_key is not None else 0
        self._points = list(plan.options)
        self._xy = np.asarray([(o.max_rate_per_replica, o.gpus) for o in self._points], float).reshape(-1, 2)
        self._log_y = True  # GPU counts span decades (a slow TP1 layout needs many replicas)
        self._current_xy = None
        self.bars.request([])
        self._fit_front()  # the view range first: a linear range read as log exponents overflows
        self.front_plot.getAxis("left").setLogMode(False, True)
        pw.style_plot(self.front_plot, "Capacity", f"GPUs for {plan.rate_per_s:g} req/s",
                      "highest rate per replica within the targets (req/s)")
        view = self._view_xy()
        self.scatter.setData(x=view[:, 0], y=view[:, 1], brush=pg.mkBrush(OPTION_COLOR),
                             pen=pg.mkPen(theme.plot_text_color()))
        self.front_line.setData(x=[], y=[])
        self.best_ring.setData(x=view[:1, 0], y=view[:1, 1])
        self.current.setData(x=[], y=[])
        for widget in (self.map_plot, self.colorbar):
            widget.setVisible(False)
        self.legend.setText(pw.key_line((pw.key_entry("●", "replica layout meeting the targets", OPTION_COLOR),
                                         pw.key_entry("◯", "fewest GPUs"))))
        self.status.setText(capacity_summary(plan))
        pw.set_title(self.front_plot, pw.html_escape(capacity_title(plan, budget)), size="13pt")

    def summary_text(self) -> str:
        """The status line of the plan shown: the capacity search's, or the layout search's."""
        if isinstance(self.plan, CapacityPlan):
            return capacity_summary(self.plan)
        return plan_summary(self.plan) if self.plan is not None else ""

    def _capacity_hover(self, i: int) -> str:
        o = self._points[i]
        return pw.hover_html([(option_text(o), True),
                              (f"{o.gpus} GPUs for {self.plan.rate_per_s:g} req/s; each replica serves up to "
                               f"{o.max_rate_per_replica:.3g} req/s within the targets", False),
                              ("click to load one replica", False)])
