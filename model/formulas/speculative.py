"""Speculative decoding and multi-token prediction: tokens per target step, time per output token, speed-up.

A draft (a small model, or the target's own MTP modules, DeepSeek-V3 §2.2 and §5.4.3) proposes γ tokens one
after another; the target checks all of them in one forward pass over γ + 1 tokens per sequence and keeps the
longest accepted prefix plus one token of its own. With each proposed token accepted with probability α
(independently, Leviathan et al. 2023 §3.1), the tokens a round produces are
    E = (1 − α^(γ+1)) / (1 − α)            (Leviathan et al. 2023, Eq. 1; α → 1: γ + 1; α = 0: 1)
and a round lasts  γ · t_draft + t_verify.  Time per output token = round / E; speed-up over plain decode =
t_decode · E / round. With t_verify = t_decode this is Leviathan's improvement factor E / (γc + 1), c =
t_draft / t_decode (Theorem 3.8). Here t_verify is the target's own step with γ + 1 tokens per sequence (the
inference step's roofline, model/step/speculative_step.py): nearly t_decode while the step is HBM-bound (the
weights are read once for all γ + 1 tokens), up to (γ + 1) · t_decode once it is compute-bound (large batch).
Every function broadcasts over numpy arrays of α, γ and the step times.
"""

from __future__ import annotations

from dataclasses import dataclass

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars

ALPHA_ONE = 1e-12  # |1 − α| below this takes the α → 1 limit, γ + 1


def expected_tokens_per_step(acceptance, draft_tokens):
    """Tokens one target step produces: (1 − α^(γ+1)) / (1 − α), γ + 1 at α = 1 (Leviathan et al. 2023, Eq. 1)."""
    a = xp.asarray(acceptance, dtype=float)
    g = xp.asarray(draft_tokens, dtype=float)
    near_one = abs(1.0 - a) < ALPHA_ONE
    safe = xp.where(near_one, 0.5, a)
    return xp.where(near_one, g + 1.0, (1.0 - safe ** (g + 1.0)) / (1.0 - safe))


def round_time(draft_step_s, verify_step_s, draft_tokens):
    """Seconds of one speculation round: γ draft steps, then the target's verification step."""
    return xp.asarray(draft_tokens, dtype=float) * xp.asarray(draft_step_s, dtype=float) + xp.asarray(verify_step_s,
                                                                                                        dtype=float)


def time_per_output_token(draft_step_s, verify_step_s, draft_tokens, acceptance):
    """Seconds per output token per sequence: (γ · t_draft + t_verify) / E."""
    return round_time(draft_step_s, verify_step_s, draft_tokens) / expected_tokens_per_step(acceptance, draft_tokens)


def speedup(decode_step_s, draft_step_s, verify_step_s, draft_tokens, acceptance):
    """Plain decode's time per token over speculative decoding's: t_decode · E / (γ · t_draft + t_verify)."""
    return xp.asarray(decode_step_s, dtype=float) / time_per_output_token(draft_step_s, verify_step_s, draft_tokens,
                                                                          acceptance)


def improvement_factor(acceptance, draft_tokens, cost_coefficient):
    """Leviathan et al. 2023, Theorem 3.8: (1 − α^(γ+1)) / ((1 − α)(γc + 1)), verification as long as a decode step."""
    g = xp.asarray(draft_tokens, dtype=float)
    return expected_tokens_per_step(acceptance, g) / (g * xp.asarray(cost_coefficient, dtype=float) + 1.0)


@dataclass(frozen=True)
class SpeculativeDecode:
    """One decode scenario with speculative decoding on (per sequence unless stated; bytes and FLOPs per GPU).

    method: "draft" (a separate draft model) or "mtp" (the target's MTP modules); `intensity` values are the
    verification step's and the plain decode step's FLOPs per HBM byte on one GPU, `ridge` the device's ridge
    point (achievable peak / achievable HBM bandwidth): the verify step is compute-bound right of it."""

    method: str
    draft_name: str
    draft_tokens: int
    acceptance: float
    expected_tokens_per_step: float
    decode_step_s: float
    draft_step_s: float
    verify_step_s: float
    round_s: float
    time_per_output_token_s: float
    tokens_per_s: float
    speedup: float
    draft_cost_ratio: float
    verify_cost_ratio: float
    verify_flops: float
    verify_hbm_bytes: float
    verify_intensity: float
    decode_intensity: float
    ridge: float
    draft_memory_bytes: float
    request_s: float  # prefill + the request's decode groups decoded speculatively (KV held in HBM)

    @property
    def verify_bound(self) -> str:
        """Which roof the verification step sits under: "compute" right of the ridge, else "memory"."""
        return "compute" if self.verify_intensity >= self.ridge else "memory"

    @property
    def helps(self) -> bool:
        return self.speedup > 1.0

    def as_dict(self) -> dict:
        """The JSON `speculative` object (snake_case keys)."""
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["verify_bound"] = self.verify_bound
        return out
