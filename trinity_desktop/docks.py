"""The dock registry: every panel the main window can show, its stable objectName, title and place.

The default layout is a 2 x 2 grid of tab groups right of the scenario controls; `position` names the
group ("top-left", "top-right", "bottom-left", "bottom-right") and the first dock of each group is the
visible tab. Panels are wired to the store generically by the main window (see MainWindow._wire).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6 import QtWidgets


@dataclass(frozen=True)
class DockSpec:
    name: str            # objectName is f"dock_{name}"
    title: str
    factory: Callable[[], QtWidgets.QWidget]
    position: str        # "left" or one of the four centre groups
    shortcut: str = ""   # View-menu shortcut that shows and raises the dock
    citations: tuple[str, ...] = ()  # reference keys the panel's formulas rest on (References dock)
    min_size: tuple[int, int] = (360, 260)  # the smallest panel that still tells its message (slides, audit)
    tab: str = ""        # the short name on its tab (readable whole at 1366 px); the title is its tooltip
    # the second seed's views: closed in a folded layout (fewer than four centre groups, e.g. a 1366 x 768
    # laptop), where their tabs would not read whole; View ▸ and the example decks open them
    secondary: bool = False

    @property
    def tab_title(self) -> str:
        return self.tab or self.title


def _breakdown():
    from trinity_desktop.ui.breakdown_panel import BreakdownPanel

    return BreakdownPanel()


def _heatmap():
    from trinity_desktop.ui.heatmap_panel import HeatmapPanel

    return HeatmapPanel()


def _controls():
    from trinity_desktop.ui.controls import ScenarioControls

    return ScenarioControls()


def _roofline():
    from trinity_desktop.ui.roofline_panel import RooflinePanel

    return RooflinePanel()


def _tiled_io():
    from trinity_desktop.ui.tiled_io_panel import TiledIOPanel

    return TiledIOPanel()


def _triangle():
    from trinity_desktop.ui.triangle_panel import TrianglePanel

    return TrianglePanel()


def _tradeoff():
    from trinity_desktop.ui.tradeoff_panel import TradeoffPanel

    return TradeoffPanel()


def _residency():
    from trinity_desktop.ui.residency_panel import ResidencyPanel

    return ResidencyPanel()


def _matrix():
    from trinity_desktop.ui.matrix_panel import MatrixPanel

    return MatrixPanel()


def _split():
    from trinity_desktop.ui.split_panel import SplitPanel

    return SplitPanel()


def _quantisation():
    from trinity_desktop.ui.quantisation_panel import QuantisationPanel

    return QuantisationPanel()


def _flow():
    from trinity_desktop.ui.flow_panel import FlowPanel

    return FlowPanel()


def _outcomes():
    from trinity_desktop.ui.outcomes_panel import OutcomesPanel

    return OutcomesPanel()


def _references():
    from trinity_desktop.ui.references_panel import ReferencesPanel

    return ReferencesPanel()


def _planner():
    from trinity_desktop.ui.planner_panel import PlannerPanel

    return PlannerPanel()


def _validation():
    from trinity_desktop.ui.validation_panel import ValidationPanel

    return ValidationPanel()


def _scale_panel(module: str, cls: str):
    def make():
        import importlib

        return getattr(importlib.import_module(f"trinity_desktop.ui.{module}"), cls)()

    return make


def _deck():
    from trinity_desktop.ui.deck_panel import DeckPanel

    return DeckPanel()


def _claims():
    from trinity_desktop.ui.claims_panel import ClaimsPanel

    return ClaimsPanel(dock_titles={f"dock_{spec.name}": spec.title for spec in DOCKS})


def _quant_quality():
    from trinity_desktop.ui.quant_quality_panel import QuantQualityPanel

    return QuantQualityPanel()


def _edge_arch():
    from trinity_desktop.ui.edge_arch_panel import EdgeArchPanel

    return EdgeArchPanel()


def _edge_matrix():
    from trinity_desktop.ui.edge_matrix_panel import EdgeMatrixPanel

    return EdgeMatrixPanel()


def _routing():
    from trinity_desktop.ui.routing_panel import RoutingPanel

    return RoutingPanel()


DOCKS: tuple[DockSpec, ...] = (
    DockSpec("controls", "Scenario", _controls, "left", "Ctrl+1"),
    DockSpec("deck", "Slides", _deck, "left", "Ctrl+0"),
    DockSpec("triangle", "Trade-off triangle", _triangle, "top-left", "Ctrl+2", tab="Triangle", citations=("fan2026-trinity", "nccl-tests-performance"),
             min_size=(440, 460)),   # the triangle, its corner names and edge captions over a title and legend
    DockSpec("breakdown", "Memory and time", _breakdown, "top-right", "Ctrl+3", tab="Memory, time", citations=("zero", "korthikanti2022", "pipedream-1f1b", "vllm")),
    DockSpec("heatmap", "Workload pressure", _heatmap, "bottom-left", "Ctrl+4", tab="Workloads", citations=("fan2026-trinity", "roofline")),
    DockSpec("roofline", "Roofline", _roofline, "bottom-right", "Ctrl+5", citations=("roofline", "scaling-book", "flashattention", "leviathan2023", "deepseek-v3-mtp-decode")),
    DockSpec("tradeoff", "Trade-off explorer", _tradeoff, "top-left", "Ctrl+6", tab="Trade-offs", citations=("fan2026-trinity", "korthikanti2022", "zero", "dgc", "flashattention")),
    DockSpec("residency", "KV-cache residency", _residency, "top-right", "Ctrl+7", tab="KV cache", citations=("vllm", "streamingllm", "h2o", "razorattention", "cxl-2405.14209")),
    DockSpec("tiled_io", "Attention IO tiles", _tiled_io, "bottom-right", "Ctrl+8", tab="Attention", citations=("flashattention",)),
    DockSpec("matrix", "Matrix views", _matrix, "bottom-left", "Ctrl+9", tab="Matrices", citations=("nccl-tests-performance", "h2o", "razorattention")),
    DockSpec("flow", "Step-through flow", _flow, "top-right", "Ctrl+Shift+1", tab="Flow", citations=("pipedream-1f1b", "megatron-lm", "zero")),
    DockSpec("outcomes", "System outcomes", _outcomes, "bottom-left", "Ctrl+Shift+2", tab="Outcomes", citations=("korthikanti2022", "zero", "zero-offload", "dgc", "flashattention")),
    DockSpec("references", "References", _references, "bottom-right", "Ctrl+Shift+3", tab="Sources"),
    DockSpec("split", "Split computing", _split, "top-left", tab="Split", citations=("neurosurgeon", "resnet", "alexnet", "huang2012-lte")),
    DockSpec("quantisation", "Quantisation", _quantisation, "top-left", citations=("gptq", "llm-int8")),
    DockSpec("planner", "Layout planner", _planner, "top-right", tab="Planner",
             citations=("pipedream-1f1b", "korthikanti2022", "zero", "megatron-lm", "flexgen")),
    DockSpec("validation", "Validation", _validation, "bottom-right",
             citations=("pipedream-1f1b", "korthikanti2022", "mt-nlg", "llama3-herd", "saltelli2010")),
    DockSpec("retrieval", "Vector search tiers", _scale_panel("retrieval_panel", "RetrievalPanel"), "bottom-left", tab="Vector search",
             citations=("hnsw", "jegou2011-pq", "diskann", "pgvector", "supabase-pgvector-hnsw", "rivestack-pgvector-bench"), secondary=True),
    DockSpec("memory_wall", "Memory wall over time", _scale_panel("memory_wall_panel", "MemoryWallPanel"), "bottom-right",
             tab="Memory wall",
             citations=("gholami2024-memory-wall",), secondary=True),
    DockSpec("batch_law", "Tokens per step", _scale_panel("batch_law_panel", "BatchLawPanel"), "top-right",
             citations=("deepseek-llm", "llama1", "llama2", "llama3-herd", "deepseek-v2", "deepseek-v3"), secondary=True),
    DockSpec("test_time", "Test-time compute", _scale_panel("test_time_panel", "TestTimePanel"), "top-left",
             citations=("deepseek-r1", "snell2024-test-time"), secondary=True),
    DockSpec("quant_quality", "Quantisation quality", _quant_quality, "top-left",
             citations=("llamacpp-quantize-readme", "ggml-common", "gptq", "awq", "qlora", "nvfp4", "ocp-mx",
                        "kurtic2024"), secondary=True),
    DockSpec("edge_arch", "Edge architectures", _edge_arch, "top-right",
             citations=("transformers-lfm2-docs", "lfm2-config-350m", "lfm2-config-1.2b", "llama32-model-card",
                        "roofline"), secondary=True),
    DockSpec("edge_matrix", "Edge matrix", _edge_matrix, "bottom-left",
             citations=("ggml-common", "llama32-model-card", "jetson-orin-nano-super", "jedec-ddr5", "roofline"), secondary=True),
    DockSpec("routing", "Edge-cloud routing", _routing, "bottom-right", tab="Routing",
             citations=("routellm", "hybrid-llm", "neurosurgeon", "huang2012-lte"), secondary=True),
    DockSpec("claims", "Claims", _claims, "bottom-right", citations=("fan2026-trinity", "ggml-common"), secondary=True),
)

CENTRE_GROUPS = ("top-left", "top-right", "bottom-left", "bottom-right")
