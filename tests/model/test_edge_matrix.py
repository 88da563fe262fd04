"""The edge matrix: every cell is the core's decode roofline at the format's stored bits; hand-derived checks."""

import numpy as np
import pytest

from trinity_desktop.model import Scenario, evaluate
from trinity_desktop.model.inputs.presets import model_presets
from trinity_desktop.model.views.edge_matrix import edge_matrix, largest_meeting
from trinity_desktop.model.views.split import edge_devices


def test_cells_equal_evaluate():
    m = edge_matrix()
    i, j, k = m.devices.index("laptop-x86-ddr5"), m.models.index("llama-3.2-3b"), m.formats.index("q4_k")
    sc = Scenario(hardware=edge_devices()["laptop-x86-ddr5"].hardware, model=model_presets()["llama-3.2-3b"],
                  kind="decode", gpus=1, gpus_per_node=1, batch=1, prompt_len=1024, gen_len=256,
                  weight_dtype="q4_k", kv_dtype="fp16")
    r = evaluate(sc)
    assert m.time_s[i, j, k] == pytest.approx(r.infer["time_per_output_token_s"])
    assert m.memory_bytes[i, j, k] == pytest.approx(r.memory_total)


def test_memory_bound_decode_scales_with_stored_bits():
    m = edge_matrix(devices=("laptop-x86-ddr5",), models=("llama-3-8b",), formats=("q8_0", "q4_0"))
    # batch-1 decode on a CPU is memory-bound: the weights dominate the bytes read, 8.5 vs 4.5 bits
    ratio = m.time_s[0, 0, 0] / m.time_s[0, 0, 1]
    assert 1.7 < ratio < 8.5 / 4.5 + 1e-9


def test_fit_and_limit():
    m = edge_matrix()
    phone = m.devices.index("phone-a17-pro")
    assert not m.fits[phone, m.models.index("llama-3-8b"), m.formats.index("bf16")]   # 16 GB > 8 GB
    assert not m.meets[:, m.models.index("llama-3-8b")].any()                         # above the 3B class
    assert m.meets[:, m.models.index("llama-3.2-1b"), m.formats.index("q4_k")].all()
    assert largest_meeting(m, "phone-a17-pro") == ("llama-3-8b", "q3_k")
    assert np.all(m.time_s > 0)
