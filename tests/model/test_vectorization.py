"""One formula, any shape: `evaluate_grid` over ~1e5 configurations equals `evaluate` point by point."""

from __future__ import annotations

import numpy as np
import pytest

from trinity_desktop.model import Scenario, ValidationError, evaluate, evaluate_grid
from trinity_desktop.model.inputs import presets
from trinity_desktop.model.inputs.scenario import RECOMPUTE

MODELS = presets.model_presets()
HARDWARE = presets.hardware_presets()

# Grid axes: 4·4·4·3·4·4·6·2·2·2 = 147,456 configurations.
AXES = dict(
    tp=[1, 2, 4, 8],
    pp=[1, 2, 4, 8],
    zero=[0, 1, 2, 3],
    recompute=[0, 1, 2],
    micro_batch=[1, 2, 4, 8],
    seq_len=[1024, 2048, 4096, 8192],
    gpus=[8, 16, 24, 64, 128, 512],  # 24 makes some layouts invalid (not a multiple of tp·pp·cp)
    cp=[1, 2],
    sp=[False, True],
    flash=[False, True],
)
GLOBAL_BATCH = 512

# Grid axis -> Scenario field
FIELD = {"sp": "sequence_parallel", "flash": "flash_attention"}


def _value(axis, v):
    if axis == "recompute":
        return RECOMPUTE[int(v)]
    if axis in ("sp", "flash"):
        return bool(v)
    return int(v)


@pytest.fixture(scope="module")
def train_base():
    return Scenario(hardware=HARDWARE["h100-sxm"], model=MODELS["llama-3-8b"], gpus=64, tp=8,
                    global_batch=GLOBAL_BATCH, flash_attention=False)


@pytest.fixture(scope="module")
def train_grid(train_base):
    names = list(AXES)
    mesh = np.meshgrid(*[np.asarray(AXES[n]) for n in names], indexing="ij")
    axes = dict(zip(names, mesh, strict=True))
    out = evaluate_grid(train_base, **axes)
    return axes, out


def _scenario_at(base, axes, idx):
    changes = {FIELD.get(a, a): _value(a, arr[idx]) for a, arr in axes.items()}
    return base.replace(**changes)


def test_grid_size_and_shapes(train_grid):
    axes, out = train_grid
    shape = axes["tp"].shape
    assert int(np.prod(shape)) >= 100_000
    for key in ("memory_total", "time_total", "mfu", "tokens_per_s", "model_flops", "hardware_flops"):
        assert np.shape(getattr(out, key)) == shape, key
    for key, arr in out.memory.items():
        assert np.shape(arr) == shape, key
    for key, arr in out.bytes_by_link.items():
        assert np.broadcast_shapes(np.shape(arr), shape) == shape, key
    valid = np.broadcast_to(out.valid, shape)
    assert 0.2 < valid.mean() < 1.0  # both valid and invalid layouts are present


def test_grid_is_finite_where_valid(train_grid):
    axes, out = train_grid
    valid = np.broadcast_to(out.valid, axes["tp"].shape)
    for key in ("memory_total", "time_total", "mfu", "tokens_per_s"):
        assert np.all(np.isfinite(getattr(out, key)[valid])), key
        assert np.all(getattr(out, key)[valid] > 0), key


def test_grid_matches_evaluate(train_base, train_grid):
    axes, out = train_grid
    shape = axes["tp"].shape
    valid = np.broadcast_to(out.valid, shape)
    rng = np.random.default_rng(20260101)
    flat = rng.choice(np.flatnonzero(valid), size=30, replace=False)
    for f in flat:
        idx = np.unravel_index(f, shape)
        sc = _scenario_at(train_base, axes, idx)
        r = evaluate(sc)

        def grid(arr, idx=idx):
            return float(np.broadcast_to(arr, shape)[idx])

        where = f"at {sc.tp=} {sc.pp=} {sc.cp=} {sc.zero=} {sc.recompute=} {sc.micro_batch=} {sc.seq_len=} {sc.gpus=}"
        assert grid(out.memory_total) == pytest.approx(r.memory_total, rel=1e-9), where
        assert grid(out.time_total) == pytest.approx(r.time_total, rel=1e-9), where
        assert grid(out.mfu) == pytest.approx(r.train["mfu"], rel=1e-9), where
        assert grid(out.hardware_flops) == pytest.approx(r.flops, rel=1e-9), where
        for part, arr in out.memory.items():
            assert grid(arr) == pytest.approx(r.memory[part], rel=1e-9), (part, where)
        for part, arr in out.time.items():
            # evaluate() leaves out the stages of techniques that are off (their grid values are 0)
            assert grid(arr) == pytest.approx(r.time.get(part, 0.0), rel=1e-9, abs=1e-300), (part, where)
        for link in ("scale-out", "scale-up", "hbm"):
            assert grid(out.bytes_by_link[link]) == pytest.approx(r.bytes_by_link[link], rel=1e-9,
                                                                     abs=1e-300), (link, where)
        assert grid(out.dp) == sc.dp
        assert grid(out.micro_batches) == sc.micro_batches


