"""The seed claims: every verdict follows from its claimed and computed values, the headline ones are
recomputed here from the core, and the catalogue meets the counts the issue asks for."""

import math

import pytest

from trinity_desktop.model import evaluate
from trinity_desktop.model.base.dtypes import WEIGHT_FORMAT
from trinity_desktop.model.claims import synthesis_edge, trinity
from trinity_desktop.model.claims.catalogue import all_claims
from trinity_desktop.model.claims.claim import SEEDS
from trinity_desktop.model.claims.trinity import workload
from trinity_desktop.model.inputs.presets import references

# The claims judged by a tolerance or a bound stated in their unit (the scale-over-time claims, judged on ranges
# and directions, are recomputed in tests/model/test_scale_claims.py)
CLAIMS = {c.id: c for module in (trinity, synthesis_edge) for c in module.claims()}
# relative tolerance of the claims judged as "claimed value within a tolerance"
TOLERANCE = {"synth-2bit-storage": 0.05, "synth-sub3b-laptop-x86-ddr5": 0.25, "synth-sub3b-phone-a17-pro": 0.25,
             "synth-gated-conv": 0.2, "synth-sparse-attention": 0.05, "synth-sparse-attention-nsa": 0.05,
             "synth-sparse-attention-strided": 0.05}


def expected_verdict(c) -> str:
    """The verdict that the claim's own numbers imply, read from the rule its unit states."""
    if c.computed is None:
        return "not-computable"
    if "(claim: >= " in c.unit:
        ok = c.computed >= c.claimed
    elif "(claim: > " in c.unit:
        ok = c.computed > c.claimed
    elif "(claim: <= " in c.unit:
        ok = c.computed <= c.claimed
    else:
        ok = abs(c.computed - c.claimed) <= TOLERANCE[c.id] * abs(c.claimed)
    return "agrees" if ok else "disagrees"


@pytest.mark.parametrize("cid", sorted(CLAIMS))
def test_verdict_follows_from_the_numbers(cid):
    c = CLAIMS[cid]
    assert c.verdict == expected_verdict(c)
    assert c.source in references()
    assert c.computed is None or math.isfinite(c.computed)
    if c.verdict == "not-computable":
        assert c.note and c.computed is None


def test_counts_and_both_seeds():
    claims = all_claims()
    assert len(claims) >= 25
    assert {c.seed for c in claims} == set(SEEDS)
    computed = [c for c in claims if c.verdict != "not-computable"]
    assert len(computed) / len(claims) >= 0.8
    assert len({c.id for c in claims}) == len(claims)


def test_training_skew_recomputed():
    p = evaluate(workload("dense-pretrain")).pressure
    c = CLAIMS["trinity-training-skew"]
    assert c.computed == pytest.approx(max(p.bandwidth, p.memory) / p.compute)
    assert p.binding == "compute" and c.verdict == "disagrees"


def test_two_bit_storage_hand_derived():
    # ggml-common.h: block_q4_K 144 B / 256 weights, block_q2_K 84 B / 256 weights
    c = CLAIMS["synth-2bit-storage"]
    assert c.computed == pytest.approx(100 * (1 - (84 * 8 / 256) / (144 * 8 / 256)))
    assert c.computed == pytest.approx(41.667, abs=1e-3) and c.verdict == "agrees"
    assert WEIGHT_FORMAT["q2_k"].effective_bits == 2.625


def test_sparse_attention_exponent_is_one():
    assert CLAIMS["synth-sparse-attention"].computed == pytest.approx(1.0)


def test_structured_output_has_no_number():
    for cid in ("synth-4bit-json", "synth-2bit-json"):
        c = CLAIMS[cid]
        assert c.verdict == "not-computable" and c.claimed is None and "unsourced" in c.note


def test_claim_scenarios_evaluate():
    for c in all_claims():
        if c.scenario is not None:
            r = evaluate(c.scenario)
            assert math.isfinite(r.time_total)
