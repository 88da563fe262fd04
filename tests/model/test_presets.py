"""Presets (resources/*.toml) and user files: loading, provenance, and refusals with a message."""

from __future__ import annotations

import tomllib
from importlib import resources

import pytest

from trinity_desktop.model import Architecture, Hardware, Scenario, ValidationError, evaluate
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.inputs.presets import PresetError, load_hardware_file, load_model_file

RESOURCE_FILES = ("hardware.toml", "models.toml", "workloads.toml", "references.toml")
# Keys of a workload entry that are not Scenario fields.
WORKLOAD_META = {"key", "name", "description", "model", "source", "hardware"}
DEFAULT_WORKLOAD_HARDWARE = "h100-sxm"


def _raw(filename: str) -> dict:
    return tomllib.loads(resources.files("trinity_desktop.resources").joinpath(filename).read_text("utf-8"))


def _sources(node, path=""):
    """Every value of a key named `source`, anywhere in a TOML document (top level or inline tables)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "source" and isinstance(v, str):
                yield path, v
            else:
                yield from _sources(v, f"{path}.{k}" if path else k)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            label = v.get("key", i) if isinstance(v, dict) else i
            yield from _sources(v, f"{path}[{label}]")


def scenario_from_workload(entry: dict, hardware: Hardware | None = None) -> Scenario:
    """Build the Scenario a workload-library row describes (candidate to move into model.presets).

    `model` is a models.toml key; `hardware` (optional) a hardware.toml key, else h100-sxm; every other key
    except key/name/description/source is a Scenario field name."""
    models, hw_presets = presets.model_presets(), presets.hardware_presets()
    if hardware is None:
        hardware = hw_presets[entry.get("hardware", DEFAULT_WORKLOAD_HARDWARE)]
    fields = {k: v for k, v in entry.items() if k not in WORKLOAD_META}
    return Scenario(hardware=hardware, model=models[entry["model"]], **fields)


# --- the shipped presets ----------------------------------------------------------------------

def test_every_resource_file_parses():
    for name in RESOURCE_FILES:
        assert _raw(name), name


def test_presets_load():
    hw, models, refs, workloads = (presets.hardware_presets(), presets.model_presets(), presets.references(),
                                   presets.workload_library())
    assert len(hw) >= 8 and len(models) >= 15 and len(refs) >= 20 and len(workloads) >= 8
    assert all(isinstance(h, Hardware) for h in hw.values())
    assert all(isinstance(m, Architecture) for m in models.values())
    for key in ("h100-sxm", "a100-80gb-sxm", "h200-sxm", "mi300x"):
        assert key in hw
    for key in ("llama-2-7b", "llama-3-8b", "gpt3-175b", "deepseek-v3", "korthikanti-175b", "opt-13b"):
        assert key in models
    # keys are unique in each file (a dict would silently drop a duplicate)
    for name, table in (("hardware.toml", "hardware"), ("models.toml", "model"), ("workloads.toml", "workload"),
                        ("references.toml", "reference")):
        keys = [e["key"] for e in _raw(name)[table]]
        assert len(keys) == len(set(keys)), name


@pytest.mark.parametrize("filename", ["hardware.toml", "models.toml", "workloads.toml"])
def test_every_source_is_a_reference(filename):
    refs = presets.references()
    found = list(_sources(_raw(filename)))
    assert found, f"{filename} names no source at all"
    missing = [(where, src) for where, src in found if src not in refs]
    assert not missing, f"{filename}: sources missing from references.toml: {missing}"


def test_every_model_and_hardware_has_a_source():
    for m in presets.model_presets().values():
        assert m.source, m.key
    for hw in presets.hardware_presets().values():
        assert hw.sources.get("hbm_bw") and hw.sources.get("hbm_bytes"), hw.key


def test_references_have_citations():
    for key, ref in presets.references().items():
        assert ref.title and ref.authors and ref.year, key
        assert ref.citation()


def test_hardware_presets_are_sane():
    for hw in presets.hardware_presets().values():
        assert hw.peak("bf16") > 0 and hw.hbm_bw > 0 and hw.hbm_bytes > 0, hw.key
        # dense peaks: fp8 (if any) is at most twice bf16, never the 4x a sparse figure would give
        if "fp8" in hw.peak_flops:
            assert hw.peak_flops["fp8"] <= 2 * hw.peak("bf16") * 1.0001, hw.key


def test_preset_lookup_by_key_or_name():
    models = presets.model_presets()
    assert presets.find(models, "LLAMA-3-8B", "model").key == "llama-3-8b"
    assert presets.find(models, "Llama-2-7B", "model").key == "llama-2-7b"
    with pytest.raises(ValidationError) as info:
        presets.find(models, "llama-9", "model")
    assert info.value.field == "model" and "llama-3-8b" in str(info.value)


@pytest.mark.parametrize("key", list(presets.workload_library()))
def test_every_workload_builds_a_valid_scenario(key):
    entry = presets.workload_library()[key]
    assert entry["model"] in presets.model_presets(), entry["model"]
    assert entry.get("source") in presets.references(), entry.get("source")
    assert entry.get("name") and entry.get("description")
    sc = scenario_from_workload(entry)
    assert sc.kind == entry["kind"]
    r = evaluate(sc)
    assert r.time_total > 0 and r.memory_total > 0
    if sc.kind == "train":
        assert sc.gpus == sc.tp * sc.pp * sc.cp * sc.dp


def test_workload_korthikanti_table3_layout():
    sc = scenario_from_workload(presets.workload_library()["korthikanti-175b-table3"],
                                presets.hardware_presets()["a100-80gb-sxm"])
    assert (sc.tp, sc.pp, sc.dp, sc.micro_batches, sc.seq_len) == (8, 8, 1, 64, 2048)
    # Korthikanti et al. trained this on 80 GB A100s: it must fit
    assert evaluate(sc).fits


# --- user files -----------------------------------------------------------------------------------

GOOD_MODEL = """
name = "tiny"
layers = 4
hidden = 512
heads = 8
vocab = 1000
"""

GOOD_HARDWARE = """
key = "my-gpu"
name = "My GPU"
peak_bf16 = 100e12
hbm_bytes = 24e9
hbm_bw = { value = 1e12, source = "modelling-assumption", status = "A" }
scaleout_bw = 25e9
"""


def test_good_user_model_file(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(GOOD_MODEL)
    [m] = load_model_file(path)
    assert (m.key, m.name, m.layers, m.hidden, m.heads, m.vocab) == ("tiny", "tiny", 4, 512, 8, 1000)
    assert m.head_dim == 512 // 8
    assert m.kv_heads == 8 and m.attention == "mha"
    assert m.ffn_hidden == 4 * 512
    # counts follow: 4 x (4h² + 3h·4h + 2h) + 2vh + h (gated MLP, untied, RMSNorm by default)
    h, v = 512, 1000
    assert m.params_total() == 4 * (4 * h * h + 3 * h * 4 * h + 2 * h) + 2 * v * h + h


def test_user_model_gqa_and_array_form(tmp_path):
    path = tmp_path / "two.toml"
    path.write_text("""
