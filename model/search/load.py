"""Load and latency targets: one serving replica under a request rate λ, with continuous batching and chunked
prefill, its p50/p95 TTFT and TPOT, and the highest rate that meets TTFT and TPOT targets.

The system (vLLM's scheduler with chunked prefill): requests arrive as a Poisson process of rate λ (requests/s),
each with a fixed prompt of s tokens and a fixed output of g tokens (fixed lengths: the stated distribution is a
point mass, as in `vllm bench serve --dataset-name random --ignore-eos`). Every engine step runs one token of each
decoding request first, then fills the rest of its token budget C (`max_num_batched_tokens`, vLLM's
SchedulerConfig default 2048) with prompt chunks of the waiting requests in arrival order; decodes come first once
chunked prefill is on (vLLM PR #7874). A request's KV cache is held at its final context s + g; at most the
sequences whose KV fits in HBM (and at most C) decode together.

Step time (the core's own step times, `evaluate_grid`, no other factor): a step with b decoding requests and c
prompt tokens lasts  T(b, c) = TPOT(b) + c · p,  with TPOT(b) the decode step of batch b at the mean context
s + g/2 and p = (prefill_s − F) / s the prefill's time per prompt token (batch 1, the whole prompt), F its fixed
kernel-launch part, paid once per step (T(0, c) = F + c · p). Adding the chunk to the decode step counts the weights
streamed by both: an upper bound on a fused step by at most the decode step's weight-streaming time.

The analytic model (mean field + M/D/1, model/formulas/queueing.py):
- Decoding requests: by Little's law b̄ = λ τ (g − 1) others decode beside a request (Poisson, M/G/∞), and each step
  carries λ τ s prompt tokens on average, so the mean step τ solves  τ = TPOT(1 + b̄) / (1 − λ s p)  (its least
  root, by bisection). TPOT p50 = τ.
- TPOT spread: a request's x = TPOT(1 + b) + K s p / (g − 1), K ~ Poisson(m = λ (g − 1) τ) prompts prefilled
  beside it, b's noise of variance 2 b̄ / 3 (Poisson arrivals over one decode duration, averaged over the window);
  linearised, σ = √(TPOT'² · 2b̄/3 + (s p / (g − 1))² m) / (1 − TPOT' λ (g − 1) − λ s p), and p95 = τ + z₀.₉₅ σ.
- TTFT = R + W + D. D, the prompt's own prefill: s · p plus k = ceil(s / (C − b̄)) steps of the decode step (F when
  nothing decodes, probability e^(−b̄)). W: the wait behind earlier prompts, M/D/1 with the service of prompts
  packed back to back, s p + s / (C − b̄) decode steps (ρ = λ times it), whose waiting customers also find their
  last step filled by the prompt behind (at most s tokens of the budget its last chunk leaves). R: the step in
  progress at arrival, uniform with the length-biased mean residual E[T²] / (2 E[T]) over decode-only steps and the
  share λ k τ of steps that carry a chunk.
- Stable while λ s p < 1, ρ < 1, 1 + b̄ fits the KV capacity and the budget C, and the fixed point has a root; the
  saturation rate is the supremum of stable rates, the highest rate within targets the supremum of rates whose p95
  TTFT and p95 TPOT meet them (both by bisection over λ, vectorised over layouts). Checked against a step-level
  discrete-event simulation of the same scheduler (tests/model/test_load_queueing.py): TTFT p50 within 16%, TTFT
  p95 3% to 27% above (conservative), TPOT within 13%, at 0.3, 0.6 and 0.85 of saturation.
Not modelled: the spread of the decode batch around its mean, preemption, prefix sharing across requests.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trinity_desktop.model.base.errors import ValidationError
from trinity_desktop.model.formulas.queueing import md1_mean_wait, normal_quantile, wait_quantile
from trinity_desktop.model.inputs.scenario import Scenario
from trinity_desktop.model.step.evaluation import evaluate_grid
from trinity_desktop.model.step.grid_results import InferGrid

BATCH_GRID_POINTS = 96     # decode batches timed (geometric from 1 to the budget); TPOT is linear between them
FIXED_POINT_STEPS = 32     # bisections of τ = TPOT(1 + λ τ (g − 1)) / (1 − λ s p): 2^-32 of its bracket
RATE_BISECTIONS = 32       # halvings of the rate bracket: 2^-32 of the saturation rate
QUANTILES = (0.5, 0.95)
FIXED_PART = "fixed"  # the prefill time part paid once per step (its role id, evaluation.PREFILL_TIME_IDS)


def batch_grid(chunk_tokens: int) -> np.ndarray:
    """Decode batches timed: 1 to the token budget, geometric, whole numbers."""
    return np.unique(np.round(np.geomspace(1, max(chunk_tokens, 2), BATCH_GRID_POINTS))).astype(float)


@dataclass(frozen=True)
class StepCosts:
    """One replica's engine-step costs (module docstring). Arrays of any layout shape S; `decode_step_s` is
    S + (batches,) on the shared `batch` grid."""

    batch: np.ndarray
    decode_step_s: np.ndarray    # TPOT(b) at each grid batch
    prefill_token_s: np.ndarray  # p
    fixed_s: np.ndarray          # F
    prompt_tokens: np.ndarray    # s: prompt tokens computed (after the prefix cache)
    gen_tokens: int              # g
    max_running: np.ndarray      # sequences whose KV fits at s + g (0: weights alone do not fit), at most C
    chunk_tokens: int            # C

    def decode_s(self, b) -> np.ndarray:
        """TPOT(b), linear between the grid's batches (b clipped to [1, the grid's end])."""
        grid, table = self.batch, self.decode_step_s
        b = np.minimum(np.maximum(np.asarray(b, dtype=float), grid[0]), grid[-1])
        lo = np.minimum(np.searchsorted(grid, b, side="right") - 1, grid.size - 2)
        w = (b - grid[lo]) / (grid[lo + 1] - grid[lo])
        if table.ndim == 1:
            t_lo, t_hi = table[lo], table[lo + 1]
        elif b.shape == table.shape[:-1]:  # one batch per layout: index the flattened table
            rows = np.arange(b.size) * grid.size + lo.reshape(-1)
            flat = table.reshape(-1)
            t_lo, t_hi = flat[rows].reshape(b.shape), flat[rows + 1].reshape(b.shape)
        else:
            shape = np.broadcast_shapes(table.shape[:-1], b.shape)
            full = np.broadcast_to(table, shape + grid.shape)
            idx = np.broadcast_to(lo, shape)[..., None]
            t_lo = np.take_along_axis(full, idx, -1)[..., 0]
            t_hi = np.take_along_axis(full, idx + 1, -1)[..., 0]
        return t_lo + w * (t_hi - t_lo)


def step_costs_from_grid(out: InferGrid, grid: np.ndarray, gen_len: int, chunk_tokens: int,
                         hbm_bytes: float) -> StepCosts:
    """StepCosts from an `evaluate_grid` output whose last axis is the batch, over `grid` (grid[0] = 1: the
    prefill is batch 1's); the KV capacity from the memory per GPU at the first two batches (linear in the batch)."""
    def along(x):
        return np.asarray(x, dtype=float)

    first = (..., 0)
    tpot = along(out.time_per_output_token_s)
    prefill = along(out.prefill_s)[first]
    fixed = along(out.prefill_time[FIXED_PART])[first]
    tokens = along(out.prefill_tokens_computed)[first]
    mem = along(out.memory_total)
    per_seq = (mem[..., 1] - mem[..., 0]) / (grid[1] - grid[0])
    base = mem[..., 0] - per_seq * grid[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(per_seq > 0, np.floor((hbm_bytes - base) / per_seq), 0.0)
    fit = np.where(mem[..., 0] <= hbm_bytes, np.clip(fit, 0.0, chunk_tokens), 0.0)
    return StepCosts(batch=grid, decode_step_s=tpot, prefill_token_s=(prefill - fixed) / tokens, fixed_s=fixed,
                     prompt_tokens=tokens, gen_tokens=int(gen_len), max_running=fit, chunk_tokens=int(chunk_tokens))


def step_costs(sc: Scenario) -> StepCosts:
    """The step costs of a scenario's replica (its layout, formats, lengths; `prefill_chunk_tokens` as C)."""
    if sc.kind == "train":
        raise ValidationError("kind", sc.kind, "an inference scenario (prefill or decode) for a request rate")
    if sc.gen_len < 2:
        raise ValidationError("gen_len", sc.gen_len, "at least 2 generated tokens (TPOT is over tokens 2 .. g)")
    grid = batch_grid(sc.prefill_chunk_tokens)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = evaluate_grid(sc.replace(kind="decode", batch=1), batch=grid)
    return step_costs_from_grid(out, grid, sc.gen_len, sc.prefill_chunk_tokens, sc.hardware.hbm_bytes)


@dataclass(frozen=True)
class LoadState:
    """A replica at a request rate (module docstring); latencies in seconds (inf where not stable)."""

    rate: np.ndarray
    stable: np.ndarray
    step_s: np.ndarray           # τ, the mean step a decoding request sees
    running: np.ndarray          # 1 + b̄, the mean decode batch
    prefill_busy: np.ndarray     # ρ: λ times a prompt's service behind a queue
    ttft_p50_s: np.ndarray
    ttft_p95_s: np.ndarray
    tpot_p50_s: np.ndarray
    tpot_p95_s: np.ndarray


@dataclass(frozen=True)
class _MeanField:
    """The mean step τ, the others decoding b̄, the prompt's own prefill D, ρ = λ D, stability (module docstring)."""

    tau: np.ndarray
    others: np.ndarray
    busy: np.ndarray
    decode_running_s: np.ndarray
    service_s: np.ndarray
    rho: np.ndarray      # λ times the queue's service per prompt
    residual_s: np.ndarray  # twice the mean residual of the step in progress: R ~ uniform on [0, residual_s]
    fill_s: np.ndarray      # the prompt's last step filled with (at most) the next prompt's tokens
    stable: np.ndarray


def _mean_field(costs: StepCosts, lam: np.ndarray) -> _MeanField:
    """τ = TPOT(1 + λ τ (g − 1)) / (1 − λ s p), its least root by bisection between τ₀ = TPOT(1) / (1 − λ s p) and
    the lesser of TPOT(capacity) / (1 − λ s p) and the τ at which the decode batch fills the KV capacity (no root
    there: not stable)."""
    c = costs
    s, p, g1, C = c.prompt_tokens, c.prefill_token_s, float(c.gen_tokens - 1), float(c.chunk_tokens)
    u = lam * s * p  # the share of time spent on prompt tokens
    spare = np.maximum(1.0 - u, 1e-12)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lo = c.decode_s(np.ones_like(lam)) / spare
        cap = np.maximum(c.max_running, 1.0)
        # the root lies below TPOT(capacity) / (1 − λ s p), and below the τ that fills the capacity
        hi = np.minimum(np.where(lam > 0, (cap - 1.0) / (lam * g1), np.inf), c.decode_s(cap) / spare)
        hi = np.maximum(hi, lo)
        room = c.decode_s(1.0 + lam * hi * g1) / spare <= hi  # a root below the capacity
        for _ in range(FIXED_POINT_STEPS):
            mid = 0.5 * (lo + hi)
            above = c.decode_s(1.0 + lam * mid * g1) / spare > mid
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        tau = hi
        others = lam * tau * g1
        p0 = np.exp(-others)
        busy = 1.0 - p0
        decode_running = c.decode_s(others / np.maximum(busy, 1e-300))
        # the prompt's own prefill: s·p plus k = ceil(s / (C − b̄)) steps of the decode step (F when nothing
        # decodes); behind a queue, prompts share steps back to back: s / (C − b̄) steps each (the M/D/1 service)
        step0 = p0 * c.fixed_s + busy * decode_running
        per_step = np.maximum(C - others, 1.0)
        chunks = np.ceil(s / per_step)
        rho = lam * (s * p + s / per_step * step0)
        service = s * p + chunks * step0
        # a prompt that waited finds the next one waiting too: the budget its last step leaves free is filled
        fill = np.minimum(chunks * per_step - s, s) * p
        # the step in progress at an arrival, length-biased: E[R] = E[T²] / (2 E[T]) over decode-only steps (T_d)
        # and the share f = λ k τ of steps that carry a chunk (T_d + s p / k)
        share = np.clip(lam * chunks * tau, 0.0, 1.0)
        t_chunk = decode_running + s * p / chunks
        residual = (share * t_chunk ** 2 + (1.0 - share) * decode_running ** 2) / np.maximum(
            share * t_chunk + (1.0 - share) * decode_running, 1e-300)
    stable = ((u < 1.0) & room & (1.0 + others <= c.max_running) & (lam * tau * s <= C - 1.0 - others)
              & (rho < 1.0))
    return _MeanField(tau=tau, others=others, busy=busy, decode_running_s=decode_running, service_s=service, rho=rho,
                      residual_s=residual, fill_s=fill, stable=stable)


def load_at(costs: StepCosts, rate) -> LoadState:
    """p50/p95 TTFT and TPOT of the replica at `rate` requests/s (broadcast against the costs' layouts)."""
    c = costs
    lam = np.asarray(rate, dtype=float)
    mf = _mean_field(c, lam)
    s, p, g1 = c.prompt_tokens, c.prefill_token_s, float(c.gen_tokens - 1)
    ok = mf.stable
    rho = np.where(ok, mf.rho, 0.0)
    # the waiting requests' wait: M/D/1's, plus their last step filled by the prompt behind (its mean kept)
    wq = np.where(ok, md1_mean_wait(lam, mf.rho / np.maximum(lam, 1e-300)) + rho * mf.fill_s, 0.0)
    running = 1.0 + mf.others
    # a request's TPOT x: x = TPOT(1 + b) + K s p / (g − 1), with K ~ λ (g − 1) x prompts beside it (Poisson noise,
    # variance its mean m) and b ~ λ (g − 1) x others (noise of variance 2 b̄ / 3: Poisson arrivals over one
    # decode duration, averaged over the request's window); linearised, the noise is amplified by
    # 1 / (1 − TPOT'(b) λ (g − 1) − λ s p), which reaches infinity where the decode batch runs away
    slope = c.decode_s(running + 1.0) - c.decode_s(running)
    m = lam * g1 * mf.tau
    gain = 1.0 - slope * lam * g1 - lam * s * p
    sigma = np.sqrt(slope ** 2 * (2.0 / 3.0) * mf.others + (s * p / g1) ** 2 * m) / np.maximum(gain, 1e-12)
    ttft, tpot = [], []
    for q in QUANTILES:
        wait = wait_quantile(q, rho, wq, mf.busy, mf.residual_s)
        ttft.append(np.where(ok, mf.service_s + wait, np.inf))
        tpot.append(np.where(ok & (gain > 0), mf.tau + normal_quantile(q) * sigma, np.inf))
    return LoadState(rate=lam, stable=ok, step_s=np.where(ok, mf.tau, np.inf), running=running,
                     prefill_busy=mf.rho, ttft_p50_s=ttft[0], ttft_p95_s=ttft[1], tpot_p50_s=tpot[0],
                     tpot_p95_s=tpot[1])


def _bisect_rate(costs: StepCosts, ok, hi, state=load_at) -> np.ndarray:
    """The supremum of rates in [0, hi] where `ok(state(costs, rate))` holds (assumed monotone), vectorised."""
    lo = np.zeros_like(hi)
    for _ in range(RATE_BISECTIONS):
        mid = 0.5 * (lo + hi)
        good = ok(state(costs, mid))
        lo, hi = np.where(good, mid, lo), np.where(good, hi, mid)
    return lo


def saturation_rate(costs: StepCosts) -> np.ndarray:
    """The highest stable rate (requests/s): the supremum where the model's queue stays finite."""
    with np.errstate(divide="ignore"):
        hi = np.where(costs.max_running >= 1, 1.0 / (costs.prompt_tokens * costs.prefill_token_s), 0.0)
    return _bisect_rate(costs, lambda mf: mf.stable, hi, _mean_field)


def max_rate_within_slo(costs: StepCosts, ttft_slo_s: float = 0.0, tpot_slo_s: float = 0.0,
                        saturation: np.ndarray | None = None) -> np.ndarray:
    """The highest rate whose p95 TTFT ≤ `ttft_slo_s` and p95 TPOT ≤ `tpot_slo_s` (0 = no target); 0 where even
    a vanishing rate misses them."""
    sat = saturation_rate(costs) if saturation is None else saturation

    def ok(st: LoadState):
        good = st.stable
        if ttft_slo_s > 0:
            good = good & (st.ttft_p95_s <= ttft_slo_s)
        if tpot_slo_s > 0:
            good = good & (st.tpot_p95_s <= tpot_slo_s)
        return good

    return _bisect_rate(costs, ok, sat)


@dataclass(frozen=True)
class LoadReport:
    """A scenario's replica at its request rate: latencies, the saturation rate, the highest rate within its
    targets (None without a target), in plain floats (None where not stable)."""

    rate_per_s: float
    stable: bool
    ttft_p50_s: float | None
    ttft_p95_s: float | None
    tpot_p50_s: float | None
    tpot_p95_s: float | None
    mean_running: float | None
    saturation_rate_per_s: float
    max_rate_within_slo: float | None
    ttft_slo_s: float | None
    tpot_slo_s: float | None
    chunk_tokens: int
    max_running: int

    def as_json(self) -> dict:
        return dict(self.__dict__)

    @property
    def finding(self) -> str:
        """One sentence: "At 4 req/s TTFT p95 is 0.80 s; 6.2 req/s meets both targets"."""
        head = f"At {self.rate_per_s:g} req/s "
        if self.max_running < 1:
            return head + "no request can run: the weights and one request's KV cache do not fit in HBM"
        head += (f"TTFT p95 is {_seconds(self.ttft_p95_s)}, TPOT p95 {_seconds(self.tpot_p95_s)}" if self.stable
                 else f"the replica cannot keep up (it saturates at {self.saturation_rate_per_s:.3g} req/s)")
        if self.max_rate_within_slo is None:
            return head + f"; it saturates at {self.saturation_rate_per_s:.3g} req/s" if self.stable else head
        targets = " and ".join(f"{k} p95 ≤ {_seconds(v)}" for k, v in (("TTFT", self.ttft_slo_s),
                                                                        ("TPOT", self.tpot_slo_s)) if v)
        if self.max_rate_within_slo <= 0:
            return head + f"; no rate meets {targets}"
        return head + f"; up to {self.max_rate_within_slo:.3g} req/s meets {targets}"


def _seconds(x: float | None) -> str:
    if x is None:
        return "unbounded"
    return f"{x * 1e3:.3g} ms" if x < 1.0 else f"{x:.3g} s"


def _plain(x) -> float | None:
    x = float(x)
    return x if np.isfinite(x) else None


def load_report(sc: Scenario) -> LoadReport:
    """The load read-out of a scenario with `request_rate` > 0 (Scenario fields request_rate, ttft_slo_s,
    tpot_slo_s, prefill_chunk_tokens)."""
    if sc.request_rate <= 0:
        raise ValidationError("request_rate", sc.request_rate, "a rate above 0 requests/s for the load model")
    costs = step_costs(sc)
    st = load_at(costs, sc.request_rate)
    sat = saturation_rate(costs)
    has_target = sc.ttft_slo_s > 0 or sc.tpot_slo_s > 0
    best = max_rate_within_slo(costs, sc.ttft_slo_s, sc.tpot_slo_s, sat) if has_target else None
    stable = bool(st.stable)
    return LoadReport(rate_per_s=float(sc.request_rate), stable=stable, ttft_p50_s=_plain(st.ttft_p50_s),
                      ttft_p95_s=_plain(st.ttft_p95_s), tpot_p50_s=_plain(st.tpot_p50_s),
                      tpot_p95_s=_plain(st.tpot_p95_s), mean_running=float(st.running) if stable else None,
                      saturation_rate_per_s=float(sat),
                      max_rate_within_slo=None if best is None else float(best),
                      ttft_slo_s=sc.ttft_slo_s or None, tpot_slo_s=sc.tpot_slo_s or None,
                      chunk_tokens=sc.prefill_chunk_tokens, max_running=int(costs.max_running))
