"""The shipped decks' captions quote the panels' numbers: every number a caption shows is a template value
filled from the slide's own Results (or the previous slide's, `{prev_...}`), so a caption cannot disagree
with the panels on its slide. A number typed into a shipped caption is refused, except in a name ("int4",
"ZeRO-3", "1F1B") or a citation ("Llama 3 §3.3.2", "Table 4")."""

from __future__ import annotations

import re

import pytest

from trinity_desktop import session_file
from trinity_desktop.captions import CaptionError, caption_values, fill_caption, slide_caption, template_names
from trinity_desktop.deck import example_decks
from trinity_desktop.model import evaluate

TYPED_NUMBER = re.compile(r"(?<![\w.\-·/(])\d[\d,.]*(?![\w\-])")
CITATION = re.compile(r"§\d+(?:\.\d+)*|Table \d+|Llama \d+|AIME \d{4}|[Oo]pen question \d+")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def _slides():
    for path in example_decks():
        _, deck = session_file.load(path)
        yield from ((path.stem, i, slide, deck) for i, slide in enumerate(deck.slides))


SLIDES = list(_slides())
IDS = [f"{name}-{i + 1}" for name, i, *_ in SLIDES]


@pytest.mark.parametrize("deck_name, index, slide, deck", SLIDES, ids=IDS)
def test_a_caption_types_no_number_of_its_own(deck_name, index, slide, deck):
    text = CITATION.sub("", PLACEHOLDER.sub("", slide.caption))
    assert TYPED_NUMBER.findall(text) == [], f"{deck_name} slide {index + 1}: typed numbers in {slide.caption!r}"


@pytest.mark.parametrize("deck_name, index, slide, deck", SLIDES, ids=IDS)
def test_a_caption_fills_from_its_slide(deck_name, index, slide, deck):
    results = evaluate(slide.scenario)
    previous = evaluate(deck.slides[index - 1].scenario) if index else None
    text = fill_caption(slide.caption, results, previous)
    assert "{" not in text and "nan" not in text.lower() and "—" not in text
    values = caption_values(results)
    for name in template_names(slide.caption):
        source = caption_values(previous) if name.startswith("prev_") else values
        assert source[name.removeprefix("prev_")] in text
    assert slide_caption(deck, index) == text   # what the presenter shows


def test_an_unknown_value_is_refused_in_one_line():
    _, _, slide, _ = SLIDES[0]
    with pytest.raises(CaptionError, match=r"\{tokens_per_watt\}.*known: "):
        fill_caption("{tokens_per_watt} per token", evaluate(slide.scenario))
    with pytest.raises(CaptionError, match="previous slide"):
        fill_caption("from {prev_memory}", evaluate(slide.scenario))


def test_a_caption_typed_by_a_speaker_is_shown_as_typed():
    _, _, slide, deck = SLIDES[0]
    typed = deck.with_caption(0, "Braces {like this} are text here")
    assert slide_caption(typed, 0) == "Braces {like this} are text here"


def test_the_captions_quote_the_published_cases_as_computed():
    """Spot checks against hand-derived values: the first planner slide is Llama 3 405B's published layout
    (TP8 x PP16 x DP128, 16 micro-batches: bubble (p-1)/(m+p-1) = 15/31 of the pipeline phase)."""
    planner = [(i, s, d) for name, i, s, d in SLIDES if name == "layout_planner"]
    i, slide, deck = planner[0]
    text = slide_caption(deck, i)
    r = evaluate(slide.scenario)
    assert "TP8" in slide.title and "DP128" in slide.title
    assert f"{r.train['micro_batches']:.0f} micro-batches" in text and "16 micro-batches" in text
    assert "16,384 GPUs" in text and "does not fit" in text


def test_the_planner_slides_open_the_flow_where_the_bubble_shows():
    for name, _, slide, _ in SLIDES:
        if name == "layout_planner" and "dock_flow" in slide.docks and "bubble" in slide.caption:
            assert slide.flow_phase == "forward"