def test_valid_mask_agrees_with_scenario_validation(train_base, train_grid):
    axes, out = train_grid
    shape = axes["tp"].shape
    valid = np.broadcast_to(out.valid, shape)
    rng = np.random.default_rng(7)
    picks = list(rng.choice(np.flatnonzero(valid), size=20, replace=False))
    picks += list(rng.choice(np.flatnonzero(~valid), size=40, replace=False))
    for f in picks:
        idx = np.unravel_index(f, shape)
        try:
            _scenario_at(train_base, axes, idx)
            ok = True
        except ValidationError:
            ok = False
        assert bool(valid[idx]) == ok, {a: arr[idx] for a, arr in axes.items()}


def test_valid_mask_global_batch_and_ep():
    """Axes the Scenario checks that the main grid does not vary: global_batch divisibility and EP."""
    base = Scenario(hardware=HARDWARE["h100-sxm"], model=MODELS["mixtral-8x7b"], gpus=32, tp=4, ep=8,
                    global_batch=64)
    gb, ep, mb = np.meshgrid([8, 48, 64, 100], [1, 2, 4, 8, 16], [1, 2, 4], indexing="ij")
    out = evaluate_grid(base, global_batch=gb, ep=ep, micro_batch=mb)
    valid = np.broadcast_to(out.valid, gb.shape)
    for idx in np.ndindex(gb.shape):
        try:
            base.replace(global_batch=int(gb[idx]), ep=int(ep[idx]), micro_batch=int(mb[idx]))
            ok = True
        except ValidationError:
            ok = False
        assert bool(valid[idx]) == ok, (gb[idx], ep[idx], mb[idx])


def test_one_point_grid_equals_evaluate(train_base):
    out = evaluate_grid(train_base)
    r = evaluate(train_base)
    assert float(out.memory_total) == pytest.approx(r.memory_total, rel=1e-12)
    assert float(out.time_total) == pytest.approx(r.time_total, rel=1e-12)
    assert bool(out.valid)


def test_open_grid_broadcasts(train_base):
    """np.meshgrid(sparse=True) / np.ix_ axes must work like dense ones (DESIGN: broadcast in any argument)."""
    tp, mb = np.ix_([1, 2, 4, 8], [1, 2, 4])
    out = evaluate_grid(train_base, tp=tp, micro_batch=mb)
    dense_tp, dense_mb = np.meshgrid([1, 2, 4, 8], [1, 2, 4], indexing="ij")
    dense = evaluate_grid(train_base, tp=dense_tp, micro_batch=dense_mb)
    np.testing.assert_allclose(out.memory_total, dense.memory_total, rtol=1e-12)
    np.testing.assert_array_equal(np.broadcast_to(out.valid, (4, 3)), dense.valid)


def test_unknown_axis_is_refused(train_base):
    with pytest.raises(KeyError):
        evaluate_grid(train_base, batch=np.arange(1, 4))
    infer = train_base.replace(kind="decode", gpus=1)
    with pytest.raises(KeyError):
        evaluate_grid(infer, zero=np.arange(4))


# --- inference grid --------------------------------------------------------------------------------

@pytest.mark.parametrize("model_key, gpus", [("llama-3-8b", 1), ("llama-3-70b", 8), ("mixtral-8x7b", 2),
                                             ("deepseek-v3", 8)])
def test_inference_grid_matches_evaluate(model_key, gpus):
    base = Scenario(hardware=HARDWARE["h200-sxm"], model=MODELS[model_key], kind="decode", gpus=gpus)
    batches = np.array([1, 2, 3, 8, 32, 128, 512])
    prompts = np.array([1, 100, 2048, 8192, 65536])
    b, p = np.meshgrid(batches, prompts, indexing="ij")
    out = evaluate_grid(base, batch=b, prompt_len=p)
    assert np.shape(out.tokens_per_s) == b.shape
    for idx in np.ndindex(b.shape):
        sc = base.replace(batch=int(b[idx]), prompt_len=int(p[idx]))
        for kind, total_key in (("decode", "time_per_output_token_s"), ("prefill", "prefill_s")):
            r = evaluate(sc.replace(kind=kind))
            assert float(getattr(out, total_key)[idx]) == pytest.approx(r.time_total, rel=1e-9)
        r = evaluate(sc)
        assert float(out.tokens_per_s[idx]) == pytest.approx(r.infer["tokens_per_s"], rel=1e-9)
        assert float(out.memory_total[idx]) == pytest.approx(r.memory_total, rel=1e-9)
        assert float(out.kv_bytes[idx]) == pytest.approx(r.infer["kv_bytes"], rel=1e-9)
        if out.kv_in_hbm[idx]:  # the grid times the request with the cache in HBM; evaluate, where it spills,
            assert float(out.request_s[idx]) == pytest.approx(r.infer["request_s"], rel=1e-9)  # by its stages
        else:
            assert r.infer["request_s"] >= float(out.request_s[idx])
        for part, arr in out.decode_time.items():
            assert float(np.broadcast_to(arr, b.shape)[idx]) == pytest.approx(r.time[part], rel=1e-9, abs=1e-300)


def test_inference_grid_open_axes():
    """Inference broadcasts an open grid (column x row) to the full shape."""
    base = Scenario(hardware=HARDWARE["h100-sxm"], model=MODELS["llama-3-8b"], kind="decode", gpus=1)
    b, p = np.ix_([1, 4, 16], [128, 1024])
    out = evaluate_grid(base, batch=b, prompt_len=p)
    assert np.shape(out.tokens_per_s) == (3, 2)
    assert float(out.tokens_per_s[2, 1]) == pytest.approx(
        evaluate(base.replace(batch=16, prompt_len=1024)).infer["tokens_per_s"], rel=1e-9)
