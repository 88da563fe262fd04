"""The panel protocol (ui/panel_protocol.py) is what MainWindow._wire connects by: every registered dock's panel
offers exactly the capabilities listed here, with the protocol's parameters and real Qt signals, and a panel that
loses a method loses the capability (so the window would not wire it)."""

from __future__ import annotations

import inspect
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6 import QtCore  # noqa: E402

from trinity_desktop.docks import DOCKS  # noqa: E402
from trinity_desktop.ui import panel_protocol as pp  # noqa: E402
from trinity_desktop.ui import presentation_protocol as presenting  # noqa: E402
from trinity_desktop.ui.roofline_panel import RooflinePanel  # noqa: E402

PROTOCOLS = [getattr(pp, name) for name in pp.__all__]

# Dock -> the protocols its panel satisfies. A change here is a change of what the window wires.
CAPABILITIES: dict[str, set[str]] = {
    "controls": set(),     # the window wires the Scenario form itself (its own signals, not a panel protocol)
    "deck": set(),         # the slide list belongs to the talk controller
    "triangle": {"FocusSource", "FocusView", "ResultsView", "ScenarioSource", "SplitView", "WorkloadSource"},
    "breakdown": {"BandsView", "ResultsView", "StageView"},
    "heatmap": {"FocusView", "WorkloadHoverSource", "WorkloadSource"},   # see SIGNATURE_EXCEPTIONS
    "roofline": {"BandsView", "HardwareChoicesView", "ResultsView", "StageView"},
    "tradeoff": {"FocusSource", "FocusView", "ResultsView", "ScenarioSource"},
    "residency": {"BandsView", "EditSource", "FocusSource", "FocusView", "ResultsView"},
    "tiled_io": {"ResultsView"},
    "matrix": {"EditSource", "FocusSource", "FocusView", "ResultsView"},
    "flow": {"FocusSource", "FocusView", "ResultsView", "StageSource"},
    "outcomes": {"FocusSource", "ResultsView"},
    "references": {"CitationsView", "FocusSource", "FocusView", "ResultsView"},
    "split": {"FocusSource", "FocusView", "ResultsView", "SplitSource"},
    "quantisation": {"EditSource", "FocusSource", "FocusView", "ResultsView"},
    "planner": {"BandsView", "EditSource", "ResultsView", "WorkerOwner"},
    "validation": {"BandsView", "ResultsView", "WorkerOwner"},
    "retrieval": {"ResultsView", "FocusView"},   # a slide opens one of its views (set_focus("view", key))
    "memory_wall": {"ResultsView", "FocusView"},
    "batch_law": {"ResultsView"},
    "test_time": {"ResultsView"},
    "quant_quality": {"EditSource", "ResultsView"},
    "edge_arch": {"ResultsView"},
    "edge_matrix": {"ScenarioSource"},
    "routing": {"ResultsView", "SplitView"},
    "claims": {"ScenarioSource"},
}

# Dock -> what presenting and exporting use of it (ui/presentation_protocol.py); every other dock offers none.
PRESENTING: dict[str, set[str]] = {"triangle": {"PathView"}, "outcomes": {"AddedVariantsView"}, "flow": {"StepPlayer"},
                                   "planner": {"IdleWaiter"}, "heatmap": {"RowsExporter"}, "matrix": {"RowsExporter"}}

# (dock, member) -> why its signature differs from the protocol's. The heatmap's set_focus(key) takes the workload
# key only: MainWindow._wire leaves it out of the FocusView wiring and MainWindow._on_focus calls it itself.
SIGNATURE_EXCEPTIONS = {("heatmap", "set_focus"): "set_focus(key), called by MainWindow._on_focus"}


@pytest.fixture(scope="module")
def panels(qapp):
    built = {spec.name: spec.factory() for spec in DOCKS}
    yield built
    for panel in built.values():
        if isinstance(panel, pp.WorkerOwner):
            panel.stop_workers()
        panel.deleteLater()
    qapp.processEvents()


def _members(protocol) -> list[str]:
    return [name for name in protocol.__dict__ if not name.startswith("_")] + list(protocol.__annotations__)


def test_every_dock_is_listed():
    assert set(CAPABILITIES) == {spec.name for spec in DOCKS}


@pytest.mark.parametrize("name", [spec.name for spec in DOCKS])
def test_each_panel_offers_its_capabilities(panels, name):
    offered = {p.__name__ for p in PROTOCOLS if isinstance(panels[name], p)}
    assert offered == CAPABILITIES[name], f"{name}: missing {CAPABILITIES[name] - offered}, new {offered - CAPABILITIES[name]}"


def test_methods_take_the_protocols_parameters_and_signals_are_signals(panels):
    for name, panel in panels.items():
        for protocol in PROTOCOLS:
            if not isinstance(panel, protocol):
                continue
            for member in _members(protocol):
                if (name, member) in SIGNATURE_EXCEPTIONS:
                    continue
                if member in protocol.__annotations__:   # a signal: declared on the panel's class
                    assert isinstance(getattr(type(panel), member), QtCore.Signal), f"{name}.{member}"
                    continue
                wanted = list(inspect.signature(getattr(protocol, member)).parameters)[1:]
                got = inspect.signature(getattr(panel, member)).parameters
                required = [p for p in got.values() if p.default is inspect.Parameter.empty
                            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
                assert len(required) <= len(wanted) <= len(got) or any(
                    p.kind == p.VAR_POSITIONAL for p in got.values()), f"{name}.{member}{tuple(got)} vs {wanted}"


def test_a_panel_without_a_method_loses_the_capability(qtbot):
    class NoStage(RooflinePanel):
        show_stage = None   # as if the method were gone: the flow would not be wired to it

    class NoResults(RooflinePanel):
        update_results = None

    for cls, lost in ((NoStage, pp.StageView), (NoResults, pp.ResultsView)):
        panel = cls()
        qtbot.addWidget(panel)
        assert not isinstance(panel, lost) and isinstance(panel, pp.HardwareChoicesView)


@pytest.mark.parametrize("name", [spec.name for spec in DOCKS])
def test_each_panel_offers_what_presenting_and_exporting_use(panels, name):
    offered = {n for n in presenting.__all__ if isinstance(panels[name], getattr(presenting, n))}
    assert offered == PRESENTING.get(name, set())