def test_the_disaggregated_slide_opens_the_flow_on_the_kv_handoff():
    """Its caption is about the KV cache crossing from the prefill pool to the decode pool: the flow opened on
    the longest phase, decode, where the prefill and KV-link lanes were empty. It opens on the transfer, a phase
    the slide's own timeline has."""
    from trinity_desktop.ui.flow_timeline import timeline

    (slide,) = [s for name, _, s, _ in SLIDES if name == "serving" and "{serving_kv_transfer_time}" in s.caption]
    _, phases = timeline(slide.scenario, evaluate(slide.scenario))
    assert slide.flow_phase == "KV transfer" and slide.flow_phase in [p.name for p in phases]


def test_the_laptop_slide_is_about_that_model_on_that_laptop():
    for _, i, slide, deck in SLIDES:
        if slide.scenario.hardware.key == "m4-max":
            text = slide_caption(deck, i)
            assert slide.scenario.hardware.name in text and slide.scenario.model.name in text
            assert "dock_split" not in slide.docks   # the split panel cuts other models: it would disagree


def test_the_laptop_slide_shows_the_weights_streaming_as_the_largest_part():
    """Its title says decoding waits on memory bandwidth: streaming the weights is the largest part of the
    panel's time per token (a 1B model spent 60% on kernel launches instead), and its caption quotes both parts."""
    for _, i, slide, deck in SLIDES:
        if slide.scenario.hardware.key == "m4-max" and "bandwidth" in slide.title:
            r = evaluate(slide.scenario)
            assert r.bottleneck == "bandwidth" and r.time["gemms"] > max(v for k, v in r.time.items() if k != "gemms")
            values, text = caption_values(r), slide_caption(deck, i)
            assert values["gemms_weights_time"] in text and values["kernel_launch_and_sync_time"] in text


def test_the_single_stream_slide_says_what_its_panels_show():
    """The coupled triangle's decode-at-batch-1 slide runs on an H100: its title claims no edge device, bandwidth
    is the binding pressure it names, and its caption quotes the time per token's parts as the Memory and time
    panel writes them (kernel launches, not the weights' stream, take most of it here)."""
    slide, deck, i = next((s, d, i) for name, i, s, d in SLIDES
                          if name == "coupled_triangle" and s.scenario.kind == "decode" and s.scenario.batch == 1)
    assert slide.scenario.hardware.kind != "datacenter-gpu" or not slide.title.lower().startswith("at the edge")
    r = evaluate(slide.scenario)
    compute, bandwidth, memory = r.pressure.as_tuple()
    assert r.bottleneck == "bandwidth" and bandwidth > max(compute, memory) and "bandwidth binds" in slide.title
    values, text = caption_values(r), slide_caption(deck, i)
    for name in ("token_time", "gemms_weights_time", "kernel_launch_and_sync_time", "bandwidth_pressure"):
        assert values[name] in text, name


def test_a_view_is_computed_only_when_a_caption_quotes_it(monkeypatch):
    """Start-up and slide changes pay only for the views a caption names: a Results-only caption computes no
    view, a caption quoting one view computes that one, once."""
    from trinity_desktop import caption_views

    calls = []
    for name, compute in list(caption_views.VIEWS.items()):
        monkeypatch.setitem(caption_views.VIEWS, name,
                            lambda r, name=name, compute=compute: calls.append(name) or compute(r))
    _, _, slide, _ = SLIDES[0]
    r = evaluate(slide.scenario)
    fill_caption("{model} on {gpus} {hardware}", r)
    assert calls == []
    fill_caption("{claims_agree} of {claims_count} agree, {claims_disagree} do not", r)
    assert calls == ["claims"]
    with pytest.raises(CaptionError, match=r"\{claims_agreed\}.*known: claims_agree, claims_count"):
        fill_caption("{claims_agreed}", r)


