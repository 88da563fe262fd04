"""One sentence for a training scenario's tokens per step against the published optimum at its compute:
"Your global batch is X tokens; the published optimum at this compute is Y" (model/formulas/batch_law.py:
B_opt = 0.2920 C^0.3271, DeepSeek LLM 2024, at a Chinchilla-optimal run C = 6 N x 20 N). Shared by the
batch-law chart's title, the breakdown's summary and the planner."""

from __future__ import annotations

from PySide6 import QtWidgets

from trinity_desktop.model.formulas.batch_law import ScenarioBatch, scenario_batch
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.ui import plot_widgets as pw


def fmt_tokens(n: float) -> str:
    return f"{n / 1e6:.3g}M" if n >= 1e5 else f"{n / 1e3:.3g}k"


def batch_of(results: Results) -> ScenarioBatch | None:
    """The scenario's batch and the law's optimum (None outside training)."""
    sc = results.scenario
    if results.kind != "train":
        return None
    return scenario_batch(sc.global_batch, sc.seq_len, results.params_active)


def batch_sentence(batch: ScenarioBatch) -> str:
    return (f"Your global batch is {fmt_tokens(batch.batch_tokens)} tokens; the published optimum at this compute is "
            f"{fmt_tokens(batch.optimal_tokens)}")


class BatchReadout(QtWidgets.QLabel):
    """The sentence as a label, hidden outside training."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("BatchReadout")
        self.setFont(pw.font())
        self.setWordWrap(True)
        self.setAccessibleName("Global batch against the published optimum")
        self.setToolTip("Tokens per step = global batch x sequence length. Optimum: the DeepSeek LLM batch-size law "
                        "B_opt = 0.2920 C^0.3271 at the compute of a Chinchilla-optimal run of this model "
                        "(C = 6 N × 20 N FLOPs).")
        self.hide()

    def update_results(self, results: Results) -> None:
        batch = batch_of(results)
        self.setVisible(batch is not None)
        self.setText(batch_sentence(batch) + "." if batch is not None else "")
