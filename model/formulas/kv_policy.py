"""KV-cache eviction and compression policies: how many cached tokens each sequence keeps. Vectorized.

  full       every token (vLLM/PagedAttention baseline)
  window     sliding window of W tokens (Mistral 7B's rolling buffer: W = 4096 caps a 32k cache 8x)
  streaming  StreamingLLM: S attention-sink tokens + a recent window of W (Xiao et al. 2023: 4 sinks suffice)
  h2o        H2O heavy hitters: a budget of r·c tokens, half heavy hitters, half recent (Zhang et al. 2023: r = 20%)
  razor      RazorAttention: a fraction f of heads (retrieval heads) keep the full cache, the others keep
             sinks + window (Tang et al. 2024 report > 70% KV reduction)

The fractions are parameters of the scenario (kv_heavy_ratio, razor_retrieval_fraction); their defaults
follow the papers' settings and are stated assumptions where the paper gives a range.

The architecture's own sliding window (Mistral 7B: every layer attends to the last W = 4096 tokens and keeps a
rolling buffer of W; Gemma-2 mixes such local layers with global ones) caps what a local layer keeps and
attends to, on top of any policy: per layer min(kept, W) on the share φ of windowed layers, kept on the rest,
so averaged over layers  kept_arch = φ·min(kept, W) + (1 - φ)·kept  (`arch_kept`).

A request's decode steps attend to contexts from prompt to prompt + generated; the time of its attention is
linear in the tokens kept, so the request needs the mean of kept over that range (`mean_kept`). Every policy
is a sum of terms a·min(c, k) (full: c; window: min(c, W); streaming: min(c, S + W); H2O: r·c, the budget
ratio without rounding; RazorAttention: f·c + (1 - f)·min(c, S + W)), and so is its cap by the architecture's
window, so the mean has a closed form: the integral of min(x, k) is x²/2 up to k and k·x - k²/2 beyond.
"""

from __future__ import annotations

from trinity_desktop.model.base import xp  # numpy with fast paths for scalars: one formula, grid and scalar
from trinity_desktop.model.inputs.kv_policies import KV_POLICIES

__all__ = ["KV_POLICIES", "KV_POLICY_CODE", "arch_kept", "kept_terms", "kept_tokens", "mean_kept", "mean_min"]
KV_POLICY_CODE = {name: i for i, name in enumerate(KV_POLICIES)}


def kept_tokens(policy, context, window=4096, sinks=4, heavy_ratio=0.2, retrieval_fraction=0.15):
    """Average cached tokens per head per sequence at `context` tokens (policy: code from KV_POLICY_CODE):
    c (full, vLLM), min(c, W) (window, Mistral 7B), min(c, S + W) (StreamingLLM, Xiao et al. 2023), r·c (H2O,
    Zhang et al. 2023), f·c + (1 - f)·min(c, S + W) (RazorAttention, Tang et al. 2024)."""
    c = xp.asarray(context, dtype=float)
    policy = xp.asarray(policy)
    w = xp.minimum(c, xp.asarray(window, dtype=float))
    sw = xp.minimum(c, xp.asarray(sinks, dtype=float) + xp.asarray(window, dtype=float))
    h2o = xp.minimum(c, xp.ceil(xp.asarray(heavy_ratio, dtype=float) * c))
    f = xp.asarray(retrieval_fraction, dtype=float)
    razor = f * c + (1.0 - f) * sw
    return xp.select([policy == 0, policy == 1, policy == 2, policy == 3, policy == 4], [c, w, sw, h2o, razor], c)


def arch_kept(kept, window, window_share):
    """Tokens kept per sequence averaged over layers under the architecture's sliding window: the share
    `window_share` of layers keeps at most `window` tokens (window 0 or share 0: no window)."""
    kept = xp.asarray(kept, dtype=float)
    if window <= 0 or window_share <= 0:
        return kept
    return window_share * xp.minimum(kept, float(window)) + (1.0 - window_share) * kept


def _min_integral(x, k):
    """∫_0^x min(t, k) dt: x²/2 up to k, k·x - k²/2 beyond (k may be inf)."""
    x = xp.asarray(x, dtype=float)
    k = xp.asarray(k, dtype=float)
    kk = xp.where(xp.isfinite(k), k, 0.0)
    return xp.where(x <= k, 0.5 * x * x, kk * x - 0.5 * kk * kk)


def mean_min(c0, c1, k):
    """Mean of min(x, k) over x in [c0, c1] (at c0 when c1 = c0). With k = inf: (c0 + c1)/2, the mean causal
    context; with k = a sliding window, the mean keys a query attends to."""
    c0, c1 = xp.asarray(c0, dtype=float), xp.asarray(c1, dtype=float)
    width = c1 - c0
    point = xp.minimum(c0, xp.asarray(k, dtype=float))
    with xp.errstate(invalid="ignore", divide="ignore"):
        mean = (_min_integral(c1, k) - _min_integral(c0, k)) / xp.where(width > 0, width, 1.0)
    return xp.where(width > 0, mean, point)


def kept_terms(policy, window=4096, sinks=4, heavy_ratio=0.2, retrieval_fraction=0.15, arch_window=0,
               window_share=0.0):
    """kept_arch(c) as terms [(a, k), ...] with kept_arch(c) = Σ a·min(c, k) (module docstring; H2O unrounded;
    the policies' papers as in `kept_tokens`)."""
    policy = xp.asarray(policy)
    inf = xp.inf
    w = xp.asarray(window, dtype=float)
    sw = xp.asarray(sinks, dtype=float) + w
    r = xp.asarray(heavy_ratio, dtype=float)
    f = xp.asarray(retrieval_fraction, dtype=float)
    razor = policy == KV_POLICY_CODE["razor"]
    a1 = xp.select([policy == KV_POLICY_CODE["h2o"], razor], [r, f], 1.0)
    k1 = xp.select([policy == KV_POLICY_CODE["window"], policy == KV_POLICY_CODE["streaming"]], [w, sw], inf)
    a2 = xp.where(razor, 1.0 - f, 0.0)
    k2 = xp.where(razor, sw, inf)
    terms = [(a1, k1), (a2, k2)]
    if arch_window <= 0 or window_share <= 0:
        return terms
    W = float(arch_window)
    # min(kept, W): one term a·min(c, min(k, W/a)); RazorAttention's two: min(c, W) when W <= S + W_policy,
    # else f·min(c, c*) + (1 - f)·min(c, S + W_policy) with f·c* + (1 - f)(S + W_policy) = W.
    with xp.errstate(divide="ignore", invalid="ignore"):
        one_k = xp.minimum(k1, xp.where(a1 > 0, W / xp.where(a1 > 0, a1, 1.0), inf))
        c_star = xp.where(a1 > 0, (W - a2 * k2) / xp.where(a1 > 0, a1, 1.0), inf)
    low = razor & (W <= k2)
    w1 = xp.where(low, 1.0, a1)
    wk1 = xp.where(razor, xp.where(low, W, c_star), one_k)
    w2 = xp.where(low, 0.0, a2)
    capped = [(w1, wk1), (w2, k2)]
    phi = float(window_share)
    return [(phi * a, k) for a, k in capped] + [((1.0 - phi) * a, k) for a, k in terms]


def mean_kept(terms, c0, c1):
    """Mean tokens kept per sequence over contexts [c0, c1] (a request's decode steps): Σ a·mean_min(c0, c1, k)
    over `kept_terms`, the closed form of the module docstring (this project; the policies as in `kept_tokens`)."""
    return sum(xp.asarray(a, dtype=float) * mean_min(c0, c1, k) for a, k in terms)
