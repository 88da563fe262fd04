"""Tokens per step against training compute: the DeepSeek LLM batch-size law and published global batches.

- Training compute C = 6 N D FLOPs (N active parameters, D training tokens; Kaplan et al. 2020, Transformer
  Math 101). DeepSeek LLM fits its law on C = M D with M the non-embedding FLOPs per token; 6 N stands in for M
  here (stated, not hidden: it counts embeddings and leaves out attention's s-dependent FLOPs).
- Optimal batch B_opt = 0.2920 C^0.3271 tokens (DeepSeek LLM 2024, scaling laws for hyper-parameters; the
  coefficients live in resources/scale_published.toml).
- A scenario without a training length is placed at a Chinchilla-optimal run, D = 20 N tokens (Hoffmann et al.
  2022's ~20 tokens per parameter).
Every function broadcasts over numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.inputs.scale_facts import PublishedBatch, batch_law, published_batches

CHINCHILLA_TOKENS_PER_PARAM = 20.0


def training_compute(params, tokens):
    """C = 6 N D FLOPs."""
    return 6.0 * np.asarray(params, dtype=float) * np.asarray(tokens, dtype=float)


def optimal_batch_tokens(compute):
    """B_opt = a C^b tokens (DeepSeek LLM's fit)."""
    law = batch_law()
    return law.coefficient * np.asarray(compute, dtype=float) ** law.exponent


@dataclass(frozen=True)
class BatchPoint:
    """A published run: its batch, its compute and the law's optimum there."""

    run: PublishedBatch
    compute: float
    optimal_tokens: float

    @property
    def ratio(self) -> float:
        """published batch / the law's optimum."""
        return self.run.batch_tokens / self.optimal_tokens


def published_points() -> tuple[BatchPoint, ...]:
    rows = published_batches()
    c = training_compute([r.params for r in rows], [r.train_tokens for r in rows])
    opt = optimal_batch_tokens(c)
    return tuple(BatchPoint(r, float(ci), float(oi)) for r, ci, oi in zip(rows, c, opt, strict=True))


@dataclass(frozen=True)
class ScenarioBatch:
    batch_tokens: float
    train_tokens: float
    compute: float
    optimal_tokens: float


def scenario_batch(global_batch, seq_len, params_active, train_tokens=None) -> ScenarioBatch:
    """A training scenario's tokens per step (global batch x sequence length) and the law's optimum at the
    compute of its run (train_tokens, or D = 20 N when not given)."""
    d = CHINCHILLA_TOKENS_PER_PARAM * params_active if train_tokens is None else train_tokens
    c = training_compute(params_active, d)
    return ScenarioBatch(float(global_batch * seq_len), float(d), float(c), float(optimal_batch_tokens(c)))
