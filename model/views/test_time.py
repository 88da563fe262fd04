"""Test-time compute at equal accuracy: "small model + more samples" against "larger model + fewer", costed with
the app's own decode model.

Accuracy rows are DeepSeek-R1's Table 5 (distilled models, AIME 2024): pass@1 (one sample) and cons@64 (the
majority vote of 64 samples), each cited in resources/scale_published.toml. A row whose model has an
architecture preset (R1-Distill-Llama-8B: Llama-3.1-8B = the llama-3-8b dimensions; R1-Distill-Llama-70B:
Llama-3.3-70B = the llama-3.1-70b dimensions) is costed: the S samples decode together as a batch of S
sequences of T reasoning tokens after a PROMPT-token problem, on the fewest GPUs (tensor parallel 1, 2, 4, 8)
whose HBM holds weights + the KV cache at the end of the trace (`evaluate_grid`, one call over T x TP).
Cost per query = GPU-seconds = request time x GPUs; the KV at the end of the trace is S x (P + T) x KV bytes
per token. T is the mean reasoning length per sample, a stated input (the R1 evaluation caps it at 32,768).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.inputs.hardware import Hardware
from trinity_desktop.model.inputs.presets import model_presets
from trinity_desktop.model.inputs.scale_facts import AccuracyRow, accuracy_rows
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import evaluate_grid

PROMPT = 256                       # tokens of an AIME problem statement (assumption, stated)
TP_CHOICES = (1, 2, 4, 8)
ARCHITECTURE = {"DeepSeek-R1-Distill-Llama-8B": "llama-3-8b", "DeepSeek-R1-Distill-Llama-70B": "llama-3.1-70b"}
TOKENS = np.array([1024, 2048, 4096, 8192, 16384, 32768], dtype=float)


@dataclass(frozen=True)
class Option:
    """One way to reach an accuracy: a model, S samples per query, costed over the reasoning lengths T."""

    row: AccuracyRow
    tokens: np.ndarray          # T, reasoning tokens per sample
    gpus: np.ndarray            # fewest GPUs that hold it (0: not even 8)
    latency_s: np.ndarray       # request time
    gpu_seconds: np.ndarray     # cost per query
    kv_end_bytes: np.ndarray    # KV cache at the end of the trace, all samples


def cost_option(row: AccuracyRow, hw: Hardware, tokens=TOKENS) -> Option:
    arch = model_presets()[ARCHITECTURE[row.model]]
    t = np.asarray(tokens, dtype=float)
    sc = Scenario(hardware=hw, model=arch, kind="decode", gpus=1, gpus_per_node=max(hw.gpus_per_node_default, 8),
                  batch=row.samples, prompt_len=PROMPT, gen_len=int(t[0]))
    tp = np.asarray(TP_CHOICES, dtype=float)[:, None]
    g = evaluate_grid(sc, gen_len=t[None, :].astype(int), tp=tp.astype(int))
    fits = (np.asarray(g.memory_total, dtype=float) <= hw.hbm_bytes) & np.asarray(g.valid, dtype=bool)
    first = np.argmax(fits, axis=0)
    ok = fits.any(axis=0)
    cols = np.arange(t.size)
    gpus = np.where(ok, tp[first, 0], 0.0)
    request = np.broadcast_to(np.asarray(g.request_s, dtype=float), fits.shape)[first, cols]
    latency = np.where(ok, request, 0.0)
    kv_per_token = float(np.asarray(g.kv_bytes_per_token, dtype=float).max())
    return Option(row, t, gpus, latency, latency * gpus, row.samples * (PROMPT + t) * kv_per_token)


@dataclass(frozen=True)
class Comparison:
    target: float
    small: Option               # small model, more samples
    large: Option               # larger model, fewer samples
    crossover_tokens: float     # T where they cost the same (0: no crossing in the range)
    small_wins_below: bool      # small + samples is cheaper for T below the crossover


def costed_rows() -> tuple[AccuracyRow, ...]:
    return tuple(r for r in accuracy_rows() if r.model in ARCHITECTURE)


def compare(hw: Hardware, target: float = 0.70, tokens=TOKENS) -> Comparison:
    """The cheapest-per-sample row of the smallest model that reaches `target`, against the one-sample row of the
    larger model that reaches it; the crossover in T by interpolation on log GPU-seconds."""
    rows = [r for r in costed_rows() if r.accuracy >= target]
    if not rows:
        raise ValueError(f"no costed row reaches {target:.0%}")
    small_params = min(r.params for r in rows)
    small = min((r for r in rows if r.params == small_params), key=lambda r: r.samples)
    larger = [r for r in rows if r.params > small_params]
    large = min(larger, key=lambda r: (r.samples, r.params)) if larger else small
    a, b = cost_option(small, hw, tokens), cost_option(large, hw, tokens)
    both = (a.gpus > 0) & (b.gpus > 0)
    diff = np.where(both, np.log(np.maximum(a.gpu_seconds, 1e-30)) - np.log(np.maximum(b.gpu_seconds, 1e-30)), 0)
    crossing, below = 0.0, bool(diff[both][0] < 0) if both.any() else False
    idx = np.nonzero(both[:-1] & both[1:] & (np.sign(diff[:-1]) != np.sign(diff[1:])))[0]
    if idx.size:
        i = int(idx[0])
        f = diff[i] / (diff[i] - diff[i + 1])
        crossing = float(np.exp(np.log(a.tokens[i]) + f * (np.log(a.tokens[i + 1]) - np.log(a.tokens[i]))))
    return Comparison(target, a, b, crossing, below)
