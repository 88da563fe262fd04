"""Effective bits per weight of each stored format, hand-derived from its definition, and the core using them."""

import pytest

from trinity_desktop.model import Scenario, ValidationError, evaluate
from trinity_desktop.model.base.dtypes import BYTES_PER_ELEMENT, WEIGHT_FORMAT
from trinity_desktop.model.inputs.presets import hardware_presets, model_presets

# (format, bytes per block, weights per block): ggml-common.h static_asserts; GPTQ/AWQ: 4-bit codes + fp16 scale +
# 4-bit zero per 128; NF4+DQ: QLoRA §3; NVFP4: E4M3 per 16; MXFP4: E8M0 per 32.
HAND = {
    "q8_0": 34 * 8 / 32, "q6_k": 210 * 8 / 256, "q5_k": 176 * 8 / 256, "q4_k": 144 * 8 / 256,
    "q4_0": 18 * 8 / 32, "q3_k": 110 * 8 / 256, "q2_k": 84 * 8 / 256,
    "gptq4_g128": 4 + 20 / 128, "awq4_g128": 4 + 20 / 128, "nf4_dq": 4 + 8 / 64 + 32 / (64 * 256),
    "nvfp4": 4.5, "mxfp4": 4.25,
    "fp8": 8.0,   # per-tensor scaling: 32 bits / 4096² weights is below 1e-6 bits per weight, counted as 0
}


@pytest.mark.parametrize("fmt", sorted(HAND))
def test_effective_bits(fmt):
    assert WEIGHT_FORMAT[fmt].effective_bits == pytest.approx(HAND[fmt])
    assert BYTES_PER_ELEMENT[fmt] == pytest.approx(HAND[fmt] / 8)


def test_published_values():
    assert [WEIGHT_FORMAT[k].effective_bits for k in ("q8_0", "q6_k", "q5_k", "q4_k", "q4_0", "q3_k")] == [
        8.5, 6.5625, 5.5, 4.5, 4.5, 3.4375]
    assert WEIGHT_FORMAT["nf4_dq"].effective_bits - 4 == pytest.approx(0.127, abs=5e-4)


def _decode(weight_dtype):
    return Scenario(hardware=hardware_presets()["laptop-x86-ddr5"], model=model_presets()["llama-3.2-1b"],
                    kind="decode", gpus=1, gpus_per_node=1, batch=1, weight_dtype=weight_dtype)


def test_memory_and_decode_use_effective_bits():
    bf16, q4k = evaluate(_decode("bf16")), evaluate(_decode("q4_k"))
    assert q4k.memory["weights"] == pytest.approx(bf16.memory["weights"] * 4.5 / 16)
    assert q4k.infer["time_per_output_token_s"] < bf16.infer["time_per_output_token_s"]
    int4 = evaluate(_decode("int4"))  # existing names keep working
    assert q4k.memory["weights"] == pytest.approx(int4.memory["weights"] * 4.5 / 4)


def test_unknown_format_refused():
    with pytest.raises(ValidationError):
        _decode("q1_x")


def test_residency_curve_uses_effective_bits():
    from trinity_desktop.model.step.kv_residency import residency_curve

    sc = _decode("bf16").replace(kv_dtype="fp16")
    full, q4k = residency_curve(sc), residency_curve(sc.replace(weight_dtype="q4_k"))
    assert float(q4k.weights_bytes.flat[0]) == pytest.approx(float(full.weights_bytes.flat[0]) * 4.5 / 16)


def test_stored_bits_cover_the_codes():
    for f in WEIGHT_FORMAT.values():
        per_tensor = f.block == 1 and f.overhead_bits == 0   # FP8: one scale per tensor, counted as 0
        assert f.code_bits < f.effective_bits <= f.code_bits + 1 or per_tensor   # scales cost under a bit


def test_cli_infer_takes_a_stored_format(capsys):
    import json

    from trinity_desktop.cli import run_cli

    args = ["calc", "infer", "--model", "llama-3.2-1b", "--hardware", "laptop-x86-ddr5", "--batch", "1", "--json"]
    assert run_cli([*args, "--weight-dtype", "q4_k"]) == 0
    q4k = json.loads(capsys.readouterr().out)
    assert run_cli([*args, "--weight-dtype", "bf16"]) == 0
    bf16 = json.loads(capsys.readouterr().out)
    assert q4k["weights_bytes"] == pytest.approx(bf16["weights_bytes"] * 4.5 / 16)


def test_huang_low_bit_points_as_read():
    """Huang et al. 2024, LLaMA3-8B post-training quantization table (WikiText2): fp16 6.1; GPTQ g128 6.5 / 8.2 /
    2.1E2 at 4 / 3 / 2 bits; stored bits b + (16 + b) / 128."""
    from trinity_desktop.model.views.quant_quality import low_bit_points
    rows = {(p.method, p.bits): p for p in low_bit_points()}
    assert rows[("GPTQ", 4)].perplexity == 6.5 and rows[("GPTQ", 2)].perplexity == 210.0
    assert rows[("AWQ", 2)].perplexity == 1.7e6 and all(p.fp16_perplexity == 6.1 for p in rows.values())
    assert rows[("GPTQ", 4)].stored_bits == 4 + 20 / 128 == WEIGHT_FORMAT["gptq4_g128"].effective_bits
    assert rows[("GPTQ", 3)].delta_pct == pytest.approx(100 * (8.2 / 6.1 - 1))


def test_formats_listed_once():
    from trinity_desktop.model.base.dtypes import WEIGHT_FORMATS

    assert len(WEIGHT_FORMATS) == len(set(WEIGHT_FORMATS)) and "fp8" in WEIGHT_FORMATS
