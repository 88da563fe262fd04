"""Gated short-conv / attention block stacks: parameter counts against the published sizes, hand-derived per-token
costs, and the fixed conv state against attention's KV growth."""

import numpy as np
import pytest

from trinity_desktop.model.formulas.edge_blocks import (
    decode_bytes,
    decode_flops,
    head_weights,
    stack_weights,
    state_bytes,
)
from trinity_desktop.model.inputs.edge_architectures import block_stacks
from trinity_desktop.model.views.quant_quality import quality_curve

S = block_stacks()


def test_parameter_counts_match_published_sizes():
    assert (stack_weights(S["lfm2-350m"]) + head_weights(S["lfm2-350m"])) == pytest.approx(354e6, rel=0.01)
    assert (stack_weights(S["llama-3.2-1b-blocks"]) + head_weights(S["llama-3.2-1b-blocks"])) == pytest.approx(
        1.24e9, rel=0.01)
    assert S["lfm2-1.2b"].conv_layers == 10 and S["lfm2-1.2b"].attention_layers == 6


def test_conv_state_is_fixed_and_kv_grows():
    s = S["lfm2-1.2b"]
    n = np.array([1024.0, 2048.0])
    st = state_bytes(s, n)
    # 6 attention layers x 2 (K, V) x 8 heads x 64 x 2 bytes per token; conv: 10 x 3 x 2048 x 2 bytes fixed
    assert st[1] - st[0] == pytest.approx(1024 * 6 * 2 * 8 * 64 * 2)
    assert state_bytes(s, 0.0) == pytest.approx(10 * 3 * 2048 * 2)


def test_hand_derived_flops_and_bytes():
    s = S["llama-3.2-1b-blocks"]
    w = 16 * (2 * 2048 * 2048 + 2 * 2048 * 512 + 3 * 2048 * 8192) + 2048 * 128256
    assert decode_flops(s, 0.0) == pytest.approx(2 * w)
    assert decode_flops(s, 100.0) - decode_flops(s, 0.0) == pytest.approx(16 * 4 * 100 * 32 * 64)
    assert decode_bytes(s, 0.0, weight_bytes=1.0) == pytest.approx(w)


def test_quality_curve_bits_match_published_bpw():
    c = quality_curve()
    published = {"Q6_K": 6.56, "Q5_K_M": 5.65, "Q4_K_M": 4.80, "Q3_K_M": 3.85, "Q2_K": 3.40}
    for p, bits in zip(c.points, c.bits, strict=True):
        if p.format in published:
            assert bits == pytest.approx(published[p.format], abs=0.015)
    assert c.delta_pct[-1] == pytest.approx(8.82, abs=0.01)
    assert c.cliff is not None and c.step_ratio[c.cliff - 1] > 1 >= max(c.step_ratio[:c.cliff - 1])


def test_speedup_is_the_bytes_ratio_when_memory_bound():
    from trinity_desktop.model.formulas.edge_blocks import decode_bytes as db
    from trinity_desktop.model.views.edge_arch import context_reaching, edge_arch_curves

    c = edge_arch_curves("laptop-x86-ddr5", "q4_k", context=[4096.0, 32768.0])
    hybrid = c.by_role("hybrid")
    ratio = db(S["llama-3.2-1b-blocks"], 4096.0, 4.5 / 8) / db(S["lfm2-1.2b"], 4096.0, 4.5 / 8)
    assert hybrid.speedup[0] == pytest.approx(ratio)   # a laptop CPU decodes memory-bound at batch 1
    assert c.by_role("attention").speedup == pytest.approx([1.0, 1.0])
    full = edge_arch_curves()
    assert full.by_role("hybrid").speedup[-1] > full.by_role("hybrid").speedup[0]
    at = context_reaching(full, 2.0)
    assert at is not None and 32768 < at < 131072


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.floats(1, 1e6), st.floats(1, 1e6), st.sampled_from(["bf16", "q8_0", "q4_k", "q2_k"]))
def test_more_context_never_helps_attention(n1, n2, fmt):
    """Time per token grows with the context for every stack; the hybrid's advantage over attention never
    shrinks as the context grows (its KV grows 6/16 as fast, the conv state not at all)."""
    from trinity_desktop.model.views.edge_arch import edge_arch_curves

    lo, hi = sorted((n1, n2))
    c = edge_arch_curves("laptop-x86-ddr5", fmt, context=[lo, hi])
    for curve in c.curves:
        assert curve.time_s[1] >= curve.time_s[0] - 1e-15
    hybrid = c.by_role("hybrid").speedup
    assert hybrid[1] >= hybrid[0] - 1e-12 and hybrid[0] >= 1.0


def test_lfm2_sizes_from_their_configs():
    """The auto-adjusted FFN width (x 2/3, up to a multiple of 256) gives the 350M's published 4608 and the
    1.2B's 8192; the 700M's 6912 follows the same rule. Every LFM2 puts attention at blocks 2, 5, 8, 10, 12, 14."""
    def adjusted(block_ff_dim):
        return 256 * -(-int(2 * block_ff_dim / 3) // 256)

    assert [adjusted(6656), adjusted(12288), adjusted(10240)] == [4608, 8192, 6912]
    for key, ffn in (("lfm2-350m", 4608), ("lfm2-1.2b", 8192), ("lfm2-700m", 6912)):
        s = S[key]
        assert s.ffn_hidden == ffn
        assert [i for i, t in enumerate(s.layer_types) if t == "attention"] == [2, 5, 8, 10, 12, 14]
    sizes = [stack_weights(S[k]) + head_weights(S[k]) for k in ("lfm2-350m", "lfm2-700m", "lfm2-1.2b")]
    assert sizes == sorted(sizes) and 0.7e9 < sizes[1] < 0.76e9


def test_smaller_hybrids_compare_with_attention_at_their_own_widths():
    from trinity_desktop.model.views.edge_arch import edge_arch_curves

    c = edge_arch_curves(hybrid="lfm2-350m", context=[4096.0])
    attention = c.by_role("attention")
    assert "hypothetical" in attention.name and attention.speedup[0] == pytest.approx(1.0)
    assert c.by_role("hybrid").speedup[0] > 1.0
