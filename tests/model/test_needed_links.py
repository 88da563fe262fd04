"""Optional hardware values are present or explicitly absent, and an option or technique that needs one is
refused by name, never free (issue 26, "Optional fields" and "Missing links cost, or are refused")."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import pytest

from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.inputs.hardware import OPTIONAL
from trinity_desktop.model.inputs.presets import hardware_presets, load_hardware_file, model_presets
from trinity_desktop.model.views import techniques
from trinity_desktop.model.views.roofline import roofline
from trinity_desktop.model.views.stages import stages
from trinity_desktop.model.views.variants import NOT_AVAILABLE, compare

MINIMAL_TOML = """
[[hardware]]
key = "minimal"
name = "Minimal device"
vendor = "Test"
kind = "datacenter-gpu"
peak_bf16 = 1e15
hbm_bytes = 80e9
hbm_bw = 3e12
"""


@pytest.fixture(scope="module")
def minimal(tmp_path_factory):
    path = tmp_path_factory.mktemp("hw") / "minimal.toml"
    path.write_text(MINIMAL_TOML, encoding="utf-8")
    (hw,) = load_hardware_file(path)
    return hw


def _every_hardware(minimal):
    return [*hardware_presets().values(), minimal]


def _base(hw, kind: str) -> Scenario:
    model = model_presets()["llama-2-7b"]
    return Scenario(hardware=hw, model=model, kind=kind, gpus=1, gpus_per_node=1, tp=1, pp=1, zero=0,
                    micro_batch=1, global_batch=8, seq_len=2048, batch=4, prompt_len=1024, gen_len=256)


def test_a_file_with_only_the_required_fields_has_every_optional_value_absent(minimal):
    assert all(minimal.absent(name) for name in OPTIONAL)
    assert not hardware_presets()["h100-sxm"].absent("host_link_bw")
    with pytest.raises(KeyError):
        minimal.absent("hbm_bw")  # required, never absent


def _views_work(scenario: Scenario) -> None:
    results = evaluate(scenario)
    assert math.isfinite(results.step_time_s if hasattr(results, "step_time_s") else 0.0)
    roofline(scenario)
    stages(scenario, results)
    for link, moved in results.bytes_by_link.items():
        bw = {"hbm": scenario.hardware.hbm_bw, "scale-up": scenario.hardware.scaleup_bw,
              "scale-out": scenario.hardware.scaleout_bw, "host": scenario.hardware.host_link_bw}.get(link)
        if bw is not None and float(moved) > 0:
            assert bw > 0, f"{scenario.hardware.key}: {float(moved):.3g} B over the absent {link} link for free"


@pytest.mark.parametrize("kind", ["train", "prefill", "decode"])
def test_every_technique_on_every_preset_and_the_minimal_file(minimal, kind):
    """Each technique either applies (and every view of the result works, with no bytes over an absent link)
    or is refused with a reason; nothing else is raised."""
    catalogue = techniques.load_techniques()
    applied = refused = 0
    for hw in _every_hardware(minimal):
        base = _base(hw, kind)
        before = evaluate(base)
        for key in catalogue:
            effect = techniques.technique_effect(base, key, before)
            if effect.applicable:
                _views_work(techniques.apply(key, base))
                applied += 1
            else:
                assert effect.reason and "\n" not in effect.reason
                refused += 1
    assert applied > 0 and refused > 0


@pytest.mark.parametrize("offload", ["optimizer", "activations", "nvme"])
def test_offload_without_a_host_link_is_refused_by_name(minimal, offload):
    with pytest.raises(ValidationError, match="host_link_bw is absent") as info:
        _base(minimal, "train").replace(offload=offload)
    assert info.value.field == "offload"


@pytest.mark.parametrize("hw_key", sorted(hardware_presets()))
def test_every_option_on_every_preset_is_refused_or_costs(hw_key):
    hw = hardware_presets()[hw_key]
    for kind in ("train", "decode"):
        for change in ({"offload": "optimizer"}, {"offload": "activations"}, {"offload": "nvme"},
                       {"kv_offload_fraction": 0.5}, {"kv_offload_fraction": 0.5, "kv_offload_tier": "cxl"},
                       {"kv_offload_tier": "cxl"}, {"precision": "fp8"}):
            try:
                scenario = _base(hw, kind).replace(**change)
            except ValidationError as exc:
                assert exc.field in change or exc.field == "precision", exc
                continue
            _views_work(scenario)


def test_cxl_on_a_tpu_is_refused_for_every_kind():
    tpu = hardware_presets()["tpu-v5p"]
    for kind in ("train", "prefill", "decode"):
        with pytest.raises(ValidationError, match="no CXL memory pool"):
            _base(tpu, kind).replace(kv_offload_tier="cxl")


def test_the_cli_refuses_offload_without_a_host_link_in_one_line(tmp_path):
    path = tmp_path / "minimal.toml"
    path.write_text(MINIMAL_TOML, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "trinity_desktop", "calc", "train", "--model", "llama-2-7b",
                          "--hardware-file", str(path), "--gpus", "1", "--offload", "optimizer"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip().count("\n") == 0 and "host_link_bw is absent" in run.stderr


def test_a_device_without_a_16_bit_peak_is_refused_when_loaded(tmp_path):
    """The split, edge-architecture and roofline views and the default precision time 16-bit work: a file whose
    device states only an 8-bit peak raised "precision" out of a panel (the GUI soak's ValidationError); it is
    now refused on load, naming the field."""
    path = tmp_path / "int8-only.toml"
    path.write_text(MINIMAL_TOML.replace("peak_bf16 = 1e15", "peak_int8 = 2e15"), encoding="utf-8")
    with pytest.raises(ValidationError, match="16-bit"):
        load_hardware_file(path)
    good = tmp_path / "minimal.toml"
    good.write_text(MINIMAL_TOML, encoding="utf-8")
    (hw,) = load_hardware_file(good)
    with pytest.raises(ValidationError, match="bf16 or fp16"):   # a device built any other way (a session)
        dataclasses.replace(hw, peak_flops={"int8": 2e15})
    run = subprocess.run([sys.executable, "-m", "trinity_desktop", "calc", "infer", "--model", "llama-2-7b",
                          "--hardware-file", str(path), "--gpus", "1"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr and run.stderr.strip().count("\n") == 0


@pytest.mark.parametrize("kind", ["train", "prefill", "decode"])
def test_a_kv_share_without_a_host_link_is_refused_for_every_kind(minimal, kind):
    """Training ignores the KV share, but the residency and roofline views serve it as decode: a training step
    with a share on a device without a host link raised from those views (#26)."""
    with pytest.raises(ValidationError, match="host_link_bw is absent") as info:
        _base(minimal, kind).replace(kv_offload_fraction=0.5)
    assert info.value.field == "kv_offload_fraction"


@pytest.mark.parametrize("hw_key", [*sorted(hardware_presets()), "minimal"])
def test_the_outcome_variants_on_every_preset_and_the_minimal_file(minimal, hw_key):
    """Every variant is evaluated or carries its reason; one the hardware cannot run is "not available on this
    hardware", naming the missing value (+ offload without a host link), never raised."""
    hw = minimal if hw_key == "minimal" else hardware_presets()[hw_key]
    for kind in ("train", "prefill", "decode"):
        for v in compare(_base(hw, kind)):
            assert v.applicable or (v.reason and "\n" not in v.reason), (hw_key, kind, v.name)
            if v.reason.startswith(NOT_AVAILABLE):
                assert "is absent" in v.reason or "has no" in v.reason, v.reason
    offload = {v.name: v for v in compare(_base(hw, "train"))}["+ offload"]
    assert offload.applicable == (not hw.absent("host_link_bw"))
    if not offload.applicable:
        assert offload.reason.startswith(NOT_AVAILABLE) and "host_link_bw is absent" in offload.reason


def test_the_link_refusals_name_the_absent_hardware_values(minimal):
    with pytest.raises(ValidationError, match="scaleup_bw and scaleout_bw are absent"):
        _base(minimal, "train").replace(gpus=2, tp=2)
    one_node = dataclasses.replace(minimal, scaleup_bw=450e9, gpus_per_node_default=8)
    with pytest.raises(ValidationError, match=r"scaleout_bw is absent"):
        _base(one_node, "train").replace(gpus=16, gpus_per_node=8, tp=8, pp=2)
    with pytest.raises(ValidationError, match="scaleout_bw is absent") as info:
        _base(minimal, "decode").replace(prefill_gpus=1, decode_gpus=1)
    assert info.value.field == "prefill_gpus"


def test_a_missing_link_refusal_is_typed_with_the_absent_field_and_a_reader_reason(minimal):
    """The panels read `MissingLinkError.missing` / `.why`, not the message's wording: every "needs a link" rule
    raises the typed error naming the absent field, and the message still reads as a one-line refusal."""
    from trinity_desktop.model.base.errors import MissingLinkError

    train = _base(minimal, "train")
    cases = [(lambda: train.replace(offload="optimizer"), "host_link_bw"),
             (lambda: _base(minimal, "decode").replace(kv_offload_fraction=0.5), "host_link_bw"),
             (lambda: train.replace(gpus=2, gpus_per_node=2, global_batch=8), "scaleup_bw, scaleout_bw")]
    for build, field in cases:
        with pytest.raises(MissingLinkError) as err:
            build()
        assert err.value.missing == field and field.split(",")[0] in err.value.why
        assert minimal.name in err.value.why and "\n" not in str(err.value) and len(str(err.value)) < 200
    # a layout refusal that is not about a link stays a plain ValidationError: "not valid here", not "not available"
    with pytest.raises(ValidationError) as plain:
        _base(hardware_presets()["h100-sxm"], "train").replace(tp=3)
    assert not isinstance(plain.value, MissingLinkError)
