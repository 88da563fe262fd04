"""The load read-out of a serving scenario (#23): one sentence stating the finding at the scenario's request rate,
"At 4 req/s TTFT p95 is 60.8 ms, TPOT p95 9.09 ms; up to 21.3 req/s meets TTFT p95 ≤ 500 ms and TPOT p95 ≤ 30 ms"
(model/search/load.py, `LoadReport.finding`). Hidden for training and where the rate is 0 (off)."""

from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from trinity_desktop.model import ValidationError
from trinity_desktop.model.search.load import load_report
from trinity_desktop.model.step.evaluation import Results
from trinity_desktop.ui import plot_widgets as pw


def load_sentence(results: Results) -> str:
    """The read-out's sentence ("" when the scenario has no request rate, or trains)."""
    sc = results.scenario
    if sc.kind == "train" or sc.request_rate <= 0:
        return ""
    try:
        return load_report(sc).finding
    except ValidationError as exc:  # e.g. one generated token: no TPOT to speak of
        return f"Load model: {exc}."


class LoadReadout(QtWidgets.QLabel):
    """A wrapped, plain-text label with the load sentence; computed once per scenario."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextFormat(QtCore.Qt.TextFormat.PlainText)
        font = pw.font(12)
        font.setBold(True)
        self.setFont(font)
        self.setAccessibleName("Load at the request rate")
        self.setToolTip("Poisson requests at the Scenario's rate on one replica, continuous batching with chunked "
                        "prefill (vLLM's scheduler): p95 time to first token and per output token, and the highest "
                        "rate whose p95s meet the targets")
        self._scenario = None
        self.hide()

    def show_results(self, results: Results) -> None:
        if results.scenario == self._scenario:
            return
        self._scenario = results.scenario
        text = load_sentence(results)
        self.setText(text)
        self.setVisible(bool(text))
