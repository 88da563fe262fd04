"""One sentence for a scenario's cost and energy per million tokens (model/views/cost.py): "$0.27 per million
tokens at $2.50 per GPU-hour; 0.076 kWh per million at the 700 W TDP (5.6 kW for 8 GPUs, an upper bound)".
Shared by the System outcomes and the Layout planner read-outs (issue #23)."""

from __future__ import annotations

from PySide6 import QtWidgets

from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.model.views.cost import TokenCost, scenario_cost, token_cost
from trinity_desktop.ui import plot_widgets as pw

WHAT = {"train": "trained", "prefill": "generated", "decode": "generated"}


def cost_sentence(cost: TokenCost, kind: str, hardware_name: str) -> str:
    """The read-out's words: dollars when a price is set, kWh when the hardware entry has a TDP, else what is
    missing."""
    tokens = f"per million tokens {WHAT[kind]}"
    parts = []
    if cost.usd_per_million_tokens is not None:
        parts.append(f"${cost.usd_per_million_tokens:,.3g} {tokens} at ${cost.gpu_hour_price:,.2f} per GPU-hour")
    if cost.kwh_per_million_tokens is not None:
        parts.append(f"{cost.kwh_per_million_tokens:,.3g} kWh {tokens if not parts else 'per million'} at the "
                     f"{cost.power_w:,.0f} W TDP ({cost.kw:,.3g} kW for {cost.gpus:,} GPUs, an upper bound)")
    else:
        parts.append(f"no TDP in the entry for {hardware_name}, so no energy figure")
    if cost.usd_per_million_tokens is None:
        parts.append("set a GPU price (Cluster) for dollars")
    return "; ".join(parts) + "."


class CostReadout(QtWidgets.QLabel):
    """The sentence as a label that wraps (never widens its dock)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("CostReadout")
        self.setFont(pw.font())
        self.setWordWrap(True)
        self.setAccessibleName("Cost and energy per million tokens")
        self.setToolTip("Dollars: your price per GPU-hour x GPUs x time / tokens. Energy: the accelerators' board "
                        "power at their datasheet TDP (an upper bound: a measured 8-GPU H100 node trained at 76% of its "
                        "rating, Newkirk et al. 2025), no host or cooling. Training counts the tokens of a step; "
                        "serving the tokens generated at the decode rate.")

    def update_results(self, results: Results) -> None:
        """Shown only once a GPU price is set (Cluster): without one the panels carry no cost line at all."""
        sc = results.scenario
        self.setVisible(sc.gpu_hour_price > 0)
        self.setText(cost_sentence(scenario_cost(results), results.kind, sc.hardware.name))

    def update_best(self, tokens_per_s_per_gpu: float, scenario: Scenario) -> None:
        """The planner's best layout, at its tokens/s per GPU of the budget (idle GPUs included), after the
        scenario's own sentence: "Best layout: $X per million tokens ..."."""
        cost = token_cost(tokens_per_s_per_gpu, scenario.gpus, scenario.gpu_hour_price, scenario.hardware.tdp_w)
        if cost.usd_per_million_tokens is None and cost.kwh_per_million_tokens is None:
            return
        best = [f"${cost.usd_per_million_tokens:,.3g}"] if cost.usd_per_million_tokens is not None else []
        if cost.kwh_per_million_tokens is not None:
            best.append(f"{cost.kwh_per_million_tokens:,.3g} kWh")
        text = self.text().split(" Best layout: ")[0]
        self.setText(f"{text} Best layout: {' and '.join(best)} per million tokens.")