def _panel_text(panel) -> str:
    """Everything a panel writes: labels, plot titles, text items on the plots and the hover read-outs."""
    import pyqtgraph as pg
    from PySide6 import QtGui, QtWidgets

    labels = panel.findChildren(QtWidgets.QLabel)
    texts = [w.text() for w in labels]
    # and as read: a rich-text key's non-breaking spaces and hyphens are spaces and hyphens
    texts += [QtGui.QTextDocumentFragment.fromHtml(w.text()).toPlainText().replace("\u2011", "-").replace("\xa0", " ")
              for w in labels if "&nbsp;" in w.text()]
    for view in panel.findChildren(pg.PlotWidget) + panel.findChildren(pg.GraphicsLayoutWidget):
        for item in view.scene().items():
            if isinstance(item, pg.TextItem):
                texts.append(item.toPlainText())
            elif isinstance(item, pg.LabelItem):
                texts.append(item.text)
    chart = getattr(panel, "chart", None)
    texts += [t for _x, _y, t in getattr(chart, "_hover_points", [])]
    return "\n".join(texts)


# values a panel writes in other words than the caption: how the panel writes them (None: a ratio the caption
# derives from what the panel draws, checked by hand below or in the view's own tests)
PANEL_WORDS = {"quant_shrink": None, "batch_law_growth": None,"routing_quality": lambda v: f"{v.split()[0]}% quality",
               "test_time_target": lambda v: f"{v.split()[0]}%",
               "routing_latency_change": None, "routing_cost_fall": None, "test_time_large_samples": None,
               "edge_arch_published_reach": lambda v: v.replace("from ", "2× from "),
               "edge_arch_claimed_reach": lambda v: v.replace("reached ", "2.5× "),
               "memory_wall_ridge_change": lambda v: v.split()[-1],
               "edge_matrix_ms_phone_a17_pro_llama_3_2_3b_q4_k": lambda v: f"{float(v.split()[0]):.0f} ✓",   # its cell
               "test_time_small": lambda v: v.replace("R1-Distill-", "R1-"),
               "test_time_large": lambda v: v.replace("R1-Distill-", "R1-"),
               # sparse attention and distillation: the explorer's title writes the focused technique's saving as
               # "−65%"; the context, keys read and the other techniques' savings are checked in
               # tests/model/test_techniques_sparse_distill.py (test_sparse_caption_values)
               "sparse_nsa_saved": lambda v: f"−{v.split('%')[0]}%", "sparse_window_saved": lambda v: f"−{v.split('%')[0]}%",
               "sparse_context": None, "sparse_nsa_keys": None, "sparse_nsa_fewer": None, "sparse_strided_keys": None,
               "sparse_strided_saved": None, "sparse_distill_saved": None, "retrieval_published_count": None}


@pytest.mark.parametrize("deck_name, index, slide, deck",
                         [s for s in SLIDES if s[0] in ("edge_and_synthesis", "scale_over_time")],
                         ids=[i for i, s in zip(IDS, SLIDES, strict=True)
                              if s[0] in ("edge_and_synthesis", "scale_over_time")])
def test_a_caption_quotes_the_views_as_its_panels_show_them(qtbot, deck_name, index, slide, deck):
    """Each view value a caption quotes is written by one of the slide's panels, fed the slide's Results."""
    from trinity_desktop.caption_views import view_of
    from trinity_desktop.docks import DOCKS

    quoted = [n for n in template_names(slide.caption) if view_of(n)]
    if not quoted:
        return
    results = evaluate(slide.scenario)
    text = ""
    for spec in DOCKS:
        if f"dock_{spec.name}" in slide.docks and spec.name != "controls":
            panel = spec.factory()
            qtbot.addWidget(panel)
            if hasattr(panel, "update_results"):
                panel.update_results(results)
            if slide.focus != ("", "") and spec.name in ("tradeoff", "triangle", "retrieval", "memory_wall"):
                panel.set_focus(*slide.focus)   # as presented: the slide's linked focus
            text += _panel_text(panel)
    values = caption_values(results)
    for name in quoted:
        words = None if name.startswith(("edge_matrix_fits_", "edge_matrix_in_time_")) else (   # column names
            PANEL_WORDS.get(name, lambda v: v))
        if words is not None:
            assert words(values[name]) in text, f"{deck_name} slide {index + 1}: {{{name}}} = {values[name]!r}"


