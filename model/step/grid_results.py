"""What `evaluate_grid` returns: the typed, array-valued results of a training or an inference grid.

Every field is the core step's own array over the grid's broadcast axes (`training.training_step`,
`inference.inference_step`), so a grid of one configuration equals `evaluate(...)` of that scenario (the
parts maps use the same keys as `Results.memory`, `Results.time` and `Results.bytes_by_link`). `valid` is the
layout and link rules of `Scenario`, vectorized (`layout.train_valid` / `layout.infer_valid`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class TrainGrid:
    """A training grid (model/step/training.py's step formulas over arrays; SI units, memory per GPU)."""

    dp: object
    micro_batches: object
    memory_total: object
    model_flops: object
    hardware_flops: object
    time_total: object
    dp_comm_time: object
    backward_time_last_micro_batch: object
    pipeline_bubble_fraction: object
    mfu: object
    tokens_per_s: object
    tokens: object
    host_bytes: object
    nvme_bytes: object
    nvme_traffic_bytes: object
    compute_share: object
    bandwidth_share: object
    memory: Mapping[str, object]         # `Results.memory` parts of a training step (evaluation.train_memory)
    time: Mapping[str, object]           # `Results.time` parts by role id (evaluation.train_time)
    bytes_by_link: Mapping[str, object]  # bytes per link per GPU and step
    valid: np.ndarray                    # the layout is allowed (Scenario's rules, vectorized)


@dataclass(frozen=True)
class InferGrid:
    """An inference grid (model/step/inference.py's roofline step over arrays; SI units, memory per GPU)."""

    weights_bytes: object
    kv_bytes_per_token: object
    kv_bytes: object
    kv_host_bytes: object
    prefill_tokens_computed: object
    memory_total: object
    prefill_s: object
    time_per_output_token_s: object
    tokens_per_s: object
    decode_s: object
    request_s: object
    decode_kv_read_bytes: object
    decode_attention_flops: object
    prefill_flops: object
    decode_flops: object
    prefill_shares: tuple                # (compute-bound, bandwidth-bound) shares of the prefill time
    decode_shares: tuple
    memory: Mapping[str, object]         # `Results.memory` parts of an inference step (evaluation.infer_memory)
    prefill_time: Mapping[str, object]   # `Results.time` parts of prefill, by role id (evaluation.phase_time)
    decode_time: Mapping[str, object]    # and of one decode step
    prefill_bytes: Mapping[str, object]  # bytes per link per GPU of the prefill
    decode_bytes: Mapping[str, object]   # and of one decode step
    valid: np.ndarray                    # the layout is allowed (Scenario's rules, vectorized)
    kv_in_hbm: np.ndarray                # the KV cache stays in HBM, so request_s is the request's time

    def at(self, i: int) -> InferGrid:
        """The i-th slice along the first axis (a grid evaluated over a stacked axis); the shares stay whole."""
        return self._each(lambda v: v[i] if v.ndim else v)

    def expanded(self) -> InferGrid:
        """The same grid with a trailing length-1 axis on every array (to broadcast against one more axis)."""
        return self._each(lambda v: v.astype(float)[..., None])

    def _each(self, fn) -> InferGrid:
        def take(v):
            if isinstance(v, Mapping):
                return {k: take(w) for k, w in v.items()}
            return fn(np.asarray(v))
        return dataclasses.replace(self, **{f.name: take(getattr(self, f.name)) for f in dataclasses.fields(self)
                                            if f.name not in ("prefill_shares", "decode_shares")})


# The fields a grid builds from the step (maps of parts by key, the masks); every other field is the step's own.
_BUILT = ("memory", "time", "bytes_by_link", "prefill_time", "decode_time", "prefill_bytes", "decode_bytes", "valid",
          "kv_in_hbm")


def step_fields(cls, step) -> dict:
    """The array fields of `cls` (not the parts maps or masks), taken from the step under the same names."""
    return {f.name: getattr(step, f.name) for f in dataclasses.fields(cls) if f.name not in _BUILT}
