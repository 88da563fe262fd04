"""The KV-cache policies a scenario may name (their formulas: model/formulas/kv_policy.py): the full cache, a
sliding window, StreamingLLM's sinks + window, H2O's heavy hitters, RazorAttention's retrieval heads."""

KV_POLICIES = ("full", "window", "streaming", "h2o", "razor")