def test_the_derived_routing_values_are_the_panels_saving_and_latency():
    """Cost falls 1 / (1 - saved) where the routing title says saved; latency changes by its title's ratio."""
    from trinity_desktop.model.views.routing import routing

    slide = next(s for name, _, s, _ in SLIDES if "{routing_cost_fall}" in s.caption)
    values = caption_values(evaluate(slide.scenario))
    x = routing(current=slide.scenario)
    i = int(abs(x.r - x.best_r).argmin())
    assert values["routing_cost_fall"] == f"{x.cloud_gpu_s[0] / x.cloud_gpu_s[i]:.1f}×"
    assert values["routing_latency_change"] == f"rises {x.latency_s[i] / x.latency_s[0]:.1f}×"
    assert values["routing_share"] == f"{x.best_r:.0%}"


def test_the_widest_formats_are_the_matrix_cells_edges():
    """The 8B on the phone: the named format is the widest cell that fits, every wider cell does not."""
    from trinity_desktop.model.views.edge_matrix import edge_matrix

    slide = next(s for name, _, s, _ in SLIDES if "{edge_matrix_fits_phone_a17_pro_llama_3_8b}" in s.caption)
    values = caption_values(evaluate(slide.scenario))
    m = edge_matrix()
    for device in ("phone-a17-pro", "laptop-x86-ddr5", "jetson-orin-nano-super"):
        i, j = m.devices.index(device), m.models.index("llama-3-8b")
        for kind, ok in (("fits", m.fits[i, j]), ("in_time", m.fits[i, j] & (m.time_s[i, j] <= m.target_s))):
            name = f"edge_matrix_{kind}_{device.replace('-', '_')}_llama_3_8b"
            k = m.formats.index(values[name].lower())
            assert ok[k] and not ok[:k].any(), name
    assert values["edge_matrix_fits_phone_a17_pro_llama_3_8b"] == "Q4_K"   # at Q8_0 the 8B exceeds the phone's memory


def test_the_derived_storage_and_batch_ratios_are_hand_checked():
    """Q4_K 4.5 bits -> Q2_K 2.625 bits (ggml-common.h block layouts): 4.5 / 2.625 = 1.71x; DeepSeek-V3's
    15,360 x 4,096 = 62.9M tokens per step against LLaMA-65B's 4M: 15.7x."""
    slide = next(s for name, _, s, _ in SLIDES if "{quant_shrink}" in s.caption)
    values = caption_values(evaluate(slide.scenario))
    assert (values["quant_bits_q4_k"], values["quant_bits_q2_k"], values["quant_shrink"]) == ("4.5", "2.625", "1.7×")
    slide = next(s for name, _, s, _ in SLIDES if "{batch_law_growth}" in s.caption)
    values = caption_values(evaluate(slide.scenario))
    assert values["batch_law_tokens_deepseek_v3"] == "62.9M" and values["batch_law_tokens_llama_65b"] == "4M"
    assert values["batch_law_growth"] == f"{15360 * 4096 / 4e6:.1f}×" == "15.7×"


def test_the_serving_slides_quote_leviathans_tokens_per_step_and_the_load_readout():
    """Leviathan et al. 2023 eq. 1: E[tokens per step] = (1 - α^(γ+1)) / (1 - α); α = 0.7, γ = 4 -> 2.77. The load
    slide quotes the System outcomes' load sentence's own p95s and highest rate within its targets."""
    from trinity_desktop.ui.load_readout import load_sentence

    slide = next(s for name, _, s, _ in SLIDES if "{serving_tokens_per_step}" in s.caption)
    sc = slide.scenario
    values = caption_values(evaluate(sc))
    assert (sc.acceptance, sc.draft_tokens) == (0.7, 4)
    assert values["serving_tokens_per_step"] == f"{(1 - 0.7 ** 5) / (1 - 0.7):.2f}" == "2.77"
    slide = next(s for name, _, s, _ in SLIDES if "{serving_max_rate}" in s.caption)
    r = evaluate(slide.scenario)
    values, sentence = caption_values(r), load_sentence(r)
    for name in ("serving_ttft_p95", "serving_tpot_p95", "serving_max_rate", "serving_ttft_slo", "serving_tpot_slo"):
        assert values[name] in sentence, name