[[model]]
key = "a"
name = "A"
layers = 2
hidden = 256
heads = 8
kv_heads = 2
vocab = 100

[[model]]
key = "b"
name = "B"
layers = 2
hidden = 256
heads = 8
kv_heads = 1
vocab = 100
""")
    a, b = load_model_file(path)
    assert a.attention == "gqa" and b.attention == "mqa"
    assert a.kv_width == 2 * 32


def test_good_user_hardware_file(tmp_path):
    path = tmp_path / "gpu.toml"
    path.write_text(GOOD_HARDWARE)
    [hw] = load_hardware_file(path)
    assert hw.key == "my-gpu" and hw.hbm_bw == 1e12 and hw.ridge_point() == pytest.approx(100.0)
    assert hw.sources["hbm_bw"] == "modelling-assumption"
    sc = Scenario(hardware=hw, model=presets.model_presets()["llama-3.2-1b"], gpus=1, global_batch=8,
                  seq_len=1024)
    assert evaluate(sc).time_total > 0


def _error(loader, tmp_path, text, name="bad.toml") -> PresetError:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(PresetError) as info:
        loader(path)
    exc = info.value
    assert isinstance(exc, ValidationError)  # the UI catches one error type
    assert str(path) in str(exc)  # names the file
    return exc


@pytest.mark.parametrize("text, key, words", [
    (GOOD_MODEL.replace("layers = 4\n", ""), "layers", "required"),
    (GOOD_MODEL.replace("layers = 4", 'layers = "abc"'), "layers", "whole number"),
    (GOOD_MODEL.replace("layers = 4", "layers = 0"), "layers", "whole number"),
    (GOOD_MODEL.replace("layers = 4", "layers = 4.5"), "layers", "whole number"),
    (GOOD_MODEL + "colour = 3\n", "colour", "not a model key"),
    (GOOD_MODEL + "gated_mlp = 1\n", "gated_mlp", "true or false"),
    (GOOD_MODEL.replace("heads = 8", "heads = 8\nkv_heads = 3"), "kv_heads", "divisor"),
    (GOOD_MODEL.replace("hidden = 512", "hidden = 500"), "head_dim", "required"),
    (GOOD_MODEL + 'attention = "linear"\n', "attention", "one of"),
])
def test_bad_user_model_file(tmp_path, text, key, words):
    exc = _error(load_model_file, tmp_path, text)
    assert exc.key == key
    assert f": {key}:" in str(exc)
    assert words in str(exc)


@pytest.mark.parametrize("text, key, words", [
    (GOOD_HARDWARE.replace("hbm_bw = { value = 1e12,", "hbm_bw = { value = -1e12,"), "hbm_bw", ">= 0"),
    (GOOD_HARDWARE.replace("hbm_bw = { value = 1e12,", "hbm_bw = { value = 0,"), "hbm_bw", "> 0"),
    (GOOD_HARDWARE.replace("hbm_bytes = 24e9", 'hbm_bytes = "24 GB"'), "hbm_bytes", "number"),
    (GOOD_HARDWARE.replace("hbm_bytes = 24e9\n", ""), "hbm_bytes", "required"),
    (GOOD_HARDWARE.replace("peak_bf16 = 100e12", "peak_fp32 = 10e12"), "peak_bf16", "required"),
    (GOOD_HARDWARE.replace("peak_bf16 = 100e12", "peak_bf16 = 0"), "peak_bf16", "> 0"),
    (GOOD_HARDWARE + "hbm_bw_typo = 1\n", "hbm_bw_typo", "not a hardware key"),
    (GOOD_HARDWARE.replace("hbm_bw = { value = 1e12,", "hbm_bw = {"), "hbm_bw", "value"),
    (GOOD_HARDWARE.replace("scaleout_bw = 25e9", "scaleout_bw = inf"), "scaleout_bw", "finite"),
    (GOOD_HARDWARE.replace("scaleout_bw = 25e9", "scaleout_bw = nan"), "scaleout_bw", "finite"),
    (GOOD_HARDWARE + "gpus_per_node_default = 0\n", "gpus_per_node_default", "whole number"),
])
def test_bad_user_hardware_file(tmp_path, text, key, words):
    exc = _error(load_hardware_file, tmp_path, text)
    assert exc.key == key
    assert words in str(exc)


@pytest.mark.parametrize("loader", [load_model_file, load_hardware_file])
def test_malformed_toml(tmp_path, loader):
    exc = _error(loader, tmp_path, 'name = "x"\nlayers = = 3\n')
    assert exc.key == "TOML"
    assert "line 2" in str(exc)


@pytest.mark.parametrize("loader", [load_model_file, load_hardware_file])
def test_oversized_file(tmp_path, loader):
    text = GOOD_MODEL + "#" * 1_000_001 + "\n"
    exc = _error(loader, tmp_path, text, name="huge.toml")
    assert exc.key == "file"
    assert "limit" in str(exc) and "1000000" in str(exc)


def test_missing_file(tmp_path):
    with pytest.raises(PresetError) as info:
        load_model_file(tmp_path / "nope.toml")
    assert info.value.key == "file"


def test_not_utf8(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(GOOD_MODEL.replace("tiny", "t\xefny").encode("latin-1"))
    with pytest.raises(PresetError) as info:
        load_model_file(path)
    assert info.value.key == "file" and "UTF-8" in str(info.value)


def test_bad_array_of_tables(tmp_path):
    exc = _error(load_model_file, tmp_path, 'model = "llama"\n')
    assert exc.key == "model"


def test_library_is_evaluated_once_per_hardware_and_efficiency(monkeypatch):
    """The heatmap and the triangle both show the library: the second call reuses the first's rows."""
    from trinity_desktop.model import Efficiency
    from trinity_desktop.model.views import workloads

    calls = []
    real = workloads.evaluate
    monkeypatch.setattr(workloads, "evaluate", lambda sc: calls.append(sc) or real(sc))
    monkeypatch.setattr(workloads, "_last", None)
    hw = presets.hardware_presets()["h100-sxm"]
    first = workloads.evaluate_library(hw)
    n = len(calls)
    assert n > 0
    again = workloads.evaluate_library(hw)
    assert len(calls) == n and [r.key for r in again] == [r.key for r in first]
    workloads.evaluate_library(presets.hardware_presets()["h200-sxm"])
    assert len(calls) > n  # other hardware: evaluated anew
    base = first[0].scenario.replace(efficiency=Efficiency(compute=0.4))
    m = len(calls)
    rows = workloads.evaluate_library(hw, base)
    assert len(calls) > m and rows[0].scenario.efficiency.compute == 0.4
