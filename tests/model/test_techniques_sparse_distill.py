"""Sparse attention and distillation as catalogue techniques: computed through the core, with their sources."""

import dataclasses

import pytest

from trinity_desktop.model import ValidationError, evaluate
from trinity_desktop.model.claims.trinity import workload
from trinity_desktop.model.formulas.sparse_attention import (
    nsa_keys_read,
    read_ratio,
    strided_keys_read,
    strided_stride,
)
from trinity_desktop.model.inputs.presets import references
from trinity_desktop.model.views.techniques import (
    applicable,
    apply,
    load_techniques,
    path,
    previewable,
    technique_effect,
)

NEW = ("sliding-window-attention", "block-sparse-attention", "native-sparse-attention", "distillation-half-depth")


def test_in_catalogue_with_sources():
    cat = load_techniques()
    for key in NEW:
        assert key in cat and cat[key].citation in references()
    assert cat["native-sparse-attention"].modelled and cat["block-sparse-attention"].modelled


@pytest.mark.parametrize("context, published", [(8192, 4.0), (16384, 6.4), (32768, 9.1), (65536, 11.6)])
def test_nsa_reads_reproduce_table_4(context, published):
    """Yuan et al. 2025 Table 4: expected decoding speed-up = tokens read by full attention / by NSA."""
    assert float(read_ratio(context, nsa_keys_read(context))) == pytest.approx(published, abs=0.06)


def test_nsa_keys_by_hand():
    # 64k: (65536 - 32) // 16 + 1 = 4095 compressed + 16 x 64 selected + 512 window
    assert float(nsa_keys_read(65536)) == 4095 + 1024 + 512
    assert float(nsa_keys_read(16)) == 32  # before the first compression block: selection and window only


def test_strided_reads_two_sqrt_n():
    assert strided_stride(65536) == 256
    assert float(strided_keys_read(65536, 256)) == 256 + 256   # l local + n / l strided = 2 sqrt(n)


def _hbm_saving(key, keys_read):
    sc = workload("long-context-decode")
    e = technique_effect(sc, key)
    ctx = sc.prompt_len + sc.gen_len / 2
    kv_tok = e.before.infer["kv_bytes_per_token"]
    # decode reads b x keys x KV bytes per token on the GPU's share; weights and the rest are unchanged
    assert e.d_bytes["hbm"] == pytest.approx(-sc.batch * (ctx - keys_read) * kv_tok / sc.gpus, rel=1e-3)
    return sc, e


