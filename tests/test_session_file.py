"""Session files and decks: exact round trips, every class of bad file refused with its message, shipped decks."""

from __future__ import annotations

import json
import math
import os
import re
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from trinity_desktop import session_file as sf
from trinity_desktop.deck import Deck, Slide, example_decks
from trinity_desktop.defaults import default_scenario
from trinity_desktop.docks import DOCKS as DOCK_REGISTRY
from trinity_desktop.model import Efficiency, Hardware, Scenario, ValidationError, evaluate
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets

HW = hardware_presets()
MODELS = model_presets()
DOCKS = tuple(f"dock_{spec.name}" for spec in DOCK_REGISTRY)   # every registered dock
DECK_DIR = Path(str(resources.files("trinity_desktop.resources").joinpath("decks")))


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return default_scenario()


@pytest.fixture(scope="module")
def deck(scenario) -> Deck:
    return Deck("Talk — «quotes» \"and\" newlines\n", (
        Slide("One", "Caption with ünïcode, 1e-9 and \\ backslash", scenario, ("dock_breakdown", "dock_heatmap")),
        Slide("Two", "", scenario.replace(kind="decode", gpus=8, batch=32, kv_dtype="fp8"), ("dock_roofline",),
              layout="AAAA/w==", focus=("workload", "long-context-decode")),
    ))


@pytest.fixture(scope="module")
def good_text(scenario, deck) -> str:
    return sf.dumps(scenario, deck)


def _edited(text: str, edit) -> str:
    doc = json.loads(text)
    edit(doc)
    return json.dumps(doc)


def _refused(text, *fragments: str) -> str:
    with pytest.raises(sf.SessionFileError) as info:
        sf.loads(text)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


# --- round trips ------------------------------------------------------------------------------------------

def test_round_trip_is_exact(scenario, deck, good_text):
    assert sf.loads(good_text) == (scenario, deck)
    assert sf.loads(sf.dumps(scenario)) == (scenario, None)
    # stable: writing what was read gives the same text byte for byte
    assert sf.dumps(*sf.loads(good_text)) == good_text


def test_user_hardware_survives_with_sources_status_and_notes(scenario):
    user = Hardware(key="my-chip", name="My chip", vendor="Me", kind="user", peak_flops={"bf16": 123.456e12},
                    hbm_bytes=48e9, hbm_bw=1.2345678901234567e12, scaleup_bw=(0.1 + 0.2) * 1e12, host_link_bw=32e9,
                    sources={"hbm_bw": "modelling-assumption"}, status={"hbm_bw": "A"},
                    notes={"hbm_bw": "measured with STREAM, 90% of nominal"})
    sc = scenario.replace(hardware=user, gpus=8, tp=8, pp=1, global_batch=64,
                          efficiency=Efficiency(compute=0.41, hbm=0.77, network=0.6),
                          techniques=("recompute", "zero"))
    loaded, _ = sf.loads(sf.dumps(sc))
    assert loaded == sc
    assert loaded.hardware.notes["hbm_bw"] == "measured with STREAM, 90% of nominal"
    assert loaded.hardware.scaleup_bw == (0.1 + 0.2) * 1e12  # floats are written exactly (repr), not rounded
    assert loaded.efficiency.compute == 0.41 and loaded.techniques == ("recompute", "zero")


def test_every_scenario_field_is_written(scenario):
    doc = json.loads(sf.dumps(scenario))
    from dataclasses import fields
    assert {f.name for f in fields(Scenario)} == set(doc["scenario"])
    assert {f.name for f in fields(Hardware)} == set(doc["scenario"]["hardware"])
    assert doc[sf.VERSION_KEY] == sf.CURRENT_VERSION == 2
    assert set(sf.LOADERS) == {1, 2}


def test_version_1_inference_keeps_tensor_parallelism_over_all_gpus(scenario):
    """Version 1 ignored `pp` for inference (TP over all GPUs); version 2 reads it as pipeline stages. A v1 decode
    scenario saved with a training PP of 2 loads with pp = 1, its slides too; the same scenario as v2 keeps PP2."""
    decode = scenario.replace(kind="decode", gpus=8, pp=2)
    doc = json.loads(sf.dumps(decode, Deck("d", (Slide("s", "", decode),))))
    assert sf.loads(json.dumps(doc))[0].pp == 2
    doc[sf.VERSION_KEY] = 1
    loaded, deck = sf.loads(json.dumps(doc))
    assert loaded == decode.replace(pp=1) and deck.slides[0].scenario == decode.replace(pp=1)
    train = json.loads(sf.dumps(scenario))
    train[sf.VERSION_KEY] = 1
    assert sf.loads(json.dumps(train))[0] == scenario  # training keeps its PP


