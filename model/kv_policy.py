"""KV-cache eviction and compression policies: how many cached tokens each sequence keeps. Vectorized.

  full       every token (vLLM/PagedAttention baseline)
  window     sliding window of W tokens (Mistral 7B's rolling buffer: W = 4096 caps a 32k cache 8x)
  streaming  StreamingLLM: S attention-sink tokens + a recent window of W (Xiao et al. 2023: 4 sinks suffice)
  h2o        H2O heavy hitters: a budget of r·c tokens, half heavy hitters, half recent (Zhang et al. 2023: r = 20%)
  razor      RazorAttention: a fraction f of heads (retrieval heads) keep the full cache, the others keep
             sinks + window (Tang et al. 2024 report > 70% KV reduction)

The fractions are parameters of the scenario (kv_heavy_ratio, razor_retrieval_fraction); their defaults
follow the papers' settings and are stated assumptions where the paper gives a range.
"""

from __future__ import annotations

from . import fastnp as np  # numpy, with fast paths for scalars (one formula serves grid and scalar)

KV_POLICIES = ("full", "window", "streaming", "h2o", "razor")
KV_POLICY_CODE = {name: i for i, name in enumerate(KV_POLICIES)}


def kept_tokens(policy, context, window=4096, sinks=4, heavy_ratio=0.2, retrieval_fraction=0.15):
    """Average cached tokens per head per sequence at `context` tokens (policy: code from KV_POLICY_CODE)."""
    c = np.asarray(context, dtype=float)
    policy = np.asarray(policy)
    w = np.minimum(c, np.asarray(window, dtype=float))
    sw = np.minimum(c, np.asarray(sinks, dtype=float) + np.asarray(window, dtype=float))
    h2o = np.minimum(c, np.ceil(np.asarray(heavy_ratio, dtype=float) * c))
    f = np.asarray(retrieval_fraction, dtype=float)
    razor = f * c + (1.0 - f) * sw
    return np.select([policy == 0, policy == 1, policy == 2, policy == 3, policy == 4], [c, w, sw, h2o, razor], c)