def test_nsa_decode_reads_fewer_keys_and_keeps_more():
    sc, e = _hbm_saving("native-sparse-attention", (129024 - 32) // 16 + 1 + 1024 + 512)
    end = sc.prompt_len + sc.gen_len
    extra = (end - 32) // 16 + 1 + 512   # compressed keys + the window branch's own cache
    assert e.after.memory["kv_cache"] == pytest.approx(e.before.memory["kv_cache"] * (1 + extra / end))
    assert e.saved_pct > 50 and e.spent_pct > 0 and e.pct_change["compute"] < -50


def test_strided_keeps_the_cache():
    _, e = _hbm_saving("block-sparse-attention", 362 + 357)  # l = round(sqrt(131072)) = 362; ceil(129024 / 362)
    assert e.pct_change["memory"] == pytest.approx(0.0, abs=1e-9) and e.saved_pct > 50


def test_sparse_moves_the_workload_on_the_triangle():
    sc = workload("long-context-decode")
    points = path(sc, ["native-sparse-attention"])
    before, after = points[0][1], points[1][1]
    # NSA spends memory (its compressed keys) to save bandwidth (fewer keys read per query): the point moves from
    # the bandwidth corner toward the memory corner
    assert after.pressure.memory > before.pressure.memory
    assert after.pressure.bandwidth < 0.9 * before.pressure.bandwidth
    assert after.time_total < 0.6 * before.time_total


def test_sparse_refused_where_it_saves_nothing():
    sc = workload("long-context-decode").replace(prompt_len=1024, gen_len=256)
    ok, why = previewable("native-sparse-attention", sc)
    assert not ok and "no fewer than full attention" in why
    nsa = apply("native-sparse-attention", workload("long-context-decode"))
    ok, why = previewable("block-sparse-attention", nsa)
    assert not ok and "already sets" in why


def test_read_patterns_are_not_carried_by_a_scenario():
    """The CLI and the main window take `applicable` / `apply`: a read pattern is refused there with one line."""
    sc = workload("long-context-decode")
    assert previewable("native-sparse-attention", sc)[0]
    ok, why = applicable("native-sparse-attention", sc)
    assert not ok and "not carried" in why
    with pytest.raises(ValidationError, match="no fewer than full attention"):
        apply("native-sparse-attention", sc.replace(prompt_len=512, gen_len=64))


def test_sliding_window_caps_the_kv_cache():
    sc = workload("long-context-decode")
    after = apply("sliding-window-attention", sc)
    assert after.model.sliding_window == 4096
    r0, r1 = evaluate(sc), evaluate(after)
    ctx = sc.prompt_len + sc.gen_len
    # the KV cache shrinks by the window's share of the context (every layer windowed)
    assert r1.memory["kv_cache"] == pytest.approx(r0.memory["kv_cache"] * 4096 / ctx, rel=0.02)
    assert technique_effect(sc, "sliding-window-attention").saved_pct > 50


def test_distillation_halves_layers():
    sc = workload("long-context-decode")
    after = apply("distillation-half-depth", sc)
    assert after.model.layers == sc.model.layers // 2
    r0, r1 = evaluate(sc), evaluate(after)
    assert r1.memory["kv_cache"] == pytest.approx(r0.memory["kv_cache"] / 2)
    half = dataclasses.replace(sc.model, layers=sc.model.layers // 2)
    assert r1.memory["weights"] == pytest.approx(evaluate(sc.replace(model=half)).memory["weights"])
    assert "97%" in load_techniques()["distillation-half-depth"].note


def test_seed_linear_claim_checked_for_both_read_patterns():
    from trinity_desktop.model.claims.synthesis_edge import sparse_attention_read_pattern
    # strided at l = sqrt(n): sum_t (l + t / l) = n^1.5 + n^1.5 / 2, exponent 1.5 exactly (Child et al.'s O(n sqrt n))
    strided = sparse_attention_read_pattern("strided")
    assert strided.computed == pytest.approx(1.5, abs=0.01) and strided.verdict == "disagrees"
    # NSA: about n^2 / 32 compressed (one key per 16 tokens, summed over t) + 1536 n selected and window
    nsa = sparse_attention_read_pattern("nsa")
    n0, n1 = 32768, 131072
    w0, w1 = n0 ** 2 / 32 + 1536 * n0, n1 ** 2 / 32 + 1536 * n1
    import math
    assert nsa.computed == pytest.approx(math.log(w1 / w0) / math.log(4), abs=0.02) and nsa.verdict == "disagrees"


def test_sparse_caption_values():
    """The deck's sparse-attention captions quote the explorer's effects and hand-derived keys read: at the
    long-context decode's mean context t = 126,976 + 4,096 / 2 = 129,024, NSA reads ⌊(t − 32)/16⌋ + 1 = 8,063
    compressed + 16 x 64 selected + 512 window = 9,599 keys; the strided pattern with l = round(√131,072) = 362
    reads 362 + ⌈t / 362⌉ = 362 + 357 = 719."""
    from trinity_desktop.caption_views import view_values

    r = evaluate(workload("long-context-decode"))
    v = view_values("sparse", r)
    assert v["sparse_context"] == "128k"
    assert v["sparse_nsa_keys"] == "9,599" and v["sparse_strided_keys"] == "719"
    assert v["sparse_nsa_fewer"] == f"{129024 / 9599:.1f}×"
    for name, key in (("nsa", "native-sparse-attention"), ("strided", "block-sparse-attention"),
                      ("window", "sliding-window-attention"), ("distill", "distillation-half-depth")):
        e = technique_effect(r.scenario, key)
        assert e.applicable and v[f"sparse_{name}_saved"] == f"{e.saved_pct:.0f}% less {e.saved}"
    assert v["sparse_nsa_spent"] == f"{technique_effect(r.scenario, 'native-sparse-attention').spent_pct:+.0f}% memory"
