"""Disaggregated prefill and decode (DistServe, Zhong et al. 2024; Splitwise, Patel et al. 2024; Mooncake, Qin et
al. 2024): a prefill pool and a decode pool, each of instances with their own TP x PP, and the KV cache of every
request sent from the prefill instance that computed it to the decode instance that continues it. Vectorized.

KV transfer (one request): bytes = kept(prompt) · kv_bytes_per_token (the whole model's KV of the prompt; the
per-token formula is `step.inference.kv_bytes_per_token`, passed in, not written again). Each GPU holds its shard,
kv_share_per_gpu(TP) / PP of it, and the shards move in parallel, GPU to GPU, so the time is set by the larger of
the sending and the receiving shard: t = alpha + bytes · max(share_p, share_d) / (B · η_net) over the chosen link
(alpha-beta model, as `comms.p2p_time`). The link: scale-up (NVLink) when one prefill and one decode instance fit
in one node (DistServe §4.2, low node-affinity placement: paired stages inside a node), else scale-out (one NIC per
GPU, the hardware preset's scaleout_bw).

Overlap (the stated assumption): the transfer is done by copy engines / RDMA, not by the decode instance's
kernels, so it overlaps with the decode steps of the other requests in the decode batch and costs no decode
throughput; it delays only its own request's second token. Sent after the prefill (default), all of t is exposed.
Layer-wise (Mooncake §5.2, Fig. 4: each layer's KV streamed as soon as the layer is computed), layer i's transfer
runs behind layer i+1's prefill, so exposed = max(t / L, t - prefill · (L - 1) / L): the last layer's share when
the link keeps up, the excess when it does not.

Pool rates (steady state, requests/s, queueing not modelled): the prefill pool prefills one prompt at a time per
instance (DistServe §3.1: once a prompt saturates the GPU, batching more prompts only lengthens TTFT), so
R_prefill = n_p / prefill_s(batch 1); the decode pool keeps b sequences in flight per instance (continuous
batching), each for its g decode steps, so R_decode = n_d · b / decode_s(b); every prefill instance sends one
transfer at a time, R_link = n_p / t. Served rate = min of the three; the smallest names the binding pool.

Aggregated serving at the same GPUs (the baseline DistServe compares against, §2.3): continuous batching without
chunked prefill, where the b new requests that replace a batch's finishing ones are prefilled on the same GPUs and
stall its decode steps: per request lifetime of g tokens the replica spends g · tpot(b) + b · prefill_s(1), so
TPOT_seen = tpot(b) + b · prefill_s(1) / g and R = replicas · b / (g · TPOT_seen).
"""

from __future__ import annotations

from trinity_desktop.model.base import xp
from trinity_desktop.model.base.numeric import safe_div

__all__ = ["aggregated_rate", "aggregated_tpot", "exposed_transfer", "kv_transfer_bytes", "kv_transfer_time",
           "pool_rates", "served_rate"]


def kv_transfer_bytes(kept_prompt_tokens, kv_bytes_per_token):
    """One request's KV cache at the end of its prompt, whole model: kept tokens x KV bytes per token."""
    return xp.asarray(kept_prompt_tokens, dtype=float) * xp.asarray(kv_bytes_per_token, dtype=float)


def kv_transfer_time(request_bytes, share_prefill_gpu, share_decode_gpu, bandwidth, alpha, efficiency):
    """Seconds to move one request's KV: alpha + bytes x max(sending, receiving GPU's share) / (B x eta), the
    shards in parallel over one link per GPU (alpha-beta model; 0 bytes move in no time)."""
    shard = xp.asarray(request_bytes, dtype=float) * xp.maximum(share_prefill_gpu, share_decode_gpu)
    return xp.where(shard > 0, alpha + safe_div(shard, bandwidth * efficiency), 0.0)


def exposed_transfer(transfer_s, prefill_s, layers, layerwise):
    """The part of the transfer its request waits for: all of it when sent after the prefill; layer by layer
    (Mooncake §5.2), max(t / L, t - prefill x (L - 1) / L)."""
    t = xp.asarray(transfer_s, dtype=float)
    overlapped = xp.maximum(t / layers, t - xp.asarray(prefill_s, dtype=float) * (layers - 1.0) / layers)
    return xp.where(layerwise, overlapped, t)


def pool_rates(prefill_instances, prefill_s_one, decode_instances, batch, decode_s, transfer_s):
    """(prefill, decode, link) request rates per second of a disaggregated deployment (the module docstring)."""
    n_p = xp.asarray(prefill_instances, dtype=float)
    r_prefill = safe_div(n_p, prefill_s_one)
    r_decode = safe_div(xp.asarray(decode_instances, dtype=float) * batch, decode_s)
    r_link = xp.where(xp.asarray(transfer_s) > 0, safe_div(n_p, transfer_s), xp.inf)
    return r_prefill, r_decode, r_link


def served_rate(r_prefill, r_decode, r_link):
    """Requests/s the deployment serves: its slowest pool (or the link between them)."""
    return xp.minimum(xp.minimum(r_prefill, r_decode), r_link)


def aggregated_tpot(tpot, batch, prefill_s_one, gen_len):
    """Time per output token an aggregated replica's decoding requests see: their own step plus the stalls of
    the b prefills that refill the batch during a request's g tokens, tpot + b x prefill_s(1) / g."""
    return tpot + xp.asarray(batch, dtype=float) * prefill_s_one / xp.asarray(gen_len, dtype=float)


def aggregated_rate(replicas, batch, tpot_seen, gen_len):
    """Requests/s of aggregated replicas: replicas x b / (g x TPOT_seen)."""
    return safe_div(xp.asarray(replicas, dtype=float) * batch, xp.asarray(gen_len, dtype=float) * tpot_seen)