def test_save_and_load_file(tmp_path, scenario, deck):
    path = sf.save(tmp_path / "talk.trinity.json", scenario, deck)
    assert sf.load(path) == (scenario, deck)
    assert [p.name for p in tmp_path.iterdir()] == ["talk.trinity.json"]  # no temporary file left


def test_save_is_atomic_when_writing_fails(tmp_path, scenario, deck, monkeypatch):
    path = tmp_path / "work.json"
    sf.save(path, scenario)
    before = path.read_bytes()

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(sf.os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        sf.save(path, scenario.replace(tp=4), deck)
    assert path.read_bytes() == before  # the old file is intact
    assert [p.name for p in tmp_path.iterdir()] == ["work.json"]  # and the temporary file is gone


# hypothesis: random valid scenarios built from presets and field choices
_TRAIN_HW = sorted(k for k, h in HW.items() if h.scaleup_bw > 0 or h.scaleout_bw > 0)


@st.composite
def scenarios(draw):
    model = MODELS[draw(st.sampled_from(sorted(MODELS)))]
    hw = HW[draw(st.sampled_from(sorted(HW)))]
    kind = draw(st.sampled_from(("train", "prefill", "decode")))
    eff = Efficiency(*(draw(st.floats(0.01, 1.0, allow_nan=False)) for _ in range(3)))
    common = dict(hardware=hw, model=model, kind=kind, efficiency=eff,
                  techniques=tuple(draw(st.lists(st.text(max_size=12), max_size=3))),
                  gpus_per_node=draw(st.sampled_from((1, 4, 8))))
    if kind == "train":
        tp = draw(st.sampled_from([t for t in (1, 2, 4, 8) if model.heads % t == 0]))
        pp = draw(st.sampled_from([p for p in (1, 2, 4) if p <= model.layers]))
        cp = draw(st.sampled_from((1, 2)))
        dp = draw(st.sampled_from((1, 2, 4)))
        mb = draw(st.sampled_from((1, 2)))
        fields = dict(gpus=tp * pp * cp * dp, tp=tp, pp=pp, cp=cp, micro_batch=mb,
                      global_batch=mb * dp * draw(st.integers(1, 16)), seq_len=2048 * draw(st.integers(1, 4)),
                      zero=draw(st.integers(0, 3)), recompute=draw(st.sampled_from(("none", "selective", "full"))),
                      flash_attention=draw(st.booleans()), sequence_parallel=draw(st.booleans()),
                      precision=draw(st.sampled_from(("bf16", "fp16", "fp8", "fp32"))),
                      optimizer=draw(st.sampled_from(("adamw", "sgd", "adam8bit"))),
                      offload=draw(st.sampled_from(("none", "optimizer", "activations"))),
                      grad_compression=draw(st.floats(1.0, 1000.0)),
                      in_network_aggregation=draw(st.booleans()))
    else:
        fields = dict(gpus=draw(st.sampled_from([g for g in (1, 2, 4, 8) if model.heads % g == 0])),
                      batch=draw(st.integers(1, 256)), prompt_len=draw(st.integers(1, 65536)),
                      gen_len=draw(st.integers(1, 8192)),
                      weight_dtype=draw(st.sampled_from(("fp32", "bf16", "fp16", "fp8", "int8", "int4"))),
                      kv_dtype=draw(st.sampled_from(("fp32", "bf16", "fp16", "fp8", "int8", "int4"))),
                      kv_policy=draw(st.sampled_from(("full", "window", "streaming", "h2o", "razor"))),
                      kv_window=draw(st.integers(1, 8192)), kv_sinks=draw(st.integers(0, 64)),
                      kv_heavy_ratio=draw(st.floats(0.001, 1.0)),
                      razor_retrieval_fraction=draw(st.floats(0.0, 1.0)))
    try:
        sc = Scenario(**common, **fields)
        evaluate(sc)
    except ValidationError:
        assume(False)
    return sc


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(scenarios(), st.lists(st.tuples(st.text(max_size=30), st.text(max_size=200),
                                       st.lists(st.sampled_from(DOCKS), max_size=4, unique=True)), max_size=3),
       st.booleans())
def test_round_trip_property(sc, slide_parts, with_deck):
    deck = Deck("deck", tuple(Slide(t, c, sc, tuple(d)) for t, c, d in slide_parts)) if with_deck else None
    assert sf.loads(sf.dumps(sc, deck)) == (sc, deck)


# --- bad files: each class refused with its message, nothing returned ------------------------------------

def test_malformed_json_names_line_and_column(good_text):
    bad = good_text.replace('"kind": "train"', '"kind": train', 1)
    line = good_text[:good_text.index('"kind": "train"')].count("\n") + 1
    message = _refused(bad, "malformed JSON", f"line {line}, column")
    assert re.search(r"column \d+", message)


@pytest.mark.parametrize("fraction", [0.001, 0.3, 0.5, 0.9, 0.999])
def test_truncated_file_says_truncated(good_text, fraction):
    _refused(good_text[: int(len(good_text) * fraction)], "truncated")


def test_oversized_file_refused_before_reading_it(tmp_path, monkeypatch):
    path = tmp_path / "huge.json"
    with open(path, "wb") as f:
        f.write(b'{"trinity_session": 1, "pad": "')
        f.seek(sf.MAX_BYTES + 10)
        f.write(b'"}')
    read_sizes = []
    real_open = open

    def spy_open(p, mode="r", *a, **k):
        handle = real_open(p, mode, *a, **k)
        real_read = handle.read
        handle_read = lambda n=-1: (read_sizes.append(n), real_read(n))[1]  # noqa: E731
        try:
            handle.read = handle_read
        except AttributeError:
            pass
        return handle

    monkeypatch.setattr("builtins.open", spy_open)
    with pytest.raises(sf.SessionFileError, match="oversized") as info:
        sf.load(path)
    assert "huge.json" in str(info.value) and "5 MB" in str(info.value)
    assert read_sizes and all(0 < n <= sf.MAX_BYTES + 1 for n in read_sizes)  # never the whole file
    _refused(" " * (sf.MAX_BYTES + 1), "oversized")


def test_future_version_refused(good_text):
    _refused(_edited(good_text, lambda d: d.update(trinity_session=7)),
             "written by a newer Trinity Desktop: version 7, this one reads up to 2")


@pytest.mark.parametrize("edit, fragments", [
    (lambda d: d["scenario"]["hardware"].update(hbm_bw=-1), ("scenario.hardware.hbm_bw: must be a number > 0",)),
    (lambda d: d["scenario"]["hardware"].update(hbm_bw="fast"), ("scenario.hardware.hbm_bw: must be a number",)),
    (lambda d: d["scenario"]["hardware"]["peak_flops"].update(bf16=0), ("scenario.hardware.peak_flops.bf16",)),
    (lambda d: d["scenario"]["model"].pop("layers"), ("scenario.model.layers: is missing",)),
    (lambda d: d["scenario"]["model"].update(kv_heads=7), ("scenario.model.kv_heads", "divisor of heads")),
    (lambda d: d["scenario"].update(tp=3), ("scenario.tp", "divisor", "(got 3)")),
    (lambda d: d["scenario"].update(tp=8.0), ("scenario.tp: must be a whole number",)),
    (lambda d: d["scenario"].update(precision="fp4"), ("scenario.precision", "bf16, fp16, fp8, fp32")),
    (lambda d: d["scenario"]["efficiency"].update(compute=2), ("scenario.efficiency.compute", "between 0.01 and 1")),
    (lambda d: d["scenario"].update(flash_attention="yes"), ("scenario.flash_attention: must be true or false",)),
    (lambda d: d["scenario"].update(warp_drive=True), ("scenario.warp_drive", "not a Scenario field")),
    (lambda d: d.pop("scenario"), ("scenario: is missing",)),
    (lambda d: d.pop("trinity_session"), ("no 'trinity_session' version key",)),
    (lambda d: d["deck"]["slides"][1]["scenario"].update(gpus=3), ("deck.slides[1].scenario.gpus",)),
    (lambda d: d["deck"]["slides"][1].update(layout="not base64!"), ("deck.slides[1].layout", "base64")),
    (lambda d: d["deck"]["slides"][0].update(focus=["workload"]), ("deck.slides[0].focus",)),
    (lambda d: d["deck"]["slides"][0].update(docks="dock_heatmap"), ("deck.slides[0].docks",)),
])
def test_invalid_field_names_its_path(good_text, edit, fragments):
    _refused(_edited(good_text, edit), *fragments)


def test_not_a_session_file():
    _refused("", "empty file")
    _refused("[1, 2]", "not a Trinity Desktop session file")
    _refused(b"\xff\xfe\x00garbage", "not UTF-8")
    _refused("[" * 100_000 + "]" * 100_000, "nested too deeply")


def test_refusal_leaves_the_callers_state_untouched(tmp_path, scenario, deck, good_text):
    """A deck whose last slide is bad is refused whole: nothing (no partial deck) comes back."""
    bad = tmp_path / "bad.json"
    bad.write_text(_edited(good_text, lambda d: d["deck"]["slides"][-1]["scenario"].update(seq_len=0)))
    state = (scenario, deck)
    try:
        state = sf.load(bad)
    except sf.SessionFileError as exc:
        assert "bad.json: deck.slides[1].scenario.seq_len" in str(exc)
        assert exc.field == "deck.slides[1].scenario.seq_len"
    assert state == (scenario, deck) and state[0] is scenario and state[1] is deck
    with pytest.raises(sf.SessionFileError, match="cannot be read"):
        sf.load(tmp_path / "missing.json")


# --- deck helpers -----------------------------------------------------------------------------------------

def test_deck_helpers_return_new_decks(scenario):
    a, b, c = (Slide(t, "", scenario) for t in "abc")
    deck = Deck("d").add_slide(a).add_slide(c).add_slide(b, 1)
    assert [s.title for s in deck.slides] == ["a", "b", "c"]
    assert [s.title for s in deck.move_slide(0, 2).slides] == ["b", "c", "a"]
    assert [s.title for s in deck.move_slide(2, 0).slides] == ["c", "a", "b"]
    assert [s.title for s in deck.remove_slide(1).slides] == ["a", "c"]
    assert deck.with_caption(1, "new").slides[1].caption == "new"
    assert deck.with_title(2, "C").slides[2].title == "C"
    assert [s.title for s in deck.slides] == ["a", "b", "c"]  # the original is unchanged
    with pytest.raises(IndexError):
        deck.move_slide(0, 3)
    with pytest.raises(IndexError):
        deck.remove_slide(-1)
    with pytest.raises(ValidationError):
        Slide("x", "", scenario, focus=("only one",))


# --- shipped decks ----------------------------------------------------------------------------------------

def test_shipped_decks_open_and_evaluate():
    files = sorted(DECK_DIR.glob("*.json"))
    assert example_decks() == files
    assert 2 <= len(files) <= 7  # the four first decks, "The edge and the synthesis", "Scale over time", "Serving at scale"
    titles = set()
    for path in files:
        scenario, deck = sf.load(path)
        assert deck is not None and len(deck.slides) >= 4, path.name
        titles.add(deck.title)
        assert scenario == deck.slides[0].scenario
        for slide in deck.slides:
            assert slide.title and len(slide.caption) > 40, (path.name, slide.title)
            assert slide.docks and set(slide.docks) <= set(DOCKS), (path.name, slide.title)
            assert slide.layout == ""
            r = evaluate(slide.scenario)
            assert all(math.isfinite(v) for v in (*r.memory.values(), *r.time.values(), r.time_total))
    assert {"The coupled triangle", "Training's memory wall", "Inference reality"} <= titles


def test_memory_wall_deck_tells_the_story():
    """Each technique lowers memory per GPU; the baseline does not fit an H100 and ZeRO-3 is the first that does
    (ZeRO-1 needs 83 GB once the logits, NCCL buffers and the runtime are counted: its caption says so)."""
    _, deck = sf.load(DECK_DIR / "training_memory_wall.json")
    results = [evaluate(s.scenario) for s in deck.slides]
    assert not results[0].fits
    totals = [r.memory_total for r in results]
    assert totals == sorted(totals, reverse=True)
    first_fit = next(i for i, r in enumerate(results) if r.fits)
    assert deck.slides[first_fit].scenario.zero == 3
    # the caption's numbers are the model's numbers
    from trinity_desktop.captions import slide_caption

    assert f"{results[0].memory_total / 1e9:.1f} GB" in slide_caption(deck, 0, results[0])


def test_no_stray_files_in_deck_dir():
    assert all(p.suffix == ".json" for p in DECK_DIR.iterdir() if not p.name.startswith("__")), os.listdir(DECK_DIR)


def test_virtual_stages_round_trip_and_old_files_default_to_plain_1f1b(scenario):
    inter = scenario.replace(pp=4, virtual_stages=2)
    assert sf.loads(sf.dumps(inter))[0] == inter
    doc = json.loads(sf.dumps(scenario))
    del doc["scenario"]["virtual_stages"]  # a file written before interleaving existed
    assert sf.loads(json.dumps(doc))[0].virtual_stages == 1


def test_layout_planner_deck_ends_on_the_planners_fastest_layout():
    from trinity_desktop.model.search.planner import plan_training

    _, deck = sf.load(DECK_DIR / "layout_planner.json")
    first, inter, _, fastest = (s.scenario for s in deck.slides)
    assert not evaluate(first).fits and evaluate(inter).fits and inter.virtual_stages == 8
    best = plan_training(first.model, first.hardware, first.gpus, first.global_batch, first.seq_len).best
    assert evaluate(fastest).time_total == best.time_per_step_s
    assert "dock_planner" in deck.slides[2].docks
